/* test_proteus.c - Proteus (Hu et al., IEEE/ACM ToN 2024) against its defining
 * properties:
 *  - Algorithm 2: a packet that meets a paused egress waits while its tolerable
 *    delay t_td exceeds the predicted queueing delay t_qd (bytes queued / rate)
 *    and is rerouted to its first alternative exactly when t_td <= t_qd, which
 *    marks its path inactive until the egress resumes; the sojourn in a switch
 *    comes off t_td;
 *  - with our `in_order: delivered` variant (the default is the paper's
 *    rules alone, `off`), every flow in order (zero reordered packets) in a
 *    Fig. 10-style Poisson run on a PFC fabric where Algorithm 2 reroutes,
 *    with no data packet dropped and no buffer overrun;
 *  - determinism: the same file and seed give the same flows.
 */
#include "simtest.h"

#include "core/time.h"
#include "lb/proteus.h"
#include "net/fabric.h"
#include "net/port.h"
#include "net/switch.h"

/* ---- Algorithm 2 at a paused egress ---------------------------------------- */
/* Two leaves, two spines, 100 Gb/s, 1 us links: from leaf0 to leaf1, path 0
 * crosses spine0 and path 1 spine1. */
#define TWO_PATHS(lb)                                                                       \
	"seed: 1\n"                                                                         \
	"topology: {type: leaf_spine, hosts_per_leaf: 2, leaves: 2, spines: 2, host_rate: " \
	"100Gbps,"                                                                          \
	" fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}\n"                      \
	"switch: {mode: lossless, buffer: 4MB}\n"                                           \
	"lb: " lb "\n"                                                                      \
	"transport: {type: roce, mtu: 1000B}\n"                                             \
	"workload: {type: permutation, size: 10KB}\n"
static const char *const two_paths = TWO_PATHS("{type: proteus}");

struct rig {
	struct experiment x;
	struct sim s;
	struct fabric *f;
	struct sw *leaf0;
	uint16_t up[2]; /* leaf0's ports toward spine0 and spine1 */
};

/* The same with the paper's rules alone, named (the default: no in_order hold). */
static const char *const two_paths_rules = TWO_PATHS("{type: proteus, in_order: off}");

static void rig_build_from(struct rig *g, const char *yaml)
{
	struct mp_err e = { 0 };
	assert_int_equal(exp_load_string(&g->x, yaml, "t.yaml", &e), MP_OK);
	assert_int_equal(sim_build(&g->s, &g->x, &e), MP_OK);
	g->f = &g->s.fab;
	g->leaf0 = (struct sw *)fab_find_node(g->f, "leaf0");
	for (int k = 0; k < 2; k++) {
		const char *sp = k ? "spine1" : "spine0";
		for (uint16_t i = 0; i < g->leaf0->node.nports; i++)
			if (!strcmp(g->leaf0->node.ports[i].peer->owner->name, sp))
				g->up[k] = i;
	}
}

static void rig_build(struct rig *g)
{
	rig_build_from(g, two_paths);
}

static void rig_free(struct rig *g)
{
	sim_free(&g->s);
	exp_free(&g->x);
}

/* A data packet of connection `conn` from h0 (leaf0) to h2 (leaf1) reaches
 * leaf0: route it and return the egress port chosen. */
static uint16_t route(struct rig *g, struct packet *p, uint32_t conn)
{
	struct fabric *f = g->f;
	p->type = PKT_DATA;
	p->cls = CLS_DATA;
	p->size = 1000;
	p->src = 0;
	p->dst = 2;
	p->conn = conn;
	p->rail = 0;
	f->lb->sw_rx(f, g->leaf0, f->host_port[0], p);
	const struct nhset *nh = &g->leaf0->route[f->host_tor[2]];
	return f->lb->choose(f, g->leaf0, p, f->nh_ports + nh->off, nh->n);
}

/* A data packet of connection conn from host 0 to host 2 routed at leaf0
 * leaves by `port`. */
static void expect_route(struct rig *g, uint32_t conn, uint16_t port)
{
	struct packet *p = pkt_alloc(g->f);
	assert_int_equal(route(g, p, conn), port);
	pkt_free(g->f, p);
}

/* The path states the destination edge fed back: path 0 = base delay (the
 * best), path 1 = base + `diff` (t_td = diff). */
static void feed(struct rig *g, simtime_t diff)
{
	struct fabric *f = g->f;
	simtime_t base = proteus_path_delay(f, 0, 1, 0);
	proteus_set_path(f, 0, 1, 0, base, 0.1);
	proteus_set_path(f, 0, 1, 1, base + diff, 0.1);
}

static void test_reroute_exactly_at_tolerable_delay(void **state)
{
	(void)state;
	struct rig g;
	rig_build(&g);
	struct fabric *f = g.f;
	const simtime_t diff = 3 * PS_PER_US;
	feed(&g, diff);
	/* unpaused: the best path */
	struct packet *p = pkt_alloc(f);
	assert_int_equal(route(&g, p, 0), g.up[0]);
	pkt_free(f, p);
	/* paused with t_qd = diff - 80 ps (30000 B - 1 B at 100 Gb/s): it waits */
	struct port *eg = &g.leaf0->node.ports[g.up[0]];
	eg->paused |= 1u << CLS_DATA;
	eg->q[CLS_DATA].bytes = diff / 80 - 1; /* 80 ps per byte at 100 Gb/s */
	expect_route(&g, 1, g.up[0]);
	const struct proteus_counts *c = proteus_counts(f);
	assert_int_equal(c->waits, 1);
	assert_int_equal(c->reroutes, 0);
	/* one byte more: t_qd = diff = t_td, rerouted to path 1 (spine1) */
	eg->q[CLS_DATA].bytes++;
	expect_route(&g, 2, g.up[1]);
	assert_int_equal(c->reroutes, 1);
	assert_int_equal(c->last_reroute_td, (int64_t)diff);
	assert_int_equal(c->last_reroute_qd, diff);
	assert_int_equal(c->kicks, 1);
	/* path 0 is inactive: a new flow takes path 1 though path 0 has less delay */
	eg->q[CLS_DATA].bytes = 0;
	expect_route(&g, 3, g.up[1]);
	/* the egress resumes: path 0 is back, and the best */
	eg->paused = 0;
	expect_route(&g, 4, g.up[0]);
	eg->q[CLS_DATA].bytes = 0;
	rig_free(&g);
}

/* The sojourn in a switch comes off t_td: a packet that waited `wait` at leaf0
 * leaves with t_td - wait, and at the next paused egress is rerouted as soon as
 * t_qd reaches what is left. */
static void test_sojourn_comes_off(void **state)
{
	(void)state;
	struct rig g;
	rig_build(&g);
	struct fabric *f = g.f;
	const simtime_t diff = 3 * PS_PER_US, wait = 1 * PS_PER_US;
	feed(&g, diff);
	struct packet *p = pkt_alloc(f);
	route(&g, p, 0);
	assert_int_equal(proteus_tolerable_delay(p), (int64_t)diff);
	g.s.q.now += wait;
	f->lb->sw_tx(f, g.leaf0, &g.leaf0->node.ports[g.up[0]], p);
	assert_int_equal(proteus_tolerable_delay(p), (int64_t)(diff - wait));
	pkt_free(f, p);
	rig_free(&g);
}

/* Algorithm 1's argmin among paths of equal delay: a tie broken at random, as
 * the public re-implementation does, not by the lowest path id: on an idle
 * fabric every path measures its base delay, and a fixed choice sent every
 * new flow of an edge pair to one spine (at 0.3 load of Fig. 10's Web
 * Search, Proteus's AFCT was then the worst of the six systems). A path
 * strictly faster still takes every new flow. */
static void test_ties_spread(void **state)
{
	(void)state;
	struct rig g;
	rig_build_from(&g, "seed: 1\n"
			   "topology: {type: leaf_spine, hosts_per_leaf: 2, leaves: 2, spines: 8,"
			   " host_rate: 100Gbps, fabric_rate: 100Gbps, host_delay: 1us,"
			   " fabric_delay: 1us}\n"
			   "switch: {mode: lossless, buffer: 4MB}\n"
			   "lb: {type: proteus}\n"
			   "transport: {type: roce, mtu: 1000B}\n"
			   "workload: {type: permutation, size: 10KB}\n");
	struct fabric *f = g.f;
	uint32_t per_port[64] = { 0 };
	for (uint32_t conn = 0; conn < 64; conn++) {
		struct packet *p = pkt_alloc(f);
		per_port[route(&g, p, conn)]++;
		pkt_free(f, p);
	}
	uint32_t used = 0, most = 0;
	for (int i = 0; i < 64; i++) {
		used += per_port[i] > 0;
		most = per_port[i] > most ? per_port[i] : most;
	}
	assert_int_equal(used, 8);
	assert_true(most <= 16); /* 8 each on average; all 64 on one before */
	simtime_t base = proteus_path_delay(f, 0, 1, 0);
	for (uint32_t k = 0; k < 8; k++)
		proteus_set_path(f, 0, 1, k, k == 5 ? base : base + 1000, 0.1);
	memset(per_port, 0, sizeof per_port);
	for (uint32_t conn = 100; conn < 116; conn++) {
		struct packet *p = pkt_alloc(f);
		per_port[route(&g, p, conn)]++;
		pkt_free(f, p);
	}
	most = 0;
	for (int i = 0; i < 64; i++)
		most = per_port[i] > most ? per_port[i] : most;
	assert_int_equal(most, 16);
	rig_free(&g);
}

/* The tolerable delay is what the first alternative's delay exceeds the
 * packet's path by (section III-C: wait at most D_ps - D_po), none when the
 * alternative is faster: a running flow kept on path 0 (Algorithm 1 moves it
 * only within its packet gap) after path 0 became the slower by `diff` is
 * rerouted at once at a paused egress, even one with little queued. */
static void test_no_tolerance_on_slower_path(void **state)
{
	(void)state;
	struct rig g;
	rig_build_from(&g, two_paths_rules);
	struct fabric *f = g.f;
	const simtime_t diff = 3 * PS_PER_US;
	simtime_t base = proteus_path_delay(f, 0, 1, 0);
	feed(&g, diff);
	struct packet *p = pkt_alloc(f);
	assert_int_equal(route(&g, p, 0), g.up[0]);
	pkt_free(f, p);
	/* 100 ps later path 0 is the slower: the flow stays (gap 100 ps < diff) */
	g.s.q.now += 100;
	proteus_set_path(f, 0, 1, 0, base + diff, 0.1);
	proteus_set_path(f, 0, 1, 1, base, 0.1);
	p = pkt_alloc(f);
	assert_int_equal(route(&g, p, 0), g.up[0]);
	assert_int_equal(proteus_tolerable_delay(p), 0);
	pkt_free(f, p);
	/* paused with t_qd = 80 ps (one byte): rerouted to path 1 */
	struct port *eg = &g.leaf0->node.ports[g.up[0]];
	eg->paused |= 1u << CLS_DATA;
	eg->q[CLS_DATA].bytes = 1;
	g.s.q.now += 100;
	expect_route(&g, 0, g.up[1]);
	const struct proteus_counts *c = proteus_counts(f);
	assert_int_equal(c->waits, 0);
	assert_int_equal(c->reroutes, 1);
	eg->paused = 0;
	eg->q[CLS_DATA].bytes = 0;
	rig_free(&g);
}

/* ---- a Fig. 10-style run ------------------------------------------------------ */
/* 4 x 4 leaf-spine, 32 hosts at 100 Gb/s, a 1 MB buffer with PFC (dynamic
 * threshold), DCQCN as its paper sets it (ECN 5-200 KB, 1%), Web Server at
 * 0.9 load for 300 us: about 1600 flows, a thousand PAUSE frames; Proteus
 * with our in_order: delivered variant. */
static const char *const fig10 =
    "seed: %d\n"
    "topology: {type: leaf_spine, hosts_per_leaf: 8, leaves: 4, spines: 4, host_rate: 100Gbps,"
    " fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}\n"
    "switch: {mode: lossless, buffer: 1MB, kmin: 5KB, kmax: 200KB, pmax: 0.01}\n"
    "lb: {type: proteus, in_order: delivered}\n"
    "transport: {type: roce, mtu: 1000B, preset: paper}\n"
    "workload: {type: poisson, cdf: " MPSIM_SOURCE_DIR "/data/workloads/webserver.txt,"
    " load: 0.9, duration: 300us}\n"
    "output: {pfc_counters: true}\n";

static void run_fig10(int seed, struct run_result *r, struct proteus_counts *pc)
{
	char yaml[2048];
	snprintf(yaml, sizeof yaml, fig10, seed);
	struct experiment x;
	struct sim s;
	simtest_open(yaml, &x, &s);
	sim_collect(&s, r);
	*pc = *proteus_counts(&s.fab);
	simtest_close(&x, &s);
}

static void test_fig10_in_order_lossless(void **state)
{
	(void)state;
	struct run_result r;
	struct proteus_counts pc;
	run_fig10(1, &r, &pc);
	uint64_t data = 0, reord = 0, retx = 0;
	size_t hol = 0;
	for (size_t i = 0; i < r.nflows; i++) {
		data += r.flows[i].data_pkts;
		reord += r.flows[i].reordered;
		retx += r.flows[i].retx_bytes;
		hol += r.flows[i].hol;
	}
	print_message("%zu/%zu flows, %llu data packets, %llu reordered, %llu B resent, %zu "
		      "HoL-blocked; pauses %llu; Proteus: %llu flows, %llu moves, %llu waits, "
		      "%llu reroutes, %llu held, %llu kicks, %llu probes\n",
		      r.ncompleted, r.nflows, (unsigned long long)data, (unsigned long long)reord,
		      (unsigned long long)retx, hol, (unsigned long long)r.net.pause_frames,
		      (unsigned long long)pc.flows, (unsigned long long)pc.moves,
		      (unsigned long long)pc.waits, (unsigned long long)pc.reroutes,
		      (unsigned long long)pc.held, (unsigned long long)pc.kicks,
		      (unsigned long long)pc.probes);
	assert_int_equal(r.ncompleted, r.nflows);
	/* rerouting was active: PFC paused, and Algorithm 2 both waited and rerouted */
	assert_true(r.net.pause_frames > 0);
	assert_true(pc.waits > 0);
	assert_true(pc.reroutes > 0);
	assert_true(pc.moves > 0);
	/* ... and every flow arrived in order */
	assert_true(data > 0);
	assert_int_equal(reord, 0);
	assert_int_equal(retx, 0);
	/* lossless: nothing dropped, no buffer overrun (fab_assert_lossless also ran) */
	assert_int_equal(r.net.drops_buffer + r.net.drops_link + r.net.drops_no_route, 0);
	assert_int_equal(r.net.lossless_overflow, 0);
	assert_true(r.net.max_buffer_used <= 1000000);
	assert_true(r.net.max_queue_bytes <= 1000000);
	/* determinism: the same seed gives the same flows, to the picosecond */
	struct run_result r2;
	struct proteus_counts pc2;
	run_fig10(1, &r2, &pc2);
	assert_int_equal(r2.nflows, r.nflows);
	for (size_t i = 0; i < r.nflows; i++) {
		assert_int_equal(r2.flows[i].finish, r.flows[i].finish);
		assert_int_equal(r2.flows[i].blocked, r.flows[i].blocked);
	}
	assert_memory_equal(&pc, &pc2, sizeof pc);
	/* summary.json's lb: the same counts, by name */
	const struct {
		const char *name;
		uint64_t v;
	} want[] = { { "flows", pc.flows },	 { "moves", pc.moves },
		     { "waits", pc.waits },	 { "reroutes", pc.reroutes },
		     { "held", pc.held },	 { "stuck", pc.stuck },
		     { "kicks", pc.kicks },	 { "probes", pc.probes },
		     { "feedback", pc.feedback } };
	assert_string_equal(r.lb.scheme, "proteus");
	assert_int_equal(r.lb.n, sizeof want / sizeof want[0]);
	for (unsigned i = 0; i < r.lb.n; i++) {
		assert_string_equal(r.lb.name[i], want[i].name);
		assert_int_equal(r.lb.v[i], want[i].v);
	}
	run_result_free(&r2);
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reroute_exactly_at_tolerable_delay),
		cmocka_unit_test(test_no_tolerance_on_slower_path),
		cmocka_unit_test(test_sojourn_comes_off),
		cmocka_unit_test(test_ties_spread),
		cmocka_unit_test(test_fig10_in_order_lossless),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

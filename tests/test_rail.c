/* test_rail.c - the rail-optimized GPU cluster (topology rail_optimized): the
 * paths its routes give (a same-rail pair under one leaf crosses that leaf
 * alone, a pair on two leaves a spine, two GPUs of one server NVLink and no
 * NIC), one flow's FCT against the store-and-forward arithmetic, a collective
 * of a data-parallel group (ranks `gpus` apart) that stays on its rail,
 * dual-ToR with one leaf of a pair failed, and what it refuses. */
#include "simtest.h"

#include "core/time.h"
#include "net/fabric.h"
#include "net/node.h"
#include "net/switch.h"

/* 4 servers of 4 GPUs at 400 Gb/s, 1 us links; `more` adds topology keys */
#define RAIL(more)                                                                              \
	"topology: {type: rail_optimized, servers: 4, gpus: 4, host_delay: 1us, fabric_delay: " \
	"1us" more "}\n"

/* The switches from host a to host b over its first NIC port, following the
 * first member of each next-hop set, into names (up to 8, space-separated);
 * *all_spines: every member of every set at a leaf is a spine. */
static void walk(const struct fabric *f, uint32_t a, uint32_t b, char *names, size_t n,
		 bool *all_spines)
{
	const struct port *pt = &f->hosts[a]->node.ports[0];
	uint32_t t = f->host_tor[b * f->rails];
	names[0] = '\0';
	*all_spines = true;
	for (int hop = 0; hop < 8 && pt->peer_node->kind == NODE_SWITCH; hop++) {
		const struct sw *s = (const struct sw *)pt->peer_node;
		snprintf(names + strlen(names), n - strlen(names), "%s%s", hop ? " " : "",
			 s->node.name);
		if (s->tor_idx == t) {
			pt = &s->node.ports[f->host_port[b * f->rails]];
			continue;
		}
		const struct nhset *nh = &s->route[t];
		assert_true(nh->n > 0);
		for (uint16_t k = 0; s->node.level == 1 && k < nh->n; k++)
			if (s->node.ports[f->nh_ports[nh->off + k]].peer_node->level != 2)
				*all_spines = false;
		pt = &s->node.ports[f->nh_ports[nh->off]];
	}
	assert_int_equal(pt->peer_node->kind, NODE_HOST);
	assert_int_equal(((const struct host *)pt->peer_node)->hid, b);
}

static void test_paths(void **state)
{
	(void)state;
	struct experiment x;
	struct sim s;
	struct mp_err e = { 0 };
	assert_int_equal(exp_load_string(&x,
					 RAIL(", servers_per_leaf: 2") "transport: {type: ref}\n"
								       "workload: {type: "
								       "permutation, size: 4KB}\n",
					 "t.yaml", &e),
			 MP_OK);
	assert_int_equal(sim_build(&s, &x, &e), MP_OK);
	const struct fabric *f = &s.fab;
	char p[256];
	bool sp;
	/* h = server x 4 + gpu: h0 and h4 are GPU 0 of servers 0 and 1 */
	walk(f, 0, 4, p, sizeof p, &sp);
	assert_string_equal(p, "leaf0_0_0");
	walk(f, 0, 8, p, sizeof p, &sp); /* rail 0, server 2: the rail's second leaf */
	assert_string_equal(p, "leaf0_0_0 spine0_0 leaf0_0_1");
	assert_true(sp);
	walk(f, 0, 5, p, sizeof p, &sp); /* GPU 1 of server 1: another rail */
	assert_string_equal(p, "leaf0_0_0 spine0_0 leaf0_1_0");
	assert_true(sp);
	/* servers_per_leaf 2: 2 uplinks a leaf, so 2 spines above 8 leaves, and the
	 * server section has the topology's 4 GPUs */
	assert_int_equal(f->nsws, 4 * 2 + 2);
	assert_int_equal(x.server.gpus, 4);
	sim_free(&s);
	exp_free(&x);
}

/* One 1 MB flow (the reference transport: 4000 B packets, 64 B ACKs) from h0
 * to a host under its own leaf (2 links), on its rail's other leaf and on
 * another rail (4 links each), within a packet time of the arithmetic. */
static void test_one_flow_fct(void **state)
{
	(void)state;
	static const struct {
		int dst, hops;
	} c[] = { { 4, 2 }, { 8, 4 }, { 5, 4 } };
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char yaml[512];
		snprintf(yaml, sizeof yaml,
			 RAIL(", servers_per_leaf: 2") "transport: {type: ref, window: 4MB}\n"
						       "workload: {type: incast, senders: 1, "
						       "receiver: %d, size: 1MB}\n",
			 c[i].dst);
		struct run_result r;
		simtest_run(yaml, &r);
		assert_int_equal(r.ncompleted, 1);
		assert_int_equal(r.flows[0].src, 0);
		simtime_t want =
		    simtest_expected_fct(1000000, 4000, 64, 400000000000ULL, PS_PER_US, c[i].hops);
		simtime_t got = r.flows[0].fct, diff = got > want ? got - want : want - got;
		print_message("h0 -> h%d: FCT %.4f us, expected %.4f us\n", c[i].dst,
			      time_to_us(got), time_to_us(want));
		assert_true(diff <= time_ser_ps(4000, 400000000000ULL));
		run_result_free(&r);
	}
}

/* Bytes sent by every port whose name contains `part` */
static uint64_t bytes_of(const struct run_result *r, const char *part)
{
	uint64_t b = 0;
	for (size_t i = 0; i < r->nports; i++)
		if (strstr(r->ports[i].name, part))
			b += r->ports[i].tx_bytes;
	return b;
}

/* A ring AllReduce of 4 MB on 4 servers of 4 GPUs; `place`: a placement
 * ("placement: packed") or the ranks' hosts ("1, 5, 9, 13") */
static void run_coll(const char *topo_more, const char *place, const char *more,
		     struct run_result *r)
{
	char yaml[1024];
	bool list = strncmp(place, "placement", 9) != 0;
	snprintf(yaml, sizeof yaml,
		 "topology: {type: rail_optimized, servers: 4, gpus: 4%s}\n"
		 "transport: {type: roce}\n"
		 "collective: {type: allreduce, size: 4MB, %s%s%s}\n%s",
		 topo_more, list ? "placement: list, hosts: [" : place, list ? place : "",
		 list ? "]" : "", more);
	simtest_run(yaml, r);
	assert_int_equal(r->ncolls, 1);
	assert_true(r->colls[0].completed);
}

/* A data-parallel group (GPU 1 of every server: ranks 4 apart) with one leaf
 * per rail: not a byte on a spine, and every byte the fabric carries on rail
 * 1's leaf; a tensor-parallel group (the 4 GPUs of server 1) sends nothing
 * through a NIC. */
static void test_groups_stay_on_rail(void **state)
{
	(void)state;
	struct run_result r;
	run_coll("", "1, 5, 9, 13", "switch: {mode: lossless}\n", &r);
	assert_int_equal(bytes_of(&r, "spine"), 0);
	assert_true(bytes_of(&r, "leaf0_1_0") > 4000000);
	assert_int_equal(bytes_of(&r, "leaf0_1_0"), bytes_of(&r, "leaf"));
	run_result_free(&r);
	run_coll("", "4, 5, 6, 7", "", &r);
	assert_int_equal(bytes_of(&r, "leaf"), 0);
	assert_int_equal(r.net.tx_bytes, 0);
	run_result_free(&r);
}

/* A ring AllReduce over all 16 GPUs (ranks in server-major order): ring 0
 * visits GPUs 0..3 of each server over NVLink, and its hop to the next server
 * leaves from GPU 0's NIC after an NVLink hop from GPU 3 (PXN), so with one
 * leaf per rail no byte crosses a spine and only rail 0 carries any; with pxn
 * off the hops from GPU 3 to the next server's GPU 0 cross rails, over the
 * spines. */
static void test_ring_pxn(void **state)
{
	(void)state;
	struct run_result r;
	run_coll("", "placement: packed", "", &r);
	assert_int_equal(r.colls[0].nranks, 16);
	assert_int_equal(bytes_of(&r, "spine"), 0);
	assert_true(bytes_of(&r, "leaf0_0_0") > 4000000);
	assert_int_equal(bytes_of(&r, "leaf0_0_0"), bytes_of(&r, "leaf"));
	run_result_free(&r);
	run_coll("", "placement: packed, pxn: off", "", &r);
	assert_true(bytes_of(&r, "spine") > 4000000);
	run_result_free(&r);
}

/* Dual-ToR: rail 0's GPUs of servers 0 and 2 run an AllReduce over 2 queue
 * pairs, one on each leaf of the pair. With every link of leaf0_0_0a down
 * from the start the hosts send and receive through leaf0_0_0b alone: the
 * AllReduce completes and leaf a carries nothing. */
static void test_dual_tor_failover(void **state)
{
	(void)state;
	struct run_result r;
	run_coll(", dual_tor: true", "0, 8", "ccl: {type: rr, qps: 2}\n", &r);
	uint64_t a = bytes_of(&r, "leaf0_0_0a"), b = bytes_of(&r, "leaf0_0_0b");
	print_message("both up: leaf a %llu B, leaf b %llu B\n", (unsigned long long)a,
		      (unsigned long long)b);
	assert_true(a > 1000000 && b > 1000000);
	run_result_free(&r);
	run_coll(", dual_tor: true", "0, 8",
		 "ccl: {type: rr, qps: 2}\n"
		 "failures: {links: [h0-leaf0_0_0a, h4-leaf0_0_0a, h8-leaf0_0_0a, "
		 "h12-leaf0_0_0a, leaf0_0_0a-spine0_0, leaf0_0_0a-spine0_1, leaf0_0_0a-spine0_2, "
		 "leaf0_0_0a-spine0_3]}\n",
		 &r);
	print_message("leaf a down: leaf a %llu B, leaf b %llu B\n",
		      (unsigned long long)bytes_of(&r, "leaf0_0_0a"),
		      (unsigned long long)bytes_of(&r, "leaf0_0_0b"));
	assert_int_equal(bytes_of(&r, "leaf0_0_0a"), 0);
	assert_true(bytes_of(&r, "leaf0_0_0b") >= a + b - 100000);
	run_result_free(&r);
}

/* h0's link to leaf a fails during the AllReduce: what it held is lost, and
 * switch.failover_delay (10 us) later h0's queue pair on side a sends, and
 * receives, through leaf b. Without the move it could never finish: every
 * packet for h0 on side a would still go to the dead link. */
static void test_dual_tor_runtime_failure(void **state)
{
	(void)state;
	struct run_result r;
	run_coll(", dual_tor: true", "0, 8",
		 "ccl: {type: rr, qps: 2}\n"
		 "switch: {failover_delay: 10us}\n"
		 "events: [{at: 20us, link: h0-leaf0_0_0a, action: down}]\n",
		 &r);
	assert_true(r.net.drops_link > 0);
	run_result_free(&r);
}

/* Every load balancer on two planes of dual-ToR leaves (4 NIC links a host,
 * 4 disjoint sets of ToRs a rail reaches: CONGA's, Hermes's and Proteus's
 * per-ToR tables among them): a permutation completes, nothing dropped for
 * want of a route. */
static void test_lbs(void **state)
{
	(void)state;
	static const char *const lbs[] = { "ecmp",    "spray", "rr",	 "ar",	   "drill",
					   "letflow", "conga", "hermes", "proteus" };
	for (size_t i = 0; i < sizeof lbs / sizeof lbs[0]; i++) {
		char yaml[512];
		snprintf(
		    yaml, sizeof yaml,
		    RAIL(", servers_per_leaf: 2, planes: 2, dual_tor: true") "transport: {type: "
									     "roce}\n"
									     "switch: {mode: "
									     "lossless}\n"
									     "lb: {type: %s}\n"
									     "workload: {type: "
									     "permutation, size: "
									     "256KB}\n",
		    lbs[i]);
		struct run_result r;
		simtest_run(yaml, &r);
		print_message("%s: %zu / %zu flows\n", lbs[i], r.ncompleted, r.nflows);
		assert_int_equal(r.ncompleted, r.nflows);
		assert_int_equal(r.nflows, 16);
		assert_int_equal(r.net.drops_no_route, 0);
		run_result_free(&r);
	}
}

/* Refused at load, naming the key and what was expected */
static void refused(const char *yaml, const char *want)
{
	struct experiment x;
	struct mp_err e = { 0 };
	assert_int_equal(exp_load_string(&x, yaml, "t.yaml", &e), MP_EUSER);
	print_message("%s\n", e.msg);
	if (!strstr(e.msg, want))
		fail_msg("expected '%s' in: %s", want, e.msg);
	assert_non_null(strstr(e.msg, "t.yaml:"));
	exp_free(&x);
}

static void test_refused(void **state)
{
	(void)state;
	const char *wl = "transport: {type: ref}\nworkload: {type: permutation, size: 4KB}\n";
	char y[512];
	static const struct {
		const char *more, *want;
	} c[] = {
		{ ", servers_per_leaf: 3", "servers_per_leaf: expected a divisor of servers (4)" },
		{ ", oversubscription: 3", "oversubscription: expected a ratio that leaves" },
		{ ", spines: 3", "spines: expected a divisor of the 4 uplinks" },
		{ ", planes: 5, dual_tor: true", "planes: expected at most 4 with dual_tor" },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		snprintf(y, sizeof y, "topology: {type: rail_optimized, servers: 4, gpus: 4%s}\n%s",
			 c[i].more, wl);
		refused(y, c[i].want);
	}
	snprintf(y, sizeof y, "topology: {type: rail_optimized, servers: 4, gpus: 4}\n%s%s",
		 "server: {gpus: 8}\n", wl);
	refused(y, "gpus: expected 4 (topology rail_optimized has 4 GPUs per server) or 1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_one_flow_fct),
		cmocka_unit_test(test_groups_stay_on_rail),
		cmocka_unit_test(test_ring_pxn),
		cmocka_unit_test(test_dual_tor_failover),
		cmocka_unit_test(test_dual_tor_runtime_failure),
		cmocka_unit_test(test_lbs),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

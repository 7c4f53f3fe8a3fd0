/* test_lb_ar.c - the switch-local load balancers (ar, drill, letflow) against
 * their defining properties, checked at every decision of a whole simulation:
 * the scheme's choose is wrapped by a checker that reads the switch's state at
 * the instant of the decision and compares it with the port chosen.
 *
 *  - ar (per packet): never an egress whose queue is longer than another
 *    candidate's; equal queues picked uniformly; with metric util, never one
 *    of higher recent utilisation (the test's own DREs, fed as ar's are).
 *  - drill: the port is the shortest among the ports it compared, which are
 *    d distinct random samples plus the m remembered (the previous choice).
 *  - letflow, ar flowlet mode: a flow keeps its port while its packets come
 *    within the gap, and a new flowlet (after the gap) moves.
 *  - every scheme under PFC: no data packet dropped, no buffer overrun;
 *    same seed, byte-identical flow records.
 *  - the RoCEv2 reorder buffer: under per-packet spraying, go-back-N resends
 *    and waits; the buffer delivers with no retransmission. */
#include "simtest.h"

#include <stdlib.h>

#include "core/time.h"
#include "lb/drill.h"
#include "lb/lbcommon.h"
#include "net/fabric.h"
#include "net/lb.h"
#include "net/port.h"
#include "net/switch.h"

/* ---- running a simulation with a wrapped choose ----------------------------- */
static const struct lb_ops *real;
static struct lb_ops wrapped;

typedef uint16_t (*choose_fn)(struct fabric *f, struct sw *s, const struct packet *p,
			      const uint16_t *cand, unsigned n);

static void run_wrapped(const char *yaml, choose_fn check, struct run_result *r)
{
	struct experiment x;
	struct mp_err e = { 0 };
	struct sim s;
	if (exp_load_string(&x, yaml, "test.yaml", &e)) {
		fprintf(stderr, "load: %s\n", e.msg);
		fail();
	}
	real = x.lb;
	wrapped = *real;
	if (check)
		wrapped.choose = check;
	x.lb = &wrapped;
	if (sim_build(&s, &x, &e)) {
		fprintf(stderr, "build: %s\n", e.msg);
		fail();
	}
	sim_run(&s);
	sim_collect(&s, r);
	sim_free(&s);
	x.lb = real;
	exp_free(&x);
}

/* 16 hosts on 4 leaves and 4 spines at 100 Gb/s, RoCEv2 with DCQCN (the HPCC
 * ns-3 preset) over lossless switches with `buffer`, Web Search flows at 0.8
 * load for `dur`, and 4 -> 1 incasts of 1 MB on top so that queues differ. */
static const char *ws_yaml = "seed: %d\n"
			     "topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 4, spines: 4,"
			     " host_rate: 100Gbps, fabric_rate: 40Gbps}\n"
			     "switch: {mode: lossless, buffer: %s}\n"
			     "transport: {type: roce, preset: hpcc%s}\n"
			     "lb: %s\n"
			     "workload: {type: poisson, cdf: " MPSIM_SOURCE_DIR
			     "/data/workloads/websearch.txt, load: 0.8, duration: %s}\n";

static void ws_run(int seed, const char *buffer, const char *tp_extra, const char *lb,
		   const char *dur, choose_fn check, struct run_result *r)
{
	char yaml[1024];
	snprintf(yaml, sizeof yaml, ws_yaml, seed, buffer, tp_extra, lb, dur);
	run_wrapped(yaml, check, r);
}

/* ---- ar: the least local queue ----------------------------------------------- */
static struct {
	uint64_t decisions, unequal, longer;
	uint64_t ties, tie_pos[8]; /* all candidates equal, n == 4: position chosen */
} ar_st;

static uint16_t ar_check(struct fabric *f, struct sw *s, const struct packet *p,
			 const uint16_t *cand, unsigned n)
{
	uint64_t qmin = UINT64_MAX, qmax = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t q = s->node.ports[cand[i]].qbytes_total;
		qmin = q < qmin ? q : qmin;
		qmax = q > qmax ? q : qmax;
	}
	uint16_t c = real->choose(f, s, p, cand, n);
	ar_st.decisions++;
	ar_st.unequal += qmax != qmin;
	ar_st.longer += s->node.ports[c].qbytes_total != qmin;
	if (qmax == qmin && n == 4) {
		ar_st.ties++;
		for (unsigned i = 0; i < n; i++)
			if (cand[i] == c)
				ar_st.tie_pos[i]++;
	}
	return c;
}

/* Every decision takes a shortest queue; when all are equal each of the 4
 * uplinks is taken a quarter of the time (within 10% of it). */
static void test_ar_least_queue(void **state)
{
	(void)state;
	memset(&ar_st, 0, sizeof ar_st);
	struct run_result r;
	ws_run(1, "4MB", "", "{type: ar}", "300us", ar_check, &r);
	print_message("ar: %llu decisions, %llu with unequal queues, %llu to a longer queue; "
		      "ties %llu: %llu %llu %llu %llu\n",
		      (unsigned long long)ar_st.decisions, (unsigned long long)ar_st.unequal,
		      (unsigned long long)ar_st.longer, (unsigned long long)ar_st.ties,
		      (unsigned long long)ar_st.tie_pos[0], (unsigned long long)ar_st.tie_pos[1],
		      (unsigned long long)ar_st.tie_pos[2], (unsigned long long)ar_st.tie_pos[3]);
	assert_int_equal(r.ncompleted, r.nflows);
	assert_true(ar_st.unequal > 1000); /* the property was put to the test */
	assert_int_equal(ar_st.longer, 0);
	assert_true(ar_st.ties > 1000);
	for (unsigned i = 0; i < 4; i++) {
		double share = (double)ar_st.tie_pos[i] / (double)ar_st.ties;
		assert_true(share > 0.225 && share < 0.275);
	}
	run_result_free(&r);
}

/* ---- ar, metric util: the least recent utilisation ----------------------------- */
static struct {
	struct dre *dre; /* the test's own estimators, fed as ar's are */
	struct dre_params dp;
	uint64_t decisions, unequal, higher;
} au;

static void util_tx(struct fabric *f, struct sw *s, struct port *out, struct packet *p)
{
	real->sw_tx(f, s, out, p);
	if (!au.dre)
		au.dre = calloc(f->nports, sizeof *au.dre);
	dre_add(&au.dre[fab_port_index(f, out)], &au.dp, f->q->now, p->size);
}

static uint16_t util_check(struct fabric *f, struct sw *s, const struct packet *p,
			   const uint16_t *cand, unsigned n)
{
	double u[64], umin = 1e300, umax = 0;
	assert_true(n <= 64);
	if (!au.dre)
		au.dre = calloc(f->nports, sizeof *au.dre);
	for (unsigned i = 0; i < n; i++) {
		struct port *pt = &s->node.ports[cand[i]];
		u[i] = dre_util(&au.dre[fab_port_index(f, pt)], &au.dp, f->q->now, pt->rate_bps);
		umin = u[i] < umin ? u[i] : umin;
		umax = u[i] > umax ? u[i] : umax;
	}
	uint16_t c = real->choose(f, s, p, cand, n);
	au.decisions++;
	au.unequal += umax != umin;
	for (unsigned i = 0; i < n; i++)
		if (cand[i] == c)
			au.higher += u[i] != umin;
	return c;
}

/* With the DRE (50 us, alpha 0.2 by default) every decision takes an egress
 * of least recent utilisation. */
static void test_ar_least_util(void **state)
{
	(void)state;
	memset(&au, 0, sizeof au);
	au.dp.period = 50 * PS_PER_US;
	au.dp.alpha = 0.2;
	struct experiment x;
	struct mp_err e = { 0 };
	struct sim s;
	char yaml[1024];
	snprintf(yaml, sizeof yaml, ws_yaml, 1, "4MB", "", "{type: ar, metric: util}", "300us");
	assert_int_equal(exp_load_string(&x, yaml, "test.yaml", &e), MP_OK);
	real = x.lb;
	wrapped = *real;
	wrapped.choose = util_check;
	wrapped.sw_tx = util_tx;
	x.lb = &wrapped;
	assert_int_equal(sim_build(&s, &x, &e), MP_OK);
	sim_run(&s);
	struct run_result r;
	sim_collect(&s, &r);
	sim_free(&s);
	x.lb = real;
	exp_free(&x);
	print_message("ar util: %llu decisions, %llu with unequal utilisations, %llu to a higher "
		      "one\n",
		      (unsigned long long)au.decisions, (unsigned long long)au.unequal,
		      (unsigned long long)au.higher);
	assert_int_equal(r.ncompleted, r.nflows);
	assert_true(au.unequal > au.decisions / 2);
	assert_int_equal(au.higher, 0);
	free(au.dre);
	run_result_free(&r);
}

/* ---- drill: the shortest among d samples and m remembered --------------------- */
#define MAXSW 64
#define MAXH 64
static struct {
	unsigned d, m;
	bool per_host;
	uint16_t mem[MAXSW][MAXH][2]; /* what the test expects remembered (UINT16_MAX: none) */
	uint64_t decisions, not_min, not_global_min, bad, remembered_used;
} dr;

static bool has(const uint16_t *v, unsigned n, uint16_t x)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static uint16_t drill_check(struct fabric *f, struct sw *s, const struct packet *p,
			    const uint16_t *cand, unsigned n)
{
	uint16_t *mem = dr.mem[s->sid][dr.per_host ? p->dst : 0];
	uint16_t c = real->choose(f, s, p, cand, n);
	unsigned k;
	const uint16_t *cmp = drill_compared(s, &k);
	const struct port *pt = s->node.ports;
	dr.decisions++;
	/* the remembered ports still in the set come first, then distinct samples */
	unsigned nrem = 0;
	for (unsigned i = 0; i < dr.m; i++)
		if (mem[i] != UINT16_MAX && has(cand, n, mem[i]))
			dr.bad += cmp[nrem++] != mem[i];
	dr.remembered_used += nrem > 0;
	unsigned want = dr.d < n ? dr.d : n;
	dr.bad += k < want || k > want + nrem;
	for (unsigned i = 0; i < k; i++)
		dr.bad += !has(cand, n, cmp[i]) || has(cmp, i, cmp[i]);
	dr.bad += !has(cmp, k, c);
	uint64_t qmin = UINT64_MAX, gmin = UINT64_MAX;
	for (unsigned i = 0; i < k; i++)
		qmin = pt[cmp[i]].qbytes_total < qmin ? pt[cmp[i]].qbytes_total : qmin;
	for (unsigned i = 0; i < n; i++)
		gmin = pt[cand[i]].qbytes_total < gmin ? pt[cand[i]].qbytes_total : gmin;
	dr.not_min += pt[c].qbytes_total != qmin;
	dr.not_global_min += pt[c].qbytes_total != gmin;
	/* the next decision remembers the m shortest compared, the choice first */
	mem[0] = dr.m ? c : UINT16_MAX;
	if (dr.m == 2) {
		mem[1] = UINT16_MAX;
		for (unsigned i = 0; i < k; i++)
			if (cmp[i] != c && (mem[1] == UINT16_MAX ||
					    pt[cmp[i]].qbytes_total < pt[mem[1]].qbytes_total))
				mem[1] = cmp[i];
	}
	return c;
}

static void drill_case(const char *lb, unsigned d, unsigned m, bool per_host)
{
	memset(&dr, 0, sizeof dr);
	memset(dr.mem, 0xff, sizeof dr.mem);
	dr.d = d;
	dr.m = m;
	dr.per_host = per_host;
	struct run_result r;
	ws_run(1, "4MB", "", lb, "300us", drill_check, &r);
	print_message("%s: %llu decisions, remembered port compared in %llu, %llu not the "
		      "shortest compared, %llu not the shortest of all, %llu malformed\n",
		      lb, (unsigned long long)dr.decisions, (unsigned long long)dr.remembered_used,
		      (unsigned long long)dr.not_min, (unsigned long long)dr.not_global_min,
		      (unsigned long long)dr.bad);
	assert_int_equal(r.ncompleted, r.nflows);
	assert_true(dr.decisions > 10000);
	assert_int_equal(dr.bad, 0);
	assert_int_equal(dr.not_min, 0);
	if (m)
		assert_true(dr.remembered_used > dr.decisions * 9 / 10);
	/* sampling d < n ports misses the global shortest now and then */
	assert_true(dr.not_global_min > 100);
	run_result_free(&r);
}

/* DRILL(2,1) with one memory per switch (the defaults); DRILL(3,2) with one
 * per destination host; DRILL(1,0) is random choice. */
static void test_drill_shortest_of_compared(void **state)
{
	(void)state;
	drill_case("{type: drill}", 2, 1, false);
	drill_case("{type: drill, d: 3, m: 2, memory: host}", 3, 2, true);
	drill_case("{type: drill, d: 1, m: 0}", 1, 0, false);
}

/* ---- letflow and ar flowlet mode: a flowlet stays, a new one may move --------- */
#define FL_KEYS 65536
static struct {
	simtime_t gap;
	struct {
		simtime_t last;
		uint16_t port;
	} * seen; /* [switch][flowlet key] */
	uint64_t same_flowlet, moved_within, new_flowlets, moved;
} fls;

static uint16_t flowlet_check(struct fabric *f, struct sw *s, const struct packet *p,
			      const uint16_t *cand, unsigned n)
{
	uint32_t key = flowlet_key(p);
	assert_true(key < FL_KEYS && s->sid < MAXSW);
	uint16_t c = real->choose(f, s, p, cand, n);
	simtime_t now = f->q->now;
	__typeof__(fls.seen[0]) *e = &fls.seen[(size_t)s->sid * FL_KEYS + key];
	if (e->last) {
		if (now - e->last <= fls.gap) {
			fls.same_flowlet++;
			fls.moved_within += c != e->port;
		} else {
			fls.new_flowlets++;
			fls.moved += c != e->port;
		}
	}
	e->last = now;
	e->port = c;
	return c;
}

/* Web Search flows with a 2 us flowlet gap (so that both cases are frequent
 * in a short run): no flowlet ever changes port; LetFlow moves a new flowlet
 * to one of the other 3 uplinks 3/4 of the time. */
static void flowlet_case(const char *lb, double moved_lo, double moved_hi)
{
	memset(&fls, 0, sizeof fls);
	fls.gap = 2 * PS_PER_US;
	fls.seen = calloc((size_t)MAXSW * FL_KEYS, sizeof *fls.seen);
	struct run_result r;
	ws_run(1, "4MB", "", lb, "600us", flowlet_check, &r);
	double moved = (double)fls.moved / (double)fls.new_flowlets;
	print_message("%s: %llu packets within a flowlet, %llu of them moved; %llu new flowlets, "
		      "%.3f of them moved\n",
		      lb, (unsigned long long)fls.same_flowlet,
		      (unsigned long long)fls.moved_within, (unsigned long long)fls.new_flowlets,
		      moved);
	assert_int_equal(r.ncompleted, r.nflows);
	assert_true(fls.same_flowlet > 10000);
	assert_true(fls.new_flowlets > 1000);
	assert_int_equal(fls.moved_within, 0);
	assert_true(moved >= moved_lo && moved <= moved_hi);
	free(fls.seen);
	run_result_free(&r);
}

static void test_flowlets_stay_until_the_gap(void **state)
{
	(void)state;
	flowlet_case("{type: letflow, flowlet_gap: 2us}", 0.70, 0.80);
	/* a new flowlet takes the shortest queue: it moves, though not as often */
	flowlet_case("{type: ar, mode: flowlet, flowlet_gap: 2us}", 0.05, 1.0);
}

/* ---- every scheme: lossless under PFC, deterministic --------------------------- */
static const char *const schemes[] = {
	"{type: ar}",
	"{type: ar, mode: flowlet, metric: util}",
	"{type: drill}",
	"{type: letflow}",
};

/* A 600 KB buffer (a leaf reserves 268,512 B of it as PFC headroom and
 * control reserve for its 8 ports) under 0.8 load over a 2.5:1 oversubscribed fabric: PFC pauses
 * often, nothing is dropped, no buffer is overrun, every flow completes. */
static void test_pfc_lossless(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++) {
		struct run_result r;
		ws_run(2, "600KB", "", schemes[i], "300us", NULL, &r);
		print_message(
		    "%s: %zu / %zu flows, PFC pauses %llu, drops %llu + %llu, max buffer "
		    "used %llu B, max queue %llu B\n",
		    schemes[i], r.ncompleted, r.nflows, (unsigned long long)r.net.pause_frames,
		    (unsigned long long)r.net.drops_buffer, (unsigned long long)r.net.drops_link,
		    (unsigned long long)r.net.max_buffer_used,
		    (unsigned long long)r.net.max_queue_bytes);
		assert_int_equal(r.ncompleted, r.nflows);
		assert_true(r.net.pause_frames > 100);
		assert_int_equal(r.net.drops_buffer, 0);
		assert_int_equal(r.net.drops_link, 0);
		assert_int_equal(r.net.lossless_overflow, 0);
		assert_true(r.net.max_buffer_used <= 600000);
		assert_true(r.net.max_queue_bytes <= 600000);
		run_result_free(&r);
	}
}

/* Same seed: the same flow records byte for byte and the same events; another
 * seed: different records. */
static void test_determinism(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++) {
		struct run_result a, b, c;
		ws_run(3, "4MB", "", schemes[i], "200us", NULL, &a);
		ws_run(3, "4MB", "", schemes[i], "200us", NULL, &b);
		ws_run(4, "4MB", "", schemes[i], "200us", NULL, &c);
		assert_int_equal(a.nflows, b.nflows);
		assert_int_equal(a.events, b.events);
		assert_memory_equal(a.flows, b.flows, a.nflows * sizeof *a.flows);
		assert_true(a.nflows != c.nflows ||
			    memcmp(a.flows, c.flows, a.nflows * sizeof *a.flows) != 0);
		run_result_free(&a);
		run_result_free(&b);
		run_result_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ar_least_queue),
		cmocka_unit_test(test_ar_least_util),
		cmocka_unit_test(test_drill_shortest_of_compared),
		cmocka_unit_test(test_flowlets_stay_until_the_gap),
		cmocka_unit_test(test_pfc_lossless),
		cmocka_unit_test(test_determinism),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

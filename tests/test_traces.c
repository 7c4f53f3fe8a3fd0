/* test_traces.c - per-connection traces (output.traces): what a congestion
 * control researcher reads off them must be what the protocol did.
 *  - one RoCEv2 flow through a 40 Gb/s bottleneck: its rate trace starts at
 *    the 100 Gb/s line rate, and the first DCQCN cut shows as a step (one
 *    sample to the next, at least 10% down, never back up before it);
 *  - an STrack incast: each flow's cwnd trace never exceeds max_cwnd, and moves;
 *  - every transport gives RTT samples (longer than two hops' serialisation),
 *    a path, and a rate (its congestion control's, or what it sent);
 *  - tracing changes nothing in the simulation (FCTs identical on and off). */
#include "simtest.h"

#include <math.h>

#include "core/time.h"

/* samples of series `name`, in time order, into v (at most n); returns the count */
static size_t series(const struct run_result *r, const char *name, double *v, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < r->ts.n && k < n; i++)
		if (!strcmp(r->ts.names[r->ts.rows[i].series], name))
			v[k++] = r->ts.rows[i].value;
	return k;
}

static void test_roce_rate_step(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run("topology: {type: dumbbell, host_rate: 100Gbps, bottleneck_rate: 40Gbps}\n"
		    "switch: {kmin: 40KB, kmax: 160KB}\n"
		    "transport: {type: roce, preset: hpcc}\n"
		    "workload: {type: incast, senders: 1, receiver: 1, size: 4MB}\n"
		    "output: {interval: 5us, traces: true}\n",
		    &r);
	assert_int_equal(r.ncompleted, 1);
	assert_true(r.net.ecn_marks > 0);
	double v[4096];
	size_t n = series(&r, "rate_gbps:flow0", v, 4096);
	assert_true(n > 10);
	/* the first sample after the start: exactly the line rate */
	assert_true(v[0] == 100.0);
	size_t k = 0;
	while (k + 1 < n && v[k + 1] == v[k])
		k++;
	assert_true(k + 1 < n);
	printf("  rate %.1f Gb/s for %zu samples, then %.2f Gb/s\n", v[k], k + 1, v[k + 1]);
	assert_true(v[k] == 100.0);	     /* flat at line rate until the cut */
	assert_true(v[k + 1] <= 0.9 * v[k]); /* the cut: a step down */
	run_result_free(&r);
}

static void test_strack_cwnd_bounded(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run("topology: {type: star, hosts: 9, link_rate: 100Gbps}\n"
		    "switch: {kmin: 20KB, kmax: 60KB, queue_limit: 400KB}\n"
		    "transport: {type: strack, max_cwnd: 150KB}\n"
		    "workload: {type: incast, senders: 8, receiver: 0, size: 2MB}\n"
		    "output: {interval: 2us, traces: true}\n",
		    &r);
	assert_int_equal(r.ncompleted, 8);
	double v[8192];
	size_t total = 0;
	double lo = INFINITY, hi = 0;
	for (int f = 0; f < 8; f++) {
		char name[64];
		snprintf(name, sizeof name, "cwnd_bytes:flow%d", f);
		size_t n = series(&r, name, v, 8192);
		assert_true(n > 10);
		for (size_t i = 0; i < n; i++) {
			assert_true(v[i] <= 150000.0);
			lo = fmin(lo, v[i]);
			hi = fmax(hi, v[i]);
		}
		total += n;
	}
	printf("  %zu cwnd samples from %.0f to %.0f B (max_cwnd 150000 B)\n", total, lo, hi);
	assert_true(lo < 0.5 * hi); /* the window moved: the bound was tested */
	run_result_free(&r);
}

static void test_every_transport(void **state)
{
	(void)state;
	static const char *const tps[] = { "ref", "roce", "timely", "strack", "udmp", "mprdma" };
	for (size_t i = 0; i < sizeof tps / sizeof *tps; i++) {
		char yaml[512];
		snprintf(
		    yaml, sizeof yaml,
		    "topology: {type: dumbbell, host_rate: 100Gbps, bottleneck_rate: 100Gbps}\n"
		    "transport: {type: %s}\n"
		    "workload: {type: incast, senders: 1, receiver: 1, size: 1MB}\n"
		    "output: {interval: 10us, traces: true}\n",
		    tps[i]);
		struct run_result r;
		simtest_run(yaml, &r);
		assert_int_equal(r.ncompleted, 1);
		double v[1024], w[1024];
		size_t nrtt = series(&r, "rtt_us:flow0", v, 1024);
		assert_true(nrtt > 3);
		/* at least a data packet's and an ACK's serialisation on two hops */
		for (size_t k = 0; k < nrtt; k++)
			assert_true(v[k] >= 0.64 && v[k] < 1000.0);
		size_t npath = series(&r, "path:flow0", w, 1024);
		assert_true(npath > 3);
		size_t ncwnd = series(&r, "cwnd_bytes:flow0", w, 1024),
		       nrate = series(&r, "rate_gbps:flow0", w, 1024);
		printf("  %-7s rtt %zu samples (first %.2f us), path %zu, cwnd %zu, rate %zu\n",
		       tps[i], nrtt, v[0], npath, ncwnd, nrate);
		assert_true(nrate > 3);
		run_result_free(&r);
	}
}

static void test_traces_change_nothing(void **state)
{
	(void)state;
	static const char *const tps[] = { "strack", "udmp", "roce" };
	for (size_t i = 0; i < 3; i++) {
		char yaml[512];
		struct run_result a, b;
		for (int on = 0; on < 2; on++) {
			snprintf(yaml, sizeof yaml,
				 "topology: {type: star, hosts: 5, link_rate: 100Gbps}\n"
				 "transport: {type: %s}\n"
				 "workload: {type: incast, senders: 4, receiver: 0, size: 1MB}\n"
				 "output: {interval: 10us, traces: %s}\n",
				 tps[i], on ? "true" : "false");
			simtest_run(yaml, on ? &b : &a);
		}
		assert_int_equal(a.nflows, b.nflows);
		for (size_t f = 0; f < a.nflows; f++) {
			assert_true(a.flows[f].fct == b.flows[f].fct);
			assert_true(a.flows[f].retx_bytes == b.flows[f].retx_bytes);
		}
		run_result_free(&a);
		run_result_free(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roce_rate_step),
		cmocka_unit_test(test_strack_cwnd_bounded),
		cmocka_unit_test(test_every_transport),
		cmocka_unit_test(test_traces_change_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_timely.c - TIMELY (src/transport/timely.c) against properties of its
 * Algorithm 1: line rate alone, two senders sharing a bottleneck equally, the
 * T_high rule cutting the rate whenever the RTT stays above T_high, and what
 * happens when a second flow joins (as rdma-hw.cc, the HPCC ns-3 model). */
#include "simtest.h"

#include <math.h>

#include "core/time.h"

/* One 16 MB flow alone on a 100 Gb/s path: the RTT stays under T_low, every
 * update adds delta to a rate that starts at (and is capped by) line rate, so
 * the flow completes within 2% of its ideal FCT; with 1 or 4 queue pairs. */
static void test_line_rate(void **state)
{
	(void)state;
	for (int qps = 1; qps <= 4; qps += 3) {
		char yaml[512];
		snprintf(
		    yaml, sizeof yaml,
		    "topology: {type: dumbbell, host_rate: 100Gbps, bottleneck_rate: 100Gbps}\n"
		    "transport: {type: timely, qps: %d}\n"
		    "workload: {type: incast, senders: 1, receiver: 1, size: 16MB}\n",
		    qps);
		struct run_result r;
		simtest_run(yaml, &r);
		assert_int_equal(r.ncompleted, 1);
		print_message("%d QPs: slowdown %.4f\n", qps, r.flows[0].slowdown);
		assert_true(r.flows[0].slowdown < 1.02);
		assert_int_equal(r.flows[0].retx_bytes, 0);
		run_result_free(&r);
	}
}

/* 2 -> 1 through one 100 Gb/s bottleneck, the second sender starting 1 ms
 * after the first (at line rate, as a TIMELY flow starts). Bound: each
 * sender's mean goodput over 7-14 ms within 10% of the fair share (half of
 * what the two carry together), and together more than 85% of the link.
 * Why: with one bottleneck and equal base RTTs both senders see the same
 * queue, so Algorithm 1 is additive increase (the same delta, or N delta,
 * for both) and multiplicative decrease (factors from the same RTT
 * samples): the difference between their rates never grows on an increase
 * and shrinks on every cut, Chiu and Jain's convergence argument for AIMD.
 * What is left is the phase of their once-per-RTT updates, a few delta
 * (0.1-0.5 Gb/s) against a 50 Gb/s share; the 10% covers the sampled
 * oscillation between cuts. (Here the second sender joins at line rate and
 * the RTT ramp that follows cuts both to min_rate at once, so they climb
 * back from equal rates.) The link is below 100% because each cut of the
 * gradient rule (line 8) empties the queue. TIMELY sends nothing
 * ECN-capable: no marks, although the switches mark. */
static void test_incast_fair(void **state)
{
	(void)state;
	char path[256];
	simtest_temp_file(path, sizeof path, "timely",
			  "src,dst,bytes,start\n0,2,400MB,0us\n1,2,400MB,1000us\n");
	char yaml[1024];
	snprintf(yaml, sizeof yaml,
		 "topology: {type: dumbbell, left: 2, right: 1}\n"
		 "switch: {mode: lossless, kmin: 100KB, kmax: 400KB}\n"
		 "transport: {type: timely}\n"
		 "workload: {type: flows_file, file: %s}\n"
		 "stop_time: 14ms\n"
		 "output: {interval: 1ms, flow_throughput: true}\n",
		 path);
	struct run_result r;
	simtest_run(yaml, &r);
	remove(path);
	double g[2] = { 0, 0 };
	int n = 0;
	for (simtime_t t = 8000 * PS_PER_US; t <= 14000 * PS_PER_US; t += 1000 * PS_PER_US, n++) {
		double a = simtest_series_at(&r, "goodput_gbps:flow0", t),
		       b = simtest_series_at(&r, "goodput_gbps:flow1", t);
		assert_true(a >= 0 && b >= 0); /* sampled */
		g[0] += a;
		g[1] += b;
	}
	g[0] /= n;
	g[1] /= n;
	double fair = (g[0] + g[1]) / 2;
	print_message("7-14 ms: %.1f and %.1f Gb/s (fair share %.1f)\n", g[0], g[1], fair);
	assert_true(g[0] + g[1] > 85);
	assert_true(fabs(g[0] - fair) < 0.1 * fair && fabs(g[1] - fair) < 0.1 * fair);
	assert_int_equal(r.net.ecn_marks, 0);
	assert_int_equal(r.net.drops_buffer + r.net.drops_link, 0);
	run_result_free(&r);
}

/* The T_high rule (Algorithm 1 line 6): a flow whose RTT stays above T_high
 * is cut every round trip, rate *= 1 - beta (1 - T_high / RTT), whatever the
 * gradient, down to min_rate. A 300 us bottleneck link (base RTT 304 us, no
 * queue: the flow is alone) with T_high = 200 us: the flow runs at min_rate
 * (1 Gb/s) by 6 ms and a 64 MB transfer takes many times its ideal; with the
 * default T_high = 500 us (above the RTT; the gradient is 0, so the rate
 * stays at line rate) it completes within 2% of ideal. */
static void test_t_high(void **state)
{
	(void)state;
	double slow[2];
	for (int i = 0; i < 2; i++) {
		char yaml[512];
		snprintf(yaml, sizeof yaml,
			 "topology: {type: dumbbell, bottleneck_delay: 150us}\n"
			 "transport: {type: timely, t_high: %s}\n"
			 "workload: {type: incast, senders: 1, receiver: 1, size: 64MB}\n"
			 "output: {interval: 500us, flow_throughput: true}\n",
			 i ? "500us" : "200us");
		struct run_result r;
		simtest_run(yaml, &r);
		assert_int_equal(r.ncompleted, 1);
		slow[i] = r.flows[0].slowdown;
		double at6 = simtest_series_at(&r, "goodput_gbps:flow0", 6000 * PS_PER_US);
		print_message("T_high %s: slowdown %.2f\n", i ? "500us" : "200us", slow[i]);
		if (i == 0) { /* at min_rate */
			print_message("goodput at 5.5-6 ms: %.2f Gb/s\n", at6);
			assert_true(at6 > 0.9 && at6 < 1.1);
		}
		run_result_free(&r);
	}
	assert_true(slow[0] > 5);
	assert_true(slow[1] < 1.02);
}

/* `hai`: below T_low Algorithm 1 adds delta per round trip (`paper`), while
 * the HPCC ns-3 model counts those increases toward HAI and adds 5 delta
 * after five (`hpcc`). Two senders starting together at line rate are both
 * cut to min_rate within the first 100 us; climbing back below T_low takes
 * milliseconds at delta per round trip and a fifth of that with HAI, so in
 * the first 4 ms `hpcc` delivers far more. */
static void test_hai_modes(void **state)
{
	(void)state;
	uint64_t got[2];
	for (int i = 0; i < 2; i++) {
		char yaml[512];
		snprintf(yaml, sizeof yaml,
			 "topology: {type: dumbbell, left: 2, right: 1}\n"
			 "transport: {type: timely, hai: %s}\n"
			 "workload: {type: incast, senders: 2, receiver: 2, size: 100MB}\n"
			 "stop_time: 4ms\n",
			 i ? "hpcc" : "paper");
		struct run_result r;
		simtest_run(yaml, &r);
		got[i] = r.flows[0].rcvd_bytes + r.flows[1].rcvd_bytes;
		run_result_free(&r);
	}
	print_message("delivered in 4 ms: paper %.1f MB, hpcc %.1f MB\n", got[0] / 1e6,
		      got[1] / 1e6);
	assert_true(got[1] > 1.5 * got[0]);
}

/* A second flow joins a long one (the scenario of test_incast_fair, 50 us
 * samples). The RTT ramp stays under T_low, where Algorithm 1 only adds, until
 * the queue passes T_low (about 100 us); the first sample above it carries a
 * gradient over 1 / beta, so line 8's factor is clamped at 0 and both flows
 * fall to min_rate together. rdma-hw.cc's UpdateRateTimely takes the same
 * path (the same T_low test first, the same clamp of c at 0, then
 * max(m_minRate, ...)), so that is kept: asserted, both rates at most
 * 1.5 Gb/s in the first 300 us after the join. What differs is the climb
 * back: rdma-hw.cc counts every increase toward HAI (m_incStage), below T_low
 * too, and adds RATE_HAI (5 delta) from the sixth; Algorithm 1 as the paper
 * writes it adds delta per round trip below T_low (7 us here, so 14 Gb/s per
 * ms). Measured over the 4 ms after the join, the link carries 77% with
 * `hai: hpcc` (the default) and 45% with `hai: paper`; bounds 70% and 50%. */
static void test_join(void **state)
{
	(void)state;
	char path[256];
	simtest_temp_file(path, sizeof path, "timely_join",
			  "src,dst,bytes,start\n0,2,400MB,0us\n1,2,400MB,1000us\n");
	double used[2];
	for (int i = 0; i < 2; i++) {
		char yaml[1024];
		snprintf(yaml, sizeof yaml,
			 "topology: {type: dumbbell, left: 2, right: 1}\n"
			 "switch: {mode: lossless}\n"
			 "transport: {type: timely, hai: %s}\n"
			 "workload: {type: flows_file, file: %s}\n"
			 "stop_time: 5ms\n"
			 "output: {interval: 50us, flow_throughput: true, traces: true}\n",
			 i ? "paper" : "hpcc", path);
		struct run_result r;
		simtest_run(yaml, &r);
		double lo[2] = { 1e9, 1e9 }, sum = 0;
		int n = 0;
		for (simtime_t t = 1050 * PS_PER_US; t <= 5000 * PS_PER_US; t += 50 * PS_PER_US) {
			for (int f = 0; f < 2; f++) {
				char name[32];
				snprintf(name, sizeof name, "rate_gbps:flow%d", f);
				double x = simtest_series_at(&r, name, t);
				if (t <= 1300 * PS_PER_US && x >= 0 && x < lo[f])
					lo[f] = x;
				snprintf(name, sizeof name, "goodput_gbps:flow%d", f);
				sum += simtest_series_at(&r, name, t);
			}
			n++;
		}
		used[i] = sum / n / 100;
		print_message("hai %s: both at %.2f / %.2f Gb/s after the join, link %.1f%% "
			      "used over 1-5 ms\n",
			      i ? "paper" : "hpcc", lo[0], lo[1], 100 * used[i]);
		assert_true(lo[0] <= 1.5 && lo[1] <= 1.5);
		run_result_free(&r);
	}
	remove(path);
	assert_true(used[0] > 0.70);
	assert_true(used[1] < 0.50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_rate), cmocka_unit_test(test_incast_fair),
		cmocka_unit_test(test_t_high),	  cmocka_unit_test(test_hai_modes),
		cmocka_unit_test(test_join),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_swift.c - Swift (src/transport/swift.c): its target delay with hops
 * and flow scaling against hand-computed values, the hops a fabric gives a
 * path, and the window's response to a delay above and below the target
 * (Kumar et al., "Swift: Delay is Simple and Effective for Congestion
 * Control in the Datacenter", SIGCOMM 2020, Algorithm 1, sections 3.4-3.5;
 * constants as the UEC htsim's swift.cpp). */
#include "simtest.h"

#include <math.h>
#include <stdlib.h>

#include "core/time.h"
#include "net/fabric.h"
#include "transport/swift.h"

/* base 20 us, h = 20 / 6.55 = 3.053435 us, fs_range 100 us over
 * [0.1, 100] packets: fs_alpha = 100 / (1/sqrt(0.1) - 1/sqrt(100))
 * = 32.655432 us, fs_beta = -fs_alpha / 10 = -3.265543 us. */
static struct swift_consts consts(void)
{
	struct swift_consts k = {
		.ai = 1,
		.beta = 0.8,
		.max_mdf = 0.5,
		.base_target = 20 * PS_PER_US,
		.h = 3053435,
		.fs_range = 100 * PS_PER_US,
		.min_cwnd = 0.001,
		.max_cwnd = 1000,
	};
	swift_flow_scaling(&k, 0.1, 100);
	return k;
}

/* target = base + hops x h + clamp(fs_alpha / sqrt(cwnd) + fs_beta, 0, fs_range):
 *   1 hop, cwnd 100: 20 + 3.053435 + 0            = 23.053435 us
 *   3 hops, cwnd 100: 20 + 9.160305               = 29.160305 us
 *   1 hop, cwnd 1: 23.053435 + 32.655432 x 0.9 = 52.443323 us
 *   3 hops, cwnd 10: 29.160305 + 10.326441 - 3.265543 = 36.221316 us
 *   1 hop, cwnd 0.05: fs 146 - 3.3 us clamped to fs_range: 123.053435 us */
static void test_target_with_hops(void **state)
{
	(void)state;
	struct swift_consts k = consts();
	assert_true(fabs(k.fs_alpha - 32655432.03) < 0.01);
	assert_true(llabs((long long)swift_target(&k, 1, 100) - 23053435) <= 1);
	assert_true(llabs((long long)swift_target(&k, 3, 100) - 29160305) <= 1);
	assert_true(llabs((long long)swift_target(&k, 1, 1) - 52443323) <= 1);
	assert_true(llabs((long long)swift_target(&k, 3, 10) - 36221316) <= 1);
	assert_int_equal(swift_target(&k, 1, 0.05), 123053435);
}

/* The hops the transport gives a connection: the switches on its path. On
 * a 2-leaf, 2-spine fabric of 4 hosts per leaf, hosts 0 and 1 share a leaf
 * (1 switch), hosts 0 and 4 do not (leaf, spine, leaf: 3). */
static void test_path_hops(void **state)
{
	(void)state;
	struct experiment x;
	struct sim s;
	simtest_open("topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 2, spines: 2}\n"
		     "transport: {type: swift}\n"
		     "workload: {type: incast, senders: 1, receiver: 1, size: 1MB}\n",
		     &x, &s);
	assert_int_equal(fab_path_switches(&s.fab, 0, 1, 0), 1);
	assert_int_equal(fab_path_switches(&s.fab, 0, 4, 0), 3);
	assert_int_equal(fab_path_switches(&s.fab, 4, 0, 0), 3);
	simtest_close(&x, &s);
}

/* Algorithm 1 on a window of 10 packets, target 30 us, RTT 40 us:
 *   delay 40 us at t = 100 us: cwnd x max(1 - 0.8 x 10/40, 0.5) = 8;
 *   delay 40 us 1 us later: within one RTT of the cut, unchanged;
 *   delay 80 us at t = 140 us: 1 - 0.8 x 50/80 = 0.5: cwnd 4;
 *   delay 200 us at t = 180 us: 1 - 0.8 x 170/200 = 0.32, held at
 *     1 - max_mdf = 0.5: cwnd 2;
 *   delay 20 us (below target), 1 packet acked: cwnd 2 + 1/2 = 2.5;
 *   a window of 0.5 packets below target: 0.5 + ai x 1 = 1.5. */
static void test_window_response(void **state)
{
	(void)state;
	struct swift_consts k = consts();
	struct swift_win w = { .cwnd = 10, .last_decrease = 0 };
	simtime_t us = PS_PER_US, target = 30 * us, rtt = 40 * us;
	swift_react(&k, &w, 40 * us, target, 1, 100 * us, rtt);
	assert_true(fabs(w.cwnd - 8) < 1e-12);
	swift_react(&k, &w, 40 * us, target, 1, 101 * us, rtt);
	assert_true(fabs(w.cwnd - 8) < 1e-12);
	swift_react(&k, &w, 80 * us, target, 1, 140 * us, rtt);
	assert_true(fabs(w.cwnd - 4) < 1e-12);
	swift_react(&k, &w, 200 * us, target, 1, 180 * us, rtt);
	assert_true(fabs(w.cwnd - 2) < 1e-12);
	swift_react(&k, &w, 20 * us, target, 1, 181 * us, rtt);
	assert_true(fabs(w.cwnd - 2.5) < 1e-12);
	struct swift_win small = { .cwnd = 0.5 };
	swift_react(&k, &small, 20 * us, target, 1, 200 * us, rtt);
	assert_true(fabs(small.cwnd - 1.5) < 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_with_hops),
		cmocka_unit_test(test_path_hops),
		cmocka_unit_test(test_window_response),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_uet.c - the Ultra Ethernet transport (transport/uet.c) against what
 * defines it, as the UEC's htsim runs it (github.com/ultraethernet/uet-htsim,
 * htsim/sim/uec.cpp, buffer_reps.cpp):
 *   - NSCC's multiplicative decrease on an ECN-marked ACK with the delay above
 *     target, computed by hand from initNsccParams' constants;
 *   - REPS resends on an entropy a clean ACK returned and forgets one that
 *     came back marked;
 *   - a trimmed packet is NACKed and resent once, with no timeout;
 *   - RCCC's credit bounds the bytes in flight, and a queue pair's next
 *     message speculates as a new flow does;
 *   - RCCC's per-host pull pacer shares the receiver's link evenly among an
 *     incast's flows, and grants credit at its rate;
 *   - a run is deterministic. */
#include "simtest.h"

#include <math.h>

#include "core/rng.h"
#include "core/time.h"
#include "transport/uet.h"

/* Network RTT 10 us at 100 Gb/s, 4096 B of payload in 4160 B packets, no
 * trimming: target = 10 us; the BDP is 125,000 B, so maxwnd = cwnd at the
 * start = 1.5 x 125,000 = 187,500 B; against htsim's reference (100 Gb/s,
 * 12 us: 150,000 B) a = 5/6, so eta = 0.15 x 4096 x 5/6 = 512 B. */
static void nscc_setup(struct uet_nscc_k *k, struct uet_nscc *n)
{
	uet_nscc_consts(k, 10 * PS_PER_US, 100000000000ull, 4096, 4160, false, 0, 3, 0.8, 0.0125,
			PS_PER_US, true);
	uet_nscc_init(n, 10 * PS_PER_US, 100000000000ull, 1.5);
	assert_int_equal(k->target_qdelay, 10 * PS_PER_US);
	assert_int_equal(n->cwnd, 187500);
	assert_int_equal(k->min_cwnd, 4160);
	assert_true(fabs(k->eta - 512.0) < 1e-6);
}

/* An ACK with ECN echo and an RTT of base + 30 us, with the average delay at
 * 20 us before it: the average becomes 0.0125 x 30 + 0.9875 x 20 = 20.125 us
 * (a marked ACK's sample always counts), above the 10 us target, so the
 * window is cut by 1 - 0.8 x (20.125 - 10) / 20.125 = 0.59752:
 * 187,500 x 0.59752 = 112,034 B. A second one within the base RTT does not
 * cut again; neither a clean ACK nor a marked one with a small delay cuts. */
static void test_nscc_decrease(void **state)
{
	(void)state;
	struct uet_nscc_k k;
	struct uet_nscc n;
	nscc_setup(&k, &n);
	simtime_t now = 100 * PS_PER_US;
	n.avg_delay = 20 * PS_PER_US;
	n.last_adjust_time = now; /* no fulfil on this ACK: the cut alone */
	uet_nscc_on_ack(&k, &n, now, 40 * PS_PER_US, true, 4160, 100000);
	assert_true(n.avg_delay >= 20124999 && n.avg_delay <= 20125000);
	assert_true(n.cwnd >= 112033 && n.cwnd <= 112035);
	int64_t cut = n.cwnd;
	uet_nscc_on_ack(&k, &n, now + 5 * PS_PER_US, 40 * PS_PER_US, true, 4160, 100000);
	assert_int_equal(n.cwnd, cut); /* once per base RTT */

	/* a clean ACK at the same delay: fair increase, owed until fulfil */
	nscc_setup(&k, &n);
	n.avg_delay = 20 * PS_PER_US;
	n.last_adjust_time = now;
	uet_nscc_on_ack(&k, &n, now, 40 * PS_PER_US, false, 4160, 100000);
	assert_int_equal(n.cwnd, 187500);
	/* fi = 5 x 4096 x 5/6 per byte: 4160 x 17066.67 B^2 owed */
	assert_true(n.inc_bytes >= 70997333 - 1 && n.inc_bytes <= 70997333 + 1);

	/* marked, but the delay (2 us) under target: nothing moves */
	nscc_setup(&k, &n);
	n.last_adjust_time = now;
	uet_nscc_on_ack(&k, &n, now, 12 * PS_PER_US, true, 4160, 100000);
	assert_int_equal(n.cwnd, 187500);
	assert_int_equal(n.inc_bytes, 0);
}

/* REPS: entropies come back in ACKs; a clean one is sent once more, oldest
 * first; a marked one (or a NACKed one) is not kept; with nothing fresh a
 * random entropy of the connection's range is explored. */
static void test_reps_recycles_clean_drops_marked(void **state)
{
	(void)state;
	struct uet_reps r;
	struct mp_rng rng;
	rng_init(&rng, 1, RNG_CONN, 0);
	uet_reps_init(&r, 8, 64, 1000, false, 0);
	uet_reps_feedback(&r, 1005, UET_PATH_GOOD, 0);
	uet_reps_feedback(&r, 1007, UET_PATH_ECN, 0);
	uet_reps_feedback(&r, 1009, UET_PATH_NACK, 0);
	uet_reps_feedback(&r, 1010, UET_PATH_GOOD, 0);
	assert_int_equal(r.nfresh, 2);
	assert_int_equal(uet_reps_next(&r, &rng), 1005);
	assert_int_equal(uet_reps_next(&r, &rng), 1010);
	assert_int_equal(r.nfresh, 0);
	for (int i = 0; i < 100; i++) { /* explored: the connection's 64 entropies */
		uint16_t ev = uet_reps_next(&r, &rng);
		assert_true(ev >= 1000 && ev < 1064);
	}
	/* a full buffer keeps the latest 8 clean ones */
	for (uint16_t e = 0; e < 10; e++)
		uet_reps_feedback(&r, (uint16_t)(1020 + e), UET_PATH_GOOD, 0);
	for (uint16_t e = 2; e < 10; e++)
		assert_int_equal(uet_reps_next(&r, &rng), 1020 + e);
}

/* A 2 -> 1 incast through a switch whose egress queue holds 40 KB, with
 * trimming: packets are trimmed, none dropped, and each trimmed packet is
 * resent exactly once (retransmitted bytes = trims x 4160 B) on its NACK: the
 * timeout is 1 s, and both flows end within 2 base RTTs of the time the
 * link needs for 2 x 2 MB (no timeout, no idle link while a repair waits). */
static void test_trim_repaired_by_nack(void **state)
{
	(void)state;
	const char *yaml = "seed: 3\n"
			   "topology: {type: star, hosts: 3, link_rate: 100Gbps, link_delay: 1us}\n"
			   "switch: {queue_limit: 40KB, trim: on}\n"
			   "transport: {type: uet, mtu: 4160B, header: 64B, rto: 1s}\n"
			   "workload: {type: incast, senders: 2, receiver: 2, size: 2MB}\n";
	struct run_result r;
	simtest_run(yaml, &r);
	assert_int_equal(r.ncompleted, 2);
	assert_int_equal(r.net.drops_buffer, 0);
	assert_true(r.net.trimmed > 0);
	uint64_t retx = 0;
	simtime_t last = 0;
	for (size_t i = 0; i < r.nflows; i++) {
		retx += r.flows[i].retx_bytes;
		if (r.flows[i].fct > last)
			last = r.flows[i].fct;
	}
	assert_int_equal(retx, r.net.trimmed * 4160);
	/* 2 x 2 MB in 4096 B payloads: 1024 packets of 4160 B at 100 Gb/s, plus
	 * the retransmissions, plus the base RTT (~4.7 us) */
	double busy_us = (double)(1024 + r.net.trimmed) * 4160 * 8 / 100e3;
	print_message("trimmed %llu, last FCT %.1f us, link busy %.1f us\n",
		      (unsigned long long)r.net.trimmed, (double)last / PS_PER_US, busy_us);
	assert_true((double)last / PS_PER_US < busy_us + 2 * 5.0);
	run_result_free(&r);
}

/* RCCC alone, its credit clocked on arrivals (rccc_pacer: arrivals): the
 * sender sends only while it holds credit, which is at most maxwnd
 * (maxwnd_bdp x the BDP) and comes back one mtu per packet delivered.
 * With maxwnd under one packet (0.05 BDP, ~2.9 KB) a lone flow is stop and
 * wait: each of the 245 packets of 1 MB (4096 B of payload each) waits for
 * the credit its predecessor's arrival sent back, one round trip of a 4160 B
 * packet out and a 64 B PULL back over two 100 Gb/s hops with 1 us each:
 * 2 x 0.3328 + 2 x 0.00512 + 4 = 4.67584 us, 1145.6 us in all. With the
 * default 1.5 BDP the same flow runs at line rate (~90 us). */
static void test_rccc_credit_limits(void **state)
{
	(void)state;
	char yaml[512];
	simtime_t fct[2];
	const double bdp[2] = { 0.05, 1.5 };
	for (int i = 0; i < 2; i++) {
		snprintf(yaml, sizeof yaml,
			 "seed: 1\n"
			 "topology: {type: star, hosts: 2, link_rate: 100Gbps, link_delay: 1us}\n"
			 "transport: {type: uet, cc: rccc, rccc_pacer: arrivals, mtu: 4160B, "
			 "header: 64B, maxwnd_bdp: %g}\n"
			 "workload: {type: incast, senders: 1, receiver: 1, size: 1MB}\n",
			 bdp[i]);
		struct run_result r;
		simtest_run(yaml, &r);
		assert_int_equal(r.ncompleted, 1);
		fct[i] = r.flows[0].fct;
		run_result_free(&r);
	}
	double ideal = 245 * (2 * 0.3328 + 2 * 0.00512 + 4);
	print_message("RCCC: FCT %.2f us at 0.05 BDP (stop and wait: %.2f), %.2f us at 1.5 BDP\n",
		      (double)fct[0] / PS_PER_US, ideal, (double)fct[1] / PS_PER_US);
	assert_true(fabs((double)fct[0] / PS_PER_US - ideal) < 0.01 * ideal);
	assert_true((double)fct[1] / PS_PER_US < 100);
}

/* A double-binary-tree AllReduce on the collective layer's queue pairs: a
 * message is often posted on a connection that has sent all it had, with no
 * credit left and nothing in flight to earn any. It speculates as htsim's
 * per-message connection does, so every message completes (without it, 310
 * of the 896 stall and the run ends without them). Within 1.5x of NSCC
 * alone (1.37x measured): the per-host pacer keeps pulling, speculatively,
 * for a queue pair whose pull target is met, so its next message finds
 * credit (clocked on arrivals, a queue pair kept the bytes it had in flight
 * and took 2.6x NSCC's time). */
static void test_rccc_next_message(void **state)
{
	(void)state;
	const char *cc[2] = { "nscc", "rccc" };
	simtime_t end[2];
	for (int i = 0; i < 2; i++) {
		char yaml[512];
		snprintf(
		    yaml, sizeof yaml,
		    "seed: 1\n"
		    "topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 2, spines: 2, "
		    "host_rate: 400Gbps, fabric_rate: 400Gbps}\n"
		    "switch: {mode: lossy, queue_limit: 2MB, kmin: 100KB, kmax: 300KB, pmax: 1}\n"
		    "transport: {type: uet, mtu: 4096B, cc: %s}\n"
		    "collective: {type: allreduce, algorithm: double_binary_tree, size: 8MB, "
		    "ranks: 8, jobs: 1, chunk: 128KB}\n",
		    cc[i]);
		struct run_result r;
		simtest_run(yaml, &r);
		assert_true(r.nflows > 0);
		assert_int_equal(r.ncompleted, r.nflows);
		end[i] = 0;
		for (size_t k = 0; k < r.nflows; k++)
			if (r.flows[k].finish > end[i])
				end[i] = r.flows[k].finish;
		run_result_free(&r);
	}
	print_message("DBT AllReduce of 8 MB on 8 ranks: %.2f us under NSCC, %.2f us under RCCC\n",
		      (double)end[0] / PS_PER_US, (double)end[1] / PS_PER_US);
	assert_true((double)end[1] < 1.5 * (double)end[0]);
}

/* An 8 -> 1 incast of 2 MB each under RCCC at 400 Gb/s (1 us links): each
 * flow is 489 packets, 488 of 4160 B and one of 1152 + 64 B, 2,031,296 B on
 * the wire. The receiver's pull pacer grants pull_mtus x 4096 = 16,384 B a
 * pull, round robin, at pull_rate x 400 Gb/s, so the flows' last credits
 * come within one round of the pacer (8 pulls) and they end within it:
 * 8 x 16,384 B at 396 Gb/s = 2.648 us (0.92 us measured; clocked on
 * arrivals, rccc_pacer: arrivals, they spread over 18 us). The link is busy throughout:
 * the last ends by 8 x 2,031,296 B at 400 Gb/s (325.0 us) + a base RTT
 * (two hops of 4160 B out and of 64 B back: 4.169 us), within 1%.
 * At pull_rate 0.5 the pacer, not the link, is the bottleneck: the last flow
 * ends after what is not sent on the speculative credit (maxwnd = 1.5 x
 * 400 Gb/s x 4.169 us = 312,672 B a flow, at most) has been pulled at 200
 * Gb/s: between (8 x 2,031,296 - 8 x 312,672) B / 200 Gb/s + RTT = 554.1 us
 * and 8 x 2,031,296 B / 200 Gb/s + RTT = 654.2 us (at line rate: 329). */
static void test_rccc_pacer_incast(void **state)
{
	(void)state;
	const double rate[2] = { 0.99, 0.5 };
	for (int i = 0; i < 2; i++) {
		char yaml[512];
		snprintf(yaml, sizeof yaml,
			 "seed: 1\n"
			 "topology: {type: star, hosts: 9, link_rate: 400Gbps, link_delay: 1us}\n"
			 "transport: {type: uet, cc: rccc, mtu: 4160B, header: 64B, "
			 "pull_rate: %g}\n"
			 "workload: {type: incast, senders: 8, receiver: 8, size: 2MB}\n",
			 rate[i]);
		struct run_result r;
		simtest_run(yaml, &r);
		assert_int_equal(r.ncompleted, 8);
		double lo = 1e300, hi = 0;
		for (size_t k = 0; k < r.nflows; k++) {
			double f = (double)r.flows[k].fct / PS_PER_US;
			lo = f < lo ? f : lo;
			hi = f > hi ? f : hi;
		}
		run_result_free(&r);
		print_message("pull_rate %.2f: FCTs %.3f to %.3f us\n", rate[i], lo, hi);
		if (i == 0) {
			assert_true(hi - lo < 2.648);
			assert_true(fabs(hi - (325.00736 + 4.16896)) < 0.01 * 329.176);
		} else {
			assert_true(hi > 554.1 && hi < 654.2);
		}
	}
}

static void test_deterministic(void **state)
{
	(void)state;
	simtest_assert_deterministic(
	    "seed: 5\n"
	    "topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 2, spines: 2}\n"
	    "switch: {queue_limit: 60KB, trim: on}\n"
	    "transport: {type: uet, cc: nscc+rccc}\n"
	    "workload: {type: permutation, size: 500KB}\n",
	    4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nscc_decrease),
		cmocka_unit_test(test_reps_recycles_clean_drops_marked),
		cmocka_unit_test(test_trim_repaired_by_nack),
		cmocka_unit_test(test_rccc_credit_limits),
		cmocka_unit_test(test_rccc_next_message),
		cmocka_unit_test(test_rccc_pacer_incast),
		cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

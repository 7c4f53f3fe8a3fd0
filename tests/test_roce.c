/* test_roce.c - RoCEv2 (src/transport/roce.c) against properties its papers
 * and the InfiniBand RC semantics fix: line rate alone, PFC keeping an incast
 * lossless, go-back-N paying for every loss, DCQCN sharing a bottleneck. */
#include "simtest.h"

#include <math.h>
#include <unistd.h>

#include "core/time.h"

static void test_line_rate(void **state)
{
	(void)state;
	static const char *const presets[] = { "paper", "hpcc" };
	for (int i = 0; i < 2; i++) {
		char yaml[512];
		snprintf(
		    yaml, sizeof yaml,
		    "topology: {type: dumbbell, host_rate: 100Gbps, bottleneck_rate: 100Gbps}\n"
		    "switch: {mode: lossless}\n"
		    "transport: {type: roce, preset: %s, qps: %d}\n"
		    "workload: {type: incast, senders: 1, receiver: 1, size: 16MB}\n",
		    presets[i], i ? 4 : 1);
		struct run_result r;
		simtest_run(yaml, &r);
		assert_int_equal(r.ncompleted, 1);
		assert_true(r.flows[0].slowdown < 1.02);
		assert_int_equal(r.flows[0].retx_bytes, 0);
		run_result_free(&r);
	}
}

/* 8 -> 1, lossless (4 MB buffer, PFC): nothing is dropped, every flow
 * completes, pauses are counted, and the receiver's link carries most of its
 * capacity from the first start to the last finish:
 *  - PFC alone (DCQCN off) paces the senders through pauses: over 95%;
 *  - DCQCN+PFC with the Mellanox reaction point (hpcc preset) and NP-paced
 *    CNPs, one per 50 us per QP (the DCQCN paper's N, the NIC's behaviour):
 *    over 90%. With PFC headroom reserved (9 x 37 KB) the dynamic XOFF holds
 *    the queue near 1.75 MB rather than 2.0 MB; one sender ends 1.2 ms after
 *    the others, DCQCN still recovering from its cuts (0.938; 0.987 when the
 *    headroom was not reserved and the buffer could be overrun).
 * With CNPs on every marked packet's ACK instead (the HPCC script's style) the
 * senders cut every 4 us while the multi-MB queue drains, all reach the 1 Gb/s
 * floor together and the link idles until the 300 us timer: 0.795 of the link
 * with 4 MB (0.917 with 32 MB). That run is printed and guarded, not held to
 * 0.95. */
static double incast_goodput(const char *transport, struct run_result *r)
{
	char buf[640];
	snprintf(buf, sizeof buf,
		 "topology: {type: star, hosts: 9, link_rate: 100Gbps}\n"
		 "switch: {mode: lossless, buffer: 4MB, kmin: 400KB, kmax: 1600KB, pmax: 0.2}\n"
		 "transport: {type: roce, %s}\n"
		 "workload: {type: incast, senders: 8, receiver: 0, size: 16MB}\n",
		 transport);
	simtest_run(buf, r);
	assert_int_equal(r->ncompleted, 8);
	assert_int_equal(r->net.drops_buffer + r->net.drops_link, 0);
	assert_int_equal(r->net.lossless_overflow, 0);
	for (size_t i = 0; i < r->nflows; i++)
		assert_int_equal(r->flows[i].rcvd_bytes, 16000000);
	return 8 * 16e6 * 8 / time_to_s(simtest_max_fct(r)) / 100e9;
}

static void test_incast_lossless(void **state)
{
	(void)state;
	struct run_result r;
	double g = incast_goodput("dcqcn: false", &r);
	print_message("PFC only: goodput %.3f of the bottleneck, %llu pauses\n", g,
		      (unsigned long long)r.net.pause_frames);
	assert_true(r.net.pause_frames > 0);
	assert_true(g > 0.95);
	run_result_free(&r);

	g = incast_goodput("preset: hpcc, cnp: paced, cnp_interval: 50us", &r);
	print_message("DCQCN (hpcc, CNP paced 50us): goodput %.3f, %llu pauses, %llu marks\n", g,
		      (unsigned long long)r.net.pause_frames, (unsigned long long)r.net.ecn_marks);
	assert_true(r.net.pause_frames > 0);
	assert_true(g > 0.9);
	run_result_free(&r);

	g = incast_goodput("preset: hpcc", &r);
	print_message("DCQCN (hpcc, CNP on ACK): goodput %.3f, %llu pauses\n", g,
		      (unsigned long long)r.net.pause_frames);
	assert_true(g > 0.75);
	run_result_free(&r);
}

/* Lossy links (1e-4 per packet): every flow completes; go-back-N resends the
 * whole window after each loss, so it retransmits far more than the selective
 * reference transport does for the same losses. */
static void test_go_back_n(void **state)
{
	(void)state;
	const char *yaml = "seed: 3\n"
			   "topology: {type: dumbbell, left: 2, right: 2}\n"
			   "switch: {mode: lossy}\n"
			   "failures: {loss_rate: 1e-4}\n"
			   "transport: {type: %s, rto: 100us}\n"
			   "workload: {type: permutation, size: 32MB, locality: cross_tor}\n";
	char buf[512];
	struct run_result gbn, sel;
	snprintf(buf, sizeof buf, yaml, "roce");
	simtest_run(buf, &gbn);
	snprintf(buf, sizeof buf, yaml, "ref");
	simtest_run(buf, &sel);
	assert_int_equal(gbn.ncompleted, gbn.nflows);
	assert_int_equal(sel.ncompleted, sel.nflows);
	uint64_t rg = 0, rs = 0;
	for (size_t i = 0; i < gbn.nflows; i++) {
		rg += gbn.flows[i].retx_bytes;
		assert_int_equal(gbn.flows[i].rcvd_bytes, 32000000);
	}
	for (size_t i = 0; i < sel.nflows; i++)
		rs += sel.flows[i].retx_bytes;
	print_message("link drops %llu: go-back-N retransmitted %llu B, selective %llu B\n",
		      (unsigned long long)gbn.net.drops_link, (unsigned long long)rg,
		      (unsigned long long)rs);
	assert_true(gbn.net.drops_link > 0);
	assert_true(rg > 4 * rs);
	run_result_free(&gbn);
	run_result_free(&sel);
}

/* Two flows on one 100 Gb/s bottleneck, the second starting at 0.5 ms: with
 * the hpcc preset they share within 20% of equal within 5 ms. */
static void test_fairness(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "/tmp/mpsim_test_roce_%d.csv", (int)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("src,dst,bytes,start\n0,2,200MB,0us\n1,2,200MB,500us\n", f);
	fclose(f);
	char yaml[1024];
	snprintf(yaml, sizeof yaml,
		 "topology: {type: dumbbell, left: 2, right: 1}\n"
		 "switch: {mode: lossless, kmin: 400KB, kmax: 1600KB, pmax: 0.2}\n"
		 "transport: {type: roce, preset: hpcc}\n"
		 "workload: {type: flows_file, file: %s}\n"
		 "stop_time: 6ms\n"
		 "output: {interval: 500us, flow_throughput: true}\n",
		 path);
	struct run_result r;
	simtest_run(yaml, &r);
	remove(path);
	/* the 500 us sample at 5.5 ms (= 5 ms after the second flow started) */
	double g[2] = { 0, 0 };
	for (size_t i = 0; i < r.ts.n; i++) {
		const struct ts_row *row = &r.ts.rows[i];
		if (row->t != 5500 * PS_PER_US)
			continue;
		if (!strcmp(r.ts.names[row->series], "goodput_gbps:flow0"))
			g[0] = row->value;
		if (!strcmp(r.ts.names[row->series], "goodput_gbps:flow1"))
			g[1] = row->value;
	}
	print_message("at 5.5 ms: %.1f and %.1f Gb/s\n", g[0], g[1]);
	double fair = (g[0] + g[1]) / 2;
	assert_true(g[0] + g[1] > 90);
	assert_true(fabs(g[0] - fair) < 0.2 * fair && fabs(g[1] - fair) < 0.2 * fair);
	run_result_free(&r);
}

/* RoCEv2 gets a lossless (PFC) fabric unless the file chooses a mode; Q = 16
 * and 32 queue pairs (UDMP's QP-Scaling baselines) run at line rate too. */
static void test_defaults_and_many_qps(void **state)
{
	(void)state;
	static const char *const files[] = {
		"topology: {type: star, hosts: 2}\ntransport: {type: roce}\n"
		"workload: {type: incast, senders: 1}\n",
		"topology: {type: star, hosts: 2}\nswitch: {mode: lossy}\ntransport: {type: roce}\n"
		"workload: {type: incast, senders: 1}\n",
		"topology: {type: star, hosts: 2}\ntransport: {type: ref}\n"
		"workload: {type: incast, senders: 1}\n",
	};
	static const int want[] = { BUF_LOSSLESS, BUF_LOSSY, BUF_LOSSY };
	for (int i = 0; i < 3; i++) {
		struct experiment x;
		struct mp_err e = { 0 };
		assert_int_equal(exp_load_string(&x, files[i], "t.yaml", &e), 0);
		assert_int_equal(x.sw.mode, want[i]);
		exp_free(&x);
	}
	for (int q = 16; q <= 32; q += 16) {
		char yaml[400];
		snprintf(
		    yaml, sizeof yaml,
		    "topology: {type: dumbbell, host_rate: 100Gbps, bottleneck_rate: 100Gbps}\n"
		    "transport: {type: roce, preset: hpcc, qps: %d}\n"
		    "workload: {type: incast, senders: 1, receiver: 1, size: 16MB}\n",
		    q);
		struct run_result r;
		simtest_run(yaml, &r);
		assert_int_equal(r.ncompleted, 1);
		print_message("%d QPs: slowdown %.4f\n", q, r.flows[0].slowdown);
		assert_true(r.flows[0].slowdown < 1.02);
		run_result_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_rate),
		cmocka_unit_test(test_incast_lossless),
		cmocka_unit_test(test_go_back_n),
		cmocka_unit_test(test_fairness),
		cmocka_unit_test(test_defaults_and_many_qps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

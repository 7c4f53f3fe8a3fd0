/* test_hpcc.c - HPCC (src/transport/hpcc.c): the window from the most
 * utilised hop of a hand-built INT record (Algorithm 1 of Li et al., "HPCC:
 * High Precision Congestion Control", SIGCOMM 2019), the fast reaction that
 * leaves the reference alone, and a 16 -> 1 incast where the switches' INT
 * keeps the queue near empty and the link near eta. */
#include "simtest.h"

#include <math.h>

#include "core/time.h"
#include "transport/conn.h"
#include "transport/hpcc.h"

/* 100 Gb/s NIC, T = 10 us: W_init = 125,000 B; eta 0.95, W_AI/T 40 Mb/s. */
static const struct hpcc_consts K = {
	.eta = 0.95,
	.max_stage = 5,
	.rai = 40e6,
	.min_rate = 1e9,
	.line = 100e9,
	.t = 10 * PS_PER_US,
	.w_init = 125000,
};

/* Two hops, the previous ACK's record at t = 0 (hop 1 had 20,000 B queued).
 * This ACK: hop 0 sent 50,000 B in 5 us (80 Gb/s), no queue: u = 0.8;
 * hop 1 sent 25,000 B in 2 us (100 Gb/s), queue now 50,000 B:
 * u = 1 + min(50,000, 20,000) / (100 Gb/s x 10 us = 125,000 B) = 1.16.
 * U' = 1.16 (hop 1), tau = 2 us: U = (1 x 8 + 1.16 x 2) / 10 = 1.032;
 * U / eta = 1.0863 >= 1: rate = 100 Gb/s x 0.95 / 1.032 + 40 Mb/s
 * = 92.0942636 Gb/s, the window 125,000 x 0.920942636 = 115,117.8 B. Had
 * the least utilised hop been taken, U = 0.96 and the rate 99.0 Gb/s. */
static void test_int_window(void **state)
{
	(void)state;
	struct hpcc_cc cc = { .u = 1, .rc = 100e9, .nhop = 2 };
	cc.hop[0] = (struct pkt_int_hop){ 0, 0, 0, 100000000000ull };
	cc.hop[1] = (struct pkt_int_hop){ 0, 0, 20000, 100000000000ull };
	struct pkt_int in = { .nhop = 2 };
	in.hop[0] = (struct pkt_int_hop){ 5 * PS_PER_US, 50000, 0, 100000000000ull };
	in.hop[1] = (struct pkt_int_hop){ 2 * PS_PER_US, 25000, 50000, 100000000000ull };
	double rate = hpcc_react(&K, &cc, &in, true);
	double want = 100e9 * 0.95 / 1.032 + 40e6;
	print_message("rate %.6f Gb/s (hand: %.6f), U %.6f\n", rate / 1e9, want / 1e9, cc.u);
	assert_true(fabs(cc.u - 1.032) < 1e-12);
	assert_true(fabs(rate - want) < 1);
	assert_true(fabs(rate * 10e-6 / 8 - 115117.829) < 0.01); /* W = rate x T, bytes */
	assert_true(fabs(cc.rc - rate) < 1e-6);			 /* a full update moves W_c */
	assert_int_equal(cc.inc_stage, 0);
	assert_true(cc.hop[1].qlen == 50000 && cc.hop[0].ts == 5 * PS_PER_US); /* stored */

	/* A fast reaction 10 us later: hop 0 sent 50,000 B more (40 Gb/s), no
	 * queue: u = 0.4; hop 1 sent nothing and its queue drained: u = 0.
	 * tau = T: U = 0.4 replaces the EWMA, below eta with inc_stage 0 < 5:
	 * W = W_c + W_AI; the reference and the stage stay. */
	struct pkt_int idle = in;
	idle.hop[0].ts += 10 * PS_PER_US;
	idle.hop[0].tx_bytes += 50000;
	idle.hop[1].ts += 10 * PS_PER_US;
	idle.hop[1].qlen = 0;
	double fast = hpcc_react(&K, &cc, &idle, false);
	assert_true(fabs(cc.u - 0.4) < 1e-12);
	assert_true(fabs(fast - (rate + 40e6)) < 1);
	assert_true(fabs(cc.rc - rate) < 1e-6);
	assert_int_equal(cc.inc_stage, 0);
}

/* 16 -> 1 incast of 8 MB flows on one 100 Gb/s switch (T = 4.2 us). They
 * start at line rate (16 BDPs in the queue); then HPCC holds the most
 * utilised hop, the receiver's link, at eta: from 1 ms to the first
 * completion the sampled queue averages under two packets (2,000 B, 4% of
 * the 52 KB BDP) and the
 * flows together carry 0.93-0.97 of the link (eta = 0.95 plus W_AI per
 * flow). Lossless, no ECN mark (HPCC reads INT only), no retransmission. */
static void test_incast_near_eta(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run("seed: 1\n"
		    "topology: {type: star, hosts: 17, link_rate: 100Gbps, link_delay: 1us}\n"
		    "transport: {type: hpcc, mtu: 1000B}\n"
		    "workload: {type: incast, senders: 16, receiver: 16, size: 8MB}\n"
		    "output: {interval: 10us, flow_throughput: true, queues: [max:last_hop]}\n",
		    &r);
	assert_int_equal(r.ncompleted, 16);
	simtime_t first = SIMTIME_MAX;
	for (size_t i = 0; i < r.nflows; i++)
		if (r.flows[i].fct < first)
			first = r.flows[i].fct;
	double q = 0, gput = 0;
	unsigned nq = 0, ng = 0;
	for (size_t i = 0; i < r.ts.n; i++) {
		const struct ts_row *row = &r.ts.rows[i];
		if (row->t <= 1000 * PS_PER_US || row->t > first)
			continue;
		const char *name = r.ts.names[row->series];
		if (!strncmp(name, "goodput_gbps:", 13)) {
			gput += row->value;
			ng++;
		} else if (strstr(name, "last_hop")) {
			q += row->value;
			nq++;
		}
	}
	assert_true(nq > 0 && ng > 0);
	unsigned samples = ng / 16;
	double util = gput / samples / 100, mean_q = q / nq;
	print_message("1 ms - %.0f us: link %.4f, mean queue %.0f B\n", (double)first / PS_PER_US,
		      util, mean_q);
	assert_true(util > 0.93 && util < 0.97);
	assert_true(mean_q < 2000);
	assert_int_equal(r.net.ecn_marks, 0);
	assert_int_equal(r.net.drops_buffer + r.net.drops_link, 0);
	for (size_t i = 0; i < r.nflows; i++)
		assert_int_equal(r.flows[i].retx_bytes, 0);
	run_result_free(&r);
}

/* What the switches stamp (net/port.c, int_stamp), read back from the
 * record the last ACK left at each sender. A leaf-spine of 2 leaves, 4
 * hosts each, hosts at 100 Gb/s, leaf-spine links at 400 Gb/s, 1 us links.
 * Host 0 -> host 4 crosses leaf, spine, leaf: 3 hops with the rates 400,
 * 400 and 100 Gb/s, each stamped at least a link delay plus a 4,000 B
 * serialisation after the one before. Host 1 -> host 2 stays under its
 * leaf: 1 hop. The last ACK answers each flow's last packet: the receiver's
 * egress had sent the 249 packets before it (996,000 B, nothing else goes
 * that way) and had nothing left queued behind it. */
static void test_int_stamps(void **state)
{
	(void)state;
	char path[256];
	simtest_temp_file(path, sizeof path, "hpcc",
			  "src,dst,bytes,start\n0,4,1MB,0us\n1,2,1MB,0us\n");
	char yaml[1024];
	snprintf(yaml, sizeof yaml,
		 "topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 2, spines: 2, "
		 "host_rate: 100Gbps, fabric_rate: 400Gbps}\n"
		 "transport: {type: hpcc}\n"
		 "workload: {type: flows_file, file: %s}\n",
		 path);
	struct experiment x;
	struct sim s;
	simtest_open(yaml, &x, &s);
	remove(path);
	assert_int_equal(s.w.nconns, 2);
	for (uint32_t i = 0; i < 2; i++) {
		const struct conn *c = s.w.conns[i];
		const struct hpcc_cc *cc = hpcc_conn_cc(c);
		bool cross = c->dst_hid == 4;
		assert_int_equal(cc->nhop, cross ? 3 : 1);
		const struct pkt_int_hop *last = &cc->hop[cc->nhop - 1];
		assert_int_equal(last->rate_bps, 100000000000ull);
		assert_int_equal(last->tx_bytes, 249 * 4000);
		assert_int_equal(last->qlen, 0);
		for (uint32_t k = 0; k + 1 < cc->nhop; k++) {
			assert_int_equal(cc->hop[k].rate_bps, 400000000000ull);
			/* 1 us of wire and 4,000 B at 400 Gb/s (80 ns) at least */
			assert_true(cc->hop[k + 1].ts - cc->hop[k].ts >= 1080 * PS_PER_NS);
		}
	}
	simtest_close(&x, &s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int_window),
		cmocka_unit_test(test_incast_near_eta),
		cmocka_unit_test(test_int_stamps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

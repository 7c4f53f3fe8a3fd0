/* test_dctcp.c - DCTCP (src/transport/dctcp.c): alpha after a known
 * marking sequence and one cut per window (RFC 8257 section 3.3, g = 1/16),
 * and a 2-flow dumbbell where the queue oscillates around the marking
 * threshold K with the bottleneck fully used (Alizadeh et al., "Data Center
 * TCP (DCTCP)", SIGCOMM 2010, section 3 and Fig. 13). */
#include "simtest.h"

#include <math.h>

#include "core/time.h"
#include "transport/dctcp.h"

#define G (1.0 / 16)
#define MSS 1000.0

/* One ACK per packet, PSNs from 0: snd_una after it is `una`. */
static void ack(struct dctcp_cc *cc, uint32_t una, uint32_t nxt, bool ece)
{
	dctcp_on_ack(cc, G, MSS, 1000, ece, una, nxt);
}

/* alpha starts at 1, WindowEnd at 0, cwnd 10 packets, 10 sent.
 * Window 1 (the first ACK, una 1 > 0): F = 1, alpha = 15/16 + 1/16 = 1;
 *   it is marked: cwnd 10,000 x (1 - 1/2) = 5,000, once (recover = 10).
 * Window 2 (una 2..11; WindowEnd 10): 5 of 10 ACKs marked, F = 0.5,
 *   alpha = 15/16 + 0.5/16 = 0.96875; no cut (still the cut's window),
 *   the 5 unmarked ACKs grow cwnd by MSS^2 / cwnd each (ssthresh 5,000).
 * Window 3 (una 12..16; WindowEnd 15): no mark, alpha = 0.96875 x 15/16
 *   = 0.908203125.
 * Then a marked ACK (una 17 > recover): cwnd x (1 - 0.908203125 / 2), and a
 * second marked ACK in the same window cuts nothing. */
static void test_alpha_sequence(void **state)
{
	(void)state;
	struct dctcp_cc cc = { .cwnd = 10 * MSS, .ssthresh = INFINITY, .alpha = 1 };
	ack(&cc, 1, 10, true);
	assert_true(cc.alpha == 1.0);
	assert_true(cc.cwnd == 5000 && cc.ssthresh == 5000);
	double w = 5000;
	for (uint32_t una = 2; una <= 11; una++) {
		bool marked = una <= 6;
		ack(&cc, una, una == 11 ? 15 : 10 + una, marked);
		if (!marked && una < 11)
			w += MSS * MSS / w;
	}
	print_message("after window 2: alpha %.9f cwnd %.3f\n", cc.alpha, cc.cwnd);
	assert_true(fabs(cc.alpha - 0.96875) < 1e-15);
	w += MSS * MSS / w; /* una 11 (unmarked) closed the window */
	assert_true(fabs(cc.cwnd - w) < 1e-9);
	for (uint32_t una = 12; una <= 16; una++) {
		ack(&cc, una, 20, false);
		w += MSS * MSS / w;
	}
	assert_true(fabs(cc.alpha - 0.908203125) < 1e-15);
	ack(&cc, 17, 21, true);
	assert_true(fabs(cc.cwnd - w * (1 - 0.908203125 / 2)) < 1e-9);
	double cut = cc.cwnd;
	ack(&cc, 18, 22, true);
	assert_true(cc.cwnd == cut); /* at most one cut per window */
}

/* RFC 5681 section 3.1: nothing beyond SND.UNA + cwnd, so a window of
 * 1.9 MSS lets one full packet fly and 2.99 MSS two; never fewer than one.
 * (It used to round up: 2 and 3.) */
static void test_window_whole_packets(void **state)
{
	(void)state;
	assert_int_equal(dctcp_wnd_packets(1.9 * MSS, MSS), 1);
	assert_int_equal(dctcp_wnd_packets(2.99 * MSS, MSS), 2);
	assert_int_equal(dctcp_wnd_packets(10 * MSS, MSS), 10);
	assert_int_equal(dctcp_wnd_packets(0.3 * MSS, MSS), 1);
	/* (0.7 + 0.1) x 10 is 7.999999999999999 in doubles: still 8 packets */
	assert_int_equal(dctcp_wnd_packets((0.7 + 0.1) * 10 * MSS, MSS), 8);
}

/* Two 50 MB flows through one 100 Gb/s bottleneck marked at K = 30 KB
 * (step: kmin = kmax = 30 KB, pmax 1), 1,500 B packets. DCTCP holds the
 * queue at K: sampled every 10 us from 0.5 to 3.5 ms it averages within
 * 20% of K and never empties (so the link never idles), and the two carry
 * more than 99% of the link. No loss, no retransmission. */
static void test_dumbbell_queue_at_k(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run("seed: 1\n"
		    "topology: {type: dumbbell, left: 2, right: 1}\n"
		    "switch: {kmin: 30KB, kmax: 30KB, pmax: 1}\n"
		    "transport: {type: dctcp, mtu: 1500B}\n"
		    "workload: {type: incast, senders: 2, receiver: 2, size: 50MB}\n"
		    "output: {interval: 10us, flow_throughput: true, queues: [max:all]}\n",
		    &r);
	assert_int_equal(r.ncompleted, 2);
	double q = 0, qmin = 1e18, gput = 0;
	unsigned nq = 0, ng = 0;
	for (size_t i = 0; i < r.ts.n; i++) {
		const struct ts_row *row = &r.ts.rows[i];
		if (row->t <= 500 * PS_PER_US || row->t > 3500 * PS_PER_US)
			continue;
		const char *name = r.ts.names[row->series];
		if (!strncmp(name, "goodput_gbps:", 13)) {
			gput += row->value;
			ng++;
		} else if (strstr(name, "max:all")) {
			q += row->value;
			qmin = row->value < qmin ? row->value : qmin;
			nq++;
		}
	}
	assert_true(nq > 0 && ng > 0);
	double mean_q = q / nq, util = gput / (ng / 2) / 100;
	print_message("0.5-3.5 ms: queue mean %.0f B (min %.0f), link %.4f, %llu marks\n", mean_q,
		      qmin, util, (unsigned long long)r.net.ecn_marks);
	assert_true(fabs(mean_q - 30000) < 0.2 * 30000);
	assert_true(qmin > 0);
	assert_true(util > 0.99);
	assert_int_equal(r.net.drops_buffer + r.net.drops_link, 0);
	for (size_t i = 0; i < r.nflows; i++)
		assert_int_equal(r.flows[i].retx_bytes, 0);
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alpha_sequence),
		cmocka_unit_test(test_window_whole_packets),
		cmocka_unit_test(test_dumbbell_queue_at_k),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

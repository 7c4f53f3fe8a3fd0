/* test_fairness.c - equal flows into one bottleneck end together, for every
 * transport in the registry (transport_registry: a new protocol is covered
 * without touching this file).
 *
 * The scenario is a 16 -> 1 incast of 8 MB flows on one switch (a star of 17
 * hosts, 100 Gb/s, 1 us links), 1 KB packets, ECN marked as the UDMP paper
 * (Huang et al., "UDMP: Unified Delay-Driven Multipath Protocol for AI
 * Clusters", IEEE/ACM ToN 2025, section V-B, Fig. 6b) sets it for every system:
 * a step at 36 packets (Kmin = Kmax = 36 KB, Pmax 1). Two measures:
 *   - Jain's index (sum x)^2 / (n sum x^2) of the flows' goodputs over the
 *     middle of the run, from 10% to 90% of the first completion (all 16
 *     running, start-up and the first departure left out): >= 0.95. One flow
 *     at twice the rate of the 15 others gives (17)^2 / (16 x 19) = 0.951,
 *     so the bound rejects a flow holding twice its share, and nothing fairer.
 *   - The last FCT over the first: <= 1.5. The link is busy throughout, so
 *     the last flow ends at about 16 x 8 MB / 100 Gb/s whatever the shares,
 *     and the ratio is the first flow's rate over its life in units of the
 *     fair share: 1.5 lets the first flow take half as much again as the
 *     others, for a while (UDMP's delay gradient settles within 1.43 here;
 *     the others within 1.08).
 *
 * MP-RDMA is the exception, kept as its authors built it: under this step
 * marker its flows lock into two groups (15 in step with each other and one
 * apart; 0.65 and 3.5), see test_mprdma_step_marking. Its fairness is checked
 * under a RED ramp with the same midpoint (Kmin 18 KB, Kmax 54 KB, Pmax 1),
 * where its per-ACK rules converge as AIMD does. */
#include "simtest.h"

#include "core/time.h"
#include "transport/transport.h"

#define SENDERS 16
#define STEP "{kmin: 36KB, kmax: 36KB, pmax: 1}"
#define RAMP "{kmin: 18KB, kmax: 54KB, pmax: 1}"

struct fairness {
	double jain;	  /* of goodputs over the middle of the run */
	double fct_ratio; /* last FCT / first FCT */
};

static void incast(const char *transport, const char *sw, struct fairness *out)
{
	char yaml[1024];
	snprintf(yaml, sizeof yaml,
		 "seed: 1\n"
		 "topology: {type: star, hosts: %d, link_rate: 100Gbps, link_delay: 1us}\n"
		 "switch: %s\n"
		 "transport: {type: %s, mtu: 1000B}\n"
		 "workload: {type: incast, senders: %d, receiver: %d, size: 8MB}\n"
		 "output: {interval: 10us, flow_throughput: true}\n",
		 SENDERS + 1, sw, transport, SENDERS, SENDERS);
	struct run_result r;
	simtest_run(yaml, &r);
	assert_int_equal(r.ncompleted, SENDERS);
	simtime_t first = SIMTIME_MAX, last = 0;
	for (size_t i = 0; i < r.nflows; i++) {
		if (r.flows[i].fct < first)
			first = r.flows[i].fct;
		if (r.flows[i].fct > last)
			last = r.flows[i].fct;
	}
	simtime_t from = first / 10, to = first - first / 10;
	double x[SENDERS] = { 0 }, sum = 0, sq = 0;
	for (unsigned f = 0; f < SENDERS; f++) {
		char name[64];
		snprintf(name, sizeof name, "goodput_gbps:flow%u", f);
		unsigned n = 0;
		for (size_t i = 0; i < r.ts.n; i++) {
			const struct ts_row *row = &r.ts.rows[i];
			if (row->t > from && row->t <= to &&
			    !strcmp(r.ts.names[row->series], name)) {
				x[f] += row->value;
				n++;
			}
		}
		assert_true(n > 0);
		x[f] /= n;
		sum += x[f];
		sq += x[f] * x[f];
	}
	out->jain = sum * sum / (SENDERS * sq);
	out->fct_ratio = (double)last / (double)first;
	print_message(
	    "%-7s %s: Jain %.3f over %.0f-%.0f us, FCT %.0f-%.0f us (last / first %.2f)\n",
	    transport, sw, out->jain, (double)from / PS_PER_US, (double)to / PS_PER_US,
	    (double)first / PS_PER_US, (double)last / PS_PER_US, out->fct_ratio);
	run_result_free(&r);
}

static void test_every_transport(void **state)
{
	(void)state;
	for (const struct transport_ops *const *o = transport_registry; *o; o++) {
		struct fairness f;
		bool mprdma = !strcmp((*o)->name, "mprdma");
		incast((*o)->name, mprdma ? RAMP : STEP, &f);
		assert_true(f.jain >= 0.95);
		assert_true(f.fct_ratio <= 1.5);
	}
}

/* MP-RDMA under the step marker. Its rules are its authors' ([A] in mprdma.c,
 * MpRDMASocketImpl::ReceivedAck: +1/cwnd per unmarked ACK, -1/2 per marked
 * one, in every state; slow start until the first mark): per RTT a flow of w
 * packets whose ACKs are marked with probability p gains 1 - p and loses
 * w p / 2, so it settles at w = 2 (1 - p) / p. The step marks every packet
 * that leaves while the queue is above 36 KB; all 16 flows leave slow start
 * within 5.5 us, then 15 of them move in step (their packets arrive
 * together, so they meet the queue at its peaks: 40% of their ACKs marked,
 * w = 3) and the one that fell out of step meets it in its troughs (7.5%,
 * w = 25): one flow takes a quarter of the link. Nothing random is left to
 * break the lock (the RED ramp above draws, and converges). Kept, and
 * guarded here, so that a change to the rules revisits this account. */
static void test_mprdma_step_marking(void **state)
{
	(void)state;
	struct fairness f;
	incast("mprdma", STEP, &f);
	assert_true(f.jain < 0.95);
	assert_true(f.fct_ratio > 1.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_transport),
		cmocka_unit_test(test_mprdma_step_marking),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

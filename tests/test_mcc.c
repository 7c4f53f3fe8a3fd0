/* test_mcc.c - MCC (ccl/mcc.c): the quadrant and the window law by hand, and
 * the two congestion cases of the slides on an 8-spine leaf-spine with
 * switch adaptive routing and PFC: partial (one of 8 paths at a quarter rate
 * where the sending leaf's AR sees it; and, harder, downstream of it) and
 * global (every
 * spine's link into the receivers' leaf slowed so the path set carries
 * 100 Gb/s for 4 senders of 100 Gb/s: the load of a 4 -> 1 incast). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "simtest.h"
#include "ccl/mcc.h"

static void test_quadrant(void **state)
{
	(void)state;
	assert_int_equal(mcc_classify(10, 20, 5, 8), MCC_NONE);
	assert_int_equal(mcc_classify(10, 20, 9, 8), MCC_PARTIAL);
	assert_int_equal(mcc_classify(21, 20, 5, 8), MCC_GLOBAL);
	assert_int_equal(mcc_classify(21, 20, 9, 8), MCC_GLOBAL);
	struct mcc_params p = { .min_window = 1, .max_window = 64, .ai = 1, .md = 0.5 };
	assert_true(fabs(mcc_window(&p, 4, MCC_NONE, true, false) - 4.25) < 1e-12);
	assert_true(fabs(mcc_window(&p, 4, MCC_PARTIAL, true, false) - 4) < 1e-12);
	assert_true(fabs(mcc_window(&p, 4, MCC_PARTIAL, true, true) - 4.25) < 1e-12);
	assert_true(fabs(mcc_window(&p, 4, MCC_GLOBAL, true, false) - 2) < 1e-12);
	assert_true(fabs(mcc_window(&p, 4, MCC_GLOBAL, false, false) - 4) < 1e-12);
	assert_true(fabs(mcc_window(&p, 1.5, MCC_GLOBAL, true, false) - 1) < 1e-12);
	p.partial = MCC_PARTIAL_CUT;
	assert_true(fabs(mcc_window(&p, 4, MCC_PARTIAL, true, true) - 2) < 1e-12);
}

#define FABRIC                                                                                 \
	"topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 2, spines: 8, host_rate: "    \
	"100Gbps, fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}\n"                 \
	"switch: {buffer: 32MB, mode: lossless, kmin: 400KB, kmax: 1600KB, pmax: 0.2}\n"       \
	"lb: {type: ar}\n"                                                                     \
	"collective: {type: alltoall, size: 16MB, ranks: 2, jobs: 4, placement: list, hosts: " \
	"[0, 4, 1, 5, 2, 6, 3, 7]}\n"
#define ROCE "{type: roce, mtu: 1048B, header: 48B, preset: hpcc, reorder_buffer: 4096"

struct out {
	double busbw;	       /* mean over the jobs, Gb/s */
	uint64_t marks, drops; /* ECN marks, drops of any kind */
	uint64_t max_queue;    /* bytes, any switch port */
	double wmin, wmean;    /* MCC's window over its decisions, chunks */
	uint64_t n[3];	       /* MCC's decisions by quadrant */
};

static void run(const char *events, const char *transport, const char *ccl, struct out *o)
{
	char yaml[4096];
	snprintf(yaml, sizeof yaml, "name: t\n%sevents: [%s]\ntransport: %s}\nccl: %s\n", FABRIC,
		 events, transport, ccl);
	struct run_result r;
	simtest_run(yaml, &r);
	memset(o, 0, sizeof *o);
	assert_int_equal(r.ncolls, 4);
	for (size_t i = 0; i < r.ncolls; i++) {
		assert_true(r.colls[i].completed);
		o->busbw += r.colls[i].busbw / 1e9 / (double)r.ncolls;
	}
	o->marks = r.net.ecn_marks;
	o->drops = r.net.drops_buffer + r.net.drops_link + r.net.drops_no_route;
	o->max_queue = r.net.max_queue_bytes;
	o->wmin = 1e9;
	if (r.qp_trace) { /* time,job,src,dst,window,...,quadrant */
		uint32_t rows = 0;
		for (char *line = strchr(r.qp_trace, '\n'); line && line[1];
		     line = strchr(line + 1, '\n')) {
			double t, w;
			unsigned job, src, dst;
			if (sscanf(line + 1, "%lf,%u,%u,%u,%lf", &t, &job, &src, &dst, &w) != 5)
				continue;
			o->wmin = fmin(o->wmin, w);
			o->wmean += w;
			rows++;
			char *end = strchr(line + 1, '\n'), *q = end;
			while (q > line && q[-1] != ',')
				q--;
			o->n[*q == 'n' ? 0 : *q == 'p' ? 1 : 2]++;
		}
		o->wmean /= rows ? rows : 1;
	}
	run_result_free(&r);
}

/* Partial congestion that AR can absorb (the slides' premise): one of the 8
 * paths slowed where the sending leaf's AR sees it, each leaf's uplink to
 * spine3 at 25 Gb/s (one way: spine3's downlinks stay at 100 Gb/s). The path
 * set carries 7 x 100 + 25 = 725 Gb/s for 4 senders, more than their NICs'
 * 400, so each sender's capacity is its NIC: 100 Gb/s of wire, 95.4 Gb/s of
 * 1000 B payloads in 1048 B packets. */
#define UPLINK                                                                        \
	"{at: 0us, link: leaf0-spine3, one_way: true, action: rate, value: 25Gbps}, " \
	"{at: 0us, link: leaf1-spine3, one_way: true, action: rate, value: 25Gbps}"

static void test_partial(void **state)
{
	(void)state;
	struct out mcc, dcqcn, pfc;
	run(UPLINK, ROCE ", dcqcn: false", "{type: mcc, trace: true}", &mcc);
	run(UPLINK, ROCE, "{type: stripe}", &dcqcn);
	run(UPLINK, ROCE ", dcqcn: false", "{type: stripe}", &pfc);
	double paths = 7 * 100.0 + 25, per_sender = fmin(100.0, paths / 4);
	double capacity = per_sender * 1000 / 1048; /* payload, Gb/s */
	print_message("partial (uplink): busbw mcc %.1f, dcqcn %.1f (%llu marks), pfc only %.1f "
		      "Gb/s of %.1f; mcc decisions none %llu partial %llu global %llu, window min "
		      "%.2f mean %.2f (init 3.33)\n",
		      mcc.busbw, dcqcn.busbw, (unsigned long long)dcqcn.marks, pfc.busbw, capacity,
		      (unsigned long long)mcc.n[0], (unsigned long long)mcc.n[1],
		      (unsigned long long)mcc.n[2], mcc.wmin, mcc.wmean);
	/* the window never shrinks: no decision cuts, the smallest is the first */
	assert_int_equal(mcc.n[2], 0);
	assert_true(fabs(mcc.wmin - 10.0 / 3) < 1e-3); /* init: BDP 2.33 chunks + 1, printed */
	assert_true(mcc.busbw >= 0.9 * capacity);
	/* DCQCN does not drop here: AR keeps every queue under kmin, so no packet
	 * is marked and DCQCN runs exactly as PFC alone (one would expect a
	 * drop; experiments/mcc/README.md says why it does not come) */
	assert_int_equal(dcqcn.marks, 0);
	assert_true(fabs(dcqcn.busbw - pfc.busbw) < 1e-9);
	assert_true(dcqcn.busbw >= 0.9 * capacity);
	assert_int_equal(mcc.drops + dcqcn.drops + pfc.drops, 0);
}

/* The harder case, kept: one spine's links to leaf1 and back at 25 Gb/s.
 * Toward leaf1 the slow link is downstream of leaf0's AR, which sees it only
 * once PFC pauses leaf0's port to spine3 (dynamic XOFF near 4 MB here, never
 * reached): every sender keeps an eighth of its packets on spine3, and a
 * sprayed stream delivered in order moves at 8 x its share of the slow link,
 * 8 x 25 / 4 = 50 Gb/s. What MCC calls global is then the pipe as AR uses
 * it. Asserted: MCC over 1.1x DCQCN and PFC alone, no drops. */
#define HOT "{at: 0us, link: spine3-leaf1, action: rate, value: 25Gbps}"

static void test_downstream(void **state)
{
	(void)state;
	struct out mcc, dcqcn, pfc;
	run(HOT, ROCE ", dcqcn: false", "{type: mcc, trace: true}", &mcc);
	run(HOT, ROCE, "{type: stripe}", &dcqcn);
	run(HOT, ROCE ", dcqcn: false", "{type: stripe}", &pfc);
	print_message("downstream: busbw mcc %.1f, dcqcn %.1f (%llu marks), pfc only %.1f Gb/s; "
		      "mcc decisions none %llu partial %llu global %llu, window min %.2f mean "
		      "%.2f\n",
		      mcc.busbw, dcqcn.busbw, (unsigned long long)dcqcn.marks, pfc.busbw,
		      (unsigned long long)mcc.n[0], (unsigned long long)mcc.n[1],
		      (unsigned long long)mcc.n[2], mcc.wmin, mcc.wmean);
	assert_true(mcc.n[1] > 0);		    /* the quadrant saw partial congestion */
	assert_true(dcqcn.marks > 0);		    /* DCQCN heard of the hot spine */
	assert_true(mcc.busbw > 1.1 * dcqcn.busbw); /* and cut all of its paths for it */
	assert_true(mcc.busbw > 1.1 * pfc.busbw);
	assert_int_equal(mcc.drops + dcqcn.drops + pfc.drops, 0);
}

/* Every spine's link into leaf1 (and back) at 12.5 Gb/s: the path set
 * carries 100 Gb/s for 4 senders each way. MCC's windows fall to the floor,
 * one chunk, so the fabric holds at most 4 senders x 1 chunk (256 KiB) per
 * direction beyond what the wires carry; PFC alone fills the buffer to its
 * XOFF thresholds. Lossless: nothing is dropped. */
static void test_global(void **state)
{
	(void)state;
	char ev[1024] = "";
	for (int i = 0; i < 8; i++)
		snprintf(ev + strlen(ev), sizeof ev - strlen(ev),
			 "%s{at: 0us, link: spine%d-leaf1, action: rate, value: 12.5Gbps}",
			 i ? ", " : "", i);
	struct out mcc, pfc;
	run(ev, ROCE ", dcqcn: false", "{type: mcc, trace: true}", &mcc);
	run(ev, ROCE ", dcqcn: false", "{type: stripe}", &pfc);
	print_message("global: mcc window min %.2f mean %.2f (init 3.33), decisions global %llu of "
		      "%llu, max queue %.1f KB (pfc only %.1f KB), busbw %.1f (pfc only %.1f)\n",
		      mcc.wmin, mcc.wmean, (unsigned long long)mcc.n[2],
		      (unsigned long long)(mcc.n[0] + mcc.n[1] + mcc.n[2]), mcc.max_queue / 1e3,
		      pfc.max_queue / 1e3, mcc.busbw, pfc.busbw);
	assert_true(mcc.wmin <= 1.0 + 1e-9);
	assert_true(mcc.wmean < 2);
	assert_true(mcc.n[2] > mcc.n[0] + mcc.n[1]);
	assert_true(mcc.max_queue <= 4 * 65536);
	assert_true(pfc.max_queue > 10 * mcc.max_queue);
	assert_int_equal(mcc.drops, 0);
	assert_true(mcc.busbw > 0.85 * pfc.busbw); /* bounded queue, not lost throughput */
	/* the window as a time series (output.traces: ccl_window:chN, one per
	 * channel): every channel's, falling to the 1-chunk floor */
	char yaml[4096];
	snprintf(yaml, sizeof yaml,
		 "name: t\n%sevents: [%s]\ntransport: %s}\nccl: {type: mcc}\n"
		 "output: {interval: 20us, traces: true}\n",
		 FABRIC, ev, ROCE ", dcqcn: false");
	struct run_result r;
	simtest_run(yaml, &r);
	uint32_t nser = 0;
	double wlo = 1e9;
	for (uint32_t k = 0; k < r.ts.nnames; k++)
		nser += !strncmp(r.ts.names[k], "ccl_window:ch", 13);
	for (size_t i = 0; i < r.ts.n; i++)
		if (!strncmp(r.ts.names[r.ts.rows[i].series], "ccl_window:ch", 13))
			wlo = fmin(wlo, r.ts.rows[i].value);
	print_message("global: %u ccl_window series, smallest sample %.2f chunks\n", nser, wlo);
	assert_int_equal(nser, 8); /* 4 jobs x 2 ranks x 2 directions */
	assert_true(wlo <= 1.0 + 1e-9);
	run_result_free(&r);
}

/* Several queue pairs per connection on an idle fabric: the NIC serves them in
 * turn, so a chunk shares the wire with the chunks posted after it on the
 * other pairs; that is not congestion, and no decision may call it global
 * (it did, 192 of 984 decisions, when the target counted only what the
 * channel had outstanding at the chunk's post: 58.4 Gb/s against 89.4). Both
 * keep the line rate: each NIC sends 1000 B of payload per 1048 B packet and
 * also a 64 B ACK per packet it receives (every pair exchanges 8 MB both
 * ways), 100 x 1000 / 1112 = 89.9 Gb/s; over 4 pairs that needs a first
 * window of the BDP plus a chunk per pair (86.5 Gb/s with one chunk: the
 * window's chunks, served round robin, completed together). */
static void test_qps(void **state)
{
	(void)state;
	struct out one, four;
	run("", ROCE ", dcqcn: false", "{type: mcc, trace: true}", &one);
	run("", ROCE ", dcqcn: false", "{type: mcc, qps: 4, trace: true}", &four);
	print_message("idle, 4 qps: busbw %.1f (1 qp: %.1f) Gb/s; decisions none %llu partial %llu "
		      "global %llu, window min %.2f mean %.2f\n",
		      four.busbw, one.busbw, (unsigned long long)four.n[0],
		      (unsigned long long)four.n[1], (unsigned long long)four.n[2], four.wmin,
		      four.wmean);
	assert_int_equal(one.n[2], 0);
	assert_int_equal(four.n[2], 0);
	double line = 100.0 * 1000 / (1048 + 64); /* Gb/s of payload, ACKs beside the data */
	assert_true(one.busbw >= 0.99 * line);	  /* measured 89.40 */
	assert_true(four.busbw >= 0.99 * line);	  /* measured 89.35; 86.5, then 58.4 before */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quadrant),   cmocka_unit_test(test_partial),
		cmocka_unit_test(test_downstream), cmocka_unit_test(test_global),
		cmocka_unit_test(test_qps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_roce.c - RoCEv2 (src/transport/roce.c) against properties its papers
 * and the InfiniBand RC semantics fix: line rate alone, PFC keeping an incast
 * lossless, go-back-N paying for every loss, DCQCN sharing a bottleneck, the
 * reorder buffer removing go-back-N's cost under per-packet spraying. */
#include "simtest.h"

#include <math.h>

#include "core/time.h"
#include "net/switch.h"
#include "transport/conn.h"
#include "transport/tp_world.h"

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
	/* a queue pair keeps at most two timer events pending (tp_timer_set):
	 * 76 events at most here, packets on the wires included; when every
	 * deadline set after a timer fired pushed an event of its own, RTO
	 * deadlines (67 ms ahead) piled up behind the pacing ones: 171 */
	assert_true(r.events_peak_pending < 100);
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
	simtest_temp_file(path, sizeof path, "roce",
			  "src,dst,bytes,start\n0,2,200MB,0us\n1,2,200MB,500us\n");
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
	double g[2] = { simtest_series_at(&r, "goodput_gbps:flow0", 5500 * PS_PER_US),
			simtest_series_at(&r, "goodput_gbps:flow1", 5500 * PS_PER_US) };
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

/* ---- a stream connection: DCQCN carried from one message to the next -------- */
#define B2B_SAMPLES 4096
struct b2b {
	struct sim s;
	struct experiment x;
	struct conn *c, *fresh;	  /* stream h0 -> h2; a fresh stream h1 -> h2 */
	simtime_t post[4], tx[4]; /* 0, 1, 3: c's messages; 2: fresh's */
	uint64_t bytes2;	  /* the second message's size */
	simtime_t tick;		  /* sampling: c's bytes sent every tick */
	uint32_t nsamples;
	uint64_t sent[B2B_SAMPLES];
};

static void b2b_post(void *obj, uint64_t arg)
{
	struct b2b *r = obj;
	struct conn *c = arg == 2 ? r->fresh : r->c;
	r->post[arg] = r->s.q.now;
	tp_post(c, r->bytes2, (uint32_t)arg);
}

static void b2b_msg(void *ctx, struct conn *c, uint32_t tag, bool rx)
{
	struct b2b *r = ctx;
	if (rx || (c != r->c && c != r->fresh))
		return;
	r->tx[tag] = r->s.q.now;
	/* the next message as soon as the first is acknowledged (posts are
	 * deferred to an event, as the collective layer does) */
	if (c == r->c && tag == 0)
		evq_at(&r->s.q, &r->s.evs, r->s.q.now, b2b_post, r, 1);
	/* and one more after the QP was idle for 60 ms */
	if (c == r->c && tag == 1)
		evq_at(&r->s.q, &r->s.evs, r->s.q.now + 60000 * PS_PER_US, b2b_post, r, 3);
}

static void b2b_sample(void *obj, uint64_t arg)
{
	struct b2b *r = obj;
	(void)arg;
	r->sent[r->nsamples++] = r->c->sent_bytes;
	if (r->nsamples < B2B_SAMPLES)
		evq_at(&r->s.q, &r->s.evs, r->s.q.now + r->tick, b2b_sample, r, 0);
}

/* When c's NIC had sent `bytes` (the first sample that saw them). */
static simtime_t b2b_sent_at(const struct b2b *r, uint64_t bytes)
{
	for (uint32_t i = 0; i < r->nsamples; i++)
		if (r->sent[i] >= bytes)
			return i * r->tick;
	fail();
	return 0;
}

/* Two back-to-back messages on one RoCEv2 stream connection under DCQCN (the
 * hpcc preset, CNPs on ACKs). The first, 5 MB, shares the 100 Gb/s
 * bottleneck with a 4 MB flow from another host for most of its life, so
 * DCQCN has cut its rate; the second, 1 MB, is posted the moment the first is
 * acknowledged, on a path that is empty by then. It must start at the rate
 * the first ended with, not at line rate: its send rate (bytes put on the
 * wire by the NIC, sampled every microsecond) matches the first message's over
 * its last 50 us and stays well under line rate, while the same message on a
 * fresh connection, later, runs at line rate (its ideal time). A third
 * message, posted after the QP sat idle for 60 ms, runs at line rate again:
 * DCQCN's timers ran through the idle time (roce.c, "Idle"), 200 increase
 * steps of 300 us, enough for the target rate to climb back from the 70s of
 * Gb/s by R_HAI = 200 Mb/s a step (had they stopped, it would run as slowly
 * as the second). */
static void test_stream_keeps_rate(void **state)
{
	(void)state;
	char path[256], yaml[1024];
	simtest_temp_file(path, sizeof path, "roce_b2b", "src,dst,bytes,start\n1,2,4MB,0us\n");
	snprintf(yaml, sizeof yaml,
		 "topology: {type: dumbbell, left: 2, right: 1}\n"
		 "switch: {mode: lossless, kmin: 400KB, kmax: 1600KB, pmax: 0.2}\n"
		 "transport: {type: roce, preset: hpcc}\n"
		 "workload: {type: flows_file, file: %s}\n",
		 path);
	static struct b2b r;
	struct mp_err e = { 0 };
	memset(&r, 0, sizeof r);
	if (exp_load_string(&r.x, yaml, "test.yaml", &e) || sim_build(&r.s, &r.x, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		fail();
	}
	r.s.w.on_msg = b2b_msg;
	r.s.w.ctx = &r;
	r.c = tp_stream_add(&r.s.w, 0, 2, 0);
	r.fresh = tp_stream_add(&r.s.w, 1, 2, 0);
	r.bytes2 = 1000000;
	r.tick = PS_PER_US;
	uint64_t bytes1 = 5000000;
	tp_post(r.c, bytes1, 0);
	evq_at(&r.s.q, &r.s.evs, 0, b2b_sample, &r, 0);
	evq_at(&r.s.q, &r.s.evs, 5000 * PS_PER_US, b2b_post, &r, 2);
	sim_run(&r.s);
	remove(path);
	assert_int_equal(r.c->acked_bytes, bytes1 + 2 * r.bytes2);
	assert_int_equal(r.fresh->acked_bytes, r.bytes2);
	assert_int_equal(r.c->retx_bytes, 0); /* so bytes sent are the payload (header 0) */
	assert_true(r.post[1] == r.tx[0]);
	/* the first message's last 50 us on the wire, and the second's whole */
	simtime_t end1 = b2b_sent_at(&r, bytes1), w = 50 * PS_PER_US;
	double rate1 = (double)(bytes1 - r.sent[(end1 - w) / r.tick]) * 8 / time_to_s(w) / 1e9;
	simtime_t end2 = b2b_sent_at(&r, bytes1 + r.bytes2);
	double rate2 = (double)r.bytes2 * 8 / time_to_s(end2 - r.post[1]) / 1e9;
	simtime_t ideal = tp_ideal_fct(r.c, r.bytes2), fct2 = r.tx[1] - r.post[1],
		  fresh = r.tx[2] - r.post[2], fct3 = r.tx[3] - r.post[3];
	print_message("first message sent at %.1f Gb/s over its last 50 us; the second at %.1f "
		      "Gb/s (acknowledged in %.1f us); on a fresh connection in %.1f us (ideal "
		      "%.1f us); after 60 ms idle in %.1f us\n",
		      rate1, rate2, time_to_us(fct2), time_to_us(fresh), time_to_us(ideal),
		      time_to_us(fct3));
	assert_true(rate1 < 80);
	assert_true(fabs(rate2 - rate1) < 0.1 * rate1);
	assert_true((double)fresh < 1.02 * (double)ideal);
	assert_true((double)fct2 > 1.2 * (double)fresh);
	assert_true(r.post[3] > r.tx[2]);
	assert_true((double)fct3 < 1.02 * (double)ideal);
	sim_free(&r.s);
	exp_free(&r.x);
}

/* A stream connection over lossy links: go-back-N repairs losses across
 * message boundaries (a NAK or timeout sends the QP back into an earlier
 * message while later ones are queued), and every message is delivered once,
 * in posting order, with its exact byte count. */
struct lossy_rec {
	struct conn *c;
	uint32_t nrx, ntx;
	bool order_ok;
};

static void lossy_msg(void *ctx, struct conn *c, uint32_t tag, bool rx)
{
	struct lossy_rec *l = ctx;
	if (c != l->c)
		return;
	if (rx)
		l->order_ok &= tag == l->nrx++;
	else
		l->order_ok &= tag == l->ntx++ && l->ntx <= l->nrx;
}

static void lossy_post(void *obj, uint64_t arg)
{
	struct lossy_rec *l = obj;
	tp_post(l->c, arg, l->c->nmsgs);
}

static void test_stream_lossy(void **state)
{
	(void)state;
	const char *yaml = "seed: 5\n"
			   "topology: {type: dumbbell, left: 2, right: 2}\n"
			   "switch: {mode: lossy}\n"
			   "failures: {loss_rate: 1e-3, host_loss_rate: 1e-3}\n"
			   "transport: {type: roce, preset: hpcc, ack_interval: 3, rto: 100us}\n"
			   "workload: {type: incast, senders: 1, receiver: 3, size: 4KB}\n";
	static const uint64_t sizes[] = { 1, 3000, 1000000, 2500000, 777777, 4000, 1200000 };
	struct experiment x;
	struct sim s;
	struct mp_err e = { 0 };
	struct lossy_rec l = { .order_ok = true };
	if (exp_load_string(&x, yaml, "test.yaml", &e) || sim_build(&s, &x, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		fail();
	}
	s.w.on_msg = lossy_msg;
	s.w.ctx = &l;
	l.c = tp_stream_add(&s.w, 0, 2, 0);
	uint64_t total = 0;
	for (int i = 0; i < 7; i++) {
		evq_at(&s.q, &s.evs, i < 5 ? 0 : 2000 * PS_PER_US, lossy_post, &l, sizes[i]);
		total += sizes[i];
	}
	sim_run(&s);
	print_message("lossy stream: %llu B resent\n", (unsigned long long)l.c->retx_bytes);
	assert_int_equal(l.nrx, 7);
	assert_int_equal(l.ntx, 7);
	assert_true(l.order_ok);
	assert_true(l.c->idle);
	assert_int_equal(l.c->rcvd_bytes, total);
	assert_int_equal(l.c->acked_bytes, total);
	assert_true(l.c->retx_bytes > 0);
	sim_free(&s);
	exp_free(&x);
}

/* The reorder buffer (reorder_buffer) under per-packet load balancing at the
 * switches: a 16-host permutation of 1 MB flows over a non-blocking 4 x 4
 * leaf-spine. Without it, every packet that overtakes another is dropped and
 * NAKed, go-back-N resends the rest and a reordered tail waits for the
 * timeout; with it, nothing is resent and each flow takes about its ideal
 * time. Over ECMP nothing is reordered and the buffer changes nothing. */
static const char *perm_lb_yaml =
    "seed: 1\n"
    "topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 4, spines: 4, host_rate: 100Gbps,"
    " fabric_rate: 100Gbps}\n"
    "switch: {mode: lossless, buffer: 4MB}\n"
    "transport: {type: roce, preset: hpcc, reorder_buffer: %d}\n"
    "lb: {type: %s}\n"
    "workload: {type: permutation, size: 1MB, locality: cross_tor}\n";

static double mean_fct_us(const struct run_result *r)
{
	double t = 0;
	for (size_t i = 0; i < r->nflows; i++)
		t += time_to_us(r->flows[i].fct);
	return t / (double)r->nflows;
}

static void test_reorder_buffer(void **state)
{
	(void)state;
	static const char *const lbs[] = { "spray", "ar", "drill" };
	char yaml[1024];
	for (int i = 0; i < 3; i++) {
		struct run_result gbn, rob;
		snprintf(yaml, sizeof yaml, perm_lb_yaml, 0, lbs[i]);
		simtest_run(yaml, &gbn);
		snprintf(yaml, sizeof yaml, perm_lb_yaml, 1024, lbs[i]);
		simtest_run(yaml, &rob);
		uint64_t rg = 0, rr = 0;
		for (size_t k = 0; k < gbn.nflows; k++)
			rg += gbn.flows[k].retx_bytes;
		for (size_t k = 0; k < rob.nflows; k++) {
			rr += rob.flows[k].retx_bytes + rob.flows[k].dup_bytes;
			assert_int_equal(rob.flows[k].rcvd_bytes, 1000000);
		}
		print_message("%s: go-back-N resent %llu B, mean FCT %.1f us, max slowdown %.2f; "
			      "reorder buffer resent %llu B, mean FCT %.1f us, max slowdown %.2f\n",
			      lbs[i], (unsigned long long)rg, mean_fct_us(&gbn),
			      simtest_max_slowdown(&gbn), (unsigned long long)rr, mean_fct_us(&rob),
			      simtest_max_slowdown(&rob));
		assert_int_equal(gbn.ncompleted, gbn.nflows);
		assert_int_equal(rob.ncompleted, rob.nflows);
		assert_int_equal(rr, 0);
		assert_true(rg > 10 * 1000000); /* more than 10 of the 16 MB again */
		assert_true(mean_fct_us(&gbn) > 2.5 * mean_fct_us(&rob));
		assert_true(simtest_max_slowdown(&rob) < 1.5);
		run_result_free(&gbn);
		run_result_free(&rob);
	}
	struct run_result a, b;
	snprintf(yaml, sizeof yaml, perm_lb_yaml, 0, "ecmp");
	simtest_run(yaml, &a);
	snprintf(yaml, sizeof yaml, perm_lb_yaml, 1024, "ecmp");
	simtest_run(yaml, &b);
	assert_int_equal(a.nflows, b.nflows);
	assert_memory_equal(a.flows, b.flows, a.nflows * sizeof *a.flows);
	run_result_free(&a);
	run_result_free(&b);
}

/* With a reorder buffer, real losses are still repaired: a packet beyond the
 * buffer is NAKed and the sender goes back, or the timeout fires. */
static void test_reorder_buffer_lossy(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run("seed: 3\n"
		    "topology: {type: dumbbell, left: 2, right: 2}\n"
		    "switch: {mode: lossy}\n"
		    "failures: {loss_rate: 1e-4}\n"
		    "transport: {type: roce, rto: 100us, reorder_buffer: 64}\n"
		    "workload: {type: permutation, size: 32MB, locality: cross_tor}\n",
		    &r);
	assert_true(r.net.drops_link > 0);
	assert_int_equal(r.ncompleted, r.nflows);
	for (size_t i = 0; i < r.nflows; i++) {
		assert_int_equal(r.flows[i].rcvd_bytes, 32000000);
		assert_true(r.flows[i].retx_bytes > 0);
	}
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_rate),
		cmocka_unit_test(test_incast_lossless),
		cmocka_unit_test(test_go_back_n),
		cmocka_unit_test(test_fairness),
		cmocka_unit_test(test_defaults_and_many_qps),
		cmocka_unit_test(test_stream_keeps_rate),
		cmocka_unit_test(test_stream_lossy),
		cmocka_unit_test(test_reorder_buffer),
		cmocka_unit_test(test_reorder_buffer_lossy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

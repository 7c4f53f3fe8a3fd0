/* test_mprdma.c - MP-RDMA (src/transport/mprdma.c) rules, each from its source
 * (the file's header): the authors' ns-3 model [A] (slow start from 8 packets
 * until the first ECN mark, probing off and deterministic when on, NACKs only
 * beyond the L-packet bitmap, recovery in order from the oldest
 * unacknowledged PSN, a timeout back to the first window) and UDMP III-D's
 * account of it (OOO-aware path selection prunes a slow virtual path; the
 * fixed bitmap discards and NACKs what lies beyond it, every byte still
 * delivered exactly once). The two-VP runs use two spines, the `entropy`
 * balancer (entropy e takes spine e mod 2, data and ACK alike) and paths: 2,
 * so the two VPs are the two spines; the link leaf0-spine1 is made slower.
 * They start from the former first window (one BDP sprayed on both VPs, no
 * slow start), which puts packets on the slow VP at once. */
#include "simtest.h"

#include "core/time.h"
#include "net/host.h"
#include "transport/rxmap.h"

#include <stdlib.h>
#include <unistd.h>

static char *flows_file(void)
{
	static char p[256];
	snprintf(p, sizeof p, "/tmp/mpsim_test_mprdma_%d.csv", (int)getpid());
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "src,dst,bytes,start\n0,1,4MB,0us\n");
	fclose(f);
	return p;
}

static const struct port_rec *port(const struct run_result *r, const char *name)
{
	for (size_t i = 0; i < r->nports; i++)
		if (!strcmp(r->ports[i].name, name))
			return &r->ports[i];
	fail_msg("no port %s", name);
	return NULL;
}

struct two_vp {
	double slow_share; /* of the bytes leaf0 sent up, the slow spine's */
	uint64_t retx, dup, drops;
};

/* One 4 MB flow over the two VPs, leaf0-spine1 `delay_us` longer each way;
 * `opts` is appended to the transport's options. */
static void two_vp(const char *opts, unsigned delay_us, struct two_vp *out)
{
	char *ff = flows_file();
	char yaml[1024];
	snprintf(yaml, sizeof yaml,
		 "seed: 1\n"
		 "topology: {type: leaf_spine, hosts_per_leaf: 1, leaves: 2, spines: 2, "
		 "host_rate: 100Gbps, fabric_rate: 100Gbps}\n"
		 "lb: {type: entropy}\n"
		 "transport: {type: mprdma, paths: 2, initial_window: 0, slow_start: false%s}\n"
		 "workload: {type: flows_file, file: %s}\n"
		 "events:\n"
		 "  - {at: 0us, link: leaf0-spine1, action: delay, value: %uus}\n",
		 opts, ff, delay_us);
	struct run_result r;
	simtest_run(yaml, &r);
	remove(ff);
	assert_int_equal(r.ncompleted, 1);
	assert_int_equal(r.flows[0].rcvd_bytes, 4000000);
	assert_true(r.flows[0].dup_bytes <= r.flows[0].retx_bytes);
	double fast = (double)port(&r, "leaf0-spine0")->tx_bytes;
	double slow = (double)port(&r, "leaf0-spine1")->tx_bytes;
	out->slow_share = slow / (fast + slow);
	out->retx = r.flows[0].retx_bytes;
	out->dup = r.flows[0].dup_bytes;
	out->drops = r.net.drops_buffer;
	print_message("opts '%s', slow spine +%u us: %.1f%% of bytes on it, %llu B retransmitted, "
		      "%llu B duplicate, FCT %.1f us\n",
		      opts, delay_us, 100 * out->slow_share, (unsigned long long)out->retx,
		      (unsigned long long)out->dup, r.flows[0].fct / 1e6);
	run_result_free(&r);
}

/* A VP 20 us slower each way returns ACKs far more than Delta = 32 PSNs
 * below snd_ooh: each such ACK cuts cwnd by one and releases nothing, so
 * after the sprayed first window the slow spine carries (almost) nothing
 * (1.5%). With Delta and L out of reach the same VP keeps its ACK clock (13%). */
static void test_ooo_aware_path_selection(void **state)
{
	(void)state;
	struct two_vp on, off;
	two_vp("", 20, &on);
	two_vp(", Delta: 50000, L: 100000", 20, &off);
	assert_true(on.slow_share < 0.03);
	assert_true(off.slow_share > 0.10);
	assert_int_equal(off.retx, 0);
}

/* A 16-packet bitmap (Delta 8 below it) and a VP 20 us slower each way: the
 * half of the sprayed first window that takes the slow VP leaves holes, the
 * fast VP runs more than L past them, and those packets are discarded and
 * NACKed, then resent; no switch drops anything, yet every byte arrives
 * exactly once (checked in two_vp). With L and Delta out of reach nothing is
 * resent (test_ooo_aware_path_selection). */
static void test_bitmap_discard(void **state)
{
	(void)state;
	struct two_vp small;
	two_vp(", L: 16, Delta: 8", 20, &small);
	assert_int_equal(small.drops, 0);
	assert_true(small.retx > 0);
	assert_true(small.retx < 1000000);
}

/* A 32 -> 1 incast of 2 MB that overflows a 4 MB buffer: the first windows
 * (one BDP each; from 8 packets in slow start the
 * buffer does not overflow) queue up faster than srtt + 4 rttvar grows, so
 * timeouts fire while the packets are still queued. Each timeout must back off
 * (mprdma.c, RFC 6298 5.5): without it every timeout would send another
 * window on top of the queue. Ideal: 32 x 2 MB back to back on the receiver's
 * 100 Gb/s link. */
static void test_incast_timeout_backoff(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run("seed: 1\n"
		    "topology: {type: star, hosts: 33, link_rate: 100Gbps, link_delay: 3us}\n"
		    "switch: {buffer: 4MB, kmin: 36KB, kmax: 36KB, pmax: 1}\n"
		    "transport: {type: mprdma, mtu: 1000B, initial_window: 0, slow_start: false}\n"
		    "workload: {type: incast, senders: 32, receiver: 0, size: 2MB}\n",
		    &r);
	assert_int_equal(r.ncompleted, 32);
	uint64_t retx = 0;
	simtime_t last = 0;
	for (size_t i = 0; i < r.nflows; i++) {
		assert_int_equal(r.flows[i].rcvd_bytes, 2000000);
		retx += r.flows[i].retx_bytes;
		if (r.flows[i].finish > last)
			last = r.flows[i].finish;
	}
	double ideal = 32 * 2e6 * 8 / 100e9, fct = (double)last / PS_PER_S;
	double dropped = (double)r.net.drops_buffer * 1000;
	print_message("32 -> 1: last FCT %.3f ms (ideal %.3f), %llu drops, %.1f MB resent\n",
		      fct * 1e3, ideal * 1e3, (unsigned long long)r.net.drops_buffer,
		      (double)retx / 1e6);
	assert_true(r.net.drops_buffer > 0);
	assert_true(fct < 1.25 * ideal);
	assert_true((double)retx < 2.5 * dropped);
	run_result_free(&r);
}

/* ---- traced runs: every data packet flow 0's sender puts on the wire, and
 * every ACK or NACK it gets, by wrapping the fabric's two callbacks ---------- */
#define TRACE_MAX 20000

struct tsend {
	simtime_t t;
	uint32_t psn;
	bool retx, was_acked; /* the sender had an ACK for psn already */
	uint32_t una;	      /* the oldest PSN without an ACK at the time */
	uint32_t win;	      /* new: PSNs up to psn without an ACK (the window) */
};

struct trace {
	struct sim s;
	struct experiment x;
	host_rx_fn rx0;
	nic_pull_fn pull0;
	void *ctx0;
	uint8_t acked[TRACE_MAX]; /* per PSN: an ACK (not a NACK) came */
	uint32_t una;
	struct tsend send[TRACE_MAX];
	uint32_t nsend;
	simtime_t ack_t[TRACE_MAX]; /* the first ACK of each PSN */
	simtime_t first_ece;	    /* the first ECN-echoing ACK */
	uint32_t max_win;	    /* packets sent and not acknowledged, at most */
	uint32_t nacked;
};

static struct packet *trace_pull(void *ctx, struct nic_flow *f)
{
	struct trace *t = ctx;
	struct packet *p = t->pull0(t->ctx0, f);
	if (p && p->conn == 0 && p->type == PKT_DATA && t->nsend < TRACE_MAX &&
	    p->psn < TRACE_MAX) {
		uint32_t w = 0;
		for (uint32_t i = t->una; i <= p->psn; i++)
			w += !t->acked[i];
		if (p->flags & PKT_F_RETX)
			w = 0;
		else if (w > t->max_win)
			t->max_win = w;
		t->send[t->nsend++] = (struct tsend){ .t = t->s.q.now,
						      .psn = p->psn,
						      .retx = p->flags & PKT_F_RETX,
						      .was_acked = t->acked[p->psn],
						      .una = t->una,
						      .win = w };
	}
	return p;
}

static void trace_rx(void *ctx, struct host *h, struct packet *p)
{
	struct trace *t = ctx;
	if (p->conn == 0 && p->type != PKT_DATA && tp_ack_psn(p) < TRACE_MAX) {
		if ((p->flags & PKT_F_ECE) && !t->first_ece)
			t->first_ece = t->s.q.now;
		if (p->type == PKT_ACK) {
			if (!t->acked[tp_ack_psn(p)]) {
				t->acked[tp_ack_psn(p)] = 1;
				t->ack_t[tp_ack_psn(p)] = t->s.q.now;
				t->nacked++;
			}
			while (t->una < TRACE_MAX && t->una < tp_ack_cum(p) + 0u) {
				if (!t->acked[t->una]) {
					t->acked[t->una] = 1;
					t->ack_t[t->una] = t->s.q.now;
					t->nacked++;
				}
				t->una++;
			}
			while (t->una < TRACE_MAX && t->acked[t->una])
				t->una++;
		}
	}
	t->rx0(t->ctx0, h, p);
}

static struct trace *trace_run(const char *yaml, struct run_result *r)
{
	struct trace *t = calloc(1, sizeof *t);
	struct mp_err e = { 0 };
	assert_non_null(t);
	if (exp_load_string(&t->x, yaml, "test.yaml", &e) || sim_build(&t->s, &t->x, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		fail();
	}
	t->rx0 = t->s.fab.host_rx;
	t->pull0 = t->s.fab.nic_pull;
	t->ctx0 = t->s.fab.cb_ctx;
	t->s.fab.host_rx = trace_rx;
	t->s.fab.nic_pull = trace_pull;
	t->s.fab.cb_ctx = t;
	sim_run(&t->s);
	sim_collect(&t->s, r);
	return t;
}

static void trace_free(struct trace *t)
{
	sim_free(&t->s);
	exp_free(&t->x);
	free(t);
}

/* Data packets sent before time `at`. */
static uint32_t sends_before(const struct trace *t, simtime_t at)
{
	uint32_t n = 0;
	while (n < t->nsend && t->send[n].t < at)
		n++;
	return n;
}

/* The authors' model [A, mprdma.c]: slow start from the script's 8 packets,
 * +1 per unmarked ACK until the first ECN-marked one. A lone 4 MB flow on a
 * free 100 Gb/s path (no queue, no mark) sends 8 packets before its first ACK
 * and 8 + 16 before the ACK of PSN 8 (the first of the second round): the
 * window doubles per round trip. With slow_start: false the
 * second round has about 8 (+1/cwnd per ACK). */
static void test_slow_start(void **state)
{
	(void)state;
	static const char *const opts[] = { "", ", slow_start: false" };
	for (int k = 0; k < 2; k++) {
		char yaml[1024];
		struct run_result r;
		snprintf(yaml, sizeof yaml,
			 "seed: 1\n"
			 "topology: {type: dumbbell, left: 1, right: 1, host_rate: 100Gbps, "
			 "bottleneck_rate: 100Gbps}\n"
			 "transport: {type: mprdma, mtu: 1000B%s}\n"
			 "workload: {type: incast, senders: 1, receiver: 1, size: 4MB}\n",
			 opts[k]);
		struct trace *t = trace_run(yaml, &r);
		assert_int_equal(r.ncompleted, 1);
		uint32_t r1 = sends_before(t, t->ack_t[0]);
		uint32_t r2 = sends_before(t, t->ack_t[8]);
		uint32_t r3 = sends_before(t, t->ack_t[24]);
		print_message("opts '%s': %u packets before the first ACK, %u before PSN 8's, %u "
			      "before PSN 24's; no ECN mark: %d\n",
			      opts[k], r1, r2, r3, !t->first_ece);
		assert_int_equal(t->first_ece, 0);
		if (k == 0) {
			assert_int_equal(r1, 8);
			assert_int_equal(r2, 8 + 16);
			assert_int_equal(r3, 8 + 16 + 32);
		} else {
			assert_int_equal(r1, 8);
			assert_true(r2 <= 8 + 8 + 1);
		}
		run_result_free(&r);
		trace_free(t);
	}
}

/* Slow start ends at the first ECN-marked ACK [A]: a lone 4 MB flow through a
 * 25 Gb/s bottleneck (ECN at 20 packets, about the path's BDP) doubles its
 * window until the queue is marked, then moves by +1/cwnd and -1/2 per ACK:
 * its window never exceeds 4x (BDP + threshold), and over the last half of
 * the flow it stays within 1.25x (41 packets for 40). Slow start that went on
 * past the marks (+1 per unmarked ACK, -1/2 per marked one) held 61. */
static void test_slow_start_ends_at_mark(void **state)
{
	(void)state;
	struct run_result r;
	struct trace *t =
	    trace_run("seed: 1\n"
		      "topology: {type: dumbbell, left: 1, right: 1, host_rate: 100Gbps, "
		      "bottleneck_rate: 25Gbps}\n"
		      "switch: {buffer: 16MB, kmin: 20KB, kmax: 20KB, pmax: 1}\n"
		      "transport: {type: mprdma, mtu: 1000B}\n"
		      "workload: {type: incast, senders: 1, receiver: 1, size: 4MB}\n",
		      &r);
	assert_int_equal(r.ncompleted, 1);
	/* BDP: 25 Gb/s x the base RTT (1000 B out, 64 B back, three 1 us hops) */
	double rtt = 2 * 3e-6 + 1000 * 8 / 100e9 * 2 + 1000 * 8 / 25e9, bdp = 25e9 / 8 * rtt / 1000;
	double lim = bdp + 20;
	uint32_t late = 0;
	for (uint32_t i = t->nsend / 2; i < t->nsend; i++)
		late = t->send[i].win > late ? t->send[i].win : late;
	print_message("first mark at %.2f us; largest window %u packets, %u over the second "
		      "half (BDP %.1f + threshold 20 = %.1f)\n",
		      time_to_us(t->first_ece), t->max_win, late, bdp, lim);
	assert_true(t->max_win < 4 * lim);
	assert_true(late < 1.25 * lim);
	assert_true(t->first_ece > 0);
	run_result_free(&r);
	trace_free(t);
}

/* Path probing [A]: off by default, so a flow keeps the VPs of its first
 * window (8, one per packet). Sixteen spines and the `entropy` balancer
 * (entropy e takes spine e mod 16) make VPs visible as uplinks: a 16 MB flow
 * uses exactly 8 of leaf0's uplinks. With probe: cwnd (the authors' rule when
 * probing is on: a new VP per whole-packet cwnd increase once slow start is
 * over, all of the first 64; 10 Gb/s spines so that ECN marks end it) it uses
 * all 16; with the former default (a random VP with p = 1% per RTT,
 * first window one BDP on random VPs) it used more than 8. */
static unsigned uplinks_used(const char *opts)
{
	char yaml[1024];
	struct run_result r;
	char *ff = flows_file();
	snprintf(yaml, sizeof yaml,
		 "seed: 1\n"
		 "topology: {type: leaf_spine, hosts_per_leaf: 1, leaves: 2, spines: 16, "
		 "host_rate: 100Gbps, fabric_rate: 10Gbps}\n"
		 "lb: {type: entropy}\n"
		 "switch: {kmin: 20KB, kmax: 20KB, pmax: 1}\n"
		 "transport: {type: mprdma, mtu: 1000B%s}\n"
		 "workload: {type: flows_file, file: %s}\n",
		 opts, ff);
	simtest_run(yaml, &r);
	remove(ff);
	assert_int_equal(r.ncompleted, 1);
	unsigned n = 0;
	for (int k = 0; k < 16; k++) {
		char nm[32];
		snprintf(nm, sizeof nm, "leaf0-spine%d", k);
		n += port(&r, nm)->tx_bytes > 0;
	}
	print_message("opts '%s': %u of 16 uplinks carry the flow\n", opts, n);
	run_result_free(&r);
	return n;
}

static void test_probing(void **state)
{
	(void)state;
	assert_int_equal(uplinks_used(""), 8);
	assert_int_equal(uplinks_used(", probe: cwnd"), 16);
	assert_true(uplinks_used(", probe: random, initial_window: 0, slow_start: false") > 8);
}

/* The receiver NACKs only a packet beyond its L-packet bitmap [A, U]: with L
 * out of reach (1000) a VP 20 us slower reorders packets far beyond Delta = 8
 * and nothing is resent, as nothing was lost. The former rule (hole_nack: a
 * NACK for a packet Delta beyond a hole) resent reordered packets. */
static void test_nack_only_beyond_bitmap(void **state)
{
	(void)state;
	struct two_vp d, h;
	two_vp(", L: 1000, Delta: 8", 20, &d);
	two_vp(", L: 1000, Delta: 8, hole_nack: true", 20, &h);
	assert_int_equal(d.drops, 0);
	assert_int_equal(d.retx, 0);
	assert_true(h.retx > 0);
}

/* Recovery [A]: a NACK (a packet discarded beyond the 16-packet bitmap) starts
 * a round that resends from the oldest unacknowledged PSN upward, in order,
 * whether or not a PSN's own ACK came (the sender keeps no per-packet state
 * [T]). Checked on every packet flow 0 resends: the first is the oldest PSN
 * without an ACK at that moment, nearly all follow the previous one by one
 * (a NACK below the resend point moves it back there), and some were
 * acknowledged already. The former rule (recovery: selective) resent only
 * PSNs without an ACK. Every byte still arrives exactly once (two_vp). */
static void test_recovery_in_order(void **state)
{
	(void)state;
	static const char *const opts[] = { "", ", recovery: selective" };
	for (int k = 0; k < 2; k++) {
		char yaml[1024];
		struct run_result r;
		char *ff = flows_file();
		snprintf(
		    yaml, sizeof yaml,
		    "seed: 1\n"
		    "topology: {type: leaf_spine, hosts_per_leaf: 1, leaves: 2, spines: 2, "
		    "host_rate: 100Gbps, fabric_rate: 100Gbps}\n"
		    "lb: {type: entropy}\n"
		    "transport: {type: mprdma, paths: 2, initial_window: 0, slow_start: false, "
		    "L: 16, Delta: 8%s}\n"
		    "workload: {type: flows_file, file: %s}\n"
		    "events:\n"
		    "  - {at: 0us, link: leaf0-spine1, action: delay, value: 20us}\n",
		    opts[k], ff);
		struct trace *t = trace_run(yaml, &r);
		remove(ff);
		assert_int_equal(r.ncompleted, 1);
		assert_int_equal(r.flows[0].rcvd_bytes, 4000000);
		uint32_t n = 0, inorder = 0, was_acked = 0, first = UINT32_MAX, first_una = 0;
		int32_t prev = -2;
		for (uint32_t i = 0; i < t->nsend; i++) {
			const struct tsend *x = &t->send[i];
			if (!x->retx)
				continue;
			if (first == UINT32_MAX) {
				first = x->psn;
				first_una = x->una;
			}
			n++;
			inorder += (int32_t)x->psn == prev + 1;
			was_acked += x->was_acked;
			prev = (int32_t)x->psn;
		}
		print_message(
		    "opts '%s': %u resends, the first PSN %u (oldest without an ACK: %u), "
		    "%u follow the previous one, %u had an ACK already\n",
		    opts[k], n, first, first_una, inorder, was_acked);
		assert_true(n > 0);
		if (k == 0) {
			assert_int_equal(first, first_una);
			assert_true(inorder >= 0.8 * n);
			assert_true(was_acked > 0);
		} else {
			assert_int_equal(was_acked, 0);
		}
		run_result_free(&r);
		trace_free(t);
	}
}

/* A timeout [A: MacroTimeout] restarts the window at the first one (8) in slow
 * start. The path drops everything from 100 to 300 us; the first round the
 * sender puts out after it is restored (up to its first ACK) is 8 packets, the
 * next 16. The former rule halved cwnd at a timeout. */
static void test_timeout_restarts_slow_start(void **state)
{
	(void)state;
	struct run_result r;
	struct trace *t =
	    trace_run("seed: 1\n"
		      "topology: {type: dumbbell, left: 1, right: 1, host_rate: 100Gbps, "
		      "bottleneck_rate: 100Gbps}\n"
		      "switch: {mode: lossy}\n"
		      "transport: {type: mprdma, mtu: 1000B}\n"
		      "workload: {type: incast, senders: 1, receiver: 1, size: 16MB}\n"
		      "events:\n"
		      "  - {at: 100us, link: left-right, action: loss, value: 1}\n"
		      "  - {at: 300us, link: left-right, action: loss, value: 0}\n",
		      &r);
	assert_int_equal(r.ncompleted, 1);
	simtime_t back = 300 * PS_PER_US;
	/* the first ACK after the path came back, and the one after that round */
	simtime_t a1 = SIMTIME_MAX;
	uint32_t psn1 = 0;
	for (uint32_t i = 0; i < TRACE_MAX; i++)
		if (t->ack_t[i] >= back && t->ack_t[i] < a1) {
			a1 = t->ack_t[i];
			psn1 = i;
		}
	uint32_t s0 = sends_before(t, back), s1 = sends_before(t, a1);
	/* the first packet sent after a1: its ACK ends the next round */
	uint32_t q = t->send[s1].psn;
	uint32_t s2 = sends_before(t, t->ack_t[q]);
	print_message("restored at 300 us: %u packets out before the first ACK (PSN %u at "
		      "%.2f us), %u in the next round\n",
		      s1 - s0, psn1, time_to_us(a1), s2 - s1);
	assert_int_equal(s1 - s0, 8);
	assert_int_equal(s2 - s1, 16);
	run_result_free(&r);
	trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ooo_aware_path_selection),
		cmocka_unit_test(test_bitmap_discard),
		cmocka_unit_test(test_incast_timeout_backoff),
		cmocka_unit_test(test_slow_start),
		cmocka_unit_test(test_slow_start_ends_at_mark),
		cmocka_unit_test(test_probing),
		cmocka_unit_test(test_nack_only_beyond_bitmap),
		cmocka_unit_test(test_recovery_in_order),
		cmocka_unit_test(test_timeout_restarts_slow_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

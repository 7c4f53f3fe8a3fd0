/* test_switch.c - a switch port in isolation: ECN marking at dequeue against
 * Kmin/Kmax/Pmax, shared-buffer admission with dynamic thresholds, and PFC
 * frames that pause and resume a port, and the PFC headroom that absorbs what
 * arrives after a PAUSE.
 *
 * A star of hosts around one switch is built directly; the port toward the
 * receiver is paused with a PFC frame while packets are injected, so the queue
 * behind every departing packet is known exactly when it is resumed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "core/evq.h"
#include "core/pool.h"
#include "net/fabric.h"
#include "net/host.h"
#include "net/lb.h"
#include "net/node.h"
#include "net/port.h"
#include "net/switch.h"

#define PKT 1000

struct rig {
	struct evq q;
	struct pool pool;
	struct fabric f;
	struct sw *s;
	uint32_t rx, rx_marked[4096];
	uint32_t rx_order[4096];
	uint16_t rx_size[4096];
	uint8_t rx_flags[4096];
	uint8_t rx_cls[4096];
};

static struct rig R;
static const struct lb_ops *rig_lb; /* NULL: ECMP */

static void rx(void *ctx, struct host *h, struct packet *p)
{
	struct rig *r = ctx;
	(void)h;
	r->rx_order[r->rx] = p->psn;
	r->rx_size[r->rx] = p->size;
	r->rx_flags[r->rx] = p->flags;
	r->rx_cls[r->rx] = p->cls;
	r->rx_marked[r->rx++] = (p->flags & PKT_F_CE) != 0;
	pkt_free(&r->f, p);
}

static struct packet *no_pull(void *ctx, struct nic_flow *fl)
{
	(void)ctx;
	(void)fl;
	return NULL;
}

static void rig_init_delay(struct rig *r, const struct swcfg *cfg, int nhosts, simtime_t delay)
{
	memset(r, 0, sizeof *r);
	evq_init(&r->q);
	pool_init(&r->pool, sizeof(struct packet), 256);
	fab_init(&r->f, &r->q, &r->pool, 1, cfg);
	extern const struct lb_ops ecmp_lb_ops;
	r->f.lb = rig_lb ? rig_lb : &ecmp_lb_ops;
	r->s = fab_add_switch(&r->f, "sw0", 1);
	for (int i = 0; i < nhosts; i++) {
		char name[16];
		snprintf(name, sizeof name, "h%d", i);
		fab_add_link(&r->f, &fab_add_host(&r->f, name)->node, &r->s->node, 100000000000ULL,
			     delay, TIER_HOST);
	}
	struct mp_err e = { 0 };
	assert_int_equal(fab_finalize(&r->f, NULL, 0, &e), MP_OK);
	r->f.host_rx = rx;
	r->f.nic_pull = no_pull;
	r->f.cb_ctx = r;
}

static void rig_init(struct rig *r, const struct swcfg *cfg, int nhosts)
{
	rig_init_delay(r, cfg, nhosts, 1000000);
}

static void rig_free(struct rig *r)
{
	fab_free(&r->f);
	pool_destroy(&r->pool);
	evq_free(&r->q);
}

/* A zeroed packet of the given type, class and size, to host dst. */
static struct packet *mkpkt(struct rig *r, uint8_t type, uint8_t cls, uint16_t size, uint32_t dst,
			    uint32_t psn)
{
	struct packet *p = pkt_alloc(&r->f);
	memset(p, 0, sizeof *p);
	p->type = type;
	p->cls = cls;
	p->size = size;
	p->dst = dst;
	p->psn = psn;
	return p;
}

/* deliver a PFC frame to the switch port facing host `h` (pause or resume) */
static void pfc_to_port(struct rig *r, int h, bool xon)
{
	struct packet *p = mkpkt(r, PKT_PAUSE, CLS_PAUSE, 64, 0, 0);
	p->p0 = CLS_DATA;
	p->flags = xon ? PKT_F_XON : 0;
	node_recv(&r->s->node, (uint16_t)h, p);
}

/* a data packet arriving at the switch from host `from`, to host `to` */
static void inject(struct rig *r, int from, int to, uint32_t psn)
{
	struct packet *p = mkpkt(r, PKT_DATA, CLS_DATA, PKT, (uint32_t)to, psn);
	p->src = (uint32_t)from;
	p->flags = PKT_F_ECT;
	node_recv(&r->s->node, (uint16_t)from, p);
}

/* A lossy switch with a large buffer that marks ECN at dequeue, RED-style
 * from kmin to kmax (bytes) up to pmax. */
static struct swcfg ecn_cfg(uint64_t kmin, uint64_t kmax, double pmax)
{
	return (struct swcfg){ .buffer = 100000000,
			       .dt_alpha = 1000,
			       .mode = BUF_LOSSY,
			       .ecn = true,
			       .kmin = kmin,
			       .kmax = kmax,
			       .pmax = pmax,
			       .ctrl_size = 64,
			       .pfc_xon_gap = 1 };
}

/* n data packets from h0 to h1 queued behind a paused port 1, which is then
 * resumed: each leaves with the packets after it queued behind it. Runs
 * until all have arrived. */
static void burst_behind_pause(struct rig *r, int n)
{
	pfc_to_port(r, 1, false);
	for (int i = 0; i < n; i++)
		inject(r, 0, 1, (uint32_t)i);
	r->rx = 0;
	pfc_to_port(r, 1, true);
	evq_run(&r->q, SIMTIME_MAX);
	assert_int_equal(r->rx, n);
}

static void test_ecn_at_dequeue(void **state)
{
	(void)state;
	struct swcfg cfg = ecn_cfg(20 * PKT, 80 * PKT, 0.2);
	rig_init(&R, &cfg, 3);
	enum { N = 100, ROUNDS = 3000 };
	static uint32_t marks[N];
	for (int round = 0; round < ROUNDS; round++) {
		burst_behind_pause(&R, N);
		for (int i = 0; i < N; i++) {
			assert_int_equal(R.rx_order[i], i); /* FIFO */
			marks[i] += R.rx_marked[i];
		}
	}
	/* packet i leaves with (N-1-i) packets behind it */
	for (int i = 0; i < N; i++) {
		double q = (double)(N - 1 - i) * PKT;
		double want = q <= cfg.kmin   ? 0
			      : q >= cfg.kmax ? 1
					      : cfg.pmax * (q - cfg.kmin) / (cfg.kmax - cfg.kmin);
		double got = (double)marks[i] / ROUNDS;
		/* binomial: 4.5 sigma, at least 0.005 */
		double tol = 4.5 * sqrt(want * (1 - want) / ROUNDS) + 0.005;
		if (fabs(got - want) > tol)
			fail_msg("queue %.0f B behind: marked %.4f, expected %.4f", q, got, want);
	}
	/* marks counted at the port */
	uint64_t m = port_ecn_marks(&R.s->node.ports[1]), sum = 0;
	for (int i = 0; i < N; i++)
		sum += marks[i];
	assert_int_equal(m, sum);
	rig_free(&R);
}

/* A port counts the marks it makes: a packet that arrives marked leaves
 * marked and is not counted again (a run's total would otherwise count a
 * mark once more at every later hop). Step marking at 20 packets: of 100
 * packets queued, the first 80 leave above it; every third arrives marked. */
static void test_ecn_marked_upstream(void **state)
{
	(void)state;
	struct swcfg cfg = ecn_cfg(20 * PKT, 20 * PKT, 1);
	rig_init(&R, &cfg, 3);
	enum { N = 100 };
	pfc_to_port(&R, 1, false);
	uint64_t fresh = 0;
	for (int i = 0; i < N; i++) {
		struct packet *p = mkpkt(&R, PKT_DATA, CLS_DATA, PKT, 1, (uint32_t)i);
		p->src = 0;
		p->flags = PKT_F_ECT | (i % 3 == 0 ? PKT_F_CE : 0);
		fresh += i < N - 20 && i % 3 != 0; /* leaves 20 or more behind, unmarked */
		node_recv(&R.s->node, 0, p);
	}
	R.rx = 0;
	pfc_to_port(&R, 1, true);
	evq_run(&R.q, SIMTIME_MAX);
	assert_int_equal(R.rx, N);
	for (int k = 0; k < N; k++) { /* k-th received: packet psn */
		uint32_t psn = R.rx_order[k];
		assert_int_equal(R.rx_marked[k], psn < N - 20 || psn % 3 == 0);
	}
	assert_int_equal(fresh, 53);
	assert_int_equal(port_ecn_marks(&R.s->node.ports[1]), fresh);
	rig_free(&R);
}

/* A queued packet leaves without the switch reading it (its queue entry holds
 * what its departure needs), and RED's mark travels with it to its arrival
 * (net/port.c, "A packet's departure"). A load balancer's sw_tx hook still
 * sees the packet as it leaves, mark included: the marks the hook sees are
 * the marks the receiver sees, packet by packet, and RED between kmin and
 * kmax makes both kinds. Then the same without a hook, where the packet on
 * the wire is not written until it arrives: the receiver's marks are those
 * the port counted. */
static uint32_t hook_seen, hook_marked[4096];

static void hook_sw_tx(struct fabric *f, struct sw *s, struct port *out, struct packet *p)
{
	(void)f;
	(void)s;
	(void)out;
	hook_marked[p->psn] = (p->flags & PKT_F_CE) != 0;
	hook_seen++;
}

static void test_ecn_mark_travels(void **state)
{
	(void)state;
	extern const struct lb_ops ecmp_lb_ops;
	static struct lb_ops hook;
	hook = ecmp_lb_ops;
	hook.sw_tx = hook_sw_tx;
	struct swcfg cfg = ecn_cfg(10 * PKT, 60 * PKT, 0.5);
	enum { N = 80 };
	for (int with_hook = 1; with_hook >= 0; with_hook--) {
		rig_lb = with_hook ? &hook : NULL;
		rig_init(&R, &cfg, 3);
		rig_lb = NULL;
		assert_int_equal(R.s->node.ports[1].tx_reads_pkt, with_hook);
		hook_seen = 0;
		burst_behind_pause(&R, N);
		uint32_t marked = 0;
		for (int k = 0; k < N; k++) {
			assert_int_equal(R.rx_order[k], k);
			marked += R.rx_marked[k];
			if (with_hook)
				assert_int_equal(R.rx_marked[k], hook_marked[k]);
		}
		assert_int_equal(hook_seen, with_hook ? N : 0);
		assert_int_equal(port_ecn_marks(&R.s->node.ports[1]), marked);
		/* the first 20 leave kmax behind them, the last 11 at most kmin */
		assert_true(marked >= 20 && marked <= N - 11);
		rig_free(&R);
	}
}

/* Dynamic thresholds (Choudhury-Hahne): a queue may grow while
 * q + size <= alpha * (B - used). One congested queue settles at
 * alpha/(1+alpha) of B; two at alpha/(1+2 alpha) each. */
static void test_dynamic_threshold(void **state)
{
	(void)state;
	struct swcfg cfg = { .buffer = 300 * PKT,
			     .dt_alpha = 1,
			     .mode = BUF_LOSSY,
			     .ecn = false,
			     .ctrl_size = 64,
			     .pfc_xon_gap = 1 };
	rig_init(&R, &cfg, 4);
	pfc_to_port(&R, 1, false);
	for (int i = 0; i < 400; i++)
		inject(&R, 0, 1, (uint32_t)i);
	struct port *p1 = &R.s->node.ports[1], *p2 = &R.s->node.ports[2];
	assert_int_equal(p1->qbytes_total, 150 * PKT); /* 1/2 of B */
	assert_int_equal(p1->st.drops_buffer, 250);
	assert_int_equal(R.s->buf_used, 150 * PKT);
	/* a second congested queue: q2 + s <= B - 150 - q2 -> 75 packets, then
	 * the first can no longer grow */
	pfc_to_port(&R, 2, false);
	for (int i = 0; i < 400; i++)
		inject(&R, 3, 2, (uint32_t)i);
	assert_int_equal(p2->qbytes_total, 75 * PKT);
	assert_int_equal(R.s->buf_used, 225 * PKT);
	/* nothing is lost from what was admitted */
	pfc_to_port(&R, 1, true);
	pfc_to_port(&R, 2, true);
	R.rx = 0;
	evq_run(&R.q, SIMTIME_MAX);
	assert_int_equal(R.rx, 225);
	assert_int_equal(R.s->buf_used, 0);
	/* the paused time is accounted */
	assert_true(p1->st.paused_time == 0); /* pause and resume at t = 0 */
	assert_int_equal(p1->st.pause_rcvd, 1);
	rig_free(&R);
}

/* A static cap per egress queue (STrack's "drop above 5 BDP") on top of the
 * shared buffer: the queue stops at the cap although the buffer has room. */
static void test_queue_limit(void **state)
{
	(void)state;
	struct swcfg cfg = { .buffer = 1000 * PKT,
			     .dt_alpha = 1000,
			     .queue_limit = 40 * PKT + PKT / 2,
			     .mode = BUF_LOSSY,
			     .ecn = false,
			     .ctrl_size = 64,
			     .pfc_xon_gap = 1 };
	rig_init(&R, &cfg, 3);
	pfc_to_port(&R, 1, false);
	for (int i = 0; i < 100; i++)
		inject(&R, 0, 1, (uint32_t)i);
	struct port *p1 = &R.s->node.ports[1];
	assert_int_equal(p1->qbytes_total, 40 * PKT);
	assert_int_equal(p1->st.drops_buffer, 60);
	pfc_to_port(&R, 1, true);
	R.rx = 0;
	evq_run(&R.q, SIMTIME_MAX);
	assert_int_equal(R.rx, 40);
	rig_free(&R);
}

/* An incast of 4 x 30 packets into a paused port capped at 40: with
 * switch.trim off, 80 are dropped; with it on, none is dropped and 80 are cut
 * to 64-byte headers, delivered in the control class before the 40 whole
 * packets (strict priority). got[h][i] says what became of sender h's i-th
 * packet: 0 lost, 1 arrived whole, 2 arrived trimmed. */
static void trim_incast(bool trim, uint8_t got[4][30])
{
	struct swcfg cfg = { .buffer = 1000 * PKT,
			     .dt_alpha = 1000,
			     .queue_limit = 40 * PKT,
			     .mode = BUF_LOSSY,
			     .ecn = false,
			     .ctrl_size = 64,
			     .pfc_xon_gap = 1,
			     .trim = trim,
			     .trim_size = 64 };
	rig_init(&R, &cfg, 5);
	pfc_to_port(&R, 4, false);
	for (int i = 0; i < 30; i++)
		for (int h = 0; h < 4; h++)
			inject(&R, h, 4, (uint32_t)(h * 1000 + i));
	struct port *p4 = &R.s->node.ports[4];
	assert_int_equal(p4->st.drops_buffer, trim ? 0 : 80);
	assert_int_equal(fab_port_trim(&R.f, p4).pkts, trim ? 80 : 0);
	assert_int_equal(fab_port_trim(&R.f, p4).bytes, trim ? 80 * (PKT - 64) : 0);
	R.rx = 0;
	pfc_to_port(&R, 4, true);
	evq_run(&R.q, SIMTIME_MAX);
	assert_int_equal(R.rx, trim ? 120 : 40);
	memset(got, 0, 4 * 30);
	for (uint32_t k = 0; k < R.rx; k++) {
		bool hdr = (R.rx_flags[k] & PKT_F_TRIM) != 0;
		assert_int_equal(hdr, trim && k < 80); /* headers first */
		assert_int_equal(R.rx_size[k], hdr ? 64 : PKT);
		assert_int_equal(R.rx_cls[k], hdr ? CLS_CTRL : CLS_DATA);
		got[R.rx_order[k] / 1000][R.rx_order[k] % 1000] = hdr ? 2 : 1;
	}
	rig_free(&R);
}

/* Trimming cuts exactly the packets a dropping switch drops, and the rest
 * arrive as they would. */
static void test_trim_incast(void **state)
{
	(void)state;
	uint8_t off[4][30], on[4][30];
	trim_incast(false, off);
	trim_incast(true, on);
	for (int h = 0; h < 4; h++)
		for (int i = 0; i < 30; i++)
			assert_int_equal(on[h][i], off[h][i] ? 1 : 2);
}

/* A lossless switch with a static XOFF of 20 packets per ingress port. */
static const struct swcfg pfc_cfg = { .buffer = 200 * PKT,
				      .dt_alpha = 1,
				      .mode = BUF_LOSSLESS,
				      .ecn = false,
				      .pfc_xoff = 20 * PKT,
				      .pfc_xon_gap = 5 * PKT,
				      .ctrl_size = 64,
				      .mtu = PKT };

/* Lossless: above XOFF the ingress port sends PAUSE upstream, and what still
 * arrives goes to the port's headroom (2 x 100 Gb/s x 1 us + 3 x 1000 B + 64 B
 * = 28064 B here), never dropped; RESUME follows once the headroom is empty
 * and the ingress count has drained XON gap under XOFF. */
static void test_pfc_xoff_xon(void **state)
{
	(void)state;
	rig_init(&R, &pfc_cfg, 3);
	struct port *in = &R.s->node.ports[0];
	assert_int_equal(in->hdrm_cap, 28064);
	assert_int_equal(R.s->shared_size, 200 * PKT - 3 * 28064);
	pfc_to_port(&R, 1, false);
	for (int i = 0; i < 48; i++)
		inject(&R, 0, 1, (uint32_t)i);
	assert_int_equal(in->st.pause_sent, 1); /* once, when crossing XOFF */
	assert_true(in->pause_sent & (1u << CLS_DATA));
	assert_int_equal(in->ingress_bytes[CLS_DATA], 20 * PKT); /* the shared pool */
	assert_int_equal(in->hdrm_used, 28 * PKT);		 /* the headroom */
	assert_int_equal(R.s->node.ports[1].st.drops_buffer, 0);
	assert_int_equal(R.f.lossless_overflow, 0);
	/* the PAUSE frame travels to h0 and pauses its NIC */
	evq_run(&R.q, SIMTIME_MAX);
	assert_true(R.f.hosts[0]->node.ports[0].paused & (1u << CLS_DATA));
	pfc_to_port(&R, 1, true);
	R.rx = 0;
	evq_run(&R.q, SIMTIME_MAX);
	assert_int_equal(R.rx, 48);
	assert_int_equal(in->st.resume_sent, 1);
	assert_int_equal(in->hdrm_used + in->ingress_bytes[CLS_DATA] + R.s->shared_used, 0);
	assert_false(R.f.hosts[0]->node.ports[0].paused & (1u << CLS_DATA));
	assert_true(R.f.hosts[0]->node.ports[0].st.paused_time > 0);
	fab_assert_lossless(&R.f);
	rig_free(&R);
}

/* A packet the switch itself sends (PORT_SELF: a Proteus probe) takes the
 * shared buffer but no ingress port's PFC counters. Port 1 holds exactly
 * XOFF of h1's packets (to the paused h2); a packet counted as if it came in
 * by port 1, the port it leaves by, would push port 1 past XOFF and pause h1,
 * as Proteus's probes did before. */
static void test_self_origin(void **state)
{
	(void)state;
	rig_init(&R, &pfc_cfg, 3);
	struct port *p1 = &R.s->node.ports[1];
	pfc_to_port(&R, 2, false);
	for (int i = 0; i < 20; i++)
		inject(&R, 1, 2, (uint32_t)i);
	assert_int_equal(p1->ingress_bytes[CLS_DATA], 20 * PKT);
	assert_int_equal(p1->st.pause_sent, 0);
	pfc_to_port(&R, 1, false); /* h1's port paused too: the packet waits in it */
	struct packet *q = mkpkt(&R, PKT_DATA, CLS_DATA, PKT, 1, 99);
	node_recv(&R.s->node, PORT_SELF, q);
	assert_int_equal(p1->ingress_bytes[CLS_DATA], 20 * PKT);
	assert_int_equal(p1->hdrm_used, 0);
	assert_int_equal(p1->st.pause_sent, 0);
	assert_int_equal(R.s->shared_used, 21 * PKT);
	assert_int_equal(p1->qbytes_total, PKT);
	pfc_to_port(&R, 1, true);
	pfc_to_port(&R, 2, true);
	R.rx = 0;
	evq_run(&R.q, SIMTIME_MAX);
	assert_int_equal(R.rx, 21);
	assert_int_equal(R.s->shared_used, 0);
	assert_int_equal(p1->ingress_bytes[CLS_DATA] + p1->hdrm_used, 0);
	assert_int_equal(p1->st.pause_sent, 0);
	fab_assert_lossless(&R.f);
	rig_free(&R);
}

/* A host NIC that always has a packet for h1, until `left` runs out. */
static struct nic_flow blast_flow;
static uint32_t blast_left;

static struct packet *blast_pull(void *ctx, struct nic_flow *fl)
{
	struct rig *r = ctx;
	(void)fl;
	if (!blast_left)
		return NULL;
	return mkpkt(r, PKT_DATA, CLS_DATA, PKT, 1, blast_left--);
}

/* The headroom bound is tight and holds: h0 sends at line rate into a paused
 * port; after XOFF what arrives fills at least the round trip of the PAUSE
 * (rate x both delays) and at most the headroom, with 1 us and 10 us links, and
 * with a slow switch (8 us more on its egress toward h0, the PAUSE's way). */
static void test_headroom_bound(void **state)
{
	(void)state;
	static const struct {
		simtime_t delay, proc;
	} cases[] = { { 1000000, 0 }, { 10000000, 0 }, { 1000000, 8000000 } };
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		struct swcfg cfg = { .buffer = 10000000,
				     .dt_alpha = 1,
				     .mode = BUF_LOSSLESS,
				     .pfc_xoff = 10 * PKT,
				     .pfc_xon_gap = PKT,
				     .ctrl_size = 64,
				     .mtu = PKT };
		rig_init_delay(&R, &cfg, 3, cases[k].delay);
		struct mp_err e = { 0 };
		fab_plan_link(&R.f, 0, 0, 0, cases[k].proc, &R.s->node);
		assert_int_equal(fab_check_buffer(&R.f, &e), MP_OK);
		fab_port_set_proc_delay(&R.s->node.ports[0], cases[k].proc);
		struct port *in = &R.s->node.ports[0];
		R.f.nic_pull = blast_pull;
		blast_left = 100000;
		pfc_to_port(&R, 1, false);
		blast_flow = (struct nic_flow){ .port = &R.f.hosts[0]->node.ports[0], .owner = &R };
		nic_activate(&R.f, &blast_flow);
		evq_run(&R.q, SIMTIME_MAX);
		uint64_t rtt_bytes =
		    100000000000ULL / 8 * (2 * cases[k].delay + cases[k].proc) / PS_PER_S;
		print_message("links %.0f us, slow switch +%.0f us: headroom %llu of %llu B "
			      "(rate x round trip %llu B)\n",
			      time_to_us(cases[k].delay), time_to_us(cases[k].proc),
			      (unsigned long long)in->hdrm_used, (unsigned long long)in->hdrm_cap,
			      (unsigned long long)rtt_bytes);
		assert_int_equal(in->ingress_bytes[CLS_DATA], 10 * PKT);
		assert_true(in->hdrm_used >= rtt_bytes);
		assert_true(in->hdrm_used <= in->hdrm_cap);
		assert_int_equal(in->hdrm_cap, rtt_bytes + 3 * PKT + 64);
		assert_int_equal(R.f.lossless_overflow, 0);
		assert_true(blast_left > 0); /* h0 stopped: paused */
		nic_deactivate(&R.f, &blast_flow);
		R.f.nic_pull = no_pull;
		rig_free(&R);
	}
}

/* A lossy switch and two hosts, whose load balancer's hooks a test sets. */
static struct lb_ops *rig_hooked(void)
{
	static const struct swcfg cfg = { .buffer = 10000000, .dt_alpha = 1, .mode = BUF_LOSSY };
	static struct lb_ops ops;
	rig_init(&R, &cfg, 2);
	ops = *R.f.lb;
	R.f.lb = &ops;
	return &ops;
}

/* A NIC's pull runs the transport, which may make another flow of the same
 * port ready (a paced queue pair whose time has come) or send an ACK from the
 * same host; neither may start a second transmission while the first is on
 * the wire. Flow A's first pull does both; every transmission that h0 starts
 * (host_tx) must begin after the one before it has left. */
static struct nic_flow reent_a, reent_b;
static uint32_t reent_left[2], reent_starts;
static simtime_t reent_at[64];
static uint16_t reent_size[64];
static bool reent_done;

static void reent_host_tx(struct fabric *f, struct host *h, struct packet *p)
{
	(void)h;
	if (reent_starts < 64) {
		reent_at[reent_starts] = f->q->now;
		reent_size[reent_starts] = p->size;
	}
	reent_starts++;
}

static struct packet *reent_pull(void *ctx, struct nic_flow *fl)
{
	struct rig *r = ctx;
	unsigned i = fl == &reent_b;
	if (!reent_left[i])
		return NULL;
	if (!i && !reent_done) {
		reent_done = true;
		nic_activate(&r->f, &reent_b);
		host_send(&r->f, r->f.hosts[0], mkpkt(r, PKT_ACK, CLS_CTRL, 64, 1, 0));
	}
	return mkpkt(r, PKT_DATA, CLS_DATA, PKT, 1, reent_left[i]--);
}

static void test_pull_reentry(void **state)
{
	(void)state;
	rig_hooked()->host_tx = reent_host_tx;
	R.f.nic_pull = reent_pull;
	reent_left[0] = reent_left[1] = 10;
	reent_starts = 0;
	reent_done = false;
	struct port *nic = &R.f.hosts[0]->node.ports[0];
	reent_a = (struct nic_flow){ .port = nic, .owner = &R };
	reent_b = (struct nic_flow){ .port = nic, .owner = &R };
	nic_activate(&R.f, &reent_a);
	evq_run(&R.q, SIMTIME_MAX);
	assert_int_equal(reent_starts, 21); /* 20 data packets and the ACK */
	assert_int_equal(R.rx, 21);
	for (uint32_t k = 1; k < reent_starts; k++) {
		simtime_t ser = (simtime_t)reent_size[k - 1] * 8 * PS_PER_S / 100000000000ULL;
		assert_true(reent_at[k] >= reent_at[k - 1] + ser);
	}
	rig_free(&R);
}

/* A packet that leaves a switch by the fast path (idle port, empty queue)
 * runs the departure's hooks before it takes the wire; one of them may send
 * on that very port (Proteus: a probe enters as if by the port it leaves
 * by, so its release can send a PFC frame out of that port). The second
 * packet must wait for the first to leave: before the fix it took the wire
 * at once and the first one's transmission failed port_transmit's check. */
static uint32_t dep_hooks, dep_rx;
static simtime_t dep_at[4];
static uint16_t dep_size[4];

static void dep_sw_tx(struct fabric *f, struct sw *s, struct port *out, struct packet *p)
{
	(void)f;
	(void)out;
	(void)p;
	if (dep_hooks++ == 0) /* once: a packet to the same host, from the switch itself */
		node_recv(&s->node, 1, mkpkt(&R, PKT_DATA, CLS_DATA, 512, 1, 7));
}

static void dep_rx_at(void *ctx, struct host *h, struct packet *p)
{
	struct rig *r = ctx;
	(void)h;
	if (dep_rx < 4) {
		dep_at[dep_rx] = r->q.now;
		dep_size[dep_rx] = p->size;
	}
	dep_rx++;
	pkt_free(&r->f, p);
}

static void test_depart_reentry(void **state)
{
	(void)state;
	rig_hooked()->sw_tx = dep_sw_tx;
	R.f.host_rx = dep_rx_at;
	dep_hooks = dep_rx = 0;
	inject(&R, 0, 1, 1);
	evq_run(&R.q, SIMTIME_MAX);
	assert_int_equal(dep_rx, 2);
	assert_int_equal(dep_size[0], PKT); /* the first one first */
	/* one at a time on the wire: the second arrives a whole serialisation
	 * of it after the first */
	simtime_t ser = (simtime_t)dep_size[1] * 8 * PS_PER_S / 100000000000ULL;
	assert_true(dep_at[1] >= dep_at[0] + ser);
	rig_free(&R);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ecn_at_dequeue),	 cmocka_unit_test(test_ecn_marked_upstream),
		cmocka_unit_test(test_ecn_mark_travels), cmocka_unit_test(test_dynamic_threshold),
		cmocka_unit_test(test_queue_limit),	 cmocka_unit_test(test_pfc_xoff_xon),
		cmocka_unit_test(test_headroom_bound),	 cmocka_unit_test(test_pull_reentry),
		cmocka_unit_test(test_depart_reentry),	 cmocka_unit_test(test_self_origin),
		cmocka_unit_test(test_trim_incast),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

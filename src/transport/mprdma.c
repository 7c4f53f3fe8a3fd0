/* mprdma.c - MP-RDMA, multi-path RDMA with ACK-clocked virtual paths.
 *
 * Follows Lu et al., "Multi-Path Transport for RDMA in Datacenters", NSDI 2018
 * [N], and its journal version, Chen et al., "MP-RDMA: Enabling RDMA With
 * Multi-Path Transport in Datacenters", IEEE/ACM ToN 27(6) 2019 [T].
 * Second check (search, "pages" corpus, some 20 targeted queries): the stored
 * copies of both papers (dokumen.tips for [N], vdocuments.us for [T]) return
 * only their opening: [N] title and authors, [T] abstract and the first lines
 * of section I. Their design and evaluation sections never came back, so no
 * rule below can cite a section of either paper. What was retrievable:
 *   [T]  ToN abstract: multi-path ACK clocking without per-path state;
 *        OOO-aware path selection that bounds out-of-order delivery and so the
 *        receiver's metadata; a synchronise mechanism for in-order memory
 *        updates "whenever needed"; 66 B of state per connection.
 *   [U1] UDMP (shared/seeds/004) I: one cwnd for all paths, +1/cwnd per
 *        unmarked ACK, -1/2 per ECN-marked ACK; an ACK clocks out new
 *        packets when cwnd allows.
 *   [U3] UDMP III-C: per-packet ACKs, under 4% overhead. III-D: snd_ooh is
 *        the highest PSN acknowledged, snd_ool = snd_ooh - Delta, Delta
 *        below the bitmap size; an ACK whose PSN is below snd_ool cuts cwnd
 *        by one; the receiver keeps a fixed bitmap and discards and NACKs
 *        packets beyond it. (III-D also says such an ACK "triggers a packet
 *        retransmission on the other paths"; an ACK for a delivered packet
 *        leaves nothing to resend, so this reads as: its slot is not reused
 *        on its own VP.) III-D describes path exploration as, per RTT, a new
 *        source port with probability p instead of the ACK's path.
 *   [U4] UDMP IV-B Table I, MP-RDMA column: cwnd & inflate, snd_ooh & Delta,
 *        L, srtt, rttvar and rtt seq are the per-connection state.
 *   [U6] UDMP VI: MP-RDMA explores new paths periodically.
 *   [S5] STrack (shared/seeds/000) 5.2.3: MP-RDMA sprays the initial window
 *        and handles fabric and incast congestion with ECN alone.
 * Where none of these gives a rule or value, the comment says "the paper
 * gives no value" (meaning: in no passage retrievable here) and why the
 * choice was made; such choices are worth re-checking against [N] section 3.
 *
 * A virtual path (VP) is a UDP source port (the packet's entropy); the
 * connection keeps no per-VP state [T].
 * Congestion control [U1]: one window for all VPs; per ACK, cwnd += 1/cwnd if
 * the ACK is not ECN-marked, cwnd -= 1/2 if it is: the cut is per marked ACK
 * and half a packet each, not once per RTT.
 * Multi-path ACK clocking [T, U1, U4]: each ACK echoes the VP its data packet
 * took; the window it frees (awnd = cwnd + inflate - (snd_nxt - snd_una), here
 * counted directly as cwnd - packets whose ACK is outstanding) is spent on new
 * packets on that same VP, at most max_burst of them. The first window is
 * sprayed over random VPs [S5].
 * OOO-aware path selection [U3]: an ACK whose PSN is below snd_ool came over a
 * VP slow enough to overrun the receiver's bitmap: cwnd -= 1 and the ACK sends
 * nothing, so that VP is pruned. ACKs of retransmissions are exempt (the paper
 * gives no rule; a retransmission's PSN is old by construction, so counting it
 * would prune healthy VPs).
 * Path probing [U3, U6]: once per RTT, with probability p, the packet an ACK
 * releases goes to a new random VP instead of the ACK's.
 * Loss recovery: the receiver tracks L packets from the first missing PSN in a
 * bitmap; a packet beyond it is discarded and NACKed [U3]. A packet that
 * arrives Delta or more beyond a hole reports the hole by a NACK, and the
 * sender then resends, on ACK-clocked slots, the PSNs still unacknowledged
 * more than Delta below snd_ooh and the discarded one (the paper gives no
 * rule; with OOO bounded by Delta, such a hole is taken as a loss without
 * waiting for L packets or a timeout). A retransmission timeout of
 * srtt + 4 rttvar, one PSN timed at a time ([U4] names srtt, rttvar and rtt
 * seq; the paper gives no formula, so RFC 6298's), resends everything
 * outstanding.
 * Synchronise mechanism [T]: not modelled; a connection here carries one
 * RDMA WRITE whose data may be placed in any order, and completion already
 * waits for every PSN, so no packet needs the in-order update [T] says the
 * mechanism exists for.
 *
 * Packet fields: DATA psn, entropy = VP, ts. ACK/NACK: p0 = PSN, p1 = cumulative
 * (every PSN below arrived), entropy = the data packet's VP, ts echoed, RETX
 * and ECE echoed; NACK aux16 = 1 if the data packet was discarded.
 */
#include <math.h>
#include <string.h>

#include "core/bits.h"
#include "core/mem.h"
#include "core/rng.h"
#include "transport/transport.h"

struct mprdma_params {
	struct tp_common common;
	uint64_t initial_window; /* bytes; 0 = one BDP */
	uint64_t delta;		 /* Delta, packets */
	uint64_t bitmap;	 /* L, packets */
	double p;		 /* probing probability per RTT */
	uint64_t paths;		 /* UDP source ports VPs are drawn from */
	uint64_t max_burst;	 /* packets one ACK may release */
	simtime_t rto_min;	 /* ps */
};

struct mprdma_state {
	/* sender */
	struct tp_pktbook b;
	double cwnd; /* packets */
	simtime_t last_progress, probe_next;
	uint32_t free_slots;		      /* sends allowed on random VPs */
	uint16_t *ring;			      /* VPs of slots released by ACKs */
	uint32_t ring_cap, ring_head, ring_n; /* ring_n = pending slots */
	double srtt, rttvar;		      /* ps */
	uint32_t rtt_seq;		      /* PSN being timed */
	uint32_t backoff;		      /* RTO multiplier, doubled per timeout */
	bool rtt_timing, have_rtt;
	uint16_t ent_base;
	struct mp_rng rng;
	/* stream connections: VPs of ACKs that freed window with nothing left
	 * to send, newest last, for the next message (mprdma_post) */
	uint16_t *spare;
	uint32_t spare_head, spare_n;
	/* receiver */
	struct tp_rxmap rx; /* rx.rcv_nxt: first PSN not yet received */
};

static uint16_t random_vp(struct mprdma_state *s, const struct mprdma_params *pp)
{
	return (uint16_t)(s->ent_base + rng_below(&s->rng, pp->paths));
}

static void mprdma_open(struct conn *c)
{
	const struct mprdma_params *pp = tp_params(c);
	struct mprdma_state *s = tp_priv(c);
	tp_book_open(&s->b, c->npkts);
	uint64_t w = pp->initial_window;
	if (w == 0) {
		/* sprayed over random VPs [S5]; its size: the paper gives no value,
		 * one BDP of the flow's path chosen so a flow starts at line rate as
		 * RDMA NICs do */
		w = tp_bdp_bytes(c);
	}
	uint64_t wp = (w + pp->common.mtu - 1) / pp->common.mtu;
	s->cwnd = (double)(wp < 1 ? 1 : wp);
	s->free_slots = (uint32_t)s->cwnd;
	s->ring_cap = (uint32_t)(4 * pp->bitmap + 4 * wp + 64);
	s->ring = mp_calloc(s->ring_cap, sizeof *s->ring);
	if (c->stream)
		s->spare = mp_calloc(s->ring_cap, sizeof *s->spare);
	rng_init(&s->rng, c->w->seed, RNG_CONN, c->id);
	s->ent_base = (uint16_t)rng_below(&s->rng, 65536);
	s->last_progress = tp_now(c);
	tp_activate(c);
}

static void mprdma_close(struct conn *c)
{
	struct mprdma_state *s = tp_priv(c);
	tp_book_close(&s->b);
	tp_rxmap_free(&s->rx);
	mp_free(s->ring);
	mp_free(s->spare);
}

/* More messages were posted on a stream connection (a queue pair): the book
 * and the receiver's bitmap cover their PSNs, and sending resumes. cwnd,
 * srtt/rttvar, snd_ooh, the RTO's back-off and the VPs carry over, as a NIC
 * keeps a QP's context between work requests. Posted while packets are in
 * flight, the ACK clock runs on. Posted after the window drained, no ACK is
 * coming to clock packets out, so (choice: the paper's flows never idle) the
 * window the last ACKs freed with nothing left to send is spent at once, one
 * packet on each of their VPs (newest first, at most cwnd less what is still
 * in flight); only a connection with no such VP restarts on random VPs, as
 * the first window does. */
static void mprdma_post(struct conn *c)
{
	struct mprdma_state *s = tp_priv(c);
	tp_book_grow(&s->b, c->npkts);
	if (s->b.snd_una == s->b.snd_nxt) /* nothing outstanding: no ACK to wait for */
		tp_book_forget(&s->b);
	double awnd = s->cwnd - (double)s->b.inflight - (double)s->ring_n;
	uint32_t n = awnd >= 1 ? (uint32_t)awnd : 0;
	if (n > s->spare_n)
		n = s->spare_n;
	for (uint32_t i = 0; i < n && s->ring_n < s->ring_cap; i++) {
		uint32_t k = (s->spare_head + s->spare_n - 1 - i) % s->ring_cap;
		s->ring[(s->ring_head + s->ring_n) % s->ring_cap] = s->spare[k];
		s->ring_n++;
	}
	s->spare_n = 0;
	if (!s->b.inflight && s->ring_n == 0)
		s->free_slots = (uint32_t)s->cwnd;
	if (s->ring_n || s->free_slots)
		tp_activate(c);
}

static uint32_t sendable(const struct mprdma_state *s)
{
	return s->b.npkts - s->b.snd_nxt + s->b.nlost;
}

static simtime_t rto_of(const struct conn *c)
{
	const struct mprdma_params *pp = tp_params(c);
	const struct mprdma_state *s = tp_priv((struct conn *)c);
	simtime_t r = s->have_rtt ? (simtime_t)(s->srtt + 4 * s->rttvar) : 4 * c->base_rtt;
	return (r > pp->rto_min ? r : pp->rto_min) * (s->backoff ? s->backoff : 1);
}

static void arm_timer(struct conn *c)
{
	struct mprdma_state *s = tp_priv(c);
	tp_timer_set(c, s->b.snd_una < s->b.snd_nxt ? s->last_progress + rto_of(c) : SIMTIME_MAX);
}

/* ---- sender: transmit -------------------------------------------------------- */
static struct packet *mprdma_next_packet(struct conn *c, unsigned flow)
{
	(void)flow;
	const struct mprdma_params *pp = tp_params(c);
	struct mprdma_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	if (!s->ring_n && !s->free_slots)
		return NULL; /* the window is full: the next ACK clocks */
	uint32_t psn = tp_book_next_lost(&s->b);
	bool retx = psn != UINT32_MAX;
	if (s->b.snd_una >= s->b.snd_nxt)
		s->last_progress = now; /* the first packet outstanding starts the RTO */
	if (!retx) {
		if (s->b.snd_nxt >= s->b.npkts)
			return NULL;
		psn = tp_book_new(&s->b);
	}
	uint16_t vp;
	if (s->ring_n) {
		vp = s->ring[s->ring_head];
		s->ring_head = (s->ring_head + 1) % s->ring_cap;
		s->ring_n--;
	} else {
		vp = random_vp(s, pp);
		s->free_slots--;
	}
	struct packet *p = tp_pkt_new(c, PKT_DATA, true);
	p->psn = psn;
	p->size = (uint16_t)(tp_psn_payload(c, psn) + pp->common.header);
	p->entropy = vp;
	p->flags |= PKT_F_ECT;
	if (tp_psn_last(c, psn))
		p->flags |= PKT_F_LAST;
	if (retx) {
		tp_book_resent(&s->b, psn);
		p->flags |= PKT_F_RETX;
		c->retx_bytes += p->size;
	} else if (!s->rtt_timing) {
		s->rtt_timing = true;
		s->rtt_seq = psn;
	}
	tp_book_sent(&s->b, psn);
	c->sent_bytes += p->size;
	if (c->timer_at == SIMTIME_MAX)
		arm_timer(c);
	return p;
}

/* ---- receiver ------------------------------------------------------------------ */
static void mprdma_receiver(struct conn *c, struct packet *p)
{
	const struct mprdma_params *pp = tp_params(c);
	struct mprdma_state *s = tp_priv(c);
	/* the L-packet bitmap [U3]; a hole Delta behind is reported lost (the
	 * paper gives no rule; see the header) */
	tp_perpkt_rx(c, p, &s->rx, s->b.npkts, pp->bitmap, pp->delta);
}

/* ---- sender: ACKs and NACKs ------------------------------------------------------ */
static void rtt_sample(struct mprdma_state *s, double r)
{
	/* srtt, rttvar [U4]; the paper gives no gains, RFC 6298's chosen as the
	 * usual estimator */
	s->backoff = 1; /* a fresh sample ends the back-off (RFC 6298 5.7) */
	if (!s->have_rtt) {
		s->have_rtt = true;
		s->srtt = r;
		s->rttvar = r / 2;
		return;
	}
	s->rttvar = 0.75 * s->rttvar + 0.25 * fabs(s->srtt - r);
	s->srtt = 0.875 * s->srtt + 0.125 * r;
}

static void spare_push(struct mprdma_state *s, uint16_t vp)
{
	if (s->spare_n == s->ring_cap) { /* full: the oldest goes */
		s->spare_head = (s->spare_head + 1) % s->ring_cap;
		s->spare_n--;
	}
	s->spare[(s->spare_head + s->spare_n) % s->ring_cap] = vp;
	s->spare_n++;
}

static void mprdma_sender(struct conn *c, struct packet *p)
{
	const struct mprdma_params *pp = tp_params(c);
	struct mprdma_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	bool nack = p->type == PKT_NACK, discarded = nack && (p->aux16 & 1);
	bool retx = p->flags & PKT_F_RETX;
	uint32_t psn = p->p0;
	uint32_t ooh1_before = s->b.snd_ooh1;
	uint16_t vp = p->entropy;
	if (tp_book_ack(c, &s->b, p, discarded))
		s->last_progress = now;
	if (s->rtt_timing && psn == s->rtt_seq && !discarded) {
		if (!retx)
			rtt_sample(s, (double)(now - p->ts));
		s->rtt_timing = false;
	} else if (s->rtt_timing && s->rtt_seq < s->b.snd_una) {
		s->rtt_timing = false; /* acknowledged by another packet */
	}
	if (s->b.nacked == s->b.npkts) {
		tp_pkt_free(c, p);
		tp_complete(c);
		return;
	}
	/* the hole the receiver reports, and every PSN still missing Delta below
	 * snd_ooh, are lost (the rule is tp_pktbook's, transport.h) */
	if (nack)
		tp_book_nack(&s->b, p, discarded, pp->delta, now);
	/* congestion control [U1]: one window for every VP, adjusted per ACK:
	 * -1/2 packet per ECN-marked ACK, +1/cwnd per unmarked one */
	if (p->flags & PKT_F_ECE)
		s->cwnd -= 0.5;
	else
		s->cwnd += 1.0 / s->cwnd;
	if (s->cwnd < 1)
		s->cwnd = 1;
	/* out-of-order aware path selection [U3]: PSN < snd_ool = snd_ooh - Delta
	 * cuts cwnd by one and releases nothing on this VP; ACKs of
	 * retransmissions exempt (the paper gives no rule; see the header) */
	bool pruned = !retx && !discarded && (uint64_t)psn + pp->delta + 1 < ooh1_before;
	if (pruned) {
		s->cwnd -= 1;
		if (s->cwnd < 1)
			s->cwnd = 1;
	} else {
		double awnd = s->cwnd - (double)s->b.inflight - (double)s->ring_n;
		uint32_t n = awnd >= 1 ? (uint32_t)awnd : 0;
		/* multi-path ACK clocking [T, U1]: the freed window goes to the ACK's
		 * VP, at most max_burst packets (the paper gives no value; see the
		 * option) */
		if (n > pp->max_burst)
			n = (uint32_t)pp->max_burst;
		uint32_t want = sendable(s);
		want = want > s->ring_n ? want - s->ring_n : 0;
		if (n > want) {
			n = want;
			if (s->spare) /* window freed with nothing to send: its VP */
				spare_push(s, vp);
		}
		for (uint32_t i = 0; i < n && s->ring_n < s->ring_cap; i++) {
			uint16_t e = vp;
			if (i == 0 && now >= s->probe_next) {
				/* path probing [U3, U6]: per RTT, probability p */
				s->probe_next =
				    now + (s->have_rtt ? (simtime_t)s->srtt : c->base_rtt);
				if (pp->p > 0 && rng_u01(&s->rng) < pp->p)
					e = random_vp(s, pp);
			}
			s->ring[(s->ring_head + s->ring_n) % s->ring_cap] = e;
			s->ring_n++;
		}
	}
	if (!s->b.inflight && s->ring_n == 0 && sendable(s)) {
		/* no ACK left to clock: the paper gives no rule; the window restarts
		 * on random VPs, as the first one does [S5] */
		s->free_slots = (uint32_t)s->cwnd;
	}
	tp_pkt_free(c, p);
	arm_timer(c);
	if (s->ring_n || s->free_slots)
		tp_activate(c);
}

static void mprdma_on_packet(struct conn *c, struct packet *p)
{
	if (p->type == PKT_DATA)
		mprdma_receiver(c, p);
	else
		mprdma_sender(c, p);
}

static void mprdma_on_timer(struct conn *c)
{
	struct mprdma_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	if (s->b.snd_una < s->b.snd_nxt && now >= s->last_progress + rto_of(c)) {
		/* timeout: everything outstanding again, restarted on random VPs;
		 * the paper gives no window rule, halving chosen as a loss is
		 * congestion here too */
		tp_book_timeout(&s->b, now);
		s->cwnd = s->cwnd / 2 < 1 ? 1 : s->cwnd / 2;
		/* RFC 6298 5.5: the timeout doubles until a fresh RTT sample.
		 * Without it a 32 -> 1 incast, whose queue delay outgrows
		 * srtt + 4 rttvar within one window, timed out again and again,
		 * each time sending a window on top of the packets still queued:
		 * 1.2 GB resent for 512 MB, 3x the ideal FCT (UDMP Fig. 10). */
		if (s->backoff < 64)
			s->backoff = s->backoff ? 2 * s->backoff : 2;
		s->ring_n = 0;
		s->free_slots = (uint32_t)s->cwnd;
		s->rtt_timing = false;
		s->last_progress = now;
	}
	arm_timer(c);
	if (sendable(s) && (s->ring_n || s->free_slots))
		tp_activate(c);
}

/* Defaults: the paper gives no value for Delta, L or p in any passage
 * retrievable here (see the header); the values are the ones this file has
 * always used, and independent public reimplementations of MP-RDMA use the
 * same three, which is a hint, not a source. */
static const struct opt_desc mprdma_opts[] = {
	TP_COMMON_OPTS(struct mprdma_params),
	/* the paper gives no value; one BDP lets a lone flow start at line rate
	 * and sprays the first window over many VPs [S5]. Two public
	 * reimplementations start from one packet instead; with that, UDMP's
	 * Fig. 6a tail ratio over MP-RDMA is 2.03, the paper's 2.0, but MP-RDMA
	 * starts on one VP and a lone 16 MB flow ends 11.5% late
	 * (experiments/udmp/mprdma_sensitivity.yaml, experiments/README.md) */
	{ "initial_window", OPT_SIZE, offsetof(struct mprdma_params, initial_window), "0", 0, 1e12,
	  "first cwnd, bytes, sent on random VPs; 0 = one BDP of the flow's path" },
	/* [U3]: Delta below L; the paper gives no value, 32 = L/2 chosen so a
	 * pruned VP's last packets still fit the bitmap */
	{ "Delta", OPT_UINT, offsetof(struct mprdma_params, delta), "32", 1, 1e6,
	  "OOO-aware path selection: ACKs more than Delta PSNs below snd_ooh prune their VP" },
	/* [U3, U4]: a fixed receiver bitmap, L itself 1 B of state; the paper
	 * gives no value, 64 chosen as one 64-bit word */
	{ "L", OPT_UINT, offsetof(struct mprdma_params, bitmap), "64", 1, 1e6,
	  "receiver bitmap, packets; packets beyond it are discarded and NACKed" },
	/* [U3, U6]: probing per RTT with probability p; the paper gives no value,
	 * 1% chosen so probing rarely disturbs the ACK clock */
	{ "p", OPT_DOUBLE, offsetof(struct mprdma_params, p), "0.01", 0, 1,
	  "path probing: probability per RTT that a released packet takes a new random VP" },
	/* the paper gives no value; every source port, hashing spreads them over
	 * all paths */
	{ "paths", OPT_UINT, offsetof(struct mprdma_params, paths), "65536", 1, 65536,
	  "UDP source ports VPs are drawn from" },
	/* the paper gives no value; an ACK frees one slot plus the 1/cwnd
	 * growth, so 2 is enough in steady state and bounds bursts after a
	 * window jump */
	{ "max_burst", OPT_UINT, offsetof(struct mprdma_params, max_burst), "2", 1, 1e6,
	  "packets one ACK may release" },
	/* the paper gives no value; 50 us is several base RTTs */
	{ "rto_min", OPT_TIME, offsetof(struct mprdma_params, rto_min), "50us", 1e6, 1e13,
	  "floor of the retransmission timeout srtt + 4 rttvar" },
	OPT_END
};

const struct transport_ops mprdma_transport_ops = {
	.name = "mprdma",
	.summary = "MP-RDMA: one ECN window, ACK-clocked virtual paths, OOO-aware path selection",
	.opts = mprdma_opts,
	.params_size = sizeof(struct mprdma_params),
	.priv_size = sizeof(struct mprdma_state),
	.open = mprdma_open,
	.post = mprdma_post,
	.next_packet = mprdma_next_packet,
	.on_packet = mprdma_on_packet,
	.on_timer = mprdma_on_timer,
	.close = mprdma_close,
};

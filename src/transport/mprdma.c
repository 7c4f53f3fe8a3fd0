/* mprdma.c - MP-RDMA, multi-path RDMA with ACK-clocked virtual paths.
 *
 * Follows: Lu et al., "Multi-Path Transport for RDMA in Datacenters", NSDI 2018,
 * whose design section covers congestion control with multi-path ACK clocking,
 * out-of-order aware path selection, synchronise operations and loss recovery.
 * The NSDI text itself was not in the reference library when this file was
 * checked (`search` over docs, pages, code and issues); what could be:
 *   [T]  the IEEE/ACM ToN 2019 extension (Chen, Lu et al., "MP-RDMA: Enabling
 *        RDMA With Multi-Path Transport in Datacenters"), abstract: multi-path
 *        ACK clocking without per-path state, OOO-aware path selection that
 *        bounds the out-of-order degree, a synchronise mechanism for in-order
 *        memory updates, 66 B of state per connection;
 *   [U1] UDMP (shared/seeds/004) section I: one cwnd for all paths, +1/cwnd
 *        per unmarked ACK, -1/2 per ECN-marked ACK, an ACK clocks out new
 *        packets when cwnd allows;
 *   [U3] UDMP III-D: snd_ool = snd_ooh - Delta, Delta below the bitmap size;
 *        an ACK whose PSN is below snd_ool cuts cwnd by one; the receiver
 *        keeps a fixed bitmap and NACKs packets beyond it; per-packet ACKs
 *        (III-C: under 4% overhead);
 *   [U4] UDMP Table I, MP-RDMA column: cwnd & inflate, snd_ooh & Delta, L,
 *        srtt, rttvar and rtt seq are the whole per-connection state;
 *   [U6] UDMP VI: MP-RDMA explores new paths periodically.
 * Rules below carry their source tag; "(not found)" marks a rule or constant
 * whose NSDI text could not be checked, kept as it was and worth re-checking
 * against the paper; "(choice)" marks what the paper does not cover.
 *
 * A virtual path (VP) is a UDP source port (the packet's entropy); the
 * connection keeps no per-VP state [T].
 * Congestion control [U1]: one window for all VPs; per ACK, cwnd += 1/cwnd if
 * the ACK is not ECN-marked, cwnd -= 1/2 if it is.
 * Multi-path ACK clocking [T, U1, U4]: each ACK echoes the VP its data packet
 * took; the window it frees (awnd = cwnd + inflate - (snd_nxt - snd_una), here
 * counted directly as cwnd - packets whose ACK is outstanding) is spent on new
 * packets on that same VP. The first window goes to random VPs (not found).
 * OOO-aware path selection [U3]: snd_ooh is the highest PSN acknowledged,
 * snd_ool = snd_ooh - Delta; an ACK whose PSN is below snd_ool came over a VP
 * slow enough to overrun the receiver's bitmap: cwnd -= 1 and the ACK sends
 * nothing, so that VP is pruned. ACKs of retransmissions are exempt (not
 * found: a retransmission's PSN is old by construction).
 * Path probing [U6]: once per RTT, with probability p, the packet an ACK
 * releases goes to a new random VP instead of the ACK's (the rate: not found).
 * Loss recovery: the receiver tracks L packets from the first missing PSN in a
 * bitmap; a packet beyond it is discarded and NACKed [U3]. A packet that
 * arrives Delta or more beyond a hole reports the hole by a NACK, and the
 * sender then resends, on ACK-clocked slots, the PSNs still unacknowledged
 * more than Delta below snd_ooh and the discarded one (not found: with OOO
 * bounded by Delta, such a hole is taken as a loss). A retransmission timeout
 * of srtt + 4 rttvar, one PSN timed at a time ([U4] names srtt, rttvar and
 * rtt seq; the RFC 6298 form is not found), resends everything outstanding.
 * Synchronise mechanism [T]: not modelled (choice); a connection here carries
 * one message (an RDMA WRITE) whose data may be placed in any order, and
 * completion already waits for every PSN, so no packet needs to wait for
 * those before it.
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
	uint32_t npkts, snd_nxt, snd_una, nacked;
	uint32_t snd_ooh1; /* snd_ooh + 1 (0 = nothing acknowledged yet) */
	uint32_t inflight; /* packets whose ACK/NACK has not returned */
	uint32_t nlost, lost_lo;
	uint64_t *acked, *lost;
	double cwnd; /* packets */
	simtime_t recover_time, last_progress, probe_next;
	uint32_t free_slots;		      /* sends allowed on random VPs */
	uint16_t *ring;			      /* VPs of slots released by ACKs */
	uint32_t ring_cap, ring_head, ring_n; /* ring_n = pending slots */
	double srtt, rttvar;		      /* ps */
	uint32_t rtt_seq;		      /* PSN being timed */
	bool rtt_timing, have_rtt;
	uint16_t ent_base;
	struct mp_rng rng;
	/* receiver */
	uint32_t rcv_nxt;
	uint64_t *rcvd;
};

static inline uint64_t pkt_payload(const struct conn *c, const struct mprdma_state *s, uint32_t psn)
{
	return tp_seg_payload(c, c->bytes, s->npkts, psn);
}

static uint16_t random_vp(struct mprdma_state *s, const struct mprdma_params *pp)
{
	return (uint16_t)(s->ent_base + rng_below(&s->rng, pp->paths));
}

static void mprdma_open(struct conn *c)
{
	const struct mprdma_params *pp = tp_params(c);
	struct mprdma_state *s = tp_priv(c);
	s->npkts = tp_npkts(c, c->bytes);
	uint64_t n = s->npkts;
	size_t words = (n + 63) / 64;
	s->acked = mp_calloc(words, sizeof *s->acked);
	s->lost = mp_calloc(words, sizeof *s->lost);
	s->rcvd = mp_calloc(words, sizeof *s->rcvd);
	uint64_t w = pp->initial_window;
	if (w == 0) {
		/* (not found) the first window is one BDP of the flow's path, so a flow
		 * starts at line rate as RDMA NICs do */
		w = tp_bdp_bytes(c);
	}
	uint64_t wp = (w + pp->common.mtu - 1) / pp->common.mtu;
	s->cwnd = (double)(wp < 1 ? 1 : wp);
	s->free_slots = (uint32_t)s->cwnd;
	s->ring_cap = (uint32_t)(4 * pp->bitmap + 4 * wp + 64);
	s->ring = mp_calloc(s->ring_cap, sizeof *s->ring);
	rng_init(&s->rng, c->w->seed, RNG_CONN, c->id);
	s->ent_base = (uint16_t)rng_below(&s->rng, 65536);
	s->lost_lo = UINT32_MAX;
	s->last_progress = tp_now(c);
	tp_activate(c);
}

static void mprdma_close(struct conn *c)
{
	struct mprdma_state *s = tp_priv(c);
	mp_free(s->acked);
	mp_free(s->lost);
	mp_free(s->rcvd);
	mp_free(s->ring);
}

/* ---- retransmission bookkeeping --------------------------------------------- */
static void mark_lost(struct mprdma_state *s, uint32_t psn)
{
	if (psn >= s->snd_nxt || bit_get(s->acked, psn) || bit_get(s->lost, psn))
		return;
	bit_set(s->lost, psn);
	s->nlost++;
	if (psn < s->lost_lo)
		s->lost_lo = psn;
}

static uint32_t next_lost(struct mprdma_state *s)
{
	while (s->nlost) {
		uint32_t i = s->lost_lo;
		MP_ASSERT(i < s->npkts);
		if (!bit_get(s->lost, i)) {
			s->lost_lo++;
			continue;
		}
		if (bit_get(s->acked, i)) {
			bit_clr(s->lost, i);
			s->nlost--;
			s->lost_lo++;
			continue;
		}
		return i;
	}
	s->lost_lo = UINT32_MAX;
	return UINT32_MAX;
}

static uint32_t sendable(const struct mprdma_state *s)
{
	return s->npkts - s->snd_nxt + s->nlost;
}

static simtime_t rto_of(const struct conn *c)
{
	const struct mprdma_params *pp = tp_params(c);
	const struct mprdma_state *s = tp_priv((struct conn *)c);
	simtime_t r = s->have_rtt ? (simtime_t)(s->srtt + 4 * s->rttvar) : 4 * c->base_rtt;
	return r > pp->rto_min ? r : pp->rto_min;
}

static void arm_timer(struct conn *c)
{
	struct mprdma_state *s = tp_priv(c);
	tp_timer_set(c, s->snd_una < s->snd_nxt ? s->last_progress + rto_of(c) : SIMTIME_MAX);
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
	uint32_t psn = next_lost(s);
	bool retx = psn != UINT32_MAX;
	if (s->snd_una >= s->snd_nxt)
		s->last_progress = now; /* the first packet outstanding starts the RTO */
	if (!retx) {
		if (s->snd_nxt >= s->npkts)
			return NULL;
		psn = s->snd_nxt++;
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
	p->size = (uint16_t)(pkt_payload(c, s, psn) + pp->common.header);
	p->entropy = vp;
	p->flags |= PKT_F_ECT;
	if (psn + 1 == s->npkts)
		p->flags |= PKT_F_LAST;
	if (retx) {
		bit_clr(s->lost, psn);
		s->nlost--;
		p->flags |= PKT_F_RETX;
		c->retx_bytes += p->size;
		if (s->inflight) /* the original is presumed lost */
			s->inflight--;
	} else if (!s->rtt_timing) {
		s->rtt_timing = true;
		s->rtt_seq = psn;
	}
	s->inflight++;
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
	uint32_t psn = p->psn;
	enum pkt_type reply = PKT_ACK;
	uint16_t discarded = 0;
	tp_rx_ood(c, psn);
	if (bit_get(s->rcvd, psn)) {
		c->dup_bytes += pkt_payload(c, s, psn);
	} else if (psn >= s->rcv_nxt + pp->bitmap) {
		reply = PKT_NACK; /* beyond the bitmap: discarded [U3] */
		discarded = 1;
	} else {
		bit_set(s->rcvd, psn);
		c->rcvd_bytes += pkt_payload(c, s, psn);
		while (s->rcv_nxt < s->npkts && bit_get(s->rcvd, s->rcv_nxt))
			s->rcv_nxt++;
		if (psn >= s->rcv_nxt + pp->delta)
			reply = PKT_NACK; /* a hole Delta behind: reported lost (not found) */
	}
	uint8_t fl = (uint8_t)(p->flags & PKT_F_RETX);
	if (p->flags & PKT_F_CE)
		fl |= PKT_F_ECE;
	p->type = (uint8_t)reply;
	p->cls = CLS_CTRL;
	p->size = (uint16_t)tp_common(c)->ack_size;
	p->src = c->dst->hid;
	p->dst = c->src->hid;
	p->p0 = psn;
	p->p1 = s->rcv_nxt;
	p->aux16 = discarded;
	p->flags = fl;
	tp_send(c, c->dst, p);
}

/* ---- sender: ACKs and NACKs ------------------------------------------------------ */
static void ack_one(struct conn *c, struct mprdma_state *s, uint32_t psn)
{
	if (bit_get(s->acked, psn))
		return;
	bit_set(s->acked, psn);
	s->nacked++;
	c->acked_bytes += pkt_payload(c, s, psn);
	s->last_progress = tp_now(c);
}

static void rtt_sample(struct mprdma_state *s, double r)
{
	/* srtt, rttvar [U4] with RFC 6298 gains (not found in the paper) */
	if (!s->have_rtt) {
		s->have_rtt = true;
		s->srtt = r;
		s->rttvar = r / 2;
		return;
	}
	s->rttvar = 0.75 * s->rttvar + 0.25 * fabs(s->srtt - r);
	s->srtt = 0.875 * s->srtt + 0.125 * r;
}

static void mprdma_sender(struct conn *c, struct packet *p)
{
	const struct mprdma_params *pp = tp_params(c);
	struct mprdma_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	bool nack = p->type == PKT_NACK, discarded = nack && (p->aux16 & 1);
	bool retx = p->flags & PKT_F_RETX;
	uint32_t psn = p->p0;
	uint32_t ooh1_before = s->snd_ooh1;
	uint16_t vp = p->entropy;
	if (s->inflight)
		s->inflight--;
	while (s->snd_una < p->p1)
		ack_one(c, s, s->snd_una++);
	if (!discarded) {
		ack_one(c, s, psn);
		if (psn + 1 > s->snd_ooh1)
			s->snd_ooh1 = psn + 1;
	}
	while (s->snd_una < s->npkts && bit_get(s->acked, s->snd_una))
		s->snd_una++;
	if (s->rtt_timing && psn == s->rtt_seq && !discarded) {
		if (!retx)
			rtt_sample(s, (double)(now - p->ts));
		s->rtt_timing = false;
	} else if (s->rtt_timing && s->rtt_seq < s->snd_una) {
		s->rtt_timing = false; /* acknowledged by another packet */
	}
	if (s->nacked == s->npkts) {
		tp_pkt_free(c, p);
		tp_complete(c);
		return;
	}
	if (nack) {
		if (discarded)
			mark_lost(s, psn);
		/* the hole the receiver reports, and every PSN still missing Delta
		 * below snd_ooh, are lost: once per round of retransmissions (a NACK
		 * for a packet sent before the round began tells nothing new) */
		if (p->ts >= s->recover_time) {
			s->recover_time = now;
			mark_lost(s, p->p1);
			for (uint32_t i = s->snd_una; (uint64_t)i + pp->delta < s->snd_ooh1; i++)
				mark_lost(s, i);
		}
	}
	/* congestion control [U1]: one window for every VP */
	if (p->flags & PKT_F_ECE)
		s->cwnd -= 0.5;
	else
		s->cwnd += 1.0 / s->cwnd;
	if (s->cwnd < 1)
		s->cwnd = 1;
	/* out-of-order aware path selection [U3]: PSN < snd_ool = snd_ooh - Delta */
	bool pruned = !retx && !discarded && (uint64_t)psn + pp->delta + 1 < ooh1_before;
	if (pruned) {
		s->cwnd -= 1;
		if (s->cwnd < 1)
			s->cwnd = 1;
	} else {
		double awnd = s->cwnd - (double)s->inflight - (double)s->ring_n;
		uint32_t n = awnd >= 1 ? (uint32_t)awnd : 0;
		/* (choice) at most max_burst packets per ACK, as a NIC would pace a
		 * window that jumps */
		if (n > pp->max_burst)
			n = (uint32_t)pp->max_burst;
		uint32_t want = sendable(s);
		want = want > s->ring_n ? want - s->ring_n : 0;
		if (n > want)
			n = want;
		for (uint32_t i = 0; i < n && s->ring_n < s->ring_cap; i++) {
			uint16_t e = vp;
			if (i == 0 && now >= s->probe_next) {
				/* path probing [U6], once per RTT */
				s->probe_next =
				    now + (s->have_rtt ? (simtime_t)s->srtt : c->base_rtt);
				if (pp->p > 0 && rng_u01(&s->rng) < pp->p)
					e = random_vp(s, pp);
			}
			s->ring[(s->ring_head + s->ring_n) % s->ring_cap] = e;
			s->ring_n++;
		}
	}
	if (s->inflight == 0 && s->ring_n == 0 && sendable(s)) {
		/* (choice) no ACK left to clock: restart with the window on random VPs */
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
	if (s->snd_una < s->snd_nxt && now >= s->last_progress + rto_of(c)) {
		/* timeout: everything outstanding again, the window halved (choice),
		 * restarted on random VPs */
		for (uint32_t i = s->snd_una; i < s->snd_nxt; i++)
			mark_lost(s, i);
		s->cwnd = s->cwnd / 2 < 1 ? 1 : s->cwnd / 2;
		s->inflight = 0;
		s->ring_n = 0;
		s->free_slots = (uint32_t)s->cwnd;
		s->rtt_timing = false;
		s->recover_time = now;
		s->last_progress = now;
	}
	arm_timer(c);
	if (sendable(s) && (s->ring_n || s->free_slots))
		tp_activate(c);
}

/* Defaults: Delta, L and p are the values this file has always used; the
 * NSDI text that sets them was not found (see the header), so they stand
 * unverified. Independent public reimplementations of MP-RDMA use the same
 * three values, which is a hint, not a source. */
static const struct opt_desc mprdma_opts[] = {
	TP_COMMON_OPTS(struct mprdma_params),
	/* not found; one BDP lets a lone flow start at line rate */
	{ "initial_window", OPT_SIZE, offsetof(struct mprdma_params, initial_window), "0", 0, 1e12,
	  "first cwnd, bytes, sent on random VPs; 0 = one BDP of the flow's path" },
	/* [U3]: Delta must stay below L; 32 not found in the paper's text */
	{ "Delta", OPT_UINT, offsetof(struct mprdma_params, delta), "32", 1, 1e6,
	  "OOO-aware path selection: ACKs more than Delta PSNs below snd_ooh prune their VP" },
	/* [U3, U4]: a fixed receiver bitmap (L fits in 1 byte of state); 64 not found */
	{ "L", OPT_UINT, offsetof(struct mprdma_params, bitmap), "64", 1, 1e6,
	  "receiver bitmap, packets; packets beyond it are discarded and NACKed" },
	/* [U6]: MP-RDMA probes paths periodically; 1% per RTT not found */
	{ "p", OPT_DOUBLE, offsetof(struct mprdma_params, p), "0.01", 0, 1,
	  "path probing: probability per RTT that a released packet takes a new random VP" },
	/* (choice) every source port; hashing spreads them over all paths */
	{ "paths", OPT_UINT, offsetof(struct mprdma_params, paths), "65536", 1, 65536,
	  "UDP source ports VPs are drawn from" },
	/* (choice) an ACK frees one slot plus the 1/cwnd growth, so 2 is enough
	 * in steady state and bounds bursts after a window jump */
	{ "max_burst", OPT_UINT, offsetof(struct mprdma_params, max_burst), "2", 1, 1e6,
	  "packets one ACK may release" },
	/* (choice) the paper's floor was not found; 50 us is several base RTTs */
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
	.next_packet = mprdma_next_packet,
	.on_packet = mprdma_on_packet,
	.on_timer = mprdma_on_timer,
	.close = mprdma_close,
};

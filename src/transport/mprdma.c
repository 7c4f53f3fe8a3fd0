/* mprdma.c - MP-RDMA, multi-path RDMA with ACK-clocked virtual paths.
 *
 * Follows Lu et al., "Multi-Path Transport for RDMA in Datacenters", NSDI 2018
 * [N], its journal version, Chen et al., "MP-RDMA: Enabling RDMA With
 * Multi-Path Transport in Datacenters", IEEE/ACM ToN 27(6) 2019 [T], and, where
 * the papers could not be read, the first author's own ns-3 model [A].
 * Sources, and what each gives:
 *   [N], [T] The stored copies of both papers return only their opening: [T]'s
 *        abstract (multi-path ACK clocking without per-path state; OOO-aware
 *        path selection bounding out-of-order delivery; a synchronise
 *        mechanism; 66 B of state per connection). No section of either.
 *   [A]  github.com/runtimexc/ns3-modify, commit 65bd7f0 (December 2020),
 *        src/internet/model/mp-rdma-socket-impl.cc and mp-rdma-socket.cc,
 *        written by Yuanwei Lu ([N]'s first author; his fixes are marked
 *        "Yuanwei patch 1-6" there). We follow that code as its author left
 *        it. The repository also holds edits by others: lines marked "lyj" in
 *        65bd7f0 itself (SENDER_RETX: an out-of-window ACK starts a
 *        retransmission round, and window sends go on during it; the extra
 *        resend of snd_una in "patch 6") and the later commits (146c682 ..
 *        ef36aa0, all rework of that sender-side retransmission). We leave
 *        them out: they are not the authors' design. The experiment script
 *        scratch/mp_rdma_leaf_spine/mp_rdma_leaf_spine.cc (first in 18c0c8a)
 *        gives the values the authors' runs used: InitialCwnd 8, ReceiverOOL
 *        (L) 64, SenderOOL (Delta) 32.
 *   [U]  Huang et al., "UDMP: Unified Delay-Driven Multipath Protocol for AI
 *        Clusters", IEEE/ACM ToN (2025), which restates MP-RDMA: I (one cwnd,
 *        +1/cwnd per unmarked ACK, -1/2 per marked one), III-D (snd_ool =
 *        snd_ooh - Delta; an ACK below it cuts cwnd by one; a fixed receiver
 *        bitmap, packets beyond it discarded and NACKed), IV-B Table I (cwnd
 *        & inflate, snd_ooh & Delta, L, srtt, rttvar and rtt seq per
 *        connection), VI (MP-RDMA explores new paths periodically).
 * Every rule and default below names its source; "ours" marks the few
 * choices none of them makes, with the reason.
 *
 * A virtual path (VP) is a UDP source port (the packet's entropy); the
 * connection keeps no per-VP state [T]. New VPs are numbered in order from a
 * per-connection random base (ent_base + vp_next, modulo `paths`) [A: path
 * ids m_maxPathId++].
 *
 * Congestion control [A, U]: one window for all VPs, adjusted on every ACK
 * and NACK. It starts at initial_window packets (8 [A script]; the model's
 * own default is 1) in slow start: +1 per unmarked ACK, until the first
 * ECN-marked ACK, which takes -1/2 and ends slow start for good. Then +1/cwnd
 * per unmarked ACK, -1/2 per marked one (the cut is per marked ACK, not once
 * per RTT). cwnd never falls below one packet [A]. (Ours, cwnd_validation:
 * an unmarked ACK grows cwnd only while half of it or more is in the network,
 * so a NIC-limited flow does not grow it without bound; see the option.)
 * Per RTT these rules gain 1 - p and lose cwnd p / 2 for a fraction p of
 * marked ACKs, so cwnd settles at 2 (1 - p) / p: flows share a bottleneck
 * equally only while they see equal fractions. Under a step marker (Kmin =
 * Kmax) flows started together can lock into unequal ones, and after a cut a
 * window regains one packet per RTT; both follow from [A]'s ReceivedAck and
 * are kept (tests/test_fairness.c, experiments/udmp/README.md).
 * First window [A]: sprayed, each packet on a new VP.
 * Multi-path ACK clocking [A, T, U]: each ACK echoes the VP its data took; the
 * window it frees is spent on new packets on that same VP, at most two per ACK
 * [A: burst_control_max = 2]. The window free is counted as cwnd minus the
 * packets whose ACK is outstanding (tp_pktbook's count, per copy) and minus
 * the sends already granted; [A] counts awnd = cwnd + inflate - (snd_nxt -
 * snd_una), the same number while nothing is lost.
 * OOO-aware path selection [A, U]: snd_ooh is the highest PSN an ACK (not a
 * NACK) reported; an ACK below snd_ool = snd_ooh - Delta came over a VP slow
 * enough to overrun the receiver's bitmap: it cuts cwnd by one (if its packet
 * was sent after the last recovery began) and sends nothing, so that VP is
 * pruned; an ACK of a retransmission may send [A: "yuanwei patch 2"]. An ACK
 * more than 2 Delta below snd_una is ignored altogether [A: accept_point].
 * Path probing [A]: off (ENABLE_PROBING 0). When on (probe: cwnd), a packet
 * goes to a new VP each time cwnd grows past a whole packet, every time until
 * 64 VPs were used and every tenth time after. probe: random is the rule of
 * [U] III-D/VI as this file had it before [A] could be read: once per RTT,
 * with probability p, the packet an ACK releases takes a random VP.
 * Receiver [A, U]: a bitmap of L packets from the first missing PSN; a packet
 * beyond it is discarded and answered by a NACK; every other packet by an
 * ACK. No NACK for a hole (hole_nack: the rule this file had before, a NACK
 * for a packet Delta or more beyond a hole).
 * Loss recovery [A]: a NACK starts a recovery round, unless one is running:
 * the recovery point is snd_nxt, snd_ooh moves up to snd_nxt - 1, and the
 * packets from snd_una up to the recovery point are resent in order, one per
 * clocking ACK (each NACK, each ACK of a retransmission and each ACK at or
 * above snd_ool), on that ACK's VP, whether or not their own ACK already came
 * (the sender keeps no per-packet state [T]); a NACK below the resend point
 * moves it back there [A: "Yuanwei patch 6"]. Once all are resent, each
 * clocking ACK sends one new packet [A: "patch 2"]; the round ends when
 * snd_una reaches the recovery point. recovery: selective is this file's
 * former rule (tp_pktbook's: PSNs still missing Delta below snd_ooh are
 * marked lost and resent on the ACK clock).
 * Timeout [A]: the window goes back to initial_window in slow start, resent
 * from snd_una in order (PSNs already acknowledged are skipped here; [A]
 * rewinds snd_nxt and resends them too). [A] uses srtt + max(1 ms, 4 rttvar)
 * with a 10 ms floor (ns-3's TCP attribute defaults, which its scripts leave
 * as they are) and restarts the timer on every send; ours: srtt + 4 rttvar
 * with a 50 us floor, from the last progress, doubled per timeout until a
 * fresh RTT sample (RFC 6298 5.5), because a 10 ms floor would let a
 * single tail loss cost a hundred RTTs of these fabrics. srtt and rttvar time
 * one PSN at a time ([U] Table I's rtt seq; [A] samples every ACK) with the
 * RFC 6298 gains ([A]'s estimator, ns-3's RttMeanDeviation, uses the same).
 * Synchronise mechanism [T]: not modelled; a connection here carries RDMA
 * WRITEs whose data may be placed in any order, and completion already waits
 * for every PSN.
 *
 * Stream connections (a queue pair, transport/conn.h): cwnd, slow start, srtt,
 * snd_ooh, the recovery state and the VPs carry from one message to the next
 * (mprdma_post).
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
#include "transport/conn.h"
#include "transport/pktbook.h"
#include "transport/rxmap.h"
#include "transport/transport.h"

enum mprdma_probe { PROBE_OFF, PROBE_CWND, PROBE_RANDOM };
enum mprdma_recovery { RECOVERY_INORDER, RECOVERY_SELECTIVE };

struct mprdma_params {
	struct tp_common common;
	uint64_t initial_window; /* packets; 0 = one BDP */
	bool slow_start;
	bool cwnd_validation; /* grow cwnd only while it limits sending */
	uint64_t delta;	      /* Delta, packets */
	uint64_t bitmap;      /* L, packets */
	int probe;	      /* enum mprdma_probe */
	double p;	      /* probe: random, probability per RTT */
	bool hole_nack;	      /* the receiver NACKs a packet Delta beyond a hole */
	int recovery;	      /* enum mprdma_recovery */
	uint64_t paths;	      /* UDP source ports VPs are drawn from */
	uint64_t max_burst;   /* packets one ACK may release */
	simtime_t rto_min;    /* ps */
};

struct mprdma_state {
	/* sender */
	struct tp_pktbook b;
	double cwnd;	 /* packets */
	uint32_t cwnd0;	 /* the first window, packets */
	bool slow_start; /* until the first ECN-marked ACK */
	simtime_t last_progress, probe_next;
	uint32_t free_slots;		      /* sends allowed, each on a new VP */
	uint16_t *ring;			      /* VPs of slots released by ACKs */
	uint32_t ring_cap, ring_head, ring_n; /* ring_n = pending slots */
	uint32_t snd_ooh1;		      /* highest PSN an ACK reported + 1 */
	/* recovery (inorder) */
	bool recovering;
	uint32_t recovery_point; /* snd_nxt when the round began */
	uint32_t retx_next;	 /* next PSN to resend in order */
	uint32_t retx_due;	 /* slots granted to resends, not yet used */
	/* VPs */
	uint32_t vp_next;     /* new VPs used */
	uint32_t probe_count; /* probe: cwnd, whole-packet cwnd increases */
	bool probe_now;	      /* the next slot released takes a new VP */
	double srtt, rttvar;  /* ps */
	uint32_t rtt_seq;     /* PSN being timed */
	uint32_t backoff;     /* RTO multiplier, doubled per timeout */
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

/* [A]: path ids are handed out in order */
static uint16_t new_vp(struct mprdma_state *s, const struct mprdma_params *pp)
{
	return (uint16_t)(s->ent_base + s->vp_next++ % pp->paths);
}

static void mprdma_open(struct conn *c)
{
	const struct mprdma_params *pp = tp_params(c);
	struct mprdma_state *s = tp_priv(c);
	tp_book_open(&s->b, c->npkts);
	uint64_t wp = pp->initial_window;
	if (wp == 0) /* this file's former first window: one BDP of the path */
		wp = (tp_bdp_bytes(c) + pp->common.mtu - 1) / pp->common.mtu;
	s->cwnd0 = (uint32_t)(wp < 1 ? 1 : wp);
	s->cwnd = s->cwnd0;
	s->slow_start = pp->slow_start;
	s->free_slots = s->cwnd0;
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

static void ring_push(struct mprdma_state *s, uint16_t vp)
{
	if (s->ring_n < s->ring_cap) {
		s->ring[(s->ring_head + s->ring_n) % s->ring_cap] = vp;
		s->ring_n++;
	}
}

/* More messages were posted on a stream connection (a queue pair): the book
 * covers their PSNs, and sending resumes. cwnd, slow start, srtt/rttvar,
 * snd_ooh, the RTO's back-off and the VPs carry over, as a NIC keeps a QP's
 * context between work requests. Posted while packets are in flight, the ACK
 * clock runs on. Posted after the window drained, no ACK is coming to clock
 * packets out ([A]'s sender then waits for the next ACK, which never comes;
 * its flows never idle), so (ours) the window the last ACKs freed with
 * nothing left to send is spent at once, one packet on each of their VPs
 * (newest first, at most cwnd less what is still in flight); only a
 * connection with no such VP restarts as the first window does. */
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
	for (uint32_t i = 0; i < n; i++)
		ring_push(s, s->spare[(s->spare_head + s->spare_n - 1 - i) % s->ring_cap]);
	s->spare_n = 0;
	if (!s->b.inflight && s->ring_n == 0)
		s->free_slots = (uint32_t)s->cwnd;
	if (s->ring_n || s->free_slots)
		tp_activate(c);
}

/* PSNs waiting to go out: new ones, marked ones, in-order resends. */
static uint32_t sendable(const struct mprdma_state *s)
{
	uint32_t n = s->b.npkts - s->b.snd_nxt + s->b.nlost;
	if (s->recovering && s->retx_next < s->recovery_point)
		n += s->recovery_point - s->retx_next;
	return n;
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
	uint32_t psn = UINT32_MAX;
	bool retx = false, marked = false;
	if (s->retx_due) { /* [A]: the recovery round's resends, in order */
		if (s->retx_next < s->b.snd_una)
			s->retx_next = s->b.snd_una;
		if (s->recovering && s->retx_next < s->recovery_point) {
			psn = s->retx_next++;
			retx = true;
		}
		s->retx_due--;
	}
	if (!retx) {
		psn = tp_book_next_lost(&s->b);
		retx = marked = psn != UINT32_MAX;
	}
	if (s->b.snd_una >= s->b.snd_nxt)
		s->last_progress = now; /* the first packet outstanding starts the RTO */
	if (!retx) {
		if (s->b.snd_nxt >= s->b.npkts)
			return NULL;
		psn = tp_book_new(&s->b);
	} else if (!marked && tp_book_is_lost(&s->b, psn)) {
		marked = true; /* resent in order, and marked by a timeout too */
	}
	uint16_t vp;
	if (s->ring_n) {
		vp = s->ring[s->ring_head];
		s->ring_head = (s->ring_head + 1) % s->ring_cap;
		s->ring_n--;
	} else {
		vp = new_vp(s, pp); /* the first window [A] */
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
		if (marked)
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
	/* the L-packet bitmap [A, U]; a hole Delta behind is NACKed only with
	 * hole_nack (this file's former rule) */
	tp_perpkt_rx(c, p, &s->rx, s->b.npkts, pp->bitmap, pp->hole_nack ? pp->delta : pp->bitmap);
}

/* ---- sender: ACKs and NACKs ------------------------------------------------------ */
static void rtt_sample(struct mprdma_state *s, double r)
{
	/* srtt, rttvar [U Table I] with RFC 6298's gains, as [A]'s estimator */
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

/* The VP of the next slot an ACK on `vp` releases: its own, or a new one
 * when probing says so. */
static uint16_t slot_vp(struct conn *c, struct mprdma_state *s, uint16_t vp, bool first)
{
	const struct mprdma_params *pp = tp_params(c);
	simtime_t now = tp_now(c);
	if (pp->probe == PROBE_CWND && s->probe_now) {
		s->probe_now = false;
		return new_vp(s, pp);
	}
	if (pp->probe == PROBE_RANDOM && first && now >= s->probe_next) {
		/* [U] III-D/VI: per RTT, probability p */
		s->probe_next = now + (s->have_rtt ? (simtime_t)s->srtt : c->base_rtt);
		if (pp->p > 0 && rng_u01(&s->rng) < pp->p)
			return random_vp(s, pp);
	}
	return vp;
}

/* Window sends on the ACK's VP [A: MpRDMASend]: what cwnd leaves free, at most
 * max_burst. */
static void clock_window(struct conn *c, struct mprdma_state *s, uint16_t vp)
{
	const struct mprdma_params *pp = tp_params(c);
	double awnd = s->cwnd - (double)s->b.inflight - (double)s->ring_n;
	uint32_t n = awnd >= 1 ? (uint32_t)awnd : 0;
	if (n > pp->max_burst)
		n = (uint32_t)pp->max_burst;
	uint32_t want = sendable(s);
	want = want > s->ring_n ? want - s->ring_n : 0;
	if (n > want) {
		n = want;
		if (s->spare) /* window freed with nothing to send: its VP */
			spare_push(s, vp);
	}
	for (uint32_t i = 0; i < n && s->ring_n < s->ring_cap; i++)
		ring_push(s, slot_vp(c, s, vp, i == 0));
}

/* A recovery round begins [A]. */
static void recovery_start(struct mprdma_state *s)
{
	s->recovering = true;
	if (s->retx_next < s->b.snd_una)
		s->retx_next = s->b.snd_una;
	s->recovery_point = s->b.snd_nxt;
	s->snd_ooh1 = s->b.snd_nxt; /* snd_ooh = snd_nxt - 1 */
	s->retx_due = 0;
}

static void mprdma_sender(struct conn *c, struct packet *p)
{
	const struct mprdma_params *pp = tp_params(c);
	struct mprdma_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	bool nack = p->type == PKT_NACK, discarded = nack && tp_nack_discarded(p);
	bool retx = p->flags & PKT_F_RETX;
	uint32_t psn = tp_ack_psn(p);
	uint32_t una_before = s->b.snd_una;
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
	if (s->recovering && s->b.snd_una >= s->recovery_point)
		s->recovering = false; /* [A]: the round is over */
	/* every PSN sent is acknowledged: copies still counted in flight are
	 * duplicates whose feedback was lost (a resend dropped in the network),
	 * and [A]'s window, cwnd + inflate - (snd_nxt - snd_una), no longer
	 * counts them; waiting for them stalled a connection for ever (no PSN
	 * outstanding, so no timeout either) */
	if (s->b.snd_una == s->b.snd_nxt)
		tp_book_forget(&s->b);
	/* [A: accept_point] an ACK more than 2 Delta below snd_una (as it was)
	 * is outdated: it counts only as a packet out of the network */
	if ((uint64_t)psn + 2 * pp->delta < una_before) {
		tp_pkt_free(c, p);
		arm_timer(c);
		if (s->ring_n || s->free_slots)
			tp_activate(c);
		return;
	}
	/* congestion control [A, U]: one window for every VP, per ACK or NACK;
	 * (ours, cwnd_validation) an unmarked ACK grows it only while at least
	 * half of it is in the network (Linux's slow-start test of a
	 * window-limited sender): a NIC that cannot send the window keeps the
	 * rest waiting, and the window stops at twice what it sends per RTT */
	bool grow = !pp->cwnd_validation || s->cwnd < 2.0 * (s->b.inflight + 1);
	if (p->flags & PKT_F_ECE) {
		s->cwnd -= 0.5;
		s->slow_start = false;
	} else if (!grow) {
		/* NIC-limited: the window stays */
	} else if (s->slow_start) {
		s->cwnd += 1;
	} else {
		double before = floor(s->cwnd);
		s->cwnd += 1.0 / s->cwnd;
		if (pp->probe == PROBE_CWND && floor(s->cwnd) > before) {
			/* [A]: a new VP per whole-packet increase while fewer than
			 * 64 were used, then one in ten */
			s->probe_count++;
			if (s->vp_next < 64 || s->probe_count % 10 == 0)
				s->probe_now = true;
		}
	}
	if (s->cwnd < 1)
		s->cwnd = 1;
	if (pp->recovery == RECOVERY_SELECTIVE) {
		/* this file's former rule: the reported hole, and every PSN still
		 * missing Delta below snd_ooh, are lost (tp_pktbook's rule) */
		if (nack)
			tp_book_nack(&s->b, p, discarded, pp->delta, now);
	} else if (nack) {
		if (!s->recovering)
			recovery_start(s);
		if (psn < s->retx_next && psn >= s->b.snd_una)
			s->retx_next = psn; /* [A: patch 6] back to the discarded PSN */
		if (s->retx_next < s->recovery_point) {
			s->retx_due++; /* [A]: the NACK clocks one resend on its VP */
			ring_push(s, vp);
		}
	}
	uint32_t ooh1 = pp->recovery == RECOVERY_SELECTIVE ? s->b.snd_ooh1 : s->snd_ooh1;
	if (!nack && psn + 1 > s->snd_ooh1)
		s->snd_ooh1 = psn + 1;
	if (nack && pp->recovery != RECOVERY_SELECTIVE)
		goto done;
	/* out-of-order aware path selection [A, U]: PSN < snd_ool = snd_ooh -
	 * Delta sends nothing on this VP and cuts cwnd by one; an ACK of a
	 * retransmission still clocks */
	bool late = !discarded && (uint64_t)psn + pp->delta + 1 < ooh1;
	/* [A] cuts for a packet sent since the last recovery round began
	 * (recovery_point is 0 before the first); the former rule exempted ACKs
	 * of retransmissions instead */
	if (late && (pp->recovery == RECOVERY_SELECTIVE ? !retx : psn >= s->recovery_point)) {
		s->cwnd -= 1;
		if (s->cwnd < 1)
			s->cwnd = 1;
	}
	if (late && !retx)
		goto done;
	if (s->recovering) {
		/* [A]: in a recovery round each clocking ACK sends one packet on
		 * its VP: the next resend, or once all are resent a new one */
		if (s->retx_next < s->recovery_point)
			s->retx_due++;
		if (sendable(s) > s->ring_n)
			ring_push(s, vp);
	} else {
		clock_window(c, s, vp);
	}
done:
	if (!s->b.inflight && s->ring_n == 0 && sendable(s)) {
		/* no ACK left to clock (ours: [A] waits for its timeout): the
		 * window restarts as the first one does */
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
	const struct mprdma_params *pp = tp_params(c);
	struct mprdma_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	if (s->b.snd_una < s->b.snd_nxt && now >= s->last_progress + rto_of(c)) {
		/* [A: MacroTimeout] everything outstanding again, from snd_una, the
		 * window back to the first one in slow start, sprayed on new VPs */
		tp_book_timeout(&s->b, now);
		s->cwnd = s->cwnd0;
		s->slow_start = pp->slow_start;
		s->recovering = false;
		s->retx_due = 0;
		/* ours, RFC 6298 5.5: the timeout doubles until a fresh RTT sample.
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

/* Defaults: the authors' model and scripts [A]; the former choices of this
 * file stay as option values for comparison
 * (experiments/udmp/mprdma_sensitivity.yaml). */
static const struct opt_desc mprdma_opts[] = {
	TP_COMMON_OPTS(struct mprdma_params),
	/* [A]: InitialCwnd 8 in the authors' script (the model's attribute
	 * default is 1); 0 is this file's former first window, one BDP */
	{ "initial_window", OPT_UINT, offsetof(struct mprdma_params, initial_window), "8", 0, 1e9,
	  "first cwnd, packets, each on a new VP; 0 = one BDP of the flow's path" },
	/* [A]: slow start until the first ECN-marked ACK */
	{ "slow_start", OPT_BOOL, offsetof(struct mprdma_params, slow_start), "true", 0, 0,
	  "+1 packet per unmarked ACK until the first ECN-marked one (false: +1/cwnd from the "
	  "start)" },
	/* ours (RFC 7661's principle): [A]'s window grows on every unmarked
	 * ACK, and its NIC is a 1000-packet queue (its script) that drops what an
	 * unbounded window pushes into it; mpsim's NIC pulls packets and never
	 * drops, so a flow alone behind its own NIC, which never sees a mark,
	 * grew its window without bound in slow start: in Fig. 4b
	 * (experiments/udmp/incast3.yaml) the two flows joining it got 0.03 Gb/s
	 * for 25 ms while its window came down by 1/2 per marked ACK */
	{ "cwnd_validation", OPT_BOOL, offsetof(struct mprdma_params, cwnd_validation), "true", 0,
	  0,
	  "an unmarked ACK grows cwnd only while half of it or more is in the network (false: "
	  "on every unmarked ACK, as the authors' model)" },
	/* [A]: SenderOOL 32 in the authors' script (Delta below L, [U] III-D) */
	{ "Delta", OPT_UINT, offsetof(struct mprdma_params, delta), "32", 1, 1e6,
	  "OOO-aware path selection: ACKs more than Delta PSNs below snd_ooh prune their VP" },
	/* [A]: ReceiverOOL 64 in the authors' script */
	{ "L", OPT_UINT, offsetof(struct mprdma_params, bitmap), "64", 1, 1e6,
	  "receiver bitmap, packets; packets beyond it are discarded and NACKed" },
	/* [A]: ENABLE_PROBING 0 */
	{ "probe", OPT_ENUM, offsetof(struct mprdma_params, probe), "off", 0, 0,
	  "path probing: off (the authors' model), cwnd (theirs when enabled: a new VP per "
	  "whole-packet cwnd increase, all of the first 64 then one in ten) or random (p per "
	  "RTT)",
	  (const char *const[]){ "off", "cwnd", "random", NULL } },
	/* ours, used only by probe: random ([U] gives the rule, no value; 1% per
	 * RTT was this file's former default) */
	{ "p", OPT_DOUBLE, offsetof(struct mprdma_params, p), "0.01", 0, 1,
	  "probe: random, probability per RTT that a released packet takes a random VP" },
	/* [A, U]: NACKs only for packets beyond the bitmap */
	{ "hole_nack", OPT_BOOL, offsetof(struct mprdma_params, hole_nack), "false", 0, 0,
	  "the receiver also NACKs a packet landing Delta or more beyond a hole" },
	/* [A]: resend in order from snd_una */
	{ "recovery", OPT_ENUM, offsetof(struct mprdma_params, recovery), "inorder", 0, 0,
	  "loss recovery: inorder (the authors': from snd_una up to snd_nxt at the NACK, one "
	  "per ACK) or selective (PSNs missing Delta below snd_ooh)",
	  (const char *const[]){ "inorder", "selective", NULL } },
	/* ours: every source port, hashing spreads them over all paths ([A] uses
	 * path ids 0, 1, 2, ... of its own routing) */
	{ "paths", OPT_UINT, offsetof(struct mprdma_params, paths), "65536", 1, 65536,
	  "UDP source ports VPs are drawn from" },
	/* [A]: burst_control_max = 2 */
	{ "max_burst", OPT_UINT, offsetof(struct mprdma_params, max_burst), "2", 1, 1e6,
	  "packets one ACK may release" },
	/* ours ([A]: 10 ms; see the header) */
	{ "rto_min", OPT_TIME, offsetof(struct mprdma_params, rto_min), "50us", 1e6, 1e13,
	  "floor of the retransmission timeout srtt + 4 rttvar" },
	OPT_END
};

static void mprdma_trace(const struct conn *c, struct tp_trace *t)
{
	t->cwnd = ((const struct mprdma_state *)c->priv)->cwnd * (double)tp_common(c)->mtu;
}

const struct transport_ops mprdma_transport_ops = {
	.trace = mprdma_trace,
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

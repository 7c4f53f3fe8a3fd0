/* udmp.c - UDMP, the Unified Delay-driven Multipath Protocol.
 *
 * Follows: Huang et al., "UDMP: Unified Delay-Driven Multipath Protocol for AI
 * Clusters", IEEE/ACM Transactions on Networking, 2025: Algorithm 1 (the
 * delay-gradient congestion control loop and the token pool), Algorithm 2
 * (delay-assisted ACK-clocked load balancing), section III-D (OOO-aware path
 * selection, the BDP-sized receiver bitmap with NACKs, new path exploration).
 *
 * Sender, per connection (no per-path state):
 *   rate       the connection's sending rate (bit/s), moved once per RTT by the
 *              gradient of smooth_rtt (Alg. 1 lines 25-37) and capped on every
 *              ACK once smooth_rtt > T_high (lines 22-24);
 *   bytes_pool filled at `rate` over the time between ACKs (lines 20-21);
 *   token_pool packets that may be sent; starts at one BDP (line 2), each
 *              packet sent takes one (line 13), and each ACK moves 0, 1 or 2
 *              packets' worth from bytes_pool into it depending on its RTT
 *              (Alg. 2), the new packets going out on the ACK's path.
 * A path is a UDP source port (the packet's entropy), one of `paths` ports
 * from a per-connection random base. In the first RTT packets go to random
 * paths (lines 10-12); afterwards each new packet goes on the path of the ACK
 * that released its token, except that once per RTT, with probability p, the
 * next one goes to a fresh random port (new path exploration, III-D).
 *
 * OOO-aware path selection (III-D): an ACK for a PSN more than Delta below the
 * highest PSN acknowledged so far (snd_ooh) comes from a path too slow for the
 * receiver's bitmap and clocks nothing out; unlike MP-RDMA the window is not cut.
 *
 * Receiver: a bitmap of `bitmap` packets (one BDP by default) starting at the
 * first missing PSN; a packet beyond it is discarded and answered by a NACK
 * (III-D, "Retransmission Design"); every other data packet gets its own ACK.
 * III-D has the bitmap's overflow as the only loss signal ("it is rare for the
 * degree of out-of-order packets to exceed the size of the bitmap. This design
 * helps mitigate unnecessary retransmissions"), so by default a hole is reported
 * only by that overflow (and the timeout). `hole_nack` adds MP-RDMA's receiver
 * rule, a NACK for a packet Delta or more beyond a hole: it repairs real losses
 * sooner (41% fewer bytes resent in the lossy unit test) but resends reordered
 * packets as well (2:1 oversubscribed permutation, Fig. 8: 387 MB resent with no
 * drop, against 189 MB without it, and a 7% longer mean FCT).
 *
 * Packet fields: DATA psn, entropy = path, ts = send time. ACK and NACK:
 * p0 = the PSN acknowledged (or discarded), p1 = cumulative (every PSN below
 * it arrived), aux16 = 1 if the data packet was discarded, entropy = the data
 * packet's path, ts echoed, RETX echoed.
 *
 * Where the paper is silent, the choices are marked "(choice)" below.
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

enum udmp_spray { SPRAY_RANDOM, SPRAY_RR };

struct udmp_params {
	struct tp_common common;
	double alpha;	     /* EWMA gain of smooth_rtt (Alg. 1 line 18) */
	double g_min;	     /* smallest gradient magnitude of an increase */
	simtime_t rtt_tie;   /* ps; RTTs closer than this are equal (Alg. 2 line 2) */
	simtime_t t_high;    /* T_high, ps; 0 = 2 x the connection's base RTT */
	double p;	     /* new path exploration probability per RTT */
	uint64_t bitmap;     /* receiver bitmap, packets; 0 = one BDP */
	uint64_t delta;	     /* Delta of the OOO-aware path selection, packets */
	bool hole_nack;	     /* the receiver reports a hole Delta behind */
	bool ooo_aware;	     /* OOO-aware path selection on */
	uint64_t paths;	     /* num_paths: UDP source ports to choose from */
	uint64_t min_rate;   /* bit/s, floor of the rate (choice) */
	uint64_t fixed_rate; /* bit/s; nonzero = congestion control off (Fig. 3) */
	int spray;	     /* enum udmp_spray: the first RTT's paths */
	simtime_t rto_min;   /* ps */
};

struct udmp_state {
	/* sender: reliability */
	struct tp_pktbook b;
	simtime_t last_progress;
	simtime_t pace_at; /* paced restart: next token due (SIMTIME_MAX = none) */
	/* Alg. 1 */
	bool first_rtt;
	bool have_rtt;
	bool explore; /* the next ACK-clocked packet takes a fresh path */
	bool addtoken_started;
	int64_t token_pool;
	int64_t tail_wnd;	/* token_pool + packets in flight when the last new PSN went out */
	double bytes_pool;	/* bytes */
	double rate, line;	/* bit/s */
	double smooth_rtt;	/* ps */
	double last_smooth_rtt; /* ps */
	simtime_t last_update_time;
	simtime_t last_addtoken_time;
	uint32_t pkts_ignored, pkts_to_ignore;
	simtime_t t_high;
	uint32_t pkt; /* pkt_size: bytes on the wire of a full packet */
	/* paths of tokens released by ACKs, oldest first */
	uint16_t *ring;
	uint32_t ring_cap, ring_head, ring_n;
	uint16_t ent_base;
	uint32_t spray_next; /* spray: rr, the next path of the first RTT */
	struct mp_rng rng;
	/* receiver */
	uint32_t win;	    /* bitmap size, packets */
	uint32_t delta;	    /* Delta in use: below the bitmap size */
	struct tp_rxmap rx; /* rx.rcv_nxt: first PSN not yet received */
};

static uint16_t random_path(struct udmp_state *s, const struct udmp_params *pp)
{
	return (uint16_t)(s->ent_base + rng_below(&s->rng, pp->paths));
}

static void udmp_open(struct conn *c)
{
	const struct udmp_params *pp = tp_params(c);
	struct udmp_state *s = tp_priv(c);
	tp_book_open(&s->b, c->npkts);
	s->pkt = (uint32_t)pp->common.mtu;
	s->line = (double)c->src->node.ports[c->rail].rate_bps;
	s->rate = pp->fixed_rate ? (double)pp->fixed_rate : s->line;
	/* Alg. 1 line 2: one BDP of tokens for the first RTT, at the starting rate
	 * (the path's bottleneck, or the fixed token rate) */
	uint64_t r0 = pp->fixed_rate ? pp->fixed_rate : c->bottleneck_bps;
	unsigned __int128 bdp = (unsigned __int128)r0 * c->base_rtt / 8u / PS_PER_S;
	uint64_t bdp_pkts = ((uint64_t)bdp + s->pkt - 1) / s->pkt;
	if (bdp_pkts < 1)
		bdp_pkts = 1;
	s->token_pool = (int64_t)bdp_pkts;
	s->first_rtt = true;
	/* III-D: the receiver's bitmap is one BDP of the path (bottleneck x base
	 * RTT): a property of the NIC and the network, not of a pinned token rate */
	uint64_t path_bdp = (tp_bdp_bytes(c) + s->pkt - 1) / s->pkt;
	s->win = (uint32_t)(pp->bitmap ? pp->bitmap : path_bdp > 1 ? path_bdp : 1);
	/* Delta must stay below the bitmap (III-D); the paper's 64 goes with its
	 * 108-packet BDP, so (choice) a smaller bitmap gets half its size */
	s->delta = pp->delta < s->win ? (uint32_t)pp->delta : (s->win + 1) / 2;
	s->t_high = pp->t_high ? pp->t_high : 2 * c->base_rtt;
	s->ring_cap = 2 * s->win + 64;
	s->ring = mp_calloc(s->ring_cap, sizeof *s->ring);
	rng_init(&s->rng, c->w->seed, RNG_CONN, c->id);
	s->ent_base = (uint16_t)rng_below(&s->rng, 65536);
	s->pace_at = SIMTIME_MAX;
	s->last_progress = tp_now(c);
	tp_activate(c);
}

static void udmp_close(struct conn *c)
{
	struct udmp_state *s = tp_priv(c);
	tp_book_close(&s->b);
	tp_rxmap_free(&s->rx);
	mp_free(s->ring);
}

/* More messages were posted on a stream connection (a queue pair): the book
 * and the receiver's bitmap cover their PSNs, and sending resumes. Nothing
 * of Alg. 1 or 2 is reset: rate, smooth_rtt, the gradient's clock, the token
 * pool and the paths of the tokens ACKs released all carry over, as a NIC
 * keeps a QP's context between work requests (the paper has one long flow per
 * connection and says nothing of idle periods). What that means here:
 *  - posted while packets are in flight, the ACK clock runs on and the new
 *    PSNs follow the old ones with no gap;
 *  - posted after the connection went idle, the tokens the last ACKs released
 *    with nothing left to send, each with its ACK's path, are spent at once
 *    on those paths; (choice) they are capped so that tokens and packets in
 *    flight do not exceed what they were when the last new packet went out:
 *    a window does not grow while it is not used (the spirit of RFC 7661),
 *    and without the cap message B of test_stream_state_persists started at
 *    1.9x the rate A ended with; with no token and nothing in flight the
 *    paced restart of udmp_next_packet turns the bytes pool into tokens at
 *    `rate`;
 *  - (choice) the rate does not move while idle: Alg. 1 moves it only on
 *    ACKs, and its gradient clock (last_update_time) keeps its phase, so the
 *    first update after a gap divides the RTT change by the whole gap, a
 *    gradient near zero (the g_min increase). The bytes pool fills during
 *    the gap up to its cap of one BDP at `rate` (fill_bytes_pool). */
static void udmp_post(struct conn *c)
{
	struct udmp_state *s = tp_priv(c);
	bool drained = s->b.snd_nxt == s->b.npkts; /* every PSN posted before was sent */
	tp_book_grow(&s->b, c->npkts);
	if (s->b.snd_una == s->b.snd_nxt) /* nothing outstanding: no ACK to wait for */
		tp_book_forget(&s->b);
	if (drained) {
		/* tokens released while there was nothing to send (Alg. 2 gives two
		 * per ACK faster than smooth_rtt, and the path looks faster once
		 * this connection stops loading it) keep at most the window it had
		 * when its last new packet went out */
		int64_t room = s->tail_wnd - (int64_t)s->b.inflight;
		if (s->token_pool > room)
			s->token_pool = room > 0 ? room : 0;
	}
	if (s->token_pool > 0 || !s->b.inflight)
		tp_activate(c);
}

static simtime_t rto_of(const struct conn *c)
{
	const struct udmp_params *pp = tp_params(c);
	const struct udmp_state *s = tp_priv((struct conn *)c);
	/* (choice) the paper gives no timeout: four smoothed RTTs, at least rto_min */
	simtime_t r = s->have_rtt ? (simtime_t)(4 * s->smooth_rtt) : 4 * c->base_rtt;
	return r > pp->rto_min ? r : pp->rto_min;
}

/* Bring the bytes pool up to now (Alg. 1 lines 20-21); the pool holds at most
 * one BDP of the current rate (choice: the paper does not bound it). */
static void fill_bytes_pool(struct conn *c, struct udmp_state *s, simtime_t now)
{
	if (now > s->last_addtoken_time)
		s->bytes_pool +=
		    s->rate * (double)(now - s->last_addtoken_time) / 8.0 / (double)PS_PER_S;
	s->last_addtoken_time = now;
	double cap = s->rate * (double)c->base_rtt / 8.0 / (double)PS_PER_S;
	if (cap < 2.0 * s->pkt)
		cap = 2.0 * s->pkt;
	if (s->bytes_pool > cap)
		s->bytes_pool = cap;
}

/* A whole packet's worth in the pool, up to rounding of rate x time. */
static inline bool pool_has(const struct udmp_state *s, unsigned npk)
{
	return s->bytes_pool + 1e-6 * s->pkt >= (double)npk * s->pkt;
}

static bool has_work(const struct udmp_state *s)
{
	return s->b.snd_nxt < s->b.npkts || s->b.nlost;
}

static void arm_timer(struct conn *c)
{
	struct udmp_state *s = tp_priv(c);
	simtime_t t = s->pace_at;
	if (s->b.snd_una < s->b.snd_nxt) {
		simtime_t r = s->last_progress + rto_of(c);
		if (r < t)
			t = r;
	}
	tp_timer_set(c, t);
}

/* ---- sender: ON_SENDING_PACKET (Alg. 1 lines 6-14) --------------------------- */
static struct packet *udmp_next_packet(struct conn *c, unsigned flow)
{
	(void)flow;
	const struct udmp_params *pp = tp_params(c);
	struct udmp_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	uint32_t psn = tp_book_next_lost(&s->b);
	bool retx = psn != UINT32_MAX;
	if (!retx) {
		if (s->b.snd_nxt >= s->b.npkts)
			return NULL;
		psn = s->b.snd_nxt;
	}
	if (s->token_pool <= 0) { /* line 7 */
		if (s->first_rtt || s->b.inflight)
			return NULL; /* the next ACK releases tokens */
		/* Nothing in flight, so no ACK will come to clock packets out: the
		 * bytes pool is turned into tokens at `rate` directly, each packet on a
		 * random path, as in the first RTT (choice: the paper assumes an ACK
		 * clock is always running). */
		fill_bytes_pool(c, s, now);
		if (!pool_has(s, 1)) {
			double need = (double)s->pkt - s->bytes_pool;
			simtime_t dt = (simtime_t)ceil(need * 8.0 * (double)PS_PER_S / s->rate);
			s->pace_at = now + (dt ? dt : 1);
			arm_timer(c);
			return NULL;
		}
		s->bytes_pool -= s->pkt;
		s->token_pool++;
		s->pace_at = SIMTIME_MAX;
	}
	if (s->b.snd_una >= s->b.snd_nxt) /* the first packet outstanding starts the clock */
		s->last_progress = now;
	s->token_pool--; /* line 13 */
	if (s->first_rtt && s->token_pool == 0 && !s->addtoken_started) {
		/* (choice) the bytes pool starts filling when the first RTT's tokens
		 * are spent, so the supply of tokens runs on without a gap */
		s->addtoken_started = true;
		s->last_addtoken_time = now;
	}
	uint16_t path;
	if (s->ring_n && !s->first_rtt) {
		path = s->ring[s->ring_head];
		s->ring_head = (s->ring_head + 1) % s->ring_cap;
		s->ring_n--;
	} else {
		path = pp->spray == SPRAY_RANDOM
			   ? random_path(s, pp) /* lines 10-12 */
			   : (uint16_t)(s->ent_base + s->spray_next++ % pp->paths);
	}
	struct packet *p = tp_pkt_new(c, PKT_DATA, true);
	p->psn = psn;
	p->size = (uint16_t)(tp_psn_payload(c, psn) + pp->common.header);
	p->entropy = path;
	p->flags |= PKT_F_ECT;
	if (tp_psn_last(c, psn))
		p->flags |= PKT_F_LAST;
	if (retx) {
		tp_book_resent(&s->b, psn);
		p->flags |= PKT_F_RETX;
		c->retx_bytes += p->size;
	} else {
		tp_book_new(&s->b);
	}
	tp_book_sent(&s->b, psn);
	if (!retx && s->b.snd_nxt == s->b.npkts)
		s->tail_wnd = s->token_pool + s->b.inflight;
	c->sent_bytes += p->size;
	if (c->timer_at == SIMTIME_MAX)
		arm_timer(c);
	return p;
}

/* ---- receiver ------------------------------------------------------------------ */
static void udmp_receiver(struct conn *c, struct packet *p)
{
	struct udmp_state *s = tp_priv(c);
	/* a one-BDP bitmap (III-D); a hole Delta behind is reported only with
	 * hole_nack (see the header) */
	tp_perpkt_rx(c, p, &s->rx, s->b.npkts, s->win,
		     ((const struct udmp_params *)tp_params(c))->hole_nack ? s->delta : s->win);
}

/* ---- sender: ACKs ----------------------------------------------------------------- */
static void release(struct udmp_state *s, const struct udmp_params *pp, uint16_t path, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint16_t e = path;
		if (s->explore) { /* III-D: a new source port instead of the ACK's */
			s->explore = false;
			e = random_path(s, pp);
		}
		s->token_pool++;
		if (s->ring_n < s->ring_cap) {
			s->ring[(s->ring_head + s->ring_n) % s->ring_cap] = e;
			s->ring_n++;
		}
	}
}

/* ALB_ON_RECV (Alg. 2), with the OOO-aware path selection in front of it.
 * An ACK that finds the pool short clocks nothing (Fig. 3, second 4), and an
 * ACK never has rtt < smooth_rtt on the slowest path in use, so that path's
 * packets in flight never grow after the first RTT. Fig. 3's worked example
 * (tokens at one packet per unit, RTTs of 2 and 3 units, one packet on each
 * path first) gives its 4:2 = 2:1, not D2/D1 = 3:2; its cycle holds only if
 * at its ties the slow path's ACK is served first, and a path left with no
 * packet after the first RTT's random spray is refilled only by path
 * exploration (tests/test_udmp.c: test_fig3_worked_example,
 * test_fig3_random_spray).
 *
 * Line 2 takes an RTT within rtt_tie of smooth_rtt as not slower than it
 * (choice: the paper does not say how a tie is judged). Two ACKs for one
 * packet are the only way packets in flight grow, so the rate can govern
 * throughput (III-B: the token pool "ensuring throughput matches the estimated
 * rate") only if some ACKs pass line 2. On the testbed, measurement noise
 * spreads RTTs on both sides of their average; here a steady queue gives every
 * ACK the same RTT, which the EWMA approaches from one side, and a strict
 * comparison from below froze each flow's packets in flight wherever the last
 * transient left them: 4.7/3.0/2.3 Gb/s for ever in a 3-way incast (Fig. 4b,
 * tests/test_udmp.c) while all three rates sat at the same T_high cap. */
static void alb_on_recv(struct conn *c, struct udmp_state *s, const struct packet *ack, double rtt,
			bool out_of_window)
{
	const struct udmp_params *pp = tp_params(c);
	if (out_of_window)
		return;
	double pkt = s->pkt;
	if (rtt < s->smooth_rtt + (double)pp->rtt_tie && pool_has(s, 2)) { /* lines 2-6 */
		s->bytes_pool -= 2 * pkt;
		release(s, pp, ack->entropy, 2);
	} else if (pool_has(s, 1) && rtt < s->smooth_rtt + (double)c->base_rtt) { /* 7-10 */
		s->bytes_pool -= pkt;
		release(s, pp, ack->entropy, 1);
	}
	if (s->bytes_pool < 0)
		s->bytes_pool = 0;
}

/* ON_RECEIVING_ACK (Alg. 1 lines 15-37), for ACKs and NACKs alike: both are a
 * packet that left the network and an RTT sample of its path. */
static void on_receiving_ack(struct conn *c, struct udmp_state *s, const struct packet *ack,
			     bool out_of_window)
{
	const struct udmp_params *pp = tp_params(c);
	simtime_t now = tp_now(c);
	double rtt = (double)(now - ack->ts);
	s->pkts_ignored++; /* line 17 */
	if (!s->have_rtt) {
		/* (choice) the first sample starts smooth_rtt and the clocks */
		s->have_rtt = true;
		s->smooth_rtt = s->last_smooth_rtt = rtt;
		s->last_update_time = now;
		if (!s->addtoken_started) {
			s->addtoken_started = true;
			s->last_addtoken_time = now;
		}
		s->pkts_to_ignore = s->b.inflight;
	} else {
		s->smooth_rtt = pp->alpha * rtt + (1 - pp->alpha) * s->smooth_rtt; /* line 18 */
	}
	if (s->first_rtt) {
		/* line 16; the pool of the first RTT's spray is spent */
		s->first_rtt = false;
		s->ring_n = 0;
	}
	/* lines 19-21: the pool is brought up to now before this ACK draws on it
	 * (in the pseudo-code's order, ALB first, every ACK would see the pool as
	 * it was one ACK earlier, and a window that lost a token never regains it
	 * when all paths have the same RTT) */
	fill_bytes_pool(c, s, now);
	alb_on_recv(c, s, ack, rtt, out_of_window);
	double base = (double)c->base_rtt;
	if (!pp->fixed_rate && s->smooth_rtt > (double)s->t_high) { /* lines 22-24 */
		double cap = s->line * (1 - (s->smooth_rtt - base) / s->smooth_rtt);
		if (cap < s->rate)
			s->rate = cap;
	}
	if (s->pkts_ignored > s->pkts_to_ignore && now > s->last_update_time) { /* 25-37 */
		double rtt_diff = s->smooth_rtt - s->last_smooth_rtt;
		double gradient = rtt_diff / (double)(now - s->last_update_time);
		s->last_smooth_rtt = s->smooth_rtt;
		s->last_update_time = now;
		if (pp->fixed_rate) {
			/* congestion control off (Fig. 3): the rate stays */
		} else if (gradient > 0) {
			s->rate -= fabs(gradient) * s->line * (s->rate / s->line);
		} else {
			/* a zero or negative gradient means unused bandwidth and the rate
			 * rises (III-B); the paper's formula would leave it unchanged at
			 * zero, so (choice) the increase uses at least g_min
			 * (experiments/udmp/gmin_sensitivity.yaml: Fig. 6a with g_min
			 * 0.1, 0.01 and 0) */
			double g = fabs(gradient) > pp->g_min ? fabs(gradient) : pp->g_min;
			s->rate += g * s->line * (1 - s->rate / s->line);
		}
		s->pkts_ignored = 0;
		s->pkts_to_ignore = s->b.inflight;
		/* III-D: once per RTT, with probability p, explore a new path (with
		 * the rate fixed too: it is the load balancer's rule) */
		if (pp->p > 0 && rng_u01(&s->rng) < pp->p)
			s->explore = true;
	}
	if (pp->fixed_rate)
		return;
	if (s->rate > s->line)
		s->rate = s->line;
	if (s->rate < (double)pp->min_rate)
		s->rate = (double)pp->min_rate;
}

static void udmp_sender(struct conn *c, struct packet *p)
{
	const struct udmp_params *pp = tp_params(c);
	struct udmp_state *s = tp_priv(c);
	bool nack = p->type == PKT_NACK, discarded = nack && tp_nack_discarded(p);
	uint32_t psn = tp_ack_psn(p);
	/* OOO-aware path selection: judged against snd_ooh before this ACK */
	bool out_of_window = pp->ooo_aware && !discarded && !(p->flags & PKT_F_RETX) &&
			     (uint64_t)psn + s->delta + 1 < s->b.snd_ooh1;
	if (tp_book_ack(c, &s->b, p, discarded))
		s->last_progress = tp_now(c);
	if (s->b.nacked == s->b.npkts) {
		tp_pkt_free(c, p);
		tp_complete(c);
		return;
	}
	if (nack) {
		/* III-D adopts "a similar retransmission design as MPRDMA" and
		 * gives no more, so (choice) the loss rule is tp_pktbook's
		 * (transport/pktbook.h), shared with mprdma.c. Taking only the first hole
		 * per round repaired a burst of k losses in k rounds, each
		 * overrunning the bitmap: ~5x MP-RDMA's retransmitted bytes. */
		tp_book_nack(&s->b, p, discarded, s->delta, tp_now(c));
	}
	on_receiving_ack(c, s, p, out_of_window);
	tp_pkt_free(c, p);
	arm_timer(c);
	if (has_work(s) && (s->token_pool > 0 || !s->b.inflight))
		tp_activate(c);
}

static void udmp_on_packet(struct conn *c, struct packet *p)
{
	if (p->type == PKT_DATA)
		udmp_receiver(c, p);
	else
		udmp_sender(c, p);
}

static void udmp_on_timer(struct conn *c)
{
	struct udmp_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	if (s->b.snd_una < s->b.snd_nxt && now >= s->last_progress + rto_of(c)) {
		/* timeout (choice): everything unacknowledged is sent again, paced
		 * from the bytes pool on random paths until ACKs flow again */
		tp_book_timeout(&s->b, now);
		s->ring_n = 0;
		s->last_progress = now;
	}
	if (now >= s->pace_at)
		s->pace_at = SIMTIME_MAX;
	arm_timer(c);
	if (has_work(s))
		tp_activate(c);
}

/* Defaults: the paper's value where it gives one (bitmap, Delta, and p from
 * section VI); otherwise a choice, with its reason in the comment above it. */
static const struct opt_desc udmp_opts[] = {
	TP_COMMON_OPTS(struct udmp_params),
	/* (choice) the paper gives no value; RFC 6298's 1/8. With 0.01 a flow with
	 * few packets in flight followed a rising queue over ~100 of its RTTs,
	 * and Alg. 2 rule (c) (rtt > smooth_rtt + base_rtt: clock nothing) starved
	 * it: in an 8 -> 1 fat-tree incast the one intra-pod sender, shortest
	 * base RTT, sent one packet per RTT (0.16 Gb/s) for 7 ms while the others
	 * shared the link (tests/test_udmp.c, test_incast_fat_tree_fair). Fig. 7's
	 * delay anomaly costs the same with either gain (mean FCT +4.0% at 1/8,
	 * +4.7% at 0.01; experiments/udmp/README.md). */
	{ "alpha", OPT_DOUBLE, offsetof(struct udmp_params, alpha), "0.125", 1e-6, 1,
	  "EWMA gain of smooth_rtt per ACK (Alg. 1 line 18; the paper gives no value)" },
	/* no value in the paper (lines 33/35 give no rise at gradient 0); 0.1 of
	 * the headroom per RTT regains line rate in tens of RTTs */
	{ "g_min", OPT_DOUBLE, offsetof(struct udmp_params, g_min), "0.1", 0, 1,
	  "a zero or negative gradient raises the rate by at least this fraction of the headroom "
	  "per RTT (the paper's formula gives no rise at zero; its text asks for one)" },
	/* no value in the paper (choice): about the resolution of a NIC or TSC
	 * timestamp (the testbed's RTTs come from the TSC, IV-A), far below any
	 * RTT difference between paths that Alg. 2 is meant to tell apart */
	{ "rtt_tie", OPT_TIME, offsetof(struct udmp_params, rtt_tie), "1ns", 0, 1e12,
	  "Alg. 2 line 2: an ACK's RTT below smooth_rtt + rtt_tie counts as faster than the "
	  "average (the paper does not say how a tie is judged; with none, a steady queue "
	  "freezes packets in flight)" },
	/* the paper asks only for "sufficiently high" (III-B); 2 x base RTT is one
	 * BDP of queue, far above the 36-packet ECN threshold of its evaluation */
	{ "T_high", OPT_TIME, offsetof(struct udmp_params, t_high), "0", 0, 1e13,
	  "severe-congestion RTT threshold (Alg. 1 line 22); 0 = 2 x the flow's base RTT (the "
	  "paper gives no value)" },
	/* section VI: probing "every few seconds"; at a ~10 us RTT that is about
	 * 3e-6 per RTT (the per-RTT draw is III-D's) */
	{ "p", OPT_DOUBLE, offsetof(struct udmp_params, p), "3e-6", 0, 1,
	  "new path exploration: probability per RTT that the next packet takes a new source "
	  "port (III-D; VI: every few seconds, i.e. about 3e-6 at a 10 us RTT)" },
	/* III-D and VI: one BDP */
	{ "bitmap", OPT_UINT, offsetof(struct udmp_params, bitmap), "0", 0, 1e9,
	  "receiver bitmap, packets; beyond it packets are discarded and NACKed; 0 = one BDP "
	  "of the path (the paper's size)" },
	/* V-B: Delta = 64 (with a ~108-packet BDP) */
	{ "Delta", OPT_UINT, offsetof(struct udmp_params, delta), "64", 1, 1e9,
	  "OOO-aware path selection: an ACK more than Delta PSNs below the highest acknowledged "
	  "clocks nothing out (paper V-B: 64)" },
	{ "hole_nack", OPT_BOOL, offsetof(struct udmp_params, hole_nack), "false", 0, 0,
	  "the receiver also NACKs a packet landing Delta or more beyond a hole (MP-RDMA's "
	  "rule); false = only packets beyond the bitmap are NACKed (III-D)" },
	{ "ooo_aware", OPT_BOOL, offsetof(struct udmp_params, ooo_aware), "true", 0, 0,
	  "OOO-aware path selection on (Fig. 7 compares with and without)" },
	/* no value in the paper; 256 source ports cover every ECMP path of its
	 * 16-core fat-tree with room to spare */
	{ "paths", OPT_UINT, offsetof(struct udmp_params, paths), "256", 1, 65536,
	  "num_paths: UDP source ports a connection sprays over (the paper gives no value)" },
	/* no floor in the paper; 1% of a 100 Gb/s line keeps an ACK clock alive */
	{ "min_rate", OPT_RATE, offsetof(struct udmp_params, min_rate), "1Gbps", 1, 1e13,
	  "floor of the sending rate (the paper gives none)" },
	{ "fixed_rate", OPT_RATE, offsetof(struct udmp_params, fixed_rate), "0", 0, 1e13,
	  "nonzero: tokens at this fixed rate, congestion control off (Fig. 3)" },
	/* lines 10-12 draw at random; rr places the first RTT's packets as Fig.
	 * 3's worked example does, one per path in turn */
	{ "spray", OPT_ENUM, offsetof(struct udmp_params, spray), "random", 0, 0,
	  "paths of the first RTT's packets: random (Alg. 1 lines 10-12) or rr (one per path in "
	  "turn, as Fig. 3's worked example places them)",
	  (const char *const[]){ "random", "rr", NULL } },
	/* no timeout in the paper (it defers to MP-RDMA); 50 us is several base
	 * RTTs of its fabric, so queueing alone does not fire it */
	{ "rto_min", OPT_TIME, offsetof(struct udmp_params, rto_min), "50us", 1e6, 1e13,
	  "retransmission timeout floor; the timeout is 4 smoothed RTTs (the paper gives none)" },
	OPT_END
};

static void udmp_trace(const struct conn *c, struct tp_trace *t)
{
	t->rate = ((const struct udmp_state *)c->priv)->rate;
}

const struct transport_ops udmp_transport_ops = {
	.trace = udmp_trace,
	.name = "udmp",
	.summary = "UDMP: delay-gradient rate, token pool, delay-assisted ACK-clocked multipath",
	.opts = udmp_opts,
	.params_size = sizeof(struct udmp_params),
	.priv_size = sizeof(struct udmp_state),
	.open = udmp_open,
	.post = udmp_post,
	.next_packet = udmp_next_packet,
	.on_packet = udmp_on_packet,
	.on_timer = udmp_on_timer,
	.close = udmp_close,
};

/* roce.c - RoCEv2 reliable connection with DCQCN, go-back-N and Q queue pairs.
 *
 * Follows: Zhu et al., "Congestion Control for Large-Scale RDMA Deployments"
 * (DCQCN, SIGCOMM 2015), sections 3.1-3.3 (NP, RP algorithms, parameters), and
 * the DCQCN model in the HPCC ns-3 repository (rdma-hw.cc, "Mellanox" mode),
 * whose run script is the `hpcc` preset. RC semantics per the InfiniBand
 * specification as RoCEv2 uses them: the receiver expects PSNs in order; an
 * out-of-order packet is dropped and answered by a NAK (once per gap) carrying
 * the expected PSN, and the sender goes back to it (go-back-N); a timeout
 * covers lost NAKs and tail losses.
 *
 * A connection carries one message over Q queue pairs (QPs), each with its own
 * UDP source port (entropy), PSN space and DCQCN state, as NCCL/RCCL do:
 * `stripe` cuts the message into Q equal sub-chunks, `rr` puts a whole message
 * on QP (message index mod Q); with one message per connection that is one QP.
 *
 * DCQCN, reaction point (per QP; rc = current rate, rt = target rate):
 *   CNP arrives: remember it (cnp_arrived); the rate-decrease check, at most
 *     every `rate_decrease_interval`, then cuts:
 *       rt = rc; rc = max(min_rate, rc * (1 - alpha / 2));
 *       and resets the increase state (timer and byte counters, stages);
 *   every `alpha_interval` (K): alpha = (1 - g) alpha + g if a CNP arrived in
 *     the interval, else alpha = (1 - g) alpha;
 *   rate increase, on the timer (every `increase_timer`, T) and on the byte
 *     counter (every `byte_counter` bytes sent, B; 0 = off), counting timer
 *     events t and byte events b since the last cut:
 *       max(t, b) < F:            fast recovery   rc = (rt + rc) / 2
 *       min(t, b) > F:            hyper increase  rt += i * R_HAI, i = min(t,b) - F
 *       otherwise:                additive        rt += R_AI
 *     then rc = (rt + rc) / 2, both capped at the line rate. Without a byte
 *     counter, b is taken to follow t (the ns-3 model's behaviour).
 * Notification point (receiver): a CE-marked packet makes the QP owe a CNP;
 *   `cnp: paced` sends at most one CNP per `cnp_interval` per QP (the paper's
 *   N = 50 us), `cnp: on_ack` echoes congestion on the next ACK (ECE), as the
 *   ns-3 model does.
 *
 * Timers are kept lazily per QP (deadlines, the connection's single timer set
 * to the earliest), so an idle QP costs no events.
 *
 * Packet fields: DATA psn, aux16 = QP; ACK p0 = expected PSN (every PSN below
 * it arrived), ECE = congestion echo, aux16 = QP; NACK p0 = expected PSN,
 * aux16 = QP; CNP aux16 = QP.
 */
#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "core/rng.h"
#include "transport/transport.h"

enum roce_qp_mode { QP_STRIPE, QP_RR };
enum roce_cnp_mode { CNP_PRESET, CNP_PACED, CNP_ON_ACK };
enum roce_bc_mode { BC_PRESET, BC_ON, BC_OFF };
enum roce_clamp { CLAMP_PRESET, CLAMP_ON, CLAMP_OFF };
enum roce_preset { PRESET_PAPER, PRESET_HPCC };

struct roce_params {
	struct tp_common common;
	uint64_t qps;		/* queue pairs per connection */
	int qp_mode;		/* enum roce_qp_mode */
	uint64_t ack_interval;	/* ACK every this many packets (and at message end) */
	simtime_t rto;		/* retransmission timeout, ps */
	bool dcqcn;		/* false: send at line rate (PFC only) */
	int preset;		/* enum roce_preset: fills the values left at 0 */
	int cnp_mode;		/* enum roce_cnp_mode */
	simtime_t cnp_interval; /* N: at most one CNP per QP per interval (paced) */
	double g;		/* alpha gain */
	double initial_alpha;
	simtime_t alpha_interval;	  /* K */
	simtime_t rate_decrease_interval; /* at most one cut per interval */
	simtime_t increase_timer;	  /* T */
	uint64_t byte_counter;		  /* B, bytes (0 = the preset's) */
	int byte_counter_mode;		  /* enum roce_bc_mode */
	uint64_t fast_recovery;		  /* F */
	int clamp_mode;			  /* enum roce_clamp: rt = rc on every cut */
	bool clamp_target;		  /* resolved clamp_mode */
	uint64_t rai, rhai, min_rate;	  /* bit/s */
};

struct roce_qp {
	/* sender */
	uint32_t npkts;		   /* packets in this QP's part of the message */
	uint64_t off;		   /* byte offset of that part in the message */
	uint64_t bytes;		   /* its length */
	uint32_t snd_nxt;	   /* next PSN to send */
	uint32_t snd_una;	   /* every PSN below is acknowledged */
	uint32_t snd_max;	   /* one past the highest PSN ever sent */
	uint16_t entropy;	   /* UDP source port */
	simtime_t next_tx;	   /* pacing: earliest time of the next packet */
	simtime_t last_prog;	   /* last acknowledgement progress, for the RTO */
	double rc, rt, alpha;	   /* bit/s, bit/s, - */
	bool cnp_arrived;	   /* in the current alpha interval */
	bool cut_pending;	   /* a CNP awaits the rate-decrease check */
	simtime_t alpha_next;	   /* end of the current alpha interval */
	simtime_t decr_next;	   /* next rate-decrease check */
	simtime_t incr_next;	   /* next rate-increase timer event */
	uint64_t t_count, b_count; /* increase events since the last cut */
	uint64_t bytes_since;	   /* bytes sent since the last byte-counter event */
	/* receiver */
	uint32_t epsn;	    /* expected PSN */
	uint32_t unacked;   /* in-order packets not yet acknowledged */
	bool nak_sent;	    /* a NAK for the current gap is out */
	bool ce_pending;    /* CE seen, CNP owed */
	simtime_t last_cnp; /* paced CNPs */
	bool cnp_ever;	    /* a CNP has arrived (sender) */
	bool cnp_sent;	    /* a paced CNP has been sent (receiver) */
};

struct roce_state {
	uint32_t nqp;
	uint32_t done_qps;
	uint64_t line_bps;
	struct roce_qp *qp;
};

/* ---- presets -------------------------------------------------------------- */
/* The DCQCN paper's recommendations (its section 5, for 40 Gb/s) and the HPCC
 * ns-3 run script at 100 Gb/s (alpha every 1 us, cut check every 4 us, increase
 * timer 300 us, one fast-recovery stage, 20 / 200 Mb/s, 1 Gb/s floor, no byte
 * counter, CNPs on ACKs, every packet ACKed). */
struct preset {
	simtime_t alpha_interval, decr, incr, cnp_interval;
	uint64_t byte_counter, fast, rai, rhai, min_rate, ack_interval;
	int cnp_mode;
};

static const struct preset presets[] = {
	[PRESET_PAPER] = { .alpha_interval = 55 * PS_PER_US,
			   .decr = 50 * PS_PER_US,
			   .incr = 55 * PS_PER_US,
			   .cnp_interval = 50 * PS_PER_US,
			   .byte_counter = 10000000,
			   .fast = 5,
			   .rai = 40000000,
			   .rhai = 200000000,
			   .min_rate = 100000000,
			   .ack_interval = 1,
			   .cnp_mode = CNP_PACED },
	[PRESET_HPCC] = { .alpha_interval = 1 * PS_PER_US,
			  .decr = 4 * PS_PER_US,
			  .incr = 300 * PS_PER_US,
			  .cnp_interval = 4 * PS_PER_US,
			  .byte_counter = 0,
			  .fast = 1,
			  .rai = 20000000,
			  .rhai = 200000000,
			  .min_rate = 1000000000,
			  .ack_interval = 1,
			  .cnp_mode = CNP_ON_ACK },
};

static int roce_check(void *pp, struct mp_err *e)
{
	struct roce_params *p = pp;
	const struct preset *ps = &presets[p->preset];
	if (!p->alpha_interval)
		p->alpha_interval = ps->alpha_interval;
	if (!p->rate_decrease_interval)
		p->rate_decrease_interval = ps->decr;
	if (!p->increase_timer)
		p->increase_timer = ps->incr;
	if (!p->cnp_interval)
		p->cnp_interval = ps->cnp_interval;
	if (!p->byte_counter)
		p->byte_counter = ps->byte_counter ? ps->byte_counter : 10000000;
	if (p->byte_counter_mode == BC_PRESET)
		p->byte_counter_mode = ps->byte_counter ? BC_ON : BC_OFF;
	if (!p->fast_recovery)
		p->fast_recovery = ps->fast;
	if (!p->rai)
		p->rai = ps->rai;
	if (!p->rhai)
		p->rhai = ps->rhai;
	if (!p->min_rate)
		p->min_rate = ps->min_rate;
	if (!p->ack_interval)
		p->ack_interval = ps->ack_interval;
	if (p->cnp_mode == CNP_PRESET)
		p->cnp_mode = ps->cnp_mode;
	/* the paper always clamps (rt = rc on every CNP); the mlx model not by default */
	p->clamp_target = p->clamp_mode == CLAMP_ON ||
			  (p->clamp_mode == CLAMP_PRESET && p->preset == PRESET_PAPER);
	(void)e;
	return MP_OK;
}

/* ---- helpers ---------------------------------------------------------------- */
/* the HPCC preset runs the Mellanox (ns-3 rdma-hw.cc) variant of DCQCN */
static inline bool is_mlx(const struct roce_params *p)
{
	return p->preset == PRESET_HPCC;
}

static inline struct roce_qp *qp_of(struct conn *c, unsigned i)
{
	return &((struct roce_state *)tp_priv(c))->qp[i];
}

static uint64_t pkt_payload(const struct conn *c, const struct roce_qp *q, uint32_t psn)
{
	return tp_seg_payload(c, q->bytes, q->npkts, psn);
}

static void arm_timer(struct conn *c)
{
	const struct roce_params *p = tp_params(c);
	struct roce_state *s = tp_priv(c);
	simtime_t t = SIMTIME_MAX;
	for (uint32_t i = 0; i < s->nqp; i++) {
		const struct roce_qp *q = &s->qp[i];
		if (q->snd_una >= q->npkts)
			continue;
		if (q->cut_pending && q->decr_next < t)
			t = q->decr_next;
		if ((is_mlx(p) || q->rc < (double)s->line_bps) && q->incr_next < t)
			t = q->incr_next;
		if (q->snd_una < q->snd_nxt && q->last_prog + p->rto < t)
			t = q->last_prog + p->rto;
		if (q->snd_nxt < q->npkts && q->next_tx > tp_now(c) && q->next_tx < t)
			t = q->next_tx;
	}
	tp_timer_set(c, t);
}

/* ---- DCQCN reaction point ----------------------------------------------------- */
/* Two variants, chosen by the preset:
 *  paper (Zhu et al. 2015, Fig. 7): on a CNP, cut at once (rt = rc,
 *    rc *= 1 - alpha/2) and then alpha = (1-g) alpha + g; alpha decays by (1-g)
 *    per K without a CNP; increase stages counted by the timer T and the byte
 *    counter B; hyper increase adds (min(t, b) - F) * R_HAI;
 *  mlx (the HPCC ns-3 model of the Mellanox NIC, rdma-hw.cc): the first CNP
 *    sets alpha = 1 and starts a periodic alpha update (every K: (1-g) alpha + g
 *    if a CNP arrived in the interval, else (1-g) alpha) and a periodic
 *    rate-decrease check (every rate_decrease_interval: cut if a CNP arrived);
 *    a cut sets rt = rc only if a rate increase happened since the last cut
 *    (clamp_target_rate off), so one congestion episode keeps its target; the
 *    increase timer counts stages: stage < F fast recovery, == F additive,
 *    > F hyper (one R_HAI step); no byte counter. */
static void rate_increase(const struct roce_params *p, struct roce_state *s, struct roce_qp *q)
{
	/* counts of increase events before this one */
	uint64_t t = q->t_count, b = p->byte_counter_mode == BC_ON ? q->b_count : q->t_count;
	uint64_t F = p->fast_recovery, lo = t < b ? t : b, hi = t > b ? t : b;
	double line = (double)s->line_bps;
	if (hi < F) {
		/* fast recovery: halfway to the target */
	} else if (lo > F) {
		q->rt += (double)(is_mlx(p) ? 1 : lo - F) * (double)p->rhai;
	} else {
		q->rt += (double)p->rai;
	}
	if (q->rt > line)
		q->rt = line;
	q->rc = (q->rt + q->rc) / 2;
	if (q->rc > line)
		q->rc = line;
}

/* mlx: bring the periodic alpha update up to `now` (computed when needed
 * rather than ticked, so a QP costs no alpha events) */
static void alpha_advance(const struct roce_params *p, struct roce_qp *q, simtime_t now)
{
	if (now < q->alpha_next)
		return;
	uint64_t n = (now - q->alpha_next) / p->alpha_interval + 1;
	q->alpha = (1 - p->g) * q->alpha + (q->cnp_arrived ? p->g : 0);
	if (n > 1)
		q->alpha *= pow(1 - p->g, (double)(n - 1));
	q->cnp_arrived = false;
	q->alpha_next += n * p->alpha_interval;
}

static void rate_cut(const struct roce_params *p, struct roce_qp *q, simtime_t now)
{
	if (is_mlx(p)) {
		alpha_advance(p, q, now);
		if (p->clamp_target || q->t_count != 0)
			q->rt = q->rc;
	} else {
		q->rt = q->rc;
	}
	q->rc = q->rc * (1 - q->alpha / 2);
	if (q->rc < (double)p->min_rate)
		q->rc = (double)p->min_rate;
	q->t_count = q->b_count = 0;
	q->bytes_since = 0;
	q->incr_next = now + p->increase_timer;
}

/* Run every DCQCN timer of q that is due at `now`. */
static void qp_timers(const struct roce_params *p, struct roce_state *s, struct roce_qp *q,
		      simtime_t now)
{
	if (q->cut_pending && q->decr_next <= now) { /* mlx: the periodic check */
		q->cut_pending = false;
		rate_cut(p, q, now);
		q->decr_next += p->rate_decrease_interval;
	}
	/* mlx: the increase timer runs on after the first cut; paper: until the
	 * line rate is reached */
	while ((is_mlx(p) || q->rc < (double)s->line_bps) && q->incr_next <= now) {
		rate_increase(p, s, q);
		q->t_count++;
		q->incr_next += p->increase_timer;
	}
}

static void on_cnp(struct conn *c, struct roce_qp *q)
{
	const struct roce_params *p = tp_params(c);
	simtime_t now = tp_now(c);
	if (!p->dcqcn)
		return;
	if (!is_mlx(p)) {
		/* paper: cut now, then alpha, which decayed by (1-g) per K of silence */
		rate_cut(p, q, now);
		if (q->alpha_next <= now)
			q->alpha *=
			    pow(1 - p->g, (double)((now - q->alpha_next) / p->alpha_interval + 1));
		q->alpha = (1 - p->g) * q->alpha + p->g;
		q->alpha_next = now + p->alpha_interval;
		return;
	}
	if (!q->cnp_ever) { /* the first CNP of this QP */
		q->cnp_ever = true;
		q->alpha = p->initial_alpha;
		q->cnp_arrived = false;
		q->alpha_next = now + p->alpha_interval;
		q->decr_next = now + p->rate_decrease_interval + PS_PER_NS;
		q->rt = q->rc;
	} else {
		alpha_advance(p, q, now);
		if (q->decr_next <= now) /* the next check on the periodic grid */
			q->decr_next += ((now - q->decr_next) / p->rate_decrease_interval + 1) *
					p->rate_decrease_interval;
	}
	q->cnp_arrived = true;
	q->cut_pending = true;
	qp_timers(p, tp_priv(c), q, now);
}

/* ---- connection ------------------------------------------------------------------ */
static void roce_open(struct conn *c)
{
	const struct roce_params *p = tp_params(c);
	struct roce_state *s = tp_priv(c);
	uint64_t pl = tp_payload(c);
	unsigned Q = (unsigned)p->qps;
	struct mp_rng r;
	rng_init(&r, c->w->seed, RNG_CONN, c->id);
	uint16_t base = (uint16_t)rng_below(&r, 65536);
	s->line_bps = c->src->node.ports[c->rail].rate_bps;
	s->nqp = Q;
	s->qp = mp_calloc(Q, sizeof *s->qp);
	tp_set_flows(c, Q);
	uint64_t off = 0;
	for (unsigned i = 0; i < Q; i++) {
		struct roce_qp *q = &s->qp[i];
		uint64_t len;
		if (p->qp_mode == QP_STRIPE) {
			/* equal sub-chunks in whole packets; the last QPs may get less */
			uint64_t pk = (c->bytes + pl - 1) / pl, per = (pk + Q - 1) / Q;
			len = per * pl;
			if (off + len > c->bytes)
				len = c->bytes > off ? c->bytes - off : 0;
		} else {
			len = (c->id % Q) == i ? c->bytes : 0;
		}
		q->off = off;
		q->bytes = len;
		off += len;
		q->npkts = (uint32_t)((len + pl - 1) / pl);
		q->entropy = (uint16_t)(base + i);
		q->rc = q->rt = (double)s->line_bps;
		q->alpha = p->initial_alpha;
		q->alpha_next = tp_now(c) + p->alpha_interval;
		q->decr_next = 0;
		q->incr_next = SIMTIME_MAX;
		q->next_tx = tp_now(c);
		q->last_prog = tp_now(c);
		if (q->npkts == 0)
			s->done_qps++;
		else
			tp_activate_flow(c, i);
	}
	arm_timer(c);
}

static void roce_close(struct conn *c)
{
	struct roce_state *s = tp_priv(c);
	mp_free(s->qp);
}

static struct packet *roce_next_packet(struct conn *c, unsigned flow)
{
	const struct roce_params *p = tp_params(c);
	struct roce_state *s = tp_priv(c);
	struct roce_qp *q = &s->qp[flow];
	simtime_t now = tp_now(c);
	if (q->snd_nxt >= q->npkts)
		return NULL;
	if (now < q->next_tx) { /* paced: the timer wakes this QP */
		arm_timer(c);
		return NULL;
	}
	uint32_t psn = q->snd_nxt++;
	struct packet *pk = tp_pkt_new(c, PKT_DATA, true);
	pk->psn = psn;
	pk->aux16 = (uint16_t)flow;
	pk->size = (uint16_t)(pkt_payload(c, q, psn) + p->common.header);
	pk->entropy = q->entropy;
	pk->flags |= PKT_F_ECT;
	if (psn + 1 == q->npkts)
		pk->flags |= PKT_F_LAST;
	if (psn < q->snd_max) {
		pk->flags |= PKT_F_RETX;
		c->retx_bytes += pk->size;
	} else {
		q->snd_max = psn + 1;
	}
	c->sent_bytes += pk->size;
	/* pacing at the current rate */
	q->next_tx = now + (simtime_t)((double)pk->size * 8.0 * (double)PS_PER_S / q->rc);
	if (p->dcqcn && p->byte_counter_mode == BC_ON) {
		q->bytes_since += pk->size;
		if (q->bytes_since >= p->byte_counter) {
			q->bytes_since -= p->byte_counter;
			q->b_count++;
			if (q->rc < (double)s->line_bps)
				rate_increase(p, s, q);
		}
	}
	/* only a new RTO deadline needs the timer re-armed here: a paced QP
	 * re-arms it when the NIC next asks and finds it early */
	if (psn == q->snd_una) { /* the oldest outstanding packet starts the clock */
		q->last_prog = now;
		arm_timer(c);
	}
	return pk;
}

/* ---- receiver (responder, notification point) ---------------------------------- */
static void send_ctrl(struct conn *c, enum pkt_type type, unsigned qpi, uint32_t p0, bool ece,
		      const struct packet *echo)
{
	struct packet *a = tp_pkt_new(c, type, false);
	a->aux16 = (uint16_t)qpi;
	a->p0 = p0;
	a->entropy = echo->entropy;
	a->ts = echo->ts;
	if (ece)
		a->flags |= PKT_F_ECE;
	tp_send(c, c->dst, a);
}

static void roce_receiver(struct conn *c, struct packet *pk)
{
	const struct roce_params *p = tp_params(c);
	unsigned qpi = pk->aux16;
	struct roce_qp *q = qp_of(c, qpi);
	simtime_t now = tp_now(c);
	if (pk->flags & PKT_F_CE) {
		if (p->cnp_mode == CNP_PACED) {
			if (!q->cnp_sent || now - q->last_cnp >= p->cnp_interval) {
				q->cnp_sent = true;
				q->last_cnp = now;
				send_ctrl(c, PKT_CNP, qpi, 0, false, pk);
			}
		} else {
			q->ce_pending = true;
		}
	}
	if (pk->psn == q->epsn) {
		uint64_t pl = pkt_payload(c, q, pk->psn);
		c->rcvd_bytes += pl;
		q->epsn++;
		q->nak_sent = false;
		q->unacked++;
		if (q->unacked >= p->ack_interval || q->epsn == q->npkts) {
			send_ctrl(c, PKT_ACK, qpi, q->epsn, q->ce_pending, pk);
			q->ce_pending = false;
			q->unacked = 0;
		}
	} else if (pk->psn > q->epsn) {
		/* out of order: dropped; one NAK (sequence error) per gap */
		if (!q->nak_sent) {
			q->nak_sent = true;
			send_ctrl(c, PKT_NACK, qpi, q->epsn, q->ce_pending, pk);
			q->ce_pending = false;
		}
	} else {
		/* a duplicate: acknowledge again what has arrived */
		c->dup_bytes += pkt_payload(c, q, pk->psn);
		send_ctrl(c, PKT_ACK, qpi, q->epsn, q->ce_pending, pk);
		q->ce_pending = false;
	}
	tp_pkt_free(c, pk);
}

/* ---- sender (requester, reaction point) ---------------------------------------------- */
static void acked_to(struct conn *c, struct roce_state *s, struct roce_qp *q, uint32_t epsn)
{
	if (epsn <= q->snd_una)
		return;
	uint64_t pl = tp_payload(c);
	uint64_t before = (uint64_t)q->snd_una * pl;
	uint64_t after = epsn >= q->npkts ? q->bytes : (uint64_t)epsn * pl;
	c->acked_bytes += after - before;
	q->snd_una = epsn;
	if (q->snd_nxt < epsn)
		q->snd_nxt = epsn;
	q->last_prog = tp_now(c);
	if (q->snd_una >= q->npkts)
		s->done_qps++;
}

static void roce_sender(struct conn *c, struct packet *pk)
{
	struct roce_state *s = tp_priv(c);
	unsigned qpi = pk->aux16;
	struct roce_qp *q = &s->qp[qpi];
	switch (pk->type) {
	case PKT_ACK:
		acked_to(c, s, q, pk->p0);
		if (pk->flags & PKT_F_ECE)
			on_cnp(c, q);
		break;
	case PKT_NACK:
		acked_to(c, s, q, pk->p0);
		if (pk->flags & PKT_F_ECE)
			on_cnp(c, q);
		if (q->snd_una < q->npkts) { /* go back N */
			q->snd_nxt = q->snd_una;
			tp_activate_flow(c, qpi);
		}
		break;
	case PKT_CNP:
		on_cnp(c, q);
		break;
	default:
		break;
	}
	tp_pkt_free(c, pk);
	if (s->done_qps == s->nqp) {
		tp_complete(c);
		return;
	}
	arm_timer(c);
}

static void roce_on_packet(struct conn *c, struct packet *pk)
{
	if (pk->type == PKT_DATA)
		roce_receiver(c, pk);
	else
		roce_sender(c, pk);
}

static void roce_on_timer(struct conn *c)
{
	const struct roce_params *p = tp_params(c);
	struct roce_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	for (uint32_t i = 0; i < s->nqp; i++) {
		struct roce_qp *q = &s->qp[i];
		if (q->snd_una >= q->npkts)
			continue;
		if (p->dcqcn)
			qp_timers(p, s, q, now);
		if (q->snd_una < q->snd_nxt && q->last_prog + p->rto <= now) {
			/* timeout: go back to the oldest unacknowledged PSN */
			q->snd_nxt = q->snd_una;
			q->last_prog = now;
		}
		if (q->snd_nxt < q->npkts && q->next_tx <= now)
			tp_activate_flow(c, i);
	}
	arm_timer(c);
}

static const char *const qp_modes[] = { "stripe", "rr", NULL };
static const char *const cnp_modes[] = { "preset", "paced", "on_ack", NULL };
static const char *const bc_modes[] = { "preset", "on", "off", NULL };
static const char *const clamp_modes[] = { "preset", "on", "off", NULL };
static const char *const preset_names[] = { "paper", "hpcc", NULL };

static const struct opt_desc roce_opts[] = {
	TP_COMMON_OPTS(struct roce_params),
	{ "qps", OPT_UINT, offsetof(struct roce_params, qps), "1", 1, 1024,
	  "queue pairs per connection (QP scaling), each with its own UDP source port, PSN "
	  "space and DCQCN state" },
	{ "qp_mode", OPT_ENUM, offsetof(struct roce_params, qp_mode), "stripe", 0, 0,
	  "stripe: the message in equal sub-chunks over the QPs; rr: whole messages round "
	  "robin over the QPs",
	  qp_modes },
	{ "ack_interval", OPT_UINT, offsetof(struct roce_params, ack_interval), "0", 0, 65536,
	  "ACK every this many in-order packets, and at the message end; 0 = the preset's" },
	/* 67.1 ms = the InfiniBand local ACK timeout 4.096 us x 2^14, a common
	 * setting for lossless RoCE. A 1 ms timeout (the earlier default) fired
	 * in lossless 32 -> 1 incasts of 64-100 MB, where PFC holds a packet for
	 * several ms, and went back N spuriously (1.3 GB resent, no drop). */
	{ "rto", OPT_TIME, offsetof(struct roce_params, rto), "67.1ms", 1e6, 1e13,
	  "retransmission timeout (the InfiniBand local ACK timeout): go back to the oldest "
	  "unacknowledged PSN" },
	{ "dcqcn", OPT_BOOL, offsetof(struct roce_params, dcqcn), "true", 0, 0,
	  "DCQCN rate control; false = line rate, PFC only" },
	{ "preset", OPT_ENUM, offsetof(struct roce_params, preset), "paper", 0, 0,
	  "the source of every DCQCN value left at 0: the DCQCN paper, or the HPCC ns-3 run "
	  "script at 100 Gb/s",
	  preset_names },
	{ "cnp", OPT_ENUM, offsetof(struct roce_params, cnp_mode), "preset", 0, 0,
	  "paced: a CNP at most every cnp_interval per QP; on_ack: congestion echoed on ACKs; "
	  "preset: paper paced, hpcc on_ack",
	  cnp_modes },
	{ "cnp_interval", OPT_TIME, offsetof(struct roce_params, cnp_interval), "0", 0, 1e12,
	  "N: at most one CNP per QP per interval (paced); 0 = the preset's" },
	{ "g", OPT_DOUBLE, offsetof(struct roce_params, g), "0.00390625", 1e-6, 1,
	  "alpha gain (1/256)" },
	{ "initial_alpha", OPT_DOUBLE, offsetof(struct roce_params, initial_alpha), "1", 0, 1,
	  "alpha of a new QP" },
	{ "alpha_interval", OPT_TIME, offsetof(struct roce_params, alpha_interval), "0", 0, 1e12,
	  "K: alpha update period; 0 = the preset's (paper 55us, hpcc 1us)" },
	{ "rate_decrease_interval", OPT_TIME, offsetof(struct roce_params, rate_decrease_interval),
	  "0", 0, 1e12,
	  "at most one rate cut per interval; 0 = the preset's (paper 50us, hpcc 4us)" },
	{ "increase_timer", OPT_TIME, offsetof(struct roce_params, increase_timer), "0", 0, 1e12,
	  "T: rate-increase timer; 0 = the preset's (paper 55us, hpcc 300us)" },
	{ "byte_counter", OPT_SIZE, offsetof(struct roce_params, byte_counter), "0", 0, 1e12,
	  "B: a rate-increase event per this many bytes sent; 0 = the preset's (10MB)" },
	{ "byte_counter_mode", OPT_ENUM, offsetof(struct roce_params, byte_counter_mode), "preset",
	  0, 0, "whether the byte counter runs: preset (paper on, hpcc off), on or off", bc_modes },
	{ "clamp_target_rate", OPT_ENUM, offsetof(struct roce_params, clamp_mode), "preset", 0, 0,
	  "hpcc model: on = target rate := current rate at every cut; off = only after a rate "
	  "increase (the NIC default); preset: paper on, hpcc off",
	  clamp_modes },
	{ "fast_recovery", OPT_UINT, offsetof(struct roce_params, fast_recovery), "0", 0, 100,
	  "F: fast-recovery stages; 0 = the preset's (paper 5, hpcc 1)" },
	{ "rai", OPT_RATE, offsetof(struct roce_params, rai), "0", 0, 1e12,
	  "R_AI additive increase; 0 = the preset's (paper 40Mbps, hpcc 20Mbps)" },
	{ "rhai", OPT_RATE, offsetof(struct roce_params, rhai), "0", 0, 1e12,
	  "R_HAI hyper increase; 0 = the preset's (200Mbps)" },
	{ "min_rate", OPT_RATE, offsetof(struct roce_params, min_rate), "0", 0, 1e12,
	  "rate floor; 0 = the preset's (paper 100Mbps, hpcc 1Gbps)" },
	OPT_END
};

const struct transport_ops roce_transport_ops = {
	.name = "roce",
	.summary =
	    "RoCEv2 RC: DCQCN, go-back-N, Q queue pairs per connection; switches lossless (PFC) "
	    "unless switch.mode says otherwise",
	.opts = roce_opts,
	.params_size = sizeof(struct roce_params),
	.priv_size = sizeof(struct roce_state),
	.lossless_default = true,
	.check = roce_check,
	.open = roce_open,
	.next_packet = roce_next_packet,
	.on_packet = roce_on_packet,
	.on_timer = roce_on_timer,
	.close = roce_close,
};

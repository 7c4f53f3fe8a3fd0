/* rocev2.c - the RoCEv2 reliable connection under a rate-based congestion
 * control (rocev2.h): queue pairs, go-back-N, ACK coalescing, CNPs, pacing. */
#include "transport/rocev2.h"

#include "core/mem.h"
#include "core/rng.h"
#include "transport/conn.h"
#include "transport/rxmap.h"
#include "transport/transport.h"

const char *const rocev2_qp_modes[] = { "stripe", "rr", NULL };

/* A stream connection's one QP carries the connection's PSNs, its messages
 * segmented each on its own; a plain connection's QP its own sub-chunk. */
static uint64_t qp_payload(const struct conn *c, const struct rocev2_qp *q, uint32_t psn)
{
	return c->stream ? tp_psn_payload(c, psn) : tp_seg_payload(c, q->bytes, q->npkts, psn);
}
static bool qp_last(const struct conn *c, const struct rocev2_qp *q, uint32_t psn)
{
	return c->stream ? tp_psn_last(c, psn) : psn + 1 == q->npkts;
}

/* A QP's deadlines (struct rocev2_due), from its state. */
static struct rocev2_due due_of(const struct rocev2_params *p, const struct rocev2_qp *q)
{
	struct rocev2_due d = { SIMTIME_MAX, SIMTIME_MAX };
	if (q->snd_una >= q->npkts)
		return d;
	d.at = q->cc_at;
	if (q->snd_una < q->snd_nxt && q->last_prog + p->rto < d.at)
		d.at = q->last_prog + p->rto;
	if (q->snd_nxt < q->npkts &&
	    q->snd_nxt - q->snd_una < q->wnd) /* a full window waits for an ACK */
		d.tx = q->next_tx;
	return d;
}

/* Keep QP i's deadlines: wherever its state may have changed, before
 * anything arms the timer again (a NIC's pull that a flow's activation
 * starts may do so at once). */
static void qp_due(struct conn *c, unsigned i)
{
	struct rocev2_state *s = tp_priv(c);
	s->due[i] = due_of(tp_params(c), rocev2_qp(c, i));
}

/* Debug builds (make asan) check that every QP's kept deadlines are its
 * state's, each time they are read. */
static void due_check(struct conn *c)
{
#ifndef NDEBUG
	struct rocev2_state *s = tp_priv(c);
	for (uint32_t i = 0; i < s->nqp; i++) {
		struct rocev2_due d = due_of(tp_params(c), rocev2_qp(c, i));
		MP_ASSERT(s->due[i].at == d.at && s->due[i].tx == d.tx);
	}
#else
	(void)c;
#endif
}

/* The connection's one timer: the earliest of every QP's pacing, RTO and
 * congestion-control deadlines (kept lazily per QP, so an idle QP costs no
 * events), read from the deadlines kept beside the connection, not from the
 * QPs: an ACK re-arms it reading no other QP's line. */
static void arm_timer(struct conn *c)
{
	struct rocev2_state *s = tp_priv(c);
	simtime_t t = SIMTIME_MAX, now = tp_now(c);
	due_check(c);
	for (uint32_t i = 0; i < s->nqp; i++) {
		const struct rocev2_due *d = &s->due[i];
		if (d->at < t)
			t = d->at;
		if (d->tx > now && d->tx < t)
			t = d->tx;
		/* paced until exactly now and off the NIC's round robin: an ACK
		 * arriving at the instant the pacing timer was due re-arms the
		 * timer for a later deadline, so the timer would not wake it */
		if (d->tx == now && !tp_flow(c, i)->active)
			tp_activate_flow(c, i);
	}
	tp_timer_set(c, t);
}

size_t rocev2_priv_size(const void *params)
{
	const struct rocev2_params *p = params;
	/* a stream connection has one QP, a plain one `qps` */
	return sizeof(struct rocev2_state) + (size_t)p->qps * sizeof(struct rocev2_due);
}

/* ---- connection ------------------------------------------------------------------ */
void rocev2_open(struct conn *c, const struct rocev2_cc *cc)
{
	const struct rocev2_params *p = tp_params(c);
	struct rocev2_state *s = tp_priv(c);
	uint64_t pl = tp_payload(c);
	unsigned Q = c->stream ? 1 : (unsigned)p->qps;
	struct mp_rng r;
	rng_init(&r, c->w->seed, RNG_CONN, c->id);
	uint16_t base = (uint16_t)rng_below(&r, 65536);
	s->cc = cc;
	s->line_bps = c->src->node.ports[c->rail].rate_bps;
	s->nqp = Q;
	s->qp = mp_calloc_aligned((size_t)Q * cc->qp_size,
				  MP_CACHE_LINE); /* whole lines: rocev2_prefetch */
	tp_set_flows(c, Q);
	for (unsigned i = 0; i < Q; i++) /* not yet open: no deadline */
		s->due[i].at = s->due[i].tx = SIMTIME_MAX;
	uint64_t off = 0;
	for (unsigned i = 0; i < Q; i++) {
		struct rocev2_qp *q = rocev2_qp(c, i);
		uint64_t len;
		if (c->stream) {
			len = c->bytes;
		} else if (p->qp_mode == ROCEV2_STRIPE) {
			/* equal sub-chunks in whole packets; the last QPs may get less */
			uint64_t pk = (c->bytes + pl - 1) / pl, per = (pk + Q - 1) / Q;
			len = per * pl;
			if (off + len > c->bytes)
				len = c->bytes > off ? c->bytes - off : 0;
		} else {
			len = (c->id % Q) == i ? c->bytes : 0;
		}
		q->bytes = len;
		off += len;
		q->npkts = c->stream ? c->npkts : (uint32_t)((len + pl - 1) / pl);
		q->entropy = (uint16_t)(base + i);
		q->rate = (double)s->line_bps;
		q->wnd = ROCEV2_NO_WND;
		q->cc_at = SIMTIME_MAX;
		cc->init(c, q);
		q->next_tx = tp_now(c);
		q->last_prog = tp_now(c);
		qp_due(c, i);
		if (q->npkts == 0)
			s->done_qps++;
		else
			tp_activate_flow(c, i);
	}
	arm_timer(c);
}

/* More messages on a stream connection: its QP covers them now and sends. */
void rocev2_post(struct conn *c)
{
	struct rocev2_state *s = tp_priv(c);
	struct rocev2_qp *q = rocev2_qp(c, 0);
	if (q->snd_una >= q->npkts) { /* it was idle: resume */
		s->done_qps--;
		q->last_prog = tp_now(c);
		if (s->cc->timers)
			s->cc->timers(c, q, tp_now(c));
	}
	q->npkts = c->npkts;
	q->bytes = c->bytes;
	qp_due(c, 0);
	tp_activate_flow(c, 0);
	arm_timer(c);
}

void rocev2_close(struct conn *c)
{
	struct rocev2_state *s = tp_priv(c);
	for (uint32_t i = 0; i < s->nqp; i++)
		tp_rxmap_free(&rocev2_qp(c, i)->rob);
	mp_free_aligned(s->qp);
}

struct packet *rocev2_next_packet(struct conn *c, unsigned flow)
{
	const struct rocev2_params *p = tp_params(c);
	struct rocev2_state *s = tp_priv(c);
	struct rocev2_qp *q = rocev2_qp(c, flow);
	simtime_t now = tp_now(c);
	if (q->snd_nxt >= q->npkts || q->snd_nxt - q->snd_una >= q->wnd)
		return NULL;	/* nothing left, or a full window: an ACK wakes it (sender) */
	if (now < q->next_tx) { /* paced: the timer wakes this QP */
		arm_timer(c);
		return NULL;
	}
	uint32_t psn = q->snd_nxt++;
	struct packet *pk = tp_pkt_new(c, PKT_DATA, true);
	pk->psn = psn;
	rocev2_pkt_set_qp(pk, flow);
	pk->size = (uint16_t)(qp_payload(c, q, psn) + p->common.header);
	pk->entropy = q->entropy;
	if (p->ect)
		pk->flags |= PKT_F_ECT;
	if (qp_last(c, q, psn))
		pk->flags |= PKT_F_LAST;
	if (psn < q->snd_max) {
		pk->flags |= PKT_F_RETX;
		c->retx_bytes += pk->size;
	} else {
		q->snd_max = psn + 1;
	}
	c->sent_bytes += pk->size;
	/* pacing at the current rate */
	q->next_tx = now + (simtime_t)((double)pk->size * 8.0 * (double)PS_PER_S / q->rate);
	if (s->cc->sent)
		s->cc->sent(c, q, pk);
	/* only a new RTO deadline needs the timer re-armed here: a paced QP
	 * re-arms it when the NIC next asks and finds it early */
	bool clock = psn == q->snd_una; /* the oldest outstanding packet starts the clock */
	if (clock)
		q->last_prog = now;
	qp_due(c, flow);
	if (clock)
		arm_timer(c);
	return pk;
}

/* ---- receiver (responder, notification point) ---------------------------------- */
static inline __attribute__((always_inline)) void send_ctrl(struct conn *c, enum pkt_type type,
							    unsigned qpi, uint32_t epsn, bool ece,
							    const struct packet *echo)
{
	struct packet *a = tp_pkt_new(c, type, false);
	rocev2_pkt_set_qp(a, qpi);
	rocev2_ack_set_epsn(a, epsn);
	a->entropy = echo->entropy;
	a->ts = echo->ts;
	if (ece)
		a->flags |= PKT_F_ECE;
	const struct rocev2_cc *cc = ((const struct rocev2_state *)tp_priv(c))->cc;
	if (cc->echo && type != PKT_CNP)
		cc->echo(c, echo, a);
	tp_send(c, c->dst, a);
}

static void receiver(struct conn *c, struct packet *pk)
{
	const struct rocev2_params *p = tp_params(c);
	unsigned qpi = rocev2_pkt_qp(pk);
	struct rocev2_qp *q = rocev2_qp(c, qpi);
	simtime_t now = tp_now(c);
	if (pk->flags & PKT_F_CE) {
		if (p->cnp_mode == ROCEV2_CNP_PACED) {
			if (!q->cnp_sent || now - q->last_cnp >= p->cnp_interval) {
				q->cnp_sent = true;
				q->last_cnp = now;
				send_ctrl(c, PKT_CNP, qpi, 0, false, pk);
			}
		} else if (p->cnp_mode == ROCEV2_CNP_ON_ACK) {
			q->ce_pending = true;
		}
	}
	tp_rx_order(c, &q->rx_top, pk);
	if (pk->psn == q->epsn) {
		c->rcvd_bytes += tp_rx_payload(c, pk);
		q->epsn++;
		q->unacked++;
		bool last = pk->flags & PKT_F_LAST;
		if (p->reorder) { /* and what the reorder buffer held beyond it */
			q->rob.rcv_nxt = q->epsn;
			while (tp_rxmap_take(&q->rob)) {
				last |= qp_last(c, q, q->epsn);
				q->epsn++;
				q->unacked++;
			}
		}
		if (c->stream)
			tp_rx_upto(c, q->epsn);
		q->nak_sent = false;
		if (q->unacked >= p->ack_interval || last) {
			send_ctrl(c, PKT_ACK, qpi, q->epsn, q->ce_pending, pk);
			q->ce_pending = false;
			q->unacked = 0;
		}
	} else if (pk->psn - q->epsn < p->reorder) {
		/* out of order, within the reorder buffer: kept, no NAK */
		q->rob.rcv_nxt = q->epsn;
		if (tp_rxmap_has(&q->rob, pk->psn)) {
			c->dup_bytes += tp_rx_payload(c, pk);
		} else {
			tp_rxmap_mark(&q->rob, pk->psn);
			c->rcvd_bytes += tp_rx_payload(c, pk);
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
		c->dup_bytes += tp_rx_payload(c, pk);
		send_ctrl(c, PKT_ACK, qpi, q->epsn, q->ce_pending, pk);
		q->ce_pending = false;
	}
	tp_pkt_free(c, pk);
}

/* ---- sender (requester, reaction point) ---------------------------------------------- */
static void acked_to(struct conn *c, struct rocev2_state *s, struct rocev2_qp *q, uint32_t epsn)
{
	if (epsn <= q->snd_una)
		return;
	if (c->stream) { /* before the messages that end here leave the queue */
		for (uint32_t psn = q->snd_una; psn < epsn; psn++)
			c->acked_bytes += tp_psn_payload(c, psn);
	} else {
		uint64_t pl = tp_payload(c);
		uint64_t before = (uint64_t)q->snd_una * pl;
		uint64_t after = epsn >= q->npkts ? q->bytes : (uint64_t)epsn * pl;
		c->acked_bytes += after - before;
	}
	q->snd_una = epsn;
	if (q->snd_nxt < epsn)
		q->snd_nxt = epsn;
	q->last_prog = tp_now(c);
	if (q->snd_una >= q->npkts)
		s->done_qps++;
	if (c->stream)
		tp_tx_upto(c, epsn);
}

static void sender(struct conn *c, struct packet *pk)
{
	struct rocev2_state *s = tp_priv(c);
	unsigned qpi = rocev2_pkt_qp(pk);
	struct rocev2_qp *q = rocev2_qp(c, qpi);
	if (pk->type == PKT_ACK || pk->type == PKT_NACK)
		acked_to(c, s, q, rocev2_ack_epsn(pk));
	s->cc->feedback(c, q, pk);
	bool back = pk->type == PKT_NACK && q->snd_una < q->npkts; /* go back N */
	if (back)
		q->snd_nxt = q->snd_una;
	qp_due(c, qpi);
	if (back)
		tp_activate_flow(c, qpi);
	else if (q->wnd != ROCEV2_NO_WND && q->snd_nxt < q->npkts &&
		 q->snd_nxt - q->snd_una < q->wnd && q->next_tx <= tp_now(c))
		tp_activate_flow(c, qpi); /* the window opened (a paced QP: its timer) */
	tp_pkt_free(c, pk);
	if (s->done_qps == s->nqp) {
		tp_complete(c);
		return;
	}
	arm_timer(c);
}

void rocev2_on_packet(struct conn *c, struct packet *pk)
{
	if (pk->type == PKT_DATA)
		receiver(c, pk);
	else
		sender(c, pk);
}

/* The queue pairs are an array beside the connection (rocev2_open), a miss
 * of every handler at large fabric sizes. A data packet's arrival reads its
 * QP's receiver line (and with a reorder buffer the sender's, for npkts); an
 * ACK, NACK or CNP the sender's line, and the congestion control's lines when
 * its feedback reads them; a NIC's pull the sender's line, and the congestion
 * control's when it counts bytes sent; the timer the QPs it is due for
 * (their timers, or their pacing: the NIC may pull them at once). */
static inline __attribute__((always_inline)) void prefetch_sender(const struct rocev2_state *s,
								  const unsigned char *q, bool cc)
{
	__builtin_prefetch(q);
	if (cc)
		evq_prefetch_lines(q + sizeof(struct rocev2_qp),
				   s->cc->qp_size - sizeof(struct rocev2_qp));
}

void rocev2_prefetch(const struct conn *c, const struct packet *pk, unsigned flow)
{
	const struct rocev2_state *s = (const struct rocev2_state *)c->priv;
	size_t z = s->cc->qp_size;
	if (flow == TP_PF_TIMER) {
		simtime_t t = c->timer_ev_at;
		for (uint32_t i = 0; i < s->nqp; i++) {
			const struct rocev2_due *d = &s->due[i];
			if (d->at <= t || d->tx <= t)
				prefetch_sender(s, s->qp + (size_t)i * z, true);
		}
		return;
	}
	unsigned i = pk ? rocev2_pkt_qp(pk) : flow;
	if (i >= s->nqp)
		return;
	const unsigned char *q = s->qp + (size_t)i * z;
	if (!pk) {
		prefetch_sender(s, q, s->cc->sent);
	} else if (pk->type == PKT_DATA) {
		__builtin_prefetch(q + offsetof(struct rocev2_qp, epsn));
		if (((const struct rocev2_params *)tp_params(c))->reorder)
			__builtin_prefetch(q);
	} else {
		prefetch_sender(s, q,
				!s->cc->feedback_marked_only || pk->type == PKT_CNP ||
				    (pk->flags & PKT_F_ECE));
	}
}

void rocev2_on_timer(struct conn *c)
{
	const struct rocev2_params *p = tp_params(c);
	struct rocev2_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	due_check(c);
	for (uint32_t i = 0; i < s->nqp; i++) {
		const struct rocev2_due *d = &s->due[i];
		if (d->at <= now) { /* the congestion control's timers, or a timeout */
			struct rocev2_qp *q = rocev2_qp(c, i);
			if (q->cc_at <= now)
				s->cc->timers(c, q, now);
			if (q->snd_una < q->snd_nxt && q->last_prog + p->rto <= now) {
				/* timeout: go back to the oldest unacknowledged PSN */
				q->snd_nxt = q->snd_una;
				q->last_prog = now;
				if (s->cc->timeout)
					s->cc->timeout(c, q);
			}
			qp_due(c, i);
		}
		if (d->tx <= now) /* paced until now (or gone back): to the NIC */
			tp_activate_flow(c, i);
	}
	arm_timer(c);
}

void rocev2_trace(const struct conn *c, struct tp_trace *t)
{
	const struct rocev2_state *s = (const struct rocev2_state *)c->priv;
	double sum = 0;
	for (unsigned i = 0; i < s->nqp; i++) {
		const struct rocev2_qp *q =
		    (const struct rocev2_qp *)(s->qp + (size_t)i * s->cc->qp_size);
		if (q->snd_una < q->npkts || c->stream)
			sum += q->rate;
	}
	t->rate = sum;
}

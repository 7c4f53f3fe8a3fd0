/* ref.c - the reference transport used to test the fabric.
 *
 * Not a protocol from a paper: the simplest reliable sender that exercises the
 * fabric. A fixed window (default one bandwidth-delay product of the flow's
 * own path: bottleneck rate x base RTT), one ACK per data packet echoing its
 * PSN and the receiver's cumulative PSN, and a choice of entropy per packet:
 * `fixed` (one path, plain ECMP), `rr` (round robin over `paths` entropies:
 * per-packet spraying) or `random` (uniform over `paths` entropies).
 * Losses are repaired selectively after a retransmission timeout (`rto`):
 * every PSN sent but not yet acknowledged is sent again.
 *
 * Packet fields: DATA psn = PSN; ACK p0 = PSN acknowledged, p1 = cumulative
 * (every PSN below it arrived), ECE flag echoes CE, ts echoes the data's ts
 * (ack_psn, ack_cum).
 */
#include <string.h>

#include "core/bits.h"
#include "core/mem.h"
#include "core/rng.h"
#include "transport/conn.h"
#include "transport/transport.h"

/* An ACK's fields (see above). */
static inline uint32_t ack_psn(const struct packet *p)
{
	return p->p0;
}
static inline uint32_t ack_cum(const struct packet *p)
{
	return p->p1;
}
static inline void ack_set(struct packet *p, uint32_t psn, uint32_t cum)
{
	p->p0 = psn;
	p->p1 = cum;
}

enum ref_entropy { REF_FIXED, REF_RR, REF_RANDOM };

struct ref_params {
	struct tp_common common;
	uint64_t window; /* bytes; 0 = one BDP of the flow's path */
	int entropy;	 /* enum ref_entropy */
	uint64_t paths;	 /* entropies to spray over */
	simtime_t rto;	 /* ps */
	bool ecn;	 /* send ECN-capable packets (marks only counted) */
};

struct ref_state {
	/* sender */
	uint32_t npkts;	   /* packets in the message */
	uint32_t next_psn; /* next new PSN to send */
	uint32_t cum;	   /* every PSN below is acknowledged */
	uint32_t nacked;
	uint32_t inflight; /* packets believed in the network */
	uint32_t wnd_pkts;
	uint32_t retx_next; /* scan position during recovery */
	uint32_t retx_end;  /* recovery covers PSNs below this */
	uint16_t ent_base;
	simtime_t last_progress;
	uint64_t *acked; /* bitmap, sender side */
	uint32_t words;	 /* words allocated in each bitmap */
	struct mp_rng rng;
	/* receiver */
	uint32_t rcv_cum;
	uint64_t *rcvd; /* bitmap, receiver side */
};

static void ref_open(struct conn *c)
{
	const struct ref_params *pp = tp_params(c);
	struct ref_state *s = tp_priv(c);
	s->npkts = c->npkts;
	uint32_t w0 = 0;
	tp_bits_grow(&s->acked, &w0, s->npkts);
	s->words = 0;
	tp_bits_grow(&s->rcvd, &s->words, s->npkts);
	uint64_t w = pp->window;
	if (w == 0) {
		w = tp_bdp_bytes(c);
	}
	uint64_t wp = (w + pp->common.mtu - 1) / pp->common.mtu;
	s->wnd_pkts = (uint32_t)(wp < 1 ? 1 : wp > UINT32_MAX ? UINT32_MAX : wp);
	rng_init(&s->rng, c->w->seed, RNG_CONN, c->id);
	s->ent_base = (uint16_t)rng_below(&s->rng, 65536);
	s->last_progress = tp_now(c);
	tp_activate(c);
}

/* More messages on a stream connection: cover their PSNs and send. */
static void ref_post(struct conn *c)
{
	struct ref_state *s = tp_priv(c);
	uint32_t w0 = s->words;
	tp_bits_grow(&s->acked, &w0, c->npkts);
	tp_bits_grow(&s->rcvd, &s->words, c->npkts);
	if (s->nacked == s->npkts) /* was idle: the RTO counts from now */
		s->last_progress = tp_now(c);
	s->npkts = c->npkts;
	tp_activate(c);
}

static void ref_close(struct conn *c)
{
	struct ref_state *s = tp_priv(c);
	mp_free(s->acked);
	mp_free(s->rcvd);
}

static uint16_t next_entropy(struct conn *c, uint32_t psn)
{
	const struct ref_params *pp = tp_params(c);
	struct ref_state *s = tp_priv(c);
	switch (pp->entropy) {
	case REF_RR:
		return (uint16_t)(s->ent_base + psn % pp->paths);
	case REF_RANDOM:
		return (uint16_t)(s->ent_base + rng_below(&s->rng, pp->paths));
	default:
		return s->ent_base;
	}
}

static struct packet *ref_next_packet(struct conn *c, unsigned flow)
{
	(void)flow;
	const struct ref_params *pp = tp_params(c);
	struct ref_state *s = tp_priv(c);
	uint32_t psn;
	bool retx = false;
	while (s->retx_next < s->retx_end && bit_get(s->acked, s->retx_next))
		s->retx_next++;
	if (s->retx_next < s->retx_end && s->inflight < s->wnd_pkts) {
		psn = s->retx_next++;
		retx = true;
	} else if (s->next_psn < s->npkts && s->inflight < s->wnd_pkts) {
		psn = s->next_psn++;
	} else {
		return NULL;
	}
	struct packet *p = tp_pkt_new(c, PKT_DATA, true);
	p->psn = psn;
	p->size = (uint16_t)(tp_psn_payload(c, psn) + pp->common.header);
	p->entropy = next_entropy(c, psn);
	if (pp->ecn)
		p->flags |= PKT_F_ECT;
	if (tp_psn_last(c, psn))
		p->flags |= PKT_F_LAST;
	if (retx) {
		p->flags |= PKT_F_RETX;
		c->retx_bytes += p->size;
	}
	c->sent_bytes += p->size;
	s->inflight++;
	if (c->timer_at == SIMTIME_MAX)
		tp_timer_set(c, tp_now(c) + pp->rto);
	return p;
}

static void ref_receiver(struct conn *c, struct packet *p)
{
	struct ref_state *s = tp_priv(c);
	uint32_t psn = p->psn;
	uint64_t pl = tp_rx_payload(c, p);
	if (bit_get(s->rcvd, psn)) {
		c->dup_bytes += pl;
	} else {
		bit_set(s->rcvd, psn);
		c->rcvd_bytes += pl;
		while (s->rcv_cum < c->npkts && bit_get(s->rcvd, s->rcv_cum))
			s->rcv_cum++;
		tp_rx_upto(c, s->rcv_cum);
	}
	/* turn the data packet into its ACK */
	bool ce = p->flags & PKT_F_CE;
	p->type = PKT_ACK;
	p->cls = CLS_CTRL;
	p->size = (uint16_t)tp_common(c)->ack_size;
	p->src = c->dst_hid;
	p->dst = c->src_hid;
	ack_set(p, psn, s->rcv_cum);
	p->flags = ce ? PKT_F_ECE : 0;
	tp_send(c, c->dst, p);
}

static void ack_one(struct conn *c, struct ref_state *s, uint32_t psn)
{
	if (bit_get(s->acked, psn))
		return;
	bit_set(s->acked, psn);
	s->nacked++;
	c->acked_bytes += tp_psn_payload(c, psn);
}

static void ref_sender(struct conn *c, struct packet *p)
{
	struct ref_state *s = tp_priv(c);
	uint32_t before = s->nacked;
	ack_one(c, s, ack_psn(p));
	while (s->cum < ack_cum(p))
		ack_one(c, s, s->cum++);
	while (s->cum < s->npkts && bit_get(s->acked, s->cum))
		s->cum++;
	tp_tx_upto(c, s->cum);
	if (s->inflight)
		s->inflight--;
	tp_pkt_free(c, p);
	if (s->nacked != before)
		s->last_progress = tp_now(c);
	if (s->nacked == s->npkts) {
		tp_complete(c);
		return;
	}
	tp_activate(c);
}

static void ref_on_packet(struct conn *c, struct packet *p)
{
	if (p->type == PKT_DATA)
		ref_receiver(c, p);
	else
		ref_sender(c, p);
}

static void ref_on_timer(struct conn *c)
{
	const struct ref_params *pp = tp_params(c);
	struct ref_state *s = tp_priv(c);
	simtime_t now = tp_now(c);
	if (s->nacked == s->npkts)
		return;
	if (now - s->last_progress >= pp->rto) {
		/* retransmission timeout: resend every unacknowledged PSN sent so far */
		s->retx_next = s->cum;
		s->retx_end = s->next_psn;
		s->inflight = 0;
		s->last_progress = now;
		tp_activate(c);
	}
	tp_timer_set(c, s->last_progress + pp->rto);
}

static const struct opt_desc ref_opts[] = {
	TP_COMMON_OPTS(struct ref_params),
	{ "window", OPT_SIZE, offsetof(struct ref_params, window), "0", 0, 1e12,
	  "bytes in flight; 0 = one BDP of the flow's path (bottleneck rate x base RTT)" },
	{ "entropy", OPT_ENUM, offsetof(struct ref_params, entropy), "fixed", 0, 0,
	  "UDP source port per packet: fixed (one path), rr or random over `paths`",
	  (const char *const[]){ "fixed", "rr", "random", NULL } },
	{ "paths", OPT_UINT, offsetof(struct ref_params, paths), "256", 1, 65536,
	  "entropies to spray over (rr, random)" },
	{ "rto", OPT_TIME, offsetof(struct ref_params, rto), "200us", 1e6, 1e13,
	  "retransmission timeout" },
	{ "ecn", OPT_BOOL, offsetof(struct ref_params, ecn), "false", 0, 0,
	  "mark data packets ECN-capable (the window ignores marks)" },
	OPT_END
};

static void ref_trace(const struct conn *c, struct tp_trace *t)
{
	t->cwnd = (double)((const struct ref_state *)c->priv)->wnd_pkts * (double)tp_common(c)->mtu;
}

const struct transport_ops ref_transport_ops = {
	.trace = ref_trace,
	.name = "ref",
	.summary = "reference: fixed window, per-packet ACKs, fixed/round-robin/random entropy",
	.opts = ref_opts,
	.params_size = sizeof(struct ref_params),
	.priv_size = sizeof(struct ref_state),
	.pkt_state_bits = 2, /* the acked and rcvd bitmaps */
	.open = ref_open,
	.post = ref_post,
	.next_packet = ref_next_packet,
	.on_packet = ref_on_packet,
	.on_timer = ref_on_timer,
	.close = ref_close,
};

/* transport.c - connections, their one timer, and the glue between the NIC
 * (net/) and the protocols' ops tables; the protocol registry. */
#include "transport/transport.h"

#include <math.h>
#include <string.h>

#include "core/bits.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/mem.h"
#include "net/fabric.h"
#include "net/host.h"
#include "transport/conn.h"
#include "transport/pktbook.h"
#include "transport/rxmap.h"
#include "transport/tp_world.h"

extern const struct transport_ops ref_transport_ops, roce_transport_ops, strack_transport_ops,
    udmp_transport_ops, mprdma_transport_ops, timely_transport_ops, hpcc_transport_ops,
    dctcp_transport_ops, swift_transport_ops, uet_transport_ops;

/* The protocols, in `mpsim list`'s order (one a line). */
/* clang-format off */
const struct transport_ops *const transport_registry[] = {
	&ref_transport_ops,
	&roce_transport_ops,
	&strack_transport_ops,
	&udmp_transport_ops,
	&mprdma_transport_ops,
	&timely_transport_ops,
	&hpcc_transport_ops,
	&dctcp_transport_ops,
	&swift_transport_ops,
	&uet_transport_ops,
	NULL,
};
/* clang-format on */

const struct transport_ops *transport_find(const char *name)
{
	for (const struct transport_ops *const *o = transport_registry; *o; o++)
		if (strcmp((*o)->name, name) == 0)
			return *o;
	return NULL;
}

/* A host's transport events (tp_host_timer) come last among the entities,
 * counting down; the connections count up to them (conn_new). */
#define TP_HOST_ENTITY(hid) (EVQ_MAX_ENTITY - (hid))

static void host_rx(void *ctx, struct host *h, struct packet *p)
{
	struct tp_world *w = ctx;
	(void)h;
	MP_ASSERT(p->conn < w->nconns);
	struct conn *c = w->conns[p->conn];
	w->ops->on_packet(c, p);
}

static struct packet *nic_pull(void *ctx, struct nic_flow *nf)
{
	struct tp_world *w = ctx;
	struct conn *c = nf->owner;
	if (c->done || c->idle)
		return NULL;
	return w->ops->next_packet(c, nf->index);
}

/* The run loop's prefetchers (net/host.h): the lines of a connection and
 * its protocol's state that a packet's arrival or a NIC's pull reads next
 * (at 8192 hosts they are far out of cache:
 * bench/notes/2026-11-24-packet-hop-rounds-4-5.md). A data packet
 * or a probe reaches the receiver, which reads lines 0-2 of the connection
 * and the protocol's receiver part; anything else reaches the sender, which
 * reads lines 0-1 and 3 and the rest of the protocol's state, as does a
 * NIC's pull (struct conn, transport_ops.priv_rx_size). */
_Static_assert(
    sizeof(struct tp_msgq) == 32 && offsetof(struct conn, mq) + sizeof(struct tp_msgq) == 128 &&
	offsetof(struct conn, rcvd_bytes) == 128 && offsetof(struct conn, evs) == 192 &&
	offsetof(struct conn, base_rtt) == 248 && offsetof(struct conn, start) == 256 &&
	offsetof(struct conn, priv) == sizeof(struct conn) && sizeof(struct conn) == 320,
    "struct conn: two common lines, one of the receiver's, one of the sender's, a cold one");

static inline __attribute__((always_inline)) void conn_prefetch(const struct tp_world *w,
								const void *c, bool rx)
{
	const char *b = c, *priv = b + sizeof(struct conn);
	size_t split = w->ops->priv_rx_size;
	evq_prefetch_lines(b, 128);
	if (rx) {
		evq_prefetch_lines(b + 128, 64);
		evq_prefetch_lines(priv, split ? split : w->priv_size);
	} else {
		evq_prefetch_lines(b + 192, 64);
		size_t from = split & ~(size_t)63;
		evq_prefetch_lines(priv + from, w->priv_size - from);
	}
}

static void host_rx_prefetch(const void *ctx, const struct packet *p, bool late)
{
	const struct tp_world *w = ctx;
	if (p->conn >= w->nconns)
		return;
	const struct conn *c = w->conns[p->conn];
	if (!late)
		conn_prefetch(w, c, tp_to_receiver(p));
	else if (w->ops->prefetch)
		w->ops->prefetch(c, p, 0);
}

/* A NIC's pull from the flow at the head of its round robin: the early
 * stage reads the flow (the run loop prefetched it: the end of
 * transmission's hint, net/port.c) and asks for its connection's sender
 * lines; the late one for what the protocol's state points to. It reads the
 * flow's connection rather than guess its lines from the flow's address,
 * which are the connection's for flow 0 alone (conn.nf), not for a RoCEv2
 * connection's other queue pairs (c->xnf)
 * (bench/notes/2026-11-27-prefetching-non-addresses.md). */
static void nic_pull_prefetch(const void *ctx, const struct nic_flow *nf, bool late)
{
	const struct tp_world *w = ctx;
	if (!late)
		conn_prefetch(w, nf->owner, false);
	else if (w->ops->prefetch)
		w->ops->prefetch(nf->owner, NULL, nf->index);
}

static void timer_fire(void *obj, uint64_t arg);

/* Does c want its timer (timer_fire runs the protocol's, or sets a later event)? */
static inline bool timer_wanted(const struct conn *c)
{
	return c->timer_at != SIMTIME_MAX && !c->done && !c->idle;
}

/* A timer event's prefetchers: the run loop brings the connection's first
 * four lines (what timer_fire reads); then the sender's lines and state,
 * then what the protocol's state points to (a RoCEv2 connection's queue
 * pairs: every data packet of a paced queue pair is sent from its timer, and
 * the queue pair is what that handler reads first,
 * bench/notes/2026-11-24-rocev2-8192-hosts.md). A superseded event (timer_fire returns at once) costs
 * these prefetches, nothing else. */
static void timer_prefetch(const void *obj, uint64_t arg)
{
	const struct conn *c = obj;
	(void)arg;
	if (timer_wanted(c))
		conn_prefetch(c->w, c, false);
}

static void timer_prefetch_late(const void *obj, uint64_t arg)
{
	const struct conn *c = obj;
	(void)arg;
	if (!timer_wanted(c))
		return;
	if (c->xnf) /* a timer may wake any of the flows */
		evq_prefetch_lines(c->xnf, (c->nflows - 1u) * sizeof *c->xnf);
	if (c->w->ops->prefetch)
		c->w->ops->prefetch(c, NULL, TP_PF_TIMER);
}

/* The observing callbacks (traces, RTT samples): the plain ones, plus what
 * a trace samples and the RTT hook hears. Every protocol's ACK and NACK echo
 * the send time of the data packet that caused them (ts), so now - ts is the
 * RTT a NIC would time, ACK coalescing included. */
static void host_rx_obs(void *ctx, struct host *h, struct packet *p)
{
	struct tp_world *w = ctx;
	MP_ASSERT(p->conn < w->nconns);
	struct conn *c = w->conns[p->conn];
	if ((p->type == PKT_ACK || p->type == PKT_NACK) && h == c->src && p->ts <= w->q->now) {
		c->trace_rtt = w->q->now - p->ts;
		if (w->on_rtt)
			w->on_rtt(w->rtt_ctx, c, c->trace_rtt);
	}
	w->ops->on_packet(c, p);
}

static struct packet *nic_pull_trace(void *ctx, struct nic_flow *nf)
{
	struct packet *p = nic_pull(ctx, nf);
	if (p && p->type == PKT_DATA)
		((struct conn *)nf->owner)->trace_path = (uint32_t)p->entropy + 1;
	return p;
}

void tp_world_trace(struct tp_world *w)
{
	w->fab->host_rx = host_rx_obs;
	w->fab->nic_pull = nic_pull_trace;
}

void tp_world_rtt_hook(struct tp_world *w, void (*fn)(void *ctx, struct conn *c, simtime_t rtt),
		       void *ctx)
{
	w->on_rtt = fn;
	w->rtt_ctx = ctx;
	w->fab->host_rx = host_rx_obs;
}

void tp_trace_fill(const struct conn *c, struct tp_trace *t)
{
	t->cwnd = t->rate = NAN;
	if (c->w->ops->trace && c->started)
		c->w->ops->trace(c, t);
	t->rtt = c->trace_rtt ? (double)c->trace_rtt : NAN;
	t->path = c->trace_path ? (double)(c->trace_path - 1) : NAN;
}

void tp_world_init(struct tp_world *w, struct evq *q, struct fabric *fab,
		   const struct transport_ops *ops, const void *params, uint64_t seed)
{
	memset(w, 0, sizeof *w);
	w->q = q;
	w->fab = fab;
	w->ops = ops;
	w->params = params;
	w->priv_size = tp_priv_size(ops, params);
	w->seed = seed;
	w->ood_hist = mp_calloc(TP_OOD_MAX + 1, sizeof *w->ood_hist);
	fab->host_rx = host_rx;
	fab->nic_pull = nic_pull;
	fab->host_rx_prefetch = host_rx_prefetch;
	fab->nic_pull_prefetch = nic_pull_prefetch;
	fab->cb_ctx = w;
	fab->pf_ctx = w;
	evq_set_prefetch(timer_fire, timer_prefetch);
	evq_set_prefetch_late(timer_fire, timer_prefetch_late);
	if (ops->host_priv_size || ops->on_host_timer) {
		uint32_t n = fab->nhosts;
		w->host_stride = (ops->host_priv_size + 7) & ~(size_t)7;
		w->host_priv = mp_calloc_aligned(n * w->host_stride + 1, MP_CACHE_LINE);
		w->host_evs = mp_calloc(n ? n : 1, sizeof *w->host_evs);
		for (uint32_t i = 0; i < n; i++)
			w->host_evs[i].id = TP_HOST_ENTITY(i);
	}
}

static void host_timer_fire(void *obj, uint64_t arg)
{
	struct tp_world *w = obj;
	w->ops->on_host_timer(w, (uint32_t)arg);
}

void tp_host_timer(struct tp_world *w, uint32_t hid, simtime_t t)
{
	MP_ASSERT(w->host_evs && hid < w->fab->nhosts && t >= w->q->now);
	evq_at(w->q, &w->host_evs[hid], t, host_timer_fire, w, hid);
}

/* The ends kept beside the queue for tp_rx_upto and tp_tx_upto, so that a
 * packet reads no message record (UINT32_MAX: none). */
static void msgq_ends(struct conn *c)
{
	const struct tp_msgq *q = &c->mq;
	const struct tp_msg *m;
	c->mq.tx_end = UINT32_MAX;
	c->mq_rx_end = UINT32_MAX;
	if (q->n) {
		m = &q->v[q->head];
		c->mq.tx_end = m->psn0 + m->npkts;
	}
	if (q->rx < q->n) {
		m = &q->v[(q->head + q->rx) & (q->cap - 1)];
		c->mq_rx_end = m->psn0 + m->npkts;
	}
}

static struct conn *conn_new(struct tp_world *w, uint32_t src, uint32_t dst, unsigned rail)
{
	if ((w->nconns & (w->nconns - 1)) == 0) /* grow at powers of two */
		w->conns = mp_realloc(w->conns, (w->nconns ? w->nconns * 2 : 1) * sizeof *w->conns);
	struct conn *c = mp_calloc_aligned(sizeof *c + w->priv_size, MP_CACHE_LINE);
	c->w = w;
	c->id = w->nconns;
	c->src = w->fab->hosts[src];
	c->dst = w->fab->hosts[dst];
	c->src_hid = src;
	c->dst_hid = dst;
	MP_ASSERT(c->src->hid == src && c->dst->hid == dst);
	/* spread connections over the rails both ends have */
	unsigned nr =
	    host_nports(c->src) < host_nports(c->dst) ? host_nports(c->src) : host_nports(c->dst);
	c->rail = (uint8_t)(rail % nr);
	c->nf.port = &c->src->node.ports[c->rail];
	c->nf.owner = c;
	c->nflows = 1;
	c->timer_at = c->timer_ev_at = c->timer_ev_next = SIMTIME_MAX;
	msgq_ends(c);
	c->evs.id = TP_ENTITY_BASE + c->id;
	if (c->evs.id > EVQ_MAX_ENTITY - w->fab->nhosts) /* TP_HOST_ENTITY's */
		MP_PANIC("too many connections for the event key (%u)", c->id);
	const struct tp_common *cm = w->params;
	uint64_t bn;
	simtime_t fwd = fab_path_delay(w->fab, src, dst, c->rail, (uint32_t)cm->mtu, &bn);
	simtime_t back = fab_path_delay(w->fab, dst, src, c->rail, (uint32_t)cm->ack_size, NULL);
	c->bottleneck_bps = bn;
	c->base_rtt = fwd + back;
	w->conns[w->nconns++] = c;
	return c;
}

simtime_t tp_ideal_fct(const struct conn *c, uint64_t bytes)
{
	/* all packets through the bottleneck back to back, then the last packet's
	 * remaining hops and the ACK's way back (store-and-forward, empty fabric) */
	const struct tp_common *cm = c->w->params;
	struct fabric *f = c->w->fab;
	uint32_t src = c->src_hid, dst = c->dst_hid;
	uint64_t payload = cm->mtu - cm->header;
	uint64_t npkts = bytes ? (bytes + payload - 1) / payload : 1;
	uint64_t last = bytes - (npkts - 1) * payload + cm->header;
	uint64_t wire = (npkts - 1) * cm->mtu + last;
	uint64_t bn = c->bottleneck_bps;
	simtime_t back = fab_path_delay(f, dst, src, c->rail, (uint32_t)cm->ack_size, NULL);
	return time_ser_ps(wire, bn) + fab_path_delay(f, src, dst, c->rail, (uint32_t)last, NULL) -
	       time_ser_ps(last, bn) + back;
}

/* Append a message to c's queue (no protocol call). */
static void msgq_push(struct conn *c, uint64_t bytes, uint32_t tag)
{
	struct tp_msgq *q = &c->mq;
	if (q->n == q->cap) { /* double, unrolling the ring */
		uint32_t cap = q->cap ? q->cap * 2 : 4;
		struct tp_msg *v = mp_malloc(cap * sizeof *v);
		for (uint32_t i = 0; i < q->n; i++)
			v[i] = q->v[(q->head + i) & (q->cap - 1)];
		mp_free(q->v);
		q->v = v;
		q->cap = cap;
		q->head = 0;
		q->hint = 0;
	}
	uint32_t n = tp_npkts(c, bytes);
	MP_ASSERT((uint64_t)c->npkts + n < UINT32_MAX);
	q->v[(q->head + q->n++) & (q->cap - 1)] =
	    (struct tp_msg){ .bytes = bytes, .psn0 = c->npkts, .npkts = n, .tag = tag };
	c->bytes += bytes;
	c->npkts += n;
	c->nmsgs++;
	msgq_ends(c);
}

struct conn *tp_conn_add(struct tp_world *w, uint32_t src, uint32_t dst, uint64_t bytes,
			 simtime_t start)
{
	struct conn *c = conn_new(w, src, dst, w->nconns);
	msgq_push(c, bytes, c->id);
	c->start = start;
	c->ideal_fct = tp_ideal_fct(c, bytes);
	return c;
}

struct conn *tp_stream_add(struct tp_world *w, uint32_t src, uint32_t dst, unsigned rail)
{
	struct conn *c = conn_new(w, src, dst, rail);
	c->stream = true;
	return c;
}

void tp_post(struct conn *c, uint64_t bytes, uint32_t tag)
{
	MP_ASSERT(c->stream && bytes > 0);
	MP_ASSERT(c->w->ops->post);
	msgq_push(c, bytes, tag);
	c->idle = false;
	if (!c->started) {
		c->started = true;
		c->start = tp_now(c);
		c->w->ops->open(c);
	} else {
		c->w->ops->post(c);
	}
}

uint64_t tp_msgq_payload(const struct conn *c, uint32_t psn, bool *last)
{
	struct tp_msgq *q = (struct tp_msgq *)&c->mq;
	uint64_t pl = tp_payload(c);
	MP_ASSERT(psn < c->npkts);
	if (!q->n || psn < q->v[q->head].psn0) { /* retired: its message was acknowledged */
		if (last)
			*last = false;
		return pl;
	}
	uint32_t i = q->hint < q->n ? q->hint : 0, mask = q->cap - 1;
	const struct tp_msg *m = &q->v[(q->head + i) & mask];
	while (psn < m->psn0)
		m = &q->v[(q->head + --i) & mask];
	while (psn >= m->psn0 + m->npkts)
		m = &q->v[(q->head + ++i) & mask];
	q->hint = i;
	uint32_t k = psn - m->psn0;
	if (last)
		*last = k + 1 == m->npkts;
	return k + 1 < m->npkts ? pl : m->bytes - (uint64_t)(m->npkts - 1) * pl;
}

void tp_msgq_rx(struct conn *c, uint32_t rcv_nxt)
{
	struct tp_msgq *q = &c->mq;
	while (q->rx < q->n) {
		struct tp_msg *m = &q->v[(q->head + q->rx) & (q->cap - 1)];
		if (rcv_nxt < m->psn0 + m->npkts)
			break;
		m->rx_done = true;
		q->rx++;
		msgq_ends(c);
		if (c->w->on_msg)
			c->w->on_msg(c->w->ctx, c, m->tag, true);
	}
}

void tp_msgq_tx(struct conn *c, uint32_t snd_una)
{
	struct tp_msgq *q = &c->mq;
	while (q->n) {
		struct tp_msg *m = &q->v[q->head];
		if (snd_una < m->psn0 + m->npkts)
			break;
		if (!m->rx_done) /* a receiver that did not report: delivered by now */
			tp_msgq_rx(c, m->psn0 + m->npkts);
		uint32_t tag = m->tag;
		q->head = (q->head + 1) & (q->cap - 1);
		q->n--;
		q->rx--;
		q->hint = q->hint ? q->hint - 1 : 0;
		msgq_ends(c);
		if (c->w->on_msg)
			c->w->on_msg(c->w->ctx, c, tag, false);
	}
}

void tp_grow(void **a, size_t elem, uint32_t *cap, uint32_t need)
{
	if (need <= *cap)
		return;
	uint64_t n = *cap ? *cap : need;
	while (n < need)
		n *= 2;
	MP_ASSERT(n <= UINT32_MAX);
	*a = mp_realloc(*a, n * elem);
	memset((char *)*a + (size_t)*cap * elem, 0, (n - *cap) * elem);
	*cap = (uint32_t)n;
}

void tp_bits_grow(uint64_t **b, uint32_t *words, uint32_t need)
{
	tp_grow((void **)b, sizeof **b, words, (uint32_t)(((uint64_t)need + 63) / 64));
}

void tp_world_free(struct tp_world *w)
{
	for (uint32_t i = 0; i < w->nconns; i++) {
		struct conn *c = w->conns[i];
		if (c->started && w->ops->close)
			w->ops->close(c);
		mp_free_aligned(c->xnf);
		mp_free(c->mq.v);
		mp_free_aligned(c);
	}
	mp_free(w->conns);
	for (uint32_t i = 0; i < w->intern_cap; i++)
		mp_free_aligned(w->intern[i]);
	mp_free(w->intern);
	w->intern = NULL;
	w->intern_cap = w->nintern = 0;
	mp_free(w->ood_hist);
	w->ood_hist = NULL;
	mp_free_aligned(w->host_priv);
	mp_free(w->host_evs);
	w->host_priv = NULL;
	w->host_evs = NULL;
	w->conns = NULL;
	w->nconns = 0;
}

struct tp_blob {
	uint64_t hash;
	size_t n;
	_Alignas(64) unsigned char b[];
};

/* The empty slot where a blob of this hash goes, or the blob equal to p. */
static struct tp_blob **intern_slot(struct tp_world *w, uint64_t h, const void *p, size_t n)
{
	uint32_t m = w->intern_cap - 1;
	for (uint32_t i = (uint32_t)h & m;; i = (i + 1) & m) {
		struct tp_blob **x = &w->intern[i];
		if (!*x || ((*x)->hash == h && (*x)->n == n && memcmp((*x)->b, p, n) == 0))
			return x;
	}
}

const void *tp_intern(struct tp_world *w, const void *p, size_t n)
{
	uint64_t h = mp_fnv1a(MP_FNV_INIT, p, n);
	struct tp_blob **x = w->intern_cap ? intern_slot(w, h, p, n) : NULL;
	if (x && *x)
		return (*x)->b;
	if (2 * (w->nintern + 1) > w->intern_cap) { /* at most half full */
		struct tp_blob **old = w->intern;
		uint32_t oc = w->intern_cap;
		w->intern_cap = oc ? 2 * oc : 16;
		w->intern = mp_calloc(w->intern_cap, sizeof *w->intern);
		for (uint32_t i = 0; i < oc; i++)
			if (old[i])
				*intern_slot(w, old[i]->hash, old[i]->b, old[i]->n) = old[i];
		mp_free(old);
		x = intern_slot(w, h, p, n);
	}
	*x = mp_calloc_aligned(sizeof **x + n, 64);
	(*x)->hash = h;
	(*x)->n = n;
	memcpy((*x)->b, p, n);
	w->nintern++;
	return (*x)->b;
}

static void timer_fire(void *obj, uint64_t arg)
{
	struct conn *c = obj;
	simtime_t now = c->w->q->now;
	(void)arg;
	if (now != c->timer_ev_at)
		return; /* superseded by an earlier event */
	c->timer_ev_at = c->timer_ev_next;
	c->timer_ev_next = SIMTIME_MAX;
	if (!timer_wanted(c))
		return;
	if (c->timer_at > now) {
		tp_timer_set(c, c->timer_at);
		return;
	}
	c->timer_at = SIMTIME_MAX;
	c->w->ops->on_timer(c);
}

void tp_set_flows(struct conn *c, unsigned n)
{
	MP_ASSERT(n >= 1 && n <= UINT16_MAX && c->nflows == 1 && !c->xnf);
	if (n > 1)
		c->xnf = mp_calloc_aligned((n - 1) * sizeof *c->xnf,
					   MP_CACHE_LINE); /* timer_prefetch_late */
	for (unsigned i = 1; i < n; i++) {
		c->xnf[i - 1].port = c->nf.port;
		c->xnf[i - 1].owner = c;
		c->xnf[i - 1].index = (uint16_t)i;
	}
	c->nflows = (uint16_t)n;
}

/* The connection keeps one deadline (timer_at) and knows the times of its
 * two earliest timer events. A deadline no earlier than one of them needs no
 * event of its own: that event wakes timer_fire, which then sets one for the
 * deadline. A deadline earlier than both gets an event, and the later of the
 * two is forgotten: it fires as a superseded one, which costs an event and
 * nothing else. Without the second, every deadline set after a timer fired
 * would push an event, and a RoCEv2 queue pair's RTO deadlines (67 ms ahead,
 * moved by every acknowledgement) would pile up unfired in the queue
 * (bench/notes/2026-11-24-rocev2-8192-hosts.md). */
void tp_timer_set(struct conn *c, simtime_t t)
{
	/* a deadline already past (an RTO of a shrinking RTT estimate) is due now */
	if (t < tp_now(c))
		t = tp_now(c);
	c->timer_at = t;
	if (t < c->timer_ev_at) {
		c->timer_ev_next = c->timer_ev_at;
		c->timer_ev_at = t;
		evq_at(c->w->q, &c->evs, t, timer_fire, c, 0);
	}
}

struct packet *tp_pkt_new(struct conn *c, enum pkt_type type, bool from_sender)
{
	struct packet *p = pkt_alloc(c->w->fab);
	p->type = (uint8_t)type;
	p->conn = c->id;
	p->src = from_sender ? c->src_hid : c->dst_hid;
	p->dst = from_sender ? c->dst_hid : c->src_hid;
	p->cls = type == PKT_DATA ? CLS_DATA : CLS_CTRL;
	p->size = (uint16_t)(type == PKT_DATA ? tp_common(c)->mtu : tp_common(c)->ack_size);
	p->ts = c->w->q->now;
	p->entropy = 0;
	p->rail = c->rail;
	p->psn = 0;
	p->in_port = 0;
	p->aux16 = 0;
	p->p0 = p->p1 = p->p2 = 0;
	p->u64 = 0;
	return p;
}

void tp_complete(struct conn *c)
{
	if (c->done || c->idle)
		return;
	c->timer_at = SIMTIME_MAX;
	for (unsigned i = 0; i < c->nflows; i++)
		nic_deactivate(c->w->fab, tp_flow(c, i));
	if (c->stream) {
		c->idle = true;
		tp_tx_upto(c, c->npkts);
		return;
	}
	c->done = true;
	c->finish = c->w->q->now;
	tp_tx_upto(c, c->npkts);
	c->w->ndone++;
	if (c->w->on_complete)
		c->w->on_complete(c->w->ctx, c);
}

/* ---- per-packet-ACK receiver (UDMP, MP-RDMA) ------------------------------------ */
#ifdef MPSIM_SMALL_LIMITS
#define TP_RING_MIN 4u /* the rings' growth paths run in every test */
#define TP_LATE_MIN 2u
#else
#define TP_RING_MIN 64u
#define TP_LATE_MIN 16u
#endif

static uint64_t *ring_bits_new(uint32_t cap)
{
	return mp_calloc((cap + 63) / 64, sizeof(uint64_t));
}

/* The ring holds PSN psn (psn - rcv_nxt < cap afterwards). */
static void rxmap_fit(struct tp_rxmap *m, uint32_t psn)
{
	uint32_t cap = m->cap ? m->cap : TP_RING_MIN;
	while (psn - m->rcv_nxt >= cap) {
		MP_ASSERT(cap <= UINT32_MAX / 2);
		cap *= 2;
	}
	if (cap == m->cap)
		return;
	uint64_t *bits = ring_bits_new(cap);
	for (uint32_t i = 0; i < m->cap; i++) /* PSNs rcv_nxt .. rcv_nxt + old cap - 1 */
		if (bit_get(m->bits, (m->rcv_nxt + i) & (m->cap - 1)))
			bit_set(bits, (m->rcv_nxt + i) & (cap - 1));
	mp_free(m->bits);
	m->bits = bits;
	m->cap = cap;
}

uint32_t tp_rxmap_advance(struct tp_rxmap *m, uint32_t npkts)
{
	while (m->rcv_nxt < npkts && tp_rxmap_take(m))
		;
	return m->rcv_nxt;
}

/* Up to n (<= 64) bits of the ring for PSNs from psn on, all in the ring's
 * span [rcv_nxt, rcv_nxt + cap): whole words when the ring has them. */
static uint64_t ring_bits(const struct tp_rxmap *m, uint32_t psn, uint32_t n)
{
	uint64_t v = 0;
	if (m->cap >= 64) { /* at most two words, wrapping at the ring's end */
		uint32_t i = psn & (m->cap - 1), w = i >> 6, sh = i & 63;
		v = m->bits[w] >> sh;
		if (sh)
			v |= m->bits[(w + 1) & ((m->cap >> 6) - 1)] << (64 - sh);
	} else {
		for (uint32_t k = 0; k < n; k++)
			if (bit_get(m->bits, (psn + k) & (m->cap - 1)))
				v |= 1ULL << k;
	}
	return n >= 64 ? v : v & ((1ULL << n) - 1);
}

uint64_t tp_rxmap_bits64(const struct tp_rxmap *m, uint32_t base, uint32_t npkts)
{
	if (base >= npkts)
		return 0;
	uint64_t top = (uint64_t)base + 64 < npkts ? (uint64_t)base + 64 : npkts;
	/* below rcv_nxt every PSN arrived */
	uint32_t lo =
	    m->rcv_nxt > base ? (uint32_t)(m->rcv_nxt - base < 64 ? m->rcv_nxt - base : 64) : 0;
	if (base + lo >= top)
		lo = (uint32_t)(top - base);
	uint64_t v = lo >= 64 ? ~0ULL : (1ULL << lo) - 1;
	uint64_t from = (uint64_t)base + lo, end = (uint64_t)m->rcv_nxt + m->cap;
	if (end > top)
		end = top;
	if (m->cap && from < end)
		v |= ring_bits(m, (uint32_t)from, (uint32_t)(end - from)) << lo;
	return v;
}

void tp_rxmap_free(struct tp_rxmap *m)
{
	mp_free(m->bits);
	m->bits = NULL;
	m->cap = 0;
}

bool tp_rxmap_has(const struct tp_rxmap *m, uint32_t psn)
{
	return psn < m->rcv_nxt ||
	       (psn - m->rcv_nxt < m->cap && bit_get(m->bits, psn & (m->cap - 1)));
}

void tp_rxmap_mark(struct tp_rxmap *m, uint32_t psn)
{
	rxmap_fit(m, psn);
	bit_set(m->bits, psn & (m->cap - 1));
}

bool tp_rxmap_take(struct tp_rxmap *m)
{
	if (!m->cap || !bit_get(m->bits, m->rcv_nxt & (m->cap - 1)))
		return false;
	bit_clr(m->bits, m->rcv_nxt++ & (m->cap - 1));
	return true;
}

void tp_perpkt_rx(struct conn *c, struct packet *p, struct tp_rxmap *m, uint32_t npkts,
		  uint64_t bitmap, uint64_t delta)
{
	uint32_t psn = p->psn;
	enum pkt_type reply = PKT_ACK;
	uint16_t discarded = 0;
	tp_rx_ood(c, psn);
	tp_rx_order(c, &c->rx_order_top, p);
	if (tp_rxmap_has(m, psn)) {
		c->dup_bytes += tp_rx_payload(c, p);
	} else if (psn >= (uint64_t)m->rcv_nxt + bitmap) {
		reply = PKT_NACK; /* beyond the bitmap: discarded */
		discarded = 1;
	} else {
		tp_rxmap_mark(m, psn);
		c->rcvd_bytes += tp_rx_payload(c, p);
		tp_rx_upto(c, tp_rxmap_advance(m, npkts));
		if (psn >= (uint64_t)m->rcv_nxt + delta)
			reply = PKT_NACK;
	}
	uint8_t fl = (uint8_t)(p->flags & PKT_F_RETX);
	if (p->flags & PKT_F_CE)
		fl |= PKT_F_ECE;
	p->type = (uint8_t)reply;
	p->cls = CLS_CTRL;
	p->size = (uint16_t)tp_common(c)->ack_size;
	p->src = c->dst_hid;
	p->dst = c->src_hid;
	tp_ack_set(p, psn, m->rcv_nxt, discarded);
	p->flags = fl;
	tp_send(c, c->dst, p);
}

/* ---- the sender's per-packet book (UDMP, MP-RDMA) ------------------------------ */
static inline uint32_t book_slot(const struct tp_pktbook *b, uint32_t psn)
{
	return psn & (b->cap - 1);
}
static inline bool book_acked(const struct tp_pktbook *b, uint32_t psn)
{
	return psn < b->snd_una || (psn < b->snd_nxt && bit_get(b->acked, book_slot(b, psn)));
}
static inline bool book_lost(const struct tp_pktbook *b, uint32_t psn)
{
	return psn >= b->snd_una && psn < b->snd_nxt && bit_get(b->lost, book_slot(b, psn));
}
/* psn (sent) is still in the ring: sent fewer than cap PSNs ago */
static inline bool book_in_ring(const struct tp_pktbook *b, uint32_t psn)
{
	return b->snd_nxt - psn <= b->cap;
}

static uint32_t late_hash(const struct tp_pktbook *b, uint32_t psn)
{
	return (uint32_t)(psn * 2654435761u) & (b->late_cap - 1);
}

static void late_put(struct tp_pktbook *b, uint32_t psn, uint8_t n)
{
	if (2 * (b->late_n + 1) > b->late_cap) { /* keep the table at most half full */
		struct tp_late *old = b->late;
		uint32_t oc = b->late_cap;
		b->late_cap = oc ? 2 * oc : TP_LATE_MIN;
		b->late = mp_calloc(b->late_cap, sizeof *b->late);
		b->late_n = 0;
		for (uint32_t i = 0; i < oc; i++)
			if (old[i].n)
				late_put(b, old[i].psn, old[i].n);
		mp_free(old);
	}
	uint32_t i = late_hash(b, psn);
	while (b->late[i].n)
		i = (i + 1) & (b->late_cap - 1);
	b->late[i] = (struct tp_late){ .psn = psn, .n = n };
	b->late_n++;
}

/* One copy of psn (gone from the ring) came back: true if it was counted. */
static bool late_take(struct tp_pktbook *b, uint32_t psn)
{
	if (!b->late_n)
		return false;
	uint32_t mask = b->late_cap - 1, i = late_hash(b, psn);
	while (b->late[i].n && b->late[i].psn != psn)
		i = (i + 1) & mask;
	if (!b->late[i].n)
		return false;
	if (--b->late[i].n)
		return true;
	b->late_n--;
	/* backward-shift deletion: entries after the hole that hash at or
	 * before it move into it */
	for (uint32_t j = (i + 1) & mask; b->late[j].n; j = (j + 1) & mask) {
		uint32_t h = late_hash(b, b->late[j].psn);
		if (((j - h) & mask) >= ((j - i) & mask)) {
			b->late[i] = b->late[j];
			b->late[j].n = 0;
			i = j;
		}
	}
	return true;
}

static void book_alloc(struct tp_pktbook *b, uint32_t cap)
{
	b->cap = cap;
	b->acked = ring_bits_new(cap);
	b->lost = ring_bits_new(cap);
	b->copies = mp_calloc(cap, 1);
}

void tp_book_open(struct tp_pktbook *b, uint32_t npkts)
{
	memset(b, 0, sizeof *b);
	b->npkts = npkts;
	b->lost_lo = UINT32_MAX;
	book_alloc(b, TP_RING_MIN);
}

void tp_book_grow(struct tp_pktbook *b, uint32_t npkts)
{
	b->npkts = npkts;
}

/* Double the ring, each PSN of [snd_nxt - cap, snd_nxt) to its new slot. */
static void book_double(struct tp_pktbook *b)
{
	struct tp_pktbook o = *b;
	MP_ASSERT(o.cap <= UINT32_MAX / 2);
	book_alloc(b, 2 * o.cap);
	uint32_t lo = o.snd_nxt > o.cap ? o.snd_nxt - o.cap : 0;
	for (uint32_t psn = lo; psn < o.snd_nxt; psn++) {
		uint32_t from = psn & (o.cap - 1), to = book_slot(b, psn);
		if (bit_get(o.acked, from))
			bit_set(b->acked, to);
		if (bit_get(o.lost, from))
			bit_set(b->lost, to);
		b->copies[to] = o.copies[from];
	}
	mp_free(o.acked);
	mp_free(o.lost);
	mp_free(o.copies);
}

uint32_t tp_book_new(struct tp_pktbook *b)
{
	uint32_t psn = b->snd_nxt;
	MP_ASSERT(psn < b->npkts);
	if (psn - b->snd_una >= b->cap)
		book_double(b);
	/* the slot's last PSN, psn - cap, is acknowledged: a copy of it still
	 * in flight moves to the late table */
	uint32_t i = book_slot(b, psn);
	if (b->copies[i]) {
		late_put(b, psn - b->cap, b->copies[i]);
		b->copies[i] = 0;
	}
	bit_clr(b->acked, i);
	bit_clr(b->lost, i);
	b->snd_nxt = psn + 1;
	return psn;
}

void tp_book_forget(struct tp_pktbook *b)
{
	MP_ASSERT(b->snd_una == b->snd_nxt);
	if (!b->inflight)
		return;
	memset(b->copies, 0, b->cap);
	if (b->late)
		memset(b->late, 0, b->late_cap * sizeof *b->late);
	b->late_n = 0;
	b->inflight = 0;
}

void tp_book_close(struct tp_pktbook *b)
{
	mp_free(b->acked);
	mp_free(b->lost);
	mp_free(b->copies);
	mp_free(b->late);
}

void tp_book_mark_lost(struct tp_pktbook *b, uint32_t psn)
{
	if (psn >= b->snd_nxt || book_acked(b, psn) || book_lost(b, psn))
		return;
	uint32_t i = book_slot(b, psn);
	bit_set(b->lost, i);
	b->nlost++;
	b->inflight -= b->copies[i]; /* written off */
	b->copies[i] = 0;
	if (psn < b->lost_lo)
		b->lost_lo = psn;
}

bool tp_book_is_lost(const struct tp_pktbook *b, uint32_t psn)
{
	return book_lost(b, psn);
}

uint32_t tp_book_next_lost(struct tp_pktbook *b)
{
	if (b->nlost && b->lost_lo < b->snd_una) /* none below snd_una */
		b->lost_lo = b->snd_una;
	while (b->nlost) {
		uint32_t i = b->lost_lo;
		MP_ASSERT(i < b->snd_nxt);
		if (!bit_get(b->lost, book_slot(b, i))) {
			b->lost_lo++;
			continue;
		}
		MP_ASSERT(!bit_get(b->acked, book_slot(b, i))); /* book_ack_one unmarks */
		return i;
	}
	b->lost_lo = UINT32_MAX;
	return UINT32_MAX;
}

void tp_book_resent(struct tp_pktbook *b, uint32_t psn)
{
	bit_clr(b->lost, book_slot(b, psn));
	b->nlost--;
}

void tp_book_sent(struct tp_pktbook *b, uint32_t psn)
{
	uint32_t i = book_slot(b, psn);
	MP_ASSERT(psn >= b->snd_una && psn < b->snd_nxt);
	if (b->copies[i] < UINT8_MAX) {
		b->copies[i]++;
		b->inflight++;
	}
}

/* psn, sent and not below snd_una, is acknowledged. */
static bool book_ack_one(struct conn *c, struct tp_pktbook *b, uint32_t psn)
{
	uint32_t i = book_slot(b, psn);
	if (bit_get(b->acked, i))
		return false;
	bit_set(b->acked, i);
	b->nacked++;
	if (bit_get(b->lost, i)) { /* it arrived after all: not to be resent */
		bit_clr(b->lost, i);
		b->nlost--;
	}
	c->acked_bytes += tp_psn_payload(c, psn);
	return true;
}

bool tp_book_ack(struct conn *c, struct tp_pktbook *b, const struct packet *p, bool discarded)
{
	bool progress = false;
	uint32_t p0 = tp_ack_psn(p);
	if (p0 < b->snd_nxt) { /* the copy's feedback: it left the network */
		uint8_t *n = book_in_ring(b, p0) ? &b->copies[book_slot(b, p0)] : NULL;
		if (n && *n) {
			(*n)--;
			b->inflight--;
		} else if (late_take(b, p0)) {
			/* its slot was taken before the ring last doubled, or since */
			b->inflight--;
		}
	}
	for (; b->snd_una < tp_ack_cum(p); b->snd_una++)
		progress |= book_ack_one(c, b, b->snd_una);
	if (!discarded) {
		if (p0 >= b->snd_una)
			progress |= book_ack_one(c, b, p0);
		if (p0 + 1 > b->snd_ooh1)
			b->snd_ooh1 = p0 + 1;
	}
	while (b->snd_una < b->snd_nxt && bit_get(b->acked, book_slot(b, b->snd_una)))
		b->snd_una++;
	tp_tx_upto(c, b->snd_una);
	return progress;
}

void tp_book_nack(struct tp_pktbook *b, const struct packet *p, bool discarded, uint64_t delta,
		  simtime_t now)
{
	if (discarded)
		tp_book_mark_lost(b, tp_ack_psn(p));
	if (p->ts >= b->recover_time) {
		b->recover_time = now;
		tp_book_mark_lost(b, tp_ack_cum(p));
	}
	uint32_t i = b->scan_lo > b->snd_una ? b->scan_lo : b->snd_una;
	for (; (uint64_t)i + delta < b->snd_ooh1; i++)
		tp_book_mark_lost(b, i);
	b->scan_lo = i;
}

void tp_book_timeout(struct tp_pktbook *b, simtime_t now)
{
	for (uint32_t i = b->snd_una; i < b->snd_nxt; i++)
		tp_book_mark_lost(b, i);
	memset(b->copies, 0, b->cap);
	if (b->late)
		memset(b->late, 0, b->late_cap * sizeof *b->late);
	b->late_n = 0;
	b->inflight = 0;
	b->recover_time = now;
}

/* ccl.c - channels, queue pairs and the two schedulers NCCL and RCCL ship
 * (see ccl.h); the scheduler registry.
 *
 * NCCL's IB network plugin (src/transport/net_ib.cc, NCCL 2.12 and later)
 * opens NCCL_IB_QPS_PER_CONNECTION queue pairs per connection and, with
 * NCCL_IB_SPLIT_DATA_ON_QPS=1 (the default up to 2.19), splits every request
 * into one equal piece per queue pair; with 0 it sends each request whole on
 * the next queue pair in turn. RCCL's plugin behaves the same. These are the
 * `stripe` and `rr` schedulers; the CAST note (Broadcom) calls them the split
 * and round-robin distributions.
 */
#include "ccl/ccl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/mem.h"
#include "transport/conn.h"
#include "transport/tp_world.h"

struct ccl_basic_params {
	struct ccl_common common;
};

static const struct opt_desc ccl_basic_opts[] = {
	CCL_COMMON_OPTS(struct ccl_basic_params),
	OPT_END,
};

/* rr: each message whole on the next queue pair. */
static void rr_post(struct ccl_chan *ch, struct ccl_msg *m)
{
	uint32_t q = ch->rr_next;
	ch->rr_next = (q + 1) % ch->nqp;
	ccl_part_post(ch, m, q, m->bytes);
}

/* stripe: one equal piece per queue pair (the first ones one byte larger
 * when it does not divide; fewer pieces than queue pairs for tiny messages). */
static void stripe_post(struct ccl_chan *ch, struct ccl_msg *m)
{
	uint64_t n = ch->nqp < m->bytes ? ch->nqp : m->bytes;
	for (uint64_t q = 0; q < n; q++)
		ccl_part_post(ch, m, (uint32_t)q, m->bytes * (q + 1) / n - m->bytes * q / n);
}

static const struct ccl_sched_ops rr_ccl_ops = {
	.name = "rr",
	.summary =
	    "each message whole on the next queue pair in turn (NCCL_IB_SPLIT_DATA_ON_QPS=0)",
	.opts = ccl_basic_opts,
	.params_size = sizeof(struct ccl_basic_params),
	.post = rr_post,
};

static const struct ccl_sched_ops stripe_ccl_ops = {
	.name = "stripe",
	.summary = "each message in equal pieces, one per queue pair (NCCL_IB_SPLIT_DATA_ON_QPS=1)",
	.opts = ccl_basic_opts,
	.params_size = sizeof(struct ccl_basic_params),
	.post = stripe_post,
};

extern const struct ccl_sched_ops cast_ccl_ops, mcc_ccl_ops;

/* The schedulers, in `mpsim list`'s order. */
const struct ccl_sched_ops *const ccl_registry[] = {
	&rr_ccl_ops, &stripe_ccl_ops, &cast_ccl_ops, &mcc_ccl_ops, NULL,
};

const struct ccl_sched_ops *ccl_find(const char *name)
{
	for (const struct ccl_sched_ops *const *o = ccl_registry; *o; o++)
		if (strcmp((*o)->name, name) == 0)
			return *o;
	return NULL;
}

/* A message crossed the intra-node fabric: its receiver and its sender know. */
static void intra_done(void *ctx, uint32_t id)
{
	struct ccl *l = ctx;
	if (l->on_done) {
		l->on_done(l->ctx, id, true);
		l->on_done(l->ctx, id, false);
	}
}

/* The transport's RTT hook: a sample of one of the layer's queue pairs goes to
 * its channel's scheduler; plain connections' samples are ignored. */
static void ccl_rtt(void *ctx, struct conn *c, simtime_t rtt)
{
	struct ccl *l = ctx;
	if (c->id >= l->conn_cap || !l->conn_chan[c->id])
		return;
	l->ops->rtt(l->chans[l->conn_chan[c->id] - 1], l->conn_qp[c->id], rtt);
}

void ccl_init(struct ccl *l, struct tp_world *w, const struct ccl_sched_ops *ops,
	      const void *params, const struct intra_cfg *srv, uint32_t nmsgs)
{
	memset(l, 0, sizeof *l);
	l->w = w;
	l->ops = ops;
	l->params = params;
	l->nmsgs = nmsgs;
	l->msgs = mp_calloc(nmsgs ? nmsgs : 1, sizeof *l->msgs);
	if (intra_on(srv)) {
		intra_init(&l->intra, w->q, srv, w->fab->nhosts,
			   INTRA_ENTITY_ID(TP_ENTITY_BASE, 0));
		l->intra.done = intra_done;
		l->intra.ctx = l;
		l->has_intra = true;
	}
	if (ops->rtt)
		tp_world_rtt_hook(w, ccl_rtt, l);
}

static uint64_t chan_hash(uint32_t job, uint32_t src, uint32_t dst)
{
	uint64_t h = ((uint64_t)job << 42) ^ ((uint64_t)src << 21) ^ dst;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static void slots_insert(struct ccl *l, uint32_t idx)
{
	const struct ccl_chan *ch = l->chans[idx];
	uint32_t mask = l->nslots - 1, i = (uint32_t)chan_hash(ch->job, ch->src, ch->dst) & mask;
	while (l->slot[i] != UINT32_MAX)
		i = (i + 1) & mask;
	l->slot[i] = idx;
}

struct ccl_chan *ccl_chan_get(struct ccl *l, uint32_t job, uint32_t src, uint32_t dst)
{
	if (l->nslots) {
		uint32_t mask = l->nslots - 1, i = (uint32_t)chan_hash(job, src, dst) & mask;
		for (; l->slot[i] != UINT32_MAX; i = (i + 1) & mask) {
			struct ccl_chan *ch = l->chans[l->slot[i]];
			if (ch->job == job && ch->src == src && ch->dst == dst)
				return ch;
		}
	}
	if (2 * (l->nchans + 1) > l->nslots) { /* keep the table at most half full */
		l->nslots = l->nslots ? 2 * l->nslots : 64;
		mp_free(l->slot);
		l->slot = mp_malloc(l->nslots * sizeof *l->slot);
		memset(l->slot, 0xff, l->nslots * sizeof *l->slot);
		for (uint32_t k = 0; k < l->nchans; k++)
			slots_insert(l, k);
	}
	if ((l->nchans & (l->nchans - 1)) == 0)
		l->chans = mp_realloc(l->chans, (l->nchans ? 2 * l->nchans : 1) * sizeof *l->chans);
	struct ccl_chan *ch = mp_calloc(1, sizeof *ch + l->ops->priv_size);
	ch->ccl = l;
	ch->id = l->nchans;
	ch->job = job;
	ch->src = src;
	ch->dst = dst;
	ch->intra = l->has_intra && intra_same(&l->intra, src, dst);
	ch->nqp = ch->intra ? 0 : (uint32_t)ccl_common(l)->qps;
	ch->qp = mp_calloc(ch->nqp ? ch->nqp : 1, sizeof *ch->qp);
	for (uint32_t q = 0; q < ch->nqp; q++) {
		struct conn *c = ch->qp[q] = tp_stream_add(l->w, src, dst, q);
		uint32_t cap0 = l->conn_cap;
		tp_grow((void **)&l->conn_chan, sizeof *l->conn_chan, &cap0, c->id + 1);
		tp_grow((void **)&l->conn_qp, sizeof *l->conn_qp, &l->conn_cap, c->id + 1);
		l->conn_chan[c->id] = l->nchans + 1;
		l->conn_qp[c->id] = q;
	}
	l->chans[l->nchans++] = ch;
	slots_insert(l, ch->id);
	return ch;
}

void ccl_post(struct ccl *l, struct ccl_chan *ch, uint32_t id, uint64_t bytes)
{
	MP_ASSERT(id < l->nmsgs && bytes > 0);
	struct ccl_msg *m = &l->msgs[id];
	memset(m, 0, sizeof *m);
	m->id = id;
	m->bytes = bytes;
	m->posted = ccl_now(l);
	if (ch->intra)
		intra_send(&l->intra, ch->src, ch->dst, bytes, id);
	else
		l->ops->post(ch, m);
}

uint32_t ccl_part_post(struct ccl_chan *ch, struct ccl_msg *m, uint32_t qp, uint64_t bytes)
{
	struct ccl *l = ch->ccl;
	MP_ASSERT(qp < ch->nqp && bytes > 0 && m->bytes_posted + bytes <= m->bytes);
	tp_grow((void **)&ch->parts, sizeof *ch->parts, &ch->parts_cap, ch->nparts + 1);
	uint32_t tag = ch->nparts++;
	ch->parts[tag] =
	    (struct ccl_part){ .ch = ch, .msg = m, .qp = qp, .bytes = bytes, .posted = ccl_now(l) };
	m->parts++;
	m->bytes_posted += bytes;
	tp_post(ch->qp[qp], bytes, tag);
	if (l->on_post)
		l->on_post(l->ctx, ch, qp, tag);
	return tag;
}

void ccl_part_mirror(struct ccl *l, struct conn *c, uint32_t tag, uint32_t id, uint64_t msg_bytes,
		     uint64_t bytes, simtime_t posted)
{
	MP_ASSERT(c->id < l->conn_cap && l->conn_chan[c->id] && id < l->nmsgs);
	struct ccl_chan *ch = l->chans[l->conn_chan[c->id] - 1];
	struct ccl_msg *m = &l->msgs[id];
	MP_ASSERT(tag == ch->nparts);
	if (!m->bytes) { /* its first part: the message as ccl_post made it */
		m->id = id;
		m->bytes = msg_bytes;
		m->posted = posted;
	}
	tp_grow((void **)&ch->parts, sizeof *ch->parts, &ch->parts_cap, ch->nparts + 1);
	ch->nparts++;
	ch->parts[tag] = (struct ccl_part){
		.ch = ch, .msg = m, .qp = l->conn_qp[c->id], .bytes = bytes, .posted = posted
	};
	m->parts++;
	m->bytes_posted += bytes;
	tp_post(c, bytes, tag);
}

void ccl_trace(struct ccl *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	MP_ASSERT(n >= 0);
	if (l->trace_len + (size_t)n + 1 > l->trace_cap) {
		while (l->trace_len + (size_t)n + 1 > l->trace_cap)
			l->trace_cap = l->trace_cap ? 2 * l->trace_cap : 65536;
		l->trace = mp_realloc(l->trace, l->trace_cap);
	}
	va_start(ap, fmt);
	vsnprintf(l->trace + l->trace_len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	l->trace_len += (size_t)n;
}

struct trace_row {
	const char *at;
	size_t len, idx;
	double t;
	unsigned long job, src, dst;
};

static int row_cmp(const void *a, const void *b)
{
	const struct trace_row *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void ccl_trace_sort(struct ccl *l)
{
	const char *head_end = l->trace ? memchr(l->trace, '\n', l->trace_len) : NULL;
	if (!head_end)
		return;
	size_t head = (size_t)(head_end - l->trace) + 1, n = 0;
	for (size_t i = head; i < l->trace_len; i++)
		n += l->trace[i] == '\n';
	MP_ASSERT(l->trace[l->trace_len - 1] == '\n'); /* whole rows only */
	struct trace_row *v = mp_malloc((n ? n : 1) * sizeof *v);
	size_t k = 0;
	for (const char *p = l->trace + head, *end = l->trace + l->trace_len; p < end; k++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char *q;
		v[k] = (struct trace_row){ .at = p, .len = (size_t)(nl - p) + 1, .idx = k };
		v[k].t = strtod(p, &q);
		v[k].job = strtoul(q + 1, &q, 10);
		v[k].src = strtoul(q + 1, &q, 10);
		v[k].dst = strtoul(q + 1, &q, 10);
		p = nl + 1;
	}
	qsort(v, n, sizeof *v, row_cmp);
	char *out = mp_malloc(l->trace_len + 1), *o = out + head;
	memcpy(out, l->trace, head);
	for (size_t i = 0; i < n; i++) {
		memcpy(o, v[i].at, v[i].len);
		o += v[i].len;
	}
	*o = '\0'; /* a string, as ccl_trace keeps it */
	mp_free(v);
	mp_free(l->trace);
	l->trace = out;
	l->trace_cap = l->trace_len + 1;
}

simtime_t ccl_ideal_fct(const struct ccl *l, const struct ccl_chan *ch, uint64_t bytes)
{
	return ch->intra ? intra_ideal(l->intra.cfg, bytes) : tp_ideal_fct(ch->qp[0], bytes);
}

void ccl_on_msg(struct ccl *l, struct conn *c, uint32_t tag, bool rx)
{
	MP_ASSERT(c->id < l->conn_cap && l->conn_chan[c->id]);
	struct ccl_chan *ch = l->chans[l->conn_chan[c->id] - 1];
	MP_ASSERT(tag < ch->nparts);
	struct ccl_part *pt = &ch->parts[tag];
	struct ccl_msg *m = pt->msg;
	if (rx) {
		pt->rx_at = ccl_now(l);
		m->parts_rx++;
	} else {
		m->parts_tx++;
	}
	if (l->ops->part_done)
		l->ops->part_done(pt->ch, pt, rx);
	uint32_t done = rx ? m->parts_rx : m->parts_tx;
	if (done == m->parts && m->bytes_posted == m->bytes && l->on_done)
		l->on_done(l->ctx, m->id, rx);
}

void ccl_free(struct ccl *l)
{
	for (uint32_t i = 0; i < l->nchans; i++) {
		mp_free(l->chans[i]->parts);
		mp_free(l->chans[i]->qp);
		mp_free(l->chans[i]);
	}
	mp_free(l->chans);
	mp_free(l->slot);
	mp_free(l->msgs);
	mp_free(l->conn_chan);
	mp_free(l->conn_qp);
	mp_free(l->trace);
	if (l->has_intra)
		intra_free(&l->intra);
	memset(l, 0, sizeof *l);
}

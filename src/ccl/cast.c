/* cast.c - the CAST scheduler (see cast.h), following the note's sections in
 * order: the metric, the estimators, the weights (second listing), the stripe
 * scheduler with 128-B rounding and the split-data minimum, weighted round
 * robin, and Table 1's parameters.
 *
 * Where the note is silent this follows its authors' public code, the IB-CAST
 * network transport in AMD's RCCL (net_ib_cast*.cc, "IB-CAST"):
 *  - when: weights are recomputed after a timed request is posted, once
 *    update_interval has passed since the last recomputation (so the first
 *    one comes update_interval after the first timed post), and only when
 *    every QP has a sample; before that, stripes are equal and WRR is plain
 *    round robin;
 *  - samples: each part's send completion gives one, RTT - payload bits /
 *    NIC rate (the note's metric, "minimum latency for the network" being our
 *    option min_latency, 0 by default as in that code); the first sample
 *    after a reset sets the estimate, later ones average (weight 0) or
 *    smooth it; the reset clears sum and count, never the minimum;
 *  - which parts are timed: all QPs' parts of a split request, and whole
 *    requests when WRR may pick them (enable and (round robin mode or
 *    wrr_enable)); plain round robin is not timed;
 *  - stripes: QPs in turn from qpIndex, each bytes x weight rounded down to
 *    128 B, the last the rest; without weights (CAST off or not yet
 *    computed) NCCL's equal split, ceil(bytes / n) rounded up to 128 B;
 *    qpIndex moves on by one per QP posted except under WRR;
 *  - split_data_min applies only with CAST on (bytes / n below it: one QP);
 *    CAST off always splits, as NCCL does;
 *  - WRR: round(100 x weight) tokens per QP (half up, at least one), taken
 *    in QP order until the round's tokens are spent.
 * Ours, stated beside the options: the polling model (poll_interval and
 * poll_jitter: the note blames polling jitter for its filter but gives no
 * figures), and the proxy's requests (`request`, `steps`): NCCL hands its
 * plugin at most NCCL_STEPS = 8 requests per connection, each a step of
 * NCCL_BUFFSIZE / NCCL_STEPS = 4 MiB / 8 = 512 KiB (Simple protocol); a
 * message longer than `request` becomes several requests.
 * A polled completion only dates the RTT sample: messages complete, and
 * release what waits for them, when the transport says so.
 */
#include "ccl/cast.h"

#include <float.h>
#include <string.h>

#include "core/err.h"

static const struct opt_desc cast_opts[] = {
	CCL_COMMON_OPTS(struct cast_params),
	{ "enable", OPT_BOOL, offsetof(struct cast_params, enable), "true", 0, 0,
	  "NCCL_IB_QP_SCHED_ENABLE: weight the QPs by RTT (false: NCCL's plain split or round "
	  "robin, the note's *-no-cast modes)" },
	{ "split_data", OPT_BOOL, offsetof(struct cast_params, split_data), "true", 0, 0,
	  "NCCL_IB_SPLIT_DATA_ON_QPS: stripe each request over the QPs (split-*); false: whole "
	  "requests to one QP in turn (rr-*: weighted round robin with CAST on)" },
	{ "reset_interval", OPT_TIME, offsetof(struct cast_params, reset_interval), "60000ms", 0,
	  1e16,
	  "NCCL_IB_QP_SCHED_RESET_INTERVAL: the RTT history (sum, count) is cleared this "
	  "often; 0 = never, else at least 1ms" },
	{ "update_interval", OPT_TIME, offsetof(struct cast_params, update_interval), "50us", 1e6,
	  6e13,
	  "NCCL_IB_QP_SCHED_UPDATE_INTERVAL: scheduler weights are refreshed this often "
	  "(1us .. 60s)" },
	{ "weight", OPT_DOUBLE, offsetof(struct cast_params, weight), "0", 0, 1,
	  "NCCL_IB_QP_SCHED_WEIGHT: 0 = average estimator, else the weighted average's weight "
	  "of a new sample" },
	{ "split_data_min", OPT_SIZE, offsetof(struct cast_params, split_data_min), "64KiB", 1,
	  1e12,
	  "NCCL_IB_QP_SCHED_SPLIT_DATA_MIN: bytes per QP needed to split a request; below "
	  "it the request goes whole on one QP" },
	{ "wrr_enable", OPT_BOOL, offsetof(struct cast_params, wrr_enable), "false", 0, 0,
	  "NCCL_IB_QP_SCHED_WRR_ENABLE: below split_data_min pick the QP by weighted round "
	  "robin instead of round robin (the note's default; RCCL's IB-CAST defaults to true)" },
	{ "jitter_filter", OPT_BOOL, offsetof(struct cast_params, jitter_filter), "true", 0, 0,
	  "weights 1/((est - min est) + min metric) (the note's second listing); false: 1/est "
	  "(its first)" },
	{ "poll_interval", OPT_TIME, offsetof(struct cast_params, poll_interval), "1us", 0, 1e12,
	  "the CCL polls its completion queues this often (ours: a proxy thread's loop); an RTT "
	  "ends at the first poll after the completion" },
	{ "poll_jitter", OPT_TIME, offsetof(struct cast_params, poll_jitter), "2us", 0, 1e12,
	  "and sees it a further uniform 0 .. this later (ours: thread scheduling noise)" },
	{ "min_latency", OPT_TIME, offsetof(struct cast_params, min_latency), "0", 0, 1e12,
	  "the note's \"minimum latency for the network\", subtracted from every sample (0 as "
	  "in RCCL's IB-CAST)" },
	{ "request", OPT_SIZE, offsetof(struct cast_params, request), "512KiB", 0, 1e12,
	  "largest request handed to the network plugin (NCCL_BUFFSIZE / NCCL_STEPS); longer "
	  "messages become several; 0 = whole messages" },
	{ "steps", OPT_UINT, offsetof(struct cast_params, steps), "8", 1, CAST_MAX_STEPS,
	  "requests in flight per channel (NCCL_STEPS)" },
	{ "trace", OPT_BOOL, offsetof(struct cast_params, trace), "false", 0, 0,
	  "write qp_trace.csv: per QP at every weight update, time, estimate, weight, bytes" },
	OPT_END,
};

/* ---- the pure pieces ---------------------------------------------------------- */

bool cast_weights(const double *est, const uint64_t *min_metric, uint32_t n, bool jitter_filter,
		  double *w)
{
	double inv[CAST_MAX_QPS], sum = 0, min_est = DBL_MAX, mm = 0;
	MP_ASSERT(n >= 1 && n <= CAST_MAX_QPS);
	for (uint32_t q = 0; q < n; q++) /* the first QP with the smallest estimate */
		if (est[q] < min_est) {
			min_est = est[q];
			mm = (double)min_metric[q];
		}
	for (uint32_t q = 0; q < n; q++) {
		double d = jitter_filter ? (est[q] - min_est) + mm : est[q];
		if (!(d > 0))
			return false;
		inv[q] = 1.0 / d;
		sum += inv[q];
	}
	for (uint32_t q = 0; q < n; q++)
		w[q] = inv[q] / sum;
	return true;
}

void cast_stripe(uint64_t bytes, const double *w, uint32_t n, uint32_t start, uint64_t *sizes)
{
	uint64_t sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t q = (start + i) % n;
		uint64_t sz;
		if (i + 1 == n) {
			sz = bytes - sum;
		} else {
			sz = (uint64_t)((double)bytes * w[q]) / CAST_ALIGN * CAST_ALIGN;
			if (sz > bytes - sum) /* weights summing to 1 + epsilon */
				sz = bytes - sum;
		}
		sizes[q] = sz;
		sum += sz;
	}
}

void cast_split_equal(uint64_t bytes, uint32_t n, uint32_t start, uint64_t *sizes)
{
	uint64_t chunk = ((bytes + n - 1) / n + CAST_ALIGN - 1) / CAST_ALIGN * CAST_ALIGN, off = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t sz = bytes - off < chunk ? bytes - off : chunk;
		sizes[(start + i) % n] = sz;
		off += sz;
	}
}

void cast_wrr_tokens(const double *w, uint32_t n, uint32_t *tokens)
{
	for (uint32_t q = 0; q < n; q++) {
		double t = CAST_WRR_TOKENS * w[q];
		uint32_t t2 = (uint32_t)t;
		if (t - (double)t2 > 0.5 || t2 == 0)
			t2++;
		tokens[q] = t2;
	}
}

/* ---- the scheduler -------------------------------------------------------------- */

static int cast_check(void *pp, struct mp_err *e)
{
	const struct cast_params *p = pp;
	if (p->common.qps > CAST_MAX_QPS)
		return mp_errf(e, MP_EUSER,
			       "qps: expected at most %u queue pairs with cast, got %llu",
			       CAST_MAX_QPS, (unsigned long long)p->common.qps);
	if (p->reset_interval && p->reset_interval < PS_PER_MS)
		return mp_errf(e, MP_EUSER,
			       "reset_interval: expected 0 (never) or at least 1ms, as "
			       "NCCL_IB_QP_SCHED_RESET_INTERVAL counts milliseconds");
	return MP_OK;
}

static const struct cast_params *params_of(const struct ccl_chan *ch)
{
	return ch->ccl->params;
}

/* When the CCL sees a completion that happened at t: the next poll of this
 * channel's grid, then a uniform extra delay. */
static simtime_t poll_seen(const struct cast_params *p, struct cast_chan *c, simtime_t t)
{
	simtime_t seen = t, P = p->poll_interval;
	if (P) {
		simtime_t k = t <= c->poll_phase ? 0 : (t - c->poll_phase + P - 1) / P;
		seen = c->poll_phase + k * P;
	}
	if (p->poll_jitter)
		seen += rng_below(&c->rng, p->poll_jitter);
	return seen;
}

static void trace_rows(struct ccl_chan *ch, struct cast_chan *c, simtime_t now)
{
	struct ccl *l = ch->ccl;
	if (!l->trace_len)
		ccl_trace(l, "time_us,job,src,dst,qp,estimate_us,min_metric_us,weight,bytes\n");
	for (uint32_t q = 0; q < ch->nqp; q++) {
		struct cast_qp *x = &c->qp[q];
		ccl_trace(l, "%.3f,%u,%u,%u,%u,%.3f,%.3f,%.5f,%llu\n", time_to_us(now), ch->job,
			  ch->src, ch->dst, q, x->est / (double)PS_PER_US,
			  time_to_us(x->min_sample), x->w, (unsigned long long)x->bytes);
		x->bytes = 0;
	}
}

/* updateQpTxSched: new weights (and WRR tokens) from the estimates. */
static void update_weights(struct ccl_chan *ch, struct cast_chan *c, simtime_t now)
{
	const struct cast_params *p = params_of(ch);
	double est[CAST_MAX_QPS] = { 0 }, w[CAST_MAX_QPS];
	uint64_t mm[CAST_MAX_QPS] = { 0 };
	uint32_t tok[CAST_MAX_QPS];
	for (uint32_t q = 0; q < ch->nqp; q++) {
		if (!c->qp[q].sampled)
			return;
		est[q] = c->qp[q].est;
		mm[q] = c->qp[q].min_sample;
	}
	if (!cast_weights(est, mm, ch->nqp, p->jitter_filter, w))
		return;
	cast_wrr_tokens(w, ch->nqp, tok);
	for (uint32_t q = 0; q < ch->nqp; q++) {
		c->qp[q].w = w[q];
		c->qp[q].tokens = tok[q];
	}
	c->init = true;
	c->nupdates++;
	if (p->trace)
		trace_rows(ch, c, now);
}

uint32_t cast_wrr_pick(struct cast_chan *c, uint32_t n)
{
	if (!c->wrr_left) { /* a new round */
		for (uint32_t q = 0; q < n; q++) {
			c->qp[q].active = c->qp[q].tokens;
			c->wrr_left += c->qp[q].tokens;
		}
	}
	MP_ASSERT(c->wrr_left > 0);
	for (uint32_t q = c->wrr_idx;; q = (q + 1) % n)
		if (c->qp[q].active) {
			c->qp[q].active--;
			c->wrr_left--;
			c->wrr_idx = (q + 1) % n;
			return q;
		}
}

/* One request of `bytes` of m (ncclIbIsend + ncclIbMultiSend). */
static void send_request(struct ccl_chan *ch, struct cast_chan *c, struct ccl_msg *m,
			 uint64_t bytes)
{
	const struct cast_params *p = params_of(ch);
	uint32_t n = ch->nqp, nq = n, start = c->qp_next, slot = 0;
	bool wrr = false, do_wrr = p->enable && (!p->split_data || p->wrr_enable);
	if (n > 1 && (!p->split_data || (p->enable && bytes / n < p->split_data_min))) {
		nq = 1; /* one QP: by weights, or the next in turn */
		if (do_wrr && c->init) {
			start = cast_wrr_pick(c, n);
			wrr = true;
		}
	}
	bool timed = p->enable && (nq > 1 || do_wrr);
	uint64_t sizes[CAST_MAX_QPS];
	if (nq == 1) {
		sizes[start] = bytes;
		c->qp[start].whole++;
	} else if (p->enable && c->init) {
		double w[CAST_MAX_QPS];
		for (uint32_t q = 0; q < n; q++)
			w[q] = c->qp[q].w;
		cast_stripe(bytes, w, n, start, sizes);
	} else {
		cast_split_equal(bytes, n, start, sizes);
	}
	while (c->slot_parts[slot])
		slot++;
	MP_ASSERT(slot < p->steps);
	struct ccl *l = ch->ccl;
	for (uint32_t i = 0; i < nq; i++) {
		uint32_t q = (start + i) % n;
		if (!wrr)
			c->qp_next = (q + 1) % n;
		if (!sizes[q]) /* NCCL posts an empty write here; nothing to move */
			continue;
		uint32_t tag = ccl_part_post(ch, m, q, sizes[q]);
		ch->parts[tag].sched = slot << 1 | timed;
		c->slot_parts[slot]++;
		c->qp[q].bytes += sizes[q];
	}
	c->inflight++;
	if (!timed)
		return;
	simtime_t now = ccl_now(l);
	if (!c->update_armed) {
		c->update_armed = true;
		c->next_update = now + p->update_interval;
	} else if (now >= c->next_update) {
		update_weights(ch, c, now);
		c->next_update = now + p->update_interval;
	}
}

/* Hand the plugin requests while the window has room. */
static void pump(struct ccl_chan *ch, struct cast_chan *c)
{
	const struct cast_params *p = params_of(ch);
	while (c->head && c->inflight < p->steps) {
		struct ccl_msg *m = c->head;
		uint64_t left = m->bytes - c->head_off;
		uint64_t b = p->request && p->request < left ? p->request : left;
		c->head_off += b;
		if (c->head_off == m->bytes) {
			c->head = m->next;
			if (!c->head)
				c->tail = NULL;
			c->head_off = 0;
		}
		send_request(ch, c, m, b);
	}
}

static void cast_post(struct ccl_chan *ch, struct ccl_msg *m)
{
	struct cast_chan *c = ccl_priv(ch);
	if (!c->ready) {
		const struct cast_params *p = params_of(ch);
		rng_init(&c->rng, ch->ccl->w->seed, RNG_CCL, ch->id);
		c->poll_phase = p->poll_interval ? rng_below(&c->rng, p->poll_interval) : 0;
		c->ready = true;
	}
	ccl_msgq_push(&c->head, &c->tail, m);
	pump(ch, c);
}

/* updateQpTxStats: one RTT sample from a part the CCL polled complete. */
static void sample(struct ccl_chan *ch, struct cast_chan *c, uint32_t q, uint64_t bytes,
		   simtime_t posted)
{
	const struct cast_params *p = params_of(ch);
	simtime_t seen = poll_seen(p, c, ccl_now(ch->ccl));
	if (p->reset_interval && seen >= c->next_reset) {
		for (uint32_t k = 0; k < ch->nqp; k++)
			c->qp[k].tot = c->qp[k].n = 0;
		c->next_reset = seen + p->reset_interval;
	}
	simtime_t rtt = seen - posted;
	simtime_t tx = time_ser_ps(bytes, ch->qp[q]->nf.port->rate_bps) + p->min_latency;
	uint64_t s = rtt > tx ? rtt - tx : 0;
	struct cast_qp *x = &c->qp[q];
	x->tot += s;
	x->n++;
	x->nsamples++;
	if (!x->sampled || s < x->min_sample)
		x->min_sample = s;
	x->sampled = true;
	if (x->n == 1)
		x->est = (double)s;
	else if (p->weight == 0)
		x->est = (double)x->tot / (double)x->n;
	else
		x->est = x->est * (1.0 - p->weight) + (double)s * p->weight;
}

static void cast_part_done(struct ccl_chan *ch, struct ccl_part *pt, bool rx)
{
	if (rx)
		return; /* the plugin hears of its sends, not of the peer's receives */
	struct cast_chan *c = ccl_priv(ch);
	uint32_t slot = pt->sched >> 1;
	if (pt->sched & 1)
		sample(ch, c, pt->qp, pt->bytes, pt->posted);
	MP_ASSERT(c->slot_parts[slot] > 0);
	if (--c->slot_parts[slot] == 0) {
		c->inflight--;
		pump(ch, c); /* may move the parts array: pt is not used after this */
	}
}

const struct ccl_sched_ops cast_ccl_ops = {
	.name = "cast",
	.summary = "CAST (Broadcom, 2025): per-QP RTT from post to polled completion weights the "
		   "stripes (rounded down to 128 B) or, by WRR, whole requests",
	.opts = cast_opts,
	.params_size = sizeof(struct cast_params),
	.priv_size = sizeof(struct cast_chan),
	.check = cast_check,
	.post = cast_post,
	.part_done = cast_part_done,
};

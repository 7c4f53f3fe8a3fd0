/* mcc.c - the MCC scheduler (see mcc.h), following the slides in order: the
 * network under adaptive routing is one pipe (a path set); two signals,
 * message delay ("message RTT that reveals network pipe congestion") and
 * packet delay ("sampled packet RTTs that convey multiple individual path
 * congestion"); their quadrant (both low: non-congestion; packet delay high,
 * message delay low: partial congestion, which AR absorbs; message delay
 * high: global congestion); a window of message chunks ("typically 64KB") in
 * flight, adjusted per chunk, inside the CCL.
 *
 * The slides give no constants and no increase or decrease law. Our choices,
 * each an option (`mpsim list sections`, experiments/mcc/sensitivity.yaml):
 *  - Window per channel (one ordered pair of ranks of a job), not per rank:
 *    a channel's chunks share one path set, the thing the signals describe;
 *    a rank's channels to different peers cross different path sets (an
 *    AllToAll's), and one window over them would cut every peer for one
 *    congested receiver. It is what a window-based CCL connection holds.
 *  - The law: AIMD on the chunk window, as TCP on packets. Non-congestion
 *    grows cwnd by ai / cwnd per acknowledged chunk (ai = 1 chunk per
 *    window of completions); global congestion multiplies it by 1 - md
 *    (md = 0.5, TCP's halving), at most once per window: only a chunk posted
 *    after the last cut may cut again, so the chunks already in flight when
 *    the pipe filled do not cut it to the floor; partial congestion holds
 *    the window (`partial: hold`) once it keeps the NIC's line rate at the
 *    chunk's message delay (window x chunk >= line rate x message delay),
 *    and grows it as non-congestion below that: the slides' sender
 *    "maintains full sending rate" under partial congestion, and a window
 *    held at its first value (the idle BDP) would not, since the hot paths
 *    lengthen every chunk's delay (measured: 44 Gb/s of 100 with one of
 *    8 spine downlinks at 25 Gb/s). `grow` and `cut` are the ablations: cut
 *    is what a per-packet CC does. min_window 1 chunk (a CCL cannot send less than a
 *    chunk at a time without pacing), max_window 64 chunks (4 MiB: NCCL's
 *    buffer of 8 steps of 512 KiB), init_window the path's BDP in chunks
 *    plus one chunk per queue pair (enough to fill an idle pipe from the
 *    first round trip, as a NIC CC starts at line rate). A chunk frees its
 *    slot when its last byte is acknowledged; one pair sends the window's
 *    chunks one after the other, so what is sent after the first one's last
 *    byte is the rest of the window, which must cover the BDP: BDP + 1
 *    chunk. The NIC serves n pairs round robin, packet by packet, so the
 *    first n chunks finish sending together and only the window beyond them
 *    covers the round trip: BDP + n chunks. With BDP + 1 over 4 pairs a
 *    window's chunks completed together and the wire idled for a round trip
 *    per window until the window had grown (-3% bus bandwidth on an idle
 *    fabric, tests/test_mcc.c test_qps).
 *  - Message delay: post to sender completion of a chunk (the last byte
 *    acknowledged), what the CCL sees. A chunk completes with its slowest
 *    packet, so a packet that lags on one hot path lengthens its chunk by
 *    that lag: with the defaults below a lag over one base RTT is both
 *    "partial" (packet) and, when that packet is the chunk's last, "global"
 *    (message). The spread of the chunk's packet RTTs is not taken off its
 *    delay: behind a hole the reorder buffer acknowledges nothing, so the
 *    spread would be taken over a few samples, and the cuts barely move
 *    with it (experiments/mcc/README.md). Where the lag comes from a link
 *    downstream of the sending leaf's AR, the cut is right: the sprayed,
 *    in-order stream runs at paths x its share of the slow link.
 *  - target_msg_delay, topology-aware: the delay the chunk would see on an
 *    idle path set given what the channel already has outstanding when it
 *    is posted, i.e. the empty-fabric completion time (ccl_ideal_fct: every
 *    byte through the path's bottleneck, the last packet's hops, the ACK
 *    back) of the channel's unacknowledged bytes including this chunk, plus
 *    msg_tolerance (default one base RTT). A chunk queued behind its own
 *    window is not congestion; only what the network adds is. When the pipe
 *    is full the bytes already on the wire make this an overestimate by at
 *    most one base RTT, which the tolerance's size covers. With several
 *    queue pairs the NIC serves them in turn, so chunks posted after this
 *    one on the other pairs share the wire with it too: at completion the
 *    target grows by the time of the bytes posted on the other pairs while
 *    it was in flight, at most (pairs - 1) x its own pair's backlog at post
 *    (each other pair sends at most that much while its pair sends it).
 *  - Packet delay: the largest RTT sample (an ACK or NACK at the sender:
 *    now - the echoed timestamp of the data packet, tp_world_rtt_hook) the
 *    channel's queue pairs reported since the previous chunk completion:
 *    with one queue pair, exactly the ACKs of this chunk's packets. The max,
 *    not a mean: one hot path among eight is what the signal must show.
 *    target_max_delay defaults to 2 base RTTs (a packet that waited one
 *    more round trip somewhere).
 *  - The NIC underneath runs its own per-packet congestion control or not:
 *    that is the transport's option (`transport: {type: roce, dcqcn:
 *    false}`: PFC only, as the slides' "AR with PFC"; `dcqcn: true`: DCQCN
 *    under MCC). MCC needs nothing from the transport but its completions
 *    and the RTT hook, so it runs over any stream transport.
 * Chunks go whole to the channel's queue pairs in turn (qps, default 1).
 */
#include "ccl/mcc.h"

#include <math.h>
#include <string.h>

#include "core/err.h"
#include "transport/conn.h"

static const char *const mcc_partials[] = { "hold", "grow", "cut", NULL };
static const char *const mcc_quadrant_names[] = { "none", "partial", "global" };

static const struct opt_desc mcc_opts[] = {
	CCL_COMMON_OPTS(struct mcc_params),
	{ "chunk", OPT_SIZE, offsetof(struct mcc_params, chunk), "64KiB", 1, 1e12,
	  "message chunk, the unit of the window (the slides: typically 64 KB)" },
	{ "init_window", OPT_DOUBLE, offsetof(struct mcc_params, init_window), "0", 0,
	  MCC_MAX_WINDOW,
	  "first window, chunks; 0 = the path's BDP in chunks + 1 per queue pair (ours: fills "
	  "an idle pipe)" },
	{ "min_window", OPT_DOUBLE, offsetof(struct mcc_params, min_window), "1", 1, MCC_MAX_WINDOW,
	  "smallest window, chunks (ours: one chunk, a CCL does not pace)" },
	{ "max_window", OPT_DOUBLE, offsetof(struct mcc_params, max_window), "64", 1,
	  MCC_MAX_WINDOW,
	  "largest window, chunks (ours: 64 x 64 KiB = NCCL's 8 steps of 512 KiB)" },
	{ "ai", OPT_DOUBLE, offsetof(struct mcc_params, ai), "1", 0, 1e6,
	  "additive increase, chunks per window of non-congested completions (ours, TCP's)" },
	{ "md", OPT_DOUBLE, offsetof(struct mcc_params, md), "0.5", 0, 1,
	  "multiplicative decrease on global congestion: window x (1 - md), once per window (ours, "
	  "TCP's)" },
	{ "msg_tolerance", OPT_TIME, offsetof(struct mcc_params, msg_tolerance), "0", 0, 1e12,
	  "target_msg_delay = the idle-path-set delay of the channel's outstanding bytes + this; 0 "
	  "= the path's base RTT (ours)" },
	{ "target_max_delay", OPT_TIME, offsetof(struct mcc_params, target_max_delay), "0", 0, 1e12,
	  "a chunk's largest packet RTT sample above this is partial congestion; 0 = 2 x the "
	  "path's "
	  "base RTT (ours)" },
	{ "partial", OPT_ENUM, offsetof(struct mcc_params, partial), "hold", 0, 0,
	  "what partial congestion (packet delay high, message delay low) does: hold (the slides), "
	  "grow or cut (ablations: cut reacts as a per-packet CC)",
	  mcc_partials },
	{ "enable", OPT_BOOL, offsetof(struct mcc_params, enable), "true", 0, 0,
	  "false: the window stays at init_window (chunking and a fixed window, no control)" },
	{ "trace", OPT_BOOL, offsetof(struct mcc_params, trace), "false", 0, 0,
	  "write qp_trace.csv: a row per acknowledged chunk (window, both delays, their targets, "
	  "quadrant)" },
	OPT_END,
};

/* ---- the pure pieces ---------------------------------------------------------- */

enum mcc_quadrant mcc_classify(simtime_t msg_delay, simtime_t target_msg, simtime_t pkt_delay,
			       simtime_t target_max)
{
	if (msg_delay > target_msg)
		return MCC_GLOBAL;
	return pkt_delay > target_max ? MCC_PARTIAL : MCC_NONE;
}

double mcc_window(const struct mcc_params *p, double cwnd, enum mcc_quadrant q, bool cut,
		  bool short_)
{
	if (q == MCC_PARTIAL)
		q = p->partial == MCC_PARTIAL_GROW  ? MCC_NONE
		    : p->partial == MCC_PARTIAL_CUT ? MCC_GLOBAL
		    : short_			    ? MCC_NONE
						    : MCC_PARTIAL;
	if (q == MCC_NONE)
		cwnd += p->ai / cwnd;
	else if (q == MCC_GLOBAL && cut)
		cwnd *= 1.0 - p->md;
	if (cwnd < p->min_window)
		cwnd = p->min_window;
	if (cwnd > p->max_window)
		cwnd = p->max_window;
	return cwnd;
}

/* ---- the scheduler -------------------------------------------------------------- */

static int mcc_check(void *pp, struct mp_err *e)
{
	const struct mcc_params *p = pp;
	if (p->min_window > p->max_window)
		return mp_errf(e, MP_EUSER,
			       "min_window: expected at most max_window (%g chunks), got %g",
			       p->max_window, p->min_window);
	if (p->init_window && (p->init_window < p->min_window || p->init_window > p->max_window))
		return mp_errf(e, MP_EUSER,
			       "init_window: expected 0 or between min_window (%g) and max_window "
			       "(%g), got %g",
			       p->min_window, p->max_window, p->init_window);
	return MP_OK;
}

static const struct mcc_params *params_of(const struct ccl_chan *ch)
{
	return ch->ccl->params;
}

static void chan_ready(struct ccl_chan *ch, struct mcc_chan *c)
{
	const struct mcc_params *p = params_of(ch);
	const struct conn *q0 = ch->qp[0];
	c->base_rtt = q0->base_rtt;
	c->tolerance = p->msg_tolerance ? p->msg_tolerance : c->base_rtt;
	c->target_max = p->target_max_delay ? p->target_max_delay : 2 * c->base_rtt;
	double w = p->init_window;
	if (!w) {
		uint64_t bdp = (uint64_t)((unsigned __int128)q0->bottleneck_bps * q0->base_rtt /
					  8u / PS_PER_S);
		w = ceil((double)bdp / (double)p->chunk) + ch->nqp; /* see the header */
	}
	c->cwnd = fmax(p->min_window, fmin(p->max_window, w));
	c->cwnd_min = c->cwnd;
	for (uint32_t i = 0; i < MCC_MAX_WINDOW; i++)
		c->free_slot[i] = (uint16_t)(MCC_MAX_WINDOW - 1 - i);
	c->nfree = MCC_MAX_WINDOW;
	c->ready = true;
}

/* The channel's payload posted and not yet acknowledged, over its queue pairs. */
static uint64_t unacked(const struct ccl_chan *ch)
{
	uint64_t b = 0;
	for (uint32_t q = 0; q < ch->nqp; q++)
		b += ch->qp[q]->bytes - ch->qp[q]->acked_bytes;
	return b;
}

/* Payload posted on the channel's queue pairs other than q, cumulative. */
static uint64_t posted_others(const struct ccl_chan *ch, uint32_t q)
{
	uint64_t b = 0;
	for (uint32_t i = 0; i < ch->nqp; i++)
		if (i != q)
			b += ch->qp[i]->bytes;
	return b;
}

/* The chunk in slot s on queue pair q, acknowledged now: its target, grown by
 * what the other pairs were handed while it was in flight (see the header). */
static simtime_t slot_target_now(const struct ccl_chan *ch, const struct mcc_chan *c, uint32_t s,
				 uint32_t q)
{
	if (ch->nqp == 1)
		return c->slot_target[s];
	uint64_t own = c->slot_own[s], later = posted_others(ch, q) - c->slot_others[s],
		 cap = (uint64_t)(ch->nqp - 1) * own;
	uint64_t extra = later < cap ? later : cap;
	struct ccl *l = ch->ccl;
	return c->slot_target[s] + ccl_ideal_fct(l, ch, own + extra) - ccl_ideal_fct(l, ch, own);
}

/* Post chunks while the window has room. */
static void pump(struct ccl_chan *ch, struct mcc_chan *c)
{
	const struct mcc_params *p = params_of(ch);
	struct ccl *l = ch->ccl;
	while (c->head && c->inflight < (uint32_t)c->cwnd) {
		struct ccl_msg *m = c->head;
		uint64_t left = m->bytes - c->head_off;
		uint64_t b = p->chunk < left ? p->chunk : left;
		c->head_off += b;
		if (c->head_off == m->bytes) {
			c->head = m->next;
			if (!c->head)
				c->tail = NULL;
			c->head_off = 0;
		}
		MP_ASSERT(c->nfree > 0);
		uint32_t slot = c->free_slot[--c->nfree];
		uint32_t q = c->qp_next;
		c->qp_next = (q + 1) % ch->nqp;
		uint32_t tag = ccl_part_post(ch, m, q, b);
		ch->parts[tag].sched = slot;
		c->slot_target[slot] = ccl_ideal_fct(l, ch, unacked(ch)) + c->tolerance;
		c->slot_own[slot] = ch->qp[q]->bytes - ch->qp[q]->acked_bytes;
		c->slot_others[slot] = posted_others(ch, q);
		c->inflight++;
	}
}

static void mcc_post(struct ccl_chan *ch, struct ccl_msg *m)
{
	struct mcc_chan *c = ccl_priv(ch);
	if (!c->ready)
		chan_ready(ch, c);
	ccl_msgq_push(&c->head, &c->tail, m);
	pump(ch, c);
}

static void mcc_rtt(struct ccl_chan *ch, uint32_t qp, simtime_t rtt)
{
	(void)qp;
	struct mcc_chan *c = ccl_priv(ch);
	if (rtt > c->pkt_max)
		c->pkt_max = rtt;
}

static void mcc_part_done(struct ccl_chan *ch, struct ccl_part *pt, bool rx)
{
	if (rx)
		return; /* the sender's CCL hears of its own completions */
	const struct mcc_params *p = params_of(ch);
	struct mcc_chan *c = ccl_priv(ch);
	struct ccl *l = ch->ccl;
	simtime_t now = ccl_now(l), msg_delay = now - pt->posted,
		  target = slot_target_now(ch, c, pt->sched, pt->qp);
	simtime_t pkt_delay = c->pkt_max;
	bool may_cut = pt->posted >= c->last_cut;
	enum mcc_quadrant qd = mcc_classify(msg_delay, target, pkt_delay, c->target_max);
	c->pkt_max = 0;
	c->n[qd]++;
	if (p->enable) {
		/* bytes the window must hold to keep the line rate at this delay */
		double need =
		    (double)ch->qp[0]->nf.port->rate_bps * (double)msg_delay / 8 / (double)PS_PER_S;
		double w = mcc_window(p, c->cwnd, qd, may_cut, c->cwnd * (double)p->chunk < need);
		if (w < c->cwnd)
			c->last_cut = now;
		c->cwnd = w;
		if (w < c->cwnd_min)
			c->cwnd_min = w;
	}
	if (p->trace) {
		if (!l->trace_len)
			ccl_trace(
			    l, "time_us,job,src,dst,window,inflight,msg_delay_us,"
			       "target_msg_delay_us,pkt_delay_us,target_max_delay_us,quadrant\n");
		ccl_trace(l, "%.3f,%u,%u,%u,%.3f,%u,%.3f,%.3f,%.3f,%.3f,%s\n", time_to_us(now),
			  ch->job, ch->src, ch->dst, c->cwnd, c->inflight, time_to_us(msg_delay),
			  time_to_us(target), time_to_us(pkt_delay), time_to_us(c->target_max),
			  mcc_quadrant_names[qd]);
	}
	c->free_slot[c->nfree++] = (uint16_t)pt->sched;
	c->inflight--;
	pump(ch, c); /* may move the parts array: pt is not used after this */
}

static double mcc_trace_window(struct ccl_chan *ch)
{
	const struct mcc_chan *c = ccl_priv(ch);
	return c->cwnd;
}

const struct ccl_sched_ops mcc_ccl_ops = {
	.name = "mcc",
	.summary =
	    "MCC (slides): a window of message chunks per channel, grown, held or cut by the "
	    "quadrant of message delay and sampled packet delay",
	.opts = mcc_opts,
	.params_size = sizeof(struct mcc_params),
	.priv_size = sizeof(struct mcc_chan),
	.check = mcc_check,
	.post = mcc_post,
	.part_done = mcc_part_done,
	.rtt = mcc_rtt,
	.window = mcc_trace_window,
};

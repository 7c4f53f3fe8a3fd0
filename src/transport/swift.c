/* swift.c - Swift: delay-target window control over the RoCEv2 reliable
 * connection.
 *
 * Follows: Kumar et al., "Swift: Delay is Simple and Effective for
 * Congestion Control in the Datacenter", ACM SIGCOMM 2020, Algorithm 1 and
 * sections 3.2-3.5, as a window-based congestion control over rocev2.h's
 * queue pairs, window, pacing and go-back-N (one QP per connection). The
 * constants are the UEC htsim's (ultraethernet/uet-htsim, htsim/sim/
 * swift.cpp, SwiftSrc::SwiftSrc), which its authors mark as guesses where
 * the paper gives none: ai 1, beta 0.8, max_mdf 0.5, base target 20 us,
 * h = base / 6.55 per hop, fs_range 5 x base over fs_min_cwnd 0.1 and
 * fs_max_cwnd 100 packets, max_cwnd 1000 packets.
 *
 * Per ACK (Algorithm 1), delay = now - the data packet's send time (echoed):
 *   target = base_target + hops x h + fs(cwnd),
 *     fs(cwnd) = clamp(fs_alpha / sqrt(cwnd) + fs_beta, 0, fs_range),
 *     fs_alpha = fs_range / (1/sqrt(fs_min_cwnd) - 1/sqrt(fs_max_cwnd)),
 *     fs_beta = -fs_alpha / sqrt(fs_max_cwnd)           (section 3.5)
 *   if delay < target: cwnd += ai x acked / cwnd (cwnd >= 1), ai x acked
 *   else if now - t_last_decrease >= rtt:
 *     cwnd *= max(1 - beta (delay - target) / delay, 1 - max_mdf)
 *   a NAK (a loss: Algorithm 1's fast recovery): cwnd *= 1 - max_mdf, once
 *     per RTT;
 *   cwnd clamped to [min_cwnd, max_cwnd]; below one packet the QP sends one
 *   packet every rtt / cwnd (paced), else cwnd packets in flight.
 * Fabric and endpoint delay have their own windows (section 3.2): the
 * fabric window against the target above, the endpoint window against
 * `endpoint_target` (no hop or flow scaling), and the QP uses the smaller.
 *
 * Where the sources are silent or this model chooses:
 *  - hops: the switches on the connection's path (fab_path_switches; the
 *    paper counts them from the IP TTL; htsim the route's hop count).
 *  - Endpoint delay: the hosts here answer at once (no NIC or host
 *    processing is modelled), so the endpoint delay is 0 and the endpoint
 *    window only matters when `endpoint_target` is set below the fabric's
 *    RTT floor; its default is base_target (ours).
 *  - The initial window: one BDP of the path (`init_cwnd` 0; ours).
 *  - min_cwnd: 0.001 packets (the paper's section 3.4 figure; htsim 10 B).
 *  - A retransmission timeout goes back N (the RC layer's timer) and, as
 *    Algorithm 1 does, counts: at `retx_reset_threshold` timeouts in a row
 *    (no ACK between them) the fabric window falls to min_cwnd, before
 *    that it is cut by max_mdf once per RTT (the RTT: the last sample).
 *    Runs lossy unless switch.mode says otherwise.
 */
#include "transport/swift.h"

#include <math.h>

#include "net/fabric.h"
#include "transport/conn.h"
#include "transport/rocev2.h"
#include "transport/transport.h"

struct swift_params {
	struct rocev2_params rv; /* rto, reorder_buffer */
	double ai, beta, max_mdf;
	simtime_t base_target, h, fs_range, endpoint_target;
	double fs_min_cwnd, fs_max_cwnd, min_cwnd, max_cwnd;
	uint64_t init_cwnd; /* packets; 0 = one BDP */
	uint64_t retx_reset_threshold;
};

struct swift_qp {
	struct rocev2_qp qp;
	struct swift_consts k;
	struct swift_win fabric, endpoint;
	uint32_t last_una;	 /* snd_una before this ACK */
	uint32_t retransmit_cnt; /* timeouts since the last ACK */
	simtime_t rtt;		 /* the last RTT sample, ps */
	unsigned hops;
} __attribute__((aligned(64)));

void swift_flow_scaling(struct swift_consts *k, double fs_min_cwnd, double fs_max_cwnd)
{
	k->fs_alpha = (double)k->fs_range / (1 / sqrt(fs_min_cwnd) - 1 / sqrt(fs_max_cwnd));
	k->fs_beta = -k->fs_alpha / sqrt(fs_max_cwnd);
}

simtime_t swift_target(const struct swift_consts *k, unsigned hops, double cwnd)
{
	double fs = k->fs_alpha / sqrt(cwnd) + k->fs_beta;
	if (fs > (double)k->fs_range)
		fs = (double)k->fs_range;
	if (fs < 0)
		fs = 0;
	return k->base_target + hops * k->h + (simtime_t)fs;
}

void swift_react(const struct swift_consts *k, struct swift_win *w, simtime_t delay,
		 simtime_t target, double acked, simtime_t now, simtime_t rtt)
{
	double before = w->cwnd;
	if (delay < target) { /* additive increase: ai per RTT */
		if (w->cwnd >= 1)
			w->cwnd += k->ai * acked / w->cwnd;
		else
			w->cwnd += k->ai * acked;
	} else if (now - w->last_decrease >= rtt) { /* multiplicative, once per RTT */
		double f = 1 - k->beta * (double)(delay - target) / (double)delay;
		w->cwnd *= fmax(f, 1 - k->max_mdf);
	}
	w->cwnd = fmin(fmax(w->cwnd, k->min_cwnd), k->max_cwnd);
	if (w->cwnd < before)
		w->last_decrease = now;
}

/* The QP's window (and pacing below one packet) from the smaller window. */
static void swift_apply(struct conn *c, struct swift_qp *q, simtime_t rtt)
{
	double cwnd = fmin(q->fabric.cwnd, q->endpoint.cwnd);
	double line = (double)rocev2_line_bps(c);
	if (cwnd < 1) { /* one packet every rtt / cwnd */
		const struct tp_common *cm = tp_params(c);
		q->qp.wnd = 1;
		q->qp.rate = fmin(line, (double)cm->mtu * 8.0 * PS_PER_S * cwnd / (double)rtt);
	} else {
		q->qp.wnd = cwnd > 1e9 ? 1000000000u : (uint32_t)ceil(cwnd);
		q->qp.rate = line;
	}
}

static void swift_init(struct conn *c, struct rocev2_qp *rq)
{
	const struct swift_params *p = tp_params(c);
	struct swift_qp *q = (struct swift_qp *)rq;
	q->k = (struct swift_consts){
		.ai = p->ai,
		.beta = p->beta,
		.max_mdf = p->max_mdf,
		.base_target = p->base_target,
		/* swift.cpp: _h = _base_delay / 6.55 */
		.h = p->h ? p->h : (simtime_t)((double)p->base_target / 6.55),
		/* swift.cpp: _fs_range = 5 * _base_delay */
		.fs_range = p->fs_range ? p->fs_range : 5 * p->base_target,
		.min_cwnd = p->min_cwnd,
		.max_cwnd = p->max_cwnd,
	};
	swift_flow_scaling(&q->k, p->fs_min_cwnd, p->fs_max_cwnd);
	struct fabric *f = c->w->fab;
	q->hops = fab_path_switches(f, c->src_hid, c->dst_hid, c->rail);
	double w0 = p->init_cwnd ? (double)p->init_cwnd
				 : ceil((double)tp_bdp_bytes(c) / (double)tp_payload(c));
	q->fabric.cwnd = q->endpoint.cwnd = fmin(fmax(w0, 1), p->max_cwnd);
	q->rtt = c->base_rtt;
	swift_apply(c, q, c->base_rtt);
}

static void swift_feedback(struct conn *c, struct rocev2_qp *rq, const struct packet *pk)
{
	const struct swift_params *p = tp_params(c);
	struct swift_qp *q = (struct swift_qp *)rq;
	if (pk->type != PKT_ACK && pk->type != PKT_NACK)
		return;
	simtime_t now = tp_now(c), rtt = now - pk->ts;
	q->rtt = rtt;
	q->retransmit_cnt = 0;
	double acked = (double)(q->qp.snd_una - q->last_una);
	q->last_una = q->qp.snd_una;
	simtime_t endpoint_delay = 0; /* the hosts answer at once (see above) */
	simtime_t fabric_delay = rtt - endpoint_delay;
	simtime_t target = swift_target(&q->k, q->hops, q->fabric.cwnd);
	swift_react(&q->k, &q->fabric, fabric_delay, target, acked, now, rtt);
	swift_react(&q->k, &q->endpoint, endpoint_delay, p->endpoint_target, acked, now, rtt);
	if (pk->type == PKT_NACK && now - q->fabric.last_decrease >= rtt) { /* a loss */
		q->fabric.cwnd = fmax(q->fabric.cwnd * (1 - q->k.max_mdf), q->k.min_cwnd);
		q->fabric.last_decrease = now;
	}
	swift_apply(c, q, rtt);
}

/* Algorithm 1, on a retransmission timeout. */
static void swift_timeout(struct conn *c, struct rocev2_qp *rq)
{
	const struct swift_params *p = tp_params(c);
	struct swift_qp *q = (struct swift_qp *)rq;
	simtime_t now = tp_now(c);
	if (++q->retransmit_cnt >= p->retx_reset_threshold) {
		q->fabric.cwnd = q->k.min_cwnd;
		q->fabric.last_decrease = now;
	} else if (now - q->fabric.last_decrease >= q->rtt) {
		q->fabric.cwnd = fmax(q->fabric.cwnd * (1 - q->k.max_mdf), q->k.min_cwnd);
		q->fabric.last_decrease = now;
	}
	swift_apply(c, q, q->rtt);
}

static const struct rocev2_cc swift_cc = {
	.qp_size = sizeof(struct swift_qp),
	.init = swift_init,
	.feedback = swift_feedback,
	.timeout = swift_timeout,
};

static int swift_check(void *pp, struct mp_err *e)
{
	struct swift_params *p = pp;
	if (p->fs_min_cwnd >= p->fs_max_cwnd)
		return mp_errf(e, MP_EUSER, "fs_min_cwnd: expected below fs_max_cwnd (%g), got %g",
			       p->fs_max_cwnd, p->fs_min_cwnd);
	if (p->min_cwnd > p->max_cwnd)
		return mp_errf(e, MP_EUSER, "min_cwnd: expected at most max_cwnd (%g), got %g",
			       p->max_cwnd, p->min_cwnd);
	p->rv.qps = 1;
	p->rv.qp_mode = ROCEV2_STRIPE;
	p->rv.ack_interval = 1;		  /* a delay sample per packet */
	p->rv.cnp_mode = ROCEV2_CNP_NONE; /* delay only */
	p->rv.ect = false;
	return MP_OK;
}

static void swift_open(struct conn *c)
{
	rocev2_open(c, &swift_cc);
}

static void swift_trace(const struct conn *c, struct tp_trace *t)
{
	const struct rocev2_state *s = (const struct rocev2_state *)c->priv;
	const struct swift_qp *q = (const struct swift_qp *)s->qp;
	t->cwnd = fmin(q->fabric.cwnd, q->endpoint.cwnd) * (double)tp_payload((struct conn *)c);
	t->rate = q->qp.rate;
}

static const struct opt_desc swift_opts[] = {
	TP_COMMON_OPTS_AT(struct swift_params, rv.common),
	{ "rto", OPT_TIME, offsetof(struct swift_params, rv.rto), "10ms", 1e6, 1e13,
	  "retransmission timeout: go back to the oldest unacknowledged PSN (ours, as dctcp)" },
	ROCEV2_REORDER_OPT(struct swift_params),
	{ "ai", OPT_DOUBLE, offsetof(struct swift_params, ai), "1", 0, 1000,
	  "ai, the additive increment, packets per RTT (UEC htsim swift.cpp _ai)" },
	{ "beta", OPT_DOUBLE, offsetof(struct swift_params, beta), "0.8", 0, 1,
	  "beta, the multiplicative decrease factor (UEC htsim swift.cpp _beta)" },
	{ "max_mdf", OPT_DOUBLE, offsetof(struct swift_params, max_mdf), "0.5", 0, 1,
	  "max_mdf, the largest cut per RTT (UEC htsim swift.cpp _max_mdf)" },
	{ "base_target", OPT_TIME, offsetof(struct swift_params, base_target), "20us", 0, 1e12,
	  "base target delay (UEC htsim swift.cpp _base_delay)" },
	{ "h", OPT_TIME, offsetof(struct swift_params, h), "0", 0, 1e12,
	  "h, the target added per switch on the path; 0 = base_target / 6.55 (UEC htsim "
	  "swift.cpp _h)" },
	{ "fs_range", OPT_TIME, offsetof(struct swift_params, fs_range), "0", 0, 1e12,
	  "fs_range, the flow-scaling term's range; 0 = 5 x base_target (UEC htsim swift.cpp)" },
	{ "fs_min_cwnd", OPT_DOUBLE, offsetof(struct swift_params, fs_min_cwnd), "0.1", 1e-6, 1e6,
	  "fs_min_cwnd, packets: the window at which flow scaling adds fs_range (UEC htsim "
	  "swift.cpp)" },
	{ "fs_max_cwnd", OPT_DOUBLE, offsetof(struct swift_params, fs_max_cwnd), "100", 1e-6, 1e6,
	  "fs_max_cwnd, packets: the window at which flow scaling adds 0 (UEC htsim swift.cpp)" },
	{ "endpoint_target", OPT_TIME, offsetof(struct swift_params, endpoint_target), "20us", 0,
	  1e12, "target of the endpoint (host) delay window (ours: the base target)" },
	{ "min_cwnd", OPT_DOUBLE, offsetof(struct swift_params, min_cwnd), "0.001", 1e-6, 1e6,
	  "smallest window, packets (Swift paper section 3.4: 0.001)" },
	{ "max_cwnd", OPT_DOUBLE, offsetof(struct swift_params, max_cwnd), "1000", 1, 1e9,
	  "largest window, packets (UEC htsim swift.cpp: 1000 MSS)" },
	{ "init_cwnd", OPT_UINT, offsetof(struct swift_params, init_cwnd), "0", 0, 1 << 30,
	  "initial window, packets; 0 = one BDP of the path (ours)" },
	{ "retx_reset_threshold", OPT_UINT, offsetof(struct swift_params, retx_reset_threshold),
	  "5", 1, 1000,
	  "RETX_RESET_THRESHOLD: timeouts in a row that drop the window to min_cwnd (UEC htsim "
	  "swift.cpp _rtx_reset_threshold)" },
	OPT_END
};

const struct transport_ops swift_transport_ops = {
	.trace = swift_trace,
	.name = "swift",
	.summary = "Swift: delay target scaled by hops and window, fabric and endpoint windows "
		   "(SIGCOMM 2020) over RoCEv2 RC (go-back-N, one QP, paced below one packet); "
		   "lossy unless switch.mode says otherwise",
	.opts = swift_opts,
	.params_size = sizeof(struct swift_params),
	.check = swift_check,
	.open = swift_open,
	ROCEV2_RC_OPS,
};

/* dctcp.c - DCTCP: ECN-fraction window control over the RoCEv2 reliable
 * connection.
 *
 * Follows: Alizadeh et al., "Data Center TCP (DCTCP)", ACM SIGCOMM 2010,
 * section 3, and RFC 8257 ("Data Center TCP (DCTCP): TCP-Like Congestion
 * Control for Data Centers", 2017), section 3, as a window-based congestion
 * control (rocev2.h's window, no pacing) over the same queue pairs and
 * go-back-N as RoCEv2 (the DCTCP that the HPCC authors' ns-3 model runs,
 * `--cc dctcp` in simulation/run.py, is also over its RDMA go-back-N NIC).
 *
 * The switch: mark CE when the queue exceeds K at dequeue, a step
 * (`switch: {kmin: K, kmax: K, pmax: 1}`); the paper's K for 10 Gb/s is 65
 * packets (section 3.4: K > C x RTT / 7). The receiver answers every data
 * packet with an ACK that echoes that packet's CE exactly (ECE), so the
 * delayed-ACK state machine of RFC 8257 section 3.2 is not needed (an ACK
 * is never coalesced: ack_interval 1).
 *
 * The sender, per ACK (RFC 8257 section 3.3):
 *   BytesAcked += acked; if ECE: BytesMarked += acked
 *   if SND.UNA > WindowEnd (one observation window, about one RTT, ended):
 *     F = BytesMarked / BytesAcked; alpha = (1 - g) alpha + g F
 *     WindowEnd = SND.NXT; BytesAcked = BytesMarked = 0
 *   if ECE and no cut since the window of the last cut ended:
 *     cwnd = cwnd (1 - alpha / 2), ssthresh = cwnd (at most once per window)
 *   else: slow start (cwnd += acked) below ssthresh, else additive increase
 *     (cwnd += MSS x acked / cwnd: one MSS per RTT)
 * A NAK (go-back-N: a loss) halves cwnd as TCP's fast retransmit does (RFC
 * 5681: ssthresh = max(cwnd / 2, 2 MSS)), at most once per window.
 *
 * Where the sources are silent or this model chooses:
 *  - alpha starts at 1 (RFC 8257 section 3.3 recommends 1, Linux's
 *    dctcp_alpha_on_init; the UEC htsim dctcp.cpp starts at 0): `alpha_init`.
 *  - The initial window: 10 packets (RFC 6928), `init_cwnd`.
 *  - An ACK with ECE never grows cwnd, cut or not (RFC 3168 section 6.1.2;
 *    Linux holds cwnd in its CWR state). The UEC htsim's TcpSrc grows it on
 *    every ACK, and its DCTCPSrc cuts at the end of every window while
 *    alpha > 0, marked or not (experiments/cc/README.md measures both).
 *  - cwnd is at least one packet; the RC layer's window is whole packets,
 *    floor(cwnd / MSS) (RFC 5681's send rule; see dctcp_wnd_packets).
 *  - A retransmission timeout goes back N (the RC layer's timer) and sets
 *    ssthresh = max(flight / 2, 2 MSS), cwnd = 1 MSS (RFC 5681 section
 *    3.1); `rto` 10 ms as the UEC htsim's DCTCPSrc (_rto).
 *  - Runs lossy unless switch.mode says otherwise (DCTCP was built for
 *    shallow-buffered lossy Ethernet).
 */
#include "transport/dctcp.h"

#include <math.h>

#include "transport/conn.h"
#include "transport/rocev2.h"
#include "transport/transport.h"

struct dctcp_params {
	struct rocev2_params rv; /* rto, reorder_buffer */
	double g;
	double alpha_init;
	uint64_t init_cwnd; /* packets */
};

struct dctcp_qp {
	struct rocev2_qp qp;
	struct dctcp_cc cc;
	uint32_t last_una; /* snd_una before this ACK: what it acknowledged */
	double mss;	   /* payload bytes of a full packet */
} __attribute__((aligned(64)));

/* A cut at most once per window: none until snd_una passes the PSN that was
 * next when the last cut was made (TCP's CWR state). */
static bool may_cut(struct dctcp_cc *cc, uint32_t snd_una)
{
	if (cc->cwr && snd_una > cc->recover)
		cc->cwr = false;
	return !cc->cwr;
}

void dctcp_on_ack(struct dctcp_cc *cc, double g, double mss, uint64_t acked, bool ece,
		  uint32_t snd_una, uint32_t snd_nxt)
{
	cc->bytes_acked += acked; /* RFC 8257 3.3 steps 1-4 */
	if (ece)
		cc->bytes_marked += acked;
	if (snd_una > cc->window_end) { /* steps 5-9 */
		double f = cc->bytes_acked ? (double)cc->bytes_marked / (double)cc->bytes_acked : 0;
		cc->alpha = (1 - g) * cc->alpha + g * f;
		cc->window_end = snd_nxt;
		cc->bytes_acked = cc->bytes_marked = 0;
	}
	if (ece) { /* steps 10-11: the cut, once per window */
		if (may_cut(cc, snd_una)) {
			cc->cwnd *= 1 - cc->alpha / 2;
			if (cc->cwnd < mss)
				cc->cwnd = mss;
			cc->ssthresh = cc->cwnd;
			cc->cwr = true;
			cc->recover = snd_nxt;
		}
		return;
	}
	if (cc->cwnd < cc->ssthresh) /* slow start */
		cc->cwnd += (double)acked;
	else /* congestion avoidance: one MSS per window */
		cc->cwnd += mss * (double)acked / cc->cwnd;
}

/* Whole packets only: TCP may not send beyond SND.UNA + cwnd (RFC 5681
 * section 3.1), so cwnd = 1.9 MSS lets one full-sized packet fly, not two
 * (Linux keeps snd_cwnd in whole packets; the UEC htsim's TcpSrc sends while
 * last_acked + cwnd >= highest_sent + mss). The 1e-9 keeps a cwnd that
 * arithmetic left a hair under N MSS at N. */
uint32_t dctcp_wnd_packets(double cwnd, double mss)
{
	double n = floor(cwnd / mss + 1e-9);
	return n < 1 ? 1 : n > 1e9 ? 1000000000u : (uint32_t)n;
}

static void dctcp_set_wnd(struct dctcp_qp *q)
{
	q->qp.wnd = dctcp_wnd_packets(q->cc.cwnd, q->mss);
}

static void dctcp_init(struct conn *c, struct rocev2_qp *rq)
{
	const struct dctcp_params *p = tp_params(c);
	struct dctcp_qp *q = (struct dctcp_qp *)rq;
	q->mss = (double)tp_payload(c);
	q->cc.cwnd = (double)p->init_cwnd * q->mss;
	q->cc.ssthresh = INFINITY;
	q->cc.alpha = p->alpha_init;
	dctcp_set_wnd(q);
}

static uint64_t acked_bytes(struct conn *c, const struct dctcp_qp *q)
{
	uint64_t n = 0;
	for (uint32_t psn = q->last_una; psn < q->qp.snd_una; psn++)
		n += c->stream ? tp_psn_payload(c, psn) : (uint64_t)q->mss;
	return n;
}

static void dctcp_feedback(struct conn *c, struct rocev2_qp *rq, const struct packet *pk)
{
	const struct dctcp_params *p = tp_params(c);
	struct dctcp_qp *q = (struct dctcp_qp *)rq;
	if (pk->type != PKT_ACK && pk->type != PKT_NACK)
		return;
	uint64_t acked = acked_bytes(c, q);
	q->last_una = q->qp.snd_una;
	dctcp_on_ack(&q->cc, p->g, q->mss, acked, pk->flags & PKT_F_ECE, q->qp.snd_una,
		     q->qp.snd_nxt);
	if (pk->type == PKT_NACK && may_cut(&q->cc, q->qp.snd_una)) { /* a loss: RFC 5681 */
		q->cc.ssthresh = fmax(q->cc.cwnd / 2, 2 * q->mss);
		q->cc.cwnd = q->cc.ssthresh;
		q->cc.cwr = true;
		q->cc.recover = q->qp.snd_nxt;
	}
	dctcp_set_wnd(q);
}

/* RFC 5681 section 3.1: the loss window after a timeout. snd_nxt went back
 * to snd_una already; the flight was what snd_max says was sent. */
static void dctcp_timeout(struct conn *c, struct rocev2_qp *rq)
{
	(void)c;
	struct dctcp_qp *q = (struct dctcp_qp *)rq;
	double flight = (double)(q->qp.snd_max - q->qp.snd_una) * q->mss;
	q->cc.ssthresh = fmax(flight / 2, 2 * q->mss);
	q->cc.cwnd = q->mss;
	q->cc.cwr = false;
	dctcp_set_wnd(q);
}

static const struct rocev2_cc dctcp_cc = {
	.qp_size = sizeof(struct dctcp_qp),
	.init = dctcp_init,
	.feedback = dctcp_feedback,
	.timeout = dctcp_timeout,
};

static int dctcp_check(void *pp, struct mp_err *e)
{
	(void)e;
	struct dctcp_params *p = pp;
	p->rv.qps = 1; /* one TCP connection */
	p->rv.qp_mode = ROCEV2_STRIPE;
	p->rv.ack_interval = 1; /* every CE echoed on its own ACK */
	p->rv.cnp_mode = ROCEV2_CNP_ON_ACK;
	p->rv.ect = true;
	return MP_OK;
}

static void dctcp_open(struct conn *c)
{
	rocev2_open(c, &dctcp_cc);
}

static void dctcp_trace(const struct conn *c, struct tp_trace *t)
{
	const struct rocev2_state *s = (const struct rocev2_state *)c->priv;
	t->cwnd = ((const struct dctcp_qp *)s->qp)->cc.cwnd;
}

static const struct opt_desc dctcp_opts[] = {
	TP_COMMON_OPTS_AT(struct dctcp_params, rv.common),
	{ "rto", OPT_TIME, offsetof(struct dctcp_params, rv.rto), "10ms", 1e6, 1e13,
	  "retransmission timeout: go back to the oldest unacknowledged PSN (UEC htsim "
	  "dctcp.cpp: 10 ms)" },
	ROCEV2_REORDER_OPT(struct dctcp_params),
	{ "g", OPT_DOUBLE, offsetof(struct dctcp_params, g), "0.0625", 0, 1,
	  "g, the EWMA gain of alpha (DCTCP paper section 3.1 and RFC 8257 section 4.2: 1/16)" },
	{ "alpha_init", OPT_DOUBLE, offsetof(struct dctcp_params, alpha_init), "1", 0, 1,
	  "alpha at the start (RFC 8257 section 3.3: 1; UEC htsim dctcp.cpp: 0)" },
	{ "init_cwnd", OPT_UINT, offsetof(struct dctcp_params, init_cwnd), "10", 1, 1 << 20,
	  "initial window, packets (RFC 6928)" },
	OPT_END
};

const struct transport_ops dctcp_transport_ops = {
	.trace = dctcp_trace,
	.name = "dctcp",
	.summary = "DCTCP: window cut by the fraction of ECN marks (SIGCOMM 2010, RFC 8257) over "
		   "RoCEv2 RC (go-back-N, one QP); give the switches step marking at K "
		   "(switch: {kmin: K, kmax: K, pmax: 1}); lossy unless switch.mode says otherwise",
	.opts = dctcp_opts,
	.params_size = sizeof(struct dctcp_params),
	.check = dctcp_check,
	.open = dctcp_open,
	ROCEV2_RC_OPS,
};

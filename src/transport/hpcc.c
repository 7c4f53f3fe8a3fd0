/* hpcc.c - HPCC: window and rate from in-band telemetry, over the RoCEv2
 * reliable connection.
 *
 * Follows: Li et al., "HPCC: High Precision Congestion Control", ACM SIGCOMM
 * 2019, Algorithm 1 (section 3.3), as the authors' ns-3 model runs it
 * (alibaba-edu/High-Precision-Congestion-Control: simulation/run.py for
 * `--cc hp`, simulation/src/point-to-point/model/rdma-hw.cc, HandleAckHp,
 * UpdateRateHp and FastReactHp; rdma-queue-pair.cc, GetWin). It is a
 * congestion control over rocev2.h's queue pairs, go-back-N and pacing,
 * as the ns-3 model runs it over its RDMA NIC (NACK, go back to snd_una;
 * an ACK per packet, L2_ACK_INTERVAL 1), on a lossless (PFC) fabric.
 *
 * The fabric: every switch egress pushes a hop record onto each data packet
 * as it leaves (net/packet.h, struct pkt_int: time, bytes sent before it,
 * bytes left queued, line rate; at most 5 hops), and the receiver copies the
 * record into its ACK or NAK (hpcc_echo).
 *
 * The sender, per ACK, with the record of the previous ACK stored
 * (MeasureInflight, Algorithm 1 lines 2-10):
 *   for each hop i:  tau = ts - ts', txRate = (txBytes - txBytes') / tau,
 *                    u_i = min(qlen, qlen') / (B_i T) + txRate / B_i
 *   U' = the largest u_i, with its tau (capped at T);
 *   U = (1 - tau / T) U + (tau / T) U'
 * and ComputeWind (lines 11-18), with W = rate x T:
 *   if U >= eta or incStage >= maxStage:  W = W_c / (U / eta) + W_AI,
 *                                         incStage = 0
 *   else                                  W = W_c + W_AI, incStage++
 *   bounded by [min_rate x T, B_nic x T]; W_c (the reference) and incStage
 *   change only on the first ACK that acknowledges a PSN sent after the
 *   previous such update (once per RTT: lastUpdateSeq = snd_nxt); every
 *   other ACK reacts without changing the reference (fast react).
 * The QP then sends at rate = W / T (paced) with at most W_init x rate /
 * B_nic bytes in flight (ns-3's VAR_WIN: W_init = B_nic x T).
 *
 * Where the paper is silent or this model differs from rdma-hw.cc:
 *  - T: the ns-3 run uses the fabric's largest base RTT for every flow
 *    (GLOBAL_T 1); here `base_rtt` 0 takes the connection's own path
 *    (data packet out, ACK back, no queueing), which is the same on a
 *    one-tier fabric; set it to reproduce GLOBAL_T on a larger one.
 *  - INT values are exact (ns-3 quantises bytes and queue lengths).
 *  - A hop whose record did not advance in time (tau = 0) is skipped (ns-3
 *    would divide by zero); a hop beyond the stored record's (a path that
 *    grew) is skipped until the next ACK.
 *  - maxStage: the paper's 5 (section 5.1); run.py passes MI_THRESH 0,
 *    which `max_stage: 0` reproduces (every update multiplicative).
 *  - MULTI_RATE 0 and SAMPLE_FEEDBACK 0 as run.py: one rate per QP.
 *  - Idle (a stream QP with nothing posted): the state stays as the last
 *    message left it (ns-3 deletes the QP at completion).
 */
#include "transport/hpcc.h"

#include <math.h>
#include <string.h>

#include "net/fabric.h"
#include "transport/conn.h"
#include "transport/rocev2.h"
#include "transport/transport.h"

struct hpcc_params {
	struct rocev2_params rv; /* qps, qp_mode, ack_interval, rto */
	double eta;
	uint64_t max_stage;
	uint64_t rai;	    /* bit/s; 0 = the NIC rate x 4e-4 */
	uint64_t min_rate;  /* bit/s */
	simtime_t base_rtt; /* T, ps; 0 = the connection's base RTT */
	bool fast_react;
};

struct hpcc_qp {
	struct rocev2_qp qp;
	struct hpcc_consts k;
	uint32_t update_psn; /* the next full update waits for an ACK above this PSN */
	bool have_update;    /* a first ACK set update_psn */
	struct hpcc_cc cc;
} __attribute__((aligned(64)));

double hpcc_react(const struct hpcc_consts *k, struct hpcc_cc *cc, const struct pkt_int *in,
		  bool full)
{
	double U = 0, T = (double)k->t;
	simtime_t dt = 0;
	bool any = false;
	for (uint32_t i = 0; i < in->nhop && i < cc->nhop; i++) { /* lines 2-8 */
		const struct pkt_int_hop *h = &in->hop[i], *o = &cc->hop[i];
		if (h->ts <= o->ts)
			continue; /* no time elapsed: nothing measured (ours) */
		simtime_t tau = h->ts - o->ts;
		double tx_rate = (double)(h->tx_bytes - o->tx_bytes) * 8.0 * PS_PER_S / (double)tau;
		uint64_t qlen = h->qlen < o->qlen ? h->qlen : o->qlen;
		/* qlen x B_nic / (B_i W_init) = qlen / (B_i T) (rdma-hw.cc's form) */
		double u = tx_rate / (double)h->rate_bps +
			   (double)qlen * k->line / (double)h->rate_bps / k->w_init;
		if (u > U) {
			U = u;
			dt = tau;
		}
		any = true;
	}
	cc->nhop = in->nhop < PKT_INT_MAX_HOPS ? in->nhop : PKT_INT_MAX_HOPS;
	memcpy(cc->hop, in->hop, cc->nhop * sizeof cc->hop[0]);
	if (!any)
		return -1;
	if (dt > k->t)
		dt = k->t;
	cc->u = (cc->u * (T - (double)dt) + U * (double)dt) / T; /* line 9 */
	double max_c = cc->u / k->eta, rate;
	uint32_t stage;
	if (max_c >= 1 || cc->inc_stage >= k->max_stage) { /* lines 12-14 */
		rate = cc->rc / max_c + k->rai;
		stage = 0;
	} else { /* lines 15-17 */
		rate = cc->rc + k->rai;
		stage = cc->inc_stage + 1;
	}
	if (rate < k->min_rate)
		rate = k->min_rate;
	if (rate > k->line)
		rate = k->line;
	if (full) {
		cc->rc = rate;
		cc->inc_stage = stage;
	}
	return rate;
}

/* The window for `rate`: W_init x rate / B_nic bytes (GetWin), in packets. */
static uint32_t hpcc_wnd(const struct hpcc_qp *q, double rate, uint64_t payload)
{
	double w = floor(q->k.w_init * rate / q->k.line);
	if (w < 1)
		w = 1;
	double n = ceil(w / (double)payload);
	return n > 1e9 ? 1000000000u : (uint32_t)n;
}

static void hpcc_init(struct conn *c, struct rocev2_qp *rq)
{
	const struct hpcc_params *p = tp_params(c);
	struct hpcc_qp *q = (struct hpcc_qp *)rq;
	double line = (double)rocev2_line_bps(c);
	q->k.eta = p->eta;
	q->k.max_stage = p->max_stage;
	/* run.py: RATE_AI = 10 * bw / 25 Mb/s for a bw Gb/s NIC */
	q->k.rai = p->rai ? (double)p->rai : line * 4e-4;
	q->k.min_rate = (double)p->min_rate;
	q->k.line = line;
	q->k.t = p->base_rtt ? p->base_rtt : c->base_rtt;
	q->k.w_init = line * (double)q->k.t / PS_PER_S / 8.0;
	q->cc.u = 1; /* rdma-queue-pair.cc: hp.u = 1 */
	q->cc.rc = line;
	q->qp.wnd = hpcc_wnd(q, line, tp_payload(c));
}

/* rdma-hw.cc's ChangeRate: the next packet's time moves by the change in
 * the last packet's serialisation, so a cut takes effect at once. */
static void hpcc_change_rate(struct conn *c, struct hpcc_qp *q, double rate)
{
	const struct tp_common *cm = tp_params(c);
	double bits = (double)cm->mtu * 8.0 * PS_PER_S;
	double next = (double)q->qp.next_tx + bits / rate - bits / q->qp.rate;
	q->qp.next_tx = next > 0 ? (simtime_t)next : 0;
	q->qp.rate = rate;
	q->qp.wnd = hpcc_wnd(q, rate, tp_payload(c));
}

static void hpcc_feedback(struct conn *c, struct rocev2_qp *rq, const struct packet *pk)
{
	const struct hpcc_params *p = tp_params(c);
	struct hpcc_qp *q = (struct hpcc_qp *)rq;
	if (pk->type != PKT_ACK && pk->type != PKT_NACK)
		return;
	const struct pkt_int *in = pkt_int_c(c->w->fab, pk);
	if (!q->have_update) { /* the first ACK: store its record (first RTT) */
		q->have_update = true;
		q->update_psn = q->qp.snd_nxt;
		q->cc.nhop = in->nhop < PKT_INT_MAX_HOPS ? in->nhop : PKT_INT_MAX_HOPS;
		memcpy(q->cc.hop, in->hop, q->cc.nhop * sizeof q->cc.hop[0]);
		return;
	}
	bool full = rocev2_ack_epsn(pk) > q->update_psn;
	if (!full && !p->fast_react)
		return;
	double rate = hpcc_react(&q->k, &q->cc, in, full);
	if (rate > 0)
		hpcc_change_rate(c, q, rate);
	if (full && q->qp.snd_nxt > q->update_psn)
		q->update_psn = q->qp.snd_nxt;
}

/* A data packet leaves the sender with an empty INT record. */
static void hpcc_sent(struct conn *c, struct rocev2_qp *rq, struct packet *pk)
{
	(void)rq;
	pkt_int(c->w->fab, pk)->nhop = 0;
}

/* The receiver's ACK or NAK carries the data packet's INT record back. */
static void hpcc_echo(struct conn *c, const struct packet *data, struct packet *ack)
{
	const struct pkt_int *in = pkt_int_c(c->w->fab, data);
	struct pkt_int *out = pkt_int(c->w->fab, ack);
	out->nhop = in->nhop;
	memcpy(out->hop, in->hop, in->nhop * sizeof in->hop[0]);
}

static const struct rocev2_cc hpcc_cc = {
	.qp_size = sizeof(struct hpcc_qp),
	.init = hpcc_init,
	.feedback = hpcc_feedback,
	.echo = hpcc_echo,
	.sent = hpcc_sent,
};

static int hpcc_check(void *pp, struct mp_err *e)
{
	(void)e;
	struct hpcc_params *p = pp;
	p->rv.cnp_mode = ROCEV2_CNP_NONE; /* INT only: no ECN, no CNPs */
	p->rv.ect = false;
	return MP_OK;
}

static void hpcc_open(struct conn *c)
{
	rocev2_open(c, &hpcc_cc);
}

static void hpcc_trace(const struct conn *c, struct tp_trace *t)
{
	rocev2_trace(c, t);
	const struct rocev2_state *s = (const struct rocev2_state *)c->priv;
	const struct hpcc_qp *q = (const struct hpcc_qp *)s->qp;
	if (s->nqp == 1) /* the window of the one QP: rate x T */
		t->cwnd = q->qp.rate * (double)q->k.t / PS_PER_S / 8.0;
}

const struct hpcc_cc *hpcc_conn_cc(const struct conn *c)
{
	const struct rocev2_state *s = (const struct rocev2_state *)c->priv;
	return &((const struct hpcc_qp *)s->qp)->cc;
}

static const struct opt_desc hpcc_opts[] = {
	TP_COMMON_OPTS_AT(struct hpcc_params, rv.common),
	ROCEV2_QP_OPTS(struct hpcc_params),
	{ "ack_interval", OPT_UINT, offsetof(struct hpcc_params, rv.ack_interval), "1", 1, 65536,
	  "ACK every this many in-order packets, and at each message's end (HPCC run.py: "
	  "L2_ACK_INTERVAL 1)" },
	ROCEV2_RTO_OPT(struct hpcc_params),
	ROCEV2_REORDER_OPT(struct hpcc_params),
	{ "eta", OPT_DOUBLE, offsetof(struct hpcc_params, eta), "0.95", 0.01, 1,
	  "eta, the target utilisation of the most utilised hop (HPCC paper section 5.1; "
	  "run.py U_TARGET 0.95)" },
	{ "max_stage", OPT_UINT, offsetof(struct hpcc_params, max_stage), "5", 0, 1000,
	  "maxStage: additive-only updates before a multiplicative one (HPCC paper section "
	  "5.1: 5; run.py MI_THRESH 0)" },
	{ "rai", OPT_RATE, offsetof(struct hpcc_params, rai), "0", 0, 1e12,
	  "W_AI / T, the additive step as a rate; 0 = the NIC rate x 4e-4 (run.py RATE_AI "
	  "= 10 * bw / 25 Mb/s: 40Mbps at 100Gbps)" },
	{ "min_rate", OPT_RATE, offsetof(struct hpcc_params, min_rate), "1Gbps", 1e6, 1e13,
	  "rate floor (run.py MIN_RATE 1000Mb/s)" },
	{ "base_rtt", OPT_TIME, offsetof(struct hpcc_params, base_rtt), "0", 0, 1e12,
	  "T, the base RTT (W_init = NIC rate x T); 0 = the connection's own path (ns-3 "
	  "GLOBAL_T 1 takes the fabric's largest)" },
	{ "fast_react", OPT_BOOL, offsetof(struct hpcc_params, fast_react), "true", 0, 0,
	  "react to every ACK without moving the reference window (run.py FAST_REACT 1; "
	  "Algorithm 1's per-ACK update)" },
	OPT_END
};

const struct transport_ops hpcc_transport_ops = {
	.trace = hpcc_trace,
	.name = "hpcc",
	.summary = "HPCC: window and rate from INT (SIGCOMM 2019) over RoCEv2 RC (go-back-N, as "
		   "the authors' ns-3); switches stamp INT; lossless (PFC) unless switch.mode "
		   "says otherwise",
	.opts = hpcc_opts,
	.params_size = sizeof(struct hpcc_params),
	.lossless_default = true,
	.int_telemetry = true,
	.check = hpcc_check,
	.open = hpcc_open,
	ROCEV2_RC_OPS,
};

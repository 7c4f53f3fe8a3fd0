/* timely.c - TIMELY: RTT-gradient rate control over the RoCEv2 reliable
 * connection.
 *
 * Follows: Mittal et al., "TIMELY: RTT-based Congestion Control for the
 * Datacenter" (SIGCOMM 2015), Algorithm 1, as a rate-based congestion control
 * (rocev2.h's rocev2_cc) over the same queue pairs, go-back-N and pacing as
 * RoCEv2 with DCQCN (roce.c): a plain connection runs `qps` QPs, each with its
 * own TIMELY state; a stream connection is one QP whatever `qps` says.
 *
 * Every constant is an option whose default is what the HPCC ns-3 model runs
 * for `--cc timely` (alibaba-edu/High-Precision-Congestion-Control at commit
 * 9f4be2a9: simulation/run.py, and the RdmaHw attributes of
 * simulation/src/point-to-point/model/rdma-hw.cc that run.py leaves at their
 * defaults): alpha 0.875, beta 0.8, T_low 50 us, T_high 500 us, minRTT 20 us
 * (TimelyAlpha/Beta/TLow/THigh/MinRtt); delta = RATE_AI = 10 * bw / 10 Mb/s
 * and the hyperactive step RATE_HAI = 50 * bw / 10 Mb/s for a bw Gb/s NIC
 * (100 and 500 Mb/s at 100 Gb/s: 5 delta, the paper's N = 5); HAI after 5
 * increases (rdma-hw.cc's m_incStage < 5); MIN_RATE 1 Gb/s; an ACK per
 * packet (L2_ACK_INTERVAL 1); rate-bound pacing, no window (RATE_BOUND 1,
 * HAS_WIN 0); a QP starts at line rate (`init_rate`, ours, can lower it).
 * Not carried over: run.py's 1000 B payload (PACKET_PAYLOAD_SIZE), which is
 * the fabric's `mtu` here (4000 B unless set, as for every transport), and
 * its switch settings.
 *
 * Algorithm 1, once per round trip (see "Completion events" below), on an
 * ACK (or NAK) with new_rtt = now - the hardware timestamp of the data
 * packet it answers (the responder echoes it, rocev2.c):
 *   1  new_rtt_diff = new_rtt - prev_rtt
 *   2  prev_rtt = new_rtt
 *   3  rtt_diff = (1 - alpha) rtt_diff + alpha new_rtt_diff
 *   4  normalized_gradient = rtt_diff / minRTT
 *   5  if new_rtt < T_low:  rate += delta                                 (done)
 *   6  if new_rtt > T_high: rate *= 1 - beta (1 - T_high / new_rtt)      (done)
 *   7  if normalized_gradient <= 0: rate += N delta, N = 5 (HAI mode) once
 *        the gradient was <= 0 for `hai_thresh` completion events in a row,
 *        else N = 1
 *   8  else: rate *= 1 - beta normalized_gradient
 *   and min_rate <= rate <= the NIC's rate (the paper's bounds are silent;
 *   these are rdma-hw.cc's: max(m_minRate, ...) and m_max_rate).
 *
 * Where the paper is silent or this model differs from rdma-hw.cc:
 *  - Completion events. The paper updates the rate per completion of a
 *    16-64 KB segment. With an ACK per packet that would be a cut per packet;
 *    we update once per round trip as rdma-hw.cc's UpdateRateTimely does: the
 *    first ACK that acknowledges a PSN sent after the previous update
 *    (m_lastUpdateSeq). The first such ACK of a QP only records prev_rtt.
 *  - RTT. The paper subtracts the segment's serialisation time from the
 *    completion time; with one packet per sample this is one packet time
 *    (0.32 us at 100 Gb/s) and, as in rdma-hw.cc, we do not subtract it.
 *  - HAI. rdma-hw.cc's UpdateRateTimely counts every increase in a row
 *    (m_incStage, line 5 too), resets the count on any cut, and adds
 *    RATE_HAI once the count reaches 5, on line 5 as well (`hai: hpcc`, the
 *    default, as for every other constant here). Algorithm 1 takes N delta
 *    only on line 7, after five completion events with a negative gradient
 *    (`hai: paper`: line-7 increases in a row, reset on any other outcome).
 *    It matters when a flow joins: the RTT ramp stays under T_low (line 5,
 *    no cut) until the queue passes T_low, and the first sample above it
 *    carries a gradient over 1 / beta, so both flows fall to min_rate
 *    together (rdma-hw.cc takes the same path: the same formulas, the same
 *    clamp of c at 0); they climb back below T_low by delta per round trip
 *    under `paper` (4.3 ms to the fair share at 100 Gb/s, the link 45% used
 *    over 4 ms) and by N delta under `hpcc` (1.2 ms, 77%; tests/test_timely.c,
 *    experiments/README.md).
 *  - The ns-3 clamp of line 8's factor at 0 (a gradient over 1 / beta):
 *    the rate then falls to min_rate.
 *  - Pacing: the paper paces segments through a rate limiter; here the QP
 *    paces each packet at `rate` (rocev2.c), as rdma-hw.cc does.
 *  - Idle (a stream QP with nothing posted): TIMELY has no timers; the rate,
 *    prev_rtt, rtt_diff and the HAI count stay as the last message left
 *    them, so the next message starts at that rate and its first update
 *    compares its RTT with the last one before the gap (our choice: the
 *    paper has no idle state; rdma-hw.cc deletes the QP at completion).
 */
#include "transport/rocev2.h"
#include "transport/conn.h"
#include "transport/transport.h"

enum timely_hai { HAI_PAPER, HAI_HPCC };

struct timely_params {
	struct rocev2_params rv; /* qps, qp_mode, ack_interval, rto */
	double alpha;		 /* EWMA weight of the newest RTT difference */
	double beta;		 /* multiplicative decrement factor */
	simtime_t t_low, t_high; /* ps */
	simtime_t min_rtt;	 /* ps: normalises the gradient */
	uint64_t rai, rhai;	 /* delta and N delta, bit/s; 0 = scaled to the NIC */
	uint64_t hai_thresh;	 /* increases in a row before HAI */
	int hai_mode;		 /* enum timely_hai */
	uint64_t min_rate;	 /* bit/s */
	uint64_t init_rate;	 /* bit/s a QP starts at; 0 = the NIC's rate */
};

/* A QP's TIMELY state; the paper's `rate` is qp.rate. */
struct timely_qp {
	struct rocev2_qp qp;
	double rtt_diff;	/* ps, EWMA of new_rtt - prev_rtt */
	simtime_t prev_rtt;	/* ps */
	uint32_t update_psn;	/* the next update waits for an ACK above this PSN */
	uint32_t neg_events;	/* line-7 increases in a row */
	bool have_rtt;		/* prev_rtt holds a sample */
	double delta, hdelta;	/* bit/s: rai and rhai, resolved for this NIC */
} __attribute__((aligned(64))); /* whole lines each, in an aligned array (rocev2_open) */

static int timely_check(void *pp, struct mp_err *e)
{
	struct timely_params *p = pp;
	if (p->t_low > p->t_high)
		return mp_errf(e, MP_EUSER, "t_low: expected at most t_high (%.3f us), got %.3f us",
			       time_to_us(p->t_high), time_to_us(p->t_low));
	p->rv.cnp_mode = ROCEV2_CNP_NONE; /* RTT only: no ECN, no CNPs */
	p->rv.ect = false;
	return MP_OK;
}

static void timely_init(struct conn *c, struct rocev2_qp *rq)
{
	const struct timely_params *p = tp_params(c);
	struct timely_qp *q = (struct timely_qp *)rq;
	/* run.py: RATE_AI = 10 * bw / 10 Mb/s, RATE_HAI = 50 * bw / 10 Mb/s */
	double bw = (double)rocev2_line_bps(c) / 1e9; /* Gb/s */
	q->delta = p->rai ? (double)p->rai : bw * 1e6;
	q->hdelta = p->rhai ? (double)p->rhai : 5 * bw * 1e6;
	if (p->init_rate && (double)p->init_rate < q->qp.rate)
		q->qp.rate = (double)p->init_rate; /* ours: rdma-hw.cc starts at m_bps */
}

/* Algorithm 1 for one RTT sample. */
static void timely_update(const struct timely_params *p, double line, struct timely_qp *q,
			  simtime_t new_rtt)
{
	double rtt = (double)new_rtt, rate = q->qp.rate;
	double new_rtt_diff = rtt - (double)q->prev_rtt;		      /* 1 */
	q->prev_rtt = new_rtt;						      /* 2 */
	q->rtt_diff = (1 - p->alpha) * q->rtt_diff + p->alpha * new_rtt_diff; /* 3 */
	double gradient = q->rtt_diff / (double)p->min_rtt;		      /* 4 */
	if (new_rtt < p->t_low) {					      /* 5 */
		if (p->hai_mode == HAI_HPCC) {
			rate += q->neg_events >= p->hai_thresh ? q->hdelta : q->delta;
			q->neg_events++;
		} else {
			rate += q->delta;
			q->neg_events = 0;
		}
	} else if (new_rtt > p->t_high) { /* 6 */
		rate *= 1 - p->beta * (1 - (double)p->t_high / rtt);
		q->neg_events = 0;
	} else if (gradient <= 0) { /* 7 */
		rate += q->neg_events >= p->hai_thresh ? q->hdelta : q->delta;
		q->neg_events++;
	} else { /* 8 */
		double f = 1 - p->beta * gradient;
		rate *= f > 0 ? f : 0;
		q->neg_events = 0;
	}
	if (rate > line)
		rate = line;
	if (rate < (double)p->min_rate)
		rate = (double)p->min_rate;
	q->qp.rate = rate;
}

static void timely_feedback(struct conn *c, struct rocev2_qp *rq, const struct packet *pk)
{
	const struct timely_params *p = tp_params(c);
	struct timely_qp *q = (struct timely_qp *)rq;
	if (pk->type != PKT_ACK && pk->type != PKT_NACK)
		return;
	if (q->have_rtt && rocev2_ack_epsn(pk) <= q->update_psn)
		return; /* within the round trip of the last update */
	simtime_t new_rtt = tp_now(c) - pk->ts;
	if (q->have_rtt)
		timely_update(p, (double)rocev2_line_bps(c), q, new_rtt);
	else
		q->prev_rtt = new_rtt;
	q->have_rtt = true;
	if (q->qp.snd_nxt > q->update_psn)
		q->update_psn = q->qp.snd_nxt;
}

static const struct rocev2_cc timely_cc = {
	.qp_size = sizeof(struct timely_qp),
	.init = timely_init,
	.feedback = timely_feedback,
};

static void timely_open(struct conn *c)
{
	rocev2_open(c, &timely_cc);
}

static const char *const hai_modes[] = { "paper", "hpcc", NULL };

static const struct opt_desc timely_opts[] = {
	TP_COMMON_OPTS_AT(struct timely_params, rv.common),
	ROCEV2_QP_OPTS(struct timely_params),
	{ "ack_interval", OPT_UINT, offsetof(struct timely_params, rv.ack_interval), "1", 1, 65536,
	  "ACK every this many in-order packets, and at each message's end (HPCC run.py: 1)" },
	ROCEV2_RTO_OPT(struct timely_params),
	ROCEV2_REORDER_OPT(struct timely_params),
	{ "alpha", OPT_DOUBLE, offsetof(struct timely_params, alpha), "0.875", 0, 1,
	  "EWMA weight of the newest RTT difference in rtt_diff" },
	{ "beta", OPT_DOUBLE, offsetof(struct timely_params, beta), "0.8", 0, 1,
	  "multiplicative decrement factor" },
	{ "t_low", OPT_TIME, offsetof(struct timely_params, t_low), "50us", 0, 1e12,
	  "T_low: below this RTT the rate grows by delta whatever the gradient" },
	{ "t_high", OPT_TIME, offsetof(struct timely_params, t_high), "500us", 0, 1e12,
	  "T_high: above this RTT the rate falls by beta (1 - T_high / RTT)" },
	{ "min_rtt", OPT_TIME, offsetof(struct timely_params, min_rtt), "20us", 1e3, 1e12,
	  "minRTT: the RTT difference is divided by it (normalized_gradient)" },
	{ "rai", OPT_RATE, offsetof(struct timely_params, rai), "0", 0, 1e12,
	  "delta, the additive increment; 0 = the NIC rate / 1000 (HPCC run.py: 100Mbps at "
	  "100Gbps)" },
	{ "rhai", OPT_RATE, offsetof(struct timely_params, rhai), "0", 0, 1e12,
	  "N delta, the hyperactive increment; 0 = 5 x the NIC rate / 1000 (HPCC run.py: "
	  "500Mbps at 100Gbps)" },
	{ "hai_thresh", OPT_UINT, offsetof(struct timely_params, hai_thresh), "5", 0, 1000,
	  "increases in a row (hpcc: any; paper: line-7 ones) before HAI mode" },
	{ "hai", OPT_ENUM, offsetof(struct timely_params, hai_mode), "hpcc", 0, 0,
	  "hpcc: every increase in a row counts toward HAI, below T_low too (rdma-hw.cc's "
	  "m_incStage); paper: below T_low the rate grows by delta, HAI counts line-7 increases "
	  "only (Algorithm 1)",
	  hai_modes },
	{ "min_rate", OPT_RATE, offsetof(struct timely_params, min_rate), "1Gbps", 1e6, 1e13,
	  "rate floor (HPCC run.py MIN_RATE)" },
	{ "init_rate", OPT_RATE, offsetof(struct timely_params, init_rate), "0", 0, 1e13,
	  "rate a QP starts at; 0 = the NIC's rate (rdma-hw.cc); ours, to start flows at unequal "
	  "rates" },
	OPT_END
};

const struct transport_ops timely_transport_ops = {
	.trace = rocev2_trace,
	.name = "timely",
	.summary = "TIMELY: RTT-gradient rate control (SIGCOMM 2015) over RoCEv2 RC (go-back-N, "
		   "Q queue pairs); switches lossless (PFC) unless switch.mode says otherwise",
	.opts = timely_opts,
	.params_size = sizeof(struct timely_params),
	.lossless_default = true,
	.check = timely_check,
	.open = timely_open,
	ROCEV2_RC_OPS,
};

/* roce.c - RoCEv2 reliable connection with DCQCN.
 *
 * Follows: Zhu et al., "Congestion Control for Large-Scale RDMA Deployments"
 * (DCQCN, SIGCOMM 2015), sections 3.1-3.3 (NP, RP algorithms, parameters), and
 * the DCQCN model in the HPCC ns-3 repository (alibaba-edu/High-Precision-
 * Congestion-Control, simulation/src/point-to-point/model/rdma-hw.cc,
 * "Mellanox" mode, CC_MODE 1), whose run script (simulation/run.py, --cc
 * dcqcn) is the `hpcc` preset. The reliable connection under it (queue
 * pairs, go-back-N, ACK coalescing, CNP generation, pacing) is rocev2.c: a
 * plain connection runs `qps` QPs, each with its own DCQCN state; a stream
 * connection is one QP whatever `qps` says, its DCQCN state carried across
 * messages (see "Idle" below).
 *
 * DCQCN, reaction point (per QP; rc = current rate, rt = target rate):
 *   CNP arrives: remember it (cnp_arrived); the rate-decrease check, at most
 *     every `rate_decrease_interval`, then cuts:
 *       rt = rc; rc = max(min_rate, rc * (1 - alpha / 2));
 *       and resets the increase state (timer and byte counters, stages);
 *   every `alpha_interval` (K): alpha = (1 - g) alpha + g if a CNP arrived in
 *     the interval, else alpha = (1 - g) alpha;
 *   rate increase, on the timer (every `increase_timer`, T) and on the byte
 *     counter (every `byte_counter` bytes sent, B; 0 = off), counting timer
 *     events t and byte events b since the last cut:
 *       max(t, b) < F:            fast recovery   rc = (rt + rc) / 2
 *       min(t, b) > F:            hyper increase  rt += i * R_HAI, i = min(t,b) - F
 *       otherwise:                additive        rt += R_AI
 *     then rc = (rt + rc) / 2, both capped at the line rate. Without a byte
 *     counter, b is taken to follow t (the ns-3 model's behaviour).
 * Notification point (receiver): a CE-marked packet makes the QP owe a CNP;
 *   `cnp: paced` sends at most one CNP per `cnp_interval` per QP (the paper's
 *   N = 50 us), `cnp: on_ack` echoes congestion on the next ACK (ECE), as the
 *   ns-3 model does.
 *
 * Timers are kept lazily per QP (deadlines, the connection's single timer set
 * to the earliest), so an idle QP costs no events.
 *
 * Idle (a stream QP with every posted PSN acknowledged, until the next post):
 *   DCQCN's timers run on through it, as if the QP were sending. Neither paper
 *   says; we follow the HPCC ns-3 model (rdma-hw.cc at commit 9f4be2a9): its
 *   alpha update (UpdateAlphaMlx), rate-decrease check (CheckRateDecreaseMlx)
 *   and increase timer (RateIncEventTimerMlx) are self-rescheduling events
 *   that nothing about sending stops. A QP with nothing to send (all its bytes
 *   out, or window-bound: qbb-net-device.cc's GetNextQindex skips it) keeps
 *   decaying alpha and raising its rate; only QpComplete cancels them, when
 *   the QP is deleted and the next flow gets a new QP at line rate. A stream
 *   QP is never complete, so across an idle gap alpha decays and the rate
 *   climbs one increase step per T, as during any gap in CNPs; the byte
 *   counter does not count, nothing being sent. A message posted as soon as
 *   the last one is acknowledged therefore starts at the rate that one ended
 *   with (plus the steps of T-timers that fell in between), and one posted
 *   after a long pause near line rate, as a new QP would. The timers that
 *   fell in the gap are run when the QP resumes, before it sends.
 */
#include <math.h>

#include "transport/rocev2.h"
#include "transport/conn.h"
#include "transport/transport.h"

enum roce_bc_mode { BC_PRESET, BC_ON, BC_OFF };
enum roce_clamp { CLAMP_PRESET, CLAMP_ON, CLAMP_OFF };
enum roce_preset { PRESET_PAPER, PRESET_HPCC };

struct roce_params {
	struct rocev2_params rv; /* qps, qp_mode, ack_interval, rto, cnp, cnp_interval */
	bool dcqcn;		 /* false: send at line rate (PFC only) */
	int preset;		 /* enum roce_preset: fills the values left at 0 */
	double g;		 /* alpha gain */
	double initial_alpha;
	simtime_t alpha_interval;	  /* K */
	simtime_t rate_decrease_interval; /* at most one cut per interval */
	simtime_t increase_timer;	  /* T */
	uint64_t byte_counter;		  /* B, bytes (0 = the preset's) */
	int byte_counter_mode;		  /* enum roce_bc_mode */
	uint64_t fast_recovery;		  /* F */
	int clamp_mode;			  /* enum roce_clamp: rt = rc on every cut */
	bool clamp_target;		  /* resolved clamp_mode */
	uint64_t rai, rhai, min_rate;	  /* bit/s */
};

/* A QP's DCQCN reaction point; its current rate rc is qp.rate. */
struct dcqcn_qp {
	struct rocev2_qp qp;
	double rt, alpha;	   /* target rate bit/s, - */
	bool cnp_arrived;	   /* in the current alpha interval */
	bool cut_pending;	   /* a CNP awaits the rate-decrease check */
	bool cnp_ever;		   /* a CNP has arrived */
	simtime_t alpha_next;	   /* end of the current alpha interval */
	simtime_t decr_next;	   /* next rate-decrease check */
	simtime_t incr_next;	   /* next rate-increase timer event */
	uint32_t t_count, b_count; /* increase events since the last cut (count_add) */
	uint64_t bytes_since;	   /* bytes sent since the last byte-counter event */
} __attribute__((aligned(64)));	   /* whole lines each, in an aligned array (rocev2_open) */
/* the sender's state in one line past the queue pair's two (rocev2.h) */
_Static_assert(sizeof(struct dcqcn_qp) == sizeof(struct rocev2_qp) + 64,
	       "DCQCN's state is one line");

/* An increase count: 32 bits, saturating. Only its order against F (at most
 * 100) and, in the paper's hyper increase, (min(t, b) - F) R_HAI, which at
 * any count past 2^32 has long reached the line rate, depend on it. */
static inline void count_add(uint32_t *n, uint64_t k)
{
	*n = k > UINT32_MAX - *n ? UINT32_MAX : *n + (uint32_t)k;
}

/* ---- presets -------------------------------------------------------------- */
/* The DCQCN paper's recommendations (its section 5, for 40 Gb/s) and the HPCC
 * ns-3 run script at 100 Gb/s.
 *
 * `hpcc` checked against simulation/run.py --cc dcqcn and the RdmaHw defaults
 * it leaves alone (alibaba-edu/High-Precision-Congestion-Control, commit
 * 9f4be2a9): CC_MODE 1 (the Mellanox model), ALPHA_RESUME_INTERVAL 1 us,
 * RATE_DECREASE_INTERVAL 4 us, RP_TIMER 300 us, EWMA_GAIN 1/256 (our `g`
 * default), FAST_RECOVERY_TIMES 1, CLAMP_TARGET_RATE 0, MIN_RATE 1 Gb/s,
 * L2_ACK_INTERVAL 1, no byte counter, RateOnFirstCnp 1 (the first CNP sets
 * rt = rc and cuts nothing), alpha = 1 at the first CNP (`initial_alpha`),
 * congestion echoed on ACKs (ECE) rather than paced CNPs, and ACKs at high
 * priority (ACK_HIGH_PRIO 1; our control packets always are): all equal.
 * The differences:
 *  - RATE_AI / RATE_HAI are 5 * bw / 25 and 50 * bw / 25 Mb/s in run.py,
 *    scaled to its --bw (default 50: 10 / 100 Mb/s); the preset holds the
 *    100 Gb/s values, 20 / 200 Mb/s, at any NIC rate: set `rai` / `rhai` for
 *    another (80 / 800 Mb/s at 400 Gb/s, as experiments/strack does).
 *  - run.py's 1000 B payload (PACKET_PAYLOAD_SIZE) is the fabric's `mtu`
 *    here (4000 B unless set).
 *  - the preset's cnp_interval (4 us) serves only `cnp: paced`, which the
 *    script does not have (our choice: the rate-decrease interval).
 *  - ns-3 echoes CE only on the ACK or NACK of the marked packet itself (a
 *    marked duplicate, or an out-of-order packet whose NACK is suppressed,
 *    echoes nothing); rocev2.c carries a CE to the next ACK or NAK, which
 *    with an ACK per packet differs only around losses.
 *  - the reliable connection under it (rocev2.c) sends one NAK per gap and
 *    re-ACKs duplicates; ns-3 repeats a NACK after 500 us (its NACK
 *    interval) or when the expected PSN moved, and ignores duplicates. */
struct preset {
	simtime_t alpha_interval, decr, incr, cnp_interval;
	uint64_t byte_counter, fast, rai, rhai, min_rate, ack_interval;
	int cnp_mode;
};

static const struct preset presets[] = {
	[PRESET_PAPER] = { .alpha_interval = 55 * PS_PER_US,
			   .decr = 50 * PS_PER_US,
			   .incr = 55 * PS_PER_US,
			   .cnp_interval = 50 * PS_PER_US,
			   .byte_counter = 10000000,
			   .fast = 5,
			   .rai = 40000000,
			   .rhai = 200000000,
			   .min_rate = 100000000,
			   .ack_interval = 1,
			   .cnp_mode = ROCEV2_CNP_PACED },
	[PRESET_HPCC] = { .alpha_interval = 1 * PS_PER_US,
			  .decr = 4 * PS_PER_US,
			  .incr = 300 * PS_PER_US,
			  .cnp_interval = 4 * PS_PER_US,
			  .byte_counter = 0,
			  .fast = 1,
			  .rai = 20000000,
			  .rhai = 200000000,
			  .min_rate = 1000000000,
			  .ack_interval = 1,
			  .cnp_mode = ROCEV2_CNP_ON_ACK },
};

static int roce_check(void *pp, struct mp_err *e)
{
	struct roce_params *p = pp;
	const struct preset *ps = &presets[p->preset];
	if (!p->alpha_interval)
		p->alpha_interval = ps->alpha_interval;
	if (!p->rate_decrease_interval)
		p->rate_decrease_interval = ps->decr;
	if (!p->increase_timer)
		p->increase_timer = ps->incr;
	if (!p->rv.cnp_interval)
		p->rv.cnp_interval = ps->cnp_interval;
	if (!p->byte_counter)
		p->byte_counter = ps->byte_counter ? ps->byte_counter : 10000000;
	if (p->byte_counter_mode == BC_PRESET)
		p->byte_counter_mode = ps->byte_counter ? BC_ON : BC_OFF;
	if (!p->fast_recovery)
		p->fast_recovery = ps->fast;
	if (!p->rai)
		p->rai = ps->rai;
	if (!p->rhai)
		p->rhai = ps->rhai;
	if (!p->min_rate)
		p->min_rate = ps->min_rate;
	if (!p->rv.ack_interval)
		p->rv.ack_interval = ps->ack_interval;
	if (p->rv.cnp_mode == ROCEV2_CNP_NONE) /* "preset" */
		p->rv.cnp_mode = ps->cnp_mode;
	p->rv.ect = true;
	/* the paper always clamps (rt = rc on every CNP); the mlx model not by default */
	p->clamp_target = p->clamp_mode == CLAMP_ON ||
			  (p->clamp_mode == CLAMP_PRESET && p->preset == PRESET_PAPER);
	(void)e;
	return MP_OK;
}

/* ---- helpers ---------------------------------------------------------------- */
/* the HPCC preset runs the Mellanox (ns-3 rdma-hw.cc) variant of DCQCN */
static inline bool is_mlx(const struct roce_params *p)
{
	return p->preset == PRESET_HPCC;
}

static inline struct dcqcn_qp *dq(struct rocev2_qp *q)
{
	return (struct dcqcn_qp *)q;
}

/* ---- DCQCN reaction point ----------------------------------------------------- */
/* Two variants, chosen by the preset:
 *  paper (Zhu et al. 2015, Fig. 7): on a CNP, cut at once (rt = rc,
 *    rc *= 1 - alpha/2) and then alpha = (1-g) alpha + g; alpha decays by (1-g)
 *    per K without a CNP; increase stages counted by the timer T and the byte
 *    counter B; hyper increase adds (min(t, b) - F) * R_HAI;
 *  mlx (the HPCC ns-3 model of the Mellanox NIC, rdma-hw.cc): the first CNP
 *    sets alpha = 1 and starts a periodic alpha update (every K: (1-g) alpha + g
 *    if a CNP arrived in the interval, else (1-g) alpha) and a periodic
 *    rate-decrease check (every rate_decrease_interval: cut if a CNP arrived);
 *    a cut sets rt = rc only if a rate increase happened since the last cut
 *    (clamp_target_rate off), so one congestion episode keeps its target; the
 *    increase timer counts stages: stage < F fast recovery, == F additive,
 *    > F hyper (one R_HAI step); no byte counter. */
static void rate_increase(const struct roce_params *p, double line, struct dcqcn_qp *q)
{
	/* counts of increase events before this one */
	uint64_t t = q->t_count, b = p->byte_counter_mode == BC_ON ? q->b_count : q->t_count;
	uint64_t F = p->fast_recovery, lo = t < b ? t : b, hi = t > b ? t : b;
	if (hi < F) {
		/* fast recovery: halfway to the target */
	} else if (lo > F) {
		q->rt += (double)(is_mlx(p) ? 1 : lo - F) * (double)p->rhai;
	} else {
		q->rt += (double)p->rai;
	}
	if (q->rt > line)
		q->rt = line;
	q->qp.rate = (q->rt + q->qp.rate) / 2;
	if (q->qp.rate > line)
		q->qp.rate = line;
}

/* mlx: bring the periodic alpha update up to `now` (computed when needed
 * rather than ticked, so a QP costs no alpha events) */
static void alpha_advance(const struct roce_params *p, struct dcqcn_qp *q, simtime_t now)
{
	if (now < q->alpha_next)
		return;
	uint64_t n = (now - q->alpha_next) / p->alpha_interval + 1;
	q->alpha = (1 - p->g) * q->alpha + (q->cnp_arrived ? p->g : 0);
	if (n > 1)
		q->alpha *= pow(1 - p->g, (double)(n - 1));
	q->cnp_arrived = false;
	q->alpha_next += n * p->alpha_interval;
}

static void rate_cut(const struct roce_params *p, struct dcqcn_qp *q, simtime_t now)
{
	if (is_mlx(p)) {
		alpha_advance(p, q, now);
		if (p->clamp_target || q->t_count != 0)
			q->rt = q->qp.rate;
	} else {
		q->rt = q->qp.rate;
	}
	q->qp.rate = q->qp.rate * (1 - q->alpha / 2);
	if (q->qp.rate < (double)p->min_rate)
		q->qp.rate = (double)p->min_rate;
	q->t_count = q->b_count = 0;
	q->bytes_since = 0;
	q->incr_next = now + p->increase_timer;
}

/* Run every DCQCN timer of q that is due at `now`. */
static void qp_timers(const struct roce_params *p, double line, struct dcqcn_qp *q, simtime_t now)
{
	if (q->cut_pending && q->decr_next <= now) { /* mlx: the periodic check */
		q->cut_pending = false;
		rate_cut(p, q, now);
		q->decr_next += p->rate_decrease_interval;
	}
	/* mlx: the increase timer runs on after the first cut; paper: until the
	 * line rate is reached */
	if (is_mlx(p) && q->qp.rate >= line && q->rt >= line && q->incr_next <= now) {
		/* at line rate every step leaves both rates there: count the steps
		 * at once (a stream QP resuming after a long idle) */
		uint64_t n = (now - q->incr_next) / p->increase_timer + 1;
		count_add(&q->t_count, n);
		q->incr_next += n * p->increase_timer;
	}
	while ((is_mlx(p) || q->qp.rate < line) && q->incr_next <= now) {
		rate_increase(p, line, q);
		count_add(&q->t_count, 1);
		q->incr_next += p->increase_timer;
	}
}

/* The earliest DCQCN timer of q, for the RoCEv2 layer's one timer. */
static void dcqcn_rearm(const struct roce_params *p, double line, struct dcqcn_qp *q)
{
	simtime_t t = SIMTIME_MAX;
	if (q->cut_pending && q->decr_next < t)
		t = q->decr_next;
	if ((is_mlx(p) || q->qp.rate < line) && q->incr_next < t)
		t = q->incr_next;
	q->qp.cc_at = t;
}

static void on_cnp(struct conn *c, struct dcqcn_qp *q)
{
	const struct roce_params *p = tp_params(c);
	simtime_t now = tp_now(c);
	if (!p->dcqcn)
		return;
	if (!is_mlx(p)) {
		/* paper: cut now, then alpha, which decayed by (1-g) per K of silence */
		rate_cut(p, q, now);
		if (q->alpha_next <= now)
			q->alpha *=
			    pow(1 - p->g, (double)((now - q->alpha_next) / p->alpha_interval + 1));
		q->alpha = (1 - p->g) * q->alpha + p->g;
		q->alpha_next = now + p->alpha_interval;
		dcqcn_rearm(p, (double)rocev2_line_bps(c), q);
		return;
	}
	if (!q->cnp_ever) { /* the first CNP of this QP */
		q->cnp_ever = true;
		q->alpha = p->initial_alpha;
		q->cnp_arrived = false;
		q->alpha_next = now + p->alpha_interval;
		q->decr_next = now + p->rate_decrease_interval + PS_PER_NS;
		q->rt = q->qp.rate;
	} else {
		alpha_advance(p, q, now);
		if (q->decr_next <= now) /* the next check on the periodic grid */
			q->decr_next += ((now - q->decr_next) / p->rate_decrease_interval + 1) *
					p->rate_decrease_interval;
	}
	q->cnp_arrived = true;
	q->cut_pending = true;
	qp_timers(p, (double)rocev2_line_bps(c), q, now);
	dcqcn_rearm(p, (double)rocev2_line_bps(c), q);
}

/* ---- the congestion control the RoCEv2 layer calls -------------------------------- */
static void dcqcn_init(struct conn *c, struct rocev2_qp *rq)
{
	const struct roce_params *p = tp_params(c);
	struct dcqcn_qp *q = dq(rq);
	q->rt = q->qp.rate;
	q->alpha = p->initial_alpha;
	q->alpha_next = tp_now(c) + p->alpha_interval;
	q->decr_next = 0;
	q->incr_next = SIMTIME_MAX;
}

static void dcqcn_feedback(struct conn *c, struct rocev2_qp *rq, const struct packet *pk)
{
	if (pk->type == PKT_CNP || (pk->flags & PKT_F_ECE))
		on_cnp(c, dq(rq));
}

/* The byte counter (installed only when it runs: dcqcn_bc_cc). */
static void dcqcn_sent(struct conn *c, struct rocev2_qp *rq, struct packet *pk)
{
	const struct roce_params *p = tp_params(c);
	struct dcqcn_qp *q = dq(rq);
	double line = (double)rocev2_line_bps(c);
	q->bytes_since += pk->size;
	if (q->bytes_since >= p->byte_counter) {
		q->bytes_since -= p->byte_counter;
		count_add(&q->b_count, 1);
		if (q->qp.rate < line) {
			rate_increase(p, line, q);
			dcqcn_rearm(p, line, q);
		}
	}
}

static void dcqcn_timers(struct conn *c, struct rocev2_qp *rq, simtime_t now)
{
	const struct roce_params *p = tp_params(c);
	double line = (double)rocev2_line_bps(c);
	if (p->dcqcn) {
		qp_timers(p, line, dq(rq), now);
		dcqcn_rearm(p, line, dq(rq));
	}
}

static const struct rocev2_cc dcqcn_cc = {
	.qp_size = sizeof(struct dcqcn_qp),
	.feedback_marked_only = true,
	.init = dcqcn_init,
	.feedback = dcqcn_feedback,
	.timers = dcqcn_timers,
};
/* the same with the byte counter, the only user of `sent` */
static const struct rocev2_cc dcqcn_bc_cc = {
	.qp_size = sizeof(struct dcqcn_qp),
	.feedback_marked_only = true,
	.init = dcqcn_init,
	.feedback = dcqcn_feedback,
	.sent = dcqcn_sent,
	.timers = dcqcn_timers,
};

static void roce_open(struct conn *c)
{
	const struct roce_params *p = tp_params(c);
	bool bc = p->dcqcn && p->byte_counter_mode == BC_ON;
	rocev2_open(c, bc ? &dcqcn_bc_cc : &dcqcn_cc);
}

static const char *const cnp_modes[] = { "preset", "paced", "on_ack", NULL };
static const char *const bc_modes[] = { "preset", "on", "off", NULL };
static const char *const clamp_modes[] = { "preset", "on", "off", NULL };
static const char *const preset_names[] = { "paper", "hpcc", NULL };

static const struct opt_desc roce_opts[] = {
	TP_COMMON_OPTS_AT(struct roce_params, rv.common),
	ROCEV2_QP_OPTS(struct roce_params),
	{ "ack_interval", OPT_UINT, offsetof(struct roce_params, rv.ack_interval), "0", 0, 65536,
	  "ACK every this many in-order packets, and at each message's end; 0 = the preset's" },
	ROCEV2_RTO_OPT(struct roce_params),
	ROCEV2_REORDER_OPT(struct roce_params),
	{ "dcqcn", OPT_BOOL, offsetof(struct roce_params, dcqcn), "true", 0, 0,
	  "DCQCN rate control; false = line rate, PFC only" },
	{ "preset", OPT_ENUM, offsetof(struct roce_params, preset), "paper", 0, 0,
	  "the source of every DCQCN value left at 0: the DCQCN paper, or the HPCC ns-3 run "
	  "script at 100 Gb/s",
	  preset_names },
	{ "cnp", OPT_ENUM, offsetof(struct roce_params, rv.cnp_mode), "preset", 0, 0,
	  "paced: a CNP at most every cnp_interval per QP; on_ack: congestion echoed on ACKs; "
	  "preset: paper paced, hpcc on_ack",
	  cnp_modes },
	{ "cnp_interval", OPT_TIME, offsetof(struct roce_params, rv.cnp_interval), "0", 0, 1e12,
	  "N: at most one CNP per QP per interval (paced); 0 = the preset's" },
	{ "g", OPT_DOUBLE, offsetof(struct roce_params, g), "0.00390625", 1e-6, 1,
	  "alpha gain (1/256)" },
	{ "initial_alpha", OPT_DOUBLE, offsetof(struct roce_params, initial_alpha), "1", 0, 1,
	  "alpha of a new QP" },
	{ "alpha_interval", OPT_TIME, offsetof(struct roce_params, alpha_interval), "0", 0, 1e12,
	  "K: alpha update period; 0 = the preset's (paper 55us, hpcc 1us)" },
	{ "rate_decrease_interval", OPT_TIME, offsetof(struct roce_params, rate_decrease_interval),
	  "0", 0, 1e12,
	  "at most one rate cut per interval; 0 = the preset's (paper 50us, hpcc 4us)" },
	{ "increase_timer", OPT_TIME, offsetof(struct roce_params, increase_timer), "0", 0, 1e12,
	  "T: rate-increase timer; 0 = the preset's (paper 55us, hpcc 300us)" },
	{ "byte_counter", OPT_SIZE, offsetof(struct roce_params, byte_counter), "0", 0, 1e12,
	  "B: a rate-increase event per this many bytes sent; 0 = the preset's (10MB)" },
	{ "byte_counter_mode", OPT_ENUM, offsetof(struct roce_params, byte_counter_mode), "preset",
	  0, 0, "whether the byte counter runs: preset (paper on, hpcc off), on or off", bc_modes },
	{ "clamp_target_rate", OPT_ENUM, offsetof(struct roce_params, clamp_mode), "preset", 0, 0,
	  "hpcc model: on = target rate := current rate at every cut; off = only after a rate "
	  "increase (the NIC default); preset: paper on, hpcc off",
	  clamp_modes },
	{ "fast_recovery", OPT_UINT, offsetof(struct roce_params, fast_recovery), "0", 0, 100,
	  "F: fast-recovery stages; 0 = the preset's (paper 5, hpcc 1)" },
	{ "rai", OPT_RATE, offsetof(struct roce_params, rai), "0", 0, 1e12,
	  "R_AI additive increase; 0 = the preset's (paper 40Mbps, hpcc 20Mbps)" },
	{ "rhai", OPT_RATE, offsetof(struct roce_params, rhai), "0", 0, 1e12,
	  "R_HAI hyper increase; 0 = the preset's (200Mbps)" },
	{ "min_rate", OPT_RATE, offsetof(struct roce_params, min_rate), "0", 0, 1e12,
	  "rate floor; 0 = the preset's (paper 100Mbps, hpcc 1Gbps)" },
	OPT_END
};

const struct transport_ops roce_transport_ops = {
	.trace = rocev2_trace,
	.name = "roce",
	.summary =
	    "RoCEv2 RC: DCQCN, go-back-N, Q queue pairs per connection; switches lossless (PFC) "
	    "unless switch.mode says otherwise",
	.opts = roce_opts,
	.params_size = sizeof(struct roce_params),
	.lossless_default = true,
	.check = roce_check,
	.open = roce_open,
	ROCEV2_RC_OPS,
};

/* uet_cc.c - NSCC and REPS, the standalone parts of the Ultra Ethernet
 * transport (declared in transport/uet.h, driven by transport/uet.c).
 *
 * Facts and constants: the UEC's htsim (github.com/ultraethernet/uet-htsim),
 * htsim/sim/uec.cpp (UecSrc::initNsccParams, updateCwndOnAck_NSCC,
 * updateCwndOnNack_NSCC, quick_adapt, fair_increase, proportional_increase,
 * fast_increase, multiplicative_decrease, fulfill_adjustment, update_delay,
 * update_base_rtt) and htsim/sim/buffer_reps.cpp with uec_mp.cpp (UecMpReps).
 * Names: Ultra Ethernet Specification 1.0 (2025), NSCC and REPS. Integer
 * byte counts are truncated where htsim's are (its mem_b is an integer).
 */
#include <string.h>

#include "transport/uet.h"

/* ---- NSCC ------------------------------------------------------------------- */
/* initNsccParams: scaled against a reference network of 100 Gb/s and 12 us */
#define REF_BPS 100000000000ull
#define REF_RTT (12 * PS_PER_US)

static double bdp_bytes(simtime_t rtt, uint64_t bps)
{
	return (double)rtt / (double)PS_PER_S * (double)bps / 8.0;
}

void uet_nscc_consts(struct uet_nscc_k *k, simtime_t rtt, uint64_t bps, uint64_t mss, uint64_t mtu,
		     bool trimming, simtime_t target, unsigned qa_gate, double gamma,
		     double delay_alpha, simtime_t fast_delay, bool quick_adapt)
{
	memset(k, 0, sizeof *k);
	/* with trimming the queue is one BDP, without five (main_uec.cpp), so
	 * the target is below the network RTT only with trimming */
	k->target_qdelay = target ? target : trimming ? rtt * 3 / 4 : rtt;
	k->qa_threshold = 4 * k->target_qdelay;
	k->qa_gate = qa_gate;
	double a = bdp_bytes(rtt, bps) / bdp_bytes(REF_RTT, REF_BPS);
	double b = (double)k->target_qdelay / (double)REF_RTT;
	k->alpha = 4.0 * (double)mss * a * b / (double)k->target_qdelay;
	k->fi = 5.0 * (double)mss * a;
	k->eta = 0.15 * (double)mss * a;
	k->fi_scale = 0.25 * a;
	k->gamma = gamma;
	k->delay_alpha = delay_alpha;
	k->fast_delay = fast_delay;
	k->adjust_period = rtt;
	k->adjust_bytes = 8 * (int64_t)mtu;
	k->min_cwnd = (int64_t)mtu;
	k->quick_adapt = quick_adapt;
}

void uet_nscc_init(struct uet_nscc *n, simtime_t rtt, uint64_t bps, double maxwnd_bdp)
{
	memset(n, 0, sizeof *n);
	n->base_rtt = rtt;
	n->maxwnd = (int64_t)(maxwnd_bdp * bdp_bytes(rtt, bps));
	n->cwnd = n->maxwnd;
}

static void bound(const struct uet_nscc_k *k, struct uet_nscc *n)
{
	if (n->cwnd < k->min_cwnd)
		n->cwnd = k->min_cwnd;
	if (n->cwnd > n->maxwnd)
		n->cwnd = n->maxwnd;
}

/* update_delay: a clean ACK whose delay is above target pulls the average
 * toward a quarter of the base RTT (the queue is someone else's); a very
 * large sample moves it at the fixed gain 0.0125 */
static void update_delay(const struct uet_nscc_k *k, struct uet_nscc *n, simtime_t raw_rtt,
			 bool skip)
{
	simtime_t delay = raw_rtt - n->base_rtt;
	double avg = (double)n->avg_delay, g = k->delay_alpha;
	if (!skip && delay > k->target_qdelay)
		avg = g * (double)n->base_rtt * 0.25 + (1 - g) * avg;
	else if (delay > 5 * n->base_rtt)
		avg = 0.0125 * (double)delay + (1 - 0.0125) * avg;
	else
		avg = g * (double)delay + (1 - g) * avg;
	n->avg_delay = (simtime_t)avg;
}

/* quick adapt: once per base RTT + target, if the window delivered less
 * than maxwnd >> qa_gate while loss or a large delay was seen, the window
 * becomes what was delivered; the feedback of what is in flight then is
 * ignored. true: done (or ignoring), no other change on this ACK. */
static bool quick_adapt(const struct uet_nscc_k *k, struct uet_nscc *n, simtime_t now, bool is_loss,
			bool skip, simtime_t delay, int64_t in_flight)
{
	bool done = false;
	if (!k->quick_adapt)
		return false;
	if (n->bytes_ignored < n->bytes_to_ignore && skip) {
		done = true;
	} else if (now > n->qa_endtime) {
		if (n->qa_endtime != 0 && (n->trigger_qa || is_loss || delay > k->qa_threshold) &&
		    n->achieved_bytes < (n->maxwnd >> k->qa_gate)) {
			n->cwnd = n->achieved_bytes > k->min_cwnd ? n->achieved_bytes : k->min_cwnd;
			n->bytes_to_ignore = in_flight;
			n->bytes_ignored = 0;
			n->trigger_qa = false;
			done = true;
		}
		n->achieved_bytes = 0;
		n->qa_endtime = now + n->base_rtt + k->target_qdelay;
	}
	if (done) {
		n->inc_bytes = 0;
		n->received_bytes = 0;
	}
	return done;
}

/* fast increase: below fast_delay for a whole window, grow by fi_scale per
 * byte acknowledged, at once; true while it does */
static bool fast_increase(const struct uet_nscc_k *k, struct uet_nscc *n, int64_t newly,
			  simtime_t delay)
{
	if (delay < k->fast_delay) {
		n->fi_count += newly;
		if (n->fi_count > n->cwnd || n->increase) {
			n->cwnd += (int64_t)((double)newly * k->fi_scale);
			n->increase = true;
			return true;
		}
	} else {
		n->fi_count = 0;
	}
	n->increase = false;
	return false;
}

/* multiplicative decrease, at most once per base RTT, by gamma x the
 * average delay's excess over target as a share of it, at most halving */
static void multiplicative_decrease(const struct uet_nscc_k *k, struct uet_nscc *n, simtime_t now)
{
	n->increase = false;
	n->fi_count = 0;
	simtime_t avg = n->avg_delay;
	if (avg > k->target_qdelay && now - n->last_dec_time > n->base_rtt) {
		double f = 1 - k->gamma * (double)(avg - k->target_qdelay) / (double)avg;
		n->cwnd = (int64_t)((double)n->cwnd * (f > 0.5 ? f : 0.5));
		if (n->cwnd < k->min_cwnd)
			n->cwnd = k->min_cwnd;
		n->last_dec_time = now;
	}
}

/* fulfil: the increases owed (bytes^2) divided by the window, and eta once
 * per adjust period */
static void fulfill_adjustment(const struct uet_nscc_k *k, struct uet_nscc *n, simtime_t now)
{
	n->cwnd += n->inc_bytes / n->cwnd;
	if (now - n->last_adjust_time >= k->adjust_period) {
		n->cwnd += (int64_t)k->eta;
		n->last_adjust_time = now;
	}
	n->inc_bytes = 0;
	n->received_bytes = 0;
}

void uet_nscc_on_ack(const struct uet_nscc_k *k, struct uet_nscc *n, simtime_t now,
		     simtime_t raw_rtt, bool ecn, int64_t newly, int64_t in_flight)
{
	n->achieved_bytes += newly;
	n->received_bytes += newly;
	n->bytes_ignored += newly;
	simtime_t delay = n->avg_delay;
	if (raw_rtt) {
		if (raw_rtt < n->base_rtt) { /* update_base_rtt: the window follows */
			double ratio = (double)n->maxwnd / (double)n->base_rtt;
			n->base_rtt = raw_rtt;
			n->maxwnd = (int64_t)(ratio * (double)raw_rtt);
		}
		update_delay(k, n, raw_rtt, ecn);
		delay = raw_rtt - n->base_rtt;
	}
	if (quick_adapt(k, n, now, false, ecn, delay, in_flight))
		return;
	if (!ecn && delay >= k->target_qdelay) { /* fair increase */
		n->inc_bytes += (int64_t)(k->fi * (double)newly);
	} else if (!ecn) { /* proportional increase, unless fast increase */
		if (!fast_increase(k, n, newly, delay))
			n->inc_bytes += (int64_t)(k->alpha * (double)newly *
						  (double)(k->target_qdelay - delay));
	} else if (delay >= k->target_qdelay) {
		multiplicative_decrease(k, n, now);
	} /* else ECN with a small delay: no change (REPS moves the path) */
	bound(k, n);
	if (n->received_bytes > k->adjust_bytes || now - n->last_adjust_time > k->adjust_period)
		fulfill_adjustment(k, n, now);
	bound(k, n);
}

void uet_nscc_on_nack(const struct uet_nscc_k *k, struct uet_nscc *n, simtime_t now,
		      simtime_t raw_rtt, int64_t bytes, simtime_t network_rtt, int64_t in_flight,
		      bool rccc)
{
	if (raw_rtt < n->base_rtt) {
		double ratio = (double)n->maxwnd / (double)n->base_rtt;
		n->base_rtt = raw_rtt;
		n->maxwnd = (int64_t)(ratio * (double)raw_rtt);
	}
	n->bytes_ignored += bytes;
	/* a trim stands for a queue of about the network RTT */
	update_delay(k, n, n->base_rtt + network_rtt, true);
	n->trigger_qa = true;
	if (quick_adapt(k, n, now, true, true, 0, in_flight))
		return;
	/* htsim leaves the window alone on a last-hop trim under RCCC (the
	 * receiver's credit handles that); mpsim's trims carry no hop, so every
	 * trim counts as a fabric one but under RCCC */
	if (!rccc) {
		n->cwnd -= bytes;
		bound(k, n);
	}
}

/* ---- REPS --------------------------------------------------------------------- */
void uet_reps_init(struct uet_reps *r, uint16_t size, uint16_t paths, uint16_t base, bool freezing,
		   simtime_t exit_freeze)
{
	memset(r, 0, sizeof *r);
	r->size = size;
	r->paths = paths;
	r->base = base;
	r->freezing = freezing;
	r->exit_freeze = exit_freeze;
}

static void reps_reset(struct uet_reps *r)
{
	memset(r->valid, 0, sizeof r->valid);
	r->head = r->count = r->nfresh = r->head_frozen = 0;
}

static void reps_add(struct uet_reps *r, uint16_t ev)
{
	if (!r->valid[r->head])
		r->nfresh++;
	r->ev[r->head] = ev;
	r->valid[r->head] = true;
	r->head = (uint16_t)((r->head + 1) % r->size);
	if (r->nfresh > r->size)
		r->nfresh = r->size;
	if (r->count < r->size)
		r->count++;
}

static uint16_t reps_random(struct uet_reps *r, struct mp_rng *rng)
{
	return (uint16_t)(r->base + rng_below(rng, r->paths));
}

uint16_t uet_reps_next(struct uet_reps *r, struct mp_rng *rng)
{
	if (r->explore) {
		r->explore--;
		return reps_random(r, rng);
	}
	if (r->frozen) { /* cycle through what the buffer holds */
		if (!r->count)
			return reps_random(r, rng);
		uint16_t i = r->head_frozen;
		if (r->valid[i])
			r->nfresh--;
		r->valid[i] = false;
		r->head_frozen = (uint16_t)((i + 1) % r->count);
		return r->ev[i];
	}
	if (!r->count || !r->nfresh)
		return reps_random(r, rng);
	/* the earliest fresh one: the nfresh most recently added */
	uint16_t i = (uint16_t)((r->head + r->size - r->nfresh) % r->size);
	r->valid[i] = false;
	r->nfresh--;
	return r->ev[i];
}

void uet_reps_feedback(struct uet_reps *r, uint16_t ev, enum uet_path_fb fb, simtime_t now)
{
	if (fb == UET_PATH_TIMEOUT && r->freezing && !r->frozen && !r->explore) {
		r->frozen = true;
		r->exit_at = now + r->exit_freeze;
	}
	if (r->frozen && now > r->exit_at) {
		r->frozen = false;
		reps_reset(r);
		r->explore = 16; /* uec_mp.cpp: explore_counter after a freeze */
	}
	if (fb == UET_PATH_GOOD)
		reps_add(r, ev);
}

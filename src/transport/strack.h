/* strack.h - the pure decision functions of STrack (src/transport/strack.c),
 * exposed so that tests can drive them rule by rule.
 *
 * Follows: Le et al., "STrack: A Reliable Multipath Transport for AI/ML
 * Clusters" (AMD/Microsoft), Algorithm 3 (adaptive load balancing: the ECN
 * bitmap and CHOOSE_PATH), Algorithm 2 (achievedBDP) and Algorithm 4
 * (ADJUST_CWND, the four quadrants of its Fig. 5), with Table 1's parameters.
 *
 * Units: times in ps (simtime_t, or double where they enter arithmetic),
 * windows in payload bytes. The paper writes its window rules per ACK in
 * packets (cwnd <- cwnd + beta / cwnd, as TCP's "one packet per RTT"); here
 * every increase rule is applied per acknowledged packet, i.e. scaled by the
 * bytes an ACK newly acknowledges over the packet size `mss`, so that
 * coalesced ACKs (one SACK for several packets) grow the window as fast as
 * per-packet ACKs would. The paper is silent on this scaling; it is the
 * reading under which its per-RTT growth (beta packets per RTT) does not
 * depend on the ACK coalescing ratio.
 */
#ifndef MPSIM_TRANSPORT_STRACK_H
#define MPSIM_TRANSPORT_STRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/time.h"
#include "transport/conn.h"

/* ---- Algorithm 3: adaptive load balancing ---------------------------------- */
#define STRACK_MAX_PATHS 256 /* the paper's max_paths, and the bitmap's size */

struct strack_lb {
	uint64_t bitmap[STRACK_MAX_PATHS / 64]; /* bit set = the path came back ECN-marked */
	uint32_t max_paths;			/* <= STRACK_MAX_PATHS */
	uint32_t min_paths;			/* Algorithm 3 line 18: 8 */
	uint32_t rr;				/* the path used last */
	int32_t next_path_id;			/* an ECN-free path to reuse; -1 = none */
};

void strack_lb_init(struct strack_lb *lb, uint32_t max_paths, uint32_t min_paths);
/* UPDATE_ECN_BITMAP (lines 2-10): an ACK came back on path_id, marked or not. */
void strack_lb_update(struct strack_lb *lb, bool ecn, uint32_t path_id);
/* CHOOSE_PATH (lines 11-29) with cwnd in packets: the path of the next packet. */
uint32_t strack_lb_choose(struct strack_lb *lb, double cwnd_pkts);
/* The paths CHOOSE_PATH round-robins over: max(8, min(max_paths, 2 cwnd)). */
uint32_t strack_lb_paths(const struct strack_lb *lb, double cwnd_pkts);
/* Oblivious spray: plain round robin over all max_paths entropies. */
uint32_t strack_lb_oblivious(struct strack_lb *lb);
static inline bool strack_lb_marked(const struct strack_lb *lb, uint32_t path)
{
	return (lb->bitmap[path >> 6] >> (path & 63)) & 1;
}

/* ---- Algorithms 2 and 4: congestion control -------------------------------- */
struct strack_cc_cfg {
	double mss;	      /* payload bytes of a full packet (the per-packet rules' unit) */
	double target_qdelay; /* ps */
	double target_qhigh;  /* ps */
	double ewma;	      /* weight of a new delay sample in avg_delay */
	double alpha;	      /* packets of increase per RTT per ps below target_Qdelay */
	double beta;	      /* packets of increase per RTT (delay > target_Qhigh, no ECN) */
	double eta;	      /* packets added once per base RTT (fairness) */
	double gamma;	      /* multiplicative decrease gain */
	double max_cwnd;      /* bytes */
	double min_cwnd;      /* bytes */
};

struct strack_cc {
	double cwnd;		    /* bytes */
	double avg_delay;	    /* ps, EWMA of the queueing delay (Alg. 4 line 5) */
	simtime_t base_rtt;	    /* ps, the smallest RTT seen (Alg. 1 lines 5-7) */
	simtime_t last_decrease_ts; /* ps */
	simtime_t last_selfai_ts;   /* ps, the last fairness increment */
	uint64_t rx_count;	    /* bytes acknowledged in the current period (Alg. 2) */
	uint64_t achieved_bdp;	    /* bytes acknowledged in the last complete period;
				     * 0 = not measured (Alg. 4 line 11 waits) */
	simtime_t rxcount_clear_ts; /* ps, start of the current period */
};

/* Which rule of Algorithm 4 changed the window (fairness aside). */
enum strack_cc_rule {
	STRACK_CC_HOLD = 0, /* no rule fired: quadrant 2 (ECN, low delay), or waiting */
	STRACK_CC_AI_HIGH,  /* line 7: no ECN, delay > target_Qhigh: + beta / cwnd */
	STRACK_CC_PROP_INC, /* line 9: no ECN, delay < target_Qdelay: proportional */
	STRACK_CC_ACHIEVED, /* line 12: cwnd = achievedBDP, when that lowers it */
	STRACK_CC_MULT_DEC, /* line 15: multiplicative decrease */
};

/* UPDATE_ACHIEVEDBDP (Algorithm 2): acked_bytes newly acknowledged at now;
 * an ACK answering a probe adds nothing. `period` = base_rtt + target_Qdelay. */
void strack_achieved_bdp_update(struct strack_cc *cc, simtime_t period, uint64_t acked_bytes,
				bool probe, simtime_t now);
/* ADJUST_CWND (Algorithm 4) for one ACK: ecn echoed, delay = measured RTT -
 * base_rtt (ps), acked_bytes newly acknowledged by this ACK. Sets *fair when
 * the fairness increment (line 20) was added. Keeps min_cwnd <= cwnd <=
 * max_cwnd. */
enum strack_cc_rule strack_adjust_cwnd(struct strack_cc *cc, const struct strack_cc_cfg *k,
				       bool ecn, simtime_t delay, uint64_t acked_bytes,
				       simtime_t now, bool *fair);

/* The window (payload bytes) of STrack connection c now: for tests. */
struct conn;
double strack_conn_cwnd(struct conn *c);

/* ---- section 3.3.1: the SACK's bitmap segment -------------------------------- */
/* The SACK base PSN: the receiver's bitmap starts at the expected PSN and is
 * cut into 64-bit segments; a SACK carries the segment holding `low`, the
 * lowest PSN that arrived since the previous SACK (UINT32_MAX: none), or the
 * first segment when `low` is below the expected PSN. */
uint32_t strack_sack_base(uint32_t epsn, uint32_t low);

#endif

/* mcc.h - MCC, message-level congestion control in the collective library
 * over switch adaptive routing (conference slides, "MCC: Message-level
 * Signaling (and CC) to Eliminate Overreaction"; their only numbers come from
 * an ns-3 model that is not public).
 *
 * A ccl scheduler (ccl.h) that cuts every message into chunks, keeps a window
 * of chunks in flight per channel, and moves the window by the slides'
 * quadrant of two signals per acknowledged chunk: its message delay (post to
 * completion) against a topology-aware target, and its sampled packet delay
 * (the largest RTT sample the transport reported for the chunk's packets)
 * against target_max_delay. mcc.c gives each choice the slides leave open.
 */
#ifndef MPSIM_CCL_MCC_H
#define MPSIM_CCL_MCC_H

#include <stdbool.h>
#include <stdint.h>

#include "ccl/ccl.h"

#define MCC_MAX_WINDOW 1024 /* chunks in flight per channel this scheduler keeps state for */

enum mcc_partial { MCC_PARTIAL_HOLD, MCC_PARTIAL_GROW, MCC_PARTIAL_CUT };
enum mcc_quadrant { MCC_NONE, MCC_PARTIAL, MCC_GLOBAL };

struct mcc_params {
	struct ccl_common common;
	uint64_t chunk;		    /* bytes per chunk */
	double init_window;	    /* chunks; 0 = the path's BDP in chunks + 1 per queue pair */
	double min_window;	    /* chunks */
	double max_window;	    /* chunks */
	double ai;		    /* additive increase, chunks per window of completions */
	double md;		    /* multiplicative decrease: cwnd *= 1 - md */
	simtime_t msg_tolerance;    /* added to the idle-path-set delay; 0 = base RTT, ps */
	simtime_t target_max_delay; /* packet RTT threshold; 0 = 2 x base RTT, ps */
	int partial;		    /* enum mcc_partial: what partial congestion does */
	bool enable;		    /* false: the window stays at init_window */
	bool trace;		    /* a row per acknowledged chunk (qp_trace.csv) */
};

/* Per channel: the window and the chunks in flight. */
struct mcc_chan {
	struct ccl_msg *head, *tail; /* messages not yet all in chunks */
	uint64_t head_off;	     /* bytes of head already in chunks */
	double cwnd;		     /* window, chunks */
	uint32_t inflight;	     /* chunks posted, not acknowledged */
	uint32_t qp_next;	     /* chunks go to the queue pairs in turn */
	simtime_t base_rtt;	     /* queue pair 0's no-queueing RTT, ps */
	simtime_t target_max;	     /* resolved target_max_delay, ps */
	simtime_t tolerance;	     /* resolved msg_tolerance, ps */
	simtime_t last_cut;	     /* chunks posted before it do not cut again */
	simtime_t pkt_max;	     /* largest RTT sample since the last chunk completion */
	bool ready;
	uint64_t n[3];	 /* decisions by quadrant (enum mcc_quadrant) */
	double cwnd_min; /* smallest window since the first decision */
	uint32_t nfree;	 /* free slots on the stack below */
	uint16_t free_slot[MCC_MAX_WINDOW];
	simtime_t slot_target[MCC_MAX_WINDOW]; /* per chunk in flight: target_msg_delay */
	/* per chunk in flight, with several queue pairs: its own pair's unacknowledged
	 * payload at its post (itself included) and the payload posted on the other
	 * pairs until then (cumulative), for what they posted while it was in flight */
	uint64_t slot_own[MCC_MAX_WINDOW], slot_others[MCC_MAX_WINDOW];
};

/* The slides' quadrant: message delay over its target is global congestion,
 * else packet delay over its target is partial congestion, else none. */
enum mcc_quadrant mcc_classify(simtime_t msg_delay, simtime_t target_msg, simtime_t pkt_delay,
			       simtime_t target_max);
/* The window after one acknowledged chunk in quadrant q (cut = whether a cut
 * is allowed: the chunk was posted after the last cut; short = the window is
 * below what keeps the NIC's line rate at the chunk's message delay). */
double mcc_window(const struct mcc_params *p, double cwnd, enum mcc_quadrant q, bool cut,
		  bool short_);

#endif

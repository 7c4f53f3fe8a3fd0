/* cast.h - CAST, congestion-aware queue-pair scheduling in the collective
 * library: Broadcom, "Congestion-Aware Sprayed Traffic Feature: Achieving
 * Congestion-Aware Traffic Distribution Using Standard RoCEv2" (Broadcom
 * white paper, 2025), "the note" below.
 *
 * A ccl scheduler (ccl.h) that measures, per queue pair, the time from
 * posting a send request to the CCL polling its completion, turns those RTTs
 * into scheduler weights, and sizes each queue pair's share of a request by
 * them (weighted stripes, rounded down to 128 B) or, below a split-data
 * minimum or in round-robin mode, hands whole requests to queue pairs by
 * weighted round robin. The pure pieces are exported for tests.
 */
#ifndef MPSIM_CCL_CAST_H
#define MPSIM_CCL_CAST_H

#include <stdbool.h>
#include <stdint.h>

#include "ccl/ccl.h"
#include "core/rng.h"

#define CAST_MAX_QPS 32	    /* queue pairs per channel this scheduler keeps state for */
#define CAST_MAX_STEPS 64   /* requests in flight per channel */
#define CAST_ALIGN 128	    /* sub-chunks are multiples of this (IB_WRITE_CHUNK_ALIGNMENT) */
#define CAST_WRR_TOKENS 100 /* tokens per WRR round (NCCL_IB_TARGET_TOT_TOKENS) */

struct cast_params {
	struct ccl_common common;
	bool enable;		   /* NCCL_IB_QP_SCHED_ENABLE */
	bool split_data;	   /* NCCL_IB_SPLIT_DATA_ON_QPS: stripe (1) or round robin (0) */
	simtime_t reset_interval;  /* NCCL_IB_QP_SCHED_RESET_INTERVAL, ps; 0 = never */
	simtime_t update_interval; /* NCCL_IB_QP_SCHED_UPDATE_INTERVAL, ps */
	double weight;		   /* NCCL_IB_QP_SCHED_WEIGHT: 0 = average estimator */
	uint64_t split_data_min;   /* NCCL_IB_QP_SCHED_SPLIT_DATA_MIN, bytes per QP */
	bool wrr_enable;	   /* NCCL_IB_QP_SCHED_WRR_ENABLE */
	bool jitter_filter;	   /* the note's second weight listing (else the first) */
	simtime_t poll_interval;   /* the CCL polls completions this often, ps */
	simtime_t poll_jitter;	   /* and sees each up to this much later, ps */
	simtime_t min_latency;	   /* subtracted from every RTT sample, ps */
	uint64_t request;	   /* largest request handed to the network plugin; 0 = whole */
	uint64_t steps;		   /* requests in flight per channel (NCCL_STEPS) */
	bool trace;		   /* per-QP rows at every weight update (qp_trace.csv) */
};

/* Per queue pair (NCCL's ncclIbQpTxStats and ncclIbQpTxSched). */
struct cast_qp {
	double est;	     /* the estimate, ps */
	uint64_t tot, n;     /* samples since the last reset: sum (ps) and count */
	uint64_t min_sample; /* the smallest sample ever, ps (min_metric) */
	bool sampled;	     /* est and min_sample hold a sample */
	double w;	     /* scheduler weight */
	uint32_t tokens;     /* WRR tokens per round */
	uint32_t active;     /* WRR tokens left in this round */
	uint64_t bytes;	     /* posted since the last trace row */
	uint64_t whole;	     /* requests posted whole on it (round robin, WRR) */
	uint64_t nsamples;   /* samples ever */
};

/* Per channel (a connection of NCCL's plugin). */
struct cast_chan {
	struct ccl_msg *head, *tail;	     /* messages not yet cut into requests */
	uint64_t head_off;		     /* bytes of head already in requests */
	uint32_t inflight;		     /* requests not yet acknowledged */
	uint32_t slot_parts[CAST_MAX_STEPS]; /* per request slot: parts not acknowledged */
	uint32_t qp_next;		     /* NCCL's qpIndex: next QP of round robin */
	uint32_t wrr_idx;		     /* next QP the WRR looks at */
	uint32_t wrr_left;		     /* WRR tokens left in this round */
	bool init;			     /* weights computed (qpTxSchedInit) */
	bool ready;			     /* lazily set up: rng, poll phase */
	bool update_armed;
	simtime_t next_update, next_reset;
	simtime_t poll_phase;
	uint64_t nupdates;
	struct mp_rng rng;
	struct cast_qp qp[CAST_MAX_QPS];
};

/* Scheduler weights w[0 .. n) from the estimates: the note's first listing
 * (w = (1/est) / sum) or, with jitter_filter, its second (w = 1/((est -
 * min_est) + min_metric) / sum, min_metric that of the QP with the smallest
 * estimate). false, w unchanged, when a denominator is not positive. */
bool cast_weights(const double *est, const uint64_t *min_metric, uint32_t n, bool jitter_filter,
		  double *w);
/* A weighted stripe of `bytes` over n QPs taken in order start, start+1, ...
 * (mod n): sizes[q] for QP q. Each but the last is bytes x w rounded down to
 * CAST_ALIGN; the last takes the rest, so the sizes sum to bytes. */
void cast_stripe(uint64_t bytes, const double *w, uint32_t n, uint32_t start, uint64_t *sizes);
/* NCCL's equal split: pieces of ceil(ceil(bytes/n) / 128) x 128 in QP order
 * from start, the last ones smaller (or empty). */
void cast_split_equal(uint64_t bytes, uint32_t n, uint32_t start, uint64_t *sizes);
/* WRR tokens per round: round(CAST_WRR_TOKENS x w), half up, at least 1. */
void cast_wrr_tokens(const double *w, uint32_t n, uint32_t *tokens);
/* getEffectiveTxNqps's WRR: the next of c's n QPs (from c->wrr_idx on) with
 * a token left in this round; a spent round reloads c->qp[].tokens. */
uint32_t cast_wrr_pick(struct cast_chan *c, uint32_t n);

#endif

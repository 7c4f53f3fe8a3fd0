/* swift.h - Swift's target delay and its reaction to one ACK (swift.c),
 * exposed so a test can check them against hand-computed values. */
#ifndef MPSIM_TRANSPORT_SWIFT_H
#define MPSIM_TRANSPORT_SWIFT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/time.h"

/* The constants (swift_params, resolved); windows in packets. */
struct swift_consts {
	double ai, beta, max_mdf;
	simtime_t base_target;	  /* ps */
	simtime_t h;		  /* per-hop scaling, ps */
	simtime_t fs_range;	  /* ps */
	double fs_alpha, fs_beta; /* ps x sqrt(packets), ps (from fs_range, fs_min/max_cwnd) */
	double min_cwnd, max_cwnd;
};

/* One window (fabric or endpoint) of Algorithm 1. */
struct swift_win {
	double cwnd;		 /* packets, may be below 1 */
	simtime_t last_decrease; /* t_last_decrease, ps */
};

/* fs_alpha and fs_beta for fs_range over [fs_min_cwnd, fs_max_cwnd]. */
void swift_flow_scaling(struct swift_consts *k, double fs_min_cwnd, double fs_max_cwnd);
/* The fabric target delay for a path of `hops` switches at window cwnd:
 * base_target + hops x h + clamp(fs_alpha / sqrt(cwnd) + fs_beta, 0, fs_range). */
simtime_t swift_target(const struct swift_consts *k, unsigned hops, double cwnd);
/* One ACK of `acked` packets with `delay` against `target` at `now`, RTT
 * `rtt`: additive increase below the target, else a multiplicative
 * decrease at most once per RTT; clamped to [min_cwnd, max_cwnd]. */
void swift_react(const struct swift_consts *k, struct swift_win *w, simtime_t delay,
		 simtime_t target, double acked, simtime_t now, simtime_t rtt);

#endif

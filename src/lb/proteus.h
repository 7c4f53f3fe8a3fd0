/* proteus.h - what tests and reports may read of a running Proteus (lb/proteus.c). */
#ifndef MPSIM_LB_PROTEUS_H
#define MPSIM_LB_PROTEUS_H

#include <stdint.h>

#include "net/fabric.h"

/* Counts since the fabric was built. */
struct proteus_counts {
	uint64_t flows;	   /* new flows routed by Algorithm 1 at a source edge */
	uint64_t moves;	   /* running flows moved by Algorithm 1 (the gap rule) */
	uint64_t waits;	   /* packets that met a paused egress and waited (t_td > t_qd) */
	uint64_t reroutes; /* packets rerouted by Algorithm 2 (t_td <= t_qd) */
	uint64_t held;	   /* ... that stayed because their flow had packets queued (in_order) */
	uint64_t stuck;	   /* ... that found no usable alternative */
	uint64_t kicks;	   /* paths marked inactive at a source edge */
	uint64_t probes;   /* probe packets sent */
	uint64_t feedback; /* path states piggybacked back to a source edge */
	simtime_t last_reroute;	   /* when the last Algorithm 2 reroute happened, ps */
	int64_t last_reroute_td;   /* that packet's tolerable delay left, ps */
	simtime_t last_reroute_qd; /* and the queueing delay it predicted, ps */
};

/* NULL when the fabric does not run Proteus. */
const struct proteus_counts *proteus_counts(const struct fabric *f);

/* Path k from edge (ToR index) se to edge de, as the source edge sees it:
 * its one-way base delay, ps; and setting the RTT-level signals it holds, as
 * if the destination edge had fed them back (tests). */
simtime_t proteus_path_delay(struct fabric *f, uint32_t se, uint32_t de, uint32_t k);
void proteus_set_path(struct fabric *f, uint32_t se, uint32_t de, uint32_t k, simtime_t t_pd,
		      double util);
/* The tolerable delay a packet carries, ps (INT64_MAX: none). */
int64_t proteus_tolerable_delay(const struct packet *p);

#endif

/* part.h - one run partitioned over MPI ranks (`mpirun -n N mpsim run FILE`
 * on a file without a sweep), with results byte-identical to one process.
 *
 * Every rank builds the whole experiment (fabric, routes, workload,
 * connections: cheap, and the same on every rank), then owns a partition:
 * nodes (switches, hosts with their NIC ports and the sending side of their
 * connections, the receiving side of those that end there). The fabric is
 * cut along links (part.c: the schemes). A packet that leaves a port whose
 * link is cut becomes a message to the rank of the node it reaches, carrying
 * its bytes and the key its arrival event would have had in one process
 * (the sending port's entity and sequence), so it takes the same place in
 * the order of events there. Ranks advance in conservative windows no wider
 * than the smallest delay of a cut link (the lookahead): each runs its events
 * below the window's end, the ranks exchange what crossed, and agree on the
 * next window's start, the earliest pending event of them all. At the end,
 * what the results read (port counters, connection counters, completion
 * times, time-series rows) goes to rank 0, which writes the same files as a
 * one-process run. DESIGN.md, "One experiment over several ranks".
 */
#ifndef MPSIM_SIM_PART_H
#define MPSIM_SIM_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/time.h"
#include "net/node.h"

struct sim;
struct part_buf;
struct evq;

struct part {
	int rank, nranks;
	uint16_t *owner;       /* per node id: the rank that owns it */
	const char *scheme;    /* how the fabric was cut (part.c) */
	uint32_t cut_links;    /* links whose ends are on two ranks */
	uint64_t lookahead;    /* a window's width, ps */
	uint32_t pkt_bytes;    /* a packet, its load balancer's metadata, its INT record */
	struct part_buf *out;  /* per destination rank: the messages of this window */
	uint64_t windows;      /* windows run */
	uint64_t steps;	       /* rounds of the last stretch (lockstep) */
	uint64_t cut_pkts;     /* packets this rank sent across a cut */
	uint64_t cut_pkts_all; /* ... all ranks (rank 0, after part_gather) */
	double wait_s;	       /* wall time in the window's collectives */
	/* MPSIM_PART_TIMES: wall time running windows (and its CPU time),
	 * exchanging, in the last stretch's lockstep */
	double run_s, run_cpu_s, xchg_s, lock_s;
	bool progress;	       /* --progress: rank 0 reports every 10 s */
	struct evq *shadow;    /* where a queue pair's copied posts schedule (post_arrive) */
	uint32_t *live;	       /* connections received here not yet delivered whole */
	uint32_t nlive, nrecv; /* ... how many, of how many received here */
	/* links that come back up (a lossless fabric's): the windows end at
	 * each time in ups[], and the cut ports whose pause_sent changed since
	 * the last exchange (pfc_dirty, flagged in pfc_flag) send it across */
	struct fabric *fab;
	simtime_t *ups;
	size_t nups, next_up;
	uint32_t *pfc_dirty;
	uint8_t *pfc_flag;
	uint32_t npfc_dirty;
};

/* A node this rank simulates (always, in a one-rank run: p NULL). */
static inline bool part_mine(const struct part *p, const struct node *n)
{
	return !p || p->owner[n->id] == p->rank;
}

/* Under mpirun with several ranks, after sim_build: cut the fabric, keep
 * this rank's events. Errors (MP_EUSER, the same on every rank): what the
 * partitioned run does not support yet, or a zero delay on a cut. */
int part_setup(struct sim *s, struct mp_err *e);
/* The run, window by window, to the point a one-process run stops at. */
void part_run(struct sim *s);
/* What the results read, gathered into rank 0's sim (then sim_collect
 * there as in one process). */
void part_gather(struct sim *s);
void part_free(struct sim *s);
/* Message f's release is this rank's (its sender is here; a marker's
 * src is host 0: every rank releases it, this one counts and reports it). */
bool part_flow_mine(const struct sim *s, uint32_t f);
/* A completion at t that message f, whose sender is on another rank, waited
 * for: sent there with this window's packets. */
void part_dep_send(struct sim *s, uint32_t f, simtime_t t);
/* A completion at t that marker f waits for, to every other rank (each
 * releases its own copy of the marker). */
void part_dep_bcast(struct sim *s, uint32_t f, simtime_t t);

#endif

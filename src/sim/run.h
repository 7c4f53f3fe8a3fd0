/* run.h - one experiment, start to finish: build the fabric, generate the
 * workload, open connections at their start times, run the event loop, and
 * gather per-flow records, network counters and time series.
 *
 * sim/ is the room that puts the others together (see DESIGN.md): it uses
 * core, net, lb, transport, workload, stats and io's experiment description.
 */
#ifndef MPSIM_SIM_RUN_H
#define MPSIM_SIM_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/evq.h"
#include "core/pool.h"
#include "io/experiment.h"
#include "net/fabric.h"
#include "transport/conn.h"
#include "transport/tp_world.h"
#include "stats/result.h"
#include "stats/stats.h"
#include "ccl/ccl.h"
#include "workload/collective.h"

/* The live simulation: exposed so tests can drive it step by step. */
struct sim {
	const struct experiment *x;
	struct evq q;
	struct pool pkts;
	struct fabric fab;
	struct tp_world w;
	struct flow_list flows;
	struct ev_src evs; /* the runner's own events (entity 0) */
	/* the message DAG: per flow, what is left to wait for, its dependants
	 * (CSR: dep_off, dep_to; an entry is a flow id | FLOW_DEP_SENT when it
	 * waits for the sender's completion), and when it was released,
	 * delivered and acknowledged */
	uint32_t *left, *dep_off, *dep_to;
	simtime_t *rel_at, *rx_at, *tx_at;
	simtime_t *dep_last;	 /* per flow: the latest completion it waited for */
	size_t nmarkers_rel;	 /* markers released (partitioned: counted on host 0's rank) */
	struct conn **fconn;	 /* a flow's own connection, or NULL */
	struct ccl_chan **fchan; /* a job message's channel, or NULL */
	uint32_t *conn_flow;	 /* plain connection id -> flow id */
	size_t nflows_done;	 /* flows acknowledged (markers: released) */
	size_t nccl_rx;		 /* messages on queue pairs delivered (partitioned: here) */
	uint32_t rel_base;	 /* the entity of flow 0's release (sim_rel_key) */
	struct ccl ccl;
	struct coll_jobs jobs;
	/* completions of stream connections, handed to the ccl by one event */
	struct pend_msg {
		struct conn *c;
		uint32_t tag;
		bool rx;
	} * pend;
	uint32_t npend, pend_cap;
	bool pend_ev;
	struct ts_buf *ts;
	/* time-series plumbing */
	uint32_t nsamplers;
	struct ts_sampler *samplers;
	bool show_progress;
	bool progress_plain;	    /* one line per report (logs), not a \r-rewritten one */
	const char *progress_label; /* names the sweep point, or NULL */
	double wall_start;
	double progress_last; /* wall clock of the last progress line, s */
	/* a run stopped by a limit it reached while running (the time series
	 * outgrew the memory): MP_EUSER and a sentence; nothing is collected */
	struct mp_err err;
	struct sim_load *load; /* sim/load.c: the window's byte snapshots, or NULL */
	struct part *part;     /* sim/part.c: this rank's partition; NULL in one process */
	/* partitioned, on rank 0 after part_gather: the load balancer's counts
	 * summed over the ranks (sim_collect reads them instead of its own) */
	uint64_t lb_sum[LB_MAX_COUNTERS];
	bool lb_summed;
};

/* A message's release event is the one event of entity s->rel_base + its
 * flow id (sequence 0), not the runner's: its key is then the same
 * whichever rank pushes it, whenever (a partitioned run pushes a release
 * where the message's sender is, sometimes on hearing of a completion from
 * another rank; the runner's own sequence would diverge). rel_base is the
 * first entity above every connection's (the fabric's, the workload's and
 * the collective layer's, all made before the first event), so releases
 * sort after every port's and connection's events of their picosecond, by
 * flow id, and the entity fits the key's 24 bits (evq.h). */
static inline uint64_t sim_rel_key(const struct sim *s, uint32_t flow)
{
	return (uint64_t)(s->rel_base + flow) << EVQ_SEQ_BITS;
}
/* The event that hands the collective layer its queue pairs' completions
 * (run.c, pend_drain): entity 0's last sequence number, a key of its own,
 * the same on every rank, after the runner's other events of its
 * picosecond and before every port's and connection's (as the runner's
 * next sequence number put it once). */
#define SIM_PEND_KEY ((uint64_t)UINT32_MAX)
/* Flow f's dependency on a completion heard at time t (in one process, or
 * from another rank at a window's end): the release is pushed when the last
 * one is in, `delay` after the latest of them. */
void sim_dep_arrive(struct sim *s, uint32_t f, simtime_t t);

/* Build everything (no event has run). Errors: MP_EUSER with file:line. */
int sim_build(struct sim *s, const struct experiment *x, struct mp_err *e);
/* Run to completion (every flow done), stop_time or time_limit. A run that
 * reaches a limit on the way (s->err.status set) is not to be collected:
 * report s->err and write nothing. */
void sim_run(struct sim *s);
/* A hook for fuzz/values.c alone: when nonzero, sim_run handles at most this
 * many events (a fuzz case that goes through `mpsim run`'s own path, sweep
 * points included, stays a fraction of a second). 0, always in mpsim, is no
 * cap. */
extern uint64_t sim_fuzz_max_events;
/* Gather results (call once after sim_run). */
void sim_collect(struct sim *s, struct run_result *r);
void sim_free(struct sim *s);

/* A partitioned run's time-series rows of every rank (n of them, in any
 * order), combined into rank 0's: a group's samples over the ports of every
 * rank, as one process takes them (sim/part.c). */
void sim_ts_combine(struct sim *s, struct ts_row *rows, size_t n);

double sim_wall_now(void);
/* The group (enum port_group, below G_ALL) a port reports in; G_ALL for none. */
int sim_port_group(const struct port *pt);

#endif

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
#include "stats/stats.h"
#include "ccl/ccl.h"
#include "transport/transport.h"
#include "workload/collective.h"

struct flow_rec {
	uint32_t id, src, dst;
	uint32_t job, iter; /* job 0: a flow on its own connection; k: collective job k-1 */
	uint64_t bytes;
	simtime_t start, finish, fct, ideal_fct; /* ps; finish/fct 0 when not completed */
	simtime_t delivered; /* last byte at the receiver (ps; 0 when not yet) */
	double slowdown;     /* fct / ideal_fct */
	uint64_t retx_bytes, sent_bytes, rcvd_bytes, dup_bytes;
	bool completed;
};

struct net_totals {
	uint64_t drops_buffer, drops_link, drops_no_route;
	uint64_t ecn_marks;
	uint64_t pause_frames, resume_frames;
	simtime_t paused_time;	    /* summed over ports, ps */
	uint64_t max_queue_bytes;   /* over all switch ports */
	uint64_t lossless_overflow; /* bytes */
	uint64_t max_buffer_used;   /* bytes, over switches */
	uint64_t tx_bytes;
};

/* One egress port, as ports.csv lists it. */
struct port_rec {
	char name[96]; /* "node-peer" (the port at node, toward peer) */
	uint32_t link; /* link index (parallel links share a name) */
	int group;     /* enum port_group */
	uint64_t rate_bps;
	uint64_t tx_bytes, tx_pkts;
	double utilisation; /* tx_bytes * 8 / (rate * simulated time) */
	uint64_t max_qbytes;
	double mean_qbytes; /* time-weighted */
	uint64_t drops_buffer, drops_link, ecn_marks;
	uint64_t pause_sent, resume_sent, pause_rcvd;
	simtime_t paused_time;
};

/* Ports grouped by their place in the fabric. */
/* The first G_ALL groups partition the ports; "all" (every switch port) and
 * "fabric" (every switch-to-switch port) span several of them. */
enum port_group {
	G_HOST_UP,
	G_LAST_HOP,
	G_T1_UP,
	G_T1_DOWN,
	G_T2_UP,
	G_T2_DOWN,
	G_ALL,
	G_FABRIC,
	G_N
};
extern const char *const port_group_names[]; /* G_N entries, NULL-terminated */

struct group_totals {
	uint32_t nports;
	uint64_t tx_bytes;
	double utilisation; /* mean over the group's ports */
	uint64_t max_qbytes;
	double mean_qbytes; /* mean over ports of each port's time-weighted mean */
	uint64_t drops, ecn_marks, pauses;
};

/* One iteration of one collective job. */
struct coll_rec {
	uint32_t job, iter, nranks;
	uint64_t size;		 /* bytes per rank buffer */
	simtime_t start, finish; /* first message posted, last byte delivered (ps) */
	simtime_t cct;		 /* finish - start; 0 when not completed */
	double algbw, busbw;	 /* bit/s, NCCL-tests conventions */
	bool completed;
};

struct run_result {
	struct port_rec *ports;
	size_t nports;
	struct group_totals groups[G_N];
	struct flow_rec *flows;
	size_t nflows, ncompleted;
	bool dag; /* the flows had dependencies or collective jobs */
	struct coll_rec *colls;
	size_t ncolls;
	char *qp_trace; /* the ccl scheduler's per-QP trace (CSV), NULL = none */
	size_t qp_trace_len;
	struct net_totals net;
	struct ts_buf ts;
	simtime_t sim_end; /* simulated time when the run stopped, ps */
	uint64_t events;
	uint64_t events_peak_pending;
	double wall_s;
	uint64_t peak_rss, peak_heap;
	uint64_t pkt_pool_peak;
	uint32_t nhosts, nswitches, nlinks;
	/* out-of-order degree over data packets the receivers noted (UDMP,
	 * MP-RDMA); NAN when the transport notes none */
	double ood_p99, ood_max;
};

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
	struct conn **fconn;	 /* a flow's own connection, or NULL */
	struct ccl_chan **fchan; /* a job message's channel, or NULL */
	uint32_t *conn_flow;	 /* plain connection id -> flow id */
	size_t nflows_done;	 /* flows acknowledged (markers: released) */
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
	double wall_start;
	uint64_t progress_next;
};

/* Build everything (no event has run). Errors: MP_EUSER with file:line. */
int sim_build(struct sim *s, const struct experiment *x, struct mp_err *e);
/* Run to completion (every flow done), stop_time or time_limit. */
void sim_run(struct sim *s);
/* Gather results (call once after sim_run). */
void sim_collect(struct sim *s, struct run_result *r);
void sim_free(struct sim *s);
void run_result_free(struct run_result *r);

double sim_wall_now(void);

#endif

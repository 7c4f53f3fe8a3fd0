/* result.h - the records a finished run hands over: one per flow, per egress
 * port, per collective iteration, the network's totals and the time series.
 *
 * They live in stats/ so that both the room that fills them (sim/run.c) and
 * the room that writes and tabulates them (io/results.c, io/metrics.c) read
 * them from below; neither reaches into the other (DESIGN.md).
 * Times are integer picoseconds, sizes bytes, rates bit/s.
 */
#ifndef MPSIM_STATS_RESULT_H
#define MPSIM_STATS_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/time.h"
#include "stats/stats.h"

struct flow_rec {
	uint32_t id, src, dst;
	uint32_t job, iter; /* job 0: a flow on its own connection; k: collective job k-1 */
	uint64_t bytes;
	simtime_t start, finish, fct, ideal_fct; /* ps; finish/fct 0 when not completed */
	simtime_t delivered; /* last byte at the receiver (ps; 0 when not yet) */
	double slowdown;     /* fct / ideal_fct */
	uint64_t retx_bytes, sent_bytes, rcvd_bytes, dup_bytes;
	/* PFC (output.pfc_counters): time any of its data packets waited behind a
	 * switch port paused by PFC (the union, ps); HoL-blocked when that exceeds
	 * output.hol_fraction of its FCT (or of the run, not completed) */
	simtime_t blocked;
	bool hol;
	/* data packets its receiver got (first copies) and those of them that
	 * arrived below a PSN already seen (reordered) */
	uint64_t data_pkts, reordered;
	/* a collective's message on its channel's queue pairs, which carry many
	 * messages: its PFC counters are the queue pairs' (run_result's qp_*),
	 * not its own, and flows.csv leaves them empty */
	bool on_qps;
	bool completed;
	bool measured; /* it starts within output.fct_from / fct_until: FCT statistics count it */
};

struct net_totals {
	uint64_t drops_buffer, drops_link, drops_no_route;
	uint64_t trimmed, trimmed_bytes; /* switch.trim: packets cut to headers, bytes cut */
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
	uint64_t trimmed, trimmed_bytes; /* switch.trim: packets cut to headers, bytes cut */
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

/* An open-loop workload's load, offered and measured (sim/load.c says
 * precisely how), over its statistics window [from, until). All loads are
 * fractions of capacity; NAN where the fabric has no such ports. */
struct load_rec {
	bool valid;	       /* the workload offers a load and the window is not empty */
	simtime_t from, until; /* ps */
	double nominal;	       /* the workload's load, of each source host's link */
	double arrived;	       /* what the flows that arrived in the window offered */
	double host;	       /* measured on the source hosts' links */
	double fabric;	       /* measured on the busiest switch-to-switch tier */
	int fabric_group;      /* enum port_group of that tier, -1 = none */
	double fabric_implied; /* what `nominal` offers the ToRs' uplinks */
	bool low;	       /* fabric is more than 15% below fabric_implied */
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

/* One activity of a training workload (chakra, simai): a rank's compute
 * phase or its part in one collective or point-to-point exchange, as it ran.
 * `exposed` (communication only): the part of [start, end) during which the
 * rank computed nothing and that no earlier-starting communication of the
 * rank already counted (so a rank's exposed times add up to the time it
 * spent waiting for the network alone). */
struct train_rec {
	uint32_t rank, iter;
	uint32_t layer_ix;	  /* the layer's (or trace node's) place in the workload */
	const char *layer, *what; /* names (run_result.train_names); what: "" for compute */
	const char *phase;	  /* "forward", "input_grad", "weight_grad", "node" */
	bool comm;
	simtime_t start, end, exposed; /* ps */
	simtime_t peers; /* a collective: from start until its last member reached it (ps) */
};

/* The iteration as a whole (stats/training.c: train_summarise). */
struct train_summary {
	uint32_t ranks, iters;
	simtime_t *iter_end; /* per iteration: when its last activity ended (ps) */
	simtime_t iteration; /* mean of the iterations' times (ps) */
	uint32_t slowest;    /* of the ranks whose last activity ended last, the one that
			      * waited least for its peers (the lowest of equals) */
	size_t waited;	     /* the record of the slowest rank's largest exposed
			       * communication (SIZE_MAX: none) */
	simtime_t compute, comm, exposed; /* the slowest rank's totals (ps) */
};

/* The load balancer's counts of its decisions (net/lb.h's counters; sim/run.c
 * checks that RES_LB_MAX is LB_MAX_COUNTERS). */
#define RES_LB_MAX 12
struct lb_rec {
	const char *scheme; /* NULL: the scheme counts nothing */
	unsigned n;
	const char *name[RES_LB_MAX];
	uint64_t v[RES_LB_MAX];
};

struct run_result {
	struct port_rec *ports;
	size_t nports;
	struct group_totals groups[G_N];
	struct flow_rec *flows;
	size_t nflows, ncompleted;
	size_t nmeasured;  /* flows with `measured` (all of them without a window) */
	bool pfc_counters; /* blocked and hol were tracked (flows.csv lists them) */
	bool dag;	   /* the flows had dependencies or collective jobs */
	/* over every collective queue pair (whole run): data packets received
	 * (first copies) and those that arrived reordered */
	uint64_t qp_data_pkts, qp_reordered;
	struct coll_rec *colls;
	size_t ncolls;
	char *qp_trace; /* the ccl scheduler's per-QP trace (CSV), NULL = none */
	size_t qp_trace_len;
	/* a training workload's activities (none for other workloads), sorted by
	 * (rank, start); the names they point into */
	struct train_rec *train;
	size_t ntrain;
	char **train_names;
	size_t ntrain_names;
	struct train_summary training;
	struct net_totals net;
	struct lb_rec lb;
	struct load_rec load;
	struct ts_buf ts;
	simtime_t sim_end; /* simulated time when the run stopped, ps */
	uint64_t events;
	uint64_t events_peak_pending;
	double wall_s;
	uint64_t peak_rss, peak_heap;
	uint64_t pkt_pool_peak;
	uint32_t nhosts, nswitches, nlinks;
	/* the run's ranks (1: one process) and, partitioned, how (sim/part.c) */
	struct part_rec {
		uint32_t ranks;
		bool threads;	    /* the ranks were threads (--threads), not MPI's */
		char scheme[16];    /* how the fabric was cut */
		uint32_t cut_links; /* links with their ends on two ranks */
		uint64_t lookahead; /* a window's width, ps */
		uint64_t windows, lockstep_rounds, cut_pkts;
		double wait_s; /* rank 0's wall time in the windows' collectives */
	} part;
	/* out-of-order degree over data packets the receivers noted (UDMP,
	 * MP-RDMA); NAN when the transport notes none */
	double ood_p99, ood_max;
};

void run_result_free(struct run_result *r);
/* Sort r->train, fill each record's `exposed` and r->training (nothing when
 * there are no records). */
void train_summarise(struct run_result *r);
/* The sentence for a load_rec with `low` set (summary.json, stderr,
 * report.html): how far the fabric fell short and what to lengthen. */
void load_warning(const struct load_rec *l, char *buf, size_t n);

#endif

/* experiment.h - an experiment file, checked and resolved.
 *
 * Top-level keys (each section is checked against its own option table):
 *   name, seed, stop_time       general (table exp_general_opts)
 *   topology: {type: ..., ...}  a topology from topo_registry and its options
 *   switch:   {...}             swcfg_opts (buffer, ECN, PFC)
 *   lb:       {type: ecmp|...}  a switch load balancer
 *   transport:{type: ref|...}   a host transport and its options
 *   workload: {type: ...}       a workload generator and its options (optional
 *                               when there is a collective section)
 *   collective: {...}           collective jobs (workload/collective.h)
 *   ccl: {type: rr|stripe|...}  the collective layer's queue pairs and scheduler
 *   server:   {gpus, rate, latency}  GPUs per server and their intra-node fabric
 *   failures: {...}             links down from t=0 (random per tier, or named)
 *   events:   [{at, link|node, action, value}, ...]  link and switch changes during the run
 *   output:   {...}             time series and what to record
 *   sweep:    {key: [v, ...]}   run every combination (io/sweep.h)
 *   paper:    {source, values}  a paper's numbers to print beside ours
 * Loading stops at the first problem with "file:line: key: expected ..." and
 * status MP_EUSER; nothing is built or written.
 */
#ifndef MPSIM_IO_EXPERIMENT_H
#define MPSIM_IO_EXPERIMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/err.h"
#include "core/opt.h"
#include "io/cfg.h"
#include "net/lb.h"
#include "net/switch.h"
#include "transport/transport.h"
#include "net/topo.h"
#include "ccl/ccl.h"
#include "workload/collective.h"
#include "workload/workload.h"

/* Longest `name:` (it names the results folder; with mpsim's .partial-PID
 * and .old-PID suffixes it stays under the 255 of a file name). */
#define EXP_NAME_MAX 200

struct exp_general {
	char *name;
	uint64_t seed;
	simtime_t stop_time;  /* 0 = run until every flow completes */
	simtime_t time_limit; /* safety net: stop here even if flows remain */
};

enum link_action { LINK_DOWN, LINK_UP, LINK_RATE, LINK_DELAY, LINK_LOSS, LINK_PROC_DELAY };

struct exp_failures {
	uint64_t random_tier1;	  /* leaf-spine / edge-agg links down at t=0, chosen at random */
	uint64_t random_tier2;	  /* agg-core links down at t=0 */
	uint64_t tier1_switches;  /* random_tier1 spread evenly over this many switches */
	struct opt_strlist links; /* named links down at t=0 */
	double loss_rate;	  /* per-packet loss on every fabric (switch-switch) link */
	double host_loss_rate;	  /* per-packet loss on every host link */
};

struct exp_event {
	simtime_t at;
	char *link;   /* a link "a-b" (both directions), or "" */
	char *node;   /* a node: every link of it, or "" */
	int action;   /* enum link_action */
	char *value;  /* as written; parsed per action */
	uint64_t u;   /* parsed rate (bit/s) or delay (ps) */
	double d;     /* parsed loss rate */
	bool one_way; /* link only: just the first-named node's port toward the other */
	int line;
};

struct exp_output {
	simtime_t interval;		/* time-series sampling interval, 0 = off */
	struct opt_strlist queues;	/* "max:<group>" or a directed link "a-b" */
	struct opt_strlist utilisation; /* "<group>" */
	struct opt_strlist pauses;	/* "<group>": PAUSE frames sent per interval */
	struct opt_strlist drops;	/* "<group>": drops per interval */
	bool flow_throughput;		/* per-flow throughput series */
	uint64_t flow_throughput_max;	/* at most this many flows get a series */
	bool traces;			/* per-connection cwnd, rate, RTT, path series */
	uint64_t traces_max;		/* at most this many connections are traced */
	double convergence_band;	/* the convergence metric's tolerance */
	double convergence_jain;	/* convergence_jain's floor of Jain's index */
	uint64_t settle_queue;		/* the queue_settle metric's threshold, bytes */
	bool progress;			/* a progress line on a terminal */
	struct opt_strlist paused;	/* "<group>" or "a-b": fraction of each interval paused */
	struct opt_strlist ingress;	/* "a-b": bytes in a's buffer that came in from b */
	bool pfc_counters;		/* per-flow HoL-blocked time and reordered packets */
	double hol_fraction;	       /* HoL-blocked: blocked more than this fraction of its FCT */
	simtime_t fct_from, fct_until; /* FCT statistics: flows started in [from, until) */
	bool timeline;		       /* a training workload's timeline.json */
	uint64_t timeline_events;      /* at most this many events in it */
};

struct experiment {
	struct cfg_doc doc;
	struct exp_general gen;
	const struct topo_ops *topo;
	void *topo_params;
	struct swcfg sw;
	const struct lb_ops *lb;
	void *lb_params;
	const struct transport_ops *tp;
	void *tp_params;
	const struct workload_ops *wl; /* NULL: collectives only */
	void *wl_params;
	struct coll_params *coll; /* NULL: no collective section */
	const struct ccl_sched_ops *ccl;
	void *ccl_params;
	struct intra_cfg server;
	struct exp_failures fail;
	struct exp_event *events;
	size_t nevents;
	struct exp_output out;
};

extern const struct opt_desc exp_general_opts[], exp_failures_opts[], exp_output_opts[];

/* Load and check `path`, applying `sets` ("a.b=value") and, when seed_override
 * is non-negative, the seed. */
int exp_load(struct experiment *x, const char *path, char *const *sets, size_t nsets,
	     int64_t seed_override, struct mp_err *e);
/* The same for point `point` of sweep `sw` (see io/sweep.h; NULL = none). */
struct sweep;
int exp_load_point(struct experiment *x, const char *path, char *const *sets, size_t nsets,
		   int64_t seed_override, const struct sweep *sw, size_t point, struct mp_err *e);
int exp_load_string(struct experiment *x, const char *text, const char *name, struct mp_err *e);
void exp_free(struct experiment *x);

/* What the run's traffic is, for tables: "permutation", "collective
 * allreduce/ring", "poisson + collective alltoall". */
void exp_workload_name(const struct experiment *x, char *buf, size_t n);

/* The effective configuration (every option of every section, resolved) as YAML. */
void exp_write_effective(FILE *f, const struct experiment *x);

/* Report a problem found while building (topology, workload, events). A
 * message "key: rest" names a key of `section` and points at that key's line
 * (or "--set section.key" when the value came from the command line); any
 * other message points at the section. */
int exp_errf(struct mp_err *e, const struct experiment *x, const char *section, const char *fmt,
	     ...) __attribute__((format(printf, 4, 5)));

/* The same for a message already in e (from a scheme's check or generator). */
int exp_reraise(struct mp_err *e, const struct experiment *x, const char *section);

#endif

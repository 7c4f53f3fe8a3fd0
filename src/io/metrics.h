/* metrics.h - the named figures of one run that sweeps tabulate and that an
 * experiment's `paper:` section compares with a paper's numbers.
 *
 * Every metric is a double in a fixed unit (time in ps, sizes in bytes, rates
 * in bit/s); NAN when the run cannot give it (e.g. no completed flow, or
 * convergence without per-flow throughput series).
 */
#ifndef MPSIM_IO_METRICS_H
#define MPSIM_IO_METRICS_H

#include <stdio.h>

#include "stats/result.h"

enum metric_kind { MK_TIME, MK_BYTES, MK_RATE, MK_COUNT, MK_RATIO };

enum metric_id {
	M_FLOWS,
	M_COMPLETED,
	M_MEAN_FCT,
	M_P50_FCT,
	M_P99_FCT,
	M_MAX_FCT,
	M_MEAN_SLOWDOWN,
	M_P99_SLOWDOWN,
	M_MAX_SLOWDOWN,
	M_GOODPUT,
	M_DROPS,
	M_RETX_BYTES,
	M_ECN_MARKS,
	M_PAUSE_FRAMES,
	M_PAUSED_TIME,
	M_MAX_QUEUE,
	M_MAX_QUEUE_LAST_HOP,
	M_MAX_QUEUE_FABRIC,
	M_MEAN_TPUT,
	M_P99_TPUT,
	M_P99_OOD,
	M_MAX_OOD,
	M_CONVERGENCE,
	M_CONVERGENCE_JAIN,
	M_QUEUE_SETTLE,
	M_QUEUE_DRAIN,
	M_CCT_MEAN,
	M_CCT_P50,
	M_CCT_MAX,
	M_BUSBW_MIN,
	M_BUSBW_MEAN,
	M_HOL_FLOWS,
	M_REORDERED,
	M_REORDER_RATIO,
	M_LOAD_HOST,
	M_LOAD_FABRIC,
	M_ITERATION,
	M_EXPOSED_COMM,
	M_N
};

struct metric_def {
	const char *name;
	enum metric_kind kind;
	const char *help;
};
extern const struct metric_def metric_defs[M_N];

/* Index of `name`, or -1. */
int metric_find(const char *name);
/* Fill v[M_N] from a finished run; `band` is the convergence tolerance
 * (output.convergence_band), `jain` the convergence_jain floor
 * (output.convergence_jain), `settle` the queue_settle threshold in bytes
 * (output.settle_queue; 0 = not asked). */
void metrics_compute(const struct run_result *r, double band, double jain, uint64_t settle,
		     double v[M_N]);
/* A value in the unit people read (us, MB, Gb/s, plain), for tables. */
double metric_display(enum metric_id m, double v);
const char *metric_unit(enum metric_id m);
/* Parse a paper's value written with a unit ("7.8ms", "2MB", "95Gbps", "1.3")
 * into the metric's base unit; -1 when it does not parse. */
int metric_parse(enum metric_id m, const char *text, double *out);

#endif

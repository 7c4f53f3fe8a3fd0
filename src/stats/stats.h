/* stats.h - summaries of samples (percentiles), and time series rows.
 * Percentiles are nearest-rank: p-th percentile of n sorted samples is the
 * sample at rank ceil(p/100 * n) (1-based), so p100 is the max and every
 * reported value is one that was measured. */
#ifndef MPSIM_STATS_STATS_H
#define MPSIM_STATS_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "core/time.h"

struct dist_summary {
	size_t n;
	double mean, min, p50, p90, p99, p999, max;
};

/* Sorts v in place. n may be 0 (all fields 0). */
void stats_summarize(double *v, size_t n, struct dist_summary *out);
double stats_percentile_sorted(const double *v, size_t n, double p);

struct ts_row {
	simtime_t t;	 /* ps */
	uint32_t series; /* index into ts_buf names */
	double value;
};

/* Rows grow by doubling; with max_rows set (0 = none) the buffer never holds
 * more, and a row past it is counted in `over` and dropped (the runner stops
 * the run and says so: sim/run.c). */
struct ts_buf {
	struct ts_row *rows;
	size_t n, cap, max_rows;
	size_t over;
	char **names;
	uint32_t nnames;
};

uint32_t ts_series(struct ts_buf *b, const char *name);
void ts_push(struct ts_buf *b, simtime_t t, uint32_t series, double value);
void ts_free(struct ts_buf *b);

#endif

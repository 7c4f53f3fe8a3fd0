/* cdf.h - flow-size distributions given as CDF tables, for Poisson workloads.
 *
 * A table is a list of points (size in bytes, cumulative probability), one a
 * line, whitespace-separated, in one of three dialects (see
 * data/workloads/README.md): F-pct (0..100), F-frac (0..1) and F-frac-step
 * (F-frac with repeated sizes = point masses, repeated probabilities = flat
 * segments, a first row that may start above size 0). Sampling inverts the
 * CDF with linear interpolation in size between neighbouring points, as
 * HPCC's and ConWeave's traffic_gen.py do; cdf_mean() is the exact mean of
 * that same distribution, so a load calibrated with it is the load sampled.
 */
#ifndef MPSIM_WORKLOAD_CDF_H
#define MPSIM_WORKLOAD_CDF_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/rng.h"

enum cdf_format {
	CDF_AUTO = 0,	  /* percent when the last value is 100, fraction when it is 1 */
	CDF_PERCENT = 1,  /* cumulative column runs 0..100 */
	CDF_FRACTION = 2, /* cumulative column runs 0..1 */
};

struct cdf_point {
	double bytes; /* flow size, bytes, >= 0 */
	double p;     /* cumulative probability as a fraction, 0..1 */
};

struct cdf {
	struct cdf_point *pt;	/* sizes and p both non-decreasing; pt[n-1].p == 1 */
	size_t n;		/* >= 2 */
	enum cdf_format format; /* the dialect found (CDF_PERCENT or CDF_FRACTION) */
};

/* Load a table. Errors (MP_EUSER) read "<path>:<line>: expected ...". */
int cdf_load(struct cdf *c, const char *path, const char *base_dir, enum cdf_format fmt,
	     struct mp_err *e);
/* The same from text in memory; `name` stands for the file in messages. */
int cdf_parse(struct cdf *c, const char *text, const char *name, enum cdf_format fmt,
	      struct mp_err *e);
void cdf_free(struct cdf *c);

/* Exact mean (bytes) of the linearly interpolated distribution: the first
 * point's probability sits at its size, each later segment contributes its
 * probability times its midpoint. (The 1-byte clamp of cdf_sample is ignored:
 * it only matters for tables with mass between 0 and 0.5 byte.) */
double cdf_mean(const struct cdf *c);

/* Inverse CDF at u in [0,1): linear in size inside a segment; u below the
 * first point's probability gives the first size. Not rounded. */
double cdf_quantile(const struct cdf *c, double u);

/* One flow size: cdf_quantile(u ~ U[0,1) from r), rounded to the nearest
 * byte, at least 1 byte (HPCC clamps sizes <= 0 to 1 the same way). */
uint64_t cdf_sample(const struct cdf *c, struct mp_rng *r);

#endif

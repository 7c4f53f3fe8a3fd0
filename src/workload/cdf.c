/* cdf.c - flow-size CDF tables: parsing the three dialects, the mean, and
 * inverse-transform sampling. See cdf.h and data/workloads/README.md.
 *
 * Owns: struct cdf. Invariants after a successful load: n >= 2, sizes and
 * probabilities non-decreasing, every value >= 0, the last probability is
 * exactly 1.0 (the column is divided by its scale, 1 or 100).
 *
 * Follows the sampling convention of HPCC's traffic_gen/custom_rand.py and
 * ConWeave's copy of it: u ~ U(0,1), find the segment whose cumulative values
 * bracket u, interpolate the size linearly. Unlike that loader (which demands
 * a first point at 0 and strictly increasing columns), repeated sizes (a point
 * mass: a vertical step) and repeated probabilities (a flat segment with no
 * mass) are accepted, and a first point above 0 carries its probability as a
 * point mass at its size.
 */
#include "workload/cdf.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "workload/workload.h"

/* Strict non-negative decimal: digits, optional fraction, optional exponent
 * ("4000", "0.15", "30.0", "1e6"). Returns 0, or -1 when malformed, -2 when
 * negative. No hex, inf, nan or trailing garbage. */
static int parse_number(const char *t, double *v)
{
	const char *s = t;
	int digits = 0;

	if (*s == '-')
		return -2;
	if (*s == '+')
		s++;
	while (isdigit((unsigned char)*s)) {
		s++;
		digits++;
	}
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s)) {
			s++;
			digits++;
		}
	}
	if (!digits)
		return -1;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!isdigit((unsigned char)*s))
			return -1;
		while (isdigit((unsigned char)*s))
			s++;
	}
	if (*s)
		return -1;
	*v = strtod(t, NULL);
	if (!isfinite(*v))
		return -1;
	return 0;
}

static int bad(struct mp_err *e, const char *name, int line, const char *what, const char *tok)
{
	if (tok)
		return mp_errf(e, MP_EUSER, "%s:%d: expected %s, found '%s'", name, line, what,
			       tok);
	return mp_errf(e, MP_EUSER, "%s:%d: expected %s", name, line, what);
}

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * b;
}

int cdf_parse(struct cdf *c, const char *text, const char *name, enum cdf_format fmt,
	      struct mp_err *e)
{
	char *buf = mp_strdup(text), *cur = buf, *line;
	struct cdf_point *pt = NULL;
	size_t n = 0, cap = 0;
	int lineno = 0, last_line = 0, rc;
	double scale;

	memset(c, 0, sizeof(*c));
	while ((line = workload_next_line(&cur))) {
		char *tcur = line, *xs, *ys, *extra;
		double x, y;

		lineno++;
		if (!line[0] || line[0] == '#')
			continue;
		xs = workload_next_token(&tcur);
		ys = workload_next_token(&tcur);
		extra = workload_next_token(&tcur);
		if (!ys) {
			rc = bad(e, name, lineno,
				 "two columns: <size in bytes> <cumulative probability>", NULL);
			goto fail;
		}
		if (extra) {
			rc = bad(e, name, lineno,
				 "two columns (size, cumulative probability), not a third", extra);
			goto fail;
		}
		rc = parse_number(xs, &x);
		if (rc) {
			rc = bad(e, name, lineno,
				 rc == -2 ? "a non-negative size" : "a size in bytes (a number)",
				 xs);
			goto fail;
		}
		if (x > 1e15) {
			rc = bad(e, name, lineno, "a size of at most 1e15 bytes", xs);
			goto fail;
		}
		rc = parse_number(ys, &y);
		if (rc) {
			rc = bad(e, name, lineno,
				 rc == -2 ? "a non-negative cumulative probability"
					  : "a cumulative probability (a number)",
				 ys);
			goto fail;
		}
		if (n && x < pt[n - 1].bytes) {
			rc = bad(e, name, lineno, "sizes in non-decreasing order", xs);
			goto fail;
		}
		if (n && y < pt[n - 1].p) {
			rc = bad(e, name, lineno,
				 "cumulative probabilities in non-decreasing order", ys);
			goto fail;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			pt = mp_realloc(pt, cap * sizeof(*pt));
		}
		pt[n++] = (struct cdf_point){ .bytes = x, .p = y };
		last_line = lineno;
	}
	if (n < 2) {
		rc = mp_errf(e, MP_EUSER,
			     "%s:%d: expected at least 2 points (size, cumulative "
			     "probability), found %zu",
			     name, lineno ? lineno : 1, n);
		goto fail;
	}

	/* The dialect: from the last value, unless forced. */
	scale = pt[n - 1].p;
	if (fmt == CDF_AUTO) {
		if (near(scale, 100.0)) {
			fmt = CDF_PERCENT;
		} else if (near(scale, 1.0)) {
			fmt = CDF_FRACTION;
		} else {
			rc = mp_errf(e, MP_EUSER,
				     "%s:%d: expected the last cumulative probability "
				     "to be 1 (fraction) or 100 (percent), found %g",
				     name, last_line, scale);
			goto fail;
		}
	} else if (fmt == CDF_PERCENT && !near(scale, 100.0)) {
		rc = mp_errf(e, MP_EUSER,
			     "%s:%d: expected the last cumulative probability to be "
			     "100 (percent table), found %g",
			     name, last_line, scale);
		goto fail;
	} else if (fmt == CDF_FRACTION && !near(scale, 1.0)) {
		rc = mp_errf(e, MP_EUSER,
			     "%s:%d: expected the last cumulative probability to be "
			     "1 (fraction table), found %g",
			     name, last_line, scale);
		goto fail;
	}
	scale = fmt == CDF_PERCENT ? 100.0 : 1.0;
	for (size_t i = 0; i < n; i++)
		pt[i].p /= scale;
	pt[n - 1].p = 1.0;

	mp_free(buf);
	c->pt = pt;
	c->n = n;
	c->format = fmt;
	return MP_OK;
fail:
	mp_free(pt);
	mp_free(buf);
	return rc;
}

int cdf_load(struct cdf *c, const char *path, const char *base_dir, enum cdf_format fmt,
	     struct mp_err *e)
{
	char *text;
	size_t len;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = workload_read_file(path, base_dir, &text, &len, e);
	if (rc)
		return rc;
	rc = cdf_parse(c, text, path, fmt, e);
	mp_free(text);
	return rc;
}

void cdf_free(struct cdf *c)
{
	mp_free(c->pt);
	c->pt = NULL;
	c->n = 0;
}

double cdf_mean(const struct cdf *c)
{
	const struct cdf_point *p = c->pt;
	double m = p[0].p * p[0].bytes;

	for (size_t i = 1; i < c->n; i++)
		m += (p[i].p - p[i - 1].p) * 0.5 * (p[i].bytes + p[i - 1].bytes);
	return m;
}

double cdf_quantile(const struct cdf *c, double u)
{
	const struct cdf_point *p = c->pt;
	size_t lo = 0, hi = c->n;

	/* First point whose probability exceeds u. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p[mid].p > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0)
		return p[0].bytes;
	if (lo == c->n)
		return p[c->n - 1].bytes;
	/* p[lo-1].p <= u < p[lo].p, so the segment has mass: no 0/0. */
	return p[lo - 1].bytes +
	       (p[lo].bytes - p[lo - 1].bytes) * (u - p[lo - 1].p) / (p[lo].p - p[lo - 1].p);
}

uint64_t cdf_sample(const struct cdf *c, struct mp_rng *r)
{
	double x = cdf_quantile(c, rng_u01(r));

	/* Nearest byte (HPCC truncates with int(); rounding keeps the sample mean
	 * on cdf_mean), then HPCC's clamp to at least 1 byte. */
	x = floor(x + 0.5);
	if (x < 1.0)
		return 1;
	return (uint64_t)x;
}

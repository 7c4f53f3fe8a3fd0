/* stats.c - nearest-rank percentiles and the time-series buffer. */
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double stats_percentile_sorted(const double *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	size_t rank = (size_t)ceil(p / 100.0 * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

void stats_summarize(double *v, size_t n, struct dist_summary *out)
{
	memset(out, 0, sizeof *out);
	out->n = n;
	if (n == 0)
		return;
	qsort(v, n, sizeof *v, cmp_double);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	out->mean = sum / (double)n;
	out->min = v[0];
	out->max = v[n - 1];
	out->p50 = stats_percentile_sorted(v, n, 50);
	out->p90 = stats_percentile_sorted(v, n, 90);
	out->p99 = stats_percentile_sorted(v, n, 99);
	out->p999 = stats_percentile_sorted(v, n, 99.9);
}

uint32_t ts_series(struct ts_buf *b, const char *name)
{
	for (uint32_t i = 0; i < b->nnames; i++)
		if (strcmp(b->names[i], name) == 0)
			return i;
	b->names = mp_realloc(b->names, (b->nnames + 1) * sizeof *b->names);
	b->names[b->nnames] = mp_strdup(name);
	return b->nnames++;
}

void ts_push(struct ts_buf *b, simtime_t t, uint32_t series, double value)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		if (b->max_rows && cap > b->max_rows)
			cap = b->max_rows;
		if (cap <= b->n) {
			b->over++;
			return;
		}
		b->cap = cap;
		b->rows = mp_realloc(b->rows, b->cap * sizeof *b->rows);
	}
	b->rows[b->n++] = (struct ts_row){ .t = t, .series = series, .value = value };
}

void ts_free(struct ts_buf *b)
{
	for (uint32_t i = 0; i < b->nnames; i++)
		mp_free(b->names[i]);
	mp_free(b->names);
	mp_free(b->rows);
	memset(b, 0, sizeof *b);
}

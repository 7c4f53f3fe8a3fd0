/* training.c - a training workload's activities summarised: each
 * communication's exposed time, the iterations' times and the slowest rank.
 *
 * Owns: train_summarise (declared in result.h).
 *
 * Exposed communication follows the usual definition of training profilers
 * (and SimAI's report, which counts the time a rank waits for a collective):
 * time a rank spends in communication while it computes nothing. Per rank,
 * the compute intervals are merged into a union with prefix sums of its
 * length; communications in order of start each count what lies beyond the
 * furthest end an earlier one reached, less the compute union over it.
 */
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "stats/result.h"

static int train_cmp(const void *a, const void *b)
{
	const struct train_rec *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->comm != y->comm)
		return x->comm ? 1 : -1;
	if (x->iter != y->iter) /* the rest: one order for any input order */
		return x->iter < y->iter ? -1 : 1;
	if (x->layer_ix != y->layer_ix)
		return x->layer_ix < y->layer_ix ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	int c = strcmp(x->phase, y->phase);
	return c ? c : strcmp(x->what, y->what);
}

/* The compute union's length before time t: lo[k], hi[k] merged intervals,
 * pre[k] the length of intervals 0 .. k-1. */
static simtime_t covered(const simtime_t *lo, const simtime_t *hi, const simtime_t *pre, size_t n,
			 simtime_t t)
{
	size_t a = 0, b = n;
	while (a < b) { /* the first interval starting at or after t */
		size_t m = a + (b - a) / 2;
		if (lo[m] < t)
			a = m + 1;
		else
			b = m;
	}
	if (!a)
		return 0;
	simtime_t end = hi[a - 1] < t ? hi[a - 1] : t;
	return pre[a - 1] + (end - lo[a - 1]);
}

/* The exposed time of rank records v[0 .. n) (sorted by start). */
static void rank_exposed(struct train_rec *v, size_t n)
{
	simtime_t *lo = mp_malloc((n + 1) * sizeof *lo), *hi = mp_malloc((n + 1) * sizeof *hi),
		  *pre = mp_malloc((n + 1) * sizeof *pre), reach = 0;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (v[i].comm || v[i].end <= v[i].start)
			continue;
		if (m && v[i].start <= hi[m - 1]) {
			if (v[i].end > hi[m - 1])
				hi[m - 1] = v[i].end;
			continue;
		}
		lo[m] = v[i].start;
		hi[m] = v[i].end;
		m++;
	}
	for (size_t k = 0; k < m; k++)
		pre[k] = k ? pre[k - 1] + (hi[k - 1] - lo[k - 1]) : 0;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].comm)
			continue;
		simtime_t a = v[i].start > reach ? v[i].start : reach, b = v[i].end;
		v[i].exposed = 0;
		if (b > a)
			v[i].exposed =
			    (b - a) - (covered(lo, hi, pre, m, b) - covered(lo, hi, pre, m, a));
		if (b > reach)
			reach = b;
	}
	mp_free(lo);
	mp_free(hi);
	mp_free(pre);
}

/* The slowest rank: of the ranks whose last activity ended last (a
 * collective at the end makes them many), the one that waited least for its
 * peers, the straggler the others waited for (the lowest of equals); its
 * totals and its largest exposed communication. */
static void slowest_rank(struct run_result *r, simtime_t last)
{
	struct train_summary *t = &r->training;
	simtime_t *end = mp_calloc(t->ranks, sizeof *end),
		  *peers = mp_calloc(t->ranks, sizeof *peers);
	bool found = false;

	for (size_t i = 0; i < r->ntrain; i++) {
		const struct train_rec *v = &r->train[i];
		end[v->rank] = v->end > end[v->rank] ? v->end : end[v->rank];
		peers[v->rank] += v->peers;
	}
	for (uint32_t k = 0; k < t->ranks; k++)
		if (end[k] == last && (!found || peers[k] < peers[t->slowest])) {
			t->slowest = k;
			found = true;
		}
	mp_free(end);
	mp_free(peers);
	t->waited = SIZE_MAX;
	for (size_t i = 0; i < r->ntrain; i++) {
		const struct train_rec *v = &r->train[i];
		if (v->rank != t->slowest)
			continue;
		if (!v->comm) {
			t->compute += v->end - v->start;
			continue;
		}
		t->comm += v->end - v->start;
		t->exposed += v->exposed;
		if (v->exposed &&
		    (t->waited == SIZE_MAX || v->exposed > r->train[t->waited].exposed))
			t->waited = i;
	}
}

void train_summarise(struct run_result *r)
{
	struct train_summary *t = &r->training;
	simtime_t last = 0;

	if (!r->ntrain)
		return;
	qsort(r->train, r->ntrain, sizeof *r->train, train_cmp);
	for (size_t i = 0, j; i < r->ntrain; i = j) {
		for (j = i; j < r->ntrain && r->train[j].rank == r->train[i].rank; j++)
			;
		rank_exposed(r->train + i, j - i);
	}
	for (size_t i = 0; i < r->ntrain; i++) {
		const struct train_rec *v = &r->train[i];
		if (v->rank + 1 > t->ranks)
			t->ranks = v->rank + 1;
		if (v->iter + 1 > t->iters)
			t->iters = v->iter + 1;
	}
	t->iter_end = mp_calloc(t->iters, sizeof *t->iter_end);
	for (size_t i = 0; i < r->ntrain; i++) {
		const struct train_rec *v = &r->train[i];
		if (v->end > t->iter_end[v->iter])
			t->iter_end[v->iter] = v->end;
		if (v->end > last)
			last = v->end;
	}
	t->iteration = last / t->iters;
	slowest_rank(r, last);
}

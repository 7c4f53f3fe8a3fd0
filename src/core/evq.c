/* evq.c - d-ary min-heap of events stored by value; see evq.h for why. */
#include "core/evq.h"

#include "core/err.h"
#include "core/mem.h"

#ifdef MPSIM_SMALL_LIMITS
#define EVQ_INITIAL_CAP 4 /* tests: make every growth path run */
#else
#define EVQ_INITIAL_CAP 4096
#endif

static inline bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->key < b->key);
}

void evq_init(struct evq *q)
{
	q->n = 0;
	q->cap = EVQ_INITIAL_CAP;
	q->heap = mp_malloc(q->cap * sizeof *q->heap);
	q->now = 0;
	q->processed = 0;
	q->peak = 0;
	q->stop = false;
}

void evq_free(struct evq *q)
{
	mp_free(q->heap);
	q->heap = NULL;
	q->n = q->cap = 0;
}

void evq_push(struct evq *q, simtime_t t, uint64_t key, ev_fn fn, void *obj, uint64_t arg)
{
	if (__builtin_expect(t < q->now, 0))
		MP_PANIC("event scheduled in the past (t=%llu ps, now=%llu ps)",
			 (unsigned long long)t, (unsigned long long)q->now);
	if (__builtin_expect(q->n == q->cap, 0)) {
		q->cap *= 2;
		q->heap = mp_realloc(q->heap, q->cap * sizeof *q->heap);
	}
	struct ev e = { .t = t, .key = key, .fn = fn, .obj = obj, .arg = arg };
	struct ev *h = q->heap;
	size_t i = q->n++;
	if (q->n > q->peak)
		q->peak = q->n;
	while (i > 0) {
		size_t p = (i - 1) / EVQ_ARITY;
		if (!ev_less(&e, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = e;
}

struct ev evq_pop(struct evq *q)
{
	struct ev *h = q->heap;
	struct ev top = h[0];
	struct ev last = h[--q->n];
	size_t n = q->n, i = 0;
	for (;;) {
		size_t c = i * EVQ_ARITY + 1;
		if (c >= n)
			break;
		size_t best = c, end = c + EVQ_ARITY < n ? c + EVQ_ARITY : n;
		for (size_t j = c + 1; j < end; j++)
			if (ev_less(&h[j], &h[best]))
				best = j;
		if (!ev_less(&h[best], &last))
			break;
		h[i] = h[best];
		i = best;
	}
	if (n)
		h[i] = last;
	return top;
}

uint64_t evq_run(struct evq *q, simtime_t until) { return evq_run_n(q, until, UINT64_MAX); }

uint64_t evq_run_n(struct evq *q, simtime_t until, uint64_t budget)
{
	uint64_t start = q->processed;
	q->stop = false;
	while (q->n && !q->stop && q->processed - start < budget) {
		if (q->heap[0].t > until)
			break;
		struct ev e = evq_pop(q);
		q->now = e.t;
		q->processed++;
		if (q->n) {
			/* the next event's object (and its argument, when that is a
			 * pointer: prefetching any other value is harmless) load while
			 * this one runs */
			__builtin_prefetch(q->heap[0].obj);
			__builtin_prefetch((const void *)(uintptr_t)q->heap[0].arg);
		}
		e.fn(e.obj, e.arg);
	}
	return q->processed - start;
}

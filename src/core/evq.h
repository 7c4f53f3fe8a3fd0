/* evq.h - the event queue and run loop.
 *
 * An event is (time, key, handler, object, argument). Events are ordered by
 * time, then by key = (creating entity id << EVQ_SEQ_BITS) | that entity's own
 * sequence number. The key never depends on a global insertion counter, so the
 * order of simultaneous events is the same however a run is partitioned.
 *
 * Storage: an implicit d-ary min-heap of events stored by value. The heap array
 * is the event pool: it grows by doubling and never frees or mallocs per event.
 * Arity: measured with bench/bench_evq (hold model, 100k pending, this machine):
 * see bench/README.md; 4-ary beat binary by ~20% and 8-ary by a little because
 * a 40-byte event makes four children span 160 bytes (2.5 cache lines) while the
 * tree is half as deep. A calendar queue was not chosen: its speed depends on
 * the event-time distribution, which is very bursty here (serialisation times of
 * 10s of ns next to 100 us timers).
 */
#ifndef MPSIM_CORE_EVQ_H
#define MPSIM_CORE_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/time.h"

#ifndef EVQ_ARITY
#define EVQ_ARITY 4
#endif

#define EVQ_SEQ_BITS 40
#define EVQ_MAX_ENTITY ((1u << 24) - 1)

typedef void (*ev_fn)(void *obj, uint64_t arg);

struct ev {
	simtime_t t;  /* ps */
	uint64_t key; /* creator entity << EVQ_SEQ_BITS | creator's sequence */
	ev_fn fn;
	void *obj;
	uint64_t arg;
};
_Static_assert(sizeof(struct ev) == 40, "struct ev budget is 40 bytes");

/* Anything that creates events: an id unique among entities and a counter. */
struct ev_src {
	uint32_t id;
	uint64_t seq;
};

struct evq {
	struct ev *heap;
	size_t n, cap;
	simtime_t now;       /* time of the event being handled */
	uint64_t processed;  /* events handled so far */
	size_t peak;         /* most events pending at once */
	bool stop;           /* set by a handler to end evq_run early */
};

void evq_init(struct evq *q);
void evq_free(struct evq *q);

static inline uint64_t evq_key(struct ev_src *s)
{
	return ((uint64_t)s->id << EVQ_SEQ_BITS) | (s->seq++ & ((1ULL << EVQ_SEQ_BITS) - 1));
}

void evq_push(struct evq *q, simtime_t t, uint64_t key, ev_fn fn, void *obj, uint64_t arg);

/* Schedule from an entity: key from its counter. t must be >= q->now. */
static inline void evq_at(struct evq *q, struct ev_src *src, simtime_t t, ev_fn fn, void *obj,
			  uint64_t arg)
{
	evq_push(q, t, evq_key(src), fn, obj, arg);
}

/* Remove and return the earliest event; q must not be empty. */
struct ev evq_pop(struct evq *q);

static inline bool evq_empty(const struct evq *q) { return q->n == 0; }
static inline simtime_t evq_next_time(const struct evq *q) { return q->n ? q->heap[0].t : SIMTIME_MAX; }

/* Run events in order until the queue is empty, q->stop is set, or the next
 * event is later than `until`. Returns the number of events handled. */
uint64_t evq_run(struct evq *q, simtime_t until);
/* The same, handling at most `budget` events. */
uint64_t evq_run_n(struct evq *q, simtime_t until, uint64_t budget);

#endif

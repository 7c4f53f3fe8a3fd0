/* evq.h - the event queue and run loop.
 *
 * An event is (time, key, handler, object, argument). Events are ordered by
 * time, then by key = (creating entity id << EVQ_SEQ_BITS) | that entity's own
 * sequence number. The key never depends on a global insertion counter, so the
 * order of simultaneous events is the same however a run is partitioned. (A
 * creator's 32-bit sequence wraps after 4G events; simultaneous events of one
 * creator that straddle a wrap may swap places, identically in every run.)
 *
 * Storage, chosen by measurement (bench/evq_hold.c: the hold model with
 * 100,000 pending events; bench/notes/2026-11-22-event-queue-choice.md has
 * the figures): a radix heap
 * (Ahuja, Mehlhorn, Orlin & Tarjan 1990) with 8-bit digits, of 32-byte events.
 * Simulated time never runs backwards, so an event lives in the bucket named by
 * the highest digit where its time differs from the last time popped and
 * its own value of that digit; buckets ascend in time order. A push appends to
 * a bucket; a pop, when bucket 0 (the events of the next times, in order) is
 * short, moves the lowest non-empty bucket down around its minimum, at most 8
 * times in an event's life. Every access is an append or a sequential scan
 * that the hardware prefetcher follows, where a heap's sift-down takes a
 * cache miss per level once the queue outgrows L2 (this machine: 1 MB of L2,
 * ~150 ns to memory). Hold model, 100k pending, best of 3 on this machine: 4-ary heap of
 * 40-byte events 6.1 M events/s, binary heap 3.6 M, 4-ary heap of 16-byte slots
 * over event records 4.6 M, binary radix heap of 40-byte events 12.8 M, of
 * 16-byte slots over records 5.2 M, of 32-byte events (the handler travels as
 * an 8-bit id in the low byte of the stored key) 17-19 M; 4-bit digits take
 * 21% fewer instructions and 36% fewer cache misses than 1-bit digits
 * (cachegrind, 1 MB last-level cache), 19-21 M events/s. 8-bit digits (this
 * file) move an event fewer times: a packet's arrival, about 2^20 ps ahead,
 * moves 2-3 times instead of 5-6 (STrack fabric at 8192 hosts: 7% fewer
 * instructions and 4% fewer misses than 4-bit digits, the reference run 9%
 * fewer instructions, 2% more misses, 1 MB more memory in partly filled
 * chunks; the hold model 25-40% faster). Bucket 0 holds the events of the next
 * times sorted by (time, key), at least EVQ_AHEAD of them when there are
 * (evq.c: the run loop's pipeline prefetches for events ahead in it).
 *
 * The buckets of the two lowest digits are not moved down but taken whole: a
 * bucket of them holds the times of one slot of 256 ps, which go to bucket 0
 * at once, sorted by a counting sort on the time's lowest digit and by key
 * within a time. Moved down digit by digit, a slot's events would go a bucket
 * per time (a paced fabric's times rarely coincide), each bucket a refill of
 * b0 with its own chunk. Taken whole: 3-4% fewer instructions on the fabrics,
 * the hold model about 50% faster
 * (bench/notes/2026-11-25-event-queue-lowest-digits.md).
 *
 * A calendar queue was not chosen: its speed depends on the distribution of
 * event times, which here mixes 10 ns serialisations with 100 us timers; the
 * radix heap's does not. Nor was a wheel of slots wide enough for a packet's
 * arrival 1 us ahead to go straight to its slot (EVQ_WHEEL_BITS 14: 16384
 * slots, 4.2 us): it moves an event once rather than two or three times, and
 * cachegrind counts 6-10% fewer instructions and misses, but every push is
 * then a write to one of thousands of places rather than an append to one of
 * a few buckets, and the reference run took 3-10% longer.
 */
#ifndef MPSIM_CORE_EVQ_H
#define MPSIM_CORE_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/time.h"

#define EVQ_SEQ_BITS 32
#define EVQ_MAX_ENTITY ((1u << 24) - 1) /* key: 24 + 32 bits, << 8 in the queue */

typedef void (*ev_fn)(void *obj, uint64_t arg);
/* Issues prefetches for what handling (obj, arg) will touch; must not change
 * anything. */
typedef void (*evq_prefetch_fn)(const void *obj, uint64_t arg);

struct ev {
	simtime_t t;  /* ps */
	uint64_t key; /* creator entity << EVQ_SEQ_BITS | creator's sequence */
	ev_fn fn;
	void *obj;
	uint64_t arg;
};

_Static_assert(sizeof(struct ev) == 40, "struct ev budget is 40 bytes");

struct evs {
	simtime_t t;
	uint64_t key; /* event key << 8 | handler id */
	void *obj;
	uint64_t arg;
};

/* The events of the next times (up to `last`), sorted by (time, key), latest
 * first, except for a tail of late arrivals v[n - tail..n) that the next pop
 * sorts and merges in: events pushed there go to the tail when they would move
 * many others (thousands of flows starting at once, pushed while the fabric is
 * built), so a burst costs n log n, not n^2. */
struct evq_bucket {
	struct evs *v;
	uint32_t n, cap;
	uint32_t tail;	 /* v[n - tail..n) is the unsorted tail (usually 0) */
	struct evs *tmp; /* the tail while it is merged; a refill's merge sort */
	uint32_t tmp_cap;
	uint32_t *runs; /* a refill's merge sort: where its runs start */
	uint32_t runs_cap;
};

/* The other buckets: lists of chunks from shared free lists, so memory
 * follows the events pending now, not each bucket's high-water mark. A list's
 * first chunk is small (a slot of a small fabric holds a few events), the
 * others large. */
#define EVQ_CHUNK_SMALL 15
#define EVQ_CHUNK_LARGE 255
struct evq_chunk {
	struct evq_chunk *next;
	uint32_t cap;
	struct evs v[];
};

/* A push writes at `wr` alone (the chunk's header stays cold) until `end`,
 * the end of the last chunk; every chunk before it is full. */
struct evq_list {
	struct evs *wr, *end;
	struct evq_chunk *head; /* NULL when empty */
	simtime_t min;		/* earliest time in the list (valid when not empty) */
};

/* Anything that creates events: an id unique among entities and a counter
 * (32 bits, all a key holds: it wraps as the key's sequence does). */
struct ev_src {
	uint32_t id;
	uint32_t seq;
};

/* Buckets, in the order of the times they hold (evq.c):
 * - 1: the rest of the slot of `last` (times in the same 2^EVQ_SLOT_BITS ps);
 * - the slots: one bucket per slot of the 2^EVQ_NEAR_BITS ps block of `last`
 *   (the radix heap's second digit);
 * - the far levels: digits of EVQ_RADIX_BITS above that block.
 * The first two are taken whole into b0, the far ones moved down. */
#define EVQ_SLOT_BITS 8	 /* a slot: 256 ps */
#ifndef EVQ_WHEEL_BITS	 /* overridable to compare (evq.h's opening
			  * comment; mask_first scans the mask word by word) */
#define EVQ_WHEEL_BITS 8 /* slots a block: 256, 65.5 ns */
#endif
#define EVQ_NEAR_BITS (EVQ_SLOT_BITS + EVQ_WHEEL_BITS)
#define EVQ_RADIX_BITS 8
#define EVQ_FAR_LEVELS ((64 - EVQ_NEAR_BITS + EVQ_RADIX_BITS - 1) / EVQ_RADIX_BITS)
#define EVQ_FIRST_SLOT 2u
#define EVQ_FIRST_FAR (EVQ_FIRST_SLOT + (1u << EVQ_WHEEL_BITS))
#define EVQ_BUCKETS (EVQ_FIRST_FAR + EVQ_FAR_LEVELS * (1u << EVQ_RADIX_BITS))
#define EVQ_MASK_WORDS ((EVQ_BUCKETS + 63) / 64)

struct evq {
	struct evq_bucket b0; /* time <= last, sorted by (time, key) */
	struct evq_list *b;   /* EVQ_BUCKETS of them; b[0] unused */
	struct evq_chunk *free_small, *free_large;
	uint64_t mask[EVQ_MASK_WORDS]; /* bit i set when b[i] (i >= 1) is not empty */
	simtime_t last;		       /* latest time moved to b0 */
	size_t n;		       /* events pending */
	simtime_t now;		       /* time of the event being handled */
	uint64_t processed;	       /* events handled so far */
	size_t peak;		       /* most events pending at once */
	bool stop;		       /* set by a handler to end evq_run early */
};

void evq_init(struct evq *q);
void evq_free(struct evq *q);

static inline uint64_t evq_key(struct ev_src *s)
{
	_Static_assert(EVQ_SEQ_BITS == 32, "ev_src.seq holds a key's sequence");
	return ((uint64_t)s->id << EVQ_SEQ_BITS) | s->seq++;
}

/* The events of one creator must be pushed in the order of their sequence
 * numbers (evq_at's keys are): the events of one time are sorted on their
 * creators alone, stably (evq.c, sort_radix; debug builds check the order). */
void evq_push(struct evq *q, simtime_t t, uint64_t key, ev_fn fn, void *obj, uint64_t arg);

/* Schedule from an entity: key from its counter. t must be >= q->now. */
static inline void evq_at(struct evq *q, struct ev_src *src, simtime_t t, ev_fn fn, void *obj,
			  uint64_t arg)
{
	evq_push(q, t, evq_key(src), fn, obj, arg);
}

/* Hand every pending event to fn (in no particular order) and empty the
 * queue: for freeing what events carry when a run ends early. */
void evq_drain(struct evq *q, void (*fn)(void *ctx, const struct ev *e), void *ctx);

/* Give every pending event of handler `from` for which sel(ctx, obj, arg)
 * holds the handler `to` instead. Its time and key stay, so it keeps its
 * place in the order. It visits every pending event: for rare changes of the
 * world, such as a link failing under the packets on its wire. */
void evq_rehandle(struct evq *q, ev_fn from, ev_fn to,
		  bool (*sel)(const void *ctx, const void *obj, uint64_t arg), const void *ctx);

/* Prefetch the cache lines of [a, a + bytes), at most 16: what the run loop
 * and the handlers' prefetchers ask for. `a` starts a cache line (what they
 * prefetch is allocated aligned: ports, switches, hosts, connections, queue
 * pairs, packets); from elsewhere the range's last line would be missed. The
 * line count is then a constant when bytes is, and the loop unrolled (a count
 * from the address cost 5% more instructions a hop). The
 * empty asm statement keeps the prefetches: GCC 12 takes a function that
 * only prefetches for a const one (a prefetch writes no memory) and deletes
 * a call to it that it did not inline first, without a word
 * (bench/notes/2026-11-24-packet-hop-rounds-4-5.md; the binary is checked by
 * tests/prefetch_kept.sh). Addresses as
 * integers, so that a range may start at a flexible array member. */
static inline __attribute__((always_inline)) void evq_prefetch_lines(const void *a, size_t bytes)
{
	uintptr_t p = (uintptr_t)a;
	size_t n = (bytes + 63) / 64; /* a constant when bytes is: then unrolled */
	for (size_t i = 0; i < n && i < 16; i++)
		__builtin_prefetch((const void *)(p + 64 * i));
	__asm__ volatile("");
}

/* The lines of `mask` (bit i: the i-th line from a, which starts one; at
 * most 8), for objects whose hot lines are not contiguous (a port:
 * PORT_HOT_LINES). Unrolled when mask is a constant. */
static inline __attribute__((always_inline)) void evq_prefetch_mask(const void *a, unsigned mask)
{
	uintptr_t p = (uintptr_t)a;
#pragma GCC unroll 8
	for (unsigned i = 0; i < 8; i++)
		if (mask & (1u << i))
			__builtin_prefetch((const void *)(p + 64 * i));
	__asm__ volatile("");
}

/* Register a prefetcher for events of handler fn: the run loop calls it a
 * few events ahead (EVQ_PREFETCH_PF, evq.c), after the event's object (and
 * its argument, for handlers that said it is an address:
 * evq_set_prefetch_arg) were prefetched further ahead (EVQ_PREFETCH), so it
 * can follow their pointers (software pipelining). */
void evq_set_prefetch(ev_fn fn, evq_prefetch_fn pf);
/* A second prefetcher for events of handler fn, called closer to the event
 * (EVQ_PREFETCH_LATE): it may read what the first one prefetched (a
 * connection) and prefetch what that points to (its per-packet rings). */
void evq_set_prefetch_late(ev_fn fn, evq_prefetch_fn pf);
/* The run loop prefetches EVQ_PREFETCH_LINES (4) lines of an event's object
 * ahead; for events of handler fn, the lines of `mask` instead (bit i: line
 * i; not 0): the first alone for an object of one line, whose neighbours in
 * memory are someone else's, or the lines a port's packet path reads. */
void evq_set_prefetch_lines(ev_fn fn, unsigned mask);

/* The run loop also prefetches the argument of events of handler fn: for
 * handlers whose argument is an address (a packet), not a number (its low
 * bits may hold flags: an arrival's mark, net/port.h). */
void evq_set_prefetch_arg(ev_fn fn);

/* Remove the earliest event into *e if its time is <= until; false otherwise
 * (then nothing changes). */
bool evq_pop_until(struct evq *q, simtime_t until, struct ev *e);
/* Remove and return the earliest event; q must not be empty. */
struct ev evq_pop(struct evq *q);

static inline bool evq_empty(const struct evq *q)
{
	return q->n == 0;
}
/* The time and key (creator << EVQ_SEQ_BITS | sequence) of the earliest
 * pending event: false when none. It may reorganise the queue, never the
 * order: for a partitioned run's last stretch, where the ranks agree on the
 * next event of all of them (sim/part.c). */
bool evq_peek(struct evq *q, simtime_t *t, uint64_t *key);
/* Time of the earliest pending event (SIMTIME_MAX when none); changes nothing. */
simtime_t evq_next_time(const struct evq *q);

/* Run events in order until the queue is empty, q->stop is set, or the next
 * event is later than `until`. Returns the number of events handled. */
uint64_t evq_run(struct evq *q, simtime_t until);
/* The same, handling at most `budget` events. */
uint64_t evq_run_n(struct evq *q, simtime_t until, uint64_t budget);

#endif

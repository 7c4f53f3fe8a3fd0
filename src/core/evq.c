/* evq.c - a radix heap of events; see evq.h for why.
 *
 * Invariants: an event with t <= last is in b0, others in b[bucket_of(t,
 * last)]; buckets below EVQ_FIRST_FAR hold times of one slot; b0 is sorted by (time, key) with the earliest at the end (popped
 * first); mask has bit i set exactly when b[i] is not empty (i >= 1).
 *
 * b0 is kept at least EVQ_AHEAD events deep when the events pending allow it
 * (top_up): the run loop's software pipeline prefetches for the events
 * a few places ahead in b0; with one time only in b0, a fabric whose events
 * rarely share a picosecond (paced senders, Poisson arrivals) would have
 * nothing ahead to prefetch for
 * (bench/notes/2026-11-24-rocev2-8192-hosts.md). */
#include "core/evq.h"

#include <pthread.h>

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/mem.h"

/* The run loop's software pipeline, in events ahead of the one handled: the
 * object and argument of the event EVQ_PREFETCH ahead are prefetched, and the
 * handler prefetcher of the event EVQ_PREFETCH_PF ahead runs (its object
 * arrived meanwhile). The late prefetcher of the event EVQ_PREFETCH_LATE
 * ahead reads what the handler prefetcher loaded (a connection) and loads
 * what that points to (its per-packet rings). 7, 4, 2 measured best on
 * STrack's fabric at 128, 1024 and 8192 hosts, on the reference run and on
 * RoCEv2's 4-QP point at 8192 hosts; shallower distances were slower, deeper
 * ones within the noise (bench/notes/2026-11-24-packet-hop-rounds-1-3.md,
 * bench/notes/2026-11-27-port-in-three-lines.md). */
#ifndef EVQ_PREFETCH
#define EVQ_PREFETCH 7
#endif
#ifndef EVQ_PREFETCH_PF
#define EVQ_PREFETCH_PF 4
#endif
#ifndef EVQ_PREFETCH_LATE
#define EVQ_PREFETCH_LATE 2
#endif
#ifndef EVQ_PREFETCH_LINES
#define EVQ_PREFETCH_LINES 4
#endif
/* b0 is topped up to this many events before a pop, so that the event
 * EVQ_PREFETCH places ahead exists after it; from events at most EVQ_HORIZON
 * ahead of now, which bounds what later pushes may land in b0 (sorted in
 * there, each moving the events of b0 that are earlier than itself). */
#define EVQ_AHEAD (EVQ_PREFETCH + 1)
#define EVQ_HORIZON ((simtime_t)100000) /* 100 ns */

/* handler registry: fn <-> 8-bit id. Process-wide: the ids never affect the
 * order of events, and the threads of a partitioned run (sim/threads.c) share
 * it. A handler is registered under reg_mu and published by the release of
 * its slot's fn, which handler_id reads with acquire (a plain load on x86);
 * the setters below write under reg_mu, and only a value that changes, so a
 * thread's run loop reads what its own setter call saw. */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static ev_fn handlers[256];
static evq_prefetch_fn prefetchers[256], late_prefetchers[256];
/* what the run loop prefetches of an event ahead, by handler: the lines of
 * its object (0: the first four), and whether its argument is an address */
static struct {
	uint8_t lines;
	bool arg;
} ahead[256];
static unsigned nhandlers;
/* fn -> id: open addressing with linear probing over twice as many slots as
 * handlers can be, nothing ever evicted, so two hot handlers whose addresses
 * share bits cannot take turns missing. (A direct-mapped cache of 64 slots
 * on address bits 4-9 did, whenever a code change anywhere moved
 * port_wire_arrive and port_tx_done onto one slot: every push then scanned
 * the handler list, +13 instructions per event, 1.7% of a lossy run.) */
static struct {
	ev_fn fn;
	unsigned id;
} hslot[512];

static inline unsigned handler_slot(ev_fn fn)
{
	return (unsigned)(((uintptr_t)fn * 0x9E3779B97F4A7C15ull) >> 55);
}

/* first sight of fn: register it */
static __attribute__((noinline)) unsigned handler_register(ev_fn fn)
{
	pthread_mutex_lock(&reg_mu);
	unsigned h = handler_slot(fn);
	while (hslot[h].fn && hslot[h].fn != fn)
		h = (h + 1) & 511;
	if (!hslot[h].fn) {
		if (nhandlers == 256)
			MP_PANIC("more than 256 event handlers");
		handlers[nhandlers] = fn;
		hslot[h].id = nhandlers++;
		__atomic_store_n(&hslot[h].fn, fn, __ATOMIC_RELEASE);
	}
	unsigned id = hslot[h].id;
	pthread_mutex_unlock(&reg_mu);
	return id;
}

static inline unsigned handler_id(ev_fn fn)
{
	for (unsigned h = handler_slot(fn);; h = (h + 1) & 511) {
		ev_fn f = __atomic_load_n(&hslot[h].fn, __ATOMIC_ACQUIRE);
		if (__builtin_expect(f == fn, 1))
			return hslot[h].id;
		if (!f)
			return handler_register(fn);
	}
}

#ifdef MPSIM_SMALL_LIMITS
#define EVQ_INITIAL_CAP 2 /* tests: make every growth path run */
#else
#define EVQ_INITIAL_CAP 64
#endif

/* A stored event as handlers see it. */
static inline struct ev unpack(const struct evs *s)
{
	return (struct ev){ .t = s->t,
			    .key = s->key >> 8,
			    .fn = handlers[s->key & 255],
			    .obj = s->obj,
			    .arg = s->arg };
}

/* p = v under reg_mu, when it changes (see the registry); p's index is
 * taken before (handler_id may register under reg_mu) */
#define SET_ONCE(p, v)                         \
	do {                                   \
		pthread_mutex_lock(&reg_mu);   \
		if ((p) != (v))                \
			(p) = (v);             \
		pthread_mutex_unlock(&reg_mu); \
	} while (0)

void evq_set_prefetch(ev_fn fn, evq_prefetch_fn pf)
{
	unsigned id = handler_id(fn);
	SET_ONCE(prefetchers[id], pf);
}

void evq_set_prefetch_late(ev_fn fn, evq_prefetch_fn pf)
{
	unsigned id = handler_id(fn);
	SET_ONCE(late_prefetchers[id], pf);
}

void evq_set_prefetch_lines(ev_fn fn, unsigned mask)
{
	MP_ASSERT(mask && mask < 256);
	unsigned id = handler_id(fn);
	SET_ONCE(ahead[id].lines, (uint8_t)mask);
}

void evq_set_prefetch_arg(ev_fn fn)
{
	unsigned id = handler_id(fn);
	SET_ONCE(ahead[id].arg, true);
}

void evq_init(struct evq *q)
{
	memset(q, 0, sizeof *q);
	q->b = mp_calloc(EVQ_BUCKETS, sizeof *q->b);
}

static void free_chunk_list(struct evq_chunk *c)
{
	for (struct evq_chunk *nx; c; c = nx) {
		nx = c->next;
		mp_free(c);
	}
}

void evq_free(struct evq *q)
{
	mp_free(q->b0.v);
	mp_free(q->b0.tmp);
	mp_free(q->b0.runs);
	if (q->b)
		for (unsigned i = 0; i < EVQ_BUCKETS; i++)
			free_chunk_list(q->b[i].head);
	mp_free(q->b);
	free_chunk_list(q->free_small);
	free_chunk_list(q->free_large);
	memset(q, 0, sizeof *q);
}

static void bucket_grow(struct evq_bucket *b)
{
	b->cap = b->cap ? b->cap * 2 : EVQ_INITIAL_CAP;
	b->v = mp_realloc(b->v, (size_t)b->cap * sizeof *b->v);
}

/* Room for at least n events, by doubling as bucket_grow does. */
static void b0_reserve(struct evq_bucket *b, uint32_t n)
{
	while (b->cap < n)
		bucket_grow(b);
}

/* Bucket of time t > last (evq.h): 1 in the slot of `last`; a slot of the
 * slots in its block; else the highest digit (of EVQ_RADIX_BITS bits above
 * the block) where t differs from last, and t's value of that digit. Buckets
 * ascend in the order of the times they hold. 0 when t == last. */
static inline unsigned bucket_of(simtime_t t, simtime_t last)
{
	uint64_t x = t ^ last;
	if (x == 0)
		return 0;
	if (x < (1u << EVQ_SLOT_BITS))
		return 1;
	if (x < (1u << EVQ_NEAR_BITS))
		return EVQ_FIRST_SLOT +
		       (unsigned)((t >> EVQ_SLOT_BITS) & ((1u << EVQ_WHEEL_BITS) - 1));
	unsigned d = (63u - (unsigned)__builtin_clzll(x) - EVQ_NEAR_BITS) / EVQ_RADIX_BITS;
	unsigned v =
	    (unsigned)(t >> (EVQ_NEAR_BITS + d * EVQ_RADIX_BITS)) & ((1u << EVQ_RADIX_BITS) - 1);
	return EVQ_FIRST_FAR + (d << EVQ_RADIX_BITS) + v;
}

static inline void mask_set(struct evq *q, unsigned i)
{
	q->mask[i >> 6] |= 1ULL << (i & 63);
}

static inline void mask_clear(struct evq *q, unsigned i)
{
	q->mask[i >> 6] &= ~(1ULL << (i & 63));
}

/* lowest non-empty bucket >= 1, or 0 when none */
static inline unsigned mask_first(const struct evq *q)
{
	for (unsigned w = 0; w < EVQ_MASK_WORDS; w++)
		if (q->mask[w])
			return w * 64 + (unsigned)__builtin_ctzll(q->mask[w]);
	return 0;
}

/* A chunk of the size a list needs next: small for its first. */
static struct evq_chunk *chunk_get(struct evq *q, bool first)
{
	struct evq_chunk **fl = first ? &q->free_small : &q->free_large;
	struct evq_chunk *c = *fl;
	if (c) {
		*fl = c->next;
		/* the next one's header, cold by now: a refill takes many */
		__builtin_prefetch(*fl);
		return c;
	}
	uint32_t cap = first ? EVQ_CHUNK_SMALL : EVQ_CHUNK_LARGE;
	c = mp_malloc(sizeof *c + (size_t)cap * sizeof c->v[0]);
	c->cap = cap;
	return c;
}

static inline void chunk_put(struct evq *q, struct evq_chunk *c)
{
	struct evq_chunk **fl = c->cap == EVQ_CHUNK_SMALL ? &q->free_small : &q->free_large;
	c->next = *fl;
	*fl = c;
}

/* A full list's next chunk. Its last chunk is found from `end`: the first
 * chunk is small, the others large. */
static __attribute__((noinline)) void list_grow(struct evq *q, struct evq_list *l)
{
	struct evq_chunk *nc = chunk_get(q, !l->head);
	nc->next = NULL;
	if (!l->head) {
		l->head = nc;
	} else {
		struct evq_chunk *t = l->head;
		if (l->end != t->v + t->cap)
			t = (struct evq_chunk *)(void *)((char *)l->end - sizeof *t -
							 EVQ_CHUNK_LARGE * sizeof t->v[0]);
		t->next = nc;
	}
	l->wr = nc->v;
	l->end = nc->v + nc->cap;
}

static inline void list_push(struct evq *q, struct evq_list *l, const struct evs *e)
{
	bool first = !l->head;
	if (__builtin_expect(l->wr == l->end, 0))
		list_grow(q, l);
	*l->wr++ = *e;
	if (first || e->t < l->min)
		l->min = e->t;
}

/* Events in the last chunk of a list that is not empty. */
static inline uint32_t list_last_n(const struct evq_list *l)
{
	const struct evq_chunk *h = l->head;
	return (uint32_t)(l->wr - (l->end - (l->end == h->v + h->cap ? h->cap : EVQ_CHUNK_LARGE)));
}

/* Empty list l and return its chunks; the last holds *n events, the others
 * are full. */
static inline struct evq_chunk *list_take(struct evq_list *l, uint32_t *n)
{
	struct evq_chunk *c = l->head;
	*n = list_last_n(l);
	l->head = NULL;
	l->wr = l->end = NULL;
	return c;
}

/* Events in chunk c of a taken list whose last chunk holds last_n. */
static inline uint32_t chunk_n(const struct evq_chunk *c, uint32_t last_n)
{
	return c->next ? c->cap : last_n;
}

/* An event pushed for the current time moves at most this many others in
 * place; past that it joins the unsorted tail (see struct evq_bucket). */
#define B0_SHIFT_MAX 32

/* Is a later than b, in the order events are handled: time, then key? */
static inline bool ev_later(const struct evs *a, const struct evs *b)
{
	return a->t > b->t || (a->t == b->t && a->key > b->key);
}

/* b0 holds the events of times <= `last`, the latest first */
static void b0_insert(struct evq *q, const struct evs *e)
{
	struct evq_bucket *b = &q->b0;
	if (b->n == b->cap)
		bucket_grow(b);
	uint32_t i = b->n, lim = i > B0_SHIFT_MAX ? i - B0_SHIFT_MAX : 0;
	if (!b->tail && (lim == 0 || ev_later(&b->v[lim - 1], e))) {
		while (i > 0 && ev_later(e, &b->v[i - 1])) {
			b->v[i] = b->v[i - 1];
			i--;
		}
		b->v[i] = *e;
		b->n++;
		return;
	}
	b->v[b->n++] = *e; /* the tail, sorted at the next pop */
	b->tail++;
}

static void sort_key_desc(struct evs *v, size_t n);

/* Sort the tail and merge it into the ordered prefix: from the back
 * (the earliest), so the prefix moves only as far as it must. */
static void b0_merge(struct evq_bucket *b)
{
	uint32_t k = b->tail;
	if (b->tmp_cap < k) {
		mp_free(b->tmp);
		b->tmp_cap = k > 2 * b->tmp_cap ? k : 2 * b->tmp_cap;
		b->tmp = mp_malloc((size_t)b->tmp_cap * sizeof *b->tmp);
	}
	memcpy(b->tmp, b->v + b->n - k, (size_t)k * sizeof *b->tmp);
	sort_key_desc(b->tmp, k);
	uint32_t w = b->n, i = b->n - k, j = k;
	while (j > 0) { /* place the smallest of the two ends at w - 1 */
		if (i > 0 && ev_later(&b->tmp[j - 1], &b->v[i - 1]))
			b->v[--w] = b->v[--i];
		else
			b->v[--w] = b->tmp[--j];
	}
	b->tail = 0;
}

void evq_push(struct evq *q, simtime_t t, uint64_t key, ev_fn fn, void *obj, uint64_t arg)
{
	if (__builtin_expect(t < q->now, 0))
		MP_PANIC("event scheduled in the past (t=%llu ps, now=%llu ps)",
			 (unsigned long long)t, (unsigned long long)q->now);
	struct evs e = { .t = t, .key = (key << 8) | handler_id(fn), .obj = obj, .arg = arg };
	q->n++;
	if (q->n > q->peak)
		q->peak = q->n;
	if (t <= q->last) {
		b0_insert(q, &e);
		return;
	}
	unsigned i = bucket_of(t, q->last);
	list_push(q, &q->b[i], &e);
	mask_set(q, i);
}

/* Sort v[0..n) latest first (ev_later): b0 is refilled with every event of
 * one time, which in a synchronised fabric can be thousands. Quicksort with a
 * median-of-three pivot over insertion sort; no allocation, no callbacks.
 * Used for b0's tail (rare: bursts pushed while a fabric is built) and short
 * runs; a refill uses sort_refill. */
static void sort_key_desc(struct evs *v, size_t n)
{
	while (n > 16) {
		size_t m = n / 2;
		const struct evs *a = &v[0], *b = &v[m], *c = &v[n - 1];
		struct evs piv = ev_later(b, a)
				     ? (ev_later(c, b) ? *b : (ev_later(c, a) ? *c : *a))
				     : (ev_later(c, a) ? *a : (ev_later(c, b) ? *c : *b));
		size_t i = 0, j = n - 1;
		for (;;) {
			while (ev_later(&v[i], &piv))
				i++;
			while (ev_later(&piv, &v[j]))
				j--;
			if (i >= j)
				break;
			struct evs t = v[i];
			v[i] = v[j];
			v[j] = t;
			i++;
			j--;
		}
		/* recurse into the smaller side, loop on the larger */
		if (j + 1 < n - j - 1) {
			sort_key_desc(v, j + 1);
			v += j + 1;
			n -= j + 1;
		} else {
			sort_key_desc(v + j + 1, n - j - 1);
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++) {
		struct evs t = v[i];
		size_t j = i;
		while (j > 0 && ev_later(&t, &v[j - 1])) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = t;
	}
}

/* Merge the descending runs a[0..na) and b[0..nb) into out. Branch-free in
 * its loops (the compiler turns the choice into conditional moves): the keys
 * of simultaneous events come in no order a branch predictor could learn, and
 * a comparison sort's mispredicted comparisons would cost a tenth of the
 * 8192-host run's time (bench/notes/2026-11-24-packet-hop-rounds-1-3.md). Keys are unique, so the order is the same whichever
 * sort produces it.
 *
 * A step of a merge waits for the one before it (which run the next key is
 * read from depends on the last comparison), so the merge runs from both
 * ends at once, two independent chains: the front takes the largest of the
 * runs' heads, the back the smallest of their tails. For s steps, s the
 * events left in the shorter run, neither can pass the end of a run (each
 * takes at most one event a step from either) nor meet the other (together
 * they take 2s events, at most what is left); then again over what is left
 * between them, until a run is used up and the other is copied. */
static void merge_desc(struct evs *restrict out, const struct evs *a, size_t na,
		       const struct evs *b, size_t nb)
{
	const struct evs *al = a + na - 1, *bl = b + nb - 1; /* the back's: the runs' tails */
	struct evs *ol = out + na + nb - 1;
	for (;;) {
		size_t ra = (size_t)(al + 1 - a), rb = (size_t)(bl + 1 - b);
		size_t s = ra < rb ? ra : rb;
		if (s == 0)
			break;
		for (; s > 0; s--) {
			bool tb = b->key > a->key;
			*out++ = *(tb ? b : a);
			b += tb;
			a += !tb;
			bool tbl = bl->key < al->key;
			*ol-- = *(tbl ? bl : al);
			bl -= tbl;
			al -= !tbl;
		}
	}
	while (a <= al)
		*out++ = *a++;
	while (b <= bl)
		*out++ = *b++;
}

/* Sort v[0..n), events of one time in the order they were pushed, by key,
 * largest first: a radix sort on the creating entity's id alone (the key's
 * upper 24 bits), least significant byte first, each pass a stable counting
 * sort between v and tmp, and a byte that every event shares skipped. An
 * entity's events are pushed in the order of their sequence numbers (a key
 * is taken as its event is pushed: evq_at), so a sort stable on the entity
 * orders them by key; only across a wrap of a creator's 32-bit sequence,
 * 4G events of one entity, would it keep the push order where the key
 * order swaps them. Ascending, except that the last pass writes from the
 * end. No chain of dependent comparisons, where the merge sort's passes
 * each have one: for large groups, 2 passes where the merge sort makes 5 or
 * 6 (392 events a time in runs of 22 at 8192 hosts); small ones pay more
 * for the counts than they save (SORT_RADIX_MIN). Returns the array that
 * holds the result. */
#define SORT_RADIX_MIN 48
static struct evs *sort_radix(struct evs *v, struct evs *tmp, uint32_t n)
{
	uint32_t cnt[3][256];
	memset(cnt, 0, sizeof cnt);
	for (uint32_t j = 0; j < n; j++) {
		uint64_t e = v[j].key >> 40;
		cnt[0][e & 255]++;
		cnt[1][(e >> 8) & 255]++;
		cnt[2][(e >> 16) & 255]++;
	}
	unsigned pass[3], np = 0;
	for (unsigned d = 0; d < 3; d++)
		if (cnt[d][(v[0].key >> (40 + 8 * d)) & 255] != n)
			pass[np++] = d;
	struct evs *src = v, *dst = tmp;
	if (np == 0) { /* one entity: the push order, reversed */
		for (uint32_t j = 0; j < n; j++)
			dst[n - 1 - j] = src[j];
		src = dst;
	}
	for (unsigned k = 0; k < np; k++) {
		unsigned sh = 40 + 8 * pass[k];
		uint32_t at[256], sum = 0;
		for (unsigned x = 0; x < 256; x++) {
			at[x] = sum;
			sum += cnt[pass[k]][x];
		}
		if (k + 1 < np) {
			for (uint32_t j = 0; j < n; j++)
				dst[at[(src[j].key >> sh) & 255]++] = src[j];
		} else { /* the last: largest first */
			for (uint32_t j = 0; j < n; j++)
				dst[n - 1 - at[(src[j].key >> sh) & 255]++] = src[j];
		}
		struct evs *t = src;
		src = dst;
		dst = t;
	}
#ifndef NDEBUG /* debug builds check what the sort assumed of the pushes */
	for (uint32_t j = 1; j < n; j++)
		MP_ASSERT(src[j - 1].key > src[j].key);
#endif
	return src;
}

/* Sort v[0..n) by key, largest first: sort_radix from SORT_RADIX_MIN events
 * up, below it a natural merge sort. Events arrive
 * from their bucket in the order they were pushed, which holds runs of
 * ascending keys (the 8192-host STrack run, before sort_radix took such
 * groups: 392 events a time on average, in runs of 22), so each run is
 * reversed in place (a run shorter than SORT_RUN
 * is extended by insertion) and the runs are merged in pairs, pass after
 * pass, between v and tmp (n events each); runs has room for n + 1. Returns
 * the one that holds the result. */
#define SORT_RUN 4
static struct evs *sort_keys(struct evs *v, struct evs *tmp, uint32_t *runs, uint32_t n)
{
	if (n >= SORT_RADIX_MIN)
		return sort_radix(v, tmp, n);
	uint32_t nr = 0;
	for (uint32_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].key > v[j - 1].key; j++)
			;
		for (uint32_t l = i, r = j - 1; l < r; l++, r--) {
			struct evs t = v[l];
			v[l] = v[r];
			v[r] = t;
		}
		if (j - i < SORT_RUN) {
			j = n - i < SORT_RUN ? n : i + SORT_RUN;
			sort_key_desc(v + i, j - i);
		}
		runs[nr++] = i;
	}
	runs[nr] = n;
	struct evs *src = v, *dst = tmp;
	while (nr > 1) {
		uint32_t k = 0, r;
		for (r = 0; r + 1 < nr; r += 2) {
			uint32_t x = runs[r], y = runs[r + 1], z = runs[r + 2];
			merge_desc(dst + x, src + x, y - x, src + y, z - y);
			runs[k++] = x;
		}
		if (r < nr) { /* an odd run out: copied as it is */
			memcpy(dst + runs[r], src + runs[r], (size_t)(n - runs[r]) * sizeof *dst);
			runs[k++] = runs[r];
		}
		runs[k] = n;
		nr = k;
		struct evs *t = src;
		src = dst;
		dst = t;
	}
	return src;
}

/* b0's scratch arrays, as large as its array. They grow with b0, so a run in
 * its steady state allocates nothing. */
static void scratch_reserve(struct evq_bucket *b)
{
	if (b->tmp_cap < b->n) {
		mp_free(b->tmp);
		b->tmp_cap = b->cap;
		b->tmp = mp_malloc((size_t)b->tmp_cap * sizeof *b->tmp);
	}
	if (b->runs_cap < b->n + 1) {
		mp_free(b->runs);
		b->runs_cap = b->cap + 1;
		b->runs = mp_malloc((size_t)b->runs_cap * sizeof *b->runs);
	}
}

/* Make b0's scratch array its array (the sorted events are there). */
static void b0_swap(struct evq_bucket *b)
{
	struct evs *t = b->v;
	b->v = b->tmp;
	b->tmp = t;
	uint32_t c = b->cap;
	b->cap = b->tmp_cap;
	b->tmp_cap = c;
}

/* Sort b0's n events of one time by key, largest first. */
static void sort_refill(struct evq_bucket *b)
{
	if (b->n <= 2 * SORT_RUN) {
		sort_key_desc(b->v, b->n);
		return;
	}
	scratch_reserve(b);
	if (sort_keys(b->v, b->tmp, b->runs, b->n) != b->v)
		b0_swap(b);
}

/* Sort b0's n events of one slot (times that differ in their lowest
 * EVQ_SLOT_BITS only, from lo to hi) by (time, key), latest first: a counting
 * sort by time into the scratch array, stable, so that the events of a time
 * keep the order they were pushed in, then each time's events by key. */
static void sort_slot(struct evq_bucket *b, simtime_t lo, simtime_t hi)
{
	uint32_t n = b->n;
	if (n <= 16 || lo == hi) {
		if (lo == hi)
			sort_refill(b);
		else
			sort_key_desc(b->v, n);
		return;
	}
	scratch_reserve(b);
	const unsigned m = (1u << EVQ_SLOT_BITS) - 1;
	unsigned l = (unsigned)lo & m, h = (unsigned)hi & m;
	uint32_t at[1u << EVQ_SLOT_BITS];
	memset(at + l, 0, (h - l + 1) * sizeof at[0]);
	struct evs *v = b->v, *w = b->tmp;
	for (uint32_t j = 0; j < n; j++)
		at[v[j].t & m]++;
	for (uint32_t s = 0, x = h + 1; x-- > l;) { /* latest first */
		uint32_t c = at[x];
		at[x] = s;
		s += c;
	}
	for (uint32_t j = 0; j < n; j++)
		w[at[v[j].t & m]++] = v[j];
	/* each time's events, now w[s..e), by key, with v[s..e) as scratch */
	for (uint32_t s = 0, e; s < n; s = e) {
		for (e = s + 1; e < n && w[e].t == w[s].t; e++)
			;
		if (e - s <= 2 * SORT_RUN)
			sort_key_desc(w + s, e - s);
		else if (sort_keys(w + s, v + s, b->runs, e - s) != w + s)
			memcpy(w + s, v + s, (size_t)(e - s) * sizeof *w);
	}
	b0_swap(b);
}

/* Earliest time in the lowest non-empty bucket (mask != 0). */
static simtime_t lowest_min(const struct evq *q, unsigned *bi)
{
	unsigned i = mask_first(q);
	*bi = i;
	return q->b[i].min;
}

/* Take bucket i, of one slot (i < EVQ_FIRST_FAR), whole into b0 (empty),
 * sorted, and make its latest time `last`: every other bucket holds later
 * times, and stays in the bucket it is in, since `last` keeps its digits
 * above the slot's. */
static void take_whole(struct evq *q, unsigned i)
{
	struct evq_list *src = &q->b[i];
	struct evq_bucket *b = &q->b0;
	simtime_t lo = src->min, hi = 0;
	uint32_t last_n;
	struct evq_chunk *c = list_take(src, &last_n);
	mask_clear(q, i);
	while (c) {
		__builtin_prefetch(c->next);
		uint32_t cn = chunk_n(c, last_n);
		if (__builtin_expect(b->cap < b->n + cn, 0))
			b0_reserve(b, b->n + cn);
		struct evs *d = b->v + b->n;
		for (uint32_t j = 0; j < cn; j++) {
			d[j] = c->v[j];
			hi = c->v[j].t > hi ? c->v[j].t : hi;
		}
		b->n += cn;
		struct evq_chunk *nx = c->next;
		chunk_put(q, c);
		c = nx;
	}
	q->last = hi;
	if (b->n > 1)
		sort_slot(b, lo, hi);
	b->tail = 0;
}

/* Move far bucket i down around its minimum m (b0 empty): the events of
 * time m fill b0, the others go to lower buckets. */
static void redistribute(struct evq *q, unsigned i, simtime_t m)
{
	if (i < EVQ_FIRST_FAR) {
		take_whole(q, i);
		return;
	}
	uint32_t last_n;
	struct evq_chunk *c = list_take(&q->b[i], &last_n);
	q->last = m;
	mask_clear(q, i);
	while (c) {
		/* chunks lie anywhere: the next one's header, while this one's
		 * events stream in */
		__builtin_prefetch(c->next);
		for (uint32_t j = 0, cn = chunk_n(c, last_n); j < cn; j++) {
			const struct evs *e = &c->v[j];
			unsigned k = bucket_of(e->t, m); /* k < i */
			if (k == 0) {
				struct evq_bucket *b = &q->b0;
				if (__builtin_expect(b->n == b->cap, 0))
					bucket_grow(b);
				b->v[b->n++] = *e;
			} else {
				list_push(q, &q->b[k], e);
				mask_set(q, k);
			}
		}
		struct evq_chunk *nx = c->next;
		chunk_put(q, c);
		c = nx;
	}
	if (q->b0.n > 1)
		sort_refill(&q->b0);
	q->b0.tail = 0;
}

/* Bring the next times into b0 until it holds EVQ_AHEAD events, none of
 * them later than EVQ_HORIZON past now (b0 empty: the next time, however far).
 * The events b0 holds are earlier than every bucket's, so they go back behind
 * the new time's, in the order they had. The order events are handled in is
 * the same as without this; only how far ahead the run loop sees changes. */
static void top_up(struct evq *q)
{
	struct evq_bucket *b = &q->b0;
	while (b->n < EVQ_AHEAD) {
		unsigned i;
		simtime_t m = lowest_min(q, &i);
		if (i == 0 || (b->n && m > q->now + EVQ_HORIZON))
			return;
		/* copies of a constant size (a few vector moves; a copy of k
		 * events would be a `rep movs`, a quarter of the hold model's time):
		 * the slots past the k kept ones go along unread, so b0 has
		 * room for EVQ_AHEAD events whatever k is */
		struct evs keep[EVQ_AHEAD];
		uint32_t k = b->n;
		if (k) {
			if (__builtin_expect(b->cap < EVQ_AHEAD, 0))
				b0_reserve(b, EVQ_AHEAD);
			memcpy(keep, b->v, sizeof keep);
		}
		b->n = 0;
		redistribute(q, i, m);
		if (k) {
			if (b->cap < b->n + EVQ_AHEAD)
				b0_reserve(b, b->n + EVQ_AHEAD);
			memcpy(b->v + b->n, keep, sizeof keep);
			b->n += k;
		}
	}
}

simtime_t evq_next_time(const struct evq *q)
{
	if (q->n == 0)
		return SIMTIME_MAX;
	const struct evq_bucket *b = &q->b0;
	if (b->n) { /* the earliest of the ordered part and of the tail */
		simtime_t t = b->n > b->tail ? b->v[b->n - 1 - b->tail].t : SIMTIME_MAX;
		for (uint32_t j = b->n - b->tail; j < b->n; j++)
			if (b->v[j].t < t)
				t = b->v[j].t;
		return t;
	}
	unsigned i;
	return lowest_min(q, &i);
}

bool evq_pop_until(struct evq *q, simtime_t until, struct ev *e)
{
	if (q->n == 0)
		return false;
	if (__builtin_expect(q->b0.tail != 0, 0))
		b0_merge(&q->b0);
	if (q->b0.n < EVQ_AHEAD)
		top_up(q);
	if (q->b0.v[q->b0.n - 1].t > until)
		return false;
	*e = unpack(&q->b0.v[--q->b0.n]);
	q->n--;
	return true;
}

/* The first EVQ_PREFETCH_LINES cache lines of an event's object (a
 * connection's), or the lines its handler asked for: an arrival's node, the
 * first alone (a host is one line, and the next three belong to other
 * allocations, each a wasted miss that would hold one of the core's few
 * outstanding-miss slots); an end of transmission's port, its three hot
 * lines (net/port.h). Then its argument, for the handlers that said it is
 * an address (an arrival's packet, an end of transmission's hint); for the
 * others, and for a null address, the object's first line again, which costs
 * nothing and needs no branch. A timer's argument is 0, and a prefetch of
 * page 0, which nothing maps, is not free: skipping such arguments saves 3-5%
 * on RoCEv2's 4-QP point at 8192 hosts
 * (bench/notes/2026-11-27-prefetching-non-addresses.md). */
static inline void prefetch_event(const struct evs *e)
{
	unsigned id = (unsigned)(e->key & 255), m = ahead[id].lines;
	uintptr_t o = (uintptr_t)e->obj;
	if (!m)
		evq_prefetch_lines(e->obj, 64 * EVQ_PREFETCH_LINES);
	else
		for (; m; m &= m - 1)
			__builtin_prefetch((const void *)(o + 64 * (unsigned)__builtin_ctz(m)));
	uintptr_t a = ahead[id].arg && e->arg ? (uintptr_t)e->arg : o;
	__builtin_prefetch((const void *)a);
}

void evq_drain(struct evq *q, void (*fn)(void *ctx, const struct ev *e), void *ctx)
{
	for (uint32_t j = 0; j < q->b0.n; j++) {
		struct ev e = unpack(&q->b0.v[j]);
		fn(ctx, &e);
	}
	q->b0.n = q->b0.tail = 0;
	for (unsigned i = 1; i < EVQ_BUCKETS; i++) {
		if (!q->b[i].head)
			continue;
		uint32_t last_n;
		struct evq_chunk *c = list_take(&q->b[i], &last_n);
		while (c) {
			for (uint32_t j = 0, cn = chunk_n(c, last_n); j < cn; j++) {
				struct ev e = unpack(&c->v[j]);
				fn(ctx, &e);
			}
			struct evq_chunk *nx = c->next;
			chunk_put(q, c);
			c = nx;
		}
	}
	memset(q->mask, 0, sizeof q->mask);
	q->n = 0;
}

static void rehandle_run(struct evs *v, uint32_t n, uint64_t from, uint64_t to,
			 bool (*sel)(const void *ctx, const void *obj, uint64_t arg),
			 const void *ctx)
{
	for (uint32_t j = 0; j < n; j++)
		if ((v[j].key & 255) == from && sel(ctx, v[j].obj, v[j].arg))
			v[j].key = (v[j].key & ~(uint64_t)255) | to;
}

void evq_rehandle(struct evq *q, ev_fn from, ev_fn to,
		  bool (*sel)(const void *ctx, const void *obj, uint64_t arg), const void *ctx)
{
	/* the order of events never reads the id below the key (keys are
	 * unique), so neither b0's sort nor a bucket's minimum changes */
	uint64_t a = handler_id(from), b = handler_id(to);
	rehandle_run(q->b0.v, q->b0.n, a, b, sel, ctx);
	for (unsigned i = 1; i < EVQ_BUCKETS; i++) {
		if (!q->b[i].head)
			continue;
		uint32_t last_n = list_last_n(&q->b[i]);
		for (struct evq_chunk *c = q->b[i].head; c; c = c->next)
			rehandle_run(c->v, chunk_n(c, last_n), a, b, sel, ctx);
	}
}

bool evq_peek(struct evq *q, simtime_t *t, uint64_t *key)
{
	if (q->n == 0)
		return false;
	if (q->b0.tail != 0)
		b0_merge(&q->b0);
	if (q->b0.n < EVQ_AHEAD)
		top_up(q);
	const struct evs *e = &q->b0.v[q->b0.n - 1];
	*t = e->t;
	*key = e->key >> 8;
	return true;
}

struct ev evq_pop(struct evq *q)
{
	struct ev e;
	if (!evq_pop_until(q, SIMTIME_MAX, &e))
		MP_PANIC("evq_pop on an empty queue");
	return e;
}

uint64_t evq_run(struct evq *q, simtime_t until)
{
	return evq_run_n(q, until, UINT64_MAX);
}

uint64_t evq_run_n(struct evq *q, simtime_t until, uint64_t budget)
{
	uint64_t start = q->processed;
	struct ev e;
	q->stop = false;
	while (!q->stop && q->processed - start < budget && evq_pop_until(q, until, &e)) {
		q->now = e.t;
		q->processed++;
		if (q->b0.n >= EVQ_PREFETCH_LATE) {
			const struct evs *nx = &q->b0.v[q->b0.n - EVQ_PREFETCH_LATE];
			evq_prefetch_fn pf = late_prefetchers[nx->key & 255];
			if (pf)
				pf(nx->obj, nx->arg);
		}
		if (q->b0.n >= EVQ_PREFETCH_PF) {
			/* that event's own prefetcher: its object and argument
			 * arrived during the previous events, so it can look deeper */
			const struct evs *nx = &q->b0.v[q->b0.n - EVQ_PREFETCH_PF];
			evq_prefetch_fn pf = prefetchers[nx->key & 255];
			if (pf)
				pf(nx->obj, nx->arg);
		}
		if (q->b0.n >= EVQ_PREFETCH) {
			/* the object (and the argument, when its handler said it
			 * is an address) of the event a few places ahead loads
			 * while this one and the next run */
			prefetch_event(&q->b0.v[q->b0.n - EVQ_PREFETCH]);
		} else if (q->b0.n) {
			prefetch_event(&q->b0.v[0]);
		}
		e.fn(e.obj, e.arg);
	}
	return q->processed - start;
}

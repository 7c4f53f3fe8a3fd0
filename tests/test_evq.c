/* test_evq.c - event order, tie-breaking on (time, creator, creator's
 * sequence), growth of the heap, and the run loop's limits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/evq.h"
#include "core/rng.h"
#include "core/time.h"

static uint64_t order[4096];
static size_t norder;

static void record(void *obj, uint64_t arg)
{
	(void)obj;
	order[norder++] = arg;
}

/* time_ser_exact's 64-bit path (packets) and its 128-bit one give the same
 * times and remainders: on both sides of the 2^21-byte and 2^60 limits, a
 * long run of packets at a rate that never divides evenly. */
static void test_ser_exact_paths(void **state)
{
	(void)state;
	static const uint64_t rates[] = { 3000000001ULL, 400000000000ULL, 1600000000003ULL };
	static const uint64_t sizes[] = { 64, 4160, (1u << 21) - 1, 1u << 21, 9000000 };
	for (int r = 0; r < 3; r++)
		for (int z = 0; z < 5; z++) {
			uint64_t rem = 0, rem128 = 0;
			for (int i = 0; i < 1000; i++) {
				unsigned __int128 n =
				    (unsigned __int128)sizes[z] * 8u * PS_PER_S + rem128;
				uint64_t want = (uint64_t)(n / rates[r]);
				rem128 = (uint64_t)(n % rates[r]);
				assert_int_equal(time_ser_exact(sizes[z], rates[r], &rem), want);
				assert_int_equal(rem, rem128);
			}
		}
	/* a remainder at and above 2^60 (a rate above 2^60 bit/s) takes the
	 * 128-bit path */
	uint64_t big = (1ull << 62) + 7, rem = (1ull << 60) + 1;
	unsigned __int128 n = (unsigned __int128)4096 * 8u * PS_PER_S + rem;
	uint64_t want = (uint64_t)(n / big), wrem = (uint64_t)(n % big);
	assert_int_equal(time_ser_exact(4096, big, &rem), want);
	assert_int_equal(rem, wrem);
}

static void test_time_order(void **state)
{
	(void)state;
	struct evq q;
	evq_init(&q);
	struct ev_src src = { .id = 7 };
	struct mp_rng r;
	rng_init(&r, 1, RNG_TEST, 0);
	norder = 0;
	simtime_t t[2000];
	for (int i = 0; i < 2000; i++) {
		t[i] = rng_below(&r, 1000000);
		evq_at(&q, &src, t[i], record, NULL, t[i]);
	}
	assert_int_equal(evq_run(&q, SIMTIME_MAX), 2000);
	for (size_t i = 1; i < norder; i++)
		assert_true(order[i - 1] <= order[i]);
	assert_int_equal(q.processed, 2000);
	evq_free(&q);
}

static void test_tie_break(void **state)
{
	(void)state;
	struct evq q;
	evq_init(&q);
	struct ev_src a = { .id = 5 }, b = { .id = 3 }, c = { .id = 9 };
	norder = 0;
	/* same time: creator 3 first (its own order), then 5, then 9, whatever
	 * the order of insertion */
	evq_at(&q, &c, 100, record, NULL, 90);
	evq_at(&q, &a, 100, record, NULL, 50);
	evq_at(&q, &b, 100, record, NULL, 30);
	evq_at(&q, &a, 100, record, NULL, 51);
	evq_at(&q, &b, 100, record, NULL, 31);
	evq_at(&q, &c, 99, record, NULL, 1);
	evq_run(&q, SIMTIME_MAX);
	uint64_t want[] = { 1, 30, 31, 50, 51, 90 };
	assert_int_equal(norder, 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(order[i], want[i]);
	evq_free(&q);
}

static void test_until_and_budget(void **state)
{
	(void)state;
	struct evq q;
	evq_init(&q);
	struct ev_src s = { .id = 1 };
	norder = 0;
	for (int i = 0; i < 10; i++)
		evq_at(&q, &s, (simtime_t)i * 10, record, NULL, (uint64_t)i);
	assert_int_equal(evq_run(&q, 45), 5); /* 0,10,20,30,40 */
	assert_int_equal(evq_next_time(&q), 50);
	assert_int_equal(evq_run_n(&q, SIMTIME_MAX, 2), 2);
	assert_int_equal(q.now, 60);
	assert_int_equal(evq_run(&q, SIMTIME_MAX), 3);
	assert_true(evq_empty(&q));
	evq_free(&q);
}

/* hold model: pop one, push one at now + random; the heap must stay ordered
 * through many growth steps */
static void test_hold_model(void **state)
{
	(void)state;
	struct evq q;
	evq_init(&q);
	struct ev_src s = { .id = 2 };
	struct mp_rng r;
	rng_init(&r, 2, RNG_TEST, 0);
	for (int i = 0; i < 5000; i++)
		evq_at(&q, &s, rng_below(&r, 10000), record, NULL, 0);
	simtime_t last = 0;
	for (int i = 0; i < 100000; i++) {
		struct ev e = evq_pop(&q);
		assert_true(e.t >= last);
		last = e.t;
		q.now = e.t;
		evq_at(&q, &s, e.t + rng_below(&r, 10000), record, NULL, 0);
	}
	assert_int_equal(q.n, 5000);
	evq_free(&q);
}

/* Slots taken whole (evq.h): times crowded into 256 ps slots, many times a
 * slot and many events a time, pushes during the run both inside the slot
 * being handled (under 256 ps ahead) and beyond it. Every push is later than
 * now, so a correct queue pops (time, key) strictly increasing, and any event
 * popped before an earlier one shows as a step back. */
static void test_slot_order(void **state)
{
	(void)state;
	struct evq q;
	evq_init(&q);
	struct ev_src src[64];
	for (uint32_t i = 0; i < 64; i++)
		src[i] = (struct ev_src){ .id = i + 1 };
	struct mp_rng r;
	rng_init(&r, 3, RNG_TEST, 0);
	size_t pushed = 0, popped = 0;
	for (int i = 0; i < 20000; i++, pushed++) {
		/* a few hundred slots, a few times in each: groups of dozens */
		simtime_t t = 1000 + 256 * rng_below(&r, 300) + 16 * rng_below(&r, 8);
		evq_at(&q, &src[rng_below(&r, 64)], t, record, NULL, 0);
	}
	simtime_t lt = 0;
	uint64_t lk = 0;
	int steps_back = 0;
	while (!evq_empty(&q)) {
		struct ev e = evq_pop(&q);
		popped++;
		if (popped > 1 && (e.t < lt || (e.t == lt && e.key <= lk)))
			steps_back++;
		lt = e.t;
		lk = e.key;
		q.now = e.t;
		if (pushed >= 200000)
			continue;
		for (uint64_t k = rng_below(&r, 3); k-- > 0; pushed++) {
			uint64_t c = rng_below(&r, 4);
			simtime_t d = c == 0   ? 1 + rng_below(&r, 255)
				      : c == 1 ? 256 + rng_below(&r, 70000)
				      : c == 2 ? 16 * (1 + rng_below(&r, 4))
					       : rng_below(&r, 5000000) + 1;
			evq_at(&q, &src[rng_below(&r, 64)], e.t + d, record, NULL, 0);
		}
	}
	assert_int_equal(steps_back, 0);
	assert_int_equal(popped, pushed);
	evq_free(&q);
}

/* many events at one time from many creators: popped in key order */
static void test_many_ties(void **state)
{
	(void)state;
	struct evq q;
	evq_init(&q);
	struct ev_src src[300];
	struct mp_rng r;
	rng_init(&r, 3, RNG_TEST, 0);
	for (int i = 0; i < 300; i++)
		src[i] = (struct ev_src){ .id = (uint32_t)(rng_below(&r, 1000000) + 1) };
	norder = 0;
	for (int k = 0; k < 4; k++)
		for (int i = 0; i < 300; i++)
			evq_at(&q, &src[i], 5000, record, NULL,
			       evq_key(&(struct ev_src){ src[i].id, src[i].seq }));
	evq_at(&q, &src[0], 4999, record, NULL, 0);
	evq_run(&q, SIMTIME_MAX);
	assert_int_equal(norder, 1201);
	for (size_t i = 2; i < norder; i++)
		assert_true(order[i - 1] < order[i]);
	evq_free(&q);
}

/* A refill of b0 sorts the events of one time with a natural merge sort that
 * starts from the ascending runs of their push order: groups of every size
 * around its thresholds, pushed as one run, as descending keys (runs of one),
 * as runs of random length (odd and even counts of runs), and shuffled, all
 * come out in key order, each event once. */
static void test_refill_runs(void **state)
{
	(void)state;
	static const uint32_t sizes[] = { 2, 8, 9, 10, 17, 64, 257, 1000, 4000 };
	struct mp_rng r;
	rng_init(&r, 11, RNG_TEST, 0);
	size_t bad = 0, groups = 0;
	for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
		for (int pattern = 0; pattern < 4; pattern++) {
			uint32_t n = sizes[si];
			struct evq q;
			evq_init(&q);
			uint64_t keys[4000];
			for (uint32_t i = 0; i < n; i++)
				keys[i] =
				    ((uint64_t)(i + 1) << EVQ_SEQ_BITS) | (uint64_t)(i * 7 % 5);
			if (pattern == 1) { /* descending */
				for (uint32_t i = 0; i < n / 2; i++) {
					uint64_t t = keys[i];
					keys[i] = keys[n - 1 - i];
					keys[n - 1 - i] = t;
				}
			} else if (pattern >= 2) { /* shuffled, then (2) runs sorted */
				for (uint32_t i = n - 1; i > 0; i--) {
					uint32_t j = (uint32_t)rng_below(&r, i + 1);
					uint64_t t = keys[i];
					keys[i] = keys[j];
					keys[j] = t;
				}
				for (uint32_t i = 0; pattern == 2 && i < n;) {
					uint32_t len = 1 + (uint32_t)rng_below(&r, 40);
					if (len > n - i)
						len = n - i;
					for (uint32_t a = i + 1; a < i + len; a++)
						for (uint32_t b = a; b > i && keys[b - 1] > keys[b];
						     b--) {
							uint64_t t = keys[b];
							keys[b] = keys[b - 1];
							keys[b - 1] = t;
						}
					i += len;
				}
			}
			for (uint32_t i = 0; i < n; i++)
				evq_push(&q, 1000, keys[i], record, NULL, keys[i]);
			norder = 0;
			evq_run(&q, SIMTIME_MAX);
			bad += norder != n;
			for (size_t i = 1; i < norder; i++)
				bad += order[i - 1] >= order[i];
			groups++;
			evq_free(&q);
		}
	assert_int_equal(groups, 36);
	assert_int_equal(bad, 0);
}

/* Large groups of one time are sorted on their creators alone, stably
 * (sort_radix): a creator's events, pushed in their sequence order between
 * other creators', come out in key order. One creator alone (every byte of
 * the id shared); creators that share their lowest byte (a pass skipped)
 * or their upper ones; each case in groups above and below the radix sort's
 * threshold. */
static void test_radix_groups(void **state)
{
	(void)state;
	static const uint32_t sizes[] = { 40, 48, 200, 3000 };
	struct mp_rng r;
	rng_init(&r, 5, RNG_TEST, 0);
	size_t bad = 0;
	for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
		for (int pattern = 0; pattern < 3; pattern++) {
			uint32_t n = sizes[si], ncr = pattern == 0 ? 1 : 37;
			struct ev_src src[37];
			for (uint32_t c = 0; c < ncr;
			     c++) /* ids: 7, then (c + 1) << 8 | 9, then c + 1 */
				src[c] = (struct ev_src){ .id = pattern == 0   ? 7
								: pattern == 1 ? (c + 1) << 8 | 9
									       : c + 1,
							  .seq = (uint32_t)rng_below(&r, 1000) };
			struct evq q;
			evq_init(&q);
			for (uint32_t i = 0; i < n; i++) {
				uint64_t k = evq_key(&src[rng_below(&r, ncr)]);
				evq_push(&q, 1000, k, record, NULL, k);
			}
			norder = 0;
			evq_run(&q, SIMTIME_MAX);
			bad += norder != n;
			for (size_t i = 1; i < norder; i++)
				bad += order[i - 1] >= order[i];
			evq_free(&q);
		}
	assert_int_equal(bad, 0);
}

/* Events pushed for the current time, before any pop (what building a fabric
 * does when thousands of flows start at t = 0) and by handlers while others of
 * that time wait: every pop is the smallest key pending. Covers both of b0's
 * paths, the short in-place insert and the tail merged at the next pop. */
static struct {
	struct evq *q;
	uint64_t pend[8192]; /* keys pending, unordered */
	size_t npend, popped, bad;
	struct mp_rng r;
} burst;

static void burst_pop(void *obj, uint64_t key)
{
	(void)obj;
	size_t m = 0;
	for (size_t i = 1; i < burst.npend; i++)
		if (burst.pend[i] < burst.pend[m])
			m = i;
	burst.bad += burst.npend == 0 || burst.pend[m] != key;
	burst.pend[m] = burst.pend[--burst.npend];
	burst.popped++;
	/* every third event pushes two more for now, from random creators */
	for (int k = 0; burst.popped % 3 == 0 && k < 2 && burst.npend < 8190; k++) {
		struct ev_src s = { .id = (uint32_t)(rng_below(&burst.r, 1u << 20) + 1),
				    .seq = rng_below(&burst.r, 1000) };
		uint64_t nk = evq_key(&s);
		burst.pend[burst.npend++] = nk;
		evq_push(burst.q, burst.q->now, nk, burst_pop, NULL, nk);
	}
}

static void test_same_time_burst(void **state)
{
	(void)state;
	struct evq q;
	evq_init(&q);
	memset(&burst, 0, sizeof burst);
	burst.q = &q;
	rng_init(&burst.r, 5, RNG_TEST, 0);
	/* ascending keys (each new one moves every other: the quadratic case of
	 * plain insertion), then random ones */
	for (uint32_t i = 0; i < 4000; i++) {
		struct ev_src s = { .id = i < 2000 ? i + 1
						   : (uint32_t)rng_below(&burst.r, 1u << 20) + 1,
				    .seq = i };
		uint64_t key = evq_key(&s);
		burst.pend[burst.npend++] = key;
		evq_push(&q, 0, key, burst_pop, NULL, key);
	}
	evq_run(&q, SIMTIME_MAX);
	assert_int_equal(burst.bad, 0);
	assert_int_equal(burst.npend, 0);
	assert_true(burst.popped > 5000); /* the handlers' pushes ran too */
	assert_int_equal(burst.popped, q.processed);
	evq_free(&q);
}

/* The run loop sees a few events ahead in b0, across times: events of many
 * nearby times, handlers pushing more both inside that window (at now, and
 * between now and the events already there) and past it, and runs stopped at
 * arbitrary times. Every pop is the earliest (time, key) pending, and
 * evq_next_time is the earliest time pending. */
static struct {
	struct evq *q;
	simtime_t t[8192];
	uint64_t key[8192];
	size_t n, popped, bad;
	struct mp_rng r;
} ahead;

static size_t ahead_earliest(void)
{
	size_t m = 0;
	for (size_t i = 1; i < ahead.n; i++)
		if (ahead.t[i] < ahead.t[m] ||
		    (ahead.t[i] == ahead.t[m] && ahead.key[i] < ahead.key[m]))
			m = i;
	return m;
}

static void ahead_pop(void *obj, uint64_t key);

static void ahead_push(simtime_t t)
{
	struct ev_src s = { .id = (uint32_t)(rng_below(&ahead.r, 1u << 20) + 1),
			    .seq = rng_below(&ahead.r, 1000) };
	uint64_t k = evq_key(&s);
	ahead.t[ahead.n] = t;
	ahead.key[ahead.n++] = k;
	evq_push(ahead.q, t, k, ahead_pop, NULL, k);
}

static void ahead_pop(void *obj, uint64_t key)
{
	(void)obj;
	size_t m = ahead_earliest();
	ahead.bad += ahead.n == 0 || ahead.key[m] != key || ahead.t[m] != ahead.q->now;
	ahead.t[m] = ahead.t[--ahead.n];
	ahead.key[m] = ahead.key[ahead.n];
	ahead.popped++;
	/* 0-2 more: now, a few ps to 3 ns on (inside the window), or 0.5 us on */
	static const simtime_t spread[] = { 1, 40, 3000, 500000 };
	for (uint64_t k = rng_below(&ahead.r, 3); k > 0 && ahead.n < 8190 && ahead.popped < 60000;
	     k--)
		ahead_push(ahead.q->now + rng_below(&ahead.r, spread[rng_below(&ahead.r, 4)]));
}

static void test_lookahead_order(void **state)
{
	(void)state;
	struct evq q;
	evq_init(&q);
	memset(&ahead, 0, sizeof ahead);
	ahead.q = &q;
	rng_init(&ahead.r, 9, RNG_TEST, 0);
	/* 2,000 events over 2 us, half of them on whole nanoseconds (ties) */
	for (int i = 0; i < 2000; i++)
		ahead_push(i % 2 ? rng_below(&ahead.r, 2000000) : 1000 * rng_below(&ahead.r, 2000));
	simtime_t until = 0;
	while (!evq_empty(&q)) {
		assert_int_equal(evq_next_time(&q), ahead.t[ahead_earliest()]);
		until += rng_below(&ahead.r, 50000);
		evq_run(&q, until);
		ahead.bad += !evq_empty(&q) && evq_next_time(&q) <= until;
	}
	assert_int_equal(ahead.bad, 0);
	assert_int_equal(ahead.n, 0);
	assert_true(ahead.popped > 50000);
	evq_free(&q);
}

static void record_other(void *obj, uint64_t arg)
{
	(void)obj;
	order[norder++] = arg | 1u << 20;
}

static bool odd_arg(const void *ctx, const void *obj, uint64_t arg)
{
	(void)obj;
	return arg % 2 == (uint64_t)(uintptr_t)ctx;
}

/* Two queues given the same 3000 events: random times from the current one
 * (bucket 0) to far ahead (the other buckets), half of them ties, from three
 * creators; events run `record` with their index. */
static void twin_queues(struct evq *q, struct evq *r, uint64_t seed)
{
	evq_init(q);
	evq_init(r);
	struct mp_rng g;
	rng_init(&g, seed, RNG_TEST, 0);
	struct ev_src sq[3] = { { .id = 1 }, { .id = 2 }, { .id = 3 } }, sr[3];
	memcpy(sr, sq, sizeof sr);
	for (uint64_t i = 0; i < 3000; i++) {
		simtime_t t = i % 2 ? rng_below(&g, 1u << 30) : 1000 * rng_below(&g, 50);
		unsigned c = (unsigned)rng_below(&g, 3);
		evq_at(q, &sq[c], t, record, NULL, i);
		evq_at(r, &sr[c], t, record, NULL, i);
	}
}

/* evq_rehandle gives the chosen pending events another handler and leaves
 * every event's place in the order: 3,000 events from three creators, at
 * times from the current one (bucket 0) to far ahead (the other buckets),
 * half of them ties; the odd ones are rehandled after a few have run. */
static void test_rehandle(void **state)
{
	(void)state;
	struct evq q, r;
	twin_queues(&q, &r, 3);
	static uint64_t want[3000];
	norder = 0;
	evq_run_n(&r, SIMTIME_MAX, 3000);
	memcpy(want, order, sizeof want);
	norder = 0;
	evq_run_n(&q, SIMTIME_MAX, 100);
	evq_rehandle(&q, record, record_other, odd_arg, (const void *)(uintptr_t)1);
	evq_run(&q, SIMTIME_MAX);
	assert_int_equal(norder, 3000);
	for (int i = 0; i < 3000; i++) {
		bool moved = i >= 100 && want[i] % 2;
		assert_int_equal(order[i], want[i] | (moved ? 1u << 20 : 0));
	}
	evq_free(&q);
	evq_free(&r);
}

/* evq_peek names the event the next pop takes, time and key, and changes
 * nothing of the order: a queue peeked before every pop runs its 3000 events
 * as an untouched one does (events of random times, many of them shared,
 * from three creators). */
static void test_peek(void **state)
{
	(void)state;
	struct evq q, r;
	twin_queues(&q, &r, 5);
	static uint64_t want[3000];
	norder = 0;
	evq_run(&r, SIMTIME_MAX);
	memcpy(want, order, sizeof want);
	norder = 0;
	simtime_t t;
	uint64_t key;
	for (int i = 0; i < 3000; i++) {
		assert_true(evq_peek(&q, &t, &key));
		struct ev e = evq_pop(&q);
		assert_int_equal(t, e.t);
		assert_int_equal(key, e.key);
		e.fn(e.obj, e.arg);
	}
	assert_false(evq_peek(&q, &t, &key));
	for (int i = 0; i < 3000; i++)
		assert_int_equal(order[i], want[i]);
	evq_free(&q);
	evq_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_order),
		cmocka_unit_test(test_tie_break),
		cmocka_unit_test(test_until_and_budget),
		cmocka_unit_test(test_hold_model),
		cmocka_unit_test(test_many_ties),
		cmocka_unit_test(test_same_time_burst),
		cmocka_unit_test(test_refill_runs),
		cmocka_unit_test(test_ser_exact_paths),
		cmocka_unit_test(test_lookahead_order),
		cmocka_unit_test(test_rehandle),
		cmocka_unit_test(test_slot_order),
		cmocka_unit_test(test_radix_groups),
		cmocka_unit_test(test_peek),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_training.c - a training workload's summary (stats/training.c:
 * train_summarise), on records checked by hand:
 *  - rank 0 computes [0, 10) and [20, 30) us; communication A runs [5, 25),
 *    B [15, 40): A is exposed where no compute covers it, [10, 20) = 10 us;
 *    B counts only past A's end, [25, 40) less the compute [25, 30) = 10 us
 *    (a rank's exposed times add up to the time it waited for the network
 *    alone, [10, 20) and [30, 40), never the overlap of A and B twice);
 *  - rank 1 computes [0, 50) and communicates [40, 45), hidden: exposed 0;
 *    it ends last, so it is the slowest rank, with nothing it waited for;
 *  - a second iteration of rank 0, computing [40, 100) and communicating
 *    [100, 120): two iterations ending at 50 and 120 us, mean 60 us; rank 0
 *    now the slowest, with 40 us exposed in all, longest (20 us) in that last
 *    communication.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/mem.h"
#include "stats/result.h"

#define US 1000000ull

static struct train_rec rec(uint32_t rank, uint32_t iter, bool comm, uint64_t a, uint64_t b)
{
	return (struct train_rec){ .rank = rank,
				   .iter = iter,
				   .layer = "l",
				   .what = comm ? "X" : "",
				   .phase = "node",
				   .comm = comm,
				   .start = a * US,
				   .end = b * US };
}

static void setup(struct run_result *r, bool second)
{
	struct train_rec v[] = { rec(1, 0, true, 40, 45),   rec(0, 0, true, 15, 40),
				 rec(0, 0, false, 0, 10),   rec(1, 0, false, 0, 50),
				 rec(0, 0, true, 5, 25),    rec(0, 0, false, 20, 30),
				 rec(0, 1, false, 40, 100), rec(0, 1, true, 100, 120) };
	size_t n = second ? 8 : 6;
	memset(r, 0, sizeof *r);
	r->train = mp_malloc(n * sizeof *r->train);
	memcpy(r->train, v, n * sizeof *v);
	r->ntrain = n;
	train_summarise(r);
}

static simtime_t exposed_of(const struct run_result *r, uint32_t rank, uint64_t start)
{
	for (size_t i = 0; i < r->ntrain; i++)
		if (r->train[i].rank == rank && r->train[i].start == start * US && r->train[i].comm)
			return r->train[i].exposed;
	fail_msg("no communication of rank %u at %llu us", rank, (unsigned long long)start);
	return 0;
}

static void test_exposed(void **state)
{
	struct run_result r;
	(void)state;
	setup(&r, false);
	assert_int_equal(exposed_of(&r, 0, 5), 10 * US);
	assert_int_equal(exposed_of(&r, 0, 15), 10 * US);
	assert_int_equal(exposed_of(&r, 1, 40), 0);
	assert_int_equal(r.training.ranks, 2);
	assert_int_equal(r.training.iters, 1);
	assert_int_equal(r.training.iteration, 50 * US);
	assert_int_equal(r.training.slowest, 1);
	assert_int_equal(r.training.compute, 50 * US);
	assert_int_equal(r.training.exposed, 0);
	assert_true(r.training.waited == SIZE_MAX);
	for (size_t i = 1; i < r.ntrain; i++) /* sorted by rank, then start */
		assert_true(r.train[i - 1].rank < r.train[i].rank ||
			    (r.train[i - 1].rank == r.train[i].rank &&
			     r.train[i - 1].start <= r.train[i].start));
	run_result_free(&r);
}

static void test_iterations(void **state)
{
	struct run_result r;
	(void)state;
	setup(&r, true);
	assert_int_equal(r.training.iters, 2);
	assert_int_equal(r.training.iter_end[0], 50 * US);
	assert_int_equal(r.training.iter_end[1], 120 * US);
	assert_int_equal(r.training.iteration, 60 * US);
	assert_int_equal(r.training.slowest, 0);
	/* 20 us of [10, 20) and [30, 40), then the second iteration's 20 us */
	assert_int_equal(r.training.exposed, 40 * US);
	assert_int_equal(r.train[r.training.waited].exposed, 20 * US);
	assert_int_equal(r.train[r.training.waited].start, 100 * US);
	run_result_free(&r);
}

/* Ranks 0 and 1 both end at 30 us with a collective; rank 0 reached it at
 * 10 us and waited 15 us for rank 1, which arrived at 25: rank 1 is the
 * straggler, the slowest, though rank 0 is lower. */
static void test_straggler(void **state)
{
	struct run_result r;
	(void)state;
	memset(&r, 0, sizeof r);
	r.train = mp_malloc(4 * sizeof *r.train);
	r.train[0] = rec(0, 0, false, 0, 10);
	r.train[1] = rec(0, 0, true, 10, 30);
	r.train[1].peers = 15 * US;
	r.train[2] = rec(1, 0, false, 0, 25);
	r.train[3] = rec(1, 0, true, 25, 30);
	r.ntrain = 4;
	train_summarise(&r);
	assert_int_equal(r.training.slowest, 1);
	assert_int_equal(r.training.exposed, 5 * US);
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exposed),
		cmocka_unit_test(test_iterations),
		cmocka_unit_test(test_straggler),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_rng.c - random streams (core/rng.h): one stream per entity (kind, id),
 * draws in range, and the one shuffle every module uses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/rng.h"

static void test_streams(void **state)
{
	struct mp_rng a, b, c;
	rng_init(&a, 1, RNG_TEST, 5);
	rng_init(&b, 1, RNG_TEST, 5);
	rng_init(&c, 1, RNG_TEST, 6);
	uint64_t x = rng_next(&a);
	assert_true(x == rng_next(&b));
	assert_true(x != rng_next(&c));
	for (int i = 0; i < 1000; i++)
		assert_true(rng_below(&a, 7) < 7);
}

/* rng_shuffle_head draws j = i + rng_below(n - i) for i = 0 .. k - 1 in that
 * order (what results depend on), and leaves a permutation of v. */
static void test_shuffle_head(void **state)
{
	enum { N = 50 };
	for (uint32_t k = 0; k <= N; k += 7) {
		uint32_t v[N], w[N], seen[N] = { 0 };
		struct mp_rng a, b;
		for (uint32_t i = 0; i < N; i++)
			v[i] = w[i] = i;
		rng_init(&a, 3, RNG_TEST, k);
		rng_init(&b, 3, RNG_TEST, k);
		rng_shuffle_head(&a, v, N, k);
		for (uint32_t i = 0; i < k; i++) {
			uint32_t j = i + (uint32_t)rng_below(&b, N - i), t = w[i];
			w[i] = w[j];
			w[j] = t;
		}
		assert_memory_equal(v, w, sizeof v);
		assert_true(rng_next(&a) == rng_next(&b)); /* as many draws */
		for (uint32_t i = 0; i < N; i++)
			seen[v[i]]++;
		for (uint32_t i = 0; i < N; i++)
			assert_int_equal(seen[i], 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_shuffle_head),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

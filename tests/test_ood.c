/* test_ood.c - the out-of-order degree receivers note (transport/conn.h
 * tp_rx_ood) and the p99_ood / max_ood metrics built from it. */
#include "simtest.h"

#include <math.h>
#include <stdlib.h>

#include "transport/conn.h"
#include "transport/tp_world.h"

/* PSNs 0 1 3 2 5 4 4 9 6: each one's distance below the highest seen so far */
static void test_degree(void **state)
{
	(void)state;
	struct tp_world w = { .ood_hist = calloc(TP_OOD_MAX + 1, sizeof(uint64_t)) };
	struct conn *c = calloc(1, sizeof *c);
	c->w = &w;
	static const uint64_t psn[] = { 0, 1, 3, 2, 5, 4, 4, 9, 6 };
	for (size_t i = 0; i < sizeof psn / sizeof *psn; i++)
		tp_rx_ood(c, psn[i]);
	/* degrees: 0 0 0 1 0 1 1 0 3 */
	assert_int_equal(w.ood_hist[0], 5);
	assert_int_equal(w.ood_hist[1], 3);
	assert_int_equal(w.ood_hist[2], 0);
	assert_int_equal(w.ood_hist[3], 1);
	tp_rx_ood(c, 9 + TP_OOD_MAX + 7); /* far ahead, then far behind: clamped */
	tp_rx_ood(c, 0);
	assert_int_equal(w.ood_hist[TP_OOD_MAX], 1);
	free(c);
	free(w.ood_hist);
}

/* One path: nothing arrives out of order, so both metrics are exactly 0; a
 * transport that notes nothing (ref) reports n/a. */
static void test_metrics(void **state)
{
	(void)state;
	static const char *const tp[] = { "udmp", "mprdma", "strack", "ref" };
	for (int i = 0; i < 4; i++) {
		char yaml[400];
		snprintf(yaml, sizeof yaml,
			 "topology: {type: star, hosts: 2, link_rate: 100Gbps}\n"
			 "transport: {type: %s}\n"
			 "workload: {type: incast, senders: 1, receiver: 0, size: 2MB}\n",
			 tp[i]);
		struct run_result r;
		simtest_run(yaml, &r);
		print_message("%s: p99_ood %g, max_ood %g\n", tp[i], r.ood_p99, r.ood_max);
		if (i < 3) {
			assert_true(r.ood_p99 == 0);
			assert_true(r.ood_max == 0);
		} else {
			assert_true(isnan(r.ood_p99) && isnan(r.ood_max));
		}
		run_result_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_degree),
		cmocka_unit_test(test_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

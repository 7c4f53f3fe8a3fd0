/* test_metrics.c - the convergence metrics (src/io/metrics.c) on hand-made
 * per-flow throughput series whose answers are worked out by hand: the band
 * rule (every flow within the band of the mean) and Jain's index,
 * (sum x)^2 / (n sum x^2), each measured from the last flow start to the end
 * of the first fair sample after which every counted sample is fair. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "io/metrics.h"
#include "stats/stats.h"

/* Two flows from t = 0, sampled every 100 us:
 *   t (us)   100  200  300  400  500
 *   flow 0    10   15   19   20   20
 *   flow 1    30   25   21   20   20
 *   Jain     0.80 0.941 0.9975 1    1
 *   spread  +-50% +-25% +-5%   0    0  (of the mean 20) */
static void two_flows(struct run_result *r, struct flow_rec f[2])
{
	static const double v[2][5] = { { 10, 15, 19, 20, 20 }, { 30, 25, 21, 20, 20 } };
	memset(r, 0, sizeof *r);
	memset(f, 0, 2 * sizeof *f);
	for (int i = 0; i < 2; i++) {
		f[i].id = (uint32_t)i;
		f[i].bytes = 1000000;
		f[i].start = 0;
	}
	r->flows = f;
	r->nflows = 2;
	uint32_t s0 = ts_series(&r->ts, "goodput_gbps:flow0");
	uint32_t s1 = ts_series(&r->ts, "goodput_gbps:flow1");
	for (int k = 0; k <= 5; k++) {
		simtime_t t = (simtime_t)k * 100 * PS_PER_US;
		ts_push(&r->ts, t, s0, k ? v[0][k - 1] : 0);
		ts_push(&r->ts, t, s1, k ? v[1][k - 1] : 0);
	}
}

static double metric(double band, double jain, enum metric_id m)
{
	struct run_result r;
	struct flow_rec f[2];
	double v[M_N];
	two_flows(&r, f);
	metrics_compute(&r, band, jain, 0, v);
	ts_free(&r.ts);
	return v[m] / PS_PER_US;
}

static void test_jain(void **state)
{
	(void)state;
	assert_float_equal(metric(0.2, 0.95, M_CONVERGENCE_JAIN), 300, 1e-9);
	assert_float_equal(metric(0.2, 0.9, M_CONVERGENCE_JAIN), 200, 1e-9);
	assert_float_equal(metric(0.2, 0.8, M_CONVERGENCE_JAIN), 100, 1e-9);
	assert_float_equal(metric(0.2, 0.999, M_CONVERGENCE_JAIN), 400, 1e-9);
}

static void test_band(void **state)
{
	(void)state;
	assert_float_equal(metric(0.2, 0.95, M_CONVERGENCE), 300, 1e-9);
	assert_float_equal(metric(0.3, 0.95, M_CONVERGENCE), 200, 1e-9);
	assert_float_equal(metric(0.01, 0.95, M_CONVERGENCE), 400, 1e-9);
}

/* A later unfair sample resets the answer: the flows must stay fair. */
static void test_must_stay(void **state)
{
	(void)state;
	struct run_result r;
	struct flow_rec f[2];
	double v[M_N];
	two_flows(&r, f);
	uint32_t s0 = ts_series(&r.ts, "goodput_gbps:flow0");
	uint32_t s1 = ts_series(&r.ts, "goodput_gbps:flow1");
	ts_push(&r.ts, 600 * PS_PER_US, s0, 5);
	ts_push(&r.ts, 600 * PS_PER_US, s1, 35);
	ts_push(&r.ts, 700 * PS_PER_US, s0, 20);
	ts_push(&r.ts, 700 * PS_PER_US, s1, 20);
	metrics_compute(&r, 0.2, 0.95, 0, v);
	ts_free(&r.ts);
	assert_float_equal(v[M_CONVERGENCE_JAIN] / PS_PER_US, 700, 1e-9);
	assert_float_equal(v[M_CONVERGENCE] / PS_PER_US, 700, 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jain),
		cmocka_unit_test(test_band),
		cmocka_unit_test(test_must_stay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

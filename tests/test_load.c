/* test_load.c - the load a run reports for an open-loop workload (sim/load.c,
 * summary.json's "load"), on cases checked by hand:
 *  - a single fabric link at a known load: two leaves of one host each under
 *    one spine, every link 100 Gb/s; each host sends 10 KB flows to the other
 *    at a load of 0.5 of its link, so each leaf's one uplink carries exactly
 *    what its host sends. Over [1 ms, 11 ms) of 12 ms of arrivals the host
 *    links and the uplinks measure 0.5 x 10192 / 10000 within 3% (the
 *    payload, plus a 64 B ACK for each of a flow's three packets, which
 *    the host links and uplinks carry too; the Poisson count of about 6,250
 *    flows per host varies by ~1.3%), the implied uplink load is 0.5 exactly (one host per leaf: all
 *    traffic crosses; uplink rate = host rate), and no warning is raised;
 *    the load the arrivals offered is their count x 10 KB over the window
 *    and the two links, within 3% of 0.5;
 *  - the same with 25 Gb/s uplinks: nominal 0.5 implies 2.0 of the uplinks,
 *    which carry at most 1.0, so the run is flagged low;
 *  - a workload that offers no load (a permutation) reports none.
 */
#include "simtest.h"

#include <math.h>

#include "core/time.h"

#define ONE_LINK(fabric_rate)                                                                 \
	"seed: 3\n"                                                                           \
	"topology: {type: leaf_spine, hosts_per_leaf: 1, leaves: 2, spines: 1, host_rate: "   \
	"100Gbps, fabric_rate: " fabric_rate ", host_delay: 1us, fabric_delay: 1us}\n"        \
	"switch: {buffer: 12MB}\n"                                                            \
	"transport: {type: ref}\n"                                                            \
	"workload: {type: poisson, cdf: " MPSIM_SOURCE_DIR "/tests/data/cdf_10kb.txt, load: " \
	"0.5, duration: 12ms}\n"                                                              \
	"output: {fct_from: 1ms, fct_until: 11ms}\n"

static void test_single_link_at_known_load(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run(ONE_LINK("100Gbps"), &r);
	const struct load_rec *l = &r.load;
	print_message("window [%.1f, %.1f) us: nominal %.4f host %.4f fabric %.4f (%s) implied "
		      "%.4f\n",
		      time_to_us(l->from), time_to_us(l->until), l->nominal, l->host, l->fabric,
		      l->fabric_group >= 0 ? port_group_names[l->fabric_group] : "-",
		      l->fabric_implied);
	assert_true(l->valid);
	assert_true(l->from == 1000 * PS_PER_US);
	assert_true(l->until == 11000 * PS_PER_US);
	assert_true(l->nominal == 0.5);
	/* by hand: 0.5 of the link in payload, plus an ACK of 64 B for each of a
	 * flow's three packets (4000 + 4000 + 2000 B): 0.5 x 10192 / 10000 */
	double expect = 0.5 * (10000.0 + 3 * 64) / 10000.0;
	assert_true(fabs(l->host - expect) < 0.03 * expect);
	assert_true(fabs(l->fabric - expect) < 0.03 * expect);
	assert_true(l->fabric_group == G_T1_UP || l->fabric_group == G_T1_DOWN);
	assert_true(fabs(l->fabric_implied - 0.5) < 1e-12);
	assert_false(l->low);
	/* arrived: the flows that started in the window, 10 KB each, over the
	 * window and the two hosts' 100 Gb/s, exactly; and within the Poisson
	 * count's few percent of the nominal 0.5 */
	size_t n = 0;
	for (size_t i = 0; i < r.nflows; i++)
		n += r.flows[i].start >= l->from && r.flows[i].start < l->until;
	double arrived = 8.0 * 10000.0 * (double)n / (2 * 100e9 * time_to_s(l->until - l->from));
	print_message("%zu flows arrived: %.6f of the host links\n", n, l->arrived);
	assert_true(fabs(l->arrived - arrived) < 1e-9);
	assert_true(fabs(l->arrived - 0.5) < 0.03 * 0.5);
	run_result_free(&r);
}

static void test_overloaded_uplink_is_flagged(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run(ONE_LINK("25Gbps"), &r);
	const struct load_rec *l = &r.load;
	assert_true(l->valid);
	assert_true(fabs(l->fabric_implied - 2.0) < 1e-12);
	/* a packet counts when its transmission starts: at most one over */
	assert_true(l->fabric <= 1.001);
	assert_true(l->low);
	char w[320];
	load_warning(l, w, sizeof w);
	print_message("%s\n", w);
	assert_non_null(strstr(w, "overloaded"));
	run_result_free(&r);
}

static void test_closed_workload_reports_none(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run("topology: {type: leaf_spine, hosts_per_leaf: 2, leaves: 2, spines: 2}\n"
		    "transport: {type: ref}\n"
		    "workload: {type: permutation, size: 10KB}\n",
		    &r);
	assert_false(r.load.valid);
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_link_at_known_load),
		cmocka_unit_test(test_overloaded_uplink_is_flagged),
		cmocka_unit_test(test_closed_workload_reports_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

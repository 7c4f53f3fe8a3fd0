/* test_failover.c - links that fail during a run: what is queued for the link
 * or on its wire is lost at once, and switch.failover_delay later every switch
 * routes around it (and uses it again the same delay after it comes back).
 *
 * The fabric: a 16-host leaf-spine (4 leaves, 4 spines, 100 Gb/s, 1 us links),
 * a permutation of 1 MB flows (80 us at line rate) on ECMP paths; leaf0-spine1
 * fails at 20 us. Before the routes learn of it, spine1 keeps
 * sending leaf0's traffic into the dead link; afterwards no switch sends
 * anything that way. */
#include "simtest.h"

#include "core/time.h"

/* one path per flow (ECMP): the reference transport repairs a loss only
 * after `rto` without progress, so a sprayed flow that loses part of its
 * window crawls on what is left of it rather than timing out */
#define REF "{type: ref}"

static uint64_t port_tx(const struct run_result *r, const char *name)
{
	for (size_t i = 0; i < r->nports; i++)
		if (strcmp(r->ports[i].name, name) == 0)
			return r->ports[i].tx_bytes;
	fail_msg("no port %s", name);
	return 0;
}

/* Run the fabric with `sw` appended to the switch section and `more` to the
 * events, and print what happened. */
static void run(const char *sw, const char *transport, const char *size, const char *more,
		struct run_result *r)
{
	char yaml[1024];
	snprintf(yaml, sizeof yaml,
		 "seed: 1\n"
		 "time_limit: 1s\n"
		 "topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 4, spines: 4}\n"
		 "switch: {buffer: 4MB%s}\n"
		 "transport: %s\n"
		 "workload: {type: permutation, size: %s}\n"
		 "events:\n"
		 "  - {at: 20us, link: leaf0-spine1, action: down}\n%s",
		 sw, transport, size, more);
	simtest_run(yaml, r);
	print_message("%s%s: %zu / %zu flows, max FCT %.1f us, drops: link %llu, no route %llu\n",
		      transport, sw, r->ncompleted, r->nflows, time_to_us(simtest_max_fct(r)),
		      (unsigned long long)r->net.drops_link,
		      (unsigned long long)r->net.drops_no_route);
}

/* With the default delay (100 us) the reference transport's flows all finish:
 * they lose what the dead link swallows until 120 us and resend it (its RTO is
 * 200 us). Without the reroute they would hang to the time limit, spine1
 * dropping leaf0's packets for want of a route. */
static void test_ref_reroutes(void **state)
{
	(void)state;
	struct run_result r;
	run("", REF, "1MB", "", &r);
	assert_int_equal(r.ncompleted, r.nflows);
	assert_true(time_to_us(simtest_max_fct(&r)) < 600);
	assert_true(r.net.drops_link > 0); /* the black hole before the routes learn */
	assert_int_equal(r.net.drops_no_route, 0);
	run_result_free(&r);
}

/* RoCEv2 (lossless, go-back-N) recovers through NACKs once the routes avoid
 * the link; nothing stays stuck in a paused or dead port. (A flow whose last
 * packets the dead link swallowed has no later packet to draw a NACK: it waits
 * out RoCE's 67 ms timeout, as with failover_delay 100 us here.) */
static void test_roce_reroutes(void **state)
{
	(void)state;
	struct run_result r;
	run(", failover_delay: 1us", "{type: roce}", "1MB", "", &r);
	assert_int_equal(r.ncompleted, r.nflows);
	assert_true(time_to_us(simtest_max_fct(&r)) < 1000);
	assert_int_equal(r.net.drops_buffer, 0);
	run_result_free(&r);
}

/* The routes take failover_delay to learn of the failure: flows through the
 * link stall at least that long, and the dead link swallows more. With 2 us a
 * flow that lost its window at 20 us resends it after one RTO (200 us) and
 * ends near 340 us; with 500 us it cannot get through before 520 us. */
static void test_delay_honoured(void **state)
{
	(void)state;
	struct run_result fast, slow;
	run(", failover_delay: 2us", REF, "1MB", "", &fast);
	run(", failover_delay: 500us", REF, "1MB", "", &slow);
	assert_int_equal(fast.ncompleted, fast.nflows);
	assert_int_equal(slow.ncompleted, slow.nflows);
	assert_true(time_to_us(simtest_max_fct(&fast)) < 400);
	assert_true(time_to_us(simtest_max_fct(&slow)) > 520);
	assert_true(slow.net.drops_link > fast.net.drops_link);
	run_result_free(&fast);
	run_result_free(&slow);
}

/* The link comes back at 60 us and rejoins the next-hop sets at 70 us: it
 * carries a share of the 4 MB flows again (a quarter of leaf0's 16 MB, less
 * the 50 us it was out), where it carried only its first 20 us without the
 * recovery. */
static void test_up_restores(void **state)
{
	(void)state;
	struct run_result out, back;
	run(", failover_delay: 10us", REF, "4MB", "", &out);
	run(", failover_delay: 10us", REF, "4MB",
	    "  - {at: 60us, link: leaf0-spine1, action: up}\n", &back);
	uint64_t tx_out = port_tx(&out, "leaf0-spine1"), tx_back = port_tx(&back, "leaf0-spine1");
	print_message("leaf0-spine1 carried %llu B staying down, %llu B back up at 60 us\n",
		      (unsigned long long)tx_out, (unsigned long long)tx_back);
	assert_int_equal(out.ncompleted, out.nflows);
	assert_int_equal(back.ncompleted, back.nflows);
	assert_true(tx_out < 300000);	/* 20 us at 100 Gb/s = 250 KB, and ACKs */
	assert_true(tx_back > 2000000); /* most of a quarter of 16 MB */
	run_result_free(&out);
	run_result_free(&back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_reroutes),
		cmocka_unit_test(test_roce_reroutes),
		cmocka_unit_test(test_delay_honoured),
		cmocka_unit_test(test_up_restores),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

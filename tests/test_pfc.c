/* test_pfc.c - lossless (PFC) switches keep their promise: the lossless class
 * is never dropped and the buffer never overrun, because every ingress port
 * has headroom reserved for what arrives after its PAUSE; a buffer too small
 * for that headroom is refused before the run.
 *
 * The incast is examples/incast_lossless.yaml (15 -> 1, 100 Gb/s, 1 us links,
 * 4000 B packets): each of the 16 switch ports needs 2 x 100 Gb/s x 1 us
 * (25000 B) + 3 x 4000 B + a 64 B PAUSE = 37064 B of headroom, and 4 KB of
 * control reserve. */
#include "simtest.h"

#include "core/time.h"

#define REF "{type: ref, window: 2MB, rto: 2ms}"

/* The incast with `buffer` and `transport`. */
static void run_incast(const char *buffer, const char *ecn, const char *transport,
		       struct run_result *r)
{
	char yaml[1024];
	snprintf(yaml, sizeof yaml,
		 "seed: 1\n"
		 "topology: {type: star, hosts: 16, link_rate: 100Gbps, link_delay: 1us}\n"
		 "switch:\n"
		 "  mode: lossless\n"
		 "  buffer: %s\n"
		 "  ecn: %s\n"
		 "transport: %s\n"
		 "workload: {type: incast, senders: 15, receiver: 0, size: 2MB}\n",
		 buffer, ecn, transport);
	if (r) {
		simtest_run(yaml, r);
		return;
	}
	struct experiment x; /* r == NULL: too small, refused at build */
	struct mp_err e = { 0 };
	struct sim s;
	assert_int_equal(exp_load_string(&x, yaml, "t.yaml", &e), MP_OK);
	int rc = sim_build(&s, &x, &e);
	print_message("%s\n", e.msg);
	assert_int_equal(rc, MP_EUSER);
	assert_non_null(strstr(e.msg, "t.yaml:5: switch.buffer: expected more than 657024 B"));
	assert_non_null(strstr(e.msg, "got 256000 B"));
	sim_free(&s);
	exp_free(&x);
}

/* Nothing dropped, nothing beyond the buffer, every flow done, and the
 * receiver's link busy throughout: 15 x 2 MB at 100 Gb/s = 2.4 ms. */
static void check_lossless(const struct run_result *r, uint64_t buffer, double max_fct_us)
{
	print_message("buffer %llu B: %zu / %zu flows, drops %llu, max buffer used %llu B, max "
		      "queue %llu B, pauses %llu, max FCT %.1f us\n",
		      (unsigned long long)buffer, r->ncompleted, r->nflows,
		      (unsigned long long)(r->net.drops_buffer + r->net.drops_link),
		      (unsigned long long)r->net.max_buffer_used,
		      (unsigned long long)r->net.max_queue_bytes,
		      (unsigned long long)r->net.pause_frames, time_to_us(simtest_max_fct(r)));
	assert_int_equal(r->ncompleted, r->nflows);
	assert_int_equal(r->net.drops_buffer, 0);
	assert_int_equal(r->net.drops_link, 0);
	assert_int_equal(r->net.lossless_overflow, 0);
	assert_true(r->net.max_buffer_used <= buffer);
	assert_true(r->net.max_queue_bytes <= buffer);
	assert_true(r->net.pause_frames > 0);
	assert_true(time_to_us(simtest_max_fct(r)) < max_fct_us);
}

/* At 1 MB: headroom keeps the buffer from being overrun, and no ACK is
 * dropped. */
static void test_incast_1mb(void **state)
{
	(void)state;
	struct run_result r;
	run_incast("1MB", "false", REF, &r);
	check_lossless(&r, 1000000, 2450);
	run_result_free(&r);
}

/* Just above what the headroom and reserves take (657024 B): a small shared
 * pool, many pauses, still lossless and still line rate. */
static void test_incast_tight(void **state)
{
	(void)state;
	struct run_result r;
	run_incast("700KB", "false", REF, &r);
	check_lossless(&r, 700000, 2450);
	run_result_free(&r);
}

/* RoCEv2 with DCQCN (ECN at the default 100-400 KB) on the same star with
 * 1 MB: the queue stays under the buffer and no control packet is dropped. */
static void test_roce_1mb(void **state)
{
	(void)state;
	struct run_result r;
	run_incast("1MB", "true", "{type: roce}", &r);
	check_lossless(&r, 1000000, 10000);
	uint64_t retx = 0;
	for (size_t i = 0; i < r.nflows; i++)
		retx += r.flows[i].retx_bytes;
	assert_int_equal(retx, 0);
	run_result_free(&r);
}

/* A lossless buffer that cannot hold its ports' headroom is a mistake in the
 * file: refused at build, naming the line of switch.buffer and what it needs. */
static void test_buffer_too_small(void **state)
{
	(void)state;
	run_incast("256KB", "false", REF, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incast_1mb),
		cmocka_unit_test(test_incast_tight),
		cmocka_unit_test(test_roce_1mb),
		cmocka_unit_test(test_buffer_too_small),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

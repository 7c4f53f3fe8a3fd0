/* test_cast.c - the CAST scheduler (Broadcom, "Congestion-Aware Sprayed
 * Traffic Feature", 2025): both weight listings against hand-worked
 * examples, 128-B stripes that sum to the request, WRR shares, the
 * split-data minimum, and two queue pairs whose paths differ only in a 2x
 * slower link (CAST's weights settle near 2:1 and the transfer near the ideal
 * split; the plain stripe runs at the slow queue pair's pace). */
#include "simtest.h"

#include <math.h>

#include "ccl/cast.h"
#include "core/rng.h"

#define US ((double)PS_PER_US)

/* Estimates 10, 20, 40 us; the smallest estimate's QP has min_metric 5 us.
 * First listing: 1/10 : 1/20 : 1/40 = 4/7, 2/7, 1/7. Second: 1/(0 + 5) :
 * 1/(10 + 5) : 1/(30 + 5) = 21/105 : 7/105 : 3/105 = 21/31, 7/31, 3/31. */
static void test_weights(void **state)
{
	(void)state;
	const double est[3] = { 10 * US, 20 * US, 40 * US };
	const uint64_t mm[3] = { 5 * PS_PER_US, 1, 2 }; /* only QP 0's is used */
	double w[3];
	assert_true(cast_weights(est, mm, 3, false, w));
	assert_float_equal(w[0], 4.0 / 7, 1e-12);
	assert_float_equal(w[1], 2.0 / 7, 1e-12);
	assert_float_equal(w[2], 1.0 / 7, 1e-12);
	assert_true(cast_weights(est, mm, 3, true, w));
	assert_float_equal(w[0], 21.0 / 31, 1e-12);
	assert_float_equal(w[1], 7.0 / 31, 1e-12);
	assert_float_equal(w[2], 3.0 / 31, 1e-12);
	/* the smallest estimate sits on QP 2 now: its min_metric (2 ps) counts */
	const double est2[3] = { 12 * US, 8 * US, 4 * US };
	assert_true(cast_weights(est2, mm, 3, true, w));
	double d[3] = { 8 * US + 2, 4 * US + 2, 2 }, s = 1 / d[0] + 1 / d[1] + 1 / d[2];
	for (int q = 0; q < 3; q++)
		assert_float_equal(w[q], 1 / d[q] / s, 1e-12);
	/* a zero denominator (no queueing seen and a zero minimum): no weights */
	const uint64_t zero[3] = { 0, 0, 0 };
	w[0] = -1;
	assert_false(cast_weights(est, zero, 3, true, w));
	assert_float_equal(w[0], -1, 0);
}

/* 1,000,000 B at 21/31, 7/31, 3/31 from QP 0: 677419.35 -> 677376 (5292 x
 * 128), 225806.45 -> 225792 (1764 x 128), and QP 2 the rest, 96832. From QP
 * 1: 225792, 96768 (756 x 128), QP 0 the rest, 677440. NCCL's equal split of
 * 1000 B over 4: 256, 256, 256, 232; of 200 B: 128, 72, 0, 0. Random
 * requests and weights: the pieces sum to the request, all but the last are
 * multiples of 128. */
static void test_stripes(void **state)
{
	(void)state;
	const double w[3] = { 21.0 / 31, 7.0 / 31, 3.0 / 31 };
	uint64_t sz[CAST_MAX_QPS];
	cast_stripe(1000000, w, 3, 0, sz);
	assert_int_equal(sz[0], 677376);
	assert_int_equal(sz[1], 225792);
	assert_int_equal(sz[2], 96832);
	cast_stripe(1000000, w, 3, 1, sz);
	assert_int_equal(sz[1], 225792);
	assert_int_equal(sz[2], 96768);
	assert_int_equal(sz[0], 677440);
	cast_split_equal(1000, 4, 0, sz);
	assert_int_equal(sz[0], 256);
	assert_int_equal(sz[1], 256);
	assert_int_equal(sz[2], 256);
	assert_int_equal(sz[3], 232);
	cast_split_equal(200, 4, 2, sz);
	assert_int_equal(sz[2], 128);
	assert_int_equal(sz[3], 72);
	assert_int_equal(sz[0], 0);
	assert_int_equal(sz[1], 0);
	struct mp_rng r;
	rng_init(&r, 7, RNG_TEST, 1);
	for (int k = 0; k < 10000; k++) {
		uint32_t n = 1 + (uint32_t)rng_below(&r, 8), start = (uint32_t)rng_below(&r, n);
		uint64_t bytes = 1 + rng_below(&r, 1ULL << 26);
		double ww[CAST_MAX_QPS], sum = 0;
		for (uint32_t q = 0; q < n; q++)
			sum += ww[q] = rng_u01(&r) + 1e-3;
		for (uint32_t q = 0; q < n; q++)
			ww[q] /= sum;
		cast_stripe(bytes, ww, n, start, sz);
		uint64_t tot = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t q = (start + i) % n;
			tot += sz[q];
			if (i + 1 < n)
				assert_int_equal(sz[q] % CAST_ALIGN, 0);
		}
		assert_int_equal(tot, bytes);
	}
}

/* WRR: tokens round(100 w) half up, at least one: 21/31 -> 67.7 -> 68,
 * 7/31 -> 22.6 -> 23, 3/31 -> 9.7 -> 10; and 0.004 -> 1. Over 10,000
 * requests each QP's share is within 5% of its weight. */
static void test_wrr(void **state)
{
	(void)state;
	const double w[4] = { 21.0 / 31, 7.0 / 31, 3.0 / 31 - 0.004, 0.004 };
	struct cast_chan c;
	memset(&c, 0, sizeof c);
	uint32_t tok[4];
	cast_wrr_tokens(w, 4, tok);
	assert_int_equal(tok[0], 68);
	assert_int_equal(tok[1], 23);
	assert_int_equal(tok[2], 9); /* 9.28 */
	assert_int_equal(tok[3], 1);
	for (int q = 0; q < 4; q++)
		c.qp[q].tokens = tok[q];
	uint32_t count[4] = { 0 };
	for (int k = 0; k < 10000; k++)
		count[cast_wrr_pick(&c, 4)]++;
	for (int q = 0; q < 3; q++) /* the last: 1 token in 101 for 0.4% */
		assert_true(fabs(count[q] / 10000.0 - w[q]) <= 0.05 * w[q]);
	assert_true(count[3] >= 98 && count[3] <= 100);
}

/* A 2-host star, 4 queue pairs: an AlltoAll of 2 x `half` bytes sends one
 * message each way; with CAST on, a request of 4 x 64 KiB splits over all 4
 * queue pairs and one byte less goes whole on one. */
#define SPLIT_YAML(half, enable)                                                        \
	"name: t\n"                                                                     \
	"topology: {type: star, hosts: 2}\n"                                            \
	"transport: {type: roce}\n"                                                     \
	"collective: {type: alltoall, size: " #half "B, ranks: 2, placement: packed}\n" \
	"ccl: {type: cast, qps: 4, request: 0, enable: " #enable "}\n"

static uint32_t parts_of(const char *yaml, uint32_t *nmsgs)
{
	struct experiment x;
	struct sim s;
	simtest_open(yaml, &x, &s);
	uint32_t n = 0;
	for (uint32_t c = 0; c < s.ccl.nchans; c++)
		n += s.ccl.chans[c]->nparts;
	*nmsgs = (uint32_t)s.flows.n;
	for (size_t i = 0; i < s.flows.n; i++)
		assert_true(s.tx_at[i] > 0); /* every message completed */
	simtest_close(&x, &s);
	return n;
}

static void test_split_data_min(void **state)
{
	(void)state;
	uint32_t m;
	assert_int_equal(parts_of(SPLIT_YAML(524288, true), &m), 2 * 4); /* 262144 each */
	assert_int_equal(m, 2);
	assert_int_equal(parts_of(SPLIT_YAML(524286, true), &m), 2 * 1);  /* 262143 each */
	assert_int_equal(parts_of(SPLIT_YAML(524286, false), &m), 2 * 4); /* CAST off: split */
}

/* Two queue pairs, each on its own NIC port (rail) of a 2-port star; host
 * 1's second port runs at 200 Gb/s, so queue pair 1's path has a 2x slower
 * last hop and nothing else differs. One 640 MB message each way. */
#define SLOW_YAML                                                                                \
	"name: t\n"                                                                              \
	"topology: {type: star, hosts: 2, host_ports: 2, link_rate: 400Gbps, link_delay: 1us}\n" \
	"switch: {buffer: 32MB, mode: lossless, kmin: 400KB, kmax: 400KB, pmax: 1}\n"            \
	"transport: {type: roce, mtu: 4096B, preset: hpcc, rai: 80Mbps, rhai: 800Mbps, cnp: "    \
	"paced, cnp_interval: 50us}\n"                                                           \
	"events: [{at: 0us, link: h1-sw0#1, action: rate, value: 200Gbps}]\n"                    \
	"collective: {type: alltoall, size: 1280MB, ranks: 2, placement: packed}\n"

struct slow_out {
	simtime_t fct;	  /* host 0 -> host 1, first post to last byte acknowledged */
	double w0;	  /* queue pair 0's weight, mean over the second half's updates */
	uint64_t updates; /* weight updates on host 0's channel */
};

static void run_slow(const char *ccl, struct slow_out *o)
{
	char yaml[1024];
	snprintf(yaml, sizeof yaml, "%sccl: %s\n", SLOW_YAML, ccl);
	struct experiment x;
	struct mp_err e = { 0 };
	struct sim s;
	assert_int_equal(exp_load_string(&x, yaml, "t.yaml", &e), MP_OK);
	assert_int_equal(sim_build(&s, &x, &e), MP_OK);
	/* run to the end, sampling QP 0's weight of channel 0 -> 1 every 10 us */
	double wsum = 0;
	uint32_t nw = 0;
	struct ccl_chan *ch = NULL;
	for (simtime_t t = 10 * PS_PER_US; !s.q.stop && !evq_empty(&s.q); t += 10 * PS_PER_US) {
		evq_run(&s.q, t);
		for (uint32_t i = 0; i < s.ccl.nchans && !ch; i++)
			if (s.ccl.chans[i]->src == 0)
				ch = s.ccl.chans[i];
		const struct cast_chan *c = ch ? ccl_priv(ch) : NULL;
		if (c && c->init && t > 4500 * PS_PER_US && !s.tx_at[0]) {
			wsum += c->qp[0].w;
			nw++;
		}
	}
	assert_non_null(ch);
	o->fct = s.tx_at[0];
	o->w0 = nw ? wsum / nw : 0;
	o->updates = ((const struct cast_chan *)ccl_priv(ch))->nupdates;
	sim_free(&s);
	exp_free(&x);
}

static void test_slow_link(void **state)
{
	(void)state;
	struct slow_out cast, stripe;
	run_slow("{type: cast, qps: 2}", &cast);
	run_slow("{type: cast, qps: 2, enable: false}", &stripe);
	/* ideal split: 2/3 on the 400 Gb/s path, 1/3 on the 200 Gb/s one, the
	 * 640 MB at 600 Gb/s (plus microseconds of round trip) */
	double ideal = 640e6 * 8 / 600e9 * PS_PER_S, slow = 320e6 * 8 / 200e9 * PS_PER_S;
	print_message("cast: fct %.1f us (ideal split %.1f), w0 %.3f after 4.5 ms, %llu "
		      "updates; plain stripe %.1f us (slow QP alone %.1f)\n",
		      cast.fct / US, ideal / US, cast.w0, (unsigned long long)cast.updates,
		      stripe.fct / US, slow / US);
	assert_true(cast.updates > 100);
	assert_true(fabs(cast.w0 - 2.0 / 3) <= 0.1 * 2.0 / 3);
	assert_true(cast.fct <= 1.1 * ideal);
	assert_true(stripe.fct >= slow && stripe.fct > 1.4 * ideal);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights),	  cmocka_unit_test(test_stripes),
		cmocka_unit_test(test_wrr),	  cmocka_unit_test(test_split_data_min),
		cmocka_unit_test(test_slow_link),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

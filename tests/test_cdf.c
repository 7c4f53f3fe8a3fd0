/* test_cdf.c - flow-size CDF tables (src/workload/cdf.c): the three dialects of
 * data/workloads/README.md parse, cdf_mean matches the README's linear means
 * for every shipped table, sampling reproduces the mean, point masses and flat
 * segments behave, and malformed tables are refused with file:line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/rng.h"
#include "workload/cdf.h"

#ifndef MPSIM_SOURCE_DIR
#error "MPSIM_SOURCE_DIR must name the repository root"
#endif
#define DATA_DIR MPSIM_SOURCE_DIR "/data/workloads"

static void load_shipped(struct cdf *c, const char *file, enum cdf_format fmt)
{
	struct mp_err e = { 0 };
	char path[512];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", DATA_DIR, file);
	rc = cdf_load(c, path, NULL, fmt, &e);
	if (rc)
		fail_msg("%s: %s", file, e.msg);
}

static int parse(struct cdf *c, const char *text, enum cdf_format fmt, struct mp_err *e)
{
	mp_err_clear(e);
	return cdf_parse(c, text, "t.txt", fmt, e);
}

static void test_dialect_percent(void **state)
{
	struct cdf c;

	(void)state;
	load_shipped(&c, "websearch.txt", CDF_AUTO);
	assert_int_equal(c.format, CDF_PERCENT);
	assert_int_equal(c.n, 12);
	assert_true(c.pt[0].bytes == 0 && c.pt[0].p == 0);
	assert_true(c.pt[1].bytes == 10000 && fabs(c.pt[1].p - 0.15) < 1e-12);
	assert_true(c.pt[11].bytes == 30e6 && c.pt[11].p == 1.0);
	/* Forcing the dialect that is there works too. */
	cdf_free(&c);
	load_shipped(&c, "websearch.txt", CDF_PERCENT);
	assert_int_equal(c.format, CDF_PERCENT);
	cdf_free(&c);
	/* Percent values with decimals ("30.0", Solar2022 style), no final newline. */
	struct mp_err e;
	assert_int_equal(parse(&c, "0 0\n4095 0.001\n4096 30.0\n262144 100.0", CDF_AUTO, &e), 0);
	assert_int_equal(c.format, CDF_PERCENT);
	assert_true(fabs(c.pt[2].p - 0.3) < 1e-12);
	cdf_free(&c);
}

/* F-frac with several spaces between columns (ns3-load-balance/DCTCP_CDF.txt). */
static const char dctcp_frac[] = "0     0\n10000 0.15\n20000 0.2\n30000 0.3\n50000 0.4\n"
				 "80000 0.53\n200000 0.6\n1000000 0.7\n2000000 0.8\n"
				 "5000000 0.9\n10000000 0.97\n30000000 1\n";

static void test_dialect_fraction(void **state)
{
	struct cdf c, w;
	struct mp_err e;

	(void)state;
	assert_int_equal(parse(&c, dctcp_frac, CDF_AUTO, &e), 0);
	assert_int_equal(c.format, CDF_FRACTION);
	assert_int_equal(c.n, 12);
	/* The same table as the percent file: same points, same mean. */
	load_shipped(&w, "websearch.txt", CDF_AUTO);
	for (size_t i = 0; i < c.n; i++) {
		assert_true(c.pt[i].bytes == w.pt[i].bytes);
		assert_true(fabs(c.pt[i].p - w.pt[i].p) < 1e-12);
	}
	assert_true(fabs(cdf_mean(&c) - 1711250.0) < 1e-3);
	cdf_free(&w);
	cdf_free(&c);
	/* Tabs, CRLF line ends, comments and blank lines. */
	assert_int_equal(
	    parse(&c, "# size cdf\r\n0\t0\r\n\r\n100\t0.5\r\n200\t1\r\n", CDF_FRACTION, &e), 0);
	assert_int_equal(c.n, 3);
	assert_true(fabs(cdf_mean(&c) - 100.0) < 1e-9);
	cdf_free(&c);
}

static void test_dialect_fraction_step(void **state)
{
	struct cdf c;

	(void)state;
	/* Trailing spaces on a line, no trailing newline, first row at 100 B. */
	load_shipped(&c, "mining.txt", CDF_AUTO);
	assert_int_equal(c.format, CDF_FRACTION);
	assert_int_equal(c.n, 7);
	assert_true(c.pt[0].bytes == 100 && c.pt[6].bytes == 1e9 && c.pt[6].p == 1.0);
	assert_true(fabs(c.pt[5].p - 0.99) < 1e-12);
	cdf_free(&c);
	/* Repeated sizes (point masses) and repeated probabilities (flat parts). */
	load_shipped(&c, "cachefollower.txt", CDF_FRACTION);
	assert_int_equal(c.n, 23);
	assert_true(c.pt[0].bytes == 70 && c.pt[1].bytes == 70);
	cdf_free(&c);
	load_shipped(&c, "webserver.txt", CDF_AUTO);
	assert_int_equal(c.n, 13);
	/* (300, 0.12) (300, 0.2): a 0.08 mass at 300 B; (300, 0.2) (600, 0.2): no mass. */
	assert_true(cdf_quantile(&c, 0.0) == 150);
	assert_true(fabs(cdf_quantile(&c, 0.06) - 225) < 1e-9);
	assert_true(cdf_quantile(&c, 0.12) == 300);
	assert_true(cdf_quantile(&c, 0.1999) == 300);
	assert_true(cdf_quantile(&c, 0.2) == 600);
	assert_true(fabs(cdf_quantile(&c, 0.25) - 800) < 1e-9);
	assert_true(cdf_quantile(&c, 0.999999) <= 500000);
	cdf_free(&c);
}

/* Each shipped table's mean against data/workloads/README.md's "mean (linear)",
 * as its sources publish them (KB = 1000 bytes). */
static const struct {
	const char *file;
	double readme_mean; /* bytes */
} shipped[] = {
	{ "websearch.txt", 1711e3 },	  { "websearch_conweave.txt", 1710e3 },
	{ "mining.txt", 7488e3 },	  { "cachefollower.txt", 712.6e3 },
	{ "webserver.txt", 66.1e3 },	  { "fbhdp.txt", 120.4e3 },
	{ "alistorage2019.txt", 40.9e3 }, { "googlerpc2008.txt", 2.9e3 },
};

static void test_means_match_readme(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
		struct cdf c;
		double m;

		load_shipped(&c, shipped[i].file, CDF_AUTO);
		m = cdf_mean(&c);
		print_message("%-24s %5zu points  cdf_mean %14.1f B  README %10.0f B  (%+.3f%%)\n",
			      shipped[i].file, c.n, m, shipped[i].readme_mean,
			      100.0 * (m / shipped[i].readme_mean - 1.0));
		if (fabs(m / shipped[i].readme_mean - 1.0) > 0.005)
			fail_msg("%s: mean %.1f is not within 0.5%% of %.0f", shipped[i].file, m,
				 shipped[i].readme_mean);
		cdf_free(&c);
	}
}

static void check_sampled_mean(const char *file, uint64_t seed)
{
	struct cdf c;
	struct mp_rng r;
	double sum = 0, m;
	const int n = 1000000;

	load_shipped(&c, file, CDF_AUTO);
	rng_init(&r, seed, RNG_TEST, 1);
	for (int i = 0; i < n; i++) {
		uint64_t x = cdf_sample(&c, &r);

		assert_true(x >= 1 && x <= (uint64_t)c.pt[c.n - 1].bytes);
		sum += (double)x;
	}
	m = cdf_mean(&c);
	print_message("%-14s sampled mean %.1f B, cdf_mean %.1f B (%+.3f%%)\n", file, sum / n, m,
		      100.0 * (sum / n / m - 1.0));
	assert_true(fabs(sum / n / m - 1.0) < 0.01);
	cdf_free(&c);
}

static void test_sampled_mean(void **state)
{
	(void)state;
	check_sampled_mean("websearch.txt", 1);
	check_sampled_mean("webserver.txt", 2);
}

/* conweave/search.txt: "9000 0" then "9000 0.15": 15 % of flows are exactly
 * 9,000 B and none is smaller. */
static void test_point_mass(void **state)
{
	struct cdf c;
	struct mp_rng r;
	int at = 0, below = 0;
	const int n = 200000;

	(void)state;
	load_shipped(&c, "websearch_conweave.txt", CDF_AUTO);
	assert_int_equal(c.format, CDF_FRACTION);
	assert_true(cdf_quantile(&c, 0.0) == 9000);
	assert_true(cdf_quantile(&c, 0.1499) == 9000);
	assert_true(cdf_quantile(&c, 0.151) > 9000);
	rng_init(&r, 7, RNG_TEST, 2);
	for (int i = 0; i < n; i++) {
		uint64_t x = cdf_sample(&c, &r);

		at += x == 9000;
		below += x < 9000;
	}
	assert_int_equal(below, 0);
	/* Binomial(n, 0.15): sd = 160; allow 5 sd. (Sizes just above 9000 B from
	 * the next segment can round to 9000 with probability ~1e-5.) */
	print_message("point mass at 9000 B: %d of %d (%.4f)\n", at, n, (double)at / n);
	assert_true(abs(at - (int)(0.15 * n)) < 800);
	/* The mass counts at its size in the mean. */
	struct cdf c2;
	struct mp_err e;
	assert_int_equal(parse(&c2, "9000 0\n9000 0.5\n19000 1", CDF_AUTO, &e), 0);
	assert_true(fabs(cdf_mean(&c2) - (0.5 * 9000 + 0.5 * 14000)) < 1e-9);
	cdf_free(&c2);
	cdf_free(&c);
}

static void test_first_row_and_clamp(void **state)
{
	struct cdf c;
	struct mp_err e;
	struct mp_rng r;

	(void)state;
	/* First row above size 0 with probability 0.3: a 0.3 mass at 100 B. */
	assert_int_equal(parse(&c, "100 0.3\n200 1\n", CDF_AUTO, &e), 0);
	assert_true(cdf_quantile(&c, 0.1) == 100);
	assert_true(fabs(cdf_quantile(&c, 0.65) - 150) < 1e-9);
	assert_true(fabs(cdf_mean(&c) - (0.3 * 100 + 0.7 * 150)) < 1e-9);
	cdf_free(&c);
	/* Sizes below one byte become 1 byte, as in HPCC. */
	assert_int_equal(parse(&c, "0 0\n1 100\n", CDF_AUTO, &e), 0);
	rng_init(&r, 3, RNG_TEST, 3);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(cdf_sample(&c, &r), 1);
	cdf_free(&c);
	/* A flat tail and a vertical last step are fine. */
	assert_int_equal(parse(&c, "10 0\n20 0.5\n30 0.5\n30 1\n", CDF_AUTO, &e), 0);
	assert_true(cdf_quantile(&c, 0.5) == 30 && cdf_quantile(&c, 0.99) == 30);
	cdf_free(&c);
}

static const struct {
	const char *text;
	const char *msg; /* expected substring of the message */
} malformed[] = {
	{ "", "t.txt:1: expected at least 2 points" },
	{ "0 0\n", "t.txt:1: expected at least 2 points" },
	{ "# only\n\n0 1\n", "t.txt:3: expected at least 2 points" },
	{ "0 0\nabc 1\n", "t.txt:2: expected a size in bytes (a number), found 'abc'" },
	{ "0 0\n-5 1\n", "t.txt:2: expected a non-negative size, found '-5'" },
	{ "0 0\n5 -1\n", "t.txt:2: expected a non-negative cumulative probability" },
	{ "0 0\n10 0.5\n5 1\n", "t.txt:3: expected sizes in non-decreasing order, found '5'" },
	{ "0 0\n10 0.5\n20 0.4\n30 1\n",
	  "t.txt:3: expected cumulative probabilities in non-decreasing order, found '0.4'" },
	{ "0 0\n10 0.5\n20 0.9\n", "t.txt:3: expected the last cumulative probability to be 1 "
				   "(fraction) or 100 (percent), found 0.9" },
	{ "0 0\n10 50\n20 101\n", "t.txt:3: expected the last cumulative probability" },
	{ "0 0\n10\n", "t.txt:2: expected two columns" },
	{ "0 0\n10 1 7\n", "t.txt:2: expected two columns (size, cumulative probability), not a "
			   "third, found '7'" },
	{ "0 0\n10 1x\n", "t.txt:2: expected a cumulative probability (a number), found '1x'" },
	{ "0 0\n0x10 1\n", "t.txt:2: expected a size in bytes" },
	{ "0 0\nnan 1\n", "t.txt:2: expected a size in bytes" },
	{ "0 0\n10 inf\n", "t.txt:2: expected a cumulative probability" },
	{ "0,0\n10,1\n", "t.txt:1: expected two columns" },
	{ "0 0\n1e30 1\n", "t.txt:2: expected a size of at most 1e15 bytes" },
};

static void test_malformed(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		struct cdf c;
		struct mp_err e;
		int rc = parse(&c, malformed[i].text, CDF_AUTO, &e);

		if (rc != MP_EUSER || !strstr(e.msg, malformed[i].msg))
			fail_msg("case %zu: rc %d, message '%s', expected '%s'", i, rc, e.msg,
				 malformed[i].msg);
		assert_null(c.pt);
	}
}

static void test_forced_format(void **state)
{
	struct cdf c;
	struct mp_err e;

	(void)state;
	assert_int_equal(parse(&c, dctcp_frac, CDF_PERCENT, &e), MP_EUSER);
	assert_non_null(strstr(e.msg, "t.txt:12: expected the last cumulative probability to be "
				      "100 (percent table), found 1"));
	assert_int_equal(parse(&c, "0 0\n5 100\n", CDF_FRACTION, &e), MP_EUSER);
	assert_non_null(strstr(e.msg, "t.txt:2: expected the last cumulative probability to be "
				      "1 (fraction table), found 100"));
}

static void test_load_errors(void **state)
{
	struct cdf c;
	struct mp_err e = { 0 };
	char path[] = "/tmp/mpsim_cdf_XXXXXX";
	int fd;
	FILE *f;

	(void)state;
	assert_int_equal(cdf_load(&c, "/nonexistent/x.txt", NULL, CDF_AUTO, &e), MP_EUSER);
	assert_non_null(strstr(e.msg, "/nonexistent/x.txt: cannot read"));
	/* Messages name the file as given. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("0 0\n100 0.5\n50 1\n", f);
	fclose(f);
	mp_err_clear(&e);
	assert_int_equal(cdf_load(&c, path, NULL, CDF_AUTO, &e), MP_EUSER);
	char want[128];
	snprintf(want, sizeof(want), "%s:3: expected sizes in non-decreasing order", path);
	assert_non_null(strstr(e.msg, want));
	/* A relative path is tried under base_dir. */
	const char *slash = strrchr(path, '/');
	f = fopen(path, "w");
	fputs("0 0\n100 1", f);
	fclose(f);
	mp_err_clear(&e);
	assert_int_equal(cdf_load(&c, slash + 1, "/tmp", CDF_AUTO, &e), 0);
	assert_true(fabs(cdf_mean(&c) - 50) < 1e-9);
	cdf_free(&c);
	unlink(path);
}

static void test_no_leak(void **state)
{
	uint64_t live = mp_mem_live();
	struct cdf c;
	struct mp_err e;

	(void)state;
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++)
		parse(&c, malformed[i].text, CDF_AUTO, &e);
	load_shipped(&c, "googlerpc2008.txt", CDF_AUTO);
	assert_int_equal(c.n, 843);
	cdf_free(&c);
	assert_int_equal(mp_mem_live(), live);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dialect_percent),
		cmocka_unit_test(test_dialect_fraction),
		cmocka_unit_test(test_dialect_fraction_step),
		cmocka_unit_test(test_means_match_readme),
		cmocka_unit_test(test_sampled_mean),
		cmocka_unit_test(test_point_mass),
		cmocka_unit_test(test_first_row_and_clamp),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_forced_format),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_no_leak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_opt.c - option tables (core/opt.c): unit parsers, every type, ranges,
 * messages, natural-unit formatting and its round trip, table printing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/opt.h"
#include "core/units.h"

#define assert_has(hay, needle)                                                 \
	do {                                                                    \
		if (!strstr((hay), (needle)))                                   \
			fail_msg("expected \"%s\" in \"%s\"", (needle), (hay)); \
	} while (0)

struct tp {
	uint64_t buf;	/* bytes */
	uint64_t rate;	/* bit/s */
	uint64_t delay; /* ps */
	int64_t shift;
	uint64_t count;
	double gain;
	bool ecn;
	int mode;
	char *name;
	char *file;
	struct opt_strlist list;
	uint64_t minbuf; /* bytes, lower bound only */
	uint64_t hosts;	 /* required */
};

static const char *const modes[] = { "dcqcn", "strack", "udmp", NULL };

static const struct opt_desc tbl[] = {
	{ "buf", OPT_SIZE, offsetof(struct tp, buf), "4KiB", 0, 0, "buffer, bytes", NULL },
	{ "rate", OPT_RATE, offsetof(struct tp, rate), "400Gbps", 1e6, 1.6e12, "link rate", NULL },
	{ "delay", OPT_TIME, offsetof(struct tp, delay), "1us", 0, 0, "link delay", NULL },
	{ "shift", OPT_INT, offsetof(struct tp, shift), "-3", -10, 10, "a signed knob", NULL },
	{ "count", OPT_UINT, offsetof(struct tp, count), "8", 1, 64, "a count", NULL },
	{ "gain", OPT_DOUBLE, offsetof(struct tp, gain), "0.5", 0, 1, "a gain", NULL },
	{ "ecn", OPT_BOOL, offsetof(struct tp, ecn), "yes", 0, 0, "mark ECN", NULL },
	{ "mode", OPT_ENUM, offsetof(struct tp, mode), "strack", 0, 0, "protocol", modes },
	{ "name", OPT_STRING, offsetof(struct tp, name), "fabric", 0, 0, "a label", NULL },
	{ "file", OPT_PATH, offsetof(struct tp, file), "", 0, 0, "a file", NULL },
	{ "list", OPT_STRLIST, offsetof(struct tp, list), "a, b,c", 0, 0, "names", NULL },
	{ "minbuf", OPT_SIZE, offsetof(struct tp, minbuf), "1KB", 64, 0, "at least 64B", NULL },
	{ "hosts", OPT_UINT, offsetof(struct tp, hosts), NULL, 0, 0, "hosts", NULL },
	OPT_END,
};

static const struct opt_desc *D(const char *name)
{
	const struct opt_desc *d = opt_find(tbl, name);
	if (!d)
		fail_msg("no option %s", name);
	return d;
}

/* Parse `text` for option `name` and expect success. */
static void ok(struct tp *p, const char *name, const char *text)
{
	struct mp_err e = { 0 };
	int rc = opt_parse_scalar(D(name), p, text, NULL, &e);
	if (rc != MP_OK)
		fail_msg("'%s' for %s rejected: %s", text, name, e.msg);
	assert_int_equal(e.status, MP_OK);
}

/* Parse `text` and expect failure with `needle` in the message. */
static void bad(struct tp *p, const char *name, const char *text, const char *needle)
{
	struct mp_err e = { 0 };
	int rc = opt_parse_scalar(D(name), p, text, NULL, &e);
	if (rc == MP_OK)
		fail_msg("'%s' for %s accepted", text, name);
	assert_int_equal(rc, MP_EUSER);
	assert_int_equal(e.status, MP_EUSER);
	assert_has(e.msg, needle);
}

static uint64_t size_of(const char *t)
{
	uint64_t v = 0xdead;
	if (opt_parse_size(t, &v) != 0)
		fail_msg("size '%s' rejected", t);
	return v;
}

static uint64_t rate_of(const char *t)
{
	uint64_t v = 0xdead;
	if (opt_parse_rate(t, &v) != 0)
		fail_msg("rate '%s' rejected", t);
	return v;
}

static uint64_t time_of(const char *t)
{
	uint64_t v = 0xdead;
	if (opt_parse_time(t, &v) != 0)
		fail_msg("time '%s' rejected", t);
	return v;
}

static void test_sizes(void **state)
{
	assert_int_equal(size_of("512B"), 512);
	assert_int_equal(size_of("4000"), 4000);
	assert_int_equal(size_of("0"), 0);
	assert_int_equal(size_of("4KB"), 4000);
	assert_int_equal(size_of("4kB"), 4000);
	assert_int_equal(size_of("16MB"), 16000000);
	assert_int_equal(size_of("1GB"), 1000000000);
	assert_true(size_of("2TB") == 2000000000000ULL);
	assert_int_equal(size_of("4KiB"), 4096);
	assert_int_equal(size_of("16MiB"), 16 << 20);
	assert_int_equal(size_of("1GiB"), 1 << 30);
	assert_true(size_of("3TiB") == 3ULL << 40);
	assert_int_equal(size_of("1.5KiB"), 1536);
	assert_int_equal(size_of("0.5KB"), 500);
	assert_int_equal(size_of("1e3"), 1000);
	assert_int_equal(size_of("1.25e2KB"), 125000);
	assert_int_equal(size_of("4 KiB"), 4096);
	assert_int_equal(size_of("000012B"), 12);
	assert_int_equal(size_of(".5KB"), 500);
	assert_true(size_of("18446744073709551615") == UINT64_MAX);
	assert_true(size_of("16777215TiB") == 16777215ULL << 40);

	uint64_t v = 77;
	const char *rejects[] = {
		"",	      " ",    "abc",  "-1KB", "-0",	"4XB",	    "4KiBx",
		"4 K",	      "1.5B", "KB",   ".",    "1..5KB", "1.0001KB", "18446744073709551616",
		"20000000TB", "4kb",  "4KIB", "+4KB", "0x10",	"1e",	    "4KB 5",
		NULL
	};
	for (int i = 0; rejects[i]; i++) {
		if (opt_parse_size(rejects[i], &v) == 0)
			fail_msg("size '%s' accepted as %" PRIu64, rejects[i], v);
	}
	assert_int_equal(v, 77); /* never written on failure */
}

static void test_rates(void **state)
{
	assert_true(rate_of("400Gbps") == 400000000000ULL);
	assert_int_equal(rate_of("100Mbps"), 100000000);
	assert_true(rate_of("1Tbps") == 1000000000000ULL);
	assert_true(rate_of("40e9") == 40000000000ULL);
	assert_true(rate_of("40000000000") == 40000000000ULL);
	assert_int_equal(rate_of("10Kbps"), 10000);
	assert_int_equal(rate_of("10kbps"), 10000);
	assert_int_equal(rate_of("7bps"), 7);
	assert_true(rate_of("100Gb/s") == 100000000000ULL);
	assert_int_equal(rate_of("25Mb/s"), 25000000);
	assert_int_equal(rate_of("3Kb/s"), 3000);
	assert_true(rate_of("2Tb/s") == 2000000000000ULL);
	assert_int_equal(rate_of("9b/s"), 9);
	assert_true(rate_of("100Gbit/s") == 100000000000ULL);
	assert_true(rate_of("2.5Gbps") == 2500000000ULL);
	assert_true(rate_of("1.6Tbps") == 1600000000000ULL);
	assert_true(rate_of("0.000000001Gbps") == 1);
	assert_true(rate_of("1.000000000000000000000000000000000000000000000Gbps") ==
		    1000000000ULL);

	uint64_t v = 5;
	const char *rejects[] = { "1.5bps", "-1Gbps",		"10GBps",  "10 Gbpsx", "Gbps",
				  "1e-1",   "0.0000000001Gbps", "1e30bps", "fast",     NULL };
	for (int i = 0; rejects[i]; i++) {
		if (opt_parse_rate(rejects[i], &v) == 0)
			fail_msg("rate '%s' accepted as %" PRIu64, rejects[i], v);
	}
	assert_int_equal(v, 5);
}

static void test_times(void **state)
{
	assert_int_equal(time_of("8us"), 8000000);
	assert_int_equal(time_of("1.5ms"), 1500000000);
	assert_int_equal(time_of("100ns"), 100000);
	assert_int_equal(time_of("250ps"), 250);
	assert_true(time_of("2s") == 2000000000000ULL);
	assert_int_equal(time_of("0.1us"), 100000);
	assert_int_equal(time_of("1.5us"), 1500000);
	assert_int_equal(time_of("0"), 0);
	assert_int_equal(time_of("0.0"), 0);
	assert_int_equal(time_of("0ns"), 0);
	assert_int_equal(time_of("1e3ns"), 1000000);
	assert_int_equal(time_of("0.000001s"), 1000000);
	assert_int_equal(time_of("1\xc2\xb5s"), 1000000);
	assert_int_equal(time_of("0.001ns"), 1);
	assert_true(time_of("18446744.073709551615s") == UINT64_MAX);

	uint64_t v = 9;
	const char *rejects[] = { "5",	"1.5",	    "0.5ps", "-1us", "18446745s", "1 hour",
				  "us", "0.0001ns", "3m",    "3S",   NULL };
	for (int i = 0; rejects[i]; i++) {
		if (opt_parse_time(rejects[i], &v) == 0)
			fail_msg("time '%s' accepted as %" PRIu64, rejects[i], v);
	}
	assert_int_equal(v, 9);
}

static void test_unit_messages(void **state)
{
	struct tp p = { 0 };
	bad(&p, "buf", "abc", "expected a size such as 4KiB or 16MB");
	bad(&p, "buf", "abc", "got 'abc'");
	bad(&p, "buf", "", "got ''");
	bad(&p, "buf", "-4KB", "expected a non-negative size, got '-4KB'");
	bad(&p, "buf", "1.5B", "whole number of bytes");
	bad(&p, "buf", "99999999999TB", "at most 18446744073709551615 bytes");
	bad(&p, "buf", "4XB", "KiB");
	bad(&p, "rate", "1.5bps", "whole number of bit/s");
	bad(&p, "rate", "quick", "expected a rate such as");
	bad(&p, "delay", "5", "expected a time with a unit");
	bad(&p, "delay", "5", "only 0 may be written without one");
	bad(&p, "delay", "0.5ps", "whole number of picoseconds");
	bad(&p, "delay", "8 parsecs", "expected a time such as 8us");
	assert_int_equal(p.buf, 0);
	assert_int_equal(p.delay, 0);
	ok(&p, "delay", "0");
	ok(&p, "buf", "1.5KiB");
	assert_int_equal(p.buf, 1536);
	ok(&p, "rate", "2.5Gbps");
	assert_true(p.rate == 2500000000ULL);
	ok(&p, "delay", "0.1us");
	assert_int_equal(p.delay, 100000);
}

static void test_numbers(void **state)
{
	struct tp p = { 0 };

	ok(&p, "gain", "0.25");
	assert_true(p.gain == 0.25);
	ok(&p, "gain", "1e-3");
	assert_true(p.gain == 1e-3);
	ok(&p, "gain", "1");
	assert_true(p.gain == 1.0);
	bad(&p, "gain", "abc", "expected a finite number");
	bad(&p, "gain", "nan", "got 'nan'");
	bad(&p, "gain", "inf", "expected a finite number");
	bad(&p, "gain", "0.5x", "got '0.5x'");
	bad(&p, "gain", "", "expected a finite number");
	bad(&p, "gain", "1.5", "expected a number between 0 and 1, got 1.5");
	bad(&p, "gain", "-0.1", "expected a number between 0 and 1, got -0.1");
	assert_true(p.gain == 1.0);

	ok(&p, "shift", "-10");
	assert_int_equal(p.shift, -10);
	ok(&p, "shift", "7");
	assert_int_equal(p.shift, 7);
	bad(&p, "shift", "4.2", "expected an integer, got '4.2'");
	bad(&p, "shift", "x", "expected an integer");
	bad(&p, "shift", "", "expected an integer");
	bad(&p, "shift", "11", "expected an integer between -10 and 10, got 11");
	bad(&p, "shift", "-11", "between -10 and 10, got -11");
	bad(&p, "shift", "99999999999999999999", "expected an integer between");
	assert_int_equal(p.shift, 7);

	ok(&p, "count", "64");
	assert_int_equal(p.count, 64);
	ok(&p, "count", "1");
	assert_int_equal(p.count, 1);
	bad(&p, "count", "-1", "expected a non-negative integer, got '-1'");
	bad(&p, "count", " -1", "non-negative");
	bad(&p, "count", "1x", "got '1x'");
	bad(&p, "count", "", "non-negative integer");
	bad(&p, "count", "0", "expected an integer between 1 and 64, got 0");
	bad(&p, "count", "65", "expected an integer between 1 and 64, got 65");
	bad(&p, "count", "18446744073709551616", "at most 18446744073709551615");
	assert_int_equal(p.count, 1);
}

static void test_bool_enum_string(void **state)
{
	struct tp p = { 0 };
	const char *yes[] = { "true", "yes", "on", "1", "True", "YES", NULL };
	const char *no[] = { "false", "no", "off", "0", "False", "OFF", NULL };
	for (int i = 0; yes[i]; i++) {
		p.ecn = false;
		ok(&p, "ecn", yes[i]);
		assert_true(p.ecn);
	}
	for (int i = 0; no[i]; i++) {
		p.ecn = true;
		ok(&p, "ecn", no[i]);
		assert_false(p.ecn);
	}
	bad(&p, "ecn", "maybe", "expected true or false");
	bad(&p, "ecn", "", "got ''");
	assert_false(p.ecn);

	ok(&p, "mode", "udmp");
	assert_int_equal(p.mode, 2);
	ok(&p, "mode", "dcqcn");
	assert_int_equal(p.mode, 0);
	bad(&p, "mode", "Strack", "expected one of dcqcn, strack, udmp, got 'Strack'");
	bad(&p, "mode", "", "expected one of");
	assert_int_equal(p.mode, 0);

	uint64_t live = mp_mem_live();
	ok(&p, "name", "first");
	assert_string_equal(p.name, "first");
	ok(&p, "name", "second value");
	assert_string_equal(p.name, "second value");
	ok(&p, "name", "");
	assert_string_equal(p.name, "");
	assert_true(mp_mem_live() > live);
	opt_free(tbl, &p);
	assert_null(p.name);
	assert_true(mp_mem_live() == live);
}

static void test_path(void **state)
{
	char dir[] = "/tmp/h1_optXXXXXX";
	char file[256], sub[256], want[300];
	struct mp_err e = { 0 };
	struct tp p = { 0 };

	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof file, "%s/cdf.txt", dir);
	snprintf(sub, sizeof sub, "%s/sub", dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fputs("1 0.5\n", f);
	fclose(f);
	assert_int_equal(mkdir(sub, 0700), 0);

	assert_int_equal(opt_parse_scalar(D("file"), &p, "cdf.txt", dir, &e), MP_OK);
	assert_string_equal(p.file, file);
	/* absolute paths ignore the base directory */
	assert_int_equal(opt_parse_scalar(D("file"), &p, file, "/nonexistent", &e), MP_OK);
	assert_string_equal(p.file, file);

	assert_int_equal(opt_parse_scalar(D("file"), &p, "nope.txt", dir, &e), MP_EUSER);
	snprintf(want, sizeof want, "cannot read file 'nope.txt' (resolved to '%s/nope.txt'): %s",
		 dir, "No such file or directory");
	assert_string_equal(e.msg, want);
	mp_err_clear(&e);
	assert_int_equal(opt_parse_scalar(D("file"), &p, "sub", dir, &e), MP_EUSER);
	assert_has(e.msg, "Is a directory");
	assert_has(e.msg, "cannot read file 'sub'");
	mp_err_clear(&e);
	assert_int_equal(opt_parse_scalar(D("file"), &p, "", dir, &e), MP_EUSER);
	assert_string_equal(p.file, file); /* unchanged by the failures */

	opt_free(tbl, &p);
	unlink(file);
	rmdir(sub);
	rmdir(dir);
}

static void test_defaults_and_lists(void **state)
{
	uint64_t live = mp_mem_live();
	struct tp p;
	memset(&p, 0xa5, sizeof p); /* set_defaults must not trust old contents */
	opt_set_defaults(tbl, &p);

	assert_int_equal(p.buf, 4096);
	assert_true(p.rate == 400000000000ULL);
	assert_int_equal(p.delay, 1000000);
	assert_int_equal(p.shift, -3);
	assert_int_equal(p.count, 8);
	assert_true(p.gain == 0.5);
	assert_true(p.ecn);
	assert_int_equal(p.mode, 1);
	assert_string_equal(p.name, "fabric");
	assert_string_equal(p.file, "");
	assert_int_equal(p.list.n, 3);
	assert_string_equal(p.list.v[0], "a");
	assert_string_equal(p.list.v[1], "b");
	assert_string_equal(p.list.v[2], "c");
	assert_int_equal(p.minbuf, 1000);
	assert_int_equal(p.hosts, 0); /* required: zeroed */

	ok(&p, "list", "d");
	assert_int_equal(p.list.n, 4);
	assert_string_equal(p.list.v[3], "d");

	/* deep copy: both sides own their strings */
	struct tp q;
	memcpy(&q, &p, sizeof q);
	opt_copy(tbl, &q, &p);
	assert_ptr_not_equal(q.name, p.name);
	assert_ptr_not_equal(q.list.v, p.list.v);
	assert_string_equal(q.list.v[3], "d");
	assert_string_equal(q.name, "fabric");
	assert_int_equal(q.count, 8);
	opt_free(tbl, &q);
	assert_null(q.list.v);
	assert_int_equal(q.list.n, 0);
	assert_string_equal(p.name, "fabric");

	assert_int_equal(opt_extent(tbl), offsetof(struct tp, hosts) + sizeof(uint64_t));

	opt_free(tbl, &p);
	assert_true(mp_mem_live() == live);

	static const struct opt_desc empty_list[] = {
		{ "l", OPT_STRLIST, 0, "", 0, 0, "empty", NULL },
		OPT_END,
	};
	struct opt_strlist l;
	memset(&l, 0x5a, sizeof l);
	opt_set_defaults(empty_list, &l);
	assert_int_equal(l.n, 0);
	assert_null(l.v);
	opt_free(empty_list, &l);
}

static void test_ranges(void **state)
{
	struct tp p = { 0 };
	struct mp_err e = { 0 };

	ok(&p, "rate", "1Mbps");
	assert_int_equal(p.rate, 1000000);
	ok(&p, "rate", "1.6Tbps");
	assert_true(p.rate == 1600000000000ULL);
	assert_int_equal(opt_parse_scalar(D("rate"), &p, "2Tbps", NULL, &e), MP_EUSER);
	assert_string_equal(e.msg, "expected a rate between 1Mbps and 1.6Tbps, got 2Tbps");
	assert_true(p.rate == 1600000000000ULL);
	bad(&p, "rate", "999990bps", "got 999.99Kbps");
	bad(&p, "rate", "999999bps", "got 999999bps");
	bad(&p, "rate", "1600000000001", "got 1600000000001bps");

	ok(&p, "minbuf", "64");
	ok(&p, "minbuf", "1TiB");
	mp_err_clear(&e);
	assert_int_equal(opt_parse_scalar(D("minbuf"), &p, "63", NULL, &e), MP_EUSER);
	assert_string_equal(e.msg, "expected a size of at least 64B, got 63B");
	assert_true(p.minbuf == 1ULL << 40);
}

static void fmt(const char *name, const struct tp *p, const char *want)
{
	char buf[256];
	opt_format_value(D(name), p, buf, sizeof buf);
	assert_string_equal(buf, want);
}

static void test_format(void **state)
{
	struct tp p = { 0 };
	char *items[] = { "a", "x,y", "true", "" };

	p.rate = 400000000000ULL;
	fmt("rate", &p, "400Gbps");
	p.rate = 2500000000ULL;
	fmt("rate", &p, "2.5Gbps");
	p.rate = 1600000000000ULL;
	fmt("rate", &p, "1.6Tbps");
	p.rate = 0;
	fmt("rate", &p, "0bps");
	p.delay = 8000000;
	fmt("delay", &p, "8us");
	p.delay = 1500000000;
	fmt("delay", &p, "1.5ms");
	p.delay = 100000;
	fmt("delay", &p, "100ns");
	p.delay = 1234567;
	fmt("delay", &p, "1234567ps");
	p.delay = 1234560;
	fmt("delay", &p, "1234.56ns");
	p.delay = 0;
	fmt("delay", &p, "0ps");
	p.buf = 4096;
	fmt("buf", &p, "4KiB");
	p.buf = 4000;
	fmt("buf", &p, "4KB");
	p.buf = 4001;
	fmt("buf", &p, "4001B");
	p.buf = 1536;
	fmt("buf", &p, "1.5KiB");
	p.buf = 1048576000;
	fmt("buf", &p, "1000MiB");
	p.buf = UINT64_MAX;
	fmt("buf", &p, "18446744073709551615B");
	p.gain = 0.5;
	fmt("gain", &p, "0.5");
	p.gain = 0.1;
	fmt("gain", &p, "0.1");
	p.gain = 1.0 / 3.0;
	fmt("gain", &p, "0.3333333333333333");
	p.gain = 1e-300;
	fmt("gain", &p, "1e-300");
	p.shift = -42;
	fmt("shift", &p, "-42");
	p.count = 12345678901234ULL;
	fmt("count", &p, "12345678901234");
	p.ecn = true;
	fmt("ecn", &p, "true");
	p.ecn = false;
	fmt("ecn", &p, "false");
	p.mode = 2;
	fmt("mode", &p, "udmp");

	p.name = "plain";
	fmt("name", &p, "plain");
	p.name = "";
	fmt("name", &p, "\"\"");
	p.name = "yes";
	fmt("name", &p, "\"yes\"");
	p.name = "a: b";
	fmt("name", &p, "\"a: b\"");
	p.name = "12";
	fmt("name", &p, "\"12\"");
	p.name = "say \"hi\"\n";
	fmt("name", &p, "\"say \\\"hi\\\"\\n\"");
	p.name = "8us";
	fmt("name", &p, "8us");
	p.name = "# no";
	fmt("name", &p, "\"# no\"");
	p.name = NULL;
	fmt("name", &p, "\"\"");

	p.list.v = items;
	p.list.n = 2;
	fmt("list", &p, "[a, \"x,y\"]");
	p.list.n = 4;
	fmt("list", &p, "[a, \"x,y\", \"true\", \"\"]");
	p.list.n = 0;
	fmt("list", &p, "[]");

	/* truncation is safe */
	char small[4];
	p.rate = 400000000000ULL;
	opt_format_value(D("rate"), &p, small, sizeof small);
	assert_string_equal(small, "400");

	char buf[32];
	opt_format_size(4096, buf, sizeof buf);
	assert_string_equal(buf, "4KiB");
	opt_format_rate(100000000000ULL, buf, sizeof buf);
	assert_string_equal(buf, "100Gbps");
	opt_format_time(2000000000000ULL, buf, sizeof buf);
	assert_string_equal(buf, "2s");
}

static uint64_t xs(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void round_trip(uint64_t v)
{
	static const char *const names[] = { "buf", "rate", "delay" };
	char buf[64];
	struct tp p = { 0 };
	for (int i = 0; i < 3; i++) {
		const struct opt_desc *d = D(names[i]);
		struct opt_desc free_d = *d;
		free_d.min = free_d.max = 0; /* round trip the whole 64-bit range */
		uint64_t *f = (uint64_t *)((char *)&p + d->offset);
		*f = v;
		opt_format_value(&free_d, &p, buf, sizeof buf);
		*f = ~v;
		struct mp_err e = { 0 };
		if (opt_parse_scalar(&free_d, &p, buf, NULL, &e) != MP_OK)
			fail_msg("%s %" PRIu64 " formatted as '%s' does not parse: %s", names[i], v,
				 buf, e.msg);
		if (*f != v)
			fail_msg("%s %" PRIu64 " -> '%s' -> %" PRIu64, names[i], v, buf, *f);
	}
}

static void test_round_trip(void **state)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	round_trip(0);
	round_trip(1);
	round_trip(UINT64_MAX);
	for (uint64_t p10 = 1, i = 0; i < 20; i++, p10 *= 10) {
		for (uint64_t m = 1; m < 2000; m += 7) {
			if (p10 <= UINT64_MAX / m)
				round_trip(m * p10);
		}
	}
	for (int sh = 0; sh < 64; sh++) {
		round_trip(1ULL << sh);
		round_trip(3ULL << sh >> 1);
		round_trip((1ULL << sh) - 1);
	}
	for (int i = 0; i < 20000; i++) {
		uint64_t v = xs(&s);
		round_trip(v);
		round_trip(v >> (v & 63));
		round_trip((v % 100000) * 10000000ULL);
		round_trip((v % 4096) * 1024 * 1024);
	}

	/* doubles: the shortest text reads back exactly */
	static const struct opt_desc dd = { "g", OPT_DOUBLE, 0, "0", 0, 0, "", NULL };
	for (int i = 0; i < 20000; i++) {
		double v, w = -1;
		uint64_t bits = xs(&s);
		memcpy(&v, &bits, sizeof v);
		if (v != v || v - v != 0) /* NaN or infinite */
			continue;
		char buf[64];
		struct mp_err e = { 0 };
		opt_format_value(&dd, &v, buf, sizeof buf);
		assert_int_equal(opt_parse_scalar(&dd, &w, buf, NULL, &e), MP_OK);
		if (memcmp(&v, &w, sizeof v) != 0)
			fail_msg("double %.17g -> '%s' -> %.17g", v, buf, w);
	}
}

static char *capture(void (*fn)(FILE *, const void *), const void *arg)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return out;
}

static void print_tbl(FILE *f, const void *arg)
{
	opt_print_table(f, tbl, "  ");
}

static void dump_tbl(FILE *f, const void *arg)
{
	opt_dump_yaml(f, tbl, arg, "    ");
}

static void test_print_table(void **state)
{
	char *out = capture(print_tbl, NULL);
	assert_has(out, "  buf ");
	assert_has(out, "dcqcn|strack|udmp");
	assert_has(out, "1Mbps..1.6Tbps");
	assert_has(out, "-10..10");
	assert_has(out, "0..1");
	assert_has(out, ">=64B");
	assert_has(out, "required");
	assert_has(out, "400Gbps");
	assert_has(out, "link delay");
	assert_has(out, " size ");
	assert_has(out, " rate ");
	assert_has(out, " time ");

	/* every row has its help text at the same column, after the name */
	int col = -1, rows = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		const struct opt_desc *d = &tbl[rows++];
		assert_true(strncmp(line, "  ", 2) == 0);
		assert_true(strncmp(line + 2, d->name, strlen(d->name)) == 0);
		size_t hl = strlen(d->help), ll = strlen(line);
		assert_true(ll > hl);
		const char *h = line + ll - hl; /* the help ends the line */
		assert_string_equal(h, d->help);
		if (col < 0)
			col = (int)(h - line);
		assert_int_equal((int)(h - line), col);
	}
	assert_int_equal(rows, 13);
	free(out);
}

static void test_dump_yaml(void **state)
{
	struct tp p;
	opt_set_defaults(tbl, &p);
	p.buf = 1536;
	char *out = capture(dump_tbl, &p);
	assert_has(out, "    buf: 1.5KiB\n");
	assert_has(out, "    rate: 400Gbps\n");
	assert_has(out, "    delay: 1us\n");
	assert_has(out, "    shift: -3\n");
	assert_has(out, "    gain: 0.5\n");
	assert_has(out, "    ecn: true\n");
	assert_has(out, "    mode: strack\n");
	assert_has(out, "    name: fabric\n");
	assert_has(out, "    file: \"\"\n");
	assert_has(out, "    list: [a, b, c]\n");
	assert_has(out, "    hosts: 0\n");
	free(out);
	opt_free(tbl, &p);
}

static void test_misc(void **state)
{
	assert_null(opt_find(tbl, "nope"));
	assert_null(opt_find(tbl, NULL));
	assert_ptr_equal(opt_find(tbl, "mode"), &tbl[7]);
	assert_string_equal(opt_type_name(OPT_SIZE), "size");
	assert_string_equal(opt_type_name(OPT_RATE), "rate");
	assert_string_equal(opt_type_name(OPT_TIME), "time");
	assert_string_equal(opt_type_name(OPT_BOOL), "bool");
	assert_string_equal(opt_type_name(OPT_STRLIST), "list");
	assert_int_equal(opt_parse_size(NULL, &(uint64_t){ 0 }), -1);
}

/* core/units.h on its own: what the allocator's MPSIM_MEM_LIMIT uses. */
static void test_units(void **state)
{
	struct mp_err e = { 0 };
	uint64_t v = 7;
	char buf[UNITS_BUF];

	assert_int_equal(units_parse(UNITS_SIZE, "8GiB", &v, NULL), MP_OK);
	assert_true(v == 8ULL << 30);
	assert_int_equal(units_parse(UNITS_TIME, "5", &v, &e), MP_EUSER);
	assert_true(v == 8ULL << 30); /* unchanged on failure */
	assert_non_null(strstr(e.msg, "expected a time with a unit"));
	units_format(UNITS_RATE, 1500000000ULL, buf, sizeof buf);
	assert_string_equal(buf, "1.5Gbps");
	assert_string_equal(units_noun(UNITS_SIZE), "a size");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),	   cmocka_unit_test(test_rates),
		cmocka_unit_test(test_times),	   cmocka_unit_test(test_unit_messages),
		cmocka_unit_test(test_numbers),	   cmocka_unit_test(test_bool_enum_string),
		cmocka_unit_test(test_path),	   cmocka_unit_test(test_defaults_and_lists),
		cmocka_unit_test(test_ranges),	   cmocka_unit_test(test_format),
		cmocka_unit_test(test_round_trip), cmocka_unit_test(test_print_table),
		cmocka_unit_test(test_dump_yaml),  cmocka_unit_test(test_misc),
		cmocka_unit_test(test_units),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

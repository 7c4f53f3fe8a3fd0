/* test_pack.c - a results folder as bytes and back (results_pack and
 * results_unpack, io/resdir.c): how an MPI rank hands a sweep point's folder to
 * rank 0. A folder with a subfolder, an empty file, an empty folder and bytes
 * of every value comes back byte for byte; a record that would write outside
 * the folder, or a truncated one, is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/mem.h"
#include "io/results.h"

static char base[64];

static void put(const char *rel, const char *bytes, size_t n)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* the n bytes of base/rel into buf; returns n, or -1 when it is absent */
static long get(const char *rel, char *buf, size_t cap)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	FILE *f = fopen(p, "rb");
	if (!f)
		return -1;
	long n = (long)fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

static int setup(void **state)
{
	(void)state;
	snprintf(base, sizeof base, "/tmp/mpsim-test-pack-XXXXXX");
	assert_non_null(mkdtemp(base));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_round_trip(void **state)
{
	(void)state;
	char all[256], p[256], back[512];
	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	snprintf(p, sizeof p, "%s/a", base);
	assert_int_equal(mkdir(p, 0777), 0);
	snprintf(p, sizeof p, "%s/a/plots", base);
	assert_int_equal(mkdir(p, 0777), 0);
	snprintf(p, sizeof p, "%s/a/empty_dir", base);
	assert_int_equal(mkdir(p, 0777), 0);
	put("a/flows.csv", "id,src\n0,1\n", 11);
	put("a/.mpsim-point", "mpsim-point 1\n", 14);
	put("a/empty", "", 0);
	put("a/plots/bytes.bin", all, sizeof all);

	struct mp_err e = { 0 };
	char *buf = NULL;
	size_t n = 0;
	snprintf(p, sizeof p, "%s/a", base);
	assert_int_equal(results_pack(p, &buf, &n, &e), 0);
	/* records: 2 folders ('d', path, 0), 4 files ('f', path, 0, 8-byte size,
	 * bytes): plots, empty_dir, flows.csv, .mpsim-point, empty, plots/bytes.bin */
	size_t want = (1 + 5 + 1) + (1 + 9 + 1) + (1 + 9 + 1 + 8 + 11) + (1 + 12 + 1 + 8 + 14) +
		      (1 + 5 + 1 + 8) + (1 + 15 + 1 + 8 + 256);
	assert_int_equal(n, want);

	snprintf(p, sizeof p, "%s/b", base);
	assert_int_equal(results_unpack(p, buf, n, &e), 0);
	assert_int_equal(get("b/flows.csv", back, sizeof back), 11);
	assert_memory_equal(back, "id,src\n0,1\n", 11);
	assert_int_equal(get("b/.mpsim-point", back, sizeof back), 14);
	assert_int_equal(get("b/empty", back, sizeof back), 0);
	assert_int_equal(get("b/plots/bytes.bin", back, sizeof back), 256);
	assert_memory_equal(back, all, 256);
	struct stat st;
	snprintf(p, sizeof p, "%s/b/empty_dir", base);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));

	/* truncated anywhere inside the last file: refused, not half-believed */
	snprintf(p, sizeof p, "%s/c", base);
	assert_int_equal(results_unpack(p, buf, n - 1, &e), MP_EIO);
	assert_non_null(strstr(e.msg, "damaged"));
	mp_free(buf);
}

static void test_paths_stay_inside(void **state)
{
	(void)state;
	static const char *const bad[] = { "../x", "/etc/x", "a/../../x", "a//x", "./x", "" };
	char p[256], rec[64];
	snprintf(p, sizeof p, "%s/d", base);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct mp_err e = { 0 };
		size_t l = strlen(bad[i]);
		rec[0] = 'f';
		memcpy(rec + 1, bad[i], l + 1);
		memset(rec + 2 + l, 0, 8); /* an empty file */
		assert_int_equal(results_unpack(p, rec, 10 + l, &e), MP_EIO);
		assert_non_null(strstr(e.msg, "damaged folder record"));
	}
	assert_int_equal(get("x", p, sizeof p), -1);
	/* an unknown kind of record */
	struct mp_err e = { 0 };
	assert_int_equal(results_unpack(p, "zx\0", 3, &e), MP_EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_paths_stay_inside),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

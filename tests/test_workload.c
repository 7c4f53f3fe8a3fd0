/* test_workload.c - the traffic generators of src/workload/: the registry,
 * permutation (derangement, uniformity, reproducibility, cross-ToR locality),
 * incast, all-to-all, flows_file and htsim_cm parsing with their errors, and
 * Poisson arrivals (offered load, size mean, ordering, determinism); message
 * DAGs: the dag reader (CSV and JSON give one list, ids to positions, errors
 * naming file:line) and htsim's triggers (oneshot, multishot, barrier, and a
 * matrix written by htsim's own gen_allreduce.py).
 * Parameters are set through each workload's option table, as a file would. */
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
#include "core/opt.h"
#include "workload/cdf.h"
#include "workload/workload.h"

/* the generators, as workload/workload.c registers them */
extern const struct workload_ops permutation_workload_ops, incast_workload_ops,
    all_to_all_workload_ops, flows_file_workload_ops, htsim_cm_workload_ops, poisson_workload_ops,
    dag_file_workload_ops, chakra_workload_ops, simai_workload_ops;

#ifndef MPSIM_SOURCE_DIR
#error "MPSIM_SOURCE_DIR must name the repository root"
#endif
#define DATA_DIR MPSIM_SOURCE_DIR "/data/workloads"

/* ---- helpers ---- */

/* Parameters from defaults plus "key", "value" pairs, NULL-terminated. */
static void *params_new(const struct workload_ops *ops, ...)
{
	void *p = mp_calloc(1, ops->params_size);
	const char *key;
	va_list ap;

	opt_set_defaults(ops->opts, p);
	va_start(ap, ops);
	while ((key = va_arg(ap, const char *))) {
		const char *val = va_arg(ap, const char *);
		const struct opt_desc *d = opt_find(ops->opts, key);
		struct mp_err e = { 0 };

		if (!d)
			fail_msg("%s has no option '%s'", ops->name, key);
		if (opt_parse_scalar(d, p, val, NULL, &e))
			fail_msg("%s.%s = %s: %s", ops->name, key, val, e.msg);
	}
	va_end(ap);
	return p;
}

static void params_free(const struct workload_ops *ops, void *p)
{
	opt_free(ops->opts, p);
	mp_free(p);
}

static struct wl_env env_of(uint32_t nhosts, uint32_t hpt, uint64_t seed)
{
	return (struct wl_env){ .nhosts = nhosts,
				.hosts_per_tor = hpt,
				.host_rate_bps = 100000000000ull,
				.seed = seed };
}

/* Generate and expect success. */
static void gen_ok(const struct workload_ops *ops, const void *p, const struct wl_env *env,
		   struct flow_list *out)
{
	struct mp_err e = { 0 };

	memset(out, 0, sizeof(*out));
	if (ops->generate(p, env, out, &e))
		fail_msg("%s: %s", ops->name, e.msg);
	for (size_t i = 0; i < out->n; i++) {
		assert_int_equal(out->v[i].id, i);
		assert_true(out->v[i].src != out->v[i].dst);
		assert_true(out->v[i].src < env->nhosts && out->v[i].dst < env->nhosts);
		assert_true(out->v[i].bytes > 0);
	}
}

/* Generate and expect a user error whose message contains `want`. */
static void gen_err(const struct workload_ops *ops, const void *p, const struct wl_env *env,
		    const char *want)
{
	struct flow_list out = { 0 };
	struct mp_err e = { 0 };
	int rc = ops->generate(p, env, &out, &e);

	if (rc != MP_EUSER || !strstr(e.msg, want))
		fail_msg("%s: rc %d, message '%s', expected '%s'", ops->name, rc, e.msg, want);
	assert_int_equal(out.n, 0);
	assert_int_equal(out.ndeps, 0);
	flow_list_free(&out);
}

static int same_flow(const struct flow_spec *a, const struct flow_spec *b)
{
	return a->id == b->id && a->src == b->src && a->dst == b->dst && a->bytes == b->bytes &&
	       a->start == b->start && a->dep0 == b->dep0 && a->ndeps == b->ndeps &&
	       a->need == b->need && a->delay == b->delay && a->job == b->job && a->iter == b->iter;
}

/* Field by field: struct flow_spec has padding. */
static int same_flows(const struct flow_list *a, const struct flow_list *b)
{
	if (a->n != b->n || a->ndeps != b->ndeps)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (!same_flow(&a->v[i], &b->v[i]))
			return 0;
	return !a->ndeps || !memcmp(a->deps, b->deps, a->ndeps * sizeof(*a->deps));
}

/* Flow i waits for exactly `want` (ids, | FLOW_DEP_SENT), in that order, and
 * needs `need` of them (0 = all). */
static void check_deps(const struct flow_list *l, size_t i, uint32_t need, size_t nwant,
		       const uint32_t *want)
{
	const struct flow_spec *f = &l->v[i];

	if (f->ndeps != nwant || f->need != need)
		fail_msg("flow %zu: %u deps, need %u; expected %zu deps, need %u", i, f->ndeps,
			 f->need, nwant, need);
	for (size_t k = 0; k < nwant; k++)
		if (l->deps[f->dep0 + k] != want[k])
			fail_msg("flow %zu: dep %zu is 0x%x, expected 0x%x", i, k,
				 l->deps[f->dep0 + k], want[k]);
}
#define DEPS(l, i, need, ...)                                                          \
	check_deps(l, i, need, sizeof((uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t), \
		   (uint32_t[]){ __VA_ARGS__ })

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char tmpdir[64];

static int make_tmpdir(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/mpsim_wl_XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* Every name temp_file() is given in this file. */
static const char *const temp_names[] = { "flows.csv", "bad.csv",     "perm.cm", "t0.cm",
					  "bad.cm",    "bad_cdf.txt", "dag.csv", "dag.json",
					  "bad.json",  "dag.txt",     "trig.cm", NULL };

static int remove_tmpdir(void **state)
{
	char path[160];

	(void)state;
	for (int i = 0; temp_names[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, temp_names[i]);
		unlink(path);
	}
	return rmdir(tmpdir);
}

/* A temp file holding `text`; returns its path (static buffer). */
static const char *temp_file(const char *name, const char *text)
{
	static char path[160];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	write_file(path, text);
	return path;
}

/* A file `name` holding `text` makes ops fail with "<path>:<msg>". */
static void file_err(const struct workload_ops *ops, const struct wl_env *env, const char *name,
		     const char *text, const char *msg)
{
	const char *path = temp_file(name, text);
	void *p = params_new(ops, "file", path, NULL);
	char want[512];

	snprintf(want, sizeof(want), "%s:%s", path, msg);
	gen_err(ops, p, env, want);
	params_free(ops, p);
}

/* ---- registry ---- */

static void test_registry(void **state)
{
	size_t n = 0;

	(void)state;
	for (const struct workload_ops *const *w = workload_registry; *w; w++, n++) {
		void *p = mp_calloc(1, (*w)->params_size);

		assert_non_null((*w)->name);
		assert_non_null((*w)->summary);
		assert_non_null((*w)->opts);
		assert_non_null((*w)->generate);
		assert_ptr_equal(workload_find((*w)->name), *w);
		opt_set_defaults((*w)->opts, p); /* panics if a default does not parse */
		params_free(*w, p);
	}
	assert_int_equal(n, 9);
	assert_ptr_equal(workload_find("poisson"), &poisson_workload_ops);
	assert_ptr_equal(workload_find("htsim_cm"), &htsim_cm_workload_ops);
	assert_ptr_equal(workload_find("dag"), &dag_file_workload_ops);
	assert_ptr_equal(workload_find("chakra"), &chakra_workload_ops);
	assert_ptr_equal(workload_find("simai"), &simai_workload_ops);
	assert_null(workload_find("nope"));
}

/* ---- permutation ---- */

static void check_permutation(const struct flow_list *l, uint32_t n)
{
	char *in = calloc(n, 1), *outd = calloc(n, 1);

	assert_int_equal(l->n, n);
	for (size_t i = 0; i < l->n; i++) {
		const struct flow_spec *f = &l->v[i];

		assert_true(f->src < n && f->dst < n && f->src != f->dst);
		assert_false(outd[f->src]);
		assert_false(in[f->dst]);
		outd[f->src] = in[f->dst] = 1;
	}
	free(in);
	free(outd);
}

static void test_permutation_derangement(void **state)
{
	static const uint32_t sizes[] = { 2, 3, 7, 64, 1000 };
	const struct workload_ops *ops = &permutation_workload_ops;
	void *p = params_new(ops, NULL);

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct wl_env env = env_of(sizes[i], 0, 42 + i);
		struct flow_list l;

		gen_ok(ops, p, &env, &l);
		check_permutation(&l, sizes[i]);
		assert_int_equal(l.v[0].bytes, 2000000); /* default 2MB */
		assert_int_equal(l.v[0].start, 0);
		flow_list_free(&l);
	}
	params_free(ops, p);
}

static void test_permutation_uniform(void **state)
{
	/* n = 4 has 9 derangements; over 18,000 seeds each should come ~2,000
	 * times (sd ~42). A single-cycle method (Sattolo) would never give the
	 * three double transpositions. */
	const struct workload_ops *ops = &permutation_workload_ops;
	void *p = params_new(ops, NULL);
	int count[256] = { 0 }, kinds = 0;

	(void)state;
	for (uint64_t seed = 0; seed < 18000; seed++) {
		struct wl_env env = env_of(4, 0, seed);
		struct flow_list l;
		int code = 0;

		gen_ok(ops, p, &env, &l);
		for (int i = 0; i < 4; i++)
			code = code * 4 + (int)l.v[i].dst;
		count[code]++;
		flow_list_free(&l);
	}
	for (int c = 0; c < 256; c++) {
		if (!count[c])
			continue;
		kinds++;
		if (abs(count[c] - 2000) > 200)
			fail_msg("derangement %d drawn %d times, expected about 2000", c, count[c]);
	}
	assert_int_equal(kinds, 9);
	params_free(ops, p);
}

static void test_permutation_seeds(void **state)
{
	const struct workload_ops *ops = &permutation_workload_ops;
	void *p = params_new(ops, "size", "64KiB", "start", "5us", NULL);
	struct wl_env e1 = env_of(64, 8, 1), e2 = env_of(64, 8, 2);
	struct flow_list a, b, c;

	(void)state;
	gen_ok(ops, p, &e1, &a);
	gen_ok(ops, p, &e1, &b);
	gen_ok(ops, p, &e2, &c);
	assert_true(same_flows(&a, &b));
	assert_false(same_flows(&a, &c));
	assert_int_equal(a.v[3].bytes, 65536);
	assert_int_equal(a.v[3].start, 5000000);
	flow_list_free(&a);
	flow_list_free(&b);
	flow_list_free(&c);
	params_free(ops, p);
}

static void test_permutation_hosts(void **state)
{
	const struct workload_ops *ops = &permutation_workload_ops;
	void *p = params_new(ops, "hosts", "5", NULL);
	struct wl_env env = env_of(10, 0, 3);
	struct flow_list l;

	(void)state;
	gen_ok(ops, p, &env, &l);
	check_permutation(&l, 5);
	flow_list_free(&l);
	params_free(ops, p);

	p = params_new(ops, "hosts", "11", NULL);
	gen_err(ops, p, &env, "hosts: expected at most 10");
	params_free(ops, p);
	p = params_new(ops, "hosts", "1", NULL);
	gen_err(ops, p, &env, "hosts: expected at least 2");
	params_free(ops, p);
}

static void test_permutation_cross_tor(void **state)
{
	const struct workload_ops *ops = &permutation_workload_ops;
	void *p = params_new(ops, "locality", "cross_tor", NULL);
	int hits[64] = { 0 };

	(void)state;
	/* Locality holds for several shapes, including two ToRs (every host must
	 * go to the other half) and a partial last ToR. */
	static const uint32_t shapes[][2] = { { 64, 8 }, { 16, 8 },    { 12, 4 },
					      { 10, 4 }, { 1000, 32 }, { 7, 1 } };
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct wl_env env = env_of(shapes[s][0], shapes[s][1], 9 + s);
		struct flow_list l;

		gen_ok(ops, p, &env, &l);
		check_permutation(&l, shapes[s][0]);
		for (size_t i = 0; i < l.n; i++)
			assert_true(l.v[i].src / shapes[s][1] != l.v[i].dst / shapes[s][1]);
		flow_list_free(&l);
	}
	/* Spread: over 2,800 seeds, host 0 of 64 (8 per ToR) should reach each of
	 * the 56 hosts outside its ToR about 50 times. */
	for (uint64_t seed = 0; seed < 2800; seed++) {
		struct wl_env env = env_of(64, 8, seed);
		struct flow_list l;

		gen_ok(ops, p, &env, &l);
		hits[l.v[0].dst]++;
		flow_list_free(&l);
	}
	for (int h = 0; h < 64; h++) {
		if (h < 8)
			assert_int_equal(hits[h], 0);
		else if (hits[h] < 20 || hits[h] > 90)
			fail_msg("host 0 -> %d drawn %d times, expected about 50", h, hits[h]);
	}
	/* Impossible or unknown layouts. */
	struct wl_env bad = env_of(12, 8, 1), unknown = env_of(12, 0, 1);
	gen_err(ops, p, &bad, "locality: cross_tor is impossible: 8 of the 12 hosts");
	gen_err(ops, p, &unknown, "locality: cross_tor needs the number of hosts per ToR");
	params_free(ops, p);
	p = params_new(ops, "locality", "cross_tor", "hosts", "6", NULL);
	struct wl_env one_tor = env_of(64, 8, 1);
	gen_err(ops, p, &one_tor, "6 of the 6 hosts sit under one ToR");
	params_free(ops, p);
}

/* cross_tor is a Markov chain, not exact rejection: check that it is close
 * to uniform where every valid permutation can be listed. For n hosts with hpt
 * per ToR, enumerate the cross-ToR permutations, then draw ~200 of each
 * (sd ~14). Three ToRs of two hosts is the case swaps alone cannot mix. */
static void check_cross_tor_uniform(uint32_t n, uint32_t hpt, int expect_valid)
{
	const struct workload_ops *ops = &permutation_workload_ops;
	void *p = params_new(ops, "locality", "cross_tor", NULL);
	int ncodes = 1, valid = 0, *count;

	for (uint32_t i = 0; i < n; i++)
		ncodes *= (int)n;
	count = calloc((size_t)ncodes, sizeof(*count));
	/* Mark the valid codes (destinations as base-n digits) with -1. */
	for (int code = 0; code < ncodes; code++) {
		int used = 0, ok = 1, c = code;

		for (int i = (int)n - 1; i >= 0; i--, c /= (int)n) {
			int d = c % (int)n;

			ok &= !(used >> d & 1) && d / (int)hpt != i / (int)hpt;
			used |= 1 << d;
		}
		if (ok) {
			count[code] = -1;
			valid++;
		}
	}
	assert_int_equal(valid, expect_valid);
	for (uint64_t seed = 0; seed < 200ull * (uint64_t)valid; seed++) {
		struct wl_env env = env_of(n, hpt, seed);
		struct flow_list l;
		int code = 0;

		gen_ok(ops, p, &env, &l);
		for (uint32_t i = 0; i < n; i++)
			code = code * (int)n + (int)l.v[i].dst;
		if (count[code] == 0)
			fail_msg("permutation %d is not cross-ToR", code);
		count[code] += count[code] < 0 ? 2 : 1; /* -1 becomes 1 on the first hit */
		flow_list_free(&l);
	}
	for (int code = 0; code < ncodes; code++)
		if (count[code] && (count[code] < 140 || count[code] > 260))
			fail_msg("%u hosts, %u per ToR: permutation %d drawn %d times, "
				 "expected about 200",
				 n, hpt, code, count[code] < 0 ? 0 : count[code]);
	free(count);
	params_free(ops, p);
}

static void test_permutation_cross_tor_uniform(void **state)
{
	(void)state;
	check_cross_tor_uniform(6, 2, 80);
	check_cross_tor_uniform(5, 2, 16); /* a partial last ToR */
	check_cross_tor_uniform(6, 3, 36); /* two ToRs: a bijection between halves */
}

/* ---- incast ---- */

static void test_incast(void **state)
{
	const struct workload_ops *ops = &incast_workload_ops;
	struct wl_env env = env_of(16, 4, 5);
	struct flow_list l, l2;
	void *p = params_new(ops, NULL);

	(void)state;
	gen_ok(ops, p, &env, &l);
	assert_int_equal(l.n, 8);
	for (size_t i = 0; i < l.n; i++) {
		assert_int_equal(l.v[i].src, i + 1);
		assert_int_equal(l.v[i].dst, 0);
		assert_int_equal(l.v[i].bytes, 16000000);
		assert_int_equal(l.v[i].start, 0);
	}
	flow_list_free(&l);
	params_free(ops, p);

	/* Every other host into host 3: the receiver is skipped. */
	p = params_new(ops, "senders", "15", "receiver", "3", "size", "1MiB", "start", "2us", NULL);
	gen_ok(ops, p, &env, &l);
	assert_int_equal(l.n, 15);
	for (size_t i = 0; i < l.n; i++) {
		assert_int_equal(l.v[i].src, i < 3 ? i : i + 1);
		assert_int_equal(l.v[i].dst, 3);
		assert_int_equal(l.v[i].bytes, 1048576);
		assert_int_equal(l.v[i].start, 2000000);
	}
	flow_list_free(&l);
	params_free(ops, p);

	/* Random senders: distinct, not the receiver, in host order, seeded. */
	p = params_new(ops, "senders", "5", "receiver", "7", "pick", "random", NULL);
	gen_ok(ops, p, &env, &l);
	gen_ok(ops, p, &env, &l2);
	assert_true(same_flows(&l, &l2));
	assert_int_equal(l.n, 5);
	for (size_t i = 0; i < l.n; i++) {
		assert_int_equal(l.v[i].dst, 7);
		if (i)
			assert_true(l.v[i].src > l.v[i - 1].src);
	}
	flow_list_free(&l2);
	int differs = 0;
	for (uint64_t seed = 100; seed < 110; seed++) {
		struct wl_env e2 = env_of(16, 4, seed);

		gen_ok(ops, p, &e2, &l2);
		differs += !same_flows(&l, &l2);
		flow_list_free(&l2);
	}
	assert_true(differs >= 8);
	flow_list_free(&l);
	params_free(ops, p);

	p = params_new(ops, "senders", "16", NULL);
	gen_err(ops, p, &env, "senders: expected 1 to 15");
	params_free(ops, p);
	p = params_new(ops, "receiver", "16", NULL);
	gen_err(ops, p, &env, "receiver: expected a host index below 16");
	params_free(ops, p);
}

/* ---- all-to-all ---- */

static void test_all_to_all(void **state)
{
	const struct workload_ops *ops = &all_to_all_workload_ops;
	struct wl_env env = env_of(8, 0, 1);
	struct flow_list l;
	int seen[8][8] = { { 0 } };
	void *p = params_new(ops, "size", "4KB", NULL);

	(void)state;
	gen_ok(ops, p, &env, &l);
	assert_int_equal(l.n, 8 * 7);
	for (size_t i = 0; i < l.n; i++) {
		assert_int_equal(l.v[i].bytes, 4000);
		seen[l.v[i].src][l.v[i].dst]++;
	}
	for (int s = 0; s < 8; s++)
		for (int d = 0; d < 8; d++)
			assert_int_equal(seen[s][d], s != d);
	/* Host s starts with s+1. */
	assert_int_equal(l.v[7 * 3].src, 3);
	assert_int_equal(l.v[7 * 3].dst, 4);
	flow_list_free(&l);
	params_free(ops, p);

	p = params_new(ops, "hosts", "5", NULL);
	gen_ok(ops, p, &env, &l);
	assert_int_equal(l.n, 20);
	for (size_t i = 0; i < l.n; i++)
		assert_true(l.v[i].src < 5 && l.v[i].dst < 5);
	flow_list_free(&l);
	params_free(ops, p);
}

/* ---- flows_file ---- */

static void test_flows_file(void **state)
{
	const struct workload_ops *ops = &flows_file_workload_ops;
	struct wl_env env = env_of(8, 0, 1);
	struct flow_list l;
	const char *path = temp_file("flows.csv", "# three flows\n"
						  "\n"
						  "src,dst,bytes,start\n"
						  "0,5,2MB,0\n"
						  " 3 , 1 , 64KiB , 10us \n"
						  "# a comment between flows\n"
						  "7,2,1500,1.5ms");
	void *p = params_new(ops, "file", path, NULL);

	(void)state;
	gen_ok(ops, p, &env, &l);
	assert_int_equal(l.n, 3);
	assert_true(l.v[0].src == 0 && l.v[0].dst == 5 && l.v[0].bytes == 2000000 &&
		    l.v[0].start == 0);
	assert_true(l.v[1].src == 3 && l.v[1].dst == 1 && l.v[1].bytes == 65536 &&
		    l.v[1].start == 10 * PS_PER_US);
	assert_true(l.v[2].src == 7 && l.v[2].dst == 2 && l.v[2].bytes == 1500 &&
		    l.v[2].start == 1500 * PS_PER_US);
	flow_list_free(&l);
	params_free(ops, p);
}

static const struct {
	const char *text;
	const char *msg; /* after "<path>:" */
} flows_bad[] = {
	{ "src,dst,bytes,start\n0,0,1,0\n",
	  "2: expected dst different from src (both are host 0)" },
	{ "src,dst,bytes,start\n0,1,1,0\n0,99,1,0\n", "3: dst: expected a host index below 8" },
	{ "src,dst,bytes,start\n8,1,1,0\n", "2: src: expected a host index below 8" },
	{ "src,dst,bytes,start\n-1,2,100,0\n", "2: src: expected a host index (an unsigned" },
	{ "src,dst,bytes,start\n0,1,abc,0\n", "2: bytes: expected a size above 0" },
	{ "src,dst,bytes,start\n0,1,0,0\n", "2: bytes: expected a size above 0" },
	{ "src,dst,bytes,start\n0,1,100,5\n", "2: start: expected a time with a unit" },
	{ "src,dst,bytes,start\n\n# c\n0,1,100\n", "4: expected 4 comma-separated fields "
						   "(src,dst,bytes,start), found 3" },
	{ "src,dst,bytes,start\n0,1,100,0,9\n", "2: expected 4 comma-separated fields "
						"(src,dst,bytes,start), found more than 4" },
	{ "src,dst,bytes,start,path,ack_path\n0,1,100,0,1,x\n",
	  "2: ack_path: expected a next-hop index 0..65534 or nothing, found 'x'" },
	{ "src,dst,bytes,start,path,ack_path\n0,1,100,0,1\n",
	  "2: expected 6 comma-separated fields (src,dst,bytes,start,path,ack_path), found 5" },
	{ "src,dst,bytes\n0,1,100\n", "1: expected the header line 'src,dst,bytes,start'" },
	{ "# only a comment\n", "1: expected the header line" },
	{ "src,dst,bytes,start\n# nothing\n", "2: expected at least one flow after the header" },
};

static void test_flows_file_errors(void **state)
{
	const struct workload_ops *ops = &flows_file_workload_ops;
	struct wl_env env = env_of(8, 0, 1);

	(void)state;
	for (size_t i = 0; i < sizeof(flows_bad) / sizeof(flows_bad[0]); i++)
		file_err(ops, &env, "bad.csv", flows_bad[i].text, flows_bad[i].msg);
}

/* ---- htsim_cm ---- */

/* The htsim format (csg-htsim sim/datacenter/connection_matrix.cpp): header
 * lines, then "src->dst" with id/start/size in any order; start in ps. */
static const char htsim_sample[] = "Nodes 8\n"
				   "Connections 4\n"
				   "# a comment\n"
				   "0->5 id 1 start 0 size 2000000\n"
				   "5->3 id 2 start 1000000 size 2000000\n"
				   "\n"
				   "3->0 size 4096 start 2.5e6 id 3\n"
				   "7->6 id 4 start 12 size 1\n";

static void test_htsim_cm(void **state)
{
	const struct workload_ops *ops = &htsim_cm_workload_ops;
	struct wl_env env = env_of(8, 0, 1);
	struct flow_list l;
	void *p = params_new(ops, "file", temp_file("perm.cm", htsim_sample), NULL);

	(void)state;
	gen_ok(ops, p, &env, &l);
	assert_int_equal(l.n, 4);
	assert_true(l.v[0].src == 0 && l.v[0].dst == 5 && l.v[0].bytes == 2000000 &&
		    l.v[0].start == 0);
	assert_true(l.v[1].src == 5 && l.v[1].dst == 3 && l.v[1].start == PS_PER_US);
	assert_true(l.v[2].src == 3 && l.v[2].dst == 0 && l.v[2].bytes == 4096 &&
		    l.v[2].start == 2500000);
	assert_true(l.v[3].src == 7 && l.v[3].dst == 6 && l.v[3].bytes == 1 && l.v[3].start == 12);
	flow_list_free(&l);
	/* Fewer nodes than the fabric's hosts is fine; more is not. */
	struct wl_env big = env_of(128, 0, 1), small = env_of(4, 0, 1);
	gen_ok(ops, p, &big, &l);
	assert_int_equal(l.n, 4);
	flow_list_free(&l);
	gen_err(ops, p, &small, ":1: Nodes: expected 2 to 4 (the fabric's hosts), found 8");
	params_free(ops, p);

	/* Triggers 0 and Failures 0 headers, id omitted, no final newline. */
	p = params_new(ops, "file",
		       temp_file("t0.cm", "Nodes 4\nConnections 1\nTriggers 0\n"
					  "Failures 0\n1->2 start 5 size 10"),
		       NULL);
	gen_ok(ops, p, &env, &l);
	assert_int_equal(l.n, 1);
	assert_true(l.v[0].src == 1 && l.v[0].dst == 2 && l.v[0].start == 5);
	flow_list_free(&l);
	params_free(ops, p);
}

#define CM_HDR "Nodes 8\nConnections 2\n"
#define CM_T1 "Nodes 8\nConnections 2\nTriggers 1\n"
#define CM_T2 "Nodes 8\nConnections 2\nTriggers 2\n"
static const struct {
	const char *text;
	const char *msg; /* after "<path>:" */
} cm_bad[] = {
	{ CM_HDR "0->1 id 1 start 0 size 10\n", "3: expected 2 connections (the Connections "
						"line), found 1" },
	{ CM_HDR "0->1 id 1 start 0 size 10\n1->2 id 2 trigger 1 size 10\n",
	  "4: trigger 1: expected a trigger defined by a line 'trigger id 1 "
	  "oneshot|multishot|barrier', found none" },
	{ CM_HDR "0->1 id 1 start 0 size 10 send_done_trigger 2\n1->2 id 2 start 0 size 1\n",
	  "3: send_done_trigger 2: expected a trigger defined by a line" },
	{ CM_T1 "0->1 id 1 start 0 size 10 recv_done_trigger 2\n1->2 start 0 size 1\n"
		"trigger id 1 oneshot\n",
	  "4: recv_done_trigger 2: expected a trigger defined by a line" },
	{ "Nodes 8\nConnections 1\nTriggers 1\n0->1 start 0 size 1\n",
	  "4: expected 1 trigger lines (the Triggers line), found 0" },
	{ CM_HDR "0->1 id 1 start 0 size 10 send_done_trigger 1\n1->2 id 2 size 1 trigger 1\n"
		 "trigger id 1 oneshot\n",
	  "5: expected 0 trigger lines (the Triggers line), found 1" },
	{ CM_T1 "0->1 id 1 start 0 size 10 send_done_trigger 1\n"
		"1->2 id 2 start 0 trigger 1 size 1\ntrigger id 1 oneshot\n",
	  "5: expected either 'start' or 'trigger', not both" },
	{ CM_HDR "0->1 id 1 trigger 0 size 10\n", "3: trigger: expected a trigger id above 0, "
						  "found '0'" },
	{ CM_HDR "0->1 id 1 start 0 start 5 size 10\n", "3: expected 'start' once in a "
							"connection, found it again" },
	{ CM_T1 "trigger oneshot\n", "4: expected 'id <trigger id>' in a trigger line" },
	{ CM_T1 "trigger id 1\n", "4: expected a trigger type: oneshot, multishot or barrier" },
	{ CM_T1 "trigger id 1 oneshot barrier\n", "4: expected one trigger type, found 'barrier' "
						  "after 'oneshot'" },
	{ CM_T1 "trigger id 1 barrier\n", "4: barrier: expected 'count <activations>' above 0" },
	{ CM_T1 "trigger id 1 oneshot now\n", "4: expected id, count, oneshot, multishot or "
					      "barrier in a trigger line, found 'now'" },
	{ CM_T2 "trigger id 1 oneshot\n0->1 start 0 size 1\n1->2 start 0 size 1\n"
		"trigger id 1 multishot\n",
	  "7: id: expected distinct trigger ids, found id 1 again (first at line 4)" },
	{ CM_T1 "0->1 id 1 start 0 size 10\n1->2 id 2 trigger 1 size 10\ntrigger id 1 oneshot\n",
	  "5: trigger 1 (line 6) starts this connection, but no completion can activate it "
	  "first: expected 'send_done_trigger 1' or 'recv_done_trigger 1' on a connection it "
	  "does not start" },
	{ CM_T1 "0->1 id 1 start 0 size 10\n1->2 id 2 trigger 1 size 10 send_done_trigger 1\n"
		"trigger id 1 oneshot\n",
	  "5: trigger 1 (line 6) starts this connection, but no completion can activate it" },
	{ CM_T1 "0->1 start 0 size 10 send_done_trigger 1\n1->2 trigger 1 size 10 "
		"send_done_trigger 1\ntrigger id 1 barrier count 2\n",
	  "6: barrier trigger 1: expected count at most 1 (the completions that can activate it "
	  "before it fires), found 2: it would never fire" },
	{ "Nodes 8\nConnections 3\nTriggers 1\n0->1 start 0 size 10 send_done_trigger 1\n"
	  "1->2 trigger 1 size 10\n2->3 trigger 1 size 10\ntrigger id 1 multishot\n",
	  "6: this connection is target 2 of multishot trigger 1 (line 7), but only 1 "
	  "completions can activate it before then: it would never start" },
	{ CM_T2 "0->1 id 1 trigger 1 size 10 send_done_trigger 2\n"
		"1->2 id 2 trigger 2 size 10 send_done_trigger 1\n"
		"trigger id 1 oneshot\ntrigger id 2 oneshot\n",
	  "4: expected triggers without a cycle, but this connection waits for the one on line "
	  "5, which waits for the one on line 4 (htsim would never start them)" },
	{ CM_T1 "trigger id 1 oneshot\nTriggers 1\n", "5: expected 'Triggers' among the header "
						      "lines, before the first connection or "
						      "trigger" },
	{ "Nodes 8\nConnections 1\nFailures 2\n",
	  "3: Failures 2: link failures are not supported" },
	{ CM_HDR "failure switch_type TOR switch_id 0 link_id 1\n",
	  "3: 'failure' lines (link failures) are not supported yet" },
	{ CM_HDR "0->1 id 1 start 0 size 10 prio 3\n", "3: 'prio' (flow priorities) is not "
						       "supported yet" },
	{ CM_HDR "0->1 id 1 start 0 size 10 addon\n", "3: 'addon' (a re-armed barrier signal; "
						      "htsim reads it but nothing uses it) is not "
						      "supported" },
	{ CM_HDR "2->2 id 1 start 0 size 10\n", "3: expected a destination different from the "
						"source (both 2)" },
	{ CM_HDR "0->8 id 1 start 0 size 10\n", "3: expected node indices below 8 (the Nodes "
						"line), found 0->8" },
	{ CM_HDR "0->x id 1 start 0 size 10\n", "3: expected a connection 'src->dst' with node "
						"indices, found '0->x'" },
	{ CM_HDR "0->1 id 1 size 10\n", "3: expected 'start <picoseconds>' or 'trigger <trigger "
					"id>'" },
	{ CM_HDR "0->1 id 1 start 0\n", "3: expected 'size <bytes>'" },
	{ CM_HDR "0->1 id 1 start 0 size\n", "3: expected a value after 'size'" },
	{ CM_HDR "0->1 id 1 start 0 size 0\n", "3: size: expected a size in bytes above 0" },
	{ CM_HDR "0->1 id 1 start -5 size 10\n", "3: start: expected a time in picoseconds" },
	{ CM_HDR "0->1 id 1 start 0 size 10 foo 3\n",
	  "3: expected one of id, start, size, trigger, send_done_trigger, recv_done_trigger, "
	  "found 'foo'" },
	{ CM_HDR "0->1 id 0 start 0 size 10\n", "3: id: expected a flow id above 0" },
	{ CM_HDR "0->1 id 4 start 0 size 10\n1->2 id 4 start 0 size 10\n",
	  "4: id: expected distinct flow ids, found id 4 again (first at line 3)" },
	{ "Nodes 8\n0->1 id 1 start 0 size 10\n", "2: expected the header lines 'Nodes <n>' and "
						  "'Connections <n>' before the first connection" },
	{ "Connections 0\n", "1: expected the header lines 'Nodes <n>' and 'Connections <n>'" },
	{ CM_HDR "0->1 id 1 start 0 size 10\nNodes 8\n", "4: expected 'Nodes' among the header "
							 "lines" },
	{ "Nodes eight\n", "1: expected 'Nodes <count>'" },
	{ CM_HDR "hello\n", "3: expected a header line (Nodes, Connections, Triggers), a "
			    "connection" },
};

static void test_htsim_cm_errors(void **state)
{
	const struct workload_ops *ops = &htsim_cm_workload_ops;
	struct wl_env env = env_of(8, 0, 1);

	(void)state;
	for (size_t i = 0; i < sizeof(cm_bad) / sizeof(cm_bad[0]); i++)
		file_err(ops, &env, "bad.cm", cm_bad[i].text, cm_bad[i].msg);
}

/* One trigger of each kind (lines 5-13 are connections 0-8; ids 1-9):
 * T1 oneshot: activated by c0's send_done and c1's recv_done, starts c2, c3;
 * T2 multishot: activated by c0's recv_done, c1's send_done and by its own
 *    targets c4, c5 (send_done); starts c4, c5, c6 in this order;
 * T3 barrier count 2: activated by c2, c3 (send_done), c5 (recv_done);
 *    starts c7, c8. */
static const char htsim_triggers[] =
    "Nodes 8\n"
    "Connections 9\n"
    "Triggers 3\n"
    "# every kind of trigger\n"
    "0->1 id 1 start 0 size 1000 send_done_trigger 1 recv_done_trigger 2\n"
    "1->2 id 2 start 7 size 1000 recv_done_trigger 1 send_done_trigger 2\n"
    "2->3 id 3 trigger 1 size 1000 send_done_trigger 3\n"
    "3->4 id 4 size 1000 trigger 1 send_done_trigger 3\n"
    "4->5 id 5 trigger 2 size 1000 send_done_trigger 2\n"
    "5->6 id 6 trigger 2 size 1000 send_done_trigger 2 "
    "recv_done_trigger 3\n"
    "6->7 id 7 trigger 2 size 1000\n"
    "trigger id 2 multishot\n"
    "7->0 id 8 trigger 3 size 1000\n"
    "0->2 id 9 trigger 3 size 1000\n"
    "trigger id 3 barrier count 2\n"
    "trigger id 1 oneshot\n";

static void test_htsim_triggers(void **state)
{
	const struct workload_ops *ops = &htsim_cm_workload_ops;
	struct wl_env env = env_of(8, 0, 1);
	struct flow_list l;
	void *p = params_new(ops, "file", temp_file("trig.cm", htsim_triggers), NULL);
	const uint32_t S = FLOW_DEP_SENT;

	(void)state;
	gen_ok(ops, p, &env, &l);
	assert_int_equal(l.n, 9);
	assert_int_equal(l.v[1].start, 7);
	DEPS(&l, 0, 0);
	DEPS(&l, 1, 0);
	/* oneshot: the first of T1's activations starts both targets */
	DEPS(&l, 2, 1, 0 | S, 1);
	DEPS(&l, 3, 1, 0 | S, 1);
	/* multishot: the k-th target waits for k activations, but not for its own
	 * or a later target's (those come after it starts) */
	DEPS(&l, 4, 1, 0, 1 | S);
	DEPS(&l, 5, 2, 0, 1 | S, 4 | S);
	DEPS(&l, 6, 3, 0, 1 | S, 4 | S, 5 | S);
	/* barrier: count (2) of its 3 activations */
	DEPS(&l, 7, 2, 2 | S, 3 | S, 5);
	DEPS(&l, 8, 2, 2 | S, 3 | S, 5);
	for (size_t i = 2; i < l.n; i++)
		assert_true(l.v[i].start == 0 && l.v[i].delay == 0 && l.v[i].bytes == 1000);
	assert_int_equal(flow_list_check_dag(&l, &(struct mp_err){ 0 }), MP_OK);
	flow_list_free(&l);
	params_free(ops, p);

	/* A multishot that its own targets activate is a serial chain; a barrier
	 * whose count is all its activations needs all (need 0). */
	p = params_new(ops, "file",
		       temp_file("trig.cm",
				 "Nodes 4\nConnections 5\nTriggers 2\n"
				 "0->1 start 0 size 10 send_done_trigger 1\n"
				 "1->2 trigger 1 size 10 send_done_trigger 1\n"
				 "2->3 trigger 1 size 10 recv_done_trigger 2\n"
				 "3->0 start 0 size 10 recv_done_trigger 2\n"
				 "0->2 trigger 2 size 10\n"
				 "trigger id 1 multishot\ntrigger id 2 barrier count 2\n"),
		       NULL);
	gen_ok(ops, p, &env, &l);
	DEPS(&l, 1, 0, 0 | S);
	DEPS(&l, 2, 0, 0 | S, 1 | S);
	DEPS(&l, 4, 0, 2, 3);
	flow_list_free(&l);
	params_free(ops, p);
}

/* A matrix written by htsim's own gen_allreduce.py (see the file's comment):
 * 4 chains of 7 hops around the ring 0->1->2->3->0; chain s starts at node s
 * at time 0, and each later hop waits for the previous hop's sender-side
 * completion (send_done_trigger through a oneshot). */
static void test_htsim_allreduce(void **state)
{
	const struct workload_ops *ops = &htsim_cm_workload_ops;
	struct wl_env env = env_of(4, 0, 1);
	struct flow_list l;
	void *p =
	    params_new(ops, "file", MPSIM_SOURCE_DIR "/tests/data/htsim_allreduce_4n.cm", NULL);

	(void)state;
	gen_ok(ops, p, &env, &l);
	assert_int_equal(l.n, 28);
	for (uint32_t s = 0; s < 4; s++)
		for (uint32_t d = 1; d <= 7; d++) {
			size_t i = 7 * s + d - 1;

			assert_int_equal(l.v[i].src, (s + d - 1) % 4);
			assert_int_equal(l.v[i].dst, (s + d) % 4);
			assert_int_equal(l.v[i].bytes, 1000);
			assert_int_equal(l.v[i].start, 0);
			if (d == 1)
				DEPS(&l, i, 0);
			else
				DEPS(&l, i, 0, (uint32_t)(i - 1) | FLOW_DEP_SENT);
		}
	assert_int_equal(flow_list_check_dag(&l, &(struct mp_err){ 0 }), MP_OK);
	flow_list_free(&l);
	params_free(ops, p);
}

/* ---- dag ---- */

/* One DAG, written as CSV and as JSON: ids are names and integers (007 = 7),
 * deps point forward and backward, one waits for a sender-side completion. */
static const char dag_csv[] = "# four messages\n"
			      "id,src,dst,bytes,deps,delay,start,need\n"
			      "a,0,1,1MB,,,,\n"
			      "b, 1, 2, 1MB, c:sent a ,2us,,1\n"
			      "\n"
			      "c,2,3,64KiB,a,0,1us,\n"
			      "007,3,0,1000,b;c,,,\n";
static const char dag_json[] =
    "{\"messages\": [\n"
    "  {\"id\": \"a\", \"src\": 0, \"dst\": 1, \"bytes\": \"1MB\"},\n"
    "  {\"id\": \"b\", \"src\": 1, \"dst\": 2, \"bytes\": 1000000,\n"
    "   \"deps\": [\"c:sent\", \"a\"], \"delay\": \"2us\", \"need\": 1},\n"
    "  {\"deps\": [\"a\"], \"id\": \"c\", \"src\": 2, \"dst\": 3, \"bytes\": \"64KiB\",\n"
    "   \"delay\": 0, \"start\": \"1us\"},\n"
    "  {\"id\": 7, \"src\": 3, \"dst\": 0, \"bytes\": 1000, \"deps\": [\"b\", \"c\"]}\n"
    "]}\n";

static void test_dag(void **state)
{
	const struct workload_ops *ops = &dag_file_workload_ops;
	struct wl_env env = env_of(4, 0, 1);
	struct flow_list c, j, a;
	void *pc = params_new(ops, "file", temp_file("dag.csv", dag_csv), NULL);
	void *pj = params_new(ops, "file", temp_file("dag.json", dag_json), NULL);
	void *pa;

	(void)state;
	gen_ok(ops, pc, &env, &c);
	gen_ok(ops, pj, &env, &j);
	assert_true(same_flows(&c, &j));
	assert_int_equal(c.n, 4);
	assert_true(c.v[0].src == 0 && c.v[0].dst == 1 && c.v[0].bytes == 1000000 &&
		    c.v[0].start == 0 && c.v[0].delay == 0);
	DEPS(&c, 0, 0);
	assert_true(c.v[1].src == 1 && c.v[1].dst == 2 && c.v[1].delay == 2 * PS_PER_US);
	DEPS(&c, 1, 1, 2 | FLOW_DEP_SENT, 0);
	assert_true(c.v[2].bytes == 65536 && c.v[2].start == PS_PER_US && c.v[2].delay == 0);
	DEPS(&c, 2, 0, 0);
	assert_true(c.v[3].src == 3 && c.v[3].dst == 0 && c.v[3].bytes == 1000);
	DEPS(&c, 3, 0, 1, 2);
	assert_int_equal(flow_list_check_dag(&c, &(struct mp_err){ 0 }), MP_OK);
	/* format: by name, or as told; a list that already holds flows is appended to */
	pa = params_new(ops, "file", temp_file("dag.txt", dag_json), "format", "json", NULL);
	memset(&a, 0, sizeof(a));
	flow_list_push(&a, 1, 0, 10, 0);
	assert_int_equal(ops->generate(pa, &env, &a, &(struct mp_err){ 0 }), MP_OK);
	assert_int_equal(a.n, 5);
	assert_int_equal(a.v[4].id, 4);
	DEPS(&a, 4, 0, 2, 3);
	DEPS(&a, 2, 1, 3 | FLOW_DEP_SENT, 1);
	params_free(ops, pa);
	pa = params_new(ops, "file", temp_file("dag.txt", dag_json), NULL);
	gen_err(ops, pa, &env,
		"file: expected a name ending in .csv or .json, or format: csv|json");
	flow_list_free(&a);
	flow_list_free(&c);
	flow_list_free(&j);
	params_free(ops, pa);
	params_free(ops, pc);
	params_free(ops, pj);
}

#define DAG_HDR "id,src,dst,bytes,deps\n"
static const struct {
	const char *name; /* dag.csv or bad.json */
	const char *text;
	const char *msg; /* after "<path>:" */
} dag_bad[] = {
	{ "dag.csv", DAG_HDR "a,0,1,10,\nb,1,2,10,c\n# c waits for b\nc,2,3,10,b\n",
	  "3: deps: expected no cycle, but message 'b' waits for 'c', which waits for 'b'" },
	{ "dag.csv", DAG_HDR "x,0,1,10,y\ny,1,2,10,z\nz,2,3,10,w\nw,3,0,10,x\n",
	  "2: deps: expected no cycle, but message 'x' waits for 'y', which waits for 'z', "
	  "which waits for 'w', which waits for 'x'" },
	{ "dag.csv", DAG_HDR "a,0,1,10,\nb,1,2,10,a;zz\n",
	  "3: deps: expected ids of messages in the file, found 'zz' (no message has that id)" },
	{ "dag.csv", DAG_HDR "a,0,1,10,a\n",
	  "2: deps: expected other messages, found 'a' (the "
	  "message itself)" },
	{ "dag.csv", DAG_HDR "a,0,1,10,\nb,1,2,10,a a\n",
	  "3: deps: expected each id once, found "
	  "'a' again" },
	{ "dag.csv", DAG_HDR "1,0,1,10,\na,1,2,10,\n01,1,2,10,\n",
	  "4: id: expected a unique id, found '1' again (first at line 2)" },
	{ "dag.csv", DAG_HDR "a,2,2,10,\n",
	  "2: expected dst different from src (both are host 2)" },
	{ "dag.csv", DAG_HDR "a,0,4,10,\n",
	  "2: dst: expected a host index below 4 (the fabric's "
	  "hosts), found 4" },
	{ "dag.csv", DAG_HDR "a,0,1,10XB,\n",
	  "2: bytes: expected a size above 0 such as 4000, "
	  "64KB or 2MiB, found '10XB'" },
	{ "dag.csv", "id,src,dst,bytes,delay\na,0,1,10,5\n",
	  "2: delay: expected a time with a unit such as 0, 10us or 1.5ms, found '5'" },
	{ "dag.csv", "id,src,bytes,deps\n",
	  "1: expected a header line naming the fields id, "
	  "src, dst, bytes (and optionally deps, delay, start, "
	  "need); 'dst' is missing" },
	{ "dag.csv", "id,src,dst,bytes,after\n",
	  "1: header: expected the fields id, src, dst, "
	  "bytes and optionally deps, delay, start, need; "
	  "found 'after'" },
	{ "dag.csv", DAG_HDR "a,0,1,10\n",
	  "2: expected 5 comma-separated fields as in the "
	  "header, found 4" },
	{ "dag.csv", DAG_HDR "-1,0,1,10,\n",
	  "2: id: expected an id (a non-negative integer, or "
	  "a name" },
	{ "dag.csv", "id,src,dst,bytes,deps,need\na,0,1,10,,\nb,1,2,10,a,2\n",
	  "3: need: expected 1 to 1 (the message's deps), found 2" },
	{ "dag.csv", DAG_HDR "# none\n", "2: expected at least one message after the header" },
	{ "bad.json",
	  "[{\"id\": 1, \"src\": 0, \"dst\": 1, \"bytes\": 10},\n"
	  " {\"id\": 2, \"src\": 1, \"dst\": 2, \"bytes\": 10, \"deps\": [1,\n"
	  "  3]}]",
	  "3: deps: expected ids of messages in the file, found '3' (no message has that id)" },
	{ "bad.json",
	  "[{\"id\": 1, \"src\": 0, \"dst\": 1, \"bytes\": 10, \"deps\": [2]},\n"
	  " {\"id\": \"2\", \"src\": 1, \"dst\": 2, \"bytes\": 10, \"deps\": [1]}]",
	  "1: deps: expected no cycle, but message '1' waits for '2', which waits for '1'" },
	{ "bad.json", "[{\"id\": 1, \"src\": 0, \"dst\": 1,\n \"bytes\": 10,}]",
	  "2: expected a field name in double quotes, found '}'" },
	{ "bad.json", "[{\"id\": 1, \"src\": 0, \"dst\": 1}]",
	  "1: expected a message with the fields id, src, dst and bytes; 'bytes' is missing" },
	{ "bad.json", "[\n{\"id\": 1, \"src\": 0, \"dst\": 1, \"bytes\": 10, \"prio\": 3}]",
	  "2: expected a field id, src, dst, bytes, deps, delay, start or need, found 'prio'" },
	{ "bad.json", "[{\"id\": 1, \"src\": 0, \"dst\": 1, \"bytes\": 10, \"src\": 2}]",
	  "1: expected the field 'src' once in a message, found it again" },
	{ "bad.json", "[{\"id\": 1, \"src\": true, \"dst\": 1, \"bytes\": 10}]",
	  "1: expected src: a number or a string, found 'true'" },
	{ "bad.json", "[{\"id\": 1, \"src\": 0, \"dst\": 1, \"bytes\": 10}\n\n",
	  "3: expected ',' or ']' in the array of messages, found the end of the file" },
	{ "bad.json", "[{\"id\": 1, \"src\": 0, \"dst\": 1, \"bytes\": 10}] x",
	  "1: expected the end of the file, found 'x'" },
	{ "bad.json", "{\"flows\": []}", "1: expected the key \"messages\"" },
	{ "bad.json", "[]", "1: expected at least one message" },
	{ "bad.json", "[{\"id\": \"a\\n\"}]", "1: expected a string without escapes" },
	{ "bad.json", "[{\"id\": 01}]", "1: expected a number, found '01'" },
	{ "bad.json", "[{\"id\": 1, \"src\": 0, \"dst\": 1, \"bytes\": -10}]",
	  "1: bytes: expected a size above 0 such as 4000, 64KB or 2MiB, found '-10'" },
};

static void test_dag_errors(void **state)
{
	const struct workload_ops *ops = &dag_file_workload_ops;
	struct wl_env env = env_of(4, 0, 1);

	(void)state;
	for (size_t i = 0; i < sizeof(dag_bad) / sizeof(dag_bad[0]); i++)
		file_err(ops, &env, dag_bad[i].name, dag_bad[i].text, dag_bad[i].msg);
}

/* ---- poisson ---- */

static double offered_load(const struct flow_list *l, uint32_t hosts, uint64_t rate_bps,
			   simtime_t duration)
{
	double bits = 0;

	for (size_t i = 0; i < l->n; i++)
		bits += 8.0 * (double)l->v[i].bytes;
	return bits / ((double)hosts * (double)rate_bps * time_to_s(duration));
}

static void check_sorted_in_window(const struct flow_list *l, simtime_t start, simtime_t end)
{
	for (size_t i = 0; i < l->n; i++) {
		assert_true(l->v[i].start >= start && l->v[i].start < end);
		if (i)
			assert_true(l->v[i].start >= l->v[i - 1].start);
	}
}

static void test_poisson_load(void **state)
{
	const struct workload_ops *ops = &poisson_workload_ops;
	struct wl_env env = env_of(16, 4, 11);
	struct flow_list l;
	struct cdf c;
	struct mp_err e = { 0 };
	double bytes = 0, mean, load;
	void *p = params_new(ops, "cdf", DATA_DIR "/websearch.txt", "load", "0.5", "duration",
			     "500ms", NULL);

	(void)state;
	gen_ok(ops, p, &env, &l);
	check_sorted_in_window(&l, 0, 500 * PS_PER_MS);
	/* lambda = 0.5 * 100e9 / (8 * 1711250) = 3652 flows/s per host. */
	assert_true(l.n > 27000 && l.n < 31500);
	load = offered_load(&l, 16, env.host_rate_bps, 500 * PS_PER_MS);
	assert_int_equal(cdf_load(&c, DATA_DIR "/websearch.txt", NULL, CDF_AUTO, &e), 0);
	mean = cdf_mean(&c);
	for (size_t i = 0; i < l.n; i++)
		bytes += (double)l.v[i].bytes;
	print_message("websearch, load 0.5, 16 hosts, 500 ms: %zu flows, offered load %.4f, "
		      "mean size %.0f B (cdf_mean %.0f B)\n",
		      l.n, load, bytes / l.n, mean);
	assert_true(fabs(load / 0.5 - 1.0) < 0.05);
	assert_true(fabs(bytes / l.n / mean - 1.0) < 0.05);
	cdf_free(&c);
	flow_list_free(&l);
	params_free(ops, p);
}

static void test_poisson_webserver(void **state)
{
	/* Many small flows: the size mean and the exponential gaps are tight. */
	const struct workload_ops *ops = &poisson_workload_ops;
	struct wl_env env = env_of(32, 8, 12);
	struct flow_list l;
	double bytes = 0, gap_sum = 0, gap_sq = 0, load, mean_gap, cv;
	size_t ngaps = 0;
	simtime_t *last;
	void *p = params_new(ops, "cdf", DATA_DIR "/webserver.txt", "load", "0.3", "duration",
			     "20ms", "start", "1ms", NULL);

	(void)state;
	gen_ok(ops, p, &env, &l);
	check_sorted_in_window(&l, PS_PER_MS, 21 * PS_PER_MS);
	last = calloc(32, sizeof(*last));
	for (size_t i = 0; i < l.n; i++) {
		const struct flow_spec *f = &l.v[i];

		bytes += (double)f->bytes;
		if (last[f->src]) {
			double g = (double)(f->start - last[f->src]);

			gap_sum += g;
			gap_sq += g * g;
			ngaps++;
		}
		last[f->src] = f->start;
	}
	free(last);
	load = offered_load(&l, 32, env.host_rate_bps, 20 * PS_PER_MS);
	mean_gap = gap_sum / (double)ngaps;
	cv = sqrt(gap_sq / (double)ngaps - mean_gap * mean_gap) / mean_gap;
	print_message("webserver, load 0.3, 32 hosts, 20 ms: %zu flows, offered load %.4f, "
		      "mean size %.0f B, gap %.1f ns (expected %.1f), gap CV %.3f\n",
		      l.n, load, bytes / l.n, mean_gap / 1000, 8.0 * 66121.0 / (0.3 * 100e9) * 1e9,
		      cv);
	assert_true(fabs(bytes / l.n / 66121.0 - 1.0) < 0.02);
	assert_true(fabs(load / 0.3 - 1.0) < 0.05);
	assert_true(fabs(mean_gap / (8.0 * 66121.0 / (0.3 * 100e9) * 1e12) - 1.0) < 0.02);
	assert_true(fabs(cv - 1.0) < 0.03); /* exponential: sd = mean */
	flow_list_free(&l);
	params_free(ops, p);
}

static void test_poisson_determinism(void **state)
{
	const struct workload_ops *ops = &poisson_workload_ops;
	struct wl_env e1 = env_of(8, 4, 21), e2 = env_of(8, 4, 22);
	struct flow_list a, b, c, d;
	void *p =
	    params_new(ops, "cdf", DATA_DIR "/fbhdp.txt", "load", "0.8", "duration", "2ms", NULL);
	void *q;

	(void)state;
	gen_ok(ops, p, &e1, &a);
	gen_ok(ops, p, &e1, &b);
	gen_ok(ops, p, &e2, &c);
	assert_true(a.n > 1000);
	assert_true(same_flows(&a, &b));
	assert_false(same_flows(&a, &c));
	/* Ties on start break on the source host: strictly ordered (start, src). */
	for (size_t i = 1; i < a.n; i++)
		assert_true(a.v[i].start > a.v[i - 1].start ||
			    (a.v[i].start == a.v[i - 1].start && a.v[i].src > a.v[i - 1].src));
	/* max_flows keeps the earliest flows: a prefix of the unlimited list. */
	q = params_new(ops, "cdf", DATA_DIR "/fbhdp.txt", "load", "0.8", "duration", "2ms",
		       "max_flows", "100", NULL);
	gen_ok(ops, q, &e1, &d);
	assert_int_equal(d.n, 100);
	for (size_t i = 0; i < d.n; i++)
		assert_true(same_flow(&d.v[i], &a.v[i]));
	flow_list_free(&d);
	params_free(ops, q);
	/* A host's flows depend only on its own stream: host 0's flows are the
	 * same with 8 or 4 hosts except for their destinations. */
	q = params_new(ops, "cdf", DATA_DIR "/fbhdp.txt", "load", "0.8", "duration", "2ms", "hosts",
		       "4", NULL);
	gen_ok(ops, q, &e1, &d);
	for (size_t i = 0; i < d.n; i++)
		assert_true(d.v[i].src < 4 && d.v[i].dst < 4);
	{
		size_t i = 0, j = 0, matched = 0;

		for (; i < a.n && j < d.n; i++) {
			if (a.v[i].src != 0)
				continue;
			while (j < d.n && d.v[j].src != 0)
				j++;
			if (j == d.n)
				break;
			assert_int_equal(a.v[i].start, d.v[j].start);
			assert_int_equal(a.v[i].bytes, d.v[j].bytes);
			matched++;
			j++;
		}
		assert_true(matched > 50);
	}
	flow_list_free(&d);
	params_free(ops, q);
	flow_list_free(&a);
	flow_list_free(&b);
	flow_list_free(&c);
	params_free(ops, p);
}

static void test_poisson_errors(void **state)
{
	const struct workload_ops *ops = &poisson_workload_ops;
	struct wl_env env = env_of(8, 4, 1), norate = env_of(8, 4, 1);
	void *p;
	char want[256];

	(void)state;
	norate.host_rate_bps = 0;
	p = params_new(ops, "cdf", DATA_DIR "/websearch.txt", NULL);
	gen_err(ops, p, &norate, "load: needs the host link rate");
	params_free(ops, p);
	p = params_new(ops, "cdf", DATA_DIR "/websearch.txt", "load", "0", NULL);
	gen_err(ops, p, &env, "load: expected a fraction of the link rate in (0, 1]");
	params_free(ops, p);
	p = params_new(ops, NULL);
	gen_err(ops, p, &env, "cdf: expected the path of a flow-size CDF table");
	params_free(ops, p);
	/* A forced dialect that does not fit: the table's file:line. */
	p = params_new(ops, "cdf", DATA_DIR "/mining.txt", "cdf_format", "percent", NULL);
	snprintf(want, sizeof(want), "%s:7: expected the last cumulative probability to be 100",
		 DATA_DIR "/mining.txt");
	gen_err(ops, p, &env, want);
	params_free(ops, p);
	p = params_new(ops, "cdf", temp_file("bad_cdf.txt", "0 0\n10 0.5\nten 1\n"), NULL);
	gen_err(ops, p, &env, "bad_cdf.txt:3: expected a size in bytes");
	params_free(ops, p);
	p = params_new(ops, "cdf", DATA_DIR "/websearch.txt", "hosts", "9", NULL);
	gen_err(ops, p, &env, "hosts: expected at most 8");
	params_free(ops, p);
}

static void test_no_leak(void **state)
{
	uint64_t live = mp_mem_live();

	test_flows_file_errors(state);
	test_htsim_cm_errors(state);
	test_dag_errors(state);
	test_poisson_errors(state);
	assert_int_equal(mp_mem_live(), live);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_permutation_derangement),
		cmocka_unit_test(test_permutation_uniform),
		cmocka_unit_test(test_permutation_seeds),
		cmocka_unit_test(test_permutation_hosts),
		cmocka_unit_test(test_permutation_cross_tor),
		cmocka_unit_test(test_permutation_cross_tor_uniform),
		cmocka_unit_test(test_incast),
		cmocka_unit_test(test_all_to_all),
		cmocka_unit_test(test_flows_file),
		cmocka_unit_test(test_flows_file_errors),
		cmocka_unit_test(test_htsim_cm),
		cmocka_unit_test(test_htsim_cm_errors),
		cmocka_unit_test(test_htsim_triggers),
		cmocka_unit_test(test_htsim_allreduce),
		cmocka_unit_test(test_dag),
		cmocka_unit_test(test_dag_errors),
		cmocka_unit_test(test_poisson_load),
		cmocka_unit_test(test_poisson_webserver),
		cmocka_unit_test(test_poisson_determinism),
		cmocka_unit_test(test_poisson_errors),
		cmocka_unit_test(test_no_leak),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}

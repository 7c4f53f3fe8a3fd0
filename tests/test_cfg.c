/* test_cfg.c - experiment files (io/cfg.c): the YAML tree and its line
 * numbers, rejected documents, --set, and applying an option table with
 * file:line messages. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/opt.h"
#include "io/cfg.h"

#define assert_has(hay, needle)                                                 \
	do {                                                                    \
		if (!strstr((hay), (needle)))                                   \
			fail_msg("expected \"%s\" in \"%s\"", (needle), (hay)); \
	} while (0)

#define assert_lacks(hay, needle)                                                     \
	do {                                                                          \
		if (strstr((hay), (needle)))                                          \
			fail_msg("did not expect \"%s\" in \"%s\"", (needle), (hay)); \
	} while (0)

struct topo {
	uint64_t hosts;
	uint64_t hosts_per_leaf;
	uint64_t link_rate; /* bit/s */
	uint64_t delay;	    /* ps */
	int lb;
	char *label;
	char *cdf;
	struct opt_strlist jobs;
};

static const char *const lbs[] = { "ecmp", "spray", "conga", NULL };

static const struct opt_desc topo_tbl[] = {
	{ "hosts", OPT_UINT, offsetof(struct topo, hosts), NULL, 1, 100000, "hosts", NULL },
	{ "hosts_per_leaf", OPT_UINT, offsetof(struct topo, hosts_per_leaf), "16", 1, 512, "",
	  NULL },
	{ "link_rate", OPT_RATE, offsetof(struct topo, link_rate), "400Gbps", 1e6, 1.6e12, "",
	  NULL },
	{ "delay", OPT_TIME, offsetof(struct topo, delay), "1us", 0, 0, "", NULL },
	{ "lb", OPT_ENUM, offsetof(struct topo, lb), "ecmp", 0, 0, "", lbs },
	{ "label", OPT_STRING, offsetof(struct topo, label), "default", 0, 0, "", NULL },
	{ "cdf", OPT_PATH, offsetof(struct topo, cdf), "", 0, 0, "", NULL },
	{ "jobs", OPT_STRLIST, offsetof(struct topo, jobs), "j0", 0, 0, "", NULL },
	OPT_END,
};

static const char *const skip_type[] = { "type", NULL };

static void load(struct cfg_doc *doc, const char *text)
{
	struct mp_err e = { 0 };
	if (cfg_load_string(text, "exp.yaml", doc, &e) != MP_OK)
		fail_msg("load failed: %s", e.msg);
	assert_non_null(doc->root);
}

/* Loading must fail with exactly `want` (or containing it if `sub`). */
static void load_bad(const char *text, const char *want, bool sub)
{
	struct cfg_doc doc;
	struct mp_err e = { 0 };
	uint64_t live = mp_mem_live();
	int rc = cfg_load_string(text, "exp.yaml", &doc, &e);
	if (rc == MP_OK)
		fail_msg("accepted: %s", text);
	assert_int_equal(rc, MP_EUSER);
	assert_int_equal(e.status, MP_EUSER);
	if (sub)
		assert_has(e.msg, want);
	else
		assert_string_equal(e.msg, want);
	assert_null(doc.root);
	cfg_free(&doc);
	assert_true(mp_mem_live() == live);
}

static void test_tree_lines(void **state)
{
	struct cfg_doc doc;
	uint64_t live = mp_mem_live();
	load(&doc, "# an experiment\n"
		   "topology:\n"
		   "  type: leafspine\n"
		   "  hosts: 16\n"
		   "  rates: [100Gbps, 400Gbps]\n"
		   "workload:\n"
		   "  cdfs:\n"
		   "    - a.txt\n"
		   "    - \"b c.txt\"\n"
		   "  empty:\n"
		   "seed: 7\n");
	struct cfg_node *r = doc.root;
	assert_int_equal(r->kind, CFG_MAP);
	assert_int_equal(r->n, 3);
	assert_string_equal(doc.path, "exp.yaml");
	assert_string_equal(doc.dir, ".");

	struct cfg_node *t = cfg_get(r, "topology");
	assert_non_null(t);
	assert_int_equal(t->kind, CFG_MAP);
	assert_int_equal(t->line, 2);
	assert_int_equal(t->col, 1);
	assert_string_equal(t->key, "topology");
	struct cfg_node *h = cfg_get(t, "hosts");
	assert_int_equal(h->kind, CFG_SCALAR);
	assert_string_equal(h->value, "16");
	assert_int_equal(h->line, 4);
	assert_int_equal(h->col, 3);
	struct cfg_node *rates = cfg_get(t, "rates");
	assert_int_equal(rates->kind, CFG_SEQ);
	assert_int_equal(rates->line, 5);
	assert_int_equal(rates->n, 2);
	assert_string_equal(rates->kids[1]->value, "400Gbps");
	assert_int_equal(rates->kids[1]->line, 5);
	assert_int_equal(rates->kids[1]->col, 20);
	assert_null(rates->kids[1]->key);

	struct cfg_node *w = cfg_get(r, "workload");
	assert_int_equal(w->line, 6);
	struct cfg_node *cdfs = cfg_get(w, "cdfs");
	assert_int_equal(cdfs->line, 7);
	assert_int_equal(cdfs->kids[0]->line, 8);
	assert_int_equal(cdfs->kids[1]->line, 9);
	assert_string_equal(cdfs->kids[1]->value, "b c.txt");
	struct cfg_node *empty = cfg_get(w, "empty");
	assert_int_equal(empty->kind, CFG_SCALAR);
	assert_string_equal(empty->value, "");
	assert_int_equal(empty->line, 10);
	assert_int_equal(cfg_get(r, "seed")->line, 11);

	assert_null(cfg_get(r, "nope"));
	assert_null(cfg_get(h, "x")); /* a scalar has no children */
	assert_null(cfg_get(NULL, "x"));
	cfg_free(&doc);
	assert_null(doc.root);
	assert_true(mp_mem_live() == live);
}

static void test_empty_files(void **state)
{
	const char *texts[] = { "",  "# only a comment\n", "---\n", "---\n...\n", "\n\n", "{}\n",
				NULL };
	for (int i = 0; texts[i]; i++) {
		struct cfg_doc doc;
		load(&doc, texts[i]);
		assert_int_equal(doc.root->kind, CFG_MAP);
		assert_int_equal(doc.root->n, 0);
		assert_true(doc.root->line >= 1);
		cfg_free(&doc);
	}
}

static void test_rejected_documents(void **state)
{
	load_bad("a:\n  b: 1\n  c: 2\n  b: 3\n", "exp.yaml:4: a.b: duplicate key (first at line 2)",
		 false);
	load_bad("x: 1\nx: 2\n", "exp.yaml:2: x: duplicate key (first at line 1)", false);
	load_bad("s:\n  - k: 1\n    k: 2\n", "exp.yaml:3: s[0].k: duplicate key (first at line 2)",
		 false);
	load_bad("a:\n  b: [1, 2\n", "exp.yaml:3: YAML syntax error: ", true);
	load_bad("a:\n  b: [1, 2\n", "(while parsing a flow sequence at line 2)", true);
	load_bad("a: 1\n b: 2\n", "exp.yaml:2: YAML syntax error: ", true);
	load_bad("a: \"unterminated\n", "YAML syntax error", true);
	load_bad("a:\n\tb: 1\n", "YAML syntax error", true);
	load_bad("- a\n- b\n",
		 "exp.yaml:1: the top level must be a mapping of keys to values, "
		 "got a sequence",
		 false);
	load_bad("hello\n", "got a scalar", true);
	load_bad("a: 1\n---\nb: 2\n", "exp.yaml:2: a second YAML document starts here", true);
	load_bad("a: &x 1\nb: *x\n", "exp.yaml:1: a: anchors (&x) are not supported", true);
	load_bad("a: 1\nb: *x\n", "aliases", true);
	load_bad("top:\n  ? [a, b]\n  : 1\n",
		 "exp.yaml:2: top: a key must be a scalar, got a sequence", false);
	load_bad("{a: 1}: 2\n", "a key must be a scalar, got a mapping", true);

	char deep[1000];
	size_t n = 0;
	for (int i = 0; i < 100; i++)
		deep[n++] = '[';
	deep[n] = '\0';
	load_bad(deep, "", true); /* syntax error or depth, but never a crash */
	char deep2[1000];
	n = 0;
	n += (size_t)sprintf(deep2, "a: ");
	for (int i = 0; i < 70; i++)
		deep2[n++] = '[';
	for (int i = 0; i < 70; i++)
		deep2[n++] = ']';
	deep2[n] = '\0';
	load_bad(deep2, "nesting deeper than 64 levels", true);
}

static void test_load_file(void **state)
{
	struct cfg_doc doc;
	struct mp_err e = { 0 };
	assert_int_equal(cfg_load_file("/nonexistent/dir/x.yaml", &doc, &e), MP_EUSER);
	assert_string_equal(e.msg, "cannot open experiment file '/nonexistent/dir/x.yaml': No "
				   "such file or directory");
	assert_null(doc.root);

	char dir[] = "/tmp/h1_cfgXXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/exp.yaml", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("topology:\n  hosts: 8\n", f);
	for (int i = 0; i < 3000; i++) /* bigger than one read buffer */
		fprintf(f, "  # filler comment line %d\n", i);
	fputs("  label: end\n", f);
	fclose(f);

	mp_err_clear(&e);
	assert_int_equal(cfg_load_file(path, &doc, &e), MP_OK);
	assert_string_equal(doc.path, path);
	assert_string_equal(doc.dir, dir);
	struct cfg_node *label = cfg_get(cfg_get(doc.root, "topology"), "label");
	assert_non_null(label);
	assert_int_equal(label->line, 3003);
	cfg_free(&doc);

	mp_err_clear(&e);
	assert_int_equal(cfg_load_file(dir, &doc, &e), MP_EUSER);
	assert_has(e.msg, "Is a directory");
	unlink(path);
	rmdir(dir);
}

static void test_set(void **state)
{
	struct cfg_doc doc;
	struct mp_err e = { 0 };
	uint64_t live = mp_mem_live();
	load(&doc, "topology:\n"
		   "  hosts: 16\n"
		   "  jobs: [a, b]\n"
		   "  sub:\n"
		   "    x: 1\n");

	/* create a new chain of maps */
	assert_int_equal(cfg_apply_set(&doc, "workload.incast.fan_in=8", &e), MP_OK);
	struct cfg_node *w = cfg_get(doc.root, "workload");
	assert_non_null(w);
	assert_int_equal(w->kind, CFG_MAP);
	assert_int_equal(w->line, 0);
	struct cfg_node *fi = cfg_get(cfg_get(w, "incast"), "fan_in");
	assert_non_null(fi);
	assert_string_equal(fi->value, "8");
	assert_int_equal(fi->line, 0);

	/* override an existing scalar: value and origin change */
	struct cfg_node *t = cfg_get(doc.root, "topology");
	assert_int_equal(cfg_apply_set(&doc, "topology.hosts=32", &e), MP_OK);
	struct cfg_node *h = cfg_get(t, "hosts");
	assert_string_equal(h->value, "32");
	assert_int_equal(h->line, 0);
	assert_int_equal(t->line, 1);
	assert_int_equal(t->n, 3); /* replaced, not added */

	/* a value may be empty or contain '=' */
	assert_int_equal(cfg_apply_set(&doc, "topology.label=a=b", &e), MP_OK);
	assert_string_equal(cfg_get(t, "label")->value, "a=b");
	assert_int_equal(cfg_apply_set(&doc, "topology.label=", &e), MP_OK);
	assert_string_equal(cfg_get(t, "label")->value, "");
	assert_int_equal(cfg_apply_set(&doc, "top=1", &e), MP_OK);
	assert_string_equal(cfg_get(doc.root, "top")->value, "1");

	/* a scalar replaces a sequence */
	assert_int_equal(cfg_apply_set(&doc, "topology.jobs=c", &e), MP_OK);
	struct cfg_node *jobs = cfg_get(t, "jobs");
	assert_int_equal(jobs->kind, CFG_SCALAR);
	assert_string_equal(jobs->value, "c");
	assert_int_equal(jobs->n, 0);

	/* a list replaces a scalar: the scalar's text goes (it was freed
	 * twice, once here and once by cfg_free) */
	assert_int_equal(cfg_apply_set(&doc, "topology.hosts=[1MB, 2MB]", &e), MP_OK);
	h = cfg_get(t, "hosts");
	assert_int_equal(h->kind, CFG_SEQ);
	assert_null(h->value);
	assert_int_equal(h->n, 2);
	assert_string_equal(h->kids[1]->value, "2MB");
	assert_int_equal(cfg_apply_set(&doc, "topology.hosts=32", &e), MP_OK);

	assert_int_equal(e.status, MP_OK);
	assert_int_equal(cfg_apply_set(&doc, "topology.hosts", &e), MP_EUSER);
	assert_has(e.msg, "expected key=value");
	mp_err_clear(&e);
	assert_int_equal(cfg_apply_set(&doc, "=5", &e), MP_EUSER);
	assert_has(e.msg, "the key before '=' is empty");
	mp_err_clear(&e);
	assert_int_equal(cfg_apply_set(&doc, "a..b=5", &e), MP_EUSER);
	assert_has(e.msg, "empty key component");
	mp_err_clear(&e);
	assert_int_equal(cfg_apply_set(&doc, "a.=5", &e), MP_EUSER);
	assert_has(e.msg, "empty key component");
	mp_err_clear(&e);
	assert_int_equal(cfg_apply_set(&doc, "topology.sub.x.y=1", &e), MP_EUSER);
	assert_string_equal(e.msg, "--set topology.sub.x.y: 'topology.sub.x' is a scalar (at "
				   "exp.yaml:5), not a mapping");
	mp_err_clear(&e);
	assert_int_equal(cfg_apply_set(&doc, "topology.hosts.deeper=1", &e), MP_EUSER);
	assert_has(e.msg, "'topology.hosts' is a scalar (at an earlier --set)");
	mp_err_clear(&e);
	assert_int_equal(cfg_apply_set(&doc, "topology=1", &e), MP_EUSER);
	assert_has(e.msg, "--set topology: this is a mapping (at exp.yaml:1)");
	mp_err_clear(&e);
	cfg_free(&doc);
	assert_true(mp_mem_live() == live);
	load(&doc, "s: [1, 2]\n");
	assert_int_equal(cfg_apply_set(&doc, "s.x=1", &e), MP_EUSER);
	assert_has(e.msg, "'s' is a sequence");
	assert_int_equal(cfg_get(doc.root, "s")->kind, CFG_SEQ);
	cfg_free(&doc);
	assert_true(mp_mem_live() == live);
}

static void test_set_without_file(void **state)
{
	struct cfg_doc doc = { 0 };
	struct mp_err e = { 0 };
	assert_int_equal(cfg_apply_set(&doc, "a.b=c", &e), MP_OK);
	assert_string_equal(cfg_get(cfg_get(doc.root, "a"), "b")->value, "c");
	cfg_free(&doc);
}

static void defaults(struct topo *t)
{
	memset(t, 0, sizeof *t);
	opt_set_defaults(topo_tbl, t);
}

/* Apply `text`'s "topology" section; return the status, message in e. */
static int apply(const char *text, struct topo *t, struct mp_err *e)
{
	struct cfg_doc doc;
	mp_err_clear(e);
	load(&doc, text);
	int rc = cfg_apply_table(&doc, cfg_get(doc.root, "topology"), "topology", topo_tbl, t,
				 skip_type, e);
	cfg_free(&doc);
	return rc;
}

static void test_apply_ok(void **state)
{
	struct topo t;
	struct mp_err e;
	uint64_t live = mp_mem_live();
	defaults(&t);
	int rc = apply("topology:\n"
		       "  type: leafspine\n"
		       "  hosts: 64\n"
		       "  link_rate: 100Gb/s\n"
		       "  lb: conga\n"
		       "  label: \"my fabric\"\n"
		       "  jobs: [x, y, z]\n",
		       &t, &e);
	if (rc != MP_OK)
		fail_msg("%s", e.msg);
	assert_int_equal(t.hosts, 64);
	assert_true(t.link_rate == 100000000000ULL);
	assert_int_equal(t.lb, 2);
	assert_string_equal(t.label, "my fabric");
	assert_int_equal(t.jobs.n, 3);
	assert_string_equal(t.jobs.v[2], "z");
	assert_int_equal(t.hosts_per_leaf, 16); /* untouched default */
	assert_int_equal(t.delay, 1000000);

	/* one scalar for a list; an empty sequence */
	assert_int_equal(apply("topology:\n  hosts: 1\n  jobs: solo\n", &t, &e), MP_OK);
	assert_int_equal(t.jobs.n, 1);
	assert_string_equal(t.jobs.v[0], "solo");
	assert_int_equal(apply("topology:\n  hosts: 1\n  jobs: []\n", &t, &e), MP_OK);
	assert_int_equal(t.jobs.n, 0);
	assert_int_equal(apply("topology:\n  hosts: 1\n  jobs:\n", &t, &e), MP_OK);
	assert_int_equal(t.jobs.n, 0);
	assert_int_equal(apply("topology:\n  hosts: 1\n  jobs:\n    - p\n    - q\n", &t, &e),
			 MP_OK);
	assert_int_equal(t.jobs.n, 2);
	assert_string_equal(t.jobs.v[1], "q");

	opt_free(topo_tbl, &t);
	assert_true(mp_mem_live() == live);
}

/* On any error the params struct is byte-for-byte what it was. */
static void apply_bad(const char *text, const char *want, bool sub)
{
	struct topo t, before;
	struct mp_err e;
	defaults(&t);
	t.hosts = 5;
	memcpy(&before, &t, sizeof t);
	uint64_t live = mp_mem_live();
	int rc = apply(text, &t, &e);
	if (rc == MP_OK)
		fail_msg("accepted: %s", text);
	assert_int_equal(rc, MP_EUSER);
	if (sub)
		assert_has(e.msg, want);
	else
		assert_string_equal(e.msg, want);
	assert_memory_equal(&t, &before, sizeof t);
	assert_string_equal(t.label, "default");
	assert_int_equal(t.jobs.n, 1);
	assert_string_equal(t.jobs.v[0], "j0");
	assert_true(mp_mem_live() == live);
	opt_free(topo_tbl, &t);
}

static void test_apply_errors(void **state)
{
	apply_bad("topology:\n"
		  "  hosts: 4\n"
		  "  hosts_per_lef: 4\n",
		  "exp.yaml:3: topology.hosts_per_lef: unknown key; did you mean "
		  "'hosts_per_leaf'? (known keys: hosts, hosts_per_leaf, link_rate, delay, lb, "
		  "label, cdf, jobs, type)",
		  false);
	apply_bad("topology:\n  hosts: 4\n  zzzzzzzz: 1\n",
		  "exp.yaml:3: topology.zzzzzzzz: unknown key (known keys: hosts, ", true);
	{
		struct topo t;
		struct mp_err e;
		defaults(&t);
		assert_int_equal(apply("topology:\n  zzzzzzzz: 1\n", &t, &e), MP_EUSER);
		assert_lacks(e.msg, "did you mean");
		mp_err_clear(&e);
		assert_int_equal(apply("topology:\n  x: 1\n", &t, &e), MP_EUSER);
		assert_lacks(e.msg, "did you mean"); /* one letter is no evidence */
		opt_free(topo_tbl, &t);
	}
	apply_bad("topology:\n  hosts: 4\n  tpye: x\n", "did you mean 'type'?", true);
	apply_bad("topology:\n  hosts: 4\n  lable: x\n", "did you mean 'label'?", true);
	apply_bad("topology:\n  hosts: {a: 1}\n",
		  "exp.yaml:2: topology.hosts: expected a scalar value, got a mapping", false);
	apply_bad("topology:\n  hosts: [1]\n", "expected a scalar value, got a sequence", true);
	apply_bad("topology:\n"
		  "  label: changed\n"
		  "  jobs: [q]\n"
		  "  hosts: 4\n"
		  "  link_rate: 2Tbps\n",
		  "exp.yaml:5: topology.link_rate: expected a rate between 1Mbps and 1.6Tbps, "
		  "got 2Tbps",
		  false);
	apply_bad("topology:\n  hosts: 0\n",
		  "exp.yaml:2: topology.hosts: expected an integer between 1 and 100000, got 0",
		  false);
	apply_bad("topology:\n  hosts: 4\n  delay: 5\n",
		  "exp.yaml:3: topology.delay: expected a time with a unit", true);
	apply_bad("topology:\n  hosts: 4\n  lb: drill\n",
		  "exp.yaml:3: topology.lb: expected one of ecmp, spray, conga, got 'drill'",
		  false);
	apply_bad("topology:\n  hosts: 4\n  jobs:\n    - a\n    - {b: 1}\n",
		  "exp.yaml:5: topology.jobs: expected a list of scalars, got a mapping as item 2",
		  false);
	apply_bad("topology:\n  hosts: 4\n  jobs: {b: 1}\n",
		  "exp.yaml:3: topology.jobs: expected a list of scalars (or one scalar), got a "
		  "mapping",
		  false);
	apply_bad("\n\ntopology:\n  label: x\n  type: y\n",
		  "exp.yaml:3: topology.hosts: required key missing", false);
	apply_bad("seed: 1\ntopology: 7\n",
		  "exp.yaml:2: topology: expected a mapping of keys to values, got a scalar",
		  false);
	apply_bad("topology:\n  hosts: 4\n  cdf: missing.txt\n",
		  "exp.yaml:3: topology.cdf: cannot read file 'missing.txt' (resolved to "
		  "'missing.txt'): No such file or directory",
		  false);
}

static void test_apply_absent_section(void **state)
{
	struct topo t;
	struct mp_err e = { 0 };
	struct cfg_doc doc;
	defaults(&t);
	load(&doc, "\n# nothing here\nseed: 1\n");
	assert_int_equal(cfg_apply_table(&doc, NULL, "topology", topo_tbl, &t, NULL, &e), MP_EUSER);
	assert_string_equal(e.msg, "exp.yaml:3: topology.hosts: required key missing");
	cfg_free(&doc);

	/* a table without required keys: NULL map means all defaults */
	static const struct opt_desc opt_only[] = {
		{ "delay", OPT_TIME, offsetof(struct topo, delay), "2us", 0, 0, "", NULL },
		OPT_END,
	};
	mp_err_clear(&e);
	load(&doc, "");
	t.delay = 1;
	assert_int_equal(cfg_apply_table(&doc, NULL, "x", opt_only, &t, NULL, &e), MP_OK);
	assert_int_equal(t.delay, 1); /* params keep what they had */
	cfg_free(&doc);
	opt_free(topo_tbl, &t);
}

static void test_apply_set_values(void **state)
{
	struct topo t;
	struct mp_err e = { 0 };
	struct cfg_doc doc;
	defaults(&t);
	load(&doc, "topology:\n  hosts: 4\n  link_rate: 100Gbps\n");
	assert_int_equal(cfg_apply_set(&doc, "topology.link_rate=5Tbps", &e), MP_OK);
	assert_int_equal(cfg_apply_table(&doc, cfg_get(doc.root, "topology"), "topology", topo_tbl,
					 &t, NULL, &e),
			 MP_EUSER);
	assert_string_equal(e.msg, "--set topology.link_rate: expected a rate between 1Mbps and "
				   "1.6Tbps, got 5Tbps");

	mp_err_clear(&e);
	assert_int_equal(cfg_apply_set(&doc, "topology.link_rate=800Gbps", &e), MP_OK);
	assert_int_equal(cfg_apply_set(&doc, "topology.hosts=9", &e), MP_OK);
	assert_int_equal(cfg_apply_table(&doc, cfg_get(doc.root, "topology"), "topology", topo_tbl,
					 &t, NULL, &e),
			 MP_OK);
	assert_true(t.link_rate == 800000000000ULL);
	assert_int_equal(t.hosts, 9);

	/* a section that exists only through --set lacks a line of its own */
	mp_err_clear(&e);
	assert_int_equal(cfg_apply_set(&doc, "other.label=x", &e), MP_OK);
	assert_int_equal(
	    cfg_apply_table(&doc, cfg_get(doc.root, "other"), "other", topo_tbl, &t, NULL, &e),
	    MP_EUSER);
	assert_string_equal(e.msg, "exp.yaml: other.hosts: required key missing");
	cfg_free(&doc);
	opt_free(topo_tbl, &t);
}

static void test_apply_paths(void **state)
{
	char dir[] = "/tmp/h1_cfgpXXXXXX", yaml[256], data[256];
	assert_non_null(mkdtemp(dir));
	snprintf(yaml, sizeof yaml, "%s/exp.yaml", dir);
	snprintf(data, sizeof data, "%s/flows.cdf", dir);
	FILE *f = fopen(data, "w");
	assert_non_null(f);
	fputs("100 1.0\n", f);
	fclose(f);
	f = fopen(yaml, "w");
	assert_non_null(f);
	fputs("topology:\n  hosts: 2\n  cdf: flows.cdf\n", f);
	fclose(f);

	struct cfg_doc doc;
	struct mp_err e = { 0 };
	struct topo t;
	defaults(&t);
	assert_int_equal(cfg_load_file(yaml, &doc, &e), MP_OK);
	assert_int_equal(cfg_apply_table(&doc, cfg_get(doc.root, "topology"), "topology", topo_tbl,
					 &t, NULL, &e),
			 MP_OK);
	assert_string_equal(t.cdf, data);

	assert_int_equal(cfg_apply_set(&doc, "topology.cdf=nope.cdf", &e), MP_OK);
	assert_int_equal(cfg_apply_table(&doc, cfg_get(doc.root, "topology"), "topology", topo_tbl,
					 &t, NULL, &e),
			 MP_EUSER);
	/* typed on the command line: relative to the current directory */
	assert_string_equal(e.msg, "--set topology.cdf: cannot read file 'nope.cdf' (resolved to "
				   "'nope.cdf'): No such file or directory");
	assert_string_equal(t.cdf, data);
	cfg_free(&doc);
	opt_free(topo_tbl, &t);
	unlink(data);
	unlink(yaml);
	rmdir(dir);
}

static void test_errf(void **state)
{
	struct cfg_doc doc;
	struct mp_err e = { 0 };
	load(&doc, "a:\n  b:\n    k: 1\n");
	struct cfg_node *k = cfg_get(cfg_get(cfg_get(doc.root, "a"), "b"), "k");
	assert_int_equal(cfg_errf(&e, &doc, k, "a.b", "bad %d", 3), MP_EUSER);
	assert_string_equal(e.msg, "exp.yaml:3: a.b.k: bad 3");
	mp_err_clear(&e);
	cfg_errf(&e, &doc, k, "", "bad");
	assert_string_equal(e.msg, "exp.yaml:3: k: bad");
	mp_err_clear(&e);
	cfg_errf(&e, &doc, NULL, "a", "whole file");
	assert_string_equal(e.msg, "exp.yaml:1: a: whole file");
	mp_err_clear(&e);
	k->line = 0;
	cfg_errf(&e, &doc, k, "a.b", "typed");
	assert_string_equal(e.msg, "--set a.b.k: typed");
	/* the first error wins */
	cfg_errf(&e, &doc, k, "a.b", "second");
	assert_string_equal(e.msg, "--set a.b.k: typed");
	cfg_free(&doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_lines),
		cmocka_unit_test(test_empty_files),
		cmocka_unit_test(test_rejected_documents),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_set_without_file),
		cmocka_unit_test(test_apply_ok),
		cmocka_unit_test(test_apply_errors),
		cmocka_unit_test(test_apply_absent_section),
		cmocka_unit_test(test_apply_set_values),
		cmocka_unit_test(test_apply_paths),
		cmocka_unit_test(test_errf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* values.c - the value-level fuzz target: experiment files whose values, not
 * bytes, are mutated, each built, run for a bounded number of events, and
 * written out as a results folder.
 *
 * Input: a YAML experiment file (fuzz/corpus/ holds small valid ones). The
 * custom mutator (LLVMFuzzerCustomMutator) parses the file with libyaml,
 * replaces one to three scalar values with values of the same kind (a size
 * with a size, a time with a time, a switch with a flag, an enum name with
 * another known name; boundary values such as 0, 1, 2^32 and 2^64-1 are
 * favoured) and writes it back, so every case is a well-formed file whose
 * values are legal one by one but not necessarily together: the inputs that
 * only `mpsim run` reaches. The target loads the file (exp_load_string),
 * builds it (sim_build), runs at most FUZZ_EVENTS events, collects and
 * writes the results. A user error (status 2) is a fine outcome; a panic
 * (MPSIM_ABORT makes it abort), a sanitizer report, a case over libFuzzer's
 * -timeout or -rss_limit_mb is a finding. mpsim's memory plan is capped at
 * FUZZ_MEM bytes, so an experiment too large for it must be refused by its
 * estimate before it allocates.
 *
 * fuzz/replay.c runs the same target over saved files without libFuzzer
 * (the CI replay); a corpus file may begin with "# expect: N text", the exit
 * status and a piece of the message the replay then asserts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "ccl/ccl.h"
#include "core/mem.h"
#include "io/experiment.h"
#include "io/metrics.h"
#include "io/results.h"
#include "net/topo.h"
#include "sim/run.h"
#include "net/lb.h"
#include "net/switch.h"
#include "transport/transport.h"
#include "workload/collective.h"
#include "workload/workload.h"

#include "fuzz/values.h"

#ifndef FUZZ_EVENTS
#define FUZZ_EVENTS 300000 /* events per case: a few tenths of a second */
#endif
#ifndef FUZZ_MEM
#define FUZZ_MEM (512ull << 20) /* bytes mpsim may plan for */
#endif

static char outdir[256];

int fuzz_values_init(void)
{
	setenv("MPSIM_ABORT", "1", 1); /* a panic aborts, so libFuzzer sees it */
	mp_mem_set_limit(FUZZ_MEM);
	snprintf(outdir, sizeof outdir, "%s/mpsim-fuzz-%ld",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	return 0;
}

void fuzz_values_cleanup(void)
{
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", outdir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz: could not remove %s\n", outdir);
}

int fuzz_values_run(const char *text, struct mp_err *e, uint64_t *events)
{
	struct experiment x;
	struct sim s;
	int rc;
	*events = 0;
	if (exp_load_string(&x, text, "fuzz.yaml", e)) {
		exp_free(&x);
		return e->status;
	}
	rc = sim_build(&s, &x, e);
	if (!rc) {
		simtime_t until = x.gen.stop_time ? x.gen.stop_time : x.gen.time_limit;
		*events = evq_run_n(&s.q, until, FUZZ_EVENTS);
		struct run_result r;
		sim_collect(&s, &r);
		double m[M_N];
		metrics_compute(&r, x.out.convergence_band, x.out.convergence_jain,
				x.out.settle_queue, m);
		FILE *devnull = fopen("/dev/null", "w");
		if (devnull) {
			results_print_table(devnull, &x, &r);
			fclose(devnull);
		}
		if (results_prepare(outdir, e) || results_write(outdir, &x, &r, NULL, e))
			rc = e->status;
		run_result_free(&r);
	}
	sim_free(&s);
	exp_free(&x);
	return rc;
}

/* ---- libFuzzer entry points ------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return fuzz_values_init();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	struct mp_err e = { 0 };
	uint64_t ev;
	fuzz_values_run(text, &e, &ev);
	free(text);
	return 0;
}

/* ---- the mutator ----------------------------------------------------------------- */

static uint64_t fz_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t fz_below(uint64_t *s, size_t n)
{
	return n ? (size_t)(fz_next(s) % n) : 0;
}

/* names a value may take: every registered scheme and every enum choice */
static const char **dict;
static size_t ndict, dict_cap;

static void dict_add(const char *w)
{
	for (size_t i = 0; i < ndict; i++)
		if (!strcmp(dict[i], w))
			return;
	if (ndict == dict_cap) {
		dict_cap = dict_cap ? dict_cap * 2 : 64;
		dict = realloc(dict, dict_cap * sizeof *dict);
	}
	dict[ndict++] = w;
}

static void dict_table(const struct opt_desc *t)
{
	for (; t && t->name; t++)
		if (t->type == OPT_ENUM)
			for (const char *const *c = t->choices; c && *c; c++)
				dict_add(*c);
}

/* per section, its scheme names (for `type:`) and its option tables */
#define MAX_SCHEMES 32
struct section {
	const char *name;
	const char *types[MAX_SCHEMES + 1];
	const struct opt_desc *tables[MAX_SCHEMES + 1];
};
static struct section sections[8];

#define ADD_SCHEMES(sec, reg, type)                                               \
	do {                                                                      \
		size_t k_ = 0;                                                    \
		for (type const *o_ = reg; *o_ && k_ < MAX_SCHEMES; o_++, k_++) { \
			(sec)->types[k_] = (*o_)->name;                           \
			(sec)->tables[k_] = (*o_)->opts;                          \
			dict_add((*o_)->name);                                    \
			dict_table((*o_)->opts);                                  \
		}                                                                 \
	} while (0)

static void dict_init(void)
{
	if (ndict)
		return;
	sections[0].name = "topology";
	ADD_SCHEMES(&sections[0], topo_registry, const struct topo_ops *);
	sections[1].name = "transport";
	ADD_SCHEMES(&sections[1], transport_registry, const struct transport_ops *);
	sections[2].name = "lb";
	ADD_SCHEMES(&sections[2], lb_registry, const struct lb_ops *);
	sections[3].name = "workload";
	ADD_SCHEMES(&sections[3], workload_registry, const struct workload_ops *);
	sections[4].name = "ccl";
	ADD_SCHEMES(&sections[4], ccl_registry, const struct ccl_sched_ops *);
	const struct {
		const char *name;
		const struct opt_desc *t;
	} fixed[] = { { "switch", swcfg_opts },
		      { "failures", exp_failures_opts },
		      { "output", exp_output_opts } };
	for (size_t i = 0; i < 3; i++) {
		sections[5 + i].name = fixed[i].name;
		sections[5 + i].tables[0] = fixed[i].t;
		dict_table(fixed[i].t);
	}
	dict_table(exp_general_opts);
	dict_table(coll_opts);
}

/* The names `key` of `section` may take: its scheme names, its enum choices,
 * or NULL when it is not a name. */
static const char *const *names_for(const char *section, const char *key)
{
	for (size_t i = 0; section && key && i < sizeof sections / sizeof *sections; i++) {
		const struct section *sc = &sections[i];
		if (!sc->name || strcmp(sc->name, section))
			continue;
		if (!strcmp(key, "type") && sc->types[0])
			return sc->types;
		for (size_t t = 0; sc->tables[t]; t++) {
			const struct opt_desc *d = opt_find(sc->tables[t], key);
			if (d && d->type == OPT_ENUM)
				return d->choices;
		}
	}
	return NULL;
}

static const char *const units_size[] = { "B", "KB", "KiB", "MB", "MiB", "GB", "GiB", "TB", NULL };
static const char *const units_time[] = { "ps", "ns", "us", "ms", "s", NULL };
static const char *const units_rate[] = { "bps", "Mbps", "Gbps", "Tbps", NULL };

static const char *const *unit_family(const char *u)
{
	const char *const *fams[] = { units_size, units_time, units_rate };
	for (size_t f = 0; f < 3; f++)
		for (const char *const *x = fams[f]; *x; x++)
			if (!strcmp(*x, u))
				return fams[f];
	return NULL;
}

/* boundaries of the integer types and of what a fabric holds */
static const double interesting[] = { 0,     1,	   2,	       3,	   7,	       8,
				      15,    16,   63,	       64,	   255,	       256,
				      1000,  1023, 1024,       4095,	   4096,       65535,
				      65536, 1e6,  2147483647, 4294967295, 4294967296, 4294967297,
				      1e12,  1e15, 1e18,       1.8e19,	   0.5,	       0.999,
				      1e-3,  1e-9, -1,	       1.7976e308 };

static int count_digits(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s >= '0' && *s <= '9';
	return n;
}

/* A new value for `old` (the value of `key` in `section`, either may be
 * NULL), of the same kind, into buf. */
static void mutate_scalar(const char *old, const char *section, const char *key, uint64_t *rs,
			  char *buf, size_t n)
{
	const char *const *names = names_for(section, key);
	if (names && fz_below(rs, 8)) {
		size_t k = 0;
		while (names[k])
			k++;
		snprintf(buf, n, "%s", names[fz_below(rs, k)]);
		return;
	}
	static const char *const bools[] = { "true", "false", "yes", "no", "on", "off", NULL };
	for (const char *const *b = bools; *b; b++)
		if (!strcmp(old, *b)) {
			snprintf(buf, n, "%s", bools[fz_below(rs, 6)]);
			return;
		}
	char *end;
	double v = strtod(old, &end);
	if (end == old || !count_digits(old)) { /* a name */
		if (ndict && fz_below(rs, 4))
			snprintf(buf, n, "%s", dict[fz_below(rs, ndict)]);
		else if (*old) /* a name with a number in it: leaf3-spine0 */
			snprintf(buf, n, "%s%u", old, (unsigned)fz_below(rs, 70000));
		else
			snprintf(buf, n, "%s", dict[fz_below(rs, ndict)]);
		return;
	}
	const char *unit = end;
	const char *const *fam = unit_family(unit);
	switch (fz_below(rs, 6)) {
	case 0:
	case 1:
	case 2:
		v = interesting[fz_below(rs, sizeof interesting / sizeof *interesting)];
		break;
	case 3: {
		static const double f[] = { 0, 0.5, 2, 10, 1000, 1e6, 1e-3 };
		v *= f[fz_below(rs, sizeof f / sizeof *f)];
		break;
	}
	case 4:
		v += fz_below(rs, 2) ? 1 : -1;
		break;
	default:
		if (fam) { /* the same number in another unit of its family */
			size_t k = 0;
			while (fam[k])
				k++;
			unit = fam[fz_below(rs, k)];
		} else {
			v = (double)(fz_next(rs) >> fz_below(rs, 64));
		}
	}
	if (v > -1e18 && v < 1e18 && v == (double)(int64_t)v)
		snprintf(buf, n, "%lld%s", (long long)v, unit);
	else
		snprintf(buf, n, "%.17g%s", v, unit);
}

struct outbuf {
	uint8_t *p;
	size_t n, cap;
	int overflow;
};

static int write_out(void *ctx, unsigned char *buf, size_t size)
{
	struct outbuf *o = ctx;
	if (o->n + size > o->cap) {
		o->overflow = 1;
		return 1;
	}
	memcpy(o->p + o->n, buf, size);
	o->n += size;
	return 1;
}

size_t fuzz_values_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	dict_init();
	uint64_t rs = (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1;
	yaml_parser_t p;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&p))
		return size;
	yaml_parser_set_input_string(&p, data, size);
	int ok = yaml_parser_load(&p, &doc);
	yaml_parser_delete(&p);
	if (!ok)
		return size;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		yaml_document_delete(&doc);
		return size;
	}
	/* value scalars (not keys), each with its key and section */
	size_t nn = (size_t)(doc.nodes.top - doc.nodes.start);
	char *is_key = calloc(nn + 1, 1);
	const char **key_of = calloc(nn + 1, sizeof *key_of),
		   **sec_of = calloc(nn + 1, sizeof *sec_of);
	for (size_t i = 0; i < nn; i++) {
		yaml_node_t *nd = &doc.nodes.start[i];
		if (nd->type != YAML_MAPPING_NODE)
			continue;
		for (yaml_node_pair_t *pr = nd->data.mapping.pairs.start;
		     pr < nd->data.mapping.pairs.top; pr++) {
			if (pr->key < 1 || (size_t)pr->key > nn || pr->value < 1 ||
			    (size_t)pr->value > nn)
				continue;
			is_key[pr->key - 1] = 1;
			yaml_node_t *kn = &doc.nodes.start[pr->key - 1];
			if (kn->type != YAML_SCALAR_NODE)
				continue;
			key_of[pr->value - 1] = (const char *)kn->data.scalar.value;
			if (nd == root) /* a section: its values learn its name */
				sec_of[pr->value - 1] = (const char *)kn->data.scalar.value;
		}
	}
	for (size_t i = 0; i < nn; i++) { /* a section's scalars and lists */
		yaml_node_t *nd = &doc.nodes.start[i];
		if (nd->type != YAML_MAPPING_NODE || !sec_of[i])
			continue;
		for (yaml_node_pair_t *pr = nd->data.mapping.pairs.start;
		     pr < nd->data.mapping.pairs.top; pr++)
			if (pr->value >= 1 && (size_t)pr->value <= nn)
				sec_of[pr->value - 1] = sec_of[i];
	}
	size_t *vals = malloc((nn + 1) * sizeof *vals), nv = 0;
	for (size_t i = 0; i < nn; i++)
		if (doc.nodes.start[i].type == YAML_SCALAR_NODE && !is_key[i])
			vals[nv++] = i;
	size_t nmut = 1 + fz_below(&rs, 3);
	for (size_t k = 0; k < nmut && nv; k++) {
		size_t vi = vals[fz_below(&rs, nv)];
		yaml_node_t *nd = &doc.nodes.start[vi];
		char nb[128];
		mutate_scalar((const char *)nd->data.scalar.value, sec_of[vi], key_of[vi], &rs, nb,
			      sizeof nb);
		free(nd->data.scalar.value);
		nd->data.scalar.value = (yaml_char_t *)strdup(nb);
		nd->data.scalar.length = strlen(nb);
		nd->data.scalar.style = YAML_ANY_SCALAR_STYLE;
	}
	free(vals);
	free(is_key);
	free(key_of);
	free(sec_of);
	yaml_emitter_t em;
	struct outbuf o = { .p = malloc(max_size), .cap = max_size };
	size_t out = size;
	if (yaml_emitter_initialize(&em)) {
		yaml_emitter_set_output(&em, write_out, &o);
		yaml_emitter_set_width(&em, 1000);
		if (yaml_emitter_open(&em) && yaml_emitter_dump(&em, &doc) &&
		    yaml_emitter_close(&em) && !o.overflow) {
			memcpy(data, o.p, o.n);
			out = o.n;
		}
		yaml_emitter_delete(&em);
	} else {
		yaml_document_delete(&doc);
	}
	free(o.p);
	return out;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	return fuzz_values_mutate(data, size, max_size, seed);
}

/* values.c - the value-level fuzz target: experiment files whose values, not
 * bytes, are mutated, each run as `mpsim run` runs it (sweep points, tables,
 * results folder, report and plot scripts), with every run bounded.
 *
 * Input: a YAML experiment file (fuzz/corpus/ holds small valid ones),
 * optionally followed by directives, lines from the first one starting "#@"
 * (a YAML comment, so the file stays an experiment file):
 *
 *     #@set workload.size=2MB        a --set argument (at most FUZZ_SETS)
 *     #@file flows.csv               a side file: the lines up to the next
 *     src,dst,bytes,start            "#@" line are written as flows.csv beside
 *     0,1,64KB,0                     the experiment file
 *
 * The custom mutator (LLVMFuzzerCustomMutator) parses the YAML with libyaml
 * and makes one to three changes: a scalar value replaced by one of the same
 * kind (a size with a size, a time with a time, a switch with a flag, an enum
 * name with another known name; boundaries such as 0, 1, 2^32 and 2^64-1 are
 * favoured); a text that reaches the outputs (the experiment's name, a sweep
 * variant's name, a `paper:` entry's text, note, metric, `when` or `ratio_of`)
 * replaced by a hostile string (backquotes, $(...), quotes, HTML, newlines,
 * long or non-ASCII text, names starting with '-', '/' or '..'), renamed
 * alike wherever the sweep and paper sections name it; a --set added,
 * changed or dropped (keys from the option tables, values of the right kind,
 * of a wrong kind, a list for a scalar, a mapping); a side file's line or
 * field changed (a number out of range, negative, NaN or huge, a field
 * dropped or added, a line dropped or repeated, a field copied from another
 * line: duplicate ids, cycles in a DAG). Every case is a well-formed file
 * whose values are legal one by one but not necessarily together.
 *
 * The target writes the file and its side files into a scratch folder and
 * calls batch_main (sim/batch.c, what `mpsim run FILE --set ... --out DIR
 * -j 1 -q` calls): a sweep's points run in child processes, each at most
 * FUZZ_EVENTS events (sim_fuzz_max_events). gnuplot is replaced by a stub
 * that does nothing, so every plot script is written but never run; the
 * target then reads each plot.gp for a backquote outside single quotes
 * (gnuplot would run it as a command) and each report.html for an HTML
 * string of the input left unescaped. A user error (status 2) is a fine
 * outcome; any other status (a panic, which MPSIM_ABORT makes abort, a point
 * killed by a sanitizer, an I/O error), such an output, a case over
 * libFuzzer's -timeout or -rss_limit_mb is a finding. mpsim's memory plan is
 * capped at FUZZ_MEM bytes, so an experiment too large for it must be refused
 * by its estimate before it allocates.
 *
 * fuzz/replay.c runs the same target over saved files without libFuzzer
 * (the CI replay); a corpus file may begin with "# expect: N text", the exit
 * status and a piece of the message the replay then asserts.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "ccl/ccl.h"
#include "ccl/intra.h"
#include "core/mem.h"
#include "io/experiment.h"
#include "net/topo.h"
#include "sim/batch.h"
#include "sim/run.h"
#include "net/lb.h"
#include "net/switch.h"
#include "transport/transport.h"
#include "workload/collective.h"
#include "workload/workload.h"

#include "fuzz/values.h"

#ifndef FUZZ_EVENTS
#define FUZZ_EVENTS 300000 /* events per run: a few tenths of a second */
#endif
#ifndef FUZZ_MEM
#define FUZZ_MEM (512ull << 20) /* bytes mpsim may plan for */
#endif
#define FUZZ_SETS 3	 /* --set arguments a case carries */
#define FUZZ_FILES 4	 /* side files a case carries */
#define FUZZ_NAME_MAX 48 /* a side file's name */

/* the HTML string the mutator puts into texts: report.html must escape it */
#define FUZZ_HTML "<script>alert(1)</script>"

static char scratch[256];    /* $TMPDIR/mpsim-fuzz-PID: bin/gnuplot, case/ */
static int capture_msgs = 1; /* the replay: batch's messages into e->msg */

/* ---- a case: the experiment, its --set arguments, its side files ---------------- */

struct fz_file {
	char name[FUZZ_NAME_MAX + 1];
	char *text;
};

struct fz_case {
	char *yaml; /* up to the first "#@" line */
	char *sets[FUZZ_SETS];
	size_t nsets;
	struct fz_file files[FUZZ_FILES];
	size_t nfiles;
};

static void fz_case_free(struct fz_case *c)
{
	free(c->yaml);
	for (size_t i = 0; i < c->nsets; i++)
		free(c->sets[i]);
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i].text);
	memset(c, 0, sizeof *c);
}

/* A side file's name as given, or "side" when it is not a plain file name
 * (it never leaves the case's folder). */
static void fz_file_name(const char *s, size_t n, char *out)
{
	size_t k = 0;
	int ok = n > 0 && n <= FUZZ_NAME_MAX && s[0] != '.';
	for (size_t i = 0; ok && i < n; i++) {
		char c = s[i];
		ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		     c == '.' || c == '_' || c == '-';
		out[k++] = c;
	}
	if (!ok)
		k = (size_t)sprintf(out, "side");
	out[k] = '\0';
}

static void fz_append(char **dst, const char *s, size_t n)
{
	size_t l = *dst ? strlen(*dst) : 0;
	*dst = realloc(*dst, l + n + 1);
	memcpy(*dst + l, s, n);
	(*dst)[l + n] = '\0';
}

static void fz_case_parse(struct fz_case *c, const char *text, size_t size)
{
	memset(c, 0, sizeof *c);
	const char *end = text + size, *d = NULL;
	for (const char *l = text; l < end;) {
		if (end - l >= 2 && l[0] == '#' && l[1] == '@') {
			d = l;
			break;
		}
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		l = nl ? nl + 1 : end;
	}
	c->yaml = strndup(text, (size_t)((d ? d : end) - text));
	struct fz_file *cur = NULL;
	for (const char *l = d; l && l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		const char *le = nl ? nl : end;
		size_t n = (size_t)(le - l);
		if (n >= 2 && l[0] == '#' && l[1] == '@') {
			cur = NULL;
			if (n > 6 && !strncmp(l, "#@set ", 6) && c->nsets < FUZZ_SETS) {
				c->sets[c->nsets++] = strndup(l + 6, n - 6);
			} else if (n > 7 && !strncmp(l, "#@file ", 7) && c->nfiles < FUZZ_FILES) {
				cur = &c->files[c->nfiles++];
				fz_file_name(l + 7, n - 7, cur->name);
				cur->text = strdup("");
			}
		} else if (cur) {
			fz_append(&cur->text, l, n);
			fz_append(&cur->text, "\n", 1);
		}
		l = nl ? nl + 1 : end;
	}
}

/* The case as text again: its YAML, then its directives. */
static char *fz_case_text(const struct fz_case *c, const char *yaml, size_t ylen)
{
	char *t = NULL;
	fz_append(&t, yaml, ylen);
	if (ylen && yaml[ylen - 1] != '\n' && (c->nsets || c->nfiles))
		fz_append(&t, "\n", 1);
	for (size_t i = 0; i < c->nsets; i++) {
		fz_append(&t, "#@set ", 6);
		for (const char *s = c->sets[i]; *s; s++) /* one line each */
			fz_append(&t, *s == '\n' ? " " : s, 1);
		fz_append(&t, "\n", 1);
	}
	for (size_t i = 0; i < c->nfiles; i++) {
		fz_append(&t, "#@file ", 7);
		fz_append(&t, c->files[i].name, strlen(c->files[i].name));
		fz_append(&t, "\n", 1);
		const char *s = c->files[i].text;
		for (const char *l = s; *l;) { /* a line starting "#@" would end the file */
			const char *nl = strchr(l, '\n');
			size_t n = nl ? (size_t)(nl - l) : strlen(l);
			if (n >= 2 && l[0] == '#' && l[1] == '@')
				fz_append(&t, " ", 1);
			fz_append(&t, l, n);
			fz_append(&t, "\n", 1);
			l = nl ? nl + 1 : l + n;
		}
	}
	return t ? t : strdup("");
}

/* ---- the target ------------------------------------------------------------------ */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int bad = fputs(text, f) < 0;
	bad |= fclose(f) != 0;
	return bad ? -1 : 0;
}

int fuzz_values_init(void)
{
	setenv("MPSIM_ABORT", "1", 1); /* a panic aborts, so libFuzzer sees it */
	unsetenv("MPSIM_NO_PLOTS");
	mp_mem_set_limit(FUZZ_MEM);
	sim_fuzz_max_events = FUZZ_EVENTS;
	snprintf(scratch, sizeof scratch, "%s/mpsim-fuzz-%ld",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	char p[400];
	mkdir(scratch, 0777);
	snprintf(p, sizeof p, "%s/bin", scratch);
	mkdir(p, 0777);
	/* plot scripts are written, never run: this gnuplot comes first on PATH
	 * and writes each figure as the end of a whole file (plot.c checks that
	 * gnuplot left a complete PNG or SVG) */
	snprintf(p, sizeof p, "%s/bin/gnuplot", scratch);
	if (write_file(p,
		       "#!/bin/sh\n"
		       "sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" \"$1\" | while read -r f; do\n"
		       "  if [ \"${f%.png}\" != \"$f\" ]; then printf 'IEND\\256B`\\202' >\"$f\"\n"
		       "  else printf '</svg>\\n' >\"$f\"; fi\n"
		       "done\n") ||
	    chmod(p, 0755)) {
		fprintf(stderr, "fuzz: cannot write %s\n", p);
		return -1;
	}
	const char *path = getenv("PATH");
	char *np = malloc(strlen(scratch) + (path ? strlen(path) : 0) + 8);
	sprintf(np, "%s/bin%s%s", scratch, path ? ":" : "", path ? path : "");
	setenv("PATH", np, 1);
	free(np);
	return 0;
}

void fuzz_values_cleanup(void)
{
	rm_tree(scratch);
}

/* ---- what the outputs must not hold ---- */

static struct mp_err *check_err;

/* A backquote that gnuplot would run: outside single-quoted strings and
 * comments (gnuplot substitutes `...` in double-quoted strings too). */
static void check_gnuplot(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	int c, prev = 0, line = 1, esc = 0;
	enum { OUT, DQ, SQ, COMMENT } st = OUT;
	while ((c = getc(f)) != EOF && !check_err->status) {
		if (c == '\n') {
			line++;
			if (prev != '\\') /* a trailing backslash continues the line */
				st = OUT;
			esc = 0;
		} else if (c == '`' && st != SQ && st != COMMENT) {
			mp_errf(check_err, 3,
				"%s:%d: a backquote outside single quotes: gnuplot would run "
				"the text between backquotes as a command",
				path, line);
		} else if (st == DQ) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				st = OUT;
		} else if (st == SQ) {
			if (c == '\'') /* '' inside: out, then in again */
				st = OUT;
		} else if (st == OUT) {
			st = c == '#' ? COMMENT : c == '"' ? DQ : c == '\'' ? SQ : OUT;
		}
		prev = c;
	}
	fclose(f);
}

static void check_html(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char buf[8192];
	size_t keep = sizeof FUZZ_HTML - 2, n = 0, k;
	while ((k = fread(buf + n, 1, sizeof buf - 1 - n, f)) > 0 && !check_err->status) {
		n += k;
		buf[n] = '\0';
		if (strstr(buf, FUZZ_HTML))
			mp_errf(check_err, 3,
				"%s: holds '%s' unescaped: text from the experiment file "
				"became HTML",
				path, FUZZ_HTML);
		if (n > keep) { /* keep the tail: a match across two reads */
			memmove(buf, buf + n - keep, keep);
			n = keep;
		}
	}
	fclose(f);
}

static int check_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	if (flag != FTW_F)
		return 0;
	const char *base = path + ftw->base;
	if (!strcmp(base, "plot.gp"))
		check_gnuplot(path);
	else if (!strcmp(base, "report.html"))
		check_html(path);
	return check_err->status != 0;
}

int fuzz_values_run(const char *text, struct mp_err *e)
{
	struct fz_case c;
	char dir[400], file[480], out[480], msgs[480];
	fz_case_parse(&c, text, strlen(text));
	snprintf(dir, sizeof dir, "%s/case", scratch);
	rm_tree(dir);
	mkdir(dir, 0777);
	snprintf(file, sizeof file, "%s/exp.yaml", dir);
	snprintf(out, sizeof out, "%s/res", dir);
	snprintf(msgs, sizeof msgs, "%s/stderr.txt", dir);
	int bad = write_file(file, c.yaml);
	for (size_t i = 0; i < c.nfiles && !bad; i++) {
		char p[480];
		snprintf(p, sizeof p, "%s/%s", dir, c.files[i].name);
		bad = write_file(p, c.files[i].text);
	}
	if (bad) {
		fz_case_free(&c);
		return mp_errf(e, MP_EIO, "fuzz: cannot write the case into %s", dir);
	}
	struct batch_args a = { .file = file,
				.out = out,
				.sets = c.sets,
				.nsets = c.nsets,
				.seed = -1,
				.jobs = 1,
				.quiet = true,
				.run = true };
	int saved = -1;
	if (capture_msgs) { /* batch says what went wrong on stderr */
		fflush(stderr);
		int fd = open(msgs, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		saved = fd >= 0 ? dup(2) : -1;
		if (saved >= 0)
			dup2(fd, 2);
		if (fd >= 0)
			close(fd);
	}
	int rc = batch_main(&a);
	if (saved >= 0) {
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		FILE *f = fopen(msgs, "r");
		if (f) {
			size_t n = fread(e->msg, 1, sizeof e->msg - 1, f);
			while (n && e->msg[n - 1] == '\n')
				n--;
			e->msg[n] = '\0';
			fclose(f);
		}
	}
	e->status = rc;
	if (rc == 0 || rc == MP_EUSER) {
		struct mp_err ce = { 0 };
		check_err = &ce;
		nftw(out, check_one, 16, FTW_PHYS);
		if (ce.status)
			*e = ce;
		rc = ce.status ? ce.status : rc;
	}
	fz_case_free(&c);
	return rc;
}

/* ---- libFuzzer entry points ------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	capture_msgs = 0; /* sanitizer reports stay on stderr */
	return fuzz_values_init();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	struct mp_err e = { 0 };
	int rc = fuzz_values_run(text, &e);
	free(text);
	if (rc != 0 && rc != MP_EUSER) {
		fprintf(stderr, "fuzz: status %d%s%s\n", rc, *e.msg ? ": " : "", e.msg);
		abort();
	}
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
#define NSECTIONS 11
static struct section sections[NSECTIONS];

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
	} fixed[] = { { "switch", swcfg_opts },	     { "failures", exp_failures_opts },
		      { "output", exp_output_opts }, { "collective", coll_opts },
		      { "server", intra_opts },	     { "", exp_general_opts } };
	for (size_t i = 0; i < NSECTIONS - 5; i++) {
		sections[5 + i].name = fixed[i].name;
		sections[5 + i].tables[0] = fixed[i].t;
		dict_table(fixed[i].t);
	}
}

/* The names `key` of `section` may take: its scheme names, its enum choices,
 * or NULL when it is not a name. */
static const char *const *names_for(const char *section, const char *key)
{
	for (size_t i = 0; section && key && i < NSECTIONS; i++) {
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
	char sec[64];
	const char *dot = key ? strchr(key, '.') : NULL;
	if (dot && (size_t)(dot - key) < sizeof sec) { /* a sweep's or --set's key */
		snprintf(sec, sizeof sec, "%.*s", (int)(dot - key), key);
		section = sec;
		key = strrchr(key, '.') + 1;
	}
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

/* ---- hostile texts: names, notes and paper entries ---- */

static const char *const hostile[] = {
	"`echo fz`",
	"a`echo fz`b",
	"$(echo fz)",
	"${HOME}",
	"\"",
	"'",
	"\"'\"",
	"a\"b",
	"a'b",
	"\\",
	"a\\",
	"\\\"",
	FUZZ_HTML,
	"</td></table><b>x",
	"&amp;&<>",
	"a\nb",
	"\n",
	"\r\n",
	"a\tb",
	"",
	" ",
	"-x",
	"--help",
	"-",
	"/",
	"/etc/passwd",
	"..",
	"../..",
	"../x",
	"./x",
	"a/b",
	"a,b",
	"a;b",
	"a|b",
	"a=b",
	"%s%n%x",
	"#x",
	"a #b",
	"{a: b}",
	"[x]",
	"*",
	"&a",
	"!!str",
	"null",
	"~",
	"a:b",
	"a: b",
	"\xc3\xa9t\xc3\xa9",
	"\xe6\x97\xa5\xe6\x9c\xac",
	"\xf0\x9f\x98\x80",
	"\xef\xbb\xbf"
	"a",
	"\xe2\x80\xae"
	"abc",
	"\xc3",
	"\xff\xfe",
	"\xed\xa0\x80",
	"\x01\x7f",
};
#define NHOSTILE (sizeof hostile / sizeof *hostile)

/* A hostile text into buf: one to three pieces, maybe after the old text,
 * or one piece repeated into a long name. */
static void hostile_text(const char *old, uint64_t *rs, char *buf, size_t n)
{
	size_t l = 0;
	buf[0] = '\0';
	switch (fz_below(rs, 6)) {
	case 0: { /* long: around the 200 of a folder name, or far past it */
		static const size_t lens[] = { 100, 199, 200, 201, 255, 256, 1000, 4000 };
		size_t want = lens[fz_below(rs, sizeof lens / sizeof *lens)];
		const char *piece = fz_below(rs, 2) ? "x" : hostile[fz_below(rs, NHOSTILE)];
		if (!*piece)
			piece = "x";
		while (l + strlen(piece) < want && l + strlen(piece) < n)
			l += (size_t)snprintf(buf + l, n - l, "%s", piece);
		return;
	}
	case 1:
		l = (size_t)snprintf(buf, n, "%s", old);
		break;
	default:
		break;
	}
	for (size_t k = 1 + fz_below(rs, 3); k && l < n; k--)
		l += (size_t)snprintf(buf + l, n - l, "%s", hostile[fz_below(rs, NHOSTILE)]);
}

/* ---- --set arguments ---- */

/* "section.key=value" with a key from the option tables (now and then one
 * that is not) and a value of its kind, of another kind, a list or a
 * mapping. */
static void gen_set(uint64_t *rs, char *buf, size_t n)
{
	const struct section *sc = &sections[fz_below(rs, NSECTIONS)];
	size_t nt = 0;
	while (sc->tables[nt])
		nt++;
	const struct opt_desc *t = nt ? sc->tables[fz_below(rs, nt)] : NULL;
	size_t no = 0;
	while (t && t[no].name)
		no++;
	char key[128];
	const struct opt_desc *d = no ? &t[fz_below(rs, no)] : NULL;
	static const char *const odd_keys[] = {
		"nosuch.key",	   "workload",	   "workload.",	      ".size", "workload..size",
		"sweep.x",	   "paper.source", "topology.type.x", "=",     "a b.c",
		"workload.size.x",
	};
	if (!d || !fz_below(rs, 12))
		snprintf(key, sizeof key, "%s",
			 odd_keys[fz_below(rs, sizeof odd_keys / sizeof *odd_keys)]);
	else if (sc->types[0] && !fz_below(rs, 6))
		snprintf(key, sizeof key, "%s%stype", sc->name, *sc->name ? "." : "");
	else
		snprintf(key, sizeof key, "%s%s%s", sc->name, *sc->name ? "." : "", d->name);
	char v1[160], v2[160], val[1100];
	const char *def = d && d->def && *d->def ? d->def : "1";
	mutate_scalar(def, NULL, key, rs, v1, sizeof v1);
	mutate_scalar(def, NULL, key, rs, v2, sizeof v2);
	static const char *const wrong[] = { "true", "fast", "1MB", "10us",  "100Gbps",
					     "-1",   "nan",  "inf", "1e400", "0x10",
					     "1.5",  "",     "[]",  "{}",    "~" };
	switch (fz_below(rs, 8)) {
	case 0: /* a list where a scalar is expected (or a list of lists) */
		snprintf(val, sizeof val, "[%s, %s]", v1, v2);
		break;
	case 1:
		snprintf(val, sizeof val, "[%s]", v1);
		break;
	case 2:
		snprintf(val, sizeof val, "{%s: %s}", d ? d->name : "a", v1);
		break;
	case 3:
		snprintf(val, sizeof val, "%s", wrong[fz_below(rs, sizeof wrong / sizeof *wrong)]);
		break;
	case 4: {
		char h[1000];
		hostile_text(v1, rs, h, sizeof h);
		snprintf(val, sizeof val, "%s", h);
		break;
	}
	default:
		snprintf(val, sizeof val, "%s", v1);
	}
	snprintf(buf, n, "%s%s%s", key, fz_below(rs, 30) ? "=" : "", val);
}

static void mutate_sets(struct fz_case *c, uint64_t *rs)
{
	char b[1400];
	size_t op = fz_below(rs, 4);
	if (c->nsets && op == 0) { /* drop one */
		size_t i = fz_below(rs, c->nsets);
		free(c->sets[i]);
		c->sets[i] = c->sets[--c->nsets];
		c->sets[c->nsets] = NULL;
	} else if (c->nsets && op == 1) { /* a new value for the same key */
		size_t i = fz_below(rs, c->nsets);
		char *eq = strchr(c->sets[i], '=');
		if (!eq)
			return;
		char v[160];
		mutate_scalar(eq + 1, NULL, NULL, rs, v, sizeof v);
		*eq = '\0';
		snprintf(b, sizeof b, "%s=%s", c->sets[i], v);
		free(c->sets[i]);
		c->sets[i] = strdup(b);
	} else {
		gen_set(rs, b, sizeof b);
		/* a new slot past nsets may still hold the address of the entry a
		 * drop moved down: only a replaced entry is freed */
		if (c->nsets < FUZZ_SETS) {
			c->sets[c->nsets++] = strdup(b);
		} else {
			size_t i = fz_below(rs, FUZZ_SETS);
			free(c->sets[i]);
			c->sets[i] = strdup(b);
		}
	}
}

/* ---- side files: lines and fields ---- */

static const char *const field_values[] = {
	"0",
	"1",
	"-1",
	"-0",
	"2",
	"65535",
	"65536",
	"4294967295",
	"4294967296",
	"18446744073709551615",
	"18446744073709551616",
	"1e18",
	"1e309",
	"nan",
	"NaN",
	"inf",
	"-inf",
	"0.5",
	"1.5",
	"1e-9",
	"",
	" ",
	"x",
	"1MB",
	"1TB",
	"10us",
	"-5us",
	"1e6ps",
	"a:sent",
	"a b",
	"0x10",
	"007",
	"\xff",
	"\"",
	"[",
	"{",
	"}",
	"->",
	"1->1",
	"0->0",
	"id",
	"trigger",
	"oneshot",
	"barrier",
	"multishot",
	"count",
};

/* Split text into lines (the array points into the copy *own). */
static size_t split_lines(const char *text, char **own, char ***lines)
{
	*own = strdup(text);
	size_t n = 0, cap = 16;
	*lines = malloc(cap * sizeof **lines);
	for (char *l = *own; *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (n == cap)
			*lines = realloc(*lines, (cap *= 2) * sizeof **lines);
		(*lines)[n++] = l;
		l = nl ? nl + 1 : l + strlen(l);
	}
	return n;
}

/* Field k of a line (separated by ',' when it has one, else by blanks):
 * its start and length; false when it has fewer fields. */
static int field_at(const char *l, size_t k, const char **at, size_t *len)
{
	char sep = strchr(l, ',') ? ',' : ' ';
	const char *p = l;
	for (size_t i = 0;; i++) {
		while (sep == ' ' && *p == ' ')
			p++;
		const char *e = strchr(p, sep);
		size_t fl = e ? (size_t)(e - p) : strlen(p);
		if (i == k) {
			*at = p;
			*len = fl;
			return *p || sep == ',';
		}
		if (!e)
			return 0;
		p = e + 1;
	}
}

static size_t count_fields(const char *l)
{
	const char *a;
	size_t n = 0, len;
	while (n < 64 && field_at(l, n, &a, &len))
		n++;
	return n;
}

static void mutate_file(struct fz_file *f, uint64_t *rs)
{
	char *own, **lines;
	size_t n = split_lines(f->text, &own, &lines);
	char *out = NULL, *repl = NULL;
	size_t target = fz_below(rs, n ? n : 1), other = fz_below(rs, n ? n : 1);
	size_t op = fz_below(rs, 10);
	if (n && op >= 3) { /* a field of the target line replaced, dropped or added */
		const char *l = lines[target];
		size_t nf = count_fields(l), k = fz_below(rs, nf ? nf : 1), len = 0;
		const char *at = l;
		if (!field_at(l, k, &at, &len))
			at = l + strlen(l);
		char v[200];
		size_t ol = 0;
		const char *oa;
		if (op == 3) { /* from another line: duplicate ids, cycles */
			size_t ok = fz_below(rs, 2) ? k : fz_below(rs, 8);
			if (field_at(lines[other], ok, &oa, &ol))
				snprintf(v, sizeof v, "%.*s", (int)(ol < 199 ? ol : 199), oa);
			else
				snprintf(v, sizeof v, "0");
		} else if (op == 4 && len) { /* a number of the same kind */
			char old[128];
			snprintf(old, sizeof old, "%.*s", (int)(len < 127 ? len : 127), at);
			mutate_scalar(old, NULL, NULL, rs, v, sizeof v);
		} else if (op == 5) {
			hostile_text("", rs, v, sizeof v);
		} else {
			snprintf(
			    v, sizeof v, "%s",
			    field_values[fz_below(rs, sizeof field_values / sizeof *field_values)]);
		}
		char sep = strchr(l, ',') ? ',' : ' ';
		size_t pre = (size_t)(at - l);
		repl = malloc(strlen(l) + strlen(v) + 4);
		if (op == 6) /* drop the field (and its separator) */
			sprintf(repl, "%.*s%s", (int)(pre ? pre - 1 : 0), l,
				at[len] ? at + len + (pre ? 0 : 1) : "");
		else if (op == 7) /* one more field */
			sprintf(repl, "%s%c%s", l, sep, v);
		else
			sprintf(repl, "%.*s%s%s", (int)pre, l, v, at + len);
	}
	for (size_t i = 0; i < n; i++) {
		if (i == target && op == 0) /* dropped */
			continue;
		const char *l = i == target && repl ? repl : lines[i];
		if (i == target && op == 2 && n > 1)
			l = lines[other];
		else if (i == other && op == 2 && n > 1)
			l = lines[target];
		fz_append(&out, l, strlen(l));
		fz_append(&out, "\n", 1);
		if (i == target && op == 1) /* repeated */
			for (size_t k = 1 + (fz_below(rs, 4) ? 0 : fz_below(rs, 50)); k; k--) {
				fz_append(&out, l, strlen(l));
				fz_append(&out, "\n", 1);
			}
	}
	if (!n) {
		const char *v =
		    field_values[fz_below(rs, sizeof field_values / sizeof *field_values)];
		fz_append(&out, v, strlen(v));
		fz_append(&out, "\n", 1);
	}
	free(repl);
	free(lines);
	free(own);
	free(f->text);
	f->text = out ? out : strdup("");
}

/* ---- the YAML part ---- */

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

/* The nodes of a parsed file, classified for the mutator. */
struct fz_nodes {
	yaml_document_t *doc;
	size_t nn;
	char *is_key;
	const char **key_of, **sec_of;
	char *text;	/* a text that reaches the outputs: a name, a note */
	char *in_names; /* in the sweep's or paper's names: renamed alike */
};

static yaml_node_t *fz_node(const struct fz_nodes *w, int id)
{
	return id >= 1 && (size_t)id <= w->nn ? &w->doc->nodes.start[id - 1] : NULL;
}

/* Under `paper:`: every scalar value is a text; keys are texts in `when` and
 * `ratio_of` (they name swept keys). */
static void mark_paper(struct fz_nodes *w, int id, int keys_too)
{
	yaml_node_t *nd = fz_node(w, id);
	if (!nd)
		return;
	if (nd->type == YAML_SCALAR_NODE) {
		w->text[id - 1] = w->in_names[id - 1] = 1;
	} else if (nd->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = nd->data.sequence.items.start;
		     it < nd->data.sequence.items.top; it++)
			if (*it != id)
				mark_paper(w, *it, 0);
	} else if (nd->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *pr = nd->data.mapping.pairs.start;
		     pr < nd->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = fz_node(w, pr->key);
			if (keys_too && k && k->type == YAML_SCALAR_NODE)
				w->text[pr->key - 1] = w->in_names[pr->key - 1] = 1;
			int sub = k && k->type == YAML_SCALAR_NODE &&
				  (!strcmp((char *)k->data.scalar.value, "when") ||
				   !strcmp((char *)k->data.scalar.value, "ratio_of"));
			if (pr->value != id)
				mark_paper(w, pr->value, sub);
		}
	}
}

static void classify(struct fz_nodes *w, yaml_node_t *root)
{
	size_t nn = w->nn;
	w->is_key = calloc(nn + 1, 1);
	w->key_of = calloc(nn + 1, sizeof *w->key_of);
	w->sec_of = calloc(nn + 1, sizeof *w->sec_of);
	w->text = calloc(nn + 1, 1);
	w->in_names = calloc(nn + 1, 1);
	for (size_t i = 0; i < nn; i++) {
		yaml_node_t *nd = &w->doc->nodes.start[i];
		if (nd->type != YAML_MAPPING_NODE)
			continue;
		for (yaml_node_pair_t *pr = nd->data.mapping.pairs.start;
		     pr < nd->data.mapping.pairs.top; pr++) {
			if (!fz_node(w, pr->key) || !fz_node(w, pr->value))
				continue;
			w->is_key[pr->key - 1] = 1;
			yaml_node_t *kn = &w->doc->nodes.start[pr->key - 1];
			if (kn->type != YAML_SCALAR_NODE)
				continue;
			w->key_of[pr->value - 1] = (const char *)kn->data.scalar.value;
			if (nd == root) /* a section: its values learn its name */
				w->sec_of[pr->value - 1] = (const char *)kn->data.scalar.value;
		}
	}
	for (size_t i = 0; i < nn; i++) { /* a section's scalars and lists */
		yaml_node_t *nd = &w->doc->nodes.start[i];
		if (nd->type != YAML_MAPPING_NODE || !w->sec_of[i])
			continue;
		for (yaml_node_pair_t *pr = nd->data.mapping.pairs.start;
		     pr < nd->data.mapping.pairs.top; pr++)
			if (fz_node(w, pr->value))
				w->sec_of[pr->value - 1] = w->sec_of[i];
	}
	if (root->type != YAML_MAPPING_NODE)
		return;
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
	     pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = fz_node(w, pr->key), *v = fz_node(w, pr->value);
		if (!k || !v || k->type != YAML_SCALAR_NODE)
			continue;
		const char *name = (const char *)k->data.scalar.value;
		if (!strcmp(name, "name") && v->type == YAML_SCALAR_NODE)
			w->text[pr->value - 1] = 1;
		else if (!strcmp(name, "paper"))
			mark_paper(w, pr->value, 0);
		else if (!strcmp(name, "sweep") && v->type == YAML_MAPPING_NODE)
			for (yaml_node_pair_t *sp = v->data.mapping.pairs.start;
			     sp < v->data.mapping.pairs.top; sp++) {
				yaml_node_t *g = fz_node(w, sp->value);
				if (!g || g->type != YAML_MAPPING_NODE)
					continue;
				/* a variant group: its keys are the variants' names */
				for (yaml_node_pair_t *vp = g->data.mapping.pairs.start;
				     vp < g->data.mapping.pairs.top; vp++)
					if (fz_node(w, vp->key) &&
					    fz_node(w, vp->key)->type == YAML_SCALAR_NODE)
						w->text[vp->key - 1] = w->in_names[vp->key - 1] = 1;
			}
	}
}

/* Bytes that are not UTF-8 made '?': libyaml's writer loops forever on
 * them (mpsim's reader refuses them anyway: --set and side files carry
 * them instead). */
static void utf8_only(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		size_t k = *p < 0x80		 ? 0
			   : (*p & 0xe0) == 0xc0 ? 1
			   : (*p & 0xf0) == 0xe0 ? 2
			   : (*p & 0xf8) == 0xf0 ? 3
						 : 9;
		size_t i = 1;
		while (k != 9 && i <= k && (p[i] & 0xc0) == 0x80)
			i++;
		int bad = k == 9 || i <= k || (k == 1 && *p < 0xc2) ||
			  (k == 2 && *p == 0xed && p[1] >= 0xa0) || (k == 3 && *p > 0xf4);
		if (bad) {
			*p++ = '?';
			continue;
		}
		p += k + 1;
	}
}

static void set_scalar(yaml_node_t *nd, const char *v)
{
	free(nd->data.scalar.value);
	nd->data.scalar.value = (yaml_char_t *)strdup(v);
	utf8_only((char *)nd->data.scalar.value);
	nd->data.scalar.length = strlen(v);
	nd->data.scalar.style = YAML_ANY_SCALAR_STYLE;
}

/* One hostile text in place of text node i; with `alike`, every name in the
 * sweep and paper sections that was the same is renamed too. */
static void mutate_text(struct fz_nodes *w, size_t i, int alike, uint64_t *rs)
{
	yaml_node_t *nd = &w->doc->nodes.start[i];
	char *old = strdup((const char *)nd->data.scalar.value), nb[4100];
	hostile_text(old, rs, nb, sizeof nb);
	set_scalar(nd, nb);
	for (size_t j = 0; alike && w->in_names[i] && j < w->nn; j++) {
		yaml_node_t *o = &w->doc->nodes.start[j];
		if (j != i && w->in_names[j] && o->type == YAML_SCALAR_NODE &&
		    !strcmp((const char *)o->data.scalar.value, old))
			set_scalar(o, nb);
	}
	free(old);
}

size_t fuzz_values_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	dict_init();
	uint64_t rs = (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1;
	struct fz_case c;
	char *text = strndup((const char *)data, size);
	fz_case_parse(&c, text, strlen(text));
	free(text);
	yaml_parser_t p;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&p)) {
		fz_case_free(&c);
		return size;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)c.yaml, strlen(c.yaml));
	int ok = yaml_parser_load(&p, &doc);
	yaml_parser_delete(&p);
	yaml_node_t *root = ok ? yaml_document_get_root_node(&doc) : NULL;
	if (!root) {
		if (ok)
			yaml_document_delete(&doc);
		fz_case_free(&c);
		return size;
	}
	struct fz_nodes w = { .doc = &doc, .nn = (size_t)(doc.nodes.top - doc.nodes.start) };
	classify(&w, root);
	size_t *vals = malloc((w.nn + 1) * sizeof *vals), nv = 0;
	size_t *texts = malloc((w.nn + 1) * sizeof *texts), nt = 0;
	for (size_t i = 0; i < w.nn; i++) {
		if (doc.nodes.start[i].type != YAML_SCALAR_NODE)
			continue;
		if (!w.is_key[i])
			vals[nv++] = i;
		if (w.text[i])
			texts[nt++] = i;
	}
	size_t nmut = 1 + fz_below(&rs, 3);
	for (size_t k = 0; k < nmut; k++) {
		/* what to change: a value (most often), a text, a --set, a side file */
		size_t r = fz_below(&rs, 16);
		if (r < 2 && nt) {
			mutate_text(&w, texts[fz_below(&rs, nt)], fz_below(&rs, 4) != 0, &rs);
		} else if (r < 4 || (r < 5 && c.nsets)) {
			mutate_sets(&c, &rs);
		} else if (r < 8 && c.nfiles) {
			mutate_file(&c.files[fz_below(&rs, c.nfiles)], &rs);
		} else if (nv) {
			size_t vi = vals[fz_below(&rs, nv)];
			yaml_node_t *nd = &doc.nodes.start[vi];
			char nb[128];
			mutate_scalar((const char *)nd->data.scalar.value, w.sec_of[vi],
				      w.key_of[vi], &rs, nb, sizeof nb);
			set_scalar(nd, nb);
		}
	}
	free(vals);
	free(texts);
	free(w.is_key);
	free(w.key_of);
	free(w.sec_of);
	free(w.text);
	free(w.in_names);
	yaml_emitter_t em;
	struct outbuf o = { .p = malloc(max_size + 1), .cap = max_size };
	size_t out = size;
	if (yaml_emitter_initialize(&em)) {
		yaml_emitter_set_output(&em, write_out, &o);
		yaml_emitter_set_width(&em, 1000);
		yaml_emitter_set_unicode(&em, 1);
		if (yaml_emitter_open(&em) && yaml_emitter_dump(&em, &doc) &&
		    yaml_emitter_close(&em) && !o.overflow) {
			char *t = fz_case_text(&c, (const char *)o.p, o.n);
			size_t n = strlen(t);
			if (n <= max_size) {
				memcpy(data, t, n);
				out = n;
			}
			free(t);
		}
		yaml_emitter_delete(&em);
	} else {
		yaml_document_delete(&doc);
	}
	free(o.p);
	fz_case_free(&c);
	return out;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	return fuzz_values_mutate(data, size, max_size, seed);
}

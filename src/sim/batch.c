/* batch.c - run one experiment file: its sweep points, results and tables
 * (see batch.h). */
#include "sim/batch.h"
#include "sim/load.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "core/hash.h"
#include "core/mem.h"
#include "io/csv.h"
#include "io/experiment.h"
#include "io/metrics.h"
#include "io/plot.h"
#include "io/report.h"
#include "io/results.h"
#include "io/sweep.h"
#include "sim/part.h"
#include "sim/ranks.h"
#include "sim/threads.h"
#include "sim/run.h"

/* growable text */
struct sbuf {
	char *s;
	size_t n, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		if (b->s && b->n + (size_t)k < b->cap) {
			b->n += (size_t)k;
			return;
		}
		b->cap = (b->cap + (size_t)k + 1) * 2;
		b->s = mp_realloc(b->s, b->cap);
	}
}

/* One point's figures, as the parent learns them. */
struct point_out {
	double m[M_N];
	double wall_s;
	bool ok;
	bool reused;   /* --resume: completed in an earlier run, kept */
	bool in_tmp;   /* reused from a killed run's partial folder: moved in already */
	bool skip;     /* not picked by --only: not run */
	int status;    /* exit status when it failed (0 when ok) */
	char why[120]; /* what happened to a point that is not ok */
};

/* A point's figures in its folder, for --resume, then "files N" and a line
 * per results file of the folder: "file SIZE HASH NAME", its size in bytes and the
 * FNV-1a hash of its bytes, so that --resume keeps a point only while its
 * files are what it wrote. A hash of the bytes is the sturdiest of the cheap
 * checks: it reads each file once (as parsing would) and catches what a
 * parse or a row count misses (a figure changed in place, a row cut at a
 * comma, a file of another run copied over) in every file alike, without
 * knowing their formats. The drawn files (plots/, report.html) are left
 * out: they are drawn again from the rest. */
#define POINT_FILE ".mpsim-point"

/* a file's size and the FNV-1a hash of its bytes; false when it cannot be read */
static bool file_fnv(const char *path, unsigned long long *size, uint64_t *h)
{
	char buf[65536];
	size_t k;
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	*h = MP_FNV_INIT;
	*size = 0;
	while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
		*h = mp_fnv1a(*h, buf, k);
		*size += k;
	}
	bool ok = !ferror(f);
	fclose(f);
	return ok;
}

static int write_point_file(const char *dir, const struct point_out *o)
{
	char path[5000]; /* a point folder (4700) and a file name */
	snprintf(path, sizeof path, "%s/%s", dir, POINT_FILE);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "mpsim-point %d\n", M_N);
	for (int m = 0; m < M_N; m++)
		fprintf(f, "%.17g\n", o->m[m]);
	fprintf(f, "%.17g\n", o->wall_s);
	int rc = 0;
	struct sbuf recs = { 0 };
	size_t nrec = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && !rc && (de = readdir(d)) != NULL) {
		struct stat st;
		unsigned long long size;
		uint64_t h;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (de->d_name[0] == '.' || results_is_drawn(de->d_name) || lstat(path, &st) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (file_fnv(path, &size, &h)) {
			sb_printf(&recs, "file %llu %016llx %s\n", size, (unsigned long long)h,
				  de->d_name);
			nrec++;
		} else {
			rc = -1;
		}
	}
	if (d)
		closedir(d);
	else
		rc = -1;
	fprintf(f, "files %zu\n%s", nrec, recs.s ? recs.s : "");
	mp_free(recs.s);
	return fclose(f) || rc ? -1 : 0;
}

/* Are the results files of point folder dir the bytes its POINT_FILE
 * recorded, every one of the N its "files N" line announced? A point file
 * from before the records (no "files" line) is taken on its word, as it was
 * then, when summary.json and flows.csv are there. */
static bool point_files_ok(const char *dir)
{
	char path[4800], line[600], name[300], file[5200];
	unsigned long long size, fsize, want;
	uint64_t h;
	size_t nrec = 0, nwant = 0;
	bool ok = true, recorded = false;
	snprintf(path, sizeof path, "%s/%s", dir, POINT_FILE);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	while (ok && fgets(line, sizeof line, f)) {
		if (!strncmp(line, "files ", 6)) {
			recorded = sscanf(line, "files %zu", &nwant) == 1;
			continue;
		}
		if (strncmp(line, "file ", 5))
			continue;
		line[strcspn(line, "\n")] = '\0';
		ok = sscanf(line, "file %llu %llx %299[^/]", &size, &want, name) == 3;
		snprintf(file, sizeof file, "%s/%s", dir, name);
		ok = ok && file_fnv(file, &fsize, &h) && fsize == size && h == want;
		nrec++;
	}
	fclose(f);
	if (recorded || nrec)
		return recorded && ok && nrec == nwant;
	struct stat st;
	snprintf(path, sizeof path, "%s/summary.json", dir);
	ok = stat(path, &st) == 0;
	snprintf(path, sizeof path, "%s/flows.csv", dir);
	return ok && stat(path, &st) == 0;
}

static bool read_point_file(const char *dir, struct point_out *o)
{
	char path[4800];
	int nm = 0;
	snprintf(path, sizeof path, "%s/%s", dir, POINT_FILE);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fscanf(f, "mpsim-point %d", &nm) == 1 && nm == M_N;
	for (int m = 0; ok && m < M_N; m++)
		ok = fscanf(f, "%lf", &o->m[m]) == 1;
	ok = ok && fscanf(f, "%lf", &o->wall_s) == 1;
	fclose(f);
	return ok;
}

/* The effective configuration of a loaded point, as config.yaml holds it. */
static char *effective_text(const struct experiment *x, size_t *n)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, n);
	if (!f)
		return NULL;
	exp_write_effective(f, x);
	fclose(f);
	return buf;
}

static uint64_t text_hash(const char *s, size_t n)
{
	return mp_fnv1a(MP_FNV_INIT, s, n);
}

/* Does dir/config.yaml hold exactly this text? */
static bool same_file_text(const char *dir, const char *name, const char *text, size_t n)
{
	char path[4800];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	bool same = true;
	size_t i = 0;
	int c;
	while (same && (c = fgetc(f)) != EOF)
		same = i < n && (char)c == text[i++];
	fclose(f);
	return same && i == n;
}

/* "max_fct_us" */
static void metric_col(int m, char *buf, size_t n)
{
	const char *u = metric_unit((enum metric_id)m);
	snprintf(buf, n, "%s%s%s", metric_defs[m].name, *u ? "_" : "", u);
}

/* Decimals that show about four significant digits of numbers up to |max|,
 * in fixed notation (a table never switches to 1.281e+04 halfway down). */
static int fixed_decimals(double max)
{
	if (!(max > 0) || !isfinite(max))
		return 2;
	int d = 3 - (int)floor(log10(max));
	return d < 0 ? 0 : d > 4 ? 4 : d;
}

static void fmt_metric(int m, double v, char *buf, size_t n)
{
	double d = metric_display((enum metric_id)m, v);
	if (isnan(v))
		snprintf(buf, n, "n/a");
	else
		snprintf(buf, n, "%.*f%s%s", fixed_decimals(fabs(d)), d,
			 *metric_unit((enum metric_id)m) ? " " : "",
			 metric_unit((enum metric_id)m));
}

static void point_values(const struct sweep *sw, size_t p, char *buf, size_t n)
{
	size_t l = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < sw->nkeys && l < n; k++)
		l += (size_t)snprintf(buf + l, n - l, "%s%s=%s", k ? " " : "", sw->keys[k].label,
				      sw->keys[k].values[sweep_value_at(sw, p, k)]);
}

/* pre and then s as one CSV field (io/csv.h) */
static void sb_csv(struct sbuf *b, const char *pre, const char *s, bool always)
{
	char *q = csv_field(s, always);
	sb_printf(b, "%s%s", pre, q);
	mp_free(q);
}

/* paper.csv's last two cells of entry pe at point p: ratio_of, the swept keys
 * a ratio changes as sweep.csv's header names them (one CSV record in one
 * field), and ratio_point, the point it divides by this one (its folder, as
 * sweep.csv's point column names it); both empty for a plain entry. io/plot.c
 * draws a ratio's figure from them. */
static void ratio_cells(const struct sweep *sw, const struct paper_entry *pe, size_t p,
			struct sbuf *csv)
{
	struct sbuf keys = { 0 };
	char other[256] = "";
	size_t q = p;
	for (size_t j = 0; j < pe->nratio; j++) {
		sb_csv(&keys, j ? "," : "", sw->keys[pe->ratio_key[j]].key, false);
		q = sweep_point_with(sw, q, pe->ratio_key[j], pe->ratio_value[j]);
	}
	if (pe->nratio)
		sweep_point_name(sw, q, other, sizeof other);
	sb_csv(csv, ",", keys.s ? keys.s : "", pe->nratio > 0);
	sb_csv(csv, ",", other, pe->nratio > 0);
	mp_free(keys.s);
}

/* paper.csv, and the same as a table on stdout */
static void paper_table(const struct sweep *sw, const struct point_out *po, struct sbuf *csv,
			FILE *out)
{
	sb_printf(csv, "point,metric,unit,paper,ours,ours_over_paper,note,ratio_of,ratio_point\n");
	if (out)
		fprintf(out, "\n  beside the paper: %s\n  %-30s %-14s %12s %12s %8s  %s\n",
			sw->source, "point", "metric", "paper", "ours", "ours/p", "note");
	for (size_t i = 0; i < sw->nentries; i++) {
		const struct paper_entry *pe = &sw->entries[i];
		for (size_t p = 0; p < sw->npoints; p++) {
			if (!sweep_entry_applies(sw, i, p))
				continue;
			char pv[256], ours[64], paper[64], mname[160];
			point_values(sw, p, pv, sizeof pv);
			double v = po[p].ok ? po[p].m[pe->metric] : NAN;
			double shown_paper = metric_display(pe->metric, pe->value);
			const char *unit = metric_unit(pe->metric);
			snprintf(mname, sizeof mname, "%s", metric_defs[pe->metric].name);
			if (pe->nratio) { /* the other point's metric over this one's */
				size_t q = p;
				size_t l = strlen(mname);
				for (size_t j = 0; j < pe->nratio; j++) {
					const struct sweep_key *k = &sw->keys[pe->ratio_key[j]];
					q = sweep_point_with(sw, q, pe->ratio_key[j],
							     pe->ratio_value[j]);
					l += (size_t)snprintf(mname + l, sizeof mname - l,
							      "%s%s=%s", j ? "," : " of ", k->label,
							      k->values[pe->ratio_value[j]]);
				}
				double w = po[q].ok ? po[q].m[pe->metric] : NAN;
				v = w / v;
				shown_paper = pe->value;
				unit = "x";
				snprintf(ours, sizeof ours, "%.3fx", v);
				snprintf(paper, sizeof paper, "%.3fx", pe->value);
			} else {
				fmt_metric(pe->metric, v, ours, sizeof ours);
				fmt_metric(pe->metric, pe->value, paper, sizeof paper);
				v = metric_display(pe->metric, v);
			}
			double ratio = shown_paper != 0 ? v / shown_paper : NAN;
			sb_csv(csv, "", sw->nkeys ? pv : "run", true);
			sb_csv(csv, ",", mname, true);
			sb_printf(csv, ",%s,%.6g,%.6g,%.4g", unit, shown_paper, v, ratio);
			sb_csv(csv, ",", pe->note, true);
			ratio_cells(sw, pe, p, csv);
			sb_printf(csv, "\n");
			if (out)
				fprintf(out, "  %-30s %-14s %12s %12s %8.3f  %s\n",
					sw->nkeys ? pv : "-", mname, paper, ours, ratio, pe->note);
		}
	}
}

/* the columns of the sweep table on stdout */
static const int table_metrics[] = { M_COMPLETED, M_MEAN_FCT,	  M_P99_FCT,
				     M_MAX_FCT,	  M_MAX_SLOWDOWN, M_GOODPUT,
				     M_DROPS,	  M_RETX_BYTES,	  M_PAUSE_FRAMES };

static void sweep_table(const struct sweep *sw, const struct point_out *po, struct sbuf *csv,
			FILE *out)
{
	char col[64];
	sb_printf(csv, "point");
	for (size_t k = 0; k < sw->nkeys; k++)
		sb_csv(csv, ",", sw->keys[k].key, false);
	for (int m = 0; m < M_N; m++) {
		metric_col(m, col, sizeof col);
		sb_printf(csv, ",%s", col);
	}
	sb_printf(csv, ",status,wall_s\n");
	/* one fixed format per printed column, from its largest value */
	int dec[sizeof table_metrics / sizeof *table_metrics];
	for (size_t i = 0; i < sizeof table_metrics / sizeof *table_metrics; i++) {
		double mx = 0;
		for (size_t p = 0; p < sw->npoints; p++)
			if (po[p].ok && isfinite(po[p].m[table_metrics[i]]))
				mx = fmax(mx, fabs(metric_display(table_metrics[i],
								  po[p].m[table_metrics[i]])));
		dec[i] = metric_defs[table_metrics[i]].kind == MK_COUNT ? 0 : fixed_decimals(mx);
	}
	if (out) {
		fprintf(out, "\n  %-30s", "point");
		for (size_t i = 0; i < sizeof table_metrics / sizeof *table_metrics; i++) {
			metric_col(table_metrics[i], col, sizeof col);
			fprintf(out, " %13s", col);
		}
		fprintf(out, "\n");
	}
	for (size_t p = 0; p < sw->npoints; p++) {
		char name[256], pv[256];
		sweep_point_name(sw, p, name, sizeof name);
		point_values(sw, p, pv, sizeof pv);
		sb_csv(csv, "", name, false);
		for (size_t k = 0; k < sw->nkeys; k++)
			sb_csv(csv, ",", sw->keys[k].values[sweep_value_at(sw, p, k)], false);
		for (int m = 0; m < M_N; m++)
			sb_printf(csv, ",%.6g", po[p].ok ? metric_display(m, po[p].m[m]) : NAN);
		/* "ok", or what happened, e.g. "failed: killed by signal 9 (Killed)" */
		sb_csv(csv, ",", po[p].ok ? "ok" : po[p].why, true);
		sb_printf(csv, ",%.2f\n", po[p].wall_s);
		if (!out)
			continue;
		fprintf(out, "  %-30s", pv);
		for (size_t i = 0; i < sizeof table_metrics / sizeof *table_metrics; i++) {
			int m = table_metrics[i];
			double v = po[p].ok ? po[p].m[m] : NAN;
			if (isnan(v))
				fprintf(out, " %13s", "n/a");
			else
				fprintf(out, " %13.*f", dec[i], metric_display(m, v));
		}
		fprintf(out, "\n");
	}
}

/* The figures and report.html of a folder just written (a run, or a sweep's
 * own level: its points drew theirs). Plots need gnuplot; without it the
 * report says how to get them. A failure here (a full disk) leaves the
 * results valid but the command failed: its status (MP_EIO), the results
 * named as complete. */
static int finish_folder(const struct batch_args *a, const char *dir)
{
	struct mp_err e = { 0 };
	char gp[4096];
	int rc = MP_OK;
	bool off = a->no_plots || (getenv("MPSIM_NO_PLOTS") && *getenv("MPSIM_NO_PLOTS"));
	if (!off && plot_have_gnuplot(gp, sizeof gp) && plot_dir(dir, false, &e)) {
		fprintf(stderr,
			"mpsim: plots: %s (the results in %s are complete; `mpsim plot %s` "
			"draws them again)\n",
			e.msg, dir, dir);
		rc = e.status;
	}
	mp_err_clear(&e);
	if (report_dir(dir, &e)) {
		fprintf(stderr, "mpsim: report: %s\n", e.msg);
		rc = rc ? rc : e.status;
	}
	return rc;
}

/* A file without a sweep under mpirun with several ranks: its one run is
 * partitioned over them (sim/part.c); rank 0 writes the results. */
static bool partitioned;

/* The partition's figures for summary.json (rank 0, after part_gather). */
static void part_record(const struct sim *s, struct run_result *r)
{
	const struct part *P = s->part;
	r->part.ranks = (uint32_t)P->nranks;
	r->part.threads = threads_on();
	snprintf(r->part.scheme, sizeof r->part.scheme, "%s", P->scheme);
	r->part.cut_links = P->cut_links;
	r->part.lookahead = P->lookahead;
	r->part.windows = P->windows;
	r->part.lockstep_rounds = P->steps;
	r->part.cut_pkts = P->cut_pkts_all;
	r->part.wait_s = P->wait_s;
}

/* Run point p to completion; write its folder under dir (when dir) and its
 * figures into *po. Returns an exit status. Partitioned, every rank runs
 * it and rank 0 alone collects and writes. */
static int run_point(const struct batch_args *a, const struct sweep *sw, size_t p, const char *dir,
		     bool print, struct point_out *po)
{
	struct experiment x;
	struct mp_err e = { 0 };
	struct sim s;
	int rc = 0;
	double t0 = sim_wall_now();
	if (exp_load_point(&x, a->file, a->sets, a->nsets, a->seed, sw, p, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		exp_free(&x);
		return e.status;
	}
	if (sim_build(&s, &x, &e) || (partitioned && part_setup(&s, &e))) {
		if (!partitioned || !ranks_rank()) /* the same on every rank: said once */
			fprintf(stderr, "mpsim: %s\n", e.msg);
		rc = e.status;
		goto out;
	}
	/* a sweep point's progress line names it; --progress forces plain lines */
	char pname[256] = "";
	if (sw->nkeys) {
		point_values(sw, p, pname, sizeof pname);
		s.progress_label = pname;
	}
	if (a->progress)
		s.show_progress = s.progress_plain = true;
	if (partitioned)
		part_run(&s);
	else
		sim_run(&s);
	if (s.err.status) { /* a limit reached while running: nothing is written */
		fprintf(stderr, "mpsim: %s\n", s.err.msg);
		rc = s.err.status;
		goto out;
	}
	if (partitioned) {
		part_gather(&s);
		if (ranks_rank())
			goto out;
	}
	struct run_result r;
	sim_collect(&s, &r);
	if (partitioned)
		part_record(&s, &r);
	if (print && !a->quiet)
		results_print_table(stdout, &x, &r);
	if (r.ncompleted < r.nflows) {
		char nm[256];
		sweep_point_name(sw, p, nm, sizeof nm);
		fprintf(
		    stderr, "mpsim: warning: %s%s%zu of %zu flows did not complete by %.1f us%s\n",
		    sw->nkeys ? nm : "", sw->nkeys ? ": " : "", r.nflows - r.ncompleted, r.nflows,
		    time_to_us(r.sim_end),
		    r.ts.n ? " (the time series hold the result: timeseries.csv, plots/ts_*)" : "");
	}
	if (r.load.low) {
		char nm[256] = "";
		if (sw->nkeys)
			sweep_point_name(sw, p, nm, sizeof nm);
		sim_load_warn(stderr, &r.load, nm);
	}
	metrics_compute(&r, x.out.convergence_band, x.out.convergence_jain, x.out.settle_queue,
			po->m);
	po->ok = true;
	struct sbuf paper = { 0 };
	if (sw->source && !sw->nkeys) {
		po->wall_s = sim_wall_now() - t0;
		paper_table(sw, po, &paper, print && !a->quiet ? stdout : NULL);
	}
	if (dir && results_write(dir, &x, &r, paper.s, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		rc = e.status;
	} else if (dir) {
		int frc = finish_folder(a, dir);
		rc = rc ? rc : frc;
	}
	mp_free(paper.s);
	run_result_free(&r);
out:
	part_free(&s);
	sim_free(&s);
	exp_free(&x);
	po->wall_s = sim_wall_now() - t0;
	return rc;
}

struct point_hash {
	uint64_t h;
	size_t p;
};

static int cmp_hash(const void *a, const void *b)
{
	const struct point_hash *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return (x->p > y->p) - (x->p < y->p);
}

/* Check every point: load and build, nothing runs. Two points whose effective
 * configurations are equal (64KiB and 65536B) are one run twice: refused. */
static int check_points(const struct batch_args *a, const struct sweep *sw, char *name,
			size_t name_n)
{
	struct sbuf ok = { 0 }; /* validate's lines, printed once every point passed */
	struct mp_err e = { 0 };
	int rc = sweep_check_names(sw, a->file, &e);
	if (rc)
		fprintf(stderr, "mpsim: %s\n", e.msg);
	struct point_hash *ph = sw->nkeys ? mp_calloc(sw->npoints, sizeof *ph) : NULL;
	for (size_t p = 0; p < sw->npoints && !rc; p++) {
		struct experiment x;
		struct sim s;
		mp_err_clear(&e);
		if (exp_load_point(&x, a->file, a->sets, a->nsets, a->seed, sw, p, &e)) {
			fprintf(stderr, "mpsim: %s\n", e.msg);
			exp_free(&x);
			rc = e.status;
			break;
		}
		if (ph) {
			size_t n = 0;
			char *t = effective_text(&x, &n);
			ph[p] = (struct point_hash){ t ? text_hash(t, n) : p, p };
			free(t);
		}
		if (sim_build(&s, &x, &e)) {
			fprintf(stderr, "mpsim: %s\n", e.msg);
			rc = e.status;
		} else if (!a->run) {
			char pv[256];
			point_values(sw, p, pv, sizeof pv);
			/* messages (a plain flow is one) and the connections that
			 * carry them: a collective's queue pairs carry many each */
			sb_printf(&ok,
				  "%s%s%s: ok (%u hosts, %u switches, %u links, %zu flows, "
				  "%u connections)\n",
				  a->file, sw->nkeys ? " " : "", pv, s.fab.nhosts, s.fab.nsws,
				  s.fab.nlinks, s.flows.n, s.w.nconns);
		}
		if (p == 0)
			snprintf(name, name_n, "%s", x.gen.name);
		sim_free(&s);
		exp_free(&x);
	}
	if (!rc && ph) {
		qsort(ph, sw->npoints, sizeof *ph, cmp_hash);
		for (size_t i = 1; i < sw->npoints && !rc; i++) {
			if (ph[i].h != ph[i - 1].h)
				continue;
			size_t p = ph[i - 1].p, q = ph[i].p, k = sweep_key_between(sw, p, q);
			const struct sweep_key *sk = &sw->keys[k];
			size_t va = sweep_value_at(sw, p, k), vb = sweep_value_at(sw, q, k);
			fprintf(stderr,
				"mpsim: %s:%d: sweep.%s: %s '%s' and '%s' make the same "
				"experiment (equal values, or a setting that changes nothing); "
				"expected each point to differ\n",
				a->file, sk->lines[vb], sk->key,
				sk->variants ? "variants" : "values", sk->values[va],
				sk->values[vb]);
			rc = MP_EUSER;
		}
	}
	if (!rc && ok.s)
		fputs(ok.s, stdout);
	mp_free(ok.s);
	mp_free(ph);
	return rc;
}

/* SIGINT/SIGTERM/SIGHUP during a sweep: stop the children; what completed is
 * kept (sweep.csv marks the rest), so --resume carries on */
static volatile sig_atomic_t stop_signal;
static void on_stop(int sig)
{
	stop_signal = sig;
}

static unsigned default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* What a point process's end says, for sweep.csv: code is its exit status
 * (-1 when it did not exit), sig the signal that killed it (0 when none).
 * Returns the exit status the sweep reports for it. */
static int describe_end(int code, int sig, char *why, size_t n)
{
	if (sig) {
		snprintf(why, n, "failed: killed by signal %d (%s)", sig, strsignal(sig));
		return 3;
	}
	int st = code >= 0 ? code : 3;
	const char *what = st == 2   ? "bad input"
			   : st == 3 ? "internal error"
			   : st == 4 ? "results could not be written"
				     : "failed";
	snprintf(why, n, "failed: %s (exit %d)", what, st);
	return st ? st : 3;
}

/* a wait status as (exit code, signal) for describe_end */
static void wait_end(int status, int *code, int *sig)
{
	*sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	*code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
#define NSTOP (sizeof stop_sigs / sizeof *stop_sigs)

/* ---- the dispatch loop ------------------------------------------------------------
 *
 * One loop runs a sweep's points in child processes, `jobs` at a time, each
 * writing its folder (and its figures in POINT_FILE) under one folder, in
 * every way this process takes part in a sweep: alone (-j), as rank 0 of a
 * sweep over MPI ranks, or as another rank. The ways differ only in where a
 * point comes from and where its result goes, and in what a stop signal
 * ends: the ops below. Starting a child, reaping it and the stop signal
 * itself are the loop's. A point that fails does not stop the others.
 */
#define NO_POINT SIZE_MAX

struct dispatch;

/* How a point ended: code and sig as wait_end, or fork_errno when its child
 * could not be started. */
struct point_end {
	int code, sig;
	int fork_errno;
};

struct dispatch_ops {
	/* the next point to start here, now taken; NO_POINT when none is ready */
	size_t (*next)(struct dispatch *d);
	/* point p's child ended (or never started): where its result goes */
	void (*ended)(struct dispatch *d, size_t p, const struct point_end *end);
	/* take the other ranks' messages; true when there were any. NULL alone:
	 * the loop then waits in wait() for its children */
	bool (*talk)(struct dispatch *d);
	/* the first stop signal arrived: true when the loop ends at once */
	bool (*stop)(struct dispatch *d);
	/* with no child running here: is this process's part of the sweep over? */
	bool (*over)(struct dispatch *d);
};

struct dispatch {
	const struct dispatch_ops *ops;
	const struct batch_args *a;
	const struct sweep *sw;
	const char *under;    /* the folder the children write their points in */
	struct point_out *po; /* every point's figures; NULL on a rank other than 0 */
	pid_t *pids;	      /* per point: its running child, or 0 */
	size_t running;	      /* children running */
	size_t next;	      /* the points before it are done or handed out */
	size_t ndone_ok;      /* points completed, for the progress lines */
	unsigned jobs;	      /* children at once */
	int self;	      /* the rank progress lines name, -1 alone */
	int rc;		      /* 0, or the exit status of the first failure */
	pid_t parent;
	struct sigaction old[NSTOP]; /* the handlers before the loop: the children's */
	/* under MPI, rank 0: */
	bool *handed; /* points handed to some rank */
	int byes;     /* the other ranks that ended their part */
	/* under MPI, the other ranks: */
	bool asked;   /* a point is asked for */
	bool over;    /* no point to take any more */
	bool stopped; /* rank 0 stopped the sweep: what ends is not sent */
};

/* Start point p in a child process that writes its folder at dir (and its
 * figures in POINT_FILE). Returns its pid, or -1 with errno saying why. */
static pid_t spawn_point(const struct dispatch *d, size_t p, const char *dir)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
#ifdef __linux__
		/* a sweep that dies takes its children along */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
		if (getppid() != d->parent)
			_exit(3);
		for (size_t i = 0; i < NSTOP; i++)
			sigaction(stop_sigs[i], &d->old[i], NULL);
		struct point_out o = { 0 };
		int st = run_point(d->a, d->sw, p, dir, false, &o);
		if (!st && write_point_file(dir, &o))
			st = 4;
		fflush(NULL);
		_exit(st);
	}
	return pid;
}

/* The parent's side of point p's end, its folder at dir: its figures, or
 * what happened to it. */
static void point_ended(int code, int sig, const char *dir, struct point_out *po)
{
	if (code == 0 && !sig) {
		po->ok = read_point_file(dir, po);
		if (!po->ok) {
			snprintf(po->why, sizeof po->why,
				 "failed: its figures could not be read back");
			po->status = 4;
		}
	} else {
		po->status = describe_end(code, sig, po->why, sizeof po->why);
	}
}

/* The line a finished point gets (on stderr when it failed, --quiet or not);
 * rank >= 0 names the MPI rank that ran it. */
static void point_line(const struct batch_args *a, const struct sweep *sw, size_t p,
		       const struct point_out *po, size_t ndone_ok, int rank)
{
	char pv[256], v[64], on[32] = "";
	point_values(sw, p, pv, sizeof pv);
	if (rank >= 0)
		snprintf(on, sizeof on, ", rank %d", rank);
	if (!po->ok)
		fprintf(stderr, "mpsim: point %s %s%s%s%s\n", pv, po->why, *on ? " (" : "",
			on + (*on ? 2 : 0), *on ? ")" : "");
	if (!a->quiet) {
		fmt_metric(M_MAX_FCT, po->ok ? po->m[M_MAX_FCT] : NAN, v, sizeof v);
		printf("  [%zu/%zu] %s: %s (max FCT %s, %.1f s%s)\n", ndone_ok, sw->npoints, pv,
		       po->ok ? "done" : "FAILED", v, po->wall_s, on);
		fflush(stdout);
	}
}

static void point_dir(const struct sweep *sw, size_t p, const char *under, char *dir, size_t n)
{
	char name[SWEEP_NAME_MAX + 2];
	sweep_point_name(sw, p, name, sizeof name);
	snprintf(dir, n, "%s/%s", under, name);
}

/* The reap step: point p ended (code, sig as wait_end) with its folder at
 * dir, run here or by rank: its figures or what happened, the tally and its
 * line (rank as point_line). */
static void point_reap(struct dispatch *d, size_t p, const char *dir, int code, int sig, int rank)
{
	struct point_out *po = &d->po[p];
	point_ended(code, sig, dir, po);
	if (po->ok)
		d->ndone_ok++;
	else if (!d->rc)
		d->rc = po->status;
	point_line(d->a, d->sw, p, po, d->ndone_ok, rank);
}

/* After a stop signal: the points that did not complete and were not
 * reported otherwise are "not run". */
static void mark_interrupted(const struct sweep *sw, struct point_out *po)
{
	for (size_t p = 0; p < sw->npoints; p++)
		if (!po[p].ok && !po[p].status && !po[p].skip) {
			snprintf(po[p].why, sizeof po[p].why,
				 "not run: the sweep was interrupted by signal %d (%s)",
				 (int)stop_signal, strsignal(stop_signal));
			po[p].status = 128 + stop_signal;
		}
}

/* Start point p here; one that cannot start has ended at once. */
static void start_point(struct dispatch *d, size_t p)
{
	char dir[4700];
	point_dir(d->sw, p, d->under, dir, sizeof dir);
	pid_t pid = spawn_point(d, p, dir);
	if (pid < 0) {
		struct point_end end = { .code = -1, .fork_errno = errno };
		d->ops->ended(d, p, &end);
		return;
	}
	d->pids[p] = pid;
	d->running++;
}

/* Child pid ended with wait status: true when it ran a point, whose end
 * goes where the ops say. */
static bool child_ended(struct dispatch *d, pid_t pid, int status)
{
	size_t p = 0;
	while (p < d->sw->npoints && d->pids[p] != pid)
		p++;
	if (p == d->sw->npoints)
		return false;
	d->pids[p] = 0;
	d->running--;
	struct point_end end = { 0 };
	wait_end(status, &end.code, &end.sig);
	d->ops->ended(d, p, &end);
	return true;
}

/* Reap the children that ended. Alone, wait for one (nothing else can
 * happen meanwhile; a stop signal interrupts the wait); with other ranks,
 * take those that ended without waiting. Sets *busy when something
 * happened; false when there is no child to wait for. */
static bool reap_children(struct dispatch *d, bool *busy)
{
	int status;
	pid_t pid;
	if (!d->ops->talk) {
		*busy = true;
		pid = wait(&status);
		if (pid > 0)
			child_ended(d, pid, status);
		return pid > 0 || errno == EINTR;
	}
	while (d->running && (pid = waitpid(-1, &status, WNOHANG)) > 0)
		*busy |= child_ended(d, pid, status);
	return true;
}

/* Tell every running child to stop. */
static void end_children(struct dispatch *d)
{
	for (size_t p = 0; p < d->sw->npoints; p++)
		if (d->pids[p] > 0)
			kill(d->pids[p], SIGTERM);
}

static void nap(void)
{
	struct timespec ts = { 0, RANKS_POLL_US * 1000L };
	nanosleep(&ts, NULL);
}

/* The loop: start points while a slot is free, reap them, take the other
 * ranks' messages, until this process's part is over or a stop signal ends
 * it. With the sweep's table here, what a stop left is marked "not run".
 * Returns 0, the status of the first failure, or 128 + the signal that
 * interrupted the sweep. */
static int dispatch_run(struct dispatch *d)
{
	bool stopping = false;
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &sa, &d->old[i]);
	fflush(stdout);
	for (;;) {
		bool busy = false;
		size_t p;
		if (stop_signal && !stopping) {
			stopping = true;
			if (d->ops->stop(d))
				break;
		}
		while (d->running < d->jobs && !stop_signal && (p = d->ops->next(d)) != NO_POINT) {
			start_point(d, p);
			busy = true;
		}
		if (!d->running && d->ops->over(d))
			break;
		if (!reap_children(d, &busy))
			break;
		if (d->ops->talk && d->ops->talk(d))
			busy = true;
		if (!busy)
			nap();
	}
	if (stop_signal && d->po) {
		mark_interrupted(d->sw, d->po);
		d->rc = 128 + stop_signal;
	}
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &d->old[i], NULL);
	return d->rc;
}

/* ---- alone (-j) ----------------------------------------------------------------------
 *
 * The points come from the sweep's table in order, skipping those done
 * (--resume); a point's result goes into the table and its progress line. */

/* the next point from d->next on that is neither done nor handed out */
static size_t next_point(struct dispatch *d)
{
	size_t p = d->next;
	while (p < d->sw->npoints && (d->po[p].ok || d->po[p].skip || (d->handed && d->handed[p])))
		p++;
	d->next = p;
	return p;
}

/* Take the next point (handed out, under MPI); NO_POINT when none is left. */
static size_t take_point(struct dispatch *d)
{
	size_t p = next_point(d);
	if (p == d->sw->npoints)
		return NO_POINT;
	if (d->handed)
		d->handed[p] = true;
	d->next = p + 1;
	return p;
}

/* A point run here ended: reaped into the table. */
static void own_ended(struct dispatch *d, size_t p, const struct point_end *end)
{
	char dir[4700];
	if (end->fork_errno) {
		snprintf(d->po[p].why, sizeof d->po[p].why, "failed: fork: %s",
			 strerror(end->fork_errno));
		d->po[p].status = 3;
		if (!d->rc)
			d->rc = 3;
		return;
	}
	point_dir(d->sw, p, d->under, dir, sizeof dir);
	point_reap(d, p, dir, end->code, end->sig, d->self);
}

/* Stop at once: end the children and wait for them; what completed is kept. */
static bool stop_now(struct dispatch *d)
{
	end_children(d);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return true;
}

static bool no_point_left(struct dispatch *d)
{
	return next_point(d) == d->sw->npoints;
}

static const struct dispatch_ops local_ops = {
	.next = take_point,
	.ended = own_ended,
	.stop = stop_now,
	.over = no_point_left,
};

/* ---- a sweep over MPI ranks ------------------------------------------------------
 *
 * `mpirun -n N mpsim run FILE`: rank 0 owns the results folder (the partial
 * folder, --resume, sweep.csv, the manifest and the final rename) and hands
 * out the points one at a time to whichever rank asks, itself included:
 * point costs differ fifty-fold within one figure, so a static stripe would
 * leave ranks idle behind the slowest. Each rank runs its points as -j does,
 * in child processes (-j N of them at once per rank, 1 by default). A rank
 * other than 0 writes a point into a scratch folder of its own machine and
 * sends the folder's bytes to rank 0, which writes them under the partial
 * folder exactly where a local child would have: no shared file system is
 * assumed for the results (the experiment file and any file it names must be
 * readable at the same path on every rank, as the mpsim binary is).
 *
 * Messages: a rank asks (TAG_ASK) when it has a free slot; rank 0 answers
 * with a point, WORK_NONE (no point left: finish and say goodbye) or
 * WORK_STOP (the sweep was interrupted: stop the points and say goodbye). A
 * finished point is TAG_DONE: {point, exit code, signal} and the folder's
 * bytes. TAG_BYE ends a rank's part. MPI keeps the order of one sender's
 * messages, so a rank's points are all in before its goodbye.
 */
enum { TAG_ASK = 1, TAG_WORK, TAG_DONE, TAG_BYE };
#define WORK_NONE (-1)
#define WORK_STOP (-2)

/* Rank 0: a point another rank ran (TAG_DONE: its end, then its folder's
 * bytes) is written where a local child would have written it, then
 * reaped. */
static void root_received(struct dispatch *d, int src)
{
	size_t n = 0;
	int64_t *h = ranks_recv(src, TAG_DONE, &n);
	char *bytes = ranks_recv(src, TAG_DONE, &n);
	size_t p = (size_t)h[0];
	struct mp_err e = { 0 };
	char dir[4700];
	MP_ASSERT(p < d->sw->npoints && d->handed[p]);
	point_dir(d->sw, p, d->under, dir, sizeof dir);
	if (n && results_unpack(dir, bytes, n, &e))
		fprintf(stderr, "mpsim: point from rank %d: %s\n", src, e.msg);
	point_reap(d, p, dir, (int)h[1], (int)h[2], src);
	mp_free(h);
	mp_free(bytes);
}

/* Rank 0: answer the asks with points, take the points run elsewhere and
 * the goodbyes. */
static bool root_talk(struct dispatch *d)
{
	bool busy = false;
	int src, tag;
	while (ranks_probe(&src, &tag)) {
		size_t n = 0;
		busy = true;
		if (tag == TAG_ASK) {
			mp_free(ranks_recv(src, tag, &n));
			size_t p = take_point(d);
			ranks_post(src, TAG_WORK, p == NO_POINT ? WORK_NONE : (int64_t)p);
		} else if (tag == TAG_DONE) {
			root_received(d, src);
		} else {
			mp_free(ranks_recv(src, tag, &n));
			d->byes += tag == TAG_BYE;
		}
	}
	return busy;
}

/* Rank 0 stops at once: what completed is written first, at once: mpirun
 * gives its ranks a second (odls_base_sigkill_timeout) after its TERM
 * before it kills them; the ranks are told to stop, and their goodbyes are
 * taken after the commit (ranks_drain). */
static bool root_stop(struct dispatch *d)
{
	stop_now(d);
	for (int r = 1; r < ranks_size(); r++)
		ranks_post(r, TAG_WORK, WORK_STOP);
	return true;
}

/* Rank 0 is done when every point is and every other rank said goodbye. */
static bool root_over(struct dispatch *d)
{
	return d->byes == ranks_size() - 1 && no_point_left(d);
}

static const struct dispatch_ops root_ops = {
	.next = take_point,
	.ended = own_ended,
	.talk = root_talk,
	.stop = root_stop,
	.over = root_over,
};

/* Rank 0 after an interrupted sweep's commit: take every message until each
 * other rank said goodbye (a point it still reports comes too late). */
static void ranks_drain(int byes)
{
	while (byes < ranks_size() - 1) {
		int src, tag;
		size_t n;
		if (!ranks_probe(&src, &tag)) {
			nap();
			continue;
		}
		if (tag == TAG_DONE) /* its header, then its folder */
			mp_free(ranks_recv(src, tag, &n));
		mp_free(ranks_recv(src, tag, &n));
		byes += tag == TAG_BYE;
	}
}

/* Another rank: a point comes from rank 0, asked for with a slot free; the
 * answer arrives in rank_talk, which starts it. */
static size_t rank_next(struct dispatch *d)
{
	if (!d->asked && !d->over) {
		ranks_send(0, TAG_ASK, NULL, 0);
		d->asked = true;
	}
	return NO_POINT;
}

/* Another rank: a point's end, and its folder's bytes, go to rank 0 (a
 * point that could not start as an internal error); the scratch folder is
 * emptied. */
static void rank_ended(struct dispatch *d, size_t p, const struct point_end *end)
{
	char dir[4700], *bytes = NULL;
	size_t n = 0;
	int code = end->code;
	struct mp_err e = { 0 };
	struct stat st;
	if (end->fork_errno) {
		int64_t h[3] = { (int64_t)p, 3, 0 };
		ranks_send(0, TAG_DONE, h, sizeof h);
		ranks_send(0, TAG_DONE, NULL, 0);
		return;
	}
	point_dir(d->sw, p, d->under, dir, sizeof dir);
	if (d->stopped) { /* rank 0 has written the sweep without it */
		results_discard(dir);
		return;
	}
	if (stat(dir, &st) == 0 && results_pack(dir, &bytes, &n, &e)) {
		fprintf(stderr, "mpsim: rank %d: %s\n", ranks_rank(), e.msg);
		if (!code && !end->sig)
			code = 4;
	}
	int64_t h[3] = { (int64_t)p, code, end->sig };
	ranks_send(0, TAG_DONE, h, sizeof h);
	ranks_send(0, TAG_DONE, bytes, n);
	mp_free(bytes);
	results_discard(dir);
}

/* Another rank: rank 0's answers. A point is started, or, when this rank
 * is stopping, reported as -j would report it; WORK_NONE and WORK_STOP end
 * the taking. */
static bool rank_talk(struct dispatch *d)
{
	bool busy = false;
	int src, tag;
	while (ranks_probe(&src, &tag)) {
		busy = true;
		if (tag != TAG_WORK) { /* nothing else comes to this rank */
			size_t n;
			mp_free(ranks_recv(src, tag, &n));
			continue;
		}
		int64_t v = ranks_take(src, tag);
		d->asked = false;
		if (v == WORK_STOP) { /* rank 0 was interrupted */
			d->stopped = true;
			if (!d->over)
				end_children(d);
		}
		if (v >= 0 && d->over) { /* this rank is stopping: said as -j would */
			int64_t h[3] = { v, -1, stop_signal ? stop_signal : SIGTERM };
			ranks_send(0, TAG_DONE, h, sizeof h);
			ranks_send(0, TAG_DONE, NULL, 0);
		}
		if (v < 0 || d->over) {
			d->over = true;
			continue;
		}
		start_point(d, (size_t)v);
	}
	return busy;
}

/* Another rank's own stop signal: take no more points, end the children and
 * report them as they end. */
static bool rank_stop(struct dispatch *d)
{
	if (!d->over) {
		d->over = true;
		end_children(d);
	}
	return false;
}

static bool rank_over(struct dispatch *d)
{
	return d->over;
}

static const struct dispatch_ops rank_ops = {
	.next = rank_next,
	.ended = rank_ended,
	.talk = rank_talk,
	.stop = rank_stop,
	.over = rank_over,
};

/* Rank 0 or alone: run every point not already done (po[p].ok), the
 * children writing their folders under tmp; under MPI, with the other
 * ranks as further slots, *byes their goodbyes. Returns as dispatch_run. */
static int run_points(const struct batch_args *a, const struct sweep *sw, const char *tmp,
		      struct point_out *po, bool mpi, int *byes)
{
	struct dispatch d = {
		.ops = mpi ? &root_ops : &local_ops,
		.a = a,
		.sw = sw,
		.under = tmp,
		.po = po,
		.jobs = a->jobs ? a->jobs
			: mpi	? 1
				: default_jobs(),
		.self = mpi ? 0 : -1,
		.parent = getpid(),
	};
	d.pids = mp_calloc(sw->npoints, sizeof *d.pids);
	d.handed = mpi ? mp_calloc(sw->npoints, sizeof *d.handed) : NULL;
	for (size_t p = 0; p < sw->npoints; p++)
		d.ndone_ok += po[p].ok;
	int rc = dispatch_run(&d);
	*byes = d.byes;
	mp_free(d.handed);
	mp_free(d.pids);
	return rc;
}

/* Any other rank: ask for points, run them in a scratch folder, send each
 * folder to rank 0. Returns 0, or an exit status when its scratch folder
 * cannot be made. */
static int run_points_rank(const struct batch_args *a, const struct sweep *sw)
{
	char scratch[4200];
	const char *td = getenv("TMPDIR");
	struct dispatch d = {
		.ops = &rank_ops,
		.a = a,
		.sw = sw,
		.under = scratch,
		.jobs = a->jobs ? a->jobs : 1,
		.self = ranks_rank(),
		.parent = getpid(),
	};
	snprintf(scratch, sizeof scratch, "%s/mpsim-rank%d-XXXXXX", td && *td ? td : "/tmp",
		 ranks_rank());
	if (!mkdtemp(scratch)) {
		fprintf(stderr, "mpsim: rank %d: cannot create a scratch folder '%s': %s\n",
			ranks_rank(), scratch, strerror(errno));
		d.over = true; /* takes no point, says goodbye */
		d.rc = 4;
	}
	d.pids = mp_calloc(sw->npoints, sizeof *d.pids);
	int rc = dispatch_run(&d);
	ranks_send(0, TAG_BYE, NULL, 0);
	if (!rc) /* with what a killed point left half-written in it */
		results_discard(scratch);
	mp_free(d.pids);
	return rc;
}

/* Did point p complete in folder dir with the same effective configuration,
 * and are its files still what it wrote (point_files_ok)? Then *o holds its
 * figures. */
static bool point_complete(const struct batch_args *a, const struct sweep *sw, size_t p,
			   const char *dir, struct point_out *o)
{
	memset(o, 0, sizeof *o);
	if (!read_point_file(dir, o))
		return false;
	struct experiment x;
	struct mp_err e = { 0 };
	bool same = false;
	if (!exp_load_point(&x, a->file, a->sets, a->nsets, a->seed, sw, p, &e)) {
		size_t n = 0;
		char *t = effective_text(&x, &n);
		same = t && same_file_text(dir, "config.yaml", t, n);
		free(t);
	}
	exp_free(&x);
	return same && point_files_ok(dir);
}

/* --resume: the points of an earlier run of this sweep in outdir that
 * completed with the same effective configuration, their files intact, are
 * kept (po[p].ok and reused); a damaged one runs again. Returns how many. */
static size_t resume_points(const struct batch_args *a, const struct sweep *sw, const char *outdir,
			    struct point_out *po)
{
	size_t kept = 0;
	for (size_t p = 0; p < sw->npoints; p++) {
		char dir[4700];
		struct point_out o;
		point_dir(sw, p, outdir, dir, sizeof dir);
		if (!point_complete(a, sw, p, dir, &o))
			continue;
		o.ok = o.reused = true;
		po[p] = o;
		kept++;
	}
	return kept;
}

/* --resume after a sweep whose parent was killed (SIGKILL) before it could
 * commit: the completed points of its partial folder (results_stale: its
 * process is gone) that outdir does not hold already move into this run's
 * tmp, then the folder is removed. */
struct adopt {
	const struct batch_args *a;
	const struct sweep *sw;
	const char *tmp;
	struct point_out *po;
	size_t kept;
};

static void adopt_stale(const char *stale, void *arg)
{
	struct adopt *ad = arg;
	for (size_t p = 0; p < ad->sw->npoints; p++) {
		char from[4700], to[4700];
		struct point_out o;
		if (ad->po[p].ok)
			continue;
		point_dir(ad->sw, p, stale, from, sizeof from);
		point_dir(ad->sw, p, ad->tmp, to, sizeof to);
		if (!point_complete(ad->a, ad->sw, p, from, &o) || rename(from, to) != 0)
			continue;
		o.ok = o.reused = o.in_tmp = true;
		ad->po[p] = o;
		ad->kept++;
	}
	results_discard(stale);
}

/* a file's bytes, hashed (0 when it cannot be read) */
static uint64_t file_hash(const char *path)
{
	unsigned long long size;
	uint64_t h;
	return file_fnv(path, &size, &h) ? h : 0;
}

/* Under MPI, before anything runs: did every rank read the same file and
 * parse it alike (lrc, with e)? Prints what went wrong once and returns the
 * exit status every rank shares (0: go on). */
static int ranks_agree(const struct batch_args *a, int lrc, const struct mp_err *e)
{
	int rank = ranks_rank();
	uint64_t h = file_hash(a->file);
	int64_t v[4] = { lrc, (int64_t)h, (int64_t)~h, rank == 0 ? lrc : -1 };
	ranks_allmax(v, 4);
	if (v[3]) { /* rank 0's own error: said once, by rank 0 */
		if (!rank)
			fprintf(stderr, "mpsim: %s\n", e->msg);
		return (int)v[3];
	}
	if (v[0]) { /* what only another machine sees (a file missing there) */
		char host[256] = "?";
		gethostname(host, sizeof host);
		host[sizeof host - 1] = '\0';
		if (lrc)
			fprintf(stderr, "mpsim: rank %d on %s: %s\n", rank, host, e->msg);
		return (int)v[0];
	}
	if (v[1] != (int64_t)h || v[2] != (int64_t)~h) {
		if (!rank)
			fprintf(stderr,
				"mpsim: %s: the MPI ranks read different contents at this path; "
				"expected the same experiment file on every machine\n",
				a->file);
		return MP_EUSER;
	}
	return 0;
}

/* Read the file's sweep; under MPI every rank reads it and they agree that
 * they read the same bytes. Prints what went wrong; returns the exit
 * status. */
static int load_sweep(const struct batch_args *a, bool mpi, struct sweep *sw)
{
	struct cfg_doc doc;
	struct mp_err e = { 0 };
	memset(sw, 0, sizeof *sw);
	int rc = cfg_load_file(a->file, &doc, &e);
	if (!rc) {
		rc = sweep_parse(sw, &doc, a->sets, a->nsets, &e);
		cfg_free(&doc);
	}
	if (mpi)
		rc = ranks_agree(a, rc, &e);
	else if (rc)
		fprintf(stderr, "mpsim: %s\n", e.msg);
	return rc;
}

/* --resume without a sweep: does outdir hold the complete results
 * (summary.json) of this effective configuration? */
static bool single_complete(const struct experiment *x, const char *outdir)
{
	size_t n = 0;
	char *t = effective_text(x, &n);
	struct stat st;
	char sum[4200];
	snprintf(sum, sizeof sum, "%s/summary.json", outdir);
	bool done = t && stat(sum, &st) == 0 && same_file_text(outdir, "config.yaml", t, n);
	free(t);
	return done;
}

/* Partitioned, rank 0 tells the other ranks whether the run goes ahead
 * once its results folder is ready: 0 go, -1 nothing to run (--resume),
 * else the exit status. Returns st. */
static int part_go(int st)
{
	if (partitioned) {
		int64_t v = st;
		ranks_bcast(&v, sizeof v);
	}
	return st;
}

/* A rank other than 0 of a partitioned run: rank 0's go, then its share of
 * the run. */
static int part_rank(const struct batch_args *a, const struct sweep *sw)
{
	int64_t v = 0;
	struct point_out po = { 0 };
	ranks_bcast(&v, sizeof v);
	if (v)
		return v < 0 ? 0 : (int)v;
	return run_point(a, sw, 0, NULL, false, &po);
}

/* A run without a sweep, checked as it is built: its results folder
 * (kept by --resume when complete), the run, its summary table. */
static int run_single(const struct batch_args *a, const struct sweep *sw, struct point_out *po)
{
	struct experiment x;
	struct mp_err e = { 0 };
	char given[4400], outdir[4096];
	if (exp_load(&x, a->file, a->sets, a->nsets, a->seed, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		exp_free(&x);
		return part_go(e.status);
	}
	snprintf(given, sizeof given, "%s%s", a->out ? "" : "results/",
		 a->out ? a->out : x.gen.name);
	bool done = !results_resolve(given, outdir, sizeof outdir, &e) && a->resume &&
		    single_complete(&x, outdir);
	exp_free(&x);
	if (e.status || results_prepare(outdir, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		return part_go(e.status);
	}
	if (done) {
		if (!a->quiet)
			printf("  results in %s/ are complete (--resume)\n", outdir);
		part_go(-1);
		return 0;
	}
	part_go(0);
	int rc = run_point(a, sw, 0, outdir, true, &po[0]);
	if (!rc && !a->quiet)
		printf("\n  results in %s/ (open %s/report.html)\n", outdir, outdir);
	return rc;
}

/* --resume: the points an earlier run left complete in outdir, and those a
 * killed run left in its partial folder (moved into tmp). Returns how
 * many. */
static size_t resume_sweep(const struct batch_args *a, const struct sweep *sw, const char *outdir,
			   const char *tmp, struct point_out *po)
{
	size_t kept = resume_points(a, sw, outdir, po);
	struct adopt ad = { a, sw, tmp, po, 0 };
	results_stale(outdir, adopt_stale, &ad);
	return kept + ad.kept;
}

/* The sweep's first line: its points and how many run at once. */
static void sweep_announce(const struct batch_args *a, const struct sweep *sw, const char *name,
			   size_t kept, size_t left, bool mpi)
{
	if (a->quiet)
		return;
	if (mpi)
		printf("%s: %zu points over %d MPI ranks, %u at a time on each", name, sw->npoints,
		       ranks_size(), a->jobs ? a->jobs : 1);
	else
		printf("%s: %zu points, %u at a time", name, sw->npoints,
		       a->jobs ? a->jobs : default_jobs());
	if (a->resume)
		printf(" (%zu kept from the earlier run)", kept);
	if (a->nonly)
		printf("; --only: %zu of them left to run", left);
	printf("\n");
}

/* The points --resume kept in outdir move into tmp (those of a killed
 * run's partial folder are there already). */
static int adopt_kept(const struct sweep *sw, const struct point_out *po, const char *outdir,
		      const char *tmp, struct mp_err *e)
{
	for (size_t p = 0; p < sw->npoints; p++) {
		char pn[SWEEP_NAME_MAX + 2];
		sweep_point_name(sw, p, pn, sizeof pn);
		if (po[p].reused && !po[p].in_tmp && results_adopt(outdir, tmp, pn, e))
			return e->status;
	}
	return 0;
}

/* After the points (rc their status): the kept points moved in, sweep.csv
 * and paper.csv written and printed, the partial folder tmp renamed to
 * outdir and its figures drawn, what did not complete said. Nothing is
 * written when no point completed. Returns the sweep's exit status. */
static int commit_sweep(const struct batch_args *a, const struct sweep *sw,
			const struct point_out *po, const char *outdir, const char *tmp, int rc)
{
	struct mp_err e = { 0 };
	size_t nok = 0;
	for (size_t p = 0; p < sw->npoints; p++)
		nok += po[p].ok;
	if (!nok) {
		results_discard(tmp);
		fprintf(stderr, "mpsim: no point of the sweep completed; nothing was written\n");
		return rc;
	}
	if (adopt_kept(sw, po, outdir, tmp, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		results_discard(tmp);
		return e.status;
	}
	struct sbuf sc = { 0 }, pc = { 0 };
	sweep_table(sw, po, &sc, a->quiet ? NULL : stdout);
	if (sw->source)
		paper_table(sw, po, &pc, a->quiet ? NULL : stdout);
	int wrc = 0;
	if (results_write_text(tmp, "sweep.csv", sc.s, &e) ||
	    (sw->source && results_write_text(tmp, "paper.csv", pc.s, &e)) ||
	    results_commit(tmp, outdir, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		results_discard(tmp);
		wrc = e.status;
	} else {
		wrc = finish_folder(a, outdir);
		size_t nskip = 0;
		for (size_t p = 0; p < sw->npoints; p++)
			nskip += po[p].skip;
		if (nskip && !a->quiet)
			printf(
			    "\n  %zu of %zu points were not picked by --only and are not in %s/ "
			    "(sweep.csv marks them): `mpsim run %s --out %s --resume` adds them\n",
			    nskip, sw->npoints, outdir, a->file, outdir);
		if (rc)
			fprintf(stderr,
				"mpsim: %zu of %zu points did not complete (sweep.csv says why); "
				"the others are in %s/, and `mpsim run %s --out %s --resume` runs "
				"only what is missing\n",
				sw->npoints - nok - nskip, sw->npoints, outdir, a->file, outdir);
		else if (!a->quiet)
			printf("\n  results in %s/ (report.html, sweep.csv,%s a folder per "
			       "point)\n",
			       outdir, sw->source ? " paper.csv," : "");
	}
	mp_free(sc.s);
	mp_free(pc.s);
	return wrc ? wrc : rc;
}

/* A sweep, by rank 0 or alone (its points checked): its partial folder
 * and what --resume keeps, its points (under MPI after rank 0's go to the
 * other ranks, whose goodbyes are taken after the commit), then the
 * commit. Returns the sweep's exit status. */
static int run_sweep(const struct batch_args *a, const struct sweep *sw, const char *name,
		     struct point_out *po, const bool *pick, bool mpi)
{
	char given[4400], outdir[4096], tmp[4400];
	struct mp_err e = { 0 };
	int byes = 0;
	snprintf(given, sizeof given, "%s%s", a->out ? "" : "results/", a->out ? a->out : name);
	if (results_resolve(given, outdir, sizeof outdir, &e) ||
	    results_tmpdir(outdir, tmp, sizeof tmp, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		MP_ASSERT(e.status); /* under MPI, the other ranks' "no go" */
		return e.status;
	}
	size_t kept = a->resume ? resume_sweep(a, sw, outdir, tmp, po) : 0;
	size_t left = 0;
	for (size_t p = 0; p < sw->npoints; p++) {
		if (!pick[p] && !po[p].ok) {
			po[p].skip = true;
			snprintf(po[p].why, sizeof po[p].why, "not run: not picked by --only");
		}
		left += !po[p].ok && !po[p].skip;
	}
	sweep_announce(a, sw, name, kept, left, mpi);
	if (mpi) {
		int64_t go = 0;
		ranks_bcast(&go, sizeof go);
	}
	int rc = run_points(a, sw, tmp, po, mpi, &byes);
	rc = commit_sweep(a, sw, po, outdir, tmp, rc);
	if (mpi)
		ranks_drain(byes);
	return rc;
}

/* A rank other than 0 in a sweep: wait for rank 0's go (its checks of the
 * file, the results folder and --resume), take points, then share the
 * sweep's exit status. */
static int batch_rank(const struct batch_args *a, const struct sweep *sw)
{
	int64_t go = 0, fin = 0;
	ranks_bcast(&go, sizeof go);
	if (go)
		return (int)go;
	int rc = run_points_rank(a, sw);
	ranks_bcast(&fin, sizeof fin);
	return fin ? (int)fin : rc;
}

/* --only KEY=VALUE...: pick[p] says whether point p runs. KEY is a swept key
 * (dotted, or its label); VALUE one of its values as the file spells it.
 * Anything else is an error before anything runs: MP_EUSER and a sentence. */
static int only_pick(const struct batch_args *a, const struct sweep *sw, bool *pick)
{
	for (size_t p = 0; p < sw->npoints; p++)
		pick[p] = true;
	if (!a->nonly)
		return 0;
	if (!sw->nkeys) {
		fprintf(stderr, "mpsim: --only: %s has no sweep; --only picks a sweep's points\n",
			a->file);
		return MP_EUSER;
	}
	bool **want = mp_calloc(sw->nkeys, sizeof *want);
	int rc = 0;
	for (size_t i = 0; i < a->nonly && !rc; i++) {
		const char *arg = a->only[i], *eq = strchr(arg, '=');
		size_t k = 0, v = 0, kl = eq ? (size_t)(eq - arg) : 0;
		while (eq && k < sw->nkeys &&
		       !((strlen(sw->keys[k].key) == kl && !strncmp(sw->keys[k].key, arg, kl)) ||
			 (strlen(sw->keys[k].label) == kl && !strncmp(sw->keys[k].label, arg, kl))))
			k++;
		if (!eq || k == sw->nkeys) {
			fprintf(
			    stderr,
			    "mpsim: --only %s: expected KEY=VALUE with KEY one of the swept keys "
			    "of %s:",
			    arg, a->file);
			for (size_t j = 0; j < sw->nkeys; j++)
				fprintf(stderr, "%s %s (line %d)", j ? "," : "", sw->keys[j].key,
					sw->keys[j].line);
			fputc('\n', stderr);
			rc = MP_EUSER;
			break;
		}
		const struct sweep_key *sk = &sw->keys[k];
		while (v < sk->nvalues && strcmp(sk->values[v], eq + 1))
			v++;
		if (v == sk->nvalues) {
			fprintf(stderr,
				"mpsim: --only %s: %s:%d: %s has no value '%s' (its values:", arg,
				a->file, sk->line, sk->key, eq + 1);
			for (size_t j = 0; j < sk->nvalues; j++)
				fprintf(stderr, "%s %s", j ? "," : "", sk->values[j]);
			fputs(")\n", stderr);
			rc = MP_EUSER;
			break;
		}
		if (!want[k])
			want[k] = mp_calloc(sk->nvalues, sizeof *want[k]);
		want[k][v] = true;
	}
	for (size_t p = 0; p < sw->npoints && !rc; p++)
		for (size_t k = 0; k < sw->nkeys; k++)
			if (want[k] && !want[k][sweep_value_at(sw, p, k)])
				pick[p] = false;
	for (size_t k = 0; k < sw->nkeys; k++)
		mp_free(want[k]);
	mp_free(want);
	return rc;
}

/* Rank 0, or alone: check the points (validate stops there), then the
 * single run or the sweep. Under MPI the other ranks wait for rank 0's go
 * or its end: a failure before the go is their status too, and so is the
 * sweep's. */
static int batch_here(const struct batch_args *a, const struct sweep *sw, bool mpi)
{
	char name[256] = "experiment";
	struct point_out *po = mp_calloc(sw->npoints, sizeof *po);
	bool *pick = mp_calloc(sw->npoints, sizeof *pick);
	int rc = only_pick(a, sw, pick);
	/* a single run is checked as it is built; a sweep checks every point first */
	if (!rc && (sw->nkeys || !a->run))
		rc = check_points(a, sw, name, sizeof name);
	if (!rc && a->run)
		rc = sw->nkeys ? run_sweep(a, sw, name, po, pick, mpi) : run_single(a, sw, po);
	mp_free(pick);
	if (mpi) {
		int64_t v = rc;
		ranks_bcast(&v, sizeof v);
	}
	mp_free(po);
	return rc;
}

struct part_job {
	const struct batch_args *a;
	const struct sweep *sw;
};

/* One rank of a partitioned run (an MPI rank, or a thread of `--threads N`):
 * rank 0 does what a lone process does, the others run their partitions;
 * all exit with the worst status. */
static int partition_rank(void *arg, int rank)
{
	const struct part_job *j = arg;
	int rc = rank ? part_rank(j->a, j->sw) : batch_here(j->a, j->sw, false);
	int64_t v = rc;
	ranks_allmax(&v, 1);
	return (int)v;
}

/* `--threads N`: a file without a sweep, its one run partitioned over N
 * threads of this process (sim/threads.c) as it would be over N ranks. */
static int batch_threads(const struct batch_args *a)
{
	if (ranks_active() && ranks_size() > 1) {
		fprintf(stderr, "mpsim: --threads: expected a run by one process; under mpirun "
				"the run is partitioned over the ranks already\n");
		return MP_EUSER;
	}
	struct sweep sw;
	int rc = load_sweep(a, false, &sw);
	if (!rc && sw.nkeys) {
		fprintf(stderr,
			"mpsim: --threads: %s has a sweep; --threads partitions one run, and a "
			"sweep's points run side by side with --jobs\n",
			a->file);
		rc = MP_EUSER;
	}
	if (!rc) {
		struct part_job j = { a, &sw };
		partitioned = true;
		rc = threads_run((int)a->threads, partition_rank, &j);
		partitioned = false;
	}
	sweep_free(&sw);
	return rc;
}

int batch_main(const struct batch_args *a)
{
	if (a->threads > 1 && a->run)
		return batch_threads(a);
	struct sweep sw;
	/* under mpirun with several ranks: a sweep's points spread over them;
	 * validate and a run without a sweep are rank 0's alone */
	bool mpi = ranks_active() && ranks_size() > 1;
	if (mpi && !a->run) {
		if (ranks_rank())
			return 0;
		mpi = false;
	}
	int rc = load_sweep(a, mpi, &sw);
	if (rc) {
		sweep_free(&sw);
		return rc;
	}
	if (mpi && !sw.nkeys) { /* one run, partitioned over the ranks */
		struct part_job j = { a, &sw };
		partitioned = true;
		rc = partition_rank(&j, ranks_rank());
		sweep_free(&sw);
		return rc;
	}
	rc = mpi && ranks_rank() ? batch_rank(a, &sw) : batch_here(a, &sw, mpi);
	sweep_free(&sw);
	return rc;
}

/* batch.c - run one experiment file: its sweep points, results and tables
 * (see batch.h). */
#include "sim/batch.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/mem.h"
#include "io/experiment.h"
#include "io/metrics.h"
#include "io/plot.h"
#include "io/report.h"
#include "io/results.h"
#include "io/sweep.h"
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

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One point's figures, as the parent learns them. */
struct point_out {
	double m[M_N];
	double wall_s;
	bool ok;
};

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

/* paper.csv, and the same as a table on stdout */
static void paper_table(const struct sweep *sw, const struct point_out *po, struct sbuf *csv,
			FILE *out)
{
	sb_printf(csv, "point,metric,unit,paper,ours,ours_over_paper,note\n");
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
			sb_printf(csv, "\"%s\",\"%s\",%s,%.6g,%.6g,%.4g,\"%s\"\n",
				  sw->nkeys ? pv : "run", mname, unit, shown_paper, v, ratio,
				  pe->note);
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
		sb_printf(csv, ",%s", sw->keys[k].key);
	for (int m = 0; m < M_N; m++) {
		metric_col(m, col, sizeof col);
		sb_printf(csv, ",%s", col);
	}
	sb_printf(csv, ",wall_s\n");
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
		sb_printf(csv, "%s", name);
		for (size_t k = 0; k < sw->nkeys; k++)
			sb_printf(csv, ",%s", sw->keys[k].values[sweep_value_at(sw, p, k)]);
		for (int m = 0; m < M_N; m++)
			sb_printf(csv, ",%.6g", po[p].ok ? metric_display(m, po[p].m[m]) : NAN);
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
 * report says how to get them. A failure here leaves the results valid: a
 * warning, not an error. */
static void finish_folder(const struct batch_args *a, const char *dir)
{
	struct mp_err e = { 0 };
	char gp[4096];
	bool off = a->no_plots || (getenv("MPSIM_NO_PLOTS") && *getenv("MPSIM_NO_PLOTS"));
	if (!off && plot_have_gnuplot(gp, sizeof gp) && plot_dir(dir, false, &e))
		fprintf(stderr, "mpsim: warning: plots: %s\n", e.msg);
	mp_err_clear(&e);
	if (report_dir(dir, &e))
		fprintf(stderr, "mpsim: warning: report: %s\n", e.msg);
}

/* Run point p to completion; write its folder under dir (when dir) and its
 * figures into *po. Returns an exit status. */
static int run_point(const struct batch_args *a, const struct sweep *sw, size_t p, const char *dir,
		     bool print, struct point_out *po)
{
	struct experiment x;
	struct mp_err e = { 0 };
	struct sim s;
	int rc = 0;
	double t0 = wall_now();
	if (exp_load_point(&x, a->file, a->sets, a->nsets, a->seed, sw, p, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		exp_free(&x);
		return e.status;
	}
	if (sim_build(&s, &x, &e)) {
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
	sim_run(&s);
	struct run_result r;
	sim_collect(&s, &r);
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
	metrics_compute(&r, x.out.convergence_band, x.out.settle_queue, po->m);
	po->ok = true;
	struct sbuf paper = { 0 };
	if (sw->source && !sw->nkeys) {
		po->wall_s = wall_now() - t0;
		paper_table(sw, po, &paper, print && !a->quiet ? stdout : NULL);
	}
	if (dir && results_write(dir, &x, &r, paper.s, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		rc = e.status;
	} else if (dir) {
		finish_folder(a, dir);
	}
	mp_free(paper.s);
	run_result_free(&r);
out:
	sim_free(&s);
	exp_free(&x);
	po->wall_s = wall_now() - t0;
	return rc;
}

/* Check every point: load and build, nothing runs. */
static int check_points(const struct batch_args *a, const struct sweep *sw, char *name,
			size_t name_n)
{
	struct sbuf ok = { 0 }; /* validate's lines, printed once every point passed */
	int rc = 0;
	for (size_t p = 0; p < sw->npoints && !rc; p++) {
		struct experiment x;
		struct mp_err e = { 0 };
		struct sim s;
		if (exp_load_point(&x, a->file, a->sets, a->nsets, a->seed, sw, p, &e)) {
			fprintf(stderr, "mpsim: %s\n", e.msg);
			exp_free(&x);
			rc = e.status;
			break;
		}
		if (sim_build(&s, &x, &e)) {
			fprintf(stderr, "mpsim: %s\n", e.msg);
			rc = e.status;
		} else if (!a->run) {
			char pv[256];
			point_values(sw, p, pv, sizeof pv);
			sb_printf(&ok, "%s%s%s: ok (%u hosts, %u switches, %u links, %u flows)\n",
				  a->file, sw->nkeys ? " " : "", pv, s.fab.nhosts, s.fab.nsws,
				  s.fab.nlinks, s.w.nconns);
		}
		if (p == 0)
			snprintf(name, name_n, "%s", x.gen.name);
		sim_free(&s);
		exp_free(&x);
	}
	if (!rc && ok.s)
		fputs(ok.s, stdout);
	mp_free(ok.s);
	return rc;
}

/* SIGINT/SIGTERM during a sweep: stop the children and leave no folder */
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

/* Run every point; children write their folders under tmp and their figures
 * into tmp/.point-N. */
static int run_points(const struct batch_args *a, const struct sweep *sw, const char *tmp,
		      struct point_out *po)
{
	unsigned jobs = a->jobs ? a->jobs : default_jobs();
	size_t next = 0, done = 0, running = 0;
	pid_t *pids = mp_calloc(sw->npoints, sizeof *pids);
	int rc = 0;
	struct sigaction sa = { .sa_handler = on_stop }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	fflush(stdout);
	while (done < sw->npoints && !stop_signal) {
		while (running < jobs && next < sw->npoints && !rc) {
			char dir[4400], name[256];
			sweep_point_name(sw, next, name, sizeof name);
			snprintf(dir, sizeof dir, "%s/%s", tmp, name);
			pid_t pid = fork();
			if (pid < 0) {
				fprintf(stderr, "mpsim: fork: %s\n", strerror(errno));
				rc = 3;
				break;
			}
			if (pid == 0) {
				sigaction(SIGINT, &old_int, NULL);
				sigaction(SIGTERM, &old_term, NULL);
				struct point_out o = { 0 };
				int st = run_point(a, sw, next, dir, false, &o);
				if (!st) {
					char path[4200];
					snprintf(path, sizeof path, "%s/.point-%zu", tmp, next);
					FILE *f = fopen(path, "w");
					if (!f)
						_exit(4);
					for (int m = 0; m < M_N; m++)
						fprintf(f, "%.17g\n", o.m[m]);
					fprintf(f, "%.17g\n", o.wall_s);
					if (fclose(f))
						_exit(4);
				}
				fflush(NULL);
				_exit(st);
			}
			pids[next++] = pid;
			running++;
		}
		if (!running)
			break;
		int status;
		pid_t pid = wait(&status);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		size_t p = 0;
		while (p < sw->npoints && pids[p] != pid)
			p++;
		if (p == sw->npoints)
			continue;
		pids[p] = -1;
		running--;
		done++;
		int st = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
		char path[4200], pv[256];
		snprintf(path, sizeof path, "%s/.point-%zu", tmp, p);
		FILE *f = st ? NULL : fopen(path, "r");
		if (f) {
			bool ok = true;
			for (int m = 0; m < M_N; m++)
				ok &= fscanf(f, "%lf", &po[p].m[m]) == 1;
			ok &= fscanf(f, "%lf", &po[p].wall_s) == 1;
			po[p].ok = ok;
			fclose(f);
			remove(path);
			if (!ok)
				st = 4;
		} else if (!st) {
			st = 4;
		}
		if (st && !rc)
			rc = st;
		point_values(sw, p, pv, sizeof pv);
		if (!a->quiet) {
			char v[64];
			fmt_metric(M_MAX_FCT, po[p].ok ? po[p].m[M_MAX_FCT] : NAN, v, sizeof v);
			printf("  [%zu/%zu] %s: %s (max FCT %s, %.1f s)\n", done, sw->npoints, pv,
			       st ? "FAILED" : "done", v, po[p].wall_s);
			fflush(stdout);
		}
	}
	if (stop_signal) {
		for (size_t p = 0; p < next; p++)
			if (pids[p] > 0)
				kill(pids[p], SIGTERM);
		while (wait(NULL) > 0 || errno == EINTR)
			;
		rc = 128 + stop_signal;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	mp_free(pids);
	return rc;
}

int batch_main(const struct batch_args *a)
{
	struct cfg_doc doc;
	struct mp_err e = { 0 };
	struct sweep sw;
	int rc = 0;
	memset(&sw, 0, sizeof sw);
	if (cfg_load_file(a->file, &doc, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		return e.status;
	}
	rc = sweep_parse(&sw, &doc, a->sets, a->nsets, &e);
	cfg_free(&doc);
	if (rc) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		sweep_free(&sw);
		return e.status;
	}
	char name[256] = "experiment", outdir[4096], tmp[4096];
	struct point_out *po = mp_calloc(sw.npoints, sizeof *po);
	/* a single run is checked as it is built; a sweep checks every point first */
	if (sw.nkeys || !a->run) {
		rc = check_points(a, &sw, name, sizeof name);
		if (rc || !a->run)
			goto out;
	}
	if (!sw.nkeys) {
		struct experiment x;
		if (exp_load(&x, a->file, a->sets, a->nsets, a->seed, &e)) {
			fprintf(stderr, "mpsim: %s\n", e.msg);
			exp_free(&x);
			rc = e.status;
			goto out;
		}
		if (a->out)
			snprintf(outdir, sizeof outdir, "%s", a->out);
		else
			snprintf(outdir, sizeof outdir, "results/%s", x.gen.name);
		exp_free(&x);
		if (results_prepare(outdir, &e)) {
			fprintf(stderr, "mpsim: %s\n", e.msg);
			rc = e.status;
			goto out;
		}
		rc = run_point(a, &sw, 0, outdir, true, &po[0]);
		if (!rc && !a->quiet)
			printf("\n  results in %s/ (open %s/report.html)\n", outdir, outdir);
		goto out;
	}
	if (a->out)
		snprintf(outdir, sizeof outdir, "%s", a->out);
	else
		snprintf(outdir, sizeof outdir, "results/%s", name);
	if (results_tmpdir(outdir, tmp, sizeof tmp, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		rc = e.status;
		goto out;
	}
	if (!a->quiet)
		printf("%s: %zu points, %u at a time\n", name, sw.npoints,
		       a->jobs ? a->jobs : default_jobs());
	rc = run_points(a, &sw, tmp, po);
	if (rc) {
		results_discard(tmp);
		goto out;
	}
	struct sbuf sc = { 0 }, pc = { 0 };
	sweep_table(&sw, po, &sc, a->quiet ? NULL : stdout);
	if (sw.source)
		paper_table(&sw, po, &pc, a->quiet ? NULL : stdout);
	if (results_write_text(tmp, "sweep.csv", sc.s, &e) ||
	    (sw.source && results_write_text(tmp, "paper.csv", pc.s, &e)) ||
	    results_commit(tmp, outdir, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		results_discard(tmp);
		rc = e.status;
	} else {
		finish_folder(a, outdir);
		if (!a->quiet)
			printf("\n  results in %s/ (report.html, sweep.csv,%s a folder per "
			       "point)\n",
			       outdir, sw.source ? " paper.csv," : "");
	}
	mp_free(sc.s);
	mp_free(pc.s);
out:
	mp_free(po);
	sweep_free(&sw);
	return rc;
}

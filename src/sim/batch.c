/* batch.c - run one experiment file: its sweep points, results and tables
 * (see batch.h). */
#include "sim/batch.h"
#include "sim/load.h"

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
#include "io/experiment.h"
#include "io/metrics.h"
#include "io/plot.h"
#include "io/report.h"
#include "io/results.h"
#include "io/sweep.h"
#include "sim/ranks.h"
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
	int status;    /* exit status when it failed (0 when ok) */
	char why[120]; /* what happened to a point that is not ok */
};

/* A point's figures in its folder, for --resume. */
#define POINT_FILE ".mpsim-point"

static int write_point_file(const char *dir, const struct point_out *o)
{
	char path[4800];
	snprintf(path, sizeof path, "%s/%s", dir, POINT_FILE);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "mpsim-point %d\n", M_N);
	for (int m = 0; m < M_N; m++)
		fprintf(f, "%.17g\n", o->m[m]);
	fprintf(f, "%.17g\n", o->wall_s);
	return fclose(f) ? -1 : 0;
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
		sb_printf(csv, "%s", name);
		for (size_t k = 0; k < sw->nkeys; k++)
			sb_printf(csv, ",%s", sw->keys[k].values[sweep_value_at(sw, p, k)]);
		for (int m = 0; m < M_N; m++)
			sb_printf(csv, ",%.6g", po[p].ok ? metric_display(m, po[p].m[m]) : NAN);
		/* "ok", or what happened, e.g. "failed: killed by signal 9 (Killed)" */
		sb_printf(csv, ",\"%s\",%.2f\n", po[p].ok ? "ok" : po[p].why, po[p].wall_s);
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
	double t0 = sim_wall_now();
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
		finish_folder(a, dir);
	}
	mp_free(paper.s);
	run_result_free(&r);
out:
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

/* Start point p in a child process that writes its folder at dir (and its
 * figures in POINT_FILE). Returns its pid, or -1 with *po saying why. */
static pid_t spawn_point(const struct batch_args *a, const struct sweep *sw, size_t p,
			 const char *dir, pid_t parent, const struct sigaction *old,
			 struct point_out *po)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(po->why, sizeof po->why, "failed: fork: %s", strerror(errno));
		po->status = 3;
		return -1;
	}
	if (pid == 0) {
#ifdef __linux__
		/* a sweep that dies takes its children along */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
		if (getppid() != parent)
			_exit(3);
		for (size_t i = 0; i < NSTOP; i++)
			sigaction(stop_sigs[i], &old[i], NULL);
		struct point_out o = { 0 };
		int st = run_point(a, sw, p, dir, false, &o);
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

/* Point p's process ended with status: its result, the tally and its line
 * (rank as point_line). */
static void point_reaped(const struct batch_args *a, const struct sweep *sw, size_t p,
			 const char *tmp, int status, struct point_out *po, size_t *ndone_ok,
			 int *rc, int rank)
{
	int code, sig;
	char dir[4700];
	point_dir(sw, p, tmp, dir, sizeof dir);
	wait_end(status, &code, &sig);
	point_ended(code, sig, dir, &po[p]);
	if (po[p].ok)
		(*ndone_ok)++;
	else if (!*rc)
		*rc = po[p].status;
	point_line(a, sw, p, &po[p], *ndone_ok, rank);
}

/* After a stop signal: the points that did not complete and were not
 * reported otherwise are "not run". */
static void mark_interrupted(const struct sweep *sw, struct point_out *po)
{
	for (size_t p = 0; p < sw->npoints; p++)
		if (!po[p].ok && !po[p].status) {
			snprintf(po[p].why, sizeof po[p].why,
				 "not run: the sweep was interrupted by signal %d (%s)",
				 (int)stop_signal, strsignal(stop_signal));
			po[p].status = 128 + stop_signal;
		}
}

/* Run every point not already done (po[p].ok); children write their folders
 * under tmp, each with its figures in POINT_FILE. A point that fails does not
 * stop the others. Returns 0, the status of the first failure, or 128 + the
 * signal that interrupted the sweep. */
static int run_points(const struct batch_args *a, const struct sweep *sw, const char *tmp,
		      struct point_out *po)
{
	unsigned jobs = a->jobs ? a->jobs : default_jobs();
	size_t next = 0, done = 0, running = 0, todo = 0, ndone_ok = 0;
	pid_t *pids = mp_calloc(sw->npoints, sizeof *pids);
	int rc = 0;
	pid_t parent = getpid();
	struct sigaction sa = { .sa_handler = on_stop }, old[NSTOP];
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &sa, &old[i]);
	for (size_t p = 0; p < sw->npoints; p++)
		todo += !po[p].ok;
	for (size_t p = 0; p < sw->npoints; p++)
		ndone_ok += po[p].ok;
	fflush(stdout);
	while (done < todo && !stop_signal) {
		while (running < jobs && next < sw->npoints && !stop_signal) {
			if (po[next].ok) { /* kept from an earlier run */
				next++;
				continue;
			}
			char dir[4700];
			point_dir(sw, next, tmp, dir, sizeof dir);
			pid_t pid = spawn_point(a, sw, next, dir, parent, old, &po[next]);
			if (pid < 0) {
				if (!rc)
					rc = 3;
				next++;
				done++;
				continue;
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
		point_reaped(a, sw, p, tmp, status, po, &ndone_ok, &rc, -1);
	}
	if (stop_signal) {
		for (size_t p = 0; p < next; p++)
			if (pids[p] > 0)
				kill(pids[p], SIGTERM);
		while (wait(NULL) > 0 || errno == EINTR)
			;
		mark_interrupted(sw, po);
		rc = 128 + stop_signal;
	}
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &old[i], NULL);
	mp_free(pids);
	return rc;
}

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

static void nap(void)
{
	struct timespec ts = { 0, RANKS_POLL_US * 1000L };
	nanosleep(&ts, NULL);
}

/* the next point from p on that is neither done nor handed out */
static size_t next_point(const struct sweep *sw, const struct point_out *po, const bool *handed,
			 size_t p)
{
	while (p < sw->npoints && (po[p].ok || handed[p]))
		p++;
	return p;
}

/* Rank 0's side: like run_points, with the other ranks as further slots. */
static int run_points_root(const struct batch_args *a, const struct sweep *sw, const char *tmp,
			   struct point_out *po, int *byes)
{
	unsigned jobs = a->jobs ? a->jobs : 1;
	int nranks = ranks_size(), rc = 0;
	size_t next = 0, running = 0, ndone_ok = 0;
	pid_t *pids = mp_calloc(sw->npoints, sizeof *pids);
	bool *handed = mp_calloc(sw->npoints, sizeof *handed);
	pid_t parent = getpid();
	struct sigaction sa = { .sa_handler = on_stop }, old[NSTOP];
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &sa, &old[i]);
	for (size_t p = 0; p < sw->npoints; p++)
		ndone_ok += po[p].ok;
	fflush(stdout);
	for (;;) {
		bool busy = false;
		if (stop_signal) {
			/* what completed is written first, at once: mpirun gives
			 * its ranks a second (odls_base_sigkill_timeout) after its
			 * TERM before it kills them; the ranks are told to stop, and
			 * their goodbyes are taken after the commit (ranks_drain) */
			for (size_t p = 0; p < sw->npoints; p++)
				if (pids[p] > 0)
					kill(pids[p], SIGTERM);
			while (wait(NULL) > 0 || errno == EINTR)
				;
			for (int r = 1; r < nranks; r++)
				ranks_post(r, TAG_WORK, WORK_STOP);
			break;
		}
		while (running < jobs && (next = next_point(sw, po, handed, next)) < sw->npoints) {
			char dir[4700];
			point_dir(sw, next, tmp, dir, sizeof dir);
			handed[next] = true;
			pid_t pid = spawn_point(a, sw, next, dir, parent, old, &po[next]);
			if (pid < 0) {
				if (!rc)
					rc = 3;
				continue;
			}
			pids[next] = pid;
			running++;
			busy = true;
		}
		int status, src, tag;
		pid_t pid;
		while (running && (pid = waitpid(-1, &status, WNOHANG)) > 0) {
			size_t p = 0;
			while (p < sw->npoints && pids[p] != pid)
				p++;
			if (p == sw->npoints)
				continue;
			pids[p] = -1;
			running--;
			busy = true;
			point_reaped(a, sw, p, tmp, status, po, &ndone_ok, &rc, 0);
		}
		while (ranks_probe(&src, &tag)) {
			size_t n = 0;
			busy = true;
			if (tag == TAG_ASK) {
				mp_free(ranks_recv(src, tag, &n));
				next = next_point(sw, po, handed, next);
				if (next == sw->npoints) {
					ranks_post(src, TAG_WORK, WORK_NONE);
				} else {
					handed[next] = true;
					ranks_post(src, TAG_WORK, (int64_t)next);
				}
			} else if (tag == TAG_DONE) {
				int64_t *h = ranks_recv(src, tag, &n);
				char *bytes = ranks_recv(src, tag, &n);
				size_t p = (size_t)h[0];
				struct mp_err e = { 0 };
				char dir[4700];
				MP_ASSERT(p < sw->npoints && handed[p]);
				point_dir(sw, p, tmp, dir, sizeof dir);
				if (n && results_unpack(dir, bytes, n, &e))
					fprintf(stderr, "mpsim: point from rank %d: %s\n", src,
						e.msg);
				point_ended((int)h[1], (int)h[2], dir, &po[p]);
				if (po[p].ok)
					ndone_ok++;
				else if (!rc)
					rc = po[p].status;
				point_line(a, sw, p, &po[p], ndone_ok, src);
				mp_free(h);
				mp_free(bytes);
			} else {
				mp_free(ranks_recv(src, tag, &n));
				*byes += tag == TAG_BYE;
			}
		}
		if (!running && *byes == nranks - 1 &&
		    next_point(sw, po, handed, next) == sw->npoints)
			break;
		if (!busy)
			nap();
	}
	if (stop_signal) {
		mark_interrupted(sw, po);
		rc = 128 + stop_signal;
	}
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &old[i], NULL);
	mp_free(handed);
	mp_free(pids);
	return rc;
}

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

/* Any other rank's side: ask for points, run them in a scratch folder, send
 * each folder to rank 0. Returns 0, or an exit status when its scratch
 * folder cannot be made. */
static int run_points_rank(const struct batch_args *a, const struct sweep *sw)
{
	unsigned jobs = a->jobs ? a->jobs : 1;
	pid_t *pids = mp_calloc(jobs, sizeof *pids);
	size_t *pts = mp_calloc(jobs, sizeof *pts), running = 0;
	bool asked = false, over = false, stopped = false;
	int rc = 0;
	pid_t parent = getpid();
	char scratch[4200];
	const char *td = getenv("TMPDIR");
	snprintf(scratch, sizeof scratch, "%s/mpsim-rank%d-XXXXXX", td && *td ? td : "/tmp",
		 ranks_rank());
	if (!mkdtemp(scratch)) {
		fprintf(stderr, "mpsim: rank %d: cannot create a scratch folder '%s': %s\n",
			ranks_rank(), scratch, strerror(errno));
		over = true; /* takes no point, says goodbye */
		rc = 4;
	}
	struct sigaction sa = { .sa_handler = on_stop }, old[NSTOP];
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &sa, &old[i]);
	for (;;) {
		bool busy = false;
		int src, tag, status;
		if ((stop_signal || stopped) && !over) {
			over = true;
			for (size_t j = 0; j < jobs; j++)
				if (pids[j] > 0)
					kill(pids[j], SIGTERM);
		}
		if (!asked && !over && running < jobs) {
			ranks_send(0, TAG_ASK, NULL, 0);
			asked = true;
		}
		while (ranks_probe(&src, &tag)) {
			busy = true;
			if (tag != TAG_WORK) { /* nothing else comes to this rank */
				size_t n;
				mp_free(ranks_recv(src, tag, &n));
				continue;
			}
			int64_t v = ranks_take(src, tag);
			asked = false;
			if (v == WORK_STOP) { /* rank 0 was interrupted */
				stopped = true;
				if (!over)
					for (size_t j = 0; j < jobs; j++)
						if (pids[j] > 0)
							kill(pids[j], SIGTERM);
			}
			if (v >= 0 && over) { /* this rank is stopping: said as -j would */
				int64_t h[3] = { v, -1, stop_signal ? stop_signal : SIGTERM };
				ranks_send(0, TAG_DONE, h, sizeof h);
				ranks_send(0, TAG_DONE, NULL, 0);
			}
			if (v < 0 || over) {
				over = true;
				continue;
			}
			size_t j = 0;
			while (pids[j] > 0)
				j++;
			char dir[4700];
			struct point_out o = { 0 };
			point_dir(sw, (size_t)v, scratch, dir, sizeof dir);
			pid_t pid = spawn_point(a, sw, (size_t)v, dir, parent, old, &o);
			if (pid < 0) { /* reported as an internal error */
				int64_t h[3] = { v, 3, 0 };
				ranks_send(0, TAG_DONE, h, sizeof h);
				ranks_send(0, TAG_DONE, NULL, 0);
				continue;
			}
			pids[j] = pid;
			pts[j] = (size_t)v;
			running++;
		}
		pid_t pid;
		while (running && (pid = waitpid(-1, &status, WNOHANG)) > 0) {
			size_t j = 0;
			while (j < jobs && pids[j] != pid)
				j++;
			if (j == jobs)
				continue;
			pids[j] = 0;
			running--;
			busy = true;
			int code, sig;
			wait_end(status, &code, &sig);
			if (stopped) { /* rank 0 has written the sweep without it */
				char dir[4700];
				point_dir(sw, pts[j], scratch, dir, sizeof dir);
				results_discard(dir);
				continue;
			}
			char dir[4700], *bytes = NULL;
			size_t n = 0;
			struct mp_err e = { 0 };
			point_dir(sw, pts[j], scratch, dir, sizeof dir);
			struct stat st;
			if (stat(dir, &st) == 0 && results_pack(dir, &bytes, &n, &e)) {
				fprintf(stderr, "mpsim: rank %d: %s\n", ranks_rank(), e.msg);
				if (!code && !sig)
					code = 4;
			}
			int64_t h[3] = { (int64_t)pts[j], code, sig };
			ranks_send(0, TAG_DONE, h, sizeof h);
			ranks_send(0, TAG_DONE, bytes, n);
			mp_free(bytes);
			results_discard(dir);
		}
		if (over && !running)
			break;
		if (!busy)
			nap();
	}
	ranks_send(0, TAG_BYE, NULL, 0);
	if (!rc) /* with what a killed point left half-written in it */
		results_discard(scratch);
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &old[i], NULL);
	mp_free(pts);
	mp_free(pids);
	return rc;
}

/* --resume: the points of an earlier run of this sweep in outdir that
 * completed with the same effective configuration are kept (po[p].ok and
 * reused); returns how many. */
static size_t resume_points(const struct batch_args *a, const struct sweep *sw, const char *outdir,
			    struct point_out *po)
{
	size_t kept = 0;
	for (size_t p = 0; p < sw->npoints; p++) {
		char dir[4700], name[SWEEP_NAME_MAX + 2];
		sweep_point_name(sw, p, name, sizeof name);
		snprintf(dir, sizeof dir, "%s/%s", outdir, name);
		struct point_out o = { 0 };
		if (!read_point_file(dir, &o))
			continue;
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
		if (!same)
			continue;
		o.ok = o.reused = true;
		po[p] = o;
		kept++;
	}
	return kept;
}

/* a file's bytes, hashed (0 when it cannot be read) */
static uint64_t file_hash(const char *path)
{
	uint64_t h = MP_FNV_INIT;
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	int c;
	while ((c = fgetc(f)) != EOF) {
		unsigned char b = (unsigned char)c;
		h = mp_fnv1a(h, &b, 1);
	}
	fclose(f);
	return h;
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

int batch_main(const struct batch_args *a)
{
	struct cfg_doc doc;
	struct mp_err e = { 0 };
	struct sweep sw;
	int rc = 0;
	/* under mpirun with several ranks: a sweep's points spread over them;
	 * validate and a run without a sweep are rank 0's alone */
	bool mpi = ranks_active() && ranks_size() > 1, go_sent = false;
	int byes = 0; /* the other ranks that ended their part of the sweep */
	if (mpi && !a->run) {
		if (ranks_rank())
			return 0;
		mpi = false;
	}
	memset(&sw, 0, sizeof sw);
	rc = cfg_load_file(a->file, &doc, &e);
	if (!rc) {
		rc = sweep_parse(&sw, &doc, a->sets, a->nsets, &e);
		cfg_free(&doc);
	}
	if (mpi)
		rc = ranks_agree(a, rc, &e);
	else if (rc)
		fprintf(stderr, "mpsim: %s\n", e.msg);
	if (rc) {
		sweep_free(&sw);
		return rc;
	}
	if (mpi && !sw.nkeys) {
		if (!ranks_rank())
			fprintf(stderr,
				"mpsim: note: %s has no sweep: it runs on rank 0 alone, the other "
				"%d rank%s nothing to do (one experiment over several ranks "
				"is not built)\n",
				a->file, ranks_size() - 1, ranks_size() > 2 ? "s have" : " has");
		if (ranks_rank()) {
			sweep_free(&sw);
			return 0;
		}
		mpi = false;
	}
	if (mpi && ranks_rank()) {
		rc = batch_rank(a, &sw);
		sweep_free(&sw);
		return rc;
	}
	char name[256] = "experiment", given[4400], outdir[4096], tmp[4400];
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
		snprintf(given, sizeof given, "%s%s", a->out ? "" : "results/",
			 a->out ? a->out : x.gen.name);
		bool done = false;
		if (!results_resolve(given, outdir, sizeof outdir, &e) && a->resume) {
			size_t n = 0;
			char *t = effective_text(&x, &n);
			struct stat st;
			char sum[4200];
			snprintf(sum, sizeof sum, "%s/summary.json", outdir);
			done =
			    t && stat(sum, &st) == 0 && same_file_text(outdir, "config.yaml", t, n);
			free(t);
		}
		exp_free(&x);
		if (e.status || results_prepare(outdir, &e)) {
			fprintf(stderr, "mpsim: %s\n", e.msg);
			rc = e.status;
			goto out;
		}
		if (done) {
			if (!a->quiet)
				printf("  results in %s/ are complete (--resume)\n", outdir);
			goto out;
		}
		rc = run_point(a, &sw, 0, outdir, true, &po[0]);
		if (!rc && !a->quiet)
			printf("\n  results in %s/ (open %s/report.html)\n", outdir, outdir);
		goto out;
	}
	snprintf(given, sizeof given, "%s%s", a->out ? "" : "results/", a->out ? a->out : name);
	if (results_resolve(given, outdir, sizeof outdir, &e) ||
	    results_tmpdir(outdir, tmp, sizeof tmp, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		rc = e.status;
		goto out;
	}
	size_t kept = a->resume ? resume_points(a, &sw, outdir, po) : 0;
	if (!a->quiet) {
		if (mpi)
			printf("%s: %zu points over %d MPI ranks, %u at a time on each", name,
			       sw.npoints, ranks_size(), a->jobs ? a->jobs : 1);
		else
			printf("%s: %zu points, %u at a time", name, sw.npoints,
			       a->jobs ? a->jobs : default_jobs());
		if (a->resume)
			printf(" (%zu kept from the earlier run)", kept);
		printf("\n");
	}
	if (mpi) {
		int64_t go = 0;
		ranks_bcast(&go, sizeof go);
		go_sent = true;
		rc = run_points_root(a, &sw, tmp, po, &byes);
	} else {
		rc = run_points(a, &sw, tmp, po);
	}
	size_t nok = 0;
	for (size_t p = 0; p < sw.npoints; p++)
		nok += po[p].ok;
	if (!nok) {
		results_discard(tmp);
		fprintf(stderr, "mpsim: no point of the sweep completed; nothing was written\n");
		goto out;
	}
	for (size_t p = 0; p < sw.npoints; p++) {
		char pn[SWEEP_NAME_MAX + 2];
		sweep_point_name(&sw, p, pn, sizeof pn);
		if (po[p].reused && results_adopt(outdir, tmp, pn, &e)) {
			fprintf(stderr, "mpsim: %s\n", e.msg);
			results_discard(tmp);
			rc = e.status;
			goto out;
		}
	}
	struct sbuf sc = { 0 }, pc = { 0 };
	sweep_table(&sw, po, &sc, a->quiet ? NULL : stdout);
	if (sw.source)
		paper_table(&sw, po, &pc, a->quiet ? NULL : stdout);
	int wrc = 0;
	if (results_write_text(tmp, "sweep.csv", sc.s, &e) ||
	    (sw.source && results_write_text(tmp, "paper.csv", pc.s, &e)) ||
	    results_commit(tmp, outdir, &e)) {
		fprintf(stderr, "mpsim: %s\n", e.msg);
		results_discard(tmp);
		wrc = e.status;
	} else {
		finish_folder(a, outdir);
		if (rc)
			fprintf(stderr,
				"mpsim: %zu of %zu points did not complete (sweep.csv says why); "
				"the others are in %s/, and `mpsim run %s --out %s --resume` runs "
				"only what is missing\n",
				sw.npoints - nok, sw.npoints, outdir, a->file, outdir);
		else if (!a->quiet)
			printf("\n  results in %s/ (report.html, sweep.csv,%s a folder per "
			       "point)\n",
			       outdir, sw.source ? " paper.csv," : "");
	}
	if (wrc)
		rc = wrc;
	mp_free(sc.s);
	mp_free(pc.s);
out:
	if (mpi) { /* the other ranks wait for rank 0's go, or its end */
		int64_t v = rc;
		MP_ASSERT(go_sent || rc);
		if (go_sent)
			ranks_drain(byes);
		ranks_bcast(&v, sizeof v);
	}
	mp_free(po);
	sweep_free(&sw);
	return rc;
}

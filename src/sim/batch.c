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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

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
	uint64_t h = 14695981039346656037ull; /* FNV-1a, 64 bits */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
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
	metrics_compute(&r, x.out.convergence_band, x.out.convergence_jain, x.out.settle_queue,
			po->m);
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

/* What a child's wait status says, for sweep.csv; returns the exit status
 * the sweep reports for it. */
static int describe_status(int status, char *why, size_t n)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		snprintf(why, n, "failed: killed by signal %d (%s)", sig, strsignal(sig));
		return 3;
	}
	int st = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
	const char *what = st == 2   ? "bad input"
			   : st == 3 ? "internal error"
			   : st == 4 ? "results could not be written"
				     : "failed";
	snprintf(why, n, "failed: %s (exit %d)", what, st);
	return st ? st : 3;
}

static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
#define NSTOP (sizeof stop_sigs / sizeof *stop_sigs)

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
			char dir[4700], name[SWEEP_NAME_MAX + 2];
			sweep_point_name(sw, next, name, sizeof name);
			snprintf(dir, sizeof dir, "%s/%s", tmp, name);
			pid_t pid = fork();
			if (pid < 0) {
				snprintf(po[next].why, sizeof po[next].why, "failed: fork: %s",
					 strerror(errno));
				po[next].status = 3;
				if (!rc)
					rc = 3;
				next++;
				done++;
				continue;
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
				int st = run_point(a, sw, next, dir, false, &o);
				if (!st && write_point_file(dir, &o))
					st = 4;
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
		char dir[4700], name[SWEEP_NAME_MAX + 2], pv[256];
		sweep_point_name(sw, p, name, sizeof name);
		snprintf(dir, sizeof dir, "%s/%s", tmp, name);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			po[p].ok = read_point_file(dir, &po[p]);
			if (!po[p].ok) {
				snprintf(po[p].why, sizeof po[p].why,
					 "failed: its figures could not be read back");
				po[p].status = 4;
			}
		} else {
			po[p].status = describe_status(status, po[p].why, sizeof po[p].why);
		}
		if (po[p].ok)
			ndone_ok++;
		else if (!rc)
			rc = po[p].status;
		point_values(sw, p, pv, sizeof pv);
		if (!po[p].ok) /* on stderr, --quiet or not */
			fprintf(stderr, "mpsim: point %s %s\n", pv, po[p].why);
		if (!a->quiet) {
			char v[64];
			fmt_metric(M_MAX_FCT, po[p].ok ? po[p].m[M_MAX_FCT] : NAN, v, sizeof v);
			printf("  [%zu/%zu] %s: %s (max FCT %s, %.1f s)\n", ndone_ok, sw->npoints,
			       pv, po[p].ok ? "done" : "FAILED", v, po[p].wall_s);
			fflush(stdout);
		}
	}
	if (stop_signal) {
		for (size_t p = 0; p < next; p++)
			if (pids[p] > 0)
				kill(pids[p], SIGTERM);
		while (wait(NULL) > 0 || errno == EINTR)
			;
		for (size_t p = 0; p < sw->npoints; p++)
			if (!po[p].ok && !po[p].status) {
				snprintf(po[p].why, sizeof po[p].why,
					 "not run: the sweep was interrupted by signal %d (%s)",
					 (int)stop_signal, strsignal(stop_signal));
				po[p].status = 128 + stop_signal;
			}
		rc = 128 + stop_signal;
	}
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &old[i], NULL);
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
		printf("%s: %zu points, %u at a time", name, sw.npoints,
		       a->jobs ? a->jobs : default_jobs());
		if (a->resume)
			printf(" (%zu kept from the earlier run)", kept);
		printf("\n");
	}
	rc = run_points(a, &sw, tmp, po);
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
	mp_free(po);
	sweep_free(&sw);
	return rc;
}

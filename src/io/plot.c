/* plot.c - gnuplot figures of a results folder; see plot.h.
 *
 * Units are those people read: times in us (ms past 5 ms), queues and windows
 * in KB or MB, rates in Gb/s, utilisation in %. An axis is logarithmic when
 * its values are positive and span 20x or more (FCTs over message sizes from
 * 4 KB to 100 MB, as the papers draw them); swept values sit evenly spaced
 * along x in the sweep's order, as the papers draw message sizes. Series are thinned to at most
 * PLOT_MAX_POINTS points each, keeping every bucket's min and max, so spikes
 * survive and an SVG stays small.
 */
#include "io/plot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/opt.h"
#include "io/csv.h"
#include "io/metrics.h"
#include "io/results.h"
#include "stats/stats.h"

#define PLOT_MAX_POINTS 4000
#define PLOT_MAX_KEY 12 /* more lines than this: no legend, the count in the title */
/* the PNG's terminal, of a height in pixels */
#define PNG_TERMINAL "set terminal pngcairo noenhanced size 680,%zu font 'DejaVu Sans,10'\n"
#define PNG_HEIGHT 440

bool plot_have_gnuplot(char *path, size_t n)
{
	const char *p = getenv("PATH");
	if (!p)
		p = "/usr/bin:/bin";
	while (*p) {
		const char *c = strchr(p, ':');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (l) {
			snprintf(path, n, "%.*s/gnuplot", (int)l, p);
			if (access(path, X_OK) == 0)
				return true;
		}
		p += l + (c ? 1 : 0);
	}
	return false;
}

/* The folder being drawn: its script, its figure list, its file names. */
struct plotter {
	const char *dir; /* DIR/plots */
	FILE *gp, *figs;
	int nfig;
	char **names; /* nfig figure names: what gnuplot must have drawn */
	struct mp_err *e;
};

static FILE *pl_open(struct plotter *pl, const char *name)
{
	char path[4500];
	snprintf(path, sizeof path, "%s/%s", pl->dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		mp_errf(pl->e, MP_EIO, "cannot write '%s': %s", path, strerror(errno));
	return f;
}

/* Close a file of the folder; a write that failed (a full disk) is the
 * plotter's error, and the caller draws nothing from the file. */
static int pl_close(struct plotter *pl, FILE *f, const char *name)
{
	char path[4500];
	snprintf(path, sizeof path, "%s/%s", pl->dir, name);
	return results_fclose(f, path, pl->e);
}

/* A gnuplot string literal of any text, inert: single quotes, in which
 * gnuplot 5 substitutes nothing (no `command` as in double quotes, no @macro,
 * no backslash escape); a quote is written twice, and a newline, which a
 * single-quoted string cannot hold, is joined in as 'a'."\n".'b' (every
 * place a string goes takes such an expression: titles, labels, tics, keys).
 * Other control characters become spaces. Text is drawn as it is written:
 * both terminals are `noenhanced`, so ^ _ @ & { } ~ in a name are no markup. */
static void gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\n')
			fputs("'.\"\\n\".'", f);
		else if (c == '\'')
			fputs("''", f);
		else
			fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
	}
	fputc('\'', f);
}

/* Text from a results folder on one line of a data file's comment or of
 * figures.tsv: control characters (a newline would start a data row, a tab a
 * column) become spaces. */
static void put_line(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
	}
}

/* A figure: settings, then the caller's `plot` line, then fig_end. */
static void fig_begin(struct plotter *pl, const char *name, const char *title, const char *xlabel,
		      const char *ylabel, const char *caption)
{
	FILE *f = pl->gp;
	fprintf(f, "\n# %s\nreset\nset encoding utf8\nset grid lc rgb '#dddddd'\n", name);
	fprintf(f, PNG_TERMINAL, (size_t)PNG_HEIGHT);
	fprintf(f, "set output '%s.png'\nset title ", name);
	gp_str(f, title);
	fprintf(f, "\nset xlabel ");
	gp_str(f, xlabel);
	fprintf(f, "\nset ylabel ");
	gp_str(f, ylabel);
	fprintf(f, "\nset key outside right top box opaque\nset border 3\nset tics nomirror\n");
	fprintf(pl->figs, "%s\t", name);
	put_line(pl->figs, caption);
	fputc('\n', pl->figs);
	pl->names = mp_realloc(pl->names, (size_t)(pl->nfig + 1) * sizeof *pl->names);
	pl->names[pl->nfig++] = mp_strdup(name);
}

static void fig_end(struct plotter *pl, const char *name)
{
	fprintf(pl->gp,
		"set terminal svg noenhanced size 900,540 dynamic font 'DejaVu Sans,11'\n"
		"set output '%s.svg'\nreplot\nset output\n",
		name);
}

static void set_log_if_wide(FILE *f, const char *axis, double lo, double hi)
{
	if (lo > 0 && hi / lo >= 20)
		fprintf(f, "set logscale %s\nset format %s '%s'\n", axis, axis,
			lo >= 1 ? "%.0f" : "%g");
}

/* An x axis of values (a CDF's): log when wide, else at most about six
 * ticks at a step of 1, 2 or 5 x 10^k, so five-digit labels do not run into
 * each other (gnuplot's own choice put twelve on a 2000-13000 us axis). */
static void set_value_xaxis(FILE *f, double lo, double hi)
{
	set_log_if_wide(f, "x", lo, hi);
	if ((lo > 0 && hi / lo >= 20) || !(hi > lo))
		return;
	double raw = (hi - lo) / 5, p = pow(10, floor(log10(raw))), step = p;
	if (raw > 5 * p)
		step = 10 * p;
	else if (raw > 2 * p)
		step = 5 * p;
	else if (raw > p)
		step = 2 * p;
	fprintf(f, "set xtics %.9g\n", step);
}

/* ---- a run ---- */

/* The unit of a time axis whose largest value is tmax_us: us, or ms past
 * 5 ms. Whatever is computed for the axis (its range, its tick step) is
 * computed on the values divided by div, as they are written and drawn. */
struct taxis {
	double div;
	const char *unit, *label;
};
static struct taxis time_axis(double tmax_us)
{
	return tmax_us > 5000 ? (struct taxis){ 1000, "ms", "time (ms)" }
			      : (struct taxis){ 1, "us", "time (us)" };
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A CDF of n sorted values: at most PLOT_MAX_POINTS steps, always the last. */
static void write_cdf(FILE *f, const double *v, size_t n, double div)
{
	size_t step = n > PLOT_MAX_POINTS ? n / PLOT_MAX_POINTS : 1;
	for (size_t i = 0; i < n; i += step)
		fprintf(f, "%.9g %.9g\n", v[i] / div, (double)(i + 1) / (double)n);
	if ((n - 1) % step)
		fprintf(f, "%.9g 1\n", v[n - 1] / div);
}

static void cdf_figure(struct plotter *pl, const char *name, double *v, size_t n, size_t total,
		       const char *what, const char *caption)
{
	qsort(v, n, sizeof *v, cmp_dbl);
	struct taxis u = time_axis(v[n - 1]);
	char dat[64], title[256], xl[64];
	snprintf(dat, sizeof dat, "%s.dat", name);
	FILE *d = pl_open(pl, dat);
	if (!d)
		return;
	fprintf(d, "# %s (%s)  fraction of %s\n", what, u.unit, what);
	write_cdf(d, v, n, u.div);
	if (pl_close(pl, d, dat))
		return;
	snprintf(title, sizeof title, "%s CDF: %zu completed of %zu", what, n, total);
	snprintf(xl, sizeof xl, "%s (%s)", what, u.unit);
	fig_begin(pl, name, title, xl, "fraction", caption);
	set_value_xaxis(pl->gp, v[0] / u.div, v[n - 1] / u.div);
	fprintf(pl->gp, "set yrange [0:1.02]\nset key inside right bottom\n");
	fprintf(pl->gp, "plot '%s' using 1:2 with steps lw 2 title 'all (%zu)'\n", dat, n);
	fig_end(pl, name);
}

struct fl {
	double bytes, fct, slow;
};
static int cmp_fl(const void *a, const void *b)
{
	const struct fl *x = a, *y = b;
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static void size_label(double bytes, char *buf, size_t n)
{
	if (bytes >= 1e6)
		snprintf(buf, n, "%.3gMB", bytes / 1e6);
	else if (bytes >= 1e3)
		snprintf(buf, n, "%.3gKB", bytes / 1e3);
	else
		snprintf(buf, n, "%.0fB", bytes);
}

/* Slowdown by flow size: one bucket per distinct size when there are at most
 * ten, else ten buckets of equal flow counts (size deciles), as HPCC and
 * ConWeave draw it; mean and p99 per bucket. */
static void slowdown_figure(struct plotter *pl, struct fl *f, size_t n, size_t total)
{
	qsort(f, n, sizeof *f, cmp_fl);
	size_t ndist = 0;
	for (size_t i = 0; i < n; i++)
		ndist += i == 0 || f[i].bytes != f[i - 1].bytes;
	size_t nb = ndist <= 10 ? ndist : 10;
	FILE *d = pl_open(pl, "slowdown.dat");
	if (!d)
		return;
	fprintf(d, "# bucket (largest size, flows)  mean  p99  slowdown\n");
	double *v = mp_malloc(n * sizeof *v), lo = INFINITY, hi = 0;
	size_t i = 0;
	for (size_t b = 0; b < nb; b++) {
		size_t end = ndist <= 10 ? i + 1 : (b + 1) * n / nb;
		if (ndist <= 10)
			while (end < n && f[end].bytes == f[i].bytes)
				end++;
		while (end < n && end > 0 && f[end].bytes == f[end - 1].bytes)
			end++; /* a size never straddles two buckets */
		if (end <= i)
			continue;
		size_t k = 0;
		for (size_t j = i; j < end; j++)
			v[k++] = f[j].slow;
		struct dist_summary s;
		stats_summarize(v, k, &s);
		char lab[48];
		size_label(f[end - 1].bytes, lab, sizeof lab);
		fprintf(d, "\"%s%s (%zu)\" %.9g %.9g\n", ndist <= 10 ? "" : "<=", lab, k, s.mean,
			s.p99);
		lo = fmin(lo, s.mean);
		hi = fmax(hi, s.p99);
		i = end;
		if (i >= n)
			break;
	}
	mp_free(v);
	if (pl_close(pl, d, "slowdown.dat"))
		return;
	char title[160];
	snprintf(title, sizeof title, "Slowdown (FCT / ideal) by flow size: %zu completed of %zu",
		 n, total);
	fig_begin(pl, "slowdown", title,
		  ndist <= 10 ? "flow size (flows)" : "flow size decile: largest size (flows)",
		  "slowdown",
		  "Slowdown (FCT over the empty-network FCT) by flow size: mean and p99");
	set_log_if_wide(pl->gp, "y", lo, hi);
	if (!(lo > 0 && hi / lo >= 20) && lo >= 1)
		fprintf(pl->gp, "set yrange [1:*]\n");
	fprintf(pl->gp, "set xrange [-0.5:%zu.5]\nset key inside left top\n", nb - 1);
	if (nb > 5)
		fprintf(pl->gp, "set xtics rotate by -30\n");
	fprintf(pl->gp, "plot 'slowdown.dat' using 0:2:xtic(1) with linespoints lw 2 pt 7 "
			"title 'mean', '' using 0:3 with linespoints lw 2 pt 5 title 'p99'\n");
	fig_end(pl, "slowdown");
}

static void run_flow_figures(struct plotter *pl, const char *rdir)
{
	char path[4400];
	struct csv t;
	snprintf(path, sizeof path, "%s/flows.csv", rdir);
	if (!csv_read(path, &t))
		return;
	int cf = csv_col(&t, "fct_us"), cs = csv_col(&t, "slowdown"), cb = csv_col(&t, "bytes"),
	    cc = csv_col(&t, "completed");
	if (cf < 0 || cs < 0 || cb < 0 || cc < 0 || !t.nrows) {
		csv_free(&t);
		return;
	}
	double *v = mp_malloc(t.nrows * sizeof *v);
	struct fl *f = mp_malloc(t.nrows * sizeof *f);
	size_t n = 0;
	for (size_t r = 0; r < t.nrows; r++) {
		if (strcmp(csv_at(&t, r, (size_t)cc), "1"))
			continue;
		f[n] = (struct fl){ csv_num(&t, r, (size_t)cb), csv_num(&t, r, (size_t)cf),
				    csv_num(&t, r, (size_t)cs) };
		if (isnan(f[n].fct) || isnan(f[n].slow))
			continue;
		v[n] = f[n].fct;
		n++;
	}
	if (n) {
		cdf_figure(pl, "fct_cdf", v, n, t.nrows, "FCT",
			   "Flow completion time CDF of the completed flows");
		slowdown_figure(pl, f, n, t.nrows);
	}
	mp_free(v);
	mp_free(f);
	csv_free(&t);
}

/* The completed collectives' CCTs of one run folder (NULL when it has none);
 * *total counts every row, completed or not. */
static double *read_ccts(const char *rdir, size_t *n, size_t *total)
{
	char path[4400];
	struct csv t;
	*n = *total = 0;
	snprintf(path, sizeof path, "%s/collectives.csv", rdir);
	if (!csv_read(path, &t))
		return NULL;
	int cc = csv_col(&t, "cct_us"), cd = csv_col(&t, "completed");
	double *v = mp_malloc((t.nrows + 1) * sizeof *v);
	for (size_t r = 0; cc >= 0 && cd >= 0 && r < t.nrows; r++)
		if (!strcmp(csv_at(&t, r, (size_t)cd), "1") && !isnan(csv_num(&t, r, (size_t)cc)))
			v[(*n)++] = csv_num(&t, r, (size_t)cc);
	*total = t.nrows;
	csv_free(&t);
	return v;
}

static void run_coll_figure(struct plotter *pl, const char *rdir)
{
	size_t n, total;
	double *v = read_ccts(rdir, &n, &total);
	if (n)
		cdf_figure(pl, "cct_cdf", v, n, total, "CCT",
			   "Collective completion time CDF over jobs and iterations");
	mp_free(v);
}

/* A training workload's layers (training.csv): per layer index, summed over
 * phases and averaged over ranks and iterations, compute, exposed
 * communication and the communication hidden behind compute, stacked. */
struct layer_bar {
	char label[48];
	double compute, exposed, hidden;
	bool seen;
};

static struct layer_bar *read_layers(const char *rdir, size_t *n, size_t *nranks, size_t *niters)
{
	char path[4400];
	struct csv t;
	*n = *nranks = *niters = 0;
	snprintf(path, sizeof path, "%s/training.csv", rdir);
	if (!csv_read(path, &t))
		return NULL;
	int cr = csv_col(&t, "rank"), ci = csv_col(&t, "layer_index"), cl = csv_col(&t, "layer"),
	    cit = csv_col(&t, "iteration"), cc = csv_col(&t, "compute_us"),
	    cm = csv_col(&t, "comm_us"), ce = csv_col(&t, "exposed_comm_us");
	struct layer_bar *b = NULL;
	for (size_t r = 0; cr >= 0 && ci >= 0 && cl >= 0 && cc >= 0 && cm >= 0 && ce >= 0 &&
			   cit >= 0 && r < t.nrows;
	     r++) {
		double ix = csv_num(&t, r, (size_t)ci), rank = csv_num(&t, r, (size_t)cr),
		       it = csv_num(&t, r, (size_t)cit);
		if (isnan(ix) || isnan(rank) || isnan(it) || ix < 0 || ix > 1e7 || rank < 0 ||
		    it < 0)
			continue; /* a total row */
		if ((size_t)it + 1 > *niters)
			*niters = (size_t)it + 1;
		size_t k = (size_t)ix;
		if (k >= *n) {
			b = mp_realloc(b, (k + 1) * sizeof *b);
			memset(b + *n, 0, (k + 1 - *n) * sizeof *b);
			*n = k + 1;
		}
		if (!b[k].seen) {
			snprintf(b[k].label, sizeof b[k].label, "%zu %s", k,
				 csv_at(&t, r, (size_t)cl));
			for (char *c = b[k].label; *c; c++) /* one token of the data file */
				if (*c == ' ' || *c == '"' || *c == '\\' ||
				    (unsigned char)*c < 0x20)
					*c = '_';
			b[k].seen = true;
		}
		double comp = csv_num(&t, r, (size_t)cc), comm = csv_num(&t, r, (size_t)cm),
		       exp = csv_num(&t, r, (size_t)ce);
		b[k].compute += isnan(comp) ? 0 : comp;
		b[k].exposed += isnan(exp) ? 0 : exp;
		b[k].hidden += isnan(comm) || isnan(exp) ? 0 : comm - exp;
		if ((size_t)rank + 1 > *nranks)
			*nranks = (size_t)rank + 1;
	}
	csv_free(&t);
	return b;
}

static void run_train_figure(struct plotter *pl, const char *rdir)
{
	size_t n, nranks, niters, shown = 0;
	struct layer_bar *b = read_layers(rdir, &n, &nranks, &niters);
	double hi = 0, per = (double)nranks * (double)niters;
	for (size_t k = 0; k < n; k++)
		hi = fmax(hi, (b[k].compute + b[k].exposed + b[k].hidden) / per);
	FILE *d = n ? pl_open(pl, "training_layers.dat") : NULL;
	struct taxis u = time_axis(hi);
	if (d) {
		fprintf(d,
			"# layer  compute (%s)  exposed communication  hidden communication, "
			"mean over ranks and iterations\n",
			u.unit);
		for (size_t k = 0; k < n; k++)
			if (b[k].seen) {
				double m = per * u.div;
				fprintf(d, "\"%s\" %.9g %.9g %.9g\n", b[k].label, b[k].compute / m,
					b[k].exposed / m, b[k].hidden / m);
				shown++;
			}
	}
	if (d && !pl_close(pl, d, "training_layers.dat")) {
		char yl[64];
		snprintf(yl, sizeof yl, "time per iteration (%s)", u.unit);
		fig_begin(pl, "training_layers", "Training: time per layer", "layer", yl,
			  "Per layer of the training workload (training.csv), summed over its "
			  "phases, mean over ranks and iterations: compute, exposed communication "
			  "(the rank computed nothing) and communication hidden behind compute");
		fprintf(pl->gp, "set style data histograms\nset style histogram rowstacked\n"
				"set style fill solid 0.85 border -1\nset boxwidth 0.8\n"
				"set yrange [0:*]\nset grid noxtics\n");
		if (shown > 40) /* too many names to read: every tenth index */
			fprintf(pl->gp, "set xtics rotate by -60 font ',7'\n");
		else
			fprintf(pl->gp, "set xtics rotate by -45 font ',8'\n");
		fprintf(pl->gp,
			"plot 'training_layers.dat' using 2:xtic(%s) title 'compute' lc rgb "
			"'#4477aa', '' using 3 title 'exposed communication' lc rgb '#cc3311', "
			"'' using 4 title 'hidden communication' lc rgb '#bbbbbb'\n",
			shown > 40 ? "int($0) % 10 == 0 ? stringcolumn(1) : ''" : "1");
		fig_end(pl, "training_layers");
	}
	mp_free(b);
}

/* How a family of time series is drawn. */
struct family_style {
	const char *family, *title, *ylabel;
	double div; /* value / div is drawn; 0 = bytes, KB or MB by the largest */
	bool points;
};
static const struct family_style family_styles[] = {
	{ "queue_bytes", "Egress queue", "queue", 0, false },
	{ "utilisation", "Link utilisation (per interval)", "utilisation (%)", 0.01, false },
	{ "pause_frames", "PFC PAUSE frames sent per interval", "PAUSE frames", 1, false },
	{ "drops", "Packets dropped per interval", "drops", 1, false },
	{ "goodput_gbps", "Per-flow goodput (bytes acknowledged per interval)", "goodput (Gb/s)", 1,
	  false },
	{ "cwnd_bytes", "Congestion window", "cwnd", 0, false },
	{ "rate_gbps", "Sending rate", "rate (Gb/s)", 1, false },
	{ "rtt_us", "Latest RTT sample", "RTT (us)", 1, false },
	{ "path", "Path of the latest data packet (its entropy)", "entropy", 1, true },
	{ "ccl_window", "Collective scheduler's window per channel (MCC)", "window (chunks)", 1,
	  false },
};

struct series {
	char *name; /* after "family:" */
	size_t fam;
	double *t, *v;
	size_t n, cap;
};

/* Thin to at most PLOT_MAX_POINTS: min and max of each bucket, in time order. */
static void write_series(FILE *d, const struct series *s, double tdiv, double vdiv)
{
	size_t nb = PLOT_MAX_POINTS / 2;
	if (s->n <= PLOT_MAX_POINTS) {
		for (size_t i = 0; i < s->n; i++)
			fprintf(d, "%.9g %.9g\n", s->t[i] / tdiv, s->v[i] / vdiv);
		return;
	}
	for (size_t b = 0; b < nb; b++) {
		size_t i0 = b * s->n / nb, i1 = (b + 1) * s->n / nb, lo = i0, hi = i0;
		for (size_t i = i0; i < i1; i++) {
			lo = s->v[i] < s->v[lo] ? i : lo;
			hi = s->v[i] > s->v[hi] ? i : hi;
		}
		size_t a = lo < hi ? lo : hi, c = lo < hi ? hi : lo;
		fprintf(d, "%.9g %.9g\n", s->t[a] / tdiv, s->v[a] / vdiv);
		if (c != a)
			fprintf(d, "%.9g %.9g\n", s->t[c] / tdiv, s->v[c] / vdiv);
	}
}

/* A single run's paper values on its time series: the times the paper gives
 * for settling and convergence as vertical lines (measured, as the metrics
 * are, from the last flow start), its queue depths as horizontal ones; ours
 * beside each in the label. */
static const struct {
	const char *family;
	enum metric_id m;
} ts_marks[] = {
	{ "goodput_gbps", M_CONVERGENCE },     { "goodput_gbps", M_CONVERGENCE_JAIN },
	{ "queue_bytes", M_QUEUE_SETTLE },     { "queue_bytes", M_QUEUE_DRAIN },
	{ "queue_bytes", M_MAX_QUEUE },	       { "queue_bytes", M_MAX_QUEUE_LAST_HOP },
	{ "queue_bytes", M_MAX_QUEUE_FABRIC },
};

static void ts_paper_marks(struct plotter *pl, const struct csv *paper, double last_start_us,
			   const char *family, double tdiv, double vdiv)
{
	int pm = csv_col(paper, "metric"), pp = csv_col(paper, "paper"),
	    po = csv_col(paper, "ours");
	if (pm < 0 || pp < 0 || po < 0)
		return;
	unsigned n = 0;
	fprintf(pl->gp, "set style textbox opaque noborder\n");
	for (size_t r = 0; r < paper->nrows; r++)
		for (size_t j = 0; j < sizeof ts_marks / sizeof *ts_marks; j++) {
			enum metric_id m = ts_marks[j].m;
			if (strcmp(ts_marks[j].family, family) ||
			    strcmp(csv_at(paper, r, (size_t)pm), metric_defs[m].name))
				continue;
			double pv = csv_num(paper, r, (size_t)pp),
			       ov = csv_num(paper, r, (size_t)po);
			if (isnan(pv))
				continue;
			char lab[160];
			snprintf(lab, sizeof lab, "paper %s %.4g %s (ours %.4g)",
				 metric_defs[m].name, pv, metric_unit(m), ov);
			n++;
			if (metric_defs[m].kind == MK_TIME) {
				double x = (last_start_us + pv) / tdiv;
				fprintf(pl->gp,
					"set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dt 2 "
					"lw 1.5 lc rgb '#cc0000'\nset label ",
					x, x);
				gp_str(pl->gp, lab);
				fprintf(pl->gp,
					" at %.9g, graph %.2f left offset 0.5,0 front boxed tc rgb "
					"'#cc0000'\n",
					x, 0.97 - 0.06 * n);
			} else {
				double y = pv * 1e6 / vdiv; /* MB -> the figure's unit */
				fprintf(pl->gp,
					"set arrow from graph 0, first %.9g to graph 1, first %.9g "
					"nohead dt 2 lw 1.5 lc rgb '#cc0000'\nset label ",
					y, y);
				gp_str(pl->gp, lab);
				fprintf(pl->gp,
					" at graph 0.02, first %.9g left offset 0,0.7 tc rgb "
					"'#cc0000'\n",
					y);
			}
		}
}

/* The largest flow start in flows.csv (us), 0 when none. */
static double last_flow_start_us(const char *rdir)
{
	char path[4400];
	struct csv t;
	double m = 0;
	snprintf(path, sizeof path, "%s/flows.csv", rdir);
	if (!csv_read(path, &t))
		return 0;
	int c = csv_col(&t, "start_us");
	for (size_t r = 0; c >= 0 && r < t.nrows; r++) {
		double v = csv_num(&t, r, (size_t)c);
		if (!isnan(v) && v > m)
			m = v;
	}
	csv_free(&t);
	return m;
}

/* A run's time series, grouped in families (a name's part before ':'). */
struct ts_set {
	struct series *s;
	size_t ns;
	char **fams;
	size_t nfam;
	double tmax; /* the latest sample (us) */
};

/* The index of the family of series name nm, added when new. */
static size_t ts_family(struct ts_set *ts, const char *nm)
{
	const char *colon = strchr(nm, ':');
	size_t fl = colon ? (size_t)(colon - nm) : strlen(nm);
	size_t fi = 0;
	while (fi < ts->nfam && (strlen(ts->fams[fi]) != fl || strncmp(ts->fams[fi], nm, fl)))
		fi++;
	if (fi == ts->nfam) {
		ts->fams = mp_realloc(ts->fams, (ts->nfam + 1) * sizeof *ts->fams);
		ts->fams[ts->nfam] = mp_malloc(fl + 1);
		memcpy(ts->fams[ts->nfam], nm, fl);
		ts->fams[ts->nfam++][fl] = '\0';
	}
	return fi;
}

/* The index of the series named nm, added when new; rows cycle through the
 * series in order, so the one after `last` is tried first. */
static size_t ts_set_series(struct ts_set *ts, const char *nm, size_t last)
{
	size_t k = ts->ns;
	if (ts->ns && !strcmp(ts->s[(last + 1) % ts->ns].name, nm))
		return (last + 1) % ts->ns;
	for (k = 0; k < ts->ns && strcmp(ts->s[k].name, nm); k++)
		;
	if (k == ts->ns) {
		ts->s = mp_realloc(ts->s, (ts->ns + 1) * sizeof *ts->s);
		memset(&ts->s[ts->ns], 0, sizeof *ts->s);
		ts->s[ts->ns].name = mp_strdup(nm);
		ts->s[ts->ns++].fam = ts_family(ts, nm);
	}
	return k;
}

/* Read timeseries.csv (time, series, value) into *ts; false when it has no
 * such columns. */
static bool ts_read(struct ts_set *ts, const char *rdir)
{
	char path[4400];
	struct csv t;
	memset(ts, 0, sizeof *ts);
	snprintf(path, sizeof path, "%s/timeseries.csv", rdir);
	if (!csv_read(path, &t) || t.ncols < 3) {
		csv_free(&t);
		return false;
	}
	size_t last = 0;
	for (size_t r = 0; r < t.nrows; r++) {
		double tv = csv_num(&t, r, 0), vv = csv_num(&t, r, 2);
		if (isnan(tv) || isnan(vv))
			continue;
		size_t k = last = ts_set_series(ts, csv_at(&t, r, 1), last);
		struct series *x = &ts->s[k];
		if (x->n == x->cap) {
			x->cap = x->cap ? 2 * x->cap : 256;
			x->t = mp_realloc(x->t, x->cap * sizeof *x->t);
			x->v = mp_realloc(x->v, x->cap * sizeof *x->v);
		}
		x->t[x->n] = tv;
		x->v[x->n++] = vv;
		ts->tmax = fmax(ts->tmax, tv);
	}
	csv_free(&t);
	return true;
}

static void ts_set_free(struct ts_set *ts)
{
	for (size_t k = 0; k < ts->ns; k++) {
		mp_free(ts->s[k].name);
		mp_free(ts->s[k].t);
		mp_free(ts->s[k].v);
	}
	for (size_t fi = 0; fi < ts->nfam; fi++)
		mp_free(ts->fams[fi]);
	mp_free(ts->fams);
	mp_free(ts->s);
}

/* Family fi's figure name: ts_<family> when the family is a plain word (as
 * mpsim writes them), else ts_<fi>, so that no name from the file reaches a
 * path or the script unquoted. */
static void ts_figure_name(const char *fam, size_t fi, char *name, size_t n)
{
	bool plain = fam[0] != '\0' && strlen(fam) < 64;
	for (const char *c = fam; *c && plain; c++)
		plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			(*c >= '0' && *c <= '9') || *c == '_' || *c == '-';
	if (plain)
		snprintf(name, n, "ts_%s", fam);
	else
		snprintf(name, n, "ts_%zu", fi);
}

/* Family fi's y axis: the value divisor (bytes, KB or MB by the largest
 * value when the style says 0) and its label; *nmem counts its series. */
static double ts_yaxis(const struct ts_set *ts, size_t fi, const struct family_style *st,
		       char *ylabel, size_t n, size_t *nmem)
{
	double vmax = 0;
	*nmem = 0;
	for (size_t k = 0; k < ts->ns; k++)
		if (ts->s[k].fam == fi) {
			(*nmem)++;
			for (size_t i = 0; i < ts->s[k].n; i++)
				vmax = fmax(vmax, ts->s[k].v[i]);
		}
	double div = st ? st->div : 1;
	snprintf(ylabel, n, "%s", st ? st->ylabel : ts->fams[fi]);
	if (div == 0) {
		div = vmax >= 2e6 ? 1e6 : vmax >= 2e3 ? 1e3 : 1;
		snprintf(ylabel, n, "%s (%s)", st->ylabel,
			 div == 1e6   ? "MB"
			 : div == 1e3 ? "KB"
				      : "bytes");
	}
	return div;
}

/* DAT: family fi's series, one block each; -1 on a write error. */
static int ts_write_dat(struct plotter *pl, const struct ts_set *ts, size_t fi, struct taxis ta,
			double div, const char *dat)
{
	FILE *d = pl_open(pl, dat);
	if (!d)
		return -1;
	fputs("# ", d);
	put_line(d, ts->fams[fi]);
	fprintf(d, ": one block per series, %s and the value\n", ta.label);
	for (size_t k = 0, b = 0; k < ts->ns; k++) {
		if (ts->s[k].fam != fi)
			continue;
		fprintf(d, "%s# ", b++ ? "\n\n" : "");
		put_line(d, ts->s[k].name);
		fputc('\n', d);
		write_series(d, &ts->s[k], ta.div, div);
	}
	return pl_close(pl, d, dat) ? -1 : 0;
}

/* Family fi's figure, a line per series, with the paper's marks when
 * paper is not NULL; -1 on a write error. */
static int ts_family_figure(struct plotter *pl, const struct ts_set *ts, size_t fi, struct taxis ta,
			    const struct csv *paper, double last_start)
{
	const struct family_style *st = NULL;
	for (size_t j = 0; j < sizeof family_styles / sizeof *family_styles; j++)
		if (!strcmp(family_styles[j].family, ts->fams[fi]))
			st = &family_styles[j];
	size_t nmem;
	char ylabel[96], title[256], name[96], dat[112], caption[320];
	double div = ts_yaxis(ts, fi, st, ylabel, sizeof ylabel, &nmem);
	ts_figure_name(ts->fams[fi], fi, name, sizeof name);
	snprintf(dat, sizeof dat, "%s.dat", name);
	if (ts_write_dat(pl, ts, fi, ta, div, dat))
		return -1;
	snprintf(title, sizeof title, "%s: %s", st ? st->title : ts->fams[fi], ts->fams[fi]);
	if (nmem > PLOT_MAX_KEY)
		snprintf(title + strlen(title), sizeof title - strlen(title),
			 ": %zu series, legend omitted", nmem);
	snprintf(caption, sizeof caption, "Time series %s:*, sampled every output.interval",
		 ts->fams[fi]);
	fig_begin(pl, name, title, ta.label, ylabel, caption);
	if (nmem > PLOT_MAX_KEY)
		fprintf(pl->gp, "unset key\n");
	if (paper)
		ts_paper_marks(pl, paper, last_start, ts->fams[fi], ta.div, div);
	fprintf(pl->gp, "set yrange [0:*]\nplot ");
	for (size_t k = 0, b = 0; k < ts->ns; k++) {
		if (ts->s[k].fam != fi)
			continue;
		const char *member = strchr(ts->s[k].name, ':');
		member = member ? member + 1 : ts->s[k].name;
		fprintf(pl->gp, "%s'%s' index %zu using 1:2 with %s title ", b ? ", \\\n  " : "",
			dat, b, st && st->points ? "points pt 7 ps 0.5" : "lines lw 1.5");
		gp_str(pl->gp, member);
		b++;
	}
	fprintf(pl->gp, "\n");
	fig_end(pl, name);
	return 0;
}

/* A run's time series: one figure per family. */
static void run_ts_figures(struct plotter *pl, const char *rdir)
{
	struct ts_set ts;
	if (!ts_read(&ts, rdir))
		return;
	struct taxis ta = time_axis(ts.tmax);
	struct csv paper;
	char path[4400];
	snprintf(path, sizeof path, "%s/paper.csv", rdir);
	bool have_paper = csv_read(path, &paper);
	double last_start = have_paper ? last_flow_start_us(rdir) : 0;
	for (size_t fi = 0; fi < ts.nfam; fi++)
		if (ts_family_figure(pl, &ts, fi, ta, have_paper ? &paper : NULL, last_start))
			break;
	ts_set_free(&ts);
	if (have_paper)
		csv_free(&paper);
}

/* ---- a sweep ---- */

/* A swept value as a number for the x axis: plain, or with a unit. */
static bool axis_value(const char *s, double *v)
{
	char *end;
	uint64_t u;
	*v = strtod(s, &end);
	if (end != s && !*end)
		return true;
	if (!opt_parse_time(s, &u) || !opt_parse_rate(s, &u) || !opt_parse_size(s, &u)) {
		*v = (double)u;
		return true;
	}
	return false;
}

/* "max_fct_us" -> M_MAX_FCT */
static int metric_of_col(const char *col)
{
	for (int m = 0; m < M_N; m++) {
		char c[96];
		const char *u = metric_unit((enum metric_id)m);
		snprintf(c, sizeof c, "%s%s%s", metric_defs[m].name, *u ? "_" : "", u);
		if (!strcmp(c, col))
			return m;
	}
	return -1;
}

struct sweepdata {
	struct csv t;
	size_t nkeys; /* columns 1..nkeys */
	size_t xk;    /* the key drawn along x (0-based among keys) */
	bool xnum, xlog;
	double *x;    /* per row */
	size_t *line; /* per row: which line */
	char **lines; /* labels */
	size_t nlines;
	char **xvals; /* distinct x values, in order */
	double *xpos;
	size_t nx;
};

static const char *key_label(const char *key)
{
	const char *d = strrchr(key, '.');
	return d ? d + 1 : key;
}

/* a row's label over keys other than skip1, skip2 (SIZE_MAX = none) */
static void line_label(const struct sweepdata *sd, size_t r, size_t skip1, size_t skip2, char *buf,
		       size_t n)
{
	size_t l = 0, used = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < sd->nkeys; k++) {
		if (k == skip1 || k == skip2)
			continue;
		const char *key = sd->t.head[k + 1], *v = csv_at(&sd->t, r, k + 1);
		if (strchr(key, '.'))
			l += (size_t)snprintf(buf + l, l < n ? n - l : 0, "%s%s=%s",
					      used ? " " : "", key_label(key), v);
		else
			l += (size_t)snprintf(buf + l, l < n ? n - l : 0, "%s%s", used ? " " : "",
					      v);
		used++;
	}
	if (!used)
		snprintf(buf, n, "ours");
}

static size_t intern(char ***v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return i;
	*v = mp_realloc(*v, (*n + 1) * sizeof **v);
	(*v)[*n] = mp_strdup(s);
	return (*n)++;
}

static bool sweep_load(struct sweepdata *sd, const char *dir)
{
	char path[4400];
	memset(sd, 0, sizeof *sd);
	snprintf(path, sizeof path, "%s/sweep.csv", dir);
	if (!csv_read(path, &sd->t) || sd->t.ncols < 2)
		return false;
	size_t k = 1;
	while (k < sd->t.ncols && metric_of_col(sd->t.head[k]) < 0)
		k++;
	sd->nkeys = k - 1;
	/* x: the last key whose values are all numbers, else the last key */
	sd->xk = sd->nkeys ? sd->nkeys - 1 : 0;
	for (size_t j = sd->nkeys; j-- > 0;) {
		bool num = sd->t.nrows > 0;
		double v;
		for (size_t r = 0; r < sd->t.nrows && num; r++)
			num = axis_value(csv_at(&sd->t, r, j + 1), &v);
		if (num) {
			sd->xk = j;
			sd->xnum = true;
			break;
		}
	}
	size_t nr = sd->t.nrows;
	sd->x = mp_calloc(nr + 1, sizeof *sd->x);
	sd->line = mp_calloc(nr + 1, sizeof *sd->line);
	double lo = INFINITY, hi = 0;
	for (size_t r = 0; r < nr; r++) {
		char lab[512];
		const char *xv = sd->nkeys ? csv_at(&sd->t, r, sd->xk + 1) : "run";
		size_t xi = intern(&sd->xvals, &sd->nx, xv);
		sd->xpos = mp_realloc(sd->xpos, sd->nx * sizeof *sd->xpos);
		/* evenly spaced in the sweep's order, as the papers draw message sizes
		 * and systems (a log axis crowded 48-100 MB into a corner) */
		sd->xpos[xi] = (double)xi;
		sd->x[r] = sd->xpos[xi];
		lo = fmin(lo, sd->x[r]);
		hi = fmax(hi, sd->x[r]);
		line_label(sd, r, sd->xk, SIZE_MAX, lab, sizeof lab);
		sd->line[r] = intern(&sd->lines, &sd->nlines, lab);
	}
	sd->xlog = false;
	(void)lo;
	(void)hi;
	return nr > 0;
}

static void sd_free(struct sweepdata *sd)
{
	for (size_t i = 0; i < sd->nlines; i++)
		mp_free(sd->lines[i]);
	for (size_t i = 0; i < sd->nx; i++)
		mp_free(sd->xvals[i]);
	mp_free(sd->lines);
	mp_free(sd->xvals);
	mp_free(sd->xpos);
	mp_free(sd->x);
	mp_free(sd->line);
	csv_free(&sd->t);
}

/* skip: an x value with nothing to draw (a ratio's own reference), or NULL */
static void sweep_xaxis(struct plotter *pl, const struct sweepdata *sd, const char *skip)
{
	FILE *f = pl->gp;
	double lo = INFINITY, hi = -INFINITY;
	fprintf(f, "set xtics (");
	for (size_t i = 0, k = 0; i < sd->nx; i++) {
		if (skip && !strcmp(skip, sd->xvals[i]))
			continue;
		fprintf(f, "%s", k++ ? ", " : "");
		gp_str(f, sd->xvals[i]);
		fprintf(f, " %.9g", sd->xpos[i]);
		lo = fmin(lo, sd->xpos[i]);
		hi = fmax(hi, sd->xpos[i]);
	}
	fprintf(f, ")\n");
	if (sd->xlog)
		fprintf(f, "set logscale x\n");
	else if (lo <= hi)
		fprintf(f, "set xrange [%.9g:%.9g]\n", lo - 0.5, hi + 0.5);
	/* many values: upright and small, one under each tick (at -30 degrees
	 * 40 names ran into each other), the figure taller by the longest */
	if (sd->nx > 16) {
		size_t longest = 0;
		for (size_t i = 0; i < sd->nx; i++)
			longest = strlen(sd->xvals[i]) > longest ? strlen(sd->xvals[i]) : longest;
		fprintf(f, PNG_TERMINAL, PNG_HEIGHT + 5 * longest);
		fprintf(f, "set xtics rotate by -90 font ',7'\nset bmargin %zu\n",
			3 + longest * 2 / 5);
	} else if (sd->nx > 6)
		fprintf(f, "set xtics rotate by -30\n");
	/* room at both ends, so a mark on the first or last value is whole */
	fprintf(f, "set offsets graph 0.05, graph 0.05, graph 0.08, 0\n");
}

/* Does paper.csv's point "system=strack size=16MB" name row r? */
static bool point_is_row(const struct sweepdata *sd, const char *point, size_t r)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", point);
	char *save = NULL;
	for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return false;
		*eq = '\0';
		size_t k = 0;
		while (k < sd->nkeys && strcmp(sd->t.head[k + 1], tok) &&
		       strcmp(key_label(sd->t.head[k + 1]), tok))
			k++;
		if (k == sd->nkeys || strcmp(csv_at(&sd->t, r, k + 1), eq + 1))
			return false;
	}
	return true;
}

/* the metrics a sweep draws when they vary, besides those the paper names */
static const int sweep_metrics[] = {
	M_MEAN_FCT,	    M_P99_FCT,	    M_MAX_FCT,	   M_MAX_SLOWDOWN,
	M_GOODPUT,	    M_MEAN_TPUT,    M_P99_TPUT,	   M_DROPS,
	M_RETX_BYTES,	    M_PAUSE_FRAMES, M_MAX_QUEUE,   M_MAX_QUEUE_LAST_HOP,
	M_MAX_QUEUE_FABRIC, M_P99_OOD,	    M_CONVERGENCE, M_QUEUE_SETTLE,
	M_QUEUE_DRAIN,	    M_CCT_MEAN,	    M_CCT_MAX,	   M_BUSBW_MEAN,
	M_ITERATION,	    M_EXPOSED_COMM,
};

/* Column col's range over the sweep's rows; *varies when two values differ.
 * False when no row has a value. */
static bool col_range(const struct sweepdata *sd, int col, double *lo, double *hi, bool *varies)
{
	bool any = false;
	double first = NAN;
	*lo = INFINITY;
	*hi = 0;
	*varies = false;
	for (size_t r = 0; r < sd->t.nrows; r++) {
		double v = csv_num(&sd->t, r, (size_t)col);
		if (isnan(v))
			continue;
		if (any && v != first)
			*varies = true;
		if (!any)
			first = v;
		any = true;
		*lo = fmin(*lo, v);
		*hi = fmax(*hi, v);
	}
	return any;
}

/* PDAT: the paper's plain values of metric m at their points, each with the
 * line type lt[] of its line, widening lo..hi; how many (-1 on a write
 * error). */
static long metric_write_paper(struct plotter *pl, const struct sweepdata *sd, int m,
			       const struct csv *paper, const size_t *lt, const char *pdat,
			       double *lo, double *hi)
{
	FILE *pd = NULL;
	long npaper = 0;
	for (size_t p = 0; paper && p < paper->nrows; p++) {
		if (strcmp(csv_at(paper, p, 1), metric_defs[m].name))
			continue;
		double pv = csv_num(paper, p, 3);
		for (size_t r = 0; r < sd->t.nrows && !isnan(pv); r++) {
			if (!point_is_row(sd, csv_at(paper, p, 0), r))
				continue;
			if (!pd && !(pd = pl_open(pl, pdat)))
				return -1;
			if (!npaper)
				fprintf(pd, "# x  the paper's value  line\n");
			fprintf(pd, "%.9g %.9g %zu\n", sd->x[r], pv, lt[sd->line[r]]);
			npaper++;
			*lo = fmin(*lo, pv);
			*hi = fmax(*hi, pv);
			break;
		}
	}
	return pd && pl_close(pl, pd, pdat) ? -1 : npaper;
}

/* The lines the paper gives a value of metric `name` on (line_of[r]: row r's
 * line, of nlines), when it gives any: the other lines would only crowd
 * them. NULL when it gives none. */
static bool *paper_lines(const struct sweepdata *sd, const struct csv *paper, const char *name,
			 const size_t *line_of, size_t nlines)
{
	bool *keep = mp_calloc(nlines + 1, sizeof *keep), any = false;
	for (size_t p = 0; paper && p < paper->nrows; p++)
		for (size_t r = 0; r < sd->t.nrows && !strcmp(csv_at(paper, p, 1), name); r++)
			if (point_is_row(sd, csv_at(paper, p, 0), r)) {
				keep[line_of[r]] = any = true;
				break;
			}
	if (!any) {
		mp_free(keep);
		keep = NULL;
	}
	return keep;
}

/* DAT: column col, one block per line; -1 on a write error. */
static int metric_write_dat(struct plotter *pl, const struct sweepdata *sd, int col,
			    const char *dat)
{
	FILE *d = pl_open(pl, dat);
	if (!d)
		return -1;
	fprintf(d, "# one block per line (system); x, %s\n", sd->t.head[col]);
	for (size_t l = 0; l < sd->nlines; l++) {
		fprintf(d, "%s# ", l ? "\n\n" : "");
		put_line(d, sd->lines[l]);
		fputc('\n', d);
		for (size_t r = 0; r < sd->t.nrows; r++)
			if (sd->line[r] == l)
				fprintf(d, "%.9g %.9g\n", sd->x[r],
					csv_num(&sd->t, r, (size_t)col));
	}
	return pl_close(pl, d, dat) ? -1 : 0;
}

/* Figure sweep_<metric> of metric m (sweep.csv's column col) against x, a
 * line per value of the other keys, with the paper's values of it; drawn
 * when it varies or the paper names it. More lines than a legend holds: only
 * those the paper gives values on, where it gives any (five systems on one
 * workload, say, not all 28 lines of seven systems by four workloads). */
static void metric_figure(struct plotter *pl, const struct sweepdata *sd, int m, int col,
			  const struct csv *paper)
{
	double lo, hi;
	bool varies, any = col_range(sd, col, &lo, &hi, &varies);
	char name[96], dat[112], pdat[120];
	snprintf(name, sizeof name, "sweep_%s", metric_defs[m].name);
	snprintf(dat, sizeof dat, "%s.dat", name);
	snprintf(pdat, sizeof pdat, "%s_paper.dat", name);
	bool *keep = sd->nlines > PLOT_MAX_KEY
			 ? paper_lines(sd, paper, metric_defs[m].name, sd->line, sd->nlines)
			 : NULL;
	/* a line's type, so its colour: the kept lines numbered afresh, as
	 * gnuplot's colours repeat after eight */
	size_t *lt = mp_calloc(sd->nlines + 1, sizeof *lt), ndrawn = 0;
	for (size_t l = 0; l < sd->nlines; l++)
		lt[l] = !keep || keep[l] ? ++ndrawn : 0;
	long npaper = metric_write_paper(pl, sd, m, paper, lt, pdat, &lo, &hi);
	if (npaper < 0 || !any || (!varies && !npaper) || metric_write_dat(pl, sd, col, dat)) {
		mp_free(lt);
		mp_free(keep);
		return;
	}
	const char *u = metric_unit((enum metric_id)m);
	char title[256], ylabel[96], xlabel[128], caption[400];
	snprintf(title, sizeof title, "%s against %s%s", metric_defs[m].name,
		 sd->nkeys ? sd->t.head[sd->xk + 1] : "the run",
		 !npaper ? ""
		 : keep	 ? "\nlines: ours where the paper has values; large open marks: the paper"
			 : "\nlines: ours; large open marks: the paper");
	snprintf(ylabel, sizeof ylabel, "%s%s%s%s", metric_defs[m].name, *u ? " (" : "",
		 *u ? (!strcmp(u, "Gbps") ? "Gb/s" : u) : "", *u ? ")" : "");
	snprintf(xlabel, sizeof xlabel, "%s", sd->nkeys ? sd->t.head[sd->xk + 1] : "");
	snprintf(caption, sizeof caption, "%s against %s%s", metric_defs[m].help, xlabel,
		 npaper ? "; the paper's values as large open marks in the colour of their line"
			: "");
	fig_begin(pl, name, title, xlabel, ylabel, caption);
	sweep_xaxis(pl, sd, NULL);
	if (lo > 0 && hi / lo >= 20)
		set_log_if_wide(pl->gp, "y", lo, hi);
	else
		fprintf(pl->gp, "set yrange [0:*]\n");
	if (ndrawn > PLOT_MAX_KEY)
		fprintf(pl->gp, "unset key\n");
	/* systems along x have no order: marks only, a line would join them */
	fprintf(pl->gp, "plot ");
	for (size_t l = 0, b = 0; l < sd->nlines; l++) {
		if (keep && !keep[l])
			continue;
		fprintf(pl->gp, "%s'%s' index %zu using 1:2 with ", b++ ? ", \\\n  " : "", dat, l);
		fprintf(pl->gp,
			sd->xnum ? "linespoints lt %zu lw 2 pt 7" : "points lt %zu pt 7 ps 1.8",
			lt[l]);
		fprintf(pl->gp, " title ");
		gp_str(pl->gp, sd->lines[l]);
	}
	if (npaper)
		fprintf(pl->gp,
			", \\\n  '%s' using 1:2:3 with points pt 6 ps 3 lw 2 lc variable "
			"title 'paper'",
			pdat);
	fprintf(pl->gp, "\n");
	fig_end(pl, name);
	mp_free(lt);
	mp_free(keep);
}

/* ---- a ratio between points ---- */

#define RATIO_MAX_KEYS 8

/* What a ratio figure divides: paper.csv's "max_fct of system=roce" names it;
 * ours at a row is the metric at the row with the changed keys set to their
 * values at the other point, over the metric at the row. */
struct ratio {
	char base[96], changes[512];	/* "max_fct", "system=roce": for the labels */
	int col;			/* the metric's column in sweep.csv */
	size_t ck[RATIO_MAX_KEYS];	/* the changed keys, 0-based among sweep.csv's keys */
	const char *cv[RATIO_MAX_KEYS]; /* and their values at the other point */
	size_t nck;
	char buf[512]; /* the values' text, when they come from the label */
};

/* A ratio's figure data: one line per value of the keys other than x. */
struct ratio_lines {
	double *ours; /* per sweep row: the ratio, NAN where there is none */
	size_t *rl;   /* per sweep row: its line */
	char **lines; /* the lines' labels */
	size_t nlines;
	double lo, hi; /* the positive values drawn, ours and the paper's */
};

/* The key column of sweep.csv named `key` in full, or its label when
 * `label_too` (as paper.csv's point and an old metric label spell keys). */
static bool sweep_key_col(const struct sweepdata *sd, const char *key, bool label_too, size_t *k)
{
	for (*k = 0; *k < sd->nkeys; (*k)++)
		if (!strcmp(sd->t.head[*k + 1], key) ||
		    (label_too && !strcmp(key_label(sd->t.head[*k + 1]), key)))
			return true;
	return false;
}

/* The changed keys from paper.csv's row p: its ratio_of (the keys) and
 * ratio_point (the other point, a row of sweep.csv, holds their values). */
static bool ratio_from_columns(struct ratio *rt, const struct sweepdata *sd,
			       const struct csv *paper, size_t p, int cof, int cpt)
{
	char *keys[RATIO_MAX_KEYS];
	const char *rec = csv_at(paper, p, (size_t)cof);
	int n = strlen(rec) < sizeof rt->buf ? csv_split(strcpy(rt->buf, rec), keys, RATIO_MAX_KEYS)
					     : -1;
	size_t q = 0;
	while (q < sd->t.nrows && strcmp(csv_at(&sd->t, q, 0), csv_at(paper, p, (size_t)cpt)))
		q++;
	if (n <= 0 || q == sd->t.nrows)
		return false;
	for (rt->nck = 0; rt->nck < (size_t)n; rt->nck++) {
		if (!sweep_key_col(sd, keys[rt->nck], false, &rt->ck[rt->nck]))
			return false;
		rt->cv[rt->nck] = csv_at(&sd->t, q, rt->ck[rt->nck] + 1);
	}
	return true;
}

/* The changed keys from the label's "key=value,key=value", as a results
 * folder written before paper.csv had ratio_of and ratio_point holds them (a
 * value with a comma or an '=' cannot be read back from it: no figure). */
static bool ratio_from_label(struct ratio *rt, const struct sweepdata *sd)
{
	snprintf(rt->buf, sizeof rt->buf, "%s", rt->changes);
	char *save = NULL;
	rt->nck = 0;
	for (char *tok = strtok_r(rt->buf, ",", &save); tok && rt->nck < RATIO_MAX_KEYS;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return false;
		*eq = '\0';
		if (!sweep_key_col(sd, tok, true, &rt->ck[rt->nck]))
			return false;
		rt->cv[rt->nck++] = eq + 1;
	}
	return true;
}

/* The ratio named rname, first on paper.csv's row p: false when sweep.csv
 * cannot draw it (no such metric column, keys or point). */
static bool ratio_load(struct ratio *rt, const struct sweepdata *sd, const struct csv *paper,
		       const char *rname, size_t p)
{
	const char *of = strstr(rname, " of ");
	snprintf(rt->base, sizeof rt->base, "%.*s", (int)(of - rname), rname);
	snprintf(rt->changes, sizeof rt->changes, "%s", of + 4);
	int m = -1;
	for (int j = 0; j < M_N; j++)
		if (!strcmp(metric_defs[j].name, rt->base))
			m = j;
	const char *u = m >= 0 ? metric_unit((enum metric_id)m) : "";
	char colname[128];
	snprintf(colname, sizeof colname, "%s%s%s", rt->base, *u ? "_" : "", u);
	rt->col = csv_col(&sd->t, colname);
	if (rt->col < 0)
		return false;
	int cof = csv_col(paper, "ratio_of"), cpt = csv_col(paper, "ratio_point");
	return cof >= 0 && cpt >= 0 ? ratio_from_columns(rt, sd, paper, p, cof, cpt)
				    : ratio_from_label(rt, sd);
}

/* Is sweep row r the other point itself (every changed key at its value)? */
static bool ratio_is_other(const struct ratio *rt, const struct sweepdata *sd, size_t r)
{
	bool is = true;
	for (size_t j = 0; j < rt->nck; j++)
		is &= !strcmp(csv_at(&sd->t, r, rt->ck[j] + 1), rt->cv[j]);
	return is;
}

/* The row with row r's values but the changed keys', or SIZE_MAX. */
static size_t ratio_other_row(const struct ratio *rt, const struct sweepdata *sd, size_t r)
{
	for (size_t q = 0; q < sd->t.nrows; q++) {
		bool match = true;
		for (size_t k = 0; k < sd->nkeys && match; k++) {
			const char *want = csv_at(&sd->t, r, k + 1);
			for (size_t j = 0; j < rt->nck; j++)
				if (rt->ck[j] == k)
					want = rt->cv[j];
			match = !strcmp(csv_at(&sd->t, q, k + 1), want);
		}
		if (match)
			return q;
	}
	return SIZE_MAX;
}

/* Ours at every row that is not itself the other point: m(other) / m(row). */
static void ratio_ours(const struct ratio *rt, const struct sweepdata *sd, struct ratio_lines *rl)
{
	size_t nr = sd->t.nrows;
	*rl = (struct ratio_lines){ .rl = mp_calloc(nr + 1, sizeof *rl->rl),
				    .ours = mp_malloc((nr + 1) * sizeof *rl->ours),
				    .lo = INFINITY };
	for (size_t r = 0; r < nr; r++) {
		rl->ours[r] = NAN;
		if (ratio_is_other(rt, sd, r))
			continue;
		size_t q = ratio_other_row(rt, sd, r);
		if (q != SIZE_MAX)
			rl->ours[r] = csv_num(&sd->t, q, (size_t)rt->col) /
				      csv_num(&sd->t, r, (size_t)rt->col);
		char lab[512];
		line_label(sd, r, sd->xk, SIZE_MAX, lab, sizeof lab);
		rl->rl[r] = intern(&rl->lines, &rl->nlines, lab);
		if (isfinite(rl->ours[r]) && rl->ours[r] > 0) {
			rl->lo = fmin(rl->lo, rl->ours[r]);
			rl->hi = fmax(rl->hi, rl->ours[r]);
		}
	}
}

static void ratio_lines_free(struct ratio_lines *rl)
{
	for (size_t l = 0; l < rl->nlines; l++)
		mp_free(rl->lines[l]);
	mp_free(rl->lines);
	mp_free(rl->rl);
	mp_free(rl->ours);
}

/* rl's lo..hi over the positive ratios of the kept lines alone */
static void ratio_range(const struct sweepdata *sd, struct ratio_lines *rl, const bool *keep)
{
	rl->lo = INFINITY;
	rl->hi = 0;
	for (size_t r = 0; r < sd->t.nrows; r++)
		if (keep[rl->rl[r]] && isfinite(rl->ours[r]) && rl->ours[r] > 0) {
			rl->lo = fmin(rl->lo, rl->ours[r]);
			rl->hi = fmax(rl->hi, rl->ours[r]);
		}
}

/* Line l has a ratio at some point (a sweep run with --only may have none). */
static bool ratio_line_drawn(const struct sweepdata *sd, const struct ratio_lines *rl, size_t l)
{
	for (size_t r = 0; r < sd->t.nrows; r++)
		if (rl->rl[r] == l && !isnan(rl->ours[r]))
			return true;
	return false;
}

/* DAT: ours, one block per line. A line without a ratio keeps its block
 * with one undefined point: gnuplot's `index` does not count a block of
 * comments alone, and the blocks after it would be drawn under the wrong
 * line. */
static int ratio_write_ours(struct plotter *pl, const struct sweepdata *sd, const char *rname,
			    const struct ratio_lines *rl, const char *dat)
{
	FILE *d = pl_open(pl, dat);
	if (!d)
		return -1;
	fputs("# ", d);
	put_line(d, rname);
	fputs(" over each point's; one block per line\n", d);
	for (size_t l = 0; l < rl->nlines; l++) {
		fprintf(d, "%s# ", l ? "\n\n" : "");
		put_line(d, rl->lines[l]);
		fputc('\n', d);
		for (size_t r = 0; r < sd->t.nrows; r++)
			if (rl->rl[r] == l && !isnan(rl->ours[r]))
				fprintf(d, "%.9g %.9g\n", sd->x[r], rl->ours[r]);
		if (!ratio_line_drawn(sd, rl, l))
			fputs("0 nan\n", d);
	}
	return pl_close(pl, d, dat) ? -1 : 0;
}

/* PDAT: the paper's ratios at their points; how many (-1 on a write error). */
static long ratio_write_paper(struct plotter *pl, const struct sweepdata *sd,
			      const struct csv *paper, const char *rname, struct ratio_lines *rl,
			      const char *pdat)
{
	FILE *pd = NULL;
	long npaper = 0;
	for (size_t p = 0; p < paper->nrows; p++) {
		if (strcmp(csv_at(paper, p, 1), rname))
			continue;
		for (size_t r = 0; r < sd->t.nrows; r++)
			if (point_is_row(sd, csv_at(paper, p, 0), r)) {
				if (!pd && !(pd = pl_open(pl, pdat)))
					return -1;
				double pv = csv_num(paper, p, 3);
				fprintf(pd, "%.9g %.9g %zu\n", sd->x[r], pv, rl->rl[r] + 1);
				if (pv > 0) {
					rl->lo = fmin(rl->lo, pv);
					rl->hi = fmax(rl->hi, pv);
				}
				npaper++;
				break;
			}
	}
	return pd && pl_close(pl, pd, pdat) ? -1 : npaper;
}

/* The figure's script: labels, axes, the line at 1, ours and the paper's. */
static void ratio_plot(struct plotter *pl, const struct sweepdata *sd, const struct ratio *rt,
		       const char *rname, const struct ratio_lines *rl, const bool *keep,
		       bool paper_marks, const char *name, const char *dat, const char *pdat)
{
	char title[700], ylabel[700], caption[900];
	snprintf(title, sizeof title, "%s / this point's\nlines: ours; large open marks: the paper",
		 rname);
	snprintf(ylabel, sizeof ylabel, "%s at %s / at this point", rt->base, rt->changes);
	snprintf(caption, sizeof caption,
		 "%s at %s divided by %s at each point (above 1: the point is the faster of the "
		 "two for a time); the paper's ratios as large open marks",
		 rt->base, rt->changes, rt->base);
	const char *skip = NULL; /* a ratio over the x key: its reference has no ratio */
	for (size_t j = 0; j < rt->nck; j++)
		if (rt->ck[j] == sd->xk && rt->nck == 1)
			skip = rt->cv[j];
	fig_begin(pl, name, title, sd->nkeys ? sd->t.head[sd->xk + 1] : "", ylabel, caption);
	sweep_xaxis(pl, sd, skip);
	if (rl->lo > 0 && rl->hi / rl->lo >= 20)
		set_log_if_wide(pl->gp, "y", rl->lo, rl->hi);
	else
		fprintf(pl->gp, "set yrange [0:*]\n");
	fprintf(pl->gp, "plot 1 with lines lc rgb '#888888' dt 2 notitle");
	for (size_t l = 0; l < rl->nlines; l++) {
		if ((keep && !keep[l]) || !ratio_line_drawn(sd, rl, l))
			continue;
		fprintf(pl->gp,
			", \\\n  '%s' index %zu using 1:2 with linespoints lt %zu lw 2 pt 7 "
			"title ",
			dat, l, l + 1);
		gp_str(pl->gp, rl->lines[l]);
	}
	if (paper_marks)
		fprintf(pl->gp,
			", \\\n  '%s' using 1:2:3 with points pt 6 ps 3 lw 2 lc variable "
			"title 'paper'",
			pdat);
	fprintf(pl->gp, "\n");
	fig_end(pl, name);
}

/* Figure ratio_IDX of the ratio rname ("max_fct of system=roce,qps=4"), first
 * on paper.csv's row p: ours against x, a line per value of the other keys,
 * with the paper's ratios. */
static void ratio_figure(struct plotter *pl, const struct sweepdata *sd, const struct csv *paper,
			 const char *rname, size_t p, int idx)
{
	struct ratio rt;
	if (!ratio_load(&rt, sd, paper, rname, p))
		return;
	char name[64], dat[80], pdat[96];
	snprintf(name, sizeof name, "ratio_%d", idx);
	snprintf(dat, sizeof dat, "%s.dat", name);
	snprintf(pdat, sizeof pdat, "%s_paper.dat", name);
	struct ratio_lines rl;
	ratio_ours(&rt, sd, &rl);
	bool *keep = NULL;
	long npaper;
	if (!ratio_write_ours(pl, sd, rname, &rl, dat)) {
		keep = paper_lines(sd, paper, rname, rl.rl, rl.nlines);
		if (keep) /* the range of the lines drawn, not of those left out */
			ratio_range(sd, &rl, keep);
		npaper = ratio_write_paper(pl, sd, paper, rname, &rl, pdat);
		if (npaper >= 0)
			ratio_plot(pl, sd, &rt, rname, &rl, keep, npaper > 0, name, dat, pdat);
	}
	mp_free(keep);
	ratio_lines_free(&rl);
}

/* A sweep of collectives: one CCT CDF figure per value of the other keys,
 * a line per value of the first key (the STrack paper's Fig. 25-28: the CDF
 * of 64 jobs' completion times, one line per transport). */
static void sweep_cct_cdfs(struct plotter *pl, const struct sweepdata *sd, const char *rdir)
{
	if (sd->nkeys == 0)
		return;
	char **groups = NULL;
	size_t ngroups = 0;
	size_t *grp = mp_calloc(sd->t.nrows + 1, sizeof *grp);
	for (size_t r = 0; r < sd->t.nrows; r++) {
		char lab[512];
		line_label(sd, r, 0, SIZE_MAX, lab, sizeof lab);
		grp[r] = intern(&groups, &ngroups, sd->nkeys > 1 ? lab : "all");
	}
	for (size_t g = 0; g < ngroups; g++) {
		char name[64], dat[80], path[4400];
		snprintf(name, sizeof name, "sweep_cct_cdf_%zu", g);
		snprintf(dat, sizeof dat, "%s.dat", name);
		/* every line's CCTs first: the unit is the group's, from its largest */
		size_t nidx = 0, *rows = mp_calloc(sd->t.nrows + 1, sizeof *rows);
		size_t *ns = mp_calloc(sd->t.nrows + 1, sizeof *ns),
		       *totals = mp_calloc(sd->t.nrows + 1, sizeof *totals);
		double **vs = mp_calloc(sd->t.nrows + 1, sizeof *vs), lo = INFINITY, hi = 0;
		for (size_t r = 0; r < sd->t.nrows; r++) {
			const char *pt = csv_at(&sd->t, r, 0);
			if (grp[r] != g || !*pt || pt[0] == '.' || strchr(pt, '/'))
				continue; /* a point is a folder beside sweep.csv, no path */
			snprintf(path, sizeof path, "%s/%s", rdir, pt);
			double *v = read_ccts(path, &ns[nidx], &totals[nidx]);
			if (!ns[nidx]) {
				mp_free(v);
				continue;
			}
			qsort(v, ns[nidx], sizeof *v, cmp_dbl);
			lo = fmin(lo, v[0]);
			hi = fmax(hi, v[ns[nidx] - 1]);
			vs[nidx] = v;
			rows[nidx++] = r;
		}
		struct taxis u = time_axis(hi);
		FILE *d = nidx ? pl_open(pl, dat) : NULL;
		for (size_t i = 0; d && i < nidx; i++) {
			fprintf(d, "%s# ", i ? "\n\n" : "");
			put_line(d, csv_at(&sd->t, rows[i], 1));
			fprintf(d, ": CCT (%s)  fraction of %zu jobs\n", u.unit, totals[i]);
			write_cdf(d, vs[i], ns[i], u.div);
		}
		if (d && !pl_close(pl, d, dat)) {
			char title[600], xl[32];
			snprintf(title, sizeof title, "CCT CDF: %s", groups[g]);
			snprintf(xl, sizeof xl, "CCT (%s)", u.unit);
			fig_begin(pl, name, title, xl, "fraction of jobs",
				  "Collective completion time CDF, one line per value of the first "
				  "swept key");
			set_value_xaxis(pl->gp, lo / u.div, hi / u.div);
			fprintf(pl->gp, "set yrange [0:1.02]\nplot ");
			for (size_t i = 0; i < nidx; i++) {
				fprintf(pl->gp, "%s'%s' index %zu using 1:2 with steps lw 2 title ",
					i ? ", \\\n  " : "", dat, i);
				gp_str(pl->gp, csv_at(&sd->t, rows[i], 1));
			}
			fprintf(pl->gp, "\n");
			fig_end(pl, name);
		}
		for (size_t i = 0; i < nidx; i++)
			mp_free(vs[i]);
		mp_free(vs);
		mp_free(ns);
		mp_free(totals);
		mp_free(rows);
	}
	for (size_t g = 0; g < ngroups; g++)
		mp_free(groups[g]);
	mp_free(groups);
	mp_free(grp);
}

static void sweep_figures(struct plotter *pl, const char *rdir)
{
	struct sweepdata sd;
	if (!sweep_load(&sd, rdir)) {
		sd_free(&sd);
		return;
	}
	struct csv paper;
	char path[4400];
	snprintf(path, sizeof path, "%s/paper.csv", rdir);
	bool have_paper = csv_read(path, &paper) && paper.ncols >= 5;
	/* ratio comparisons, one figure per distinct "metric of key=value" */
	char **seen = NULL;
	size_t nseen = 0;
	for (size_t p = 0; have_paper && p < paper.nrows; p++) {
		const char *rn = csv_at(&paper, p, 1);
		if (!strstr(rn, " of "))
			continue;
		size_t before = nseen;
		size_t i = intern(&seen, &nseen, rn);
		if (nseen > before)
			ratio_figure(pl, &sd, &paper, rn, p, (int)i);
	}
	for (size_t i = 0; i < nseen; i++)
		mp_free(seen[i]);
	mp_free(seen);
	bool drawn[M_N] = { false };
	/* the paper's metrics first, then the usual ones */
	for (size_t p = 0; have_paper && p < paper.nrows; p++)
		for (int m = 0; m < M_N; m++)
			if (!drawn[m] && !strcmp(csv_at(&paper, p, 1), metric_defs[m].name)) {
				char c[96];
				const char *u = metric_unit((enum metric_id)m);
				snprintf(c, sizeof c, "%s%s%s", metric_defs[m].name, *u ? "_" : "",
					 u);
				int col = csv_col(&sd.t, c);
				if (col >= 0)
					metric_figure(pl, &sd, m, col, &paper);
				drawn[m] = true;
			}
	for (size_t i = 0; i < sizeof sweep_metrics / sizeof *sweep_metrics; i++) {
		int m = sweep_metrics[i];
		if (drawn[m])
			continue;
		char c[96];
		const char *u = metric_unit((enum metric_id)m);
		snprintf(c, sizeof c, "%s%s%s", metric_defs[m].name, *u ? "_" : "", u);
		int col = csv_col(&sd.t, c);
		if (col >= 0)
			metric_figure(pl, &sd, m, col, have_paper ? &paper : NULL);
		drawn[m] = true;
	}
	sweep_cct_cdfs(pl, &sd, rdir);
	if (have_paper)
		csv_free(&paper);
	sd_free(&sd);
}

/* ---- running gnuplot ---- */

static int run_gnuplot(const char *gnuplot, const char *dir, struct mp_err *e)
{
	char log[4500];
	snprintf(log, sizeof log, "%s/gnuplot.log", dir);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return mp_errf(e, MP_EIO, "cannot start gnuplot: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		if (chdir(dir) != 0)
			_exit(127);
		execl(gnuplot, "gnuplot", "plot.gp", (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return mp_errf(e, MP_EIO, "waiting for gnuplot: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return mp_errf(e, MP_EIO, "gnuplot failed on '%s/plot.gp' (see %s)", dir, log);
	return MP_OK;
}

/* gnuplot 5.4 says nothing and exits 0 when its output files cannot be
 * written (a full disk leaves them empty or cut short): every figure is
 * checked for the end a whole file has, a PNG's IEND chunk and an SVG's
 * closing tag. */
static bool file_ends_with(const char *path, const char *tail, size_t n)
{
	char buf[16];
	FILE *f = fopen(path, "rb");
	bool ok = f && fseek(f, -(long)n, SEEK_END) == 0 && fread(buf, 1, n, f) == n &&
		  !memcmp(buf, tail, n);
	if (f)
		fclose(f);
	return ok;
}

static int check_drawn(const struct plotter *pl, struct mp_err *e)
{
	static const char png_end[] = "IEND\xae\x42\x60\x82", svg_end[] = "</svg>\n\n";
	char path[4600];
	for (int i = 0; i < pl->nfig; i++) {
		snprintf(path, sizeof path, "%s/%s.png", pl->dir, pl->names[i]);
		bool ok = file_ends_with(path, png_end, sizeof png_end - 1);
		if (ok) {
			snprintf(path, sizeof path, "%s/%s.svg", pl->dir, pl->names[i]);
			ok = file_ends_with(path, svg_end, sizeof svg_end - 1) ||
			     file_ends_with(path, svg_end, sizeof svg_end - 2);
		}
		if (ok)
			continue;
		struct statvfs fs;
		bool full = statvfs(pl->dir, &fs) == 0 && fs.f_bavail * fs.f_frsize < (1u << 20);
		return mp_errf(e, MP_EIO, "error writing '%s': %s", path,
			       full ? strerror(ENOSPC)
				    : "gnuplot left it incomplete (see gnuplot.log there)");
	}
	return MP_OK;
}

static bool exists(const char *dir, const char *name)
{
	char p[4600];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* After a failure (a full disk, gnuplot's error) no half-drawn figure stays:
 * the plots folder is mpsim's, its files are removed and it goes if empty;
 * with keep_script, the script and gnuplot's log, which the error names. */
static void clear_plots(const char *pdir, bool keep_script)
{
	DIR *d = opendir(pdir);
	struct dirent *de;
	char p[4700];
	while (d && (de = readdir(d)) != NULL) {
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", pdir, de->d_name);
		if (keep_script &&
		    (!strcmp(de->d_name, "plot.gp") || !strcmp(de->d_name, "gnuplot.log")))
			continue;
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
			unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(pdir);
}

static int plot_one(const char *gnuplot, const char *rdir, bool sweep, struct mp_err *e)
{
	char pdir[4400];
	snprintf(pdir, sizeof pdir, "%s/plots", rdir);
	if (mkdir(pdir, 0777) != 0 && errno != EEXIST)
		return mp_errf(e, MP_EIO, "cannot create '%s': %s", pdir, strerror(errno));
	struct plotter pl = { .dir = pdir, .e = e };
	pl.gp = pl_open(&pl, "plot.gp");
	pl.figs = pl.gp ? pl_open(&pl, "figures.tsv") : NULL;
	if (!pl.gp || !pl.figs) {
		if (pl.gp)
			fclose(pl.gp);
		return e->status;
	}
	fprintf(pl.gp, "# Figures of the results folder above, written by mpsim; run\n"
		       "# `gnuplot plot.gp` in this folder to redraw them.\n");
	if (sweep) {
		sweep_figures(&pl, rdir);
	} else {
		run_flow_figures(&pl, rdir);
		run_ts_figures(&pl, rdir);
		run_coll_figure(&pl, rdir);
		run_train_figure(&pl, rdir);
	}
	pl_close(&pl, pl.gp, "plot.gp");
	pl_close(&pl, pl.figs, "figures.tsv");
	bool written = !e->status;
	if (written && pl.nfig && !run_gnuplot(gnuplot, pdir, e))
		check_drawn(&pl, e);
	if (e->status)
		clear_plots(pdir, written);
	for (int i = 0; i < pl.nfig; i++)
		mp_free(pl.names[i]);
	mp_free(pl.names);
	return e->status;
}

int plot_dir(const char *dir, bool points, struct mp_err *e)
{
	char gnuplot[4200];
	bool sweep = exists(dir, "sweep.csv");
	if (!sweep && !exists(dir, "flows.csv"))
		return mp_errf(e, MP_EUSER,
			       "'%s' is not an mpsim results folder (expected flows.csv or "
			       "sweep.csv in it)",
			       dir);
	if (!plot_have_gnuplot(gnuplot, sizeof gnuplot))
		return mp_errf(e, MP_EUSER,
			       "gnuplot is not installed (not found on PATH); install the Debian "
			       "package %s: apt-get install %s",
			       PLOT_GNUPLOT_PACKAGE, PLOT_GNUPLOT_PACKAGE);
	if (plot_one(gnuplot, dir, sweep, e))
		return e->status;
	if (!sweep || !points)
		return MP_OK;
	/* the points' folders */
	DIR *d = opendir(dir);
	if (!d)
		return mp_errf(e, MP_EIO, "cannot read '%s': %s", dir, strerror(errno));
	struct dirent *de;
	char sub[4400];
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "plots"))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode) && exists(sub, "flows.csv") &&
		    plot_one(gnuplot, sub, false, e))
			break;
	}
	closedir(d);
	return e->status;
}

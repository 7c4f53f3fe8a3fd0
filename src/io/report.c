/* report.c - report.html of a results folder; see report.h.
 *
 * The page is read from the folder's files only (summary.json, paper.csv,
 * sweep.csv, config.yaml, plots/figures.tsv and the PNGs), so it can be
 * rebuilt at any time. It needs nothing beside itself: the plots are inlined
 * as PNG data, the SVGs linked for zooming. Each table carries data-rows (its
 * body rows) and each image data-file (the PNG it inlines), which the test
 * (tests/cli_plots.sh) checks against the folder.
 */
#include "io/report.h"

#include <dirent.h>
#include <errno.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/mem.h"
#include "io/cfg.h"
#include "io/csv.h"
#include "io/results.h"

/* Text from the folder's files (names, notes, values) as HTML text or an
 * attribute's value: & < > " ' escaped. */
static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\'':
			fputs("&#39;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* A name from the folder as part of a relative URL (href, src): unreserved
 * characters and / as they are, the rest percent-encoded, so that no name
 * becomes a scheme (javascript:), a query or a fragment, or leaves the
 * attribute. */
static void url(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~/+", c))
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}

/* the whole file, or NULL */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *b = mp_malloc(cap);
	for (size_t k; (k = fread(b + n, 1, cap - n - 1, f)) > 0;) {
		n += k;
		if (n + 1 == cap)
			b = mp_realloc(b, cap *= 2);
	}
	fclose(f);
	b[n] = '\0';
	if (len)
		*len = n;
	return b;
}

static void base64(FILE *f, const unsigned char *s, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		fputc(tab[(v >> 18) & 63], f);
		fputc(tab[(v >> 12) & 63], f);
		fputc(i + 1 < n ? tab[(v >> 6) & 63] : '=', f);
		fputc(i + 2 < n ? tab[v & 63] : '=', f);
	}
}

/* ---- summary.json, flattened to "a.b[2].c" = value ---- */

struct jkv {
	char **k, **v;
	size_t n;
};

static void jkv_add(struct jkv *j, const char *k, const char *v, size_t vn)
{
	j->k = mp_realloc(j->k, (j->n + 1) * sizeof *j->k);
	j->v = mp_realloc(j->v, (j->n + 1) * sizeof *j->v);
	j->k[j->n] = mp_strdup(k);
	j->v[j->n] = mp_malloc(vn + 1);
	memcpy(j->v[j->n], v, vn);
	j->v[j->n++][vn] = '\0';
}

static const char *jskip(const char *s)
{
	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	return s;
}

/* a JSON string at s (at its quote): its text into buf, the rest returned */
static const char *jstring(const char *s, char *buf, size_t n)
{
	size_t l = 0;
	for (s++; *s && *s != '"'; s++) {
		if (*s == '\\' && s[1])
			s++;
		if (l + 1 < n)
			buf[l++] = *s;
	}
	buf[l] = '\0';
	return *s ? s + 1 : s;
}

static const char *jvalue(const char *s, const char *path, struct jkv *j, int depth)
{
	char key[512], sub[1024];
	s = jskip(s);
	if (depth > 16)
		return s + strlen(s);
	if (*s == '{' || *s == '[') {
		char close = *s == '{' ? '}' : ']';
		bool obj = *s == '{';
		s = jskip(s + 1);
		for (size_t i = 0; *s && *s != close; i++) {
			if (obj) {
				if (*s != '"')
					return s + strlen(s);
				s = jskip(jstring(s, key, sizeof key));
				if (*s == ':')
					s++;
				snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
			} else {
				snprintf(sub, sizeof sub, "%s[%zu]", path, i);
			}
			s = jskip(jvalue(s, sub, j, depth + 1));
			if (*s == ',')
				s = jskip(s + 1);
		}
		return *s ? s + 1 : s;
	}
	if (*s == '"') {
		const char *e = jstring(s, key, sizeof key);
		jkv_add(j, path, key, strlen(key));
		return e;
	}
	const char *e = s;
	while (*e && *e != ',' && *e != '}' && *e != ']' && *e != ' ' && *e != '\n')
		e++;
	jkv_add(j, path, s, (size_t)(e - s));
	return e;
}

static const char *jget(const struct jkv *j, const char *k)
{
	for (size_t i = 0; i < j->n; i++)
		if (!strcmp(j->k[i], k))
			return j->v[i];
	return NULL;
}

static void jkv_free(struct jkv *j)
{
	for (size_t i = 0; i < j->n; i++) {
		mp_free(j->k[i]);
		mp_free(j->v[i]);
	}
	mp_free(j->k);
	mp_free(j->v);
	memset(j, 0, sizeof *j);
}

/* ---- the page ---- */

static const char css[] =
    "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;max-width:1100px;margin:1.5em "
    "auto;padding:0 1em;color:#222;line-height:1.4}\n"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:"
    ".2em;margin-top:1.6em}\n"
    ".sub{color:#555;margin-top:0}\n"
    "table{border-collapse:collapse;margin:.5em 0;font-size:.92em}\n"
    "th,td{border:1px solid #ccc;padding:.25em .6em;vertical-align:top}\n"
    "th{background:#f0f0f0;text-align:left}td.n{text-align:right;font-variant-numeric:"
    "tabular-nums;white-space:nowrap}\n"
    ".wide{overflow-x:auto}\n"
    ".figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(480px,1fr));gap:1em}\n"
    "figure{margin:0;padding:0}figure img{width:100%;height:auto;border:1px solid #eee}\n"
    "td:first-child{white-space:nowrap}\n"
    "figcaption{color:#444;font-size:.92em}\n"
    ".warn{background:#fff4e0;border-left:4px solid #e0a030;padding:.4em .8em}\n"
    "pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}\n"
    "nav a{margin-right:1em}\n";

static void page_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
	      f);
	esc(f, title);
	fprintf(f, " - mpsim report</title>\n<style>\n%s</style></head><body>\n", css);
}

static bool is_num(const char *s)
{
	char *e;
	strtod(s, &e);
	return *s && e != s && !*e;
}

/* Decimals for about four significant digits of numbers up to |max| in fixed
 * notation: one format per column, never an exponent halfway down. */
static int col_decimals(const struct csv *t, size_t c)
{
	double mx = 0;
	bool all_int = true;
	for (size_t r = 0; r < t->nrows; r++) {
		const char *v = csv_at(t, r, c);
		double x = strtod(v, NULL);
		if (!is_num(v) || !isfinite(x))
			continue;
		mx = fmax(mx, fabs(x));
		all_int &= x == floor(x) && !strchr(v, '.');
	}
	if (all_int || mx == 0)
		return all_int ? 0 : 2;
	int d = 3 - (int)floor(log10(mx));
	return d < 0 ? 0 : d > 4 ? 4 : d;
}

/* a CSV table: the columns in cols (ncols of them; NULL = all) */
static int cell_decimals(double x)
{
	if (x == floor(x) || !isfinite(x))
		return 0;
	int d = 3 - (int)floor(log10(fabs(x)));
	return d < 0 ? 0 : d > 4 ? 4 : d;
}

/* per_cell: a column mixes units (the paper table: each row its metric), so
 * each number gets its own four significant digits, still never an exponent */
static void csv_table(FILE *f, const struct csv *t, const int *cols, size_t nc, const char *cls,
		      bool per_cell)
{
	size_t n = cols ? nc : t->ncols;
	int *dec = mp_malloc((n + 1) * sizeof *dec);
	for (size_t i = 0; i < n; i++)
		dec[i] = col_decimals(t, cols ? (size_t)cols[i] : i);
	fprintf(f, "<div class=\"wide\"><table class=\"%s\" data-rows=\"%zu\">\n<tr>", cls,
		t->nrows);
	for (size_t i = 0; i < n; i++) {
		fputs("<th>", f);
		esc(f, t->head[cols ? (size_t)cols[i] : i]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs("<tr>", f);
		for (size_t i = 0; i < n; i++) {
			size_t c = cols ? (size_t)cols[i] : i;
			const char *v = csv_at(t, r, c);
			if (is_num(v) || !strcmp(v, "nan")) {
				double x = strtod(v, NULL);
				if (isnan(x))
					fputs("<td class=\"n\">n/a</td>", f);
				else
					fprintf(f, "<td class=\"n\">%.*f</td>",
						per_cell ? cell_decimals(x) : dec[i], x);
			} else {
				fputs("<td>", f);
				esc(f, v);
				fputs("</td>", f);
			}
		}
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n", f);
	mp_free(dec);
}

static void figures(FILE *f, const char *dir, const char *prefix)
{
	char path[4600];
	snprintf(path, sizeof path, "%s/plots/figures.tsv", dir);
	char *list = slurp(path, NULL);
	if (!list) {
		fputs(
		    "<p class=\"warn\">No plots: gnuplot was not installed when this folder was "
		    "written, or they could not be written (mpsim said why). Install the Debian "
		    "package gnuplot-nox if need be and run <code>mpsim plot FOLDER</code>.</p>\n",
		    f);
		return;
	}
	if (!*list)
		fputs("<p>Nothing to plot (no completed flow and no time series).</p>\n", f);
	fputs("<div class=\"figs\">\n", f);
	char *save = NULL;
	for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		if (!tab || line == tab || line[0] == '.' ||
		    memchr(line, '/', (size_t)(tab - line)))
			continue; /* a figure is a file in plots/, never a path */
		*tab = '\0';
		size_t n;
		snprintf(path, sizeof path, "%s/plots/%s.png", dir, line);
		char *png = slurp(path, &n);
		fputs("<figure id=\"fig-", f);
		url(f, line);
		fprintf(f, "\"><img data-file=\"%splots/", prefix);
		url(f, line);
		fputs(".png\" alt=\"", f);
		esc(f, tab + 1);
		fputs("\" src=\"data:image/png;base64,", f);
		if (png)
			base64(f, (const unsigned char *)png, n);
		fputs("\">\n<figcaption>", f);
		esc(f, tab + 1);
		fprintf(f, " (<a href=\"%splots/", prefix);
		url(f, line);
		fprintf(f, ".svg\">SVG</a>, <a href=\"%splots/", prefix);
		url(f, line);
		fputs(".dat\">data</a>)</figcaption></figure>\n", f);
		mp_free(png);
	}
	fputs("</div>\n", f);
	mp_free(list);
}

struct file_note {
	const char *name, *what;
};
static const struct file_note file_notes[] = {
	{ "summary.json", "the run in numbers: flows (FCT and slowdown percentiles, by size), "
			  "network totals, ports by group, wall time and memory" },
	{ "flows.csv", "one row per flow (message): sizes, start, finish, FCT, ideal FCT, "
		       "slowdown, bytes delivered; an incomplete flow's finish, FCT and slowdown "
		       "are empty" },
	{ "collectives.csv", "one row per collective job and iteration: CCT, algbw, busbw" },
	{ "training.csv", "a training workload: per rank, iteration, layer and phase, compute, "
			  "communication and exposed communication time; totals per rank and "
			  "iteration" },
	{ "timeline.json", "every rank's compute and communication as Chrome trace events: "
			   "open it in Perfetto (ui.perfetto.dev)" },
	{ "ports.csv", "one row per egress port: bytes, utilisation, queues, drops, ECN marks, "
		       "PFC pauses" },
	{ "timeseries.csv", "time_us,series,value rows of every sampled series (output:)" },
	{ "config.yaml", "the effective configuration, every default filled in: "
			 "mpsim run config.yaml repeats the run" },
	{ "paper.csv", "the paper's numbers beside ours: point, metric, paper, ours, ratio, note" },
	{ "sweep.csv", "one row per sweep point: the swept values and every metric" },
	{ "plots", "the figures as PNG and SVG, their data (.dat) and the gnuplot script "
		   "(plot.gp) that draws them" },
	{ "report.html", "this page" },
};

static void files_table(FILE *f, const char *dir)
{
	char path[4600];
	size_t n = 0;
	for (size_t i = 0; i < sizeof file_notes / sizeof *file_notes; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, file_notes[i].name);
		n += access(path, F_OK) == 0 || !strcmp(file_notes[i].name, "report.html");
	}
	fprintf(f,
		"<h2 id=\"files\">Files in this folder</h2>\n<table class=\"files\" "
		"data-rows=\"%zu\">\n<tr><th>file</th><th>what it holds</th></tr>\n",
		n);
	for (size_t i = 0; i < sizeof file_notes / sizeof *file_notes; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, file_notes[i].name);
		if (access(path, F_OK) && strcmp(file_notes[i].name, "report.html"))
			continue;
		fprintf(f, "<tr><td><a href=\"%s\">%s</a></td><td>", file_notes[i].name,
			file_notes[i].name);
		esc(f, file_notes[i].what);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void paper_section(FILE *f, const char *dir)
{
	char path[4600];
	struct csv t;
	snprintf(path, sizeof path, "%s/paper.csv", dir);
	if (!csv_read(path, &t))
		return;
	fputs("<h2 id=\"paper\">Beside the paper</h2>\n<p>The paper's value and ours at each "
	      "point; ours_over_paper is 1 where they agree. A metric named \"X of key=value\" "
	      "is a ratio: X at that other point over X at this one.</p>\n",
	      f);
	/* ratio_of and ratio_point say again, for the figures, what the metric's
	 * name says: the table leaves them out */
	int *cols = mp_malloc((t.ncols + 1) * sizeof *cols);
	size_t nc = 0;
	for (size_t c = 0; c < t.ncols; c++)
		if (strcmp(t.head[c], "ratio_of") && strcmp(t.head[c], "ratio_point"))
			cols[nc++] = (int)c;
	csv_table(f, &t, cols, nc, "paper", true);
	mp_free(cols);
	csv_free(&t);
}

/* one row of the flows table from summary.json: prefix "flows" or "flows.by_size[i]" */
static void flow_row(FILE *f, const struct jkv *j, const char *p, const char *label)
{
	static const char *const cols[] = { "fct_us.n",	    "fct_us.mean", "fct_us.p50",
					    "fct_us.p99",   "fct_us.max",  "slowdown.mean",
					    "slowdown.p99", "slowdown.max" };
	char k[256];
	fputs("<tr><td>", f);
	esc(f, label);
	fputs("</td>", f);
	snprintf(k, sizeof k, "%s.fct_us.n", p);
	bool none = !jget(j, k) || strtod(jget(j, k), NULL) == 0;
	for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
		snprintf(k, sizeof k, "%s.%s", p, cols[i]);
		const char *v = jget(j, k);
		double x = v ? strtod(v, NULL) : NAN;
		if (i > 0 && none) /* no completed flow: nothing measured, not 0 */
			fputs("<td class=\"n\">n/a</td>", f);
		else if (i == 0)
			fprintf(f, "<td class=\"n\">%.0f</td>", x);
		else if (i < 5)
			fprintf(f, "<td class=\"n\">%.2f</td>", x);
		else
			fprintf(f, "<td class=\"n\">%.3f</td>", x);
	}
	fputs("</tr>\n", f);
}

/* "network.drops_buffer" ... as a two-column table */
static void kv_table(FILE *f, const struct jkv *j, const char *prefix, const char *cls)
{
	size_t pl = strlen(prefix), n = 0;
	for (size_t i = 0; i < j->n; i++)
		n += !strncmp(j->k[i], prefix, pl);
	fprintf(f, "<table class=\"%s\" data-rows=\"%zu\">\n<tr><th>name</th><th>value</th></tr>\n",
		cls, n);
	for (size_t i = 0; i < j->n; i++) {
		if (strncmp(j->k[i], prefix, pl))
			continue;
		fputs("<tr><th>", f);
		esc(f, j->k[i] + pl);
		fprintf(f, "</th><td class=\"n\">");
		/* a number with a fraction to six digits, never in exponent notation
		 * (the JSON has 2820.808160 us of a CCT: nobody reads past 2820.81) */
		char *end;
		double x = strtod(j->v[i], &end);
		if (end != j->v[i] && !*end && isfinite(x) && x != floor(x))
			fprintf(f, fabs(x) >= 1e5 ? "%.1f" : "%.6g", x);
		else if (end != j->v[i] && !*end && isfinite(x) && fabs(x) < 9e15)
			fprintf(f, "%.0f", x); /* 0.000000 us paused is 0 */
		else
			esc(f, j->v[i]);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void ports_table(FILE *f, const struct jkv *j)
{
	static const char *const groups[] = { "host_up",  "last_hop",	"tier1_up", "tier1_down",
					      "tier2_up", "tier2_down", "all",	    "fabric" };
	static const char *const cols[] = { "ports",	       "utilisation",
					    "max_queue_bytes", "mean_queue_bytes",
					    "drops",	       "ecn_marks",
					    "pause_frames" };
	char k[256];
	size_t n = 0;
	for (size_t g = 0; g < 8; g++) {
		snprintf(k, sizeof k, "ports.%s.ports", groups[g]);
		n += jget(j, k) != NULL;
	}
	fprintf(f,
		"<div class=\"wide\"><table class=\"ports\" data-rows=\"%zu\">\n<tr><th>"
		"group</th>",
		n);
	for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
		fprintf(f, "<th>%s</th>", cols[c]);
	fputs("</tr>\n", f);
	for (size_t g = 0; g < 8; g++) {
		snprintf(k, sizeof k, "ports.%s.ports", groups[g]);
		if (!jget(j, k))
			continue;
		fprintf(f, "<tr><td>%s</td>", groups[g]);
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
			snprintf(k, sizeof k, "ports.%s.%s", groups[g], cols[c]);
			const char *v = jget(j, k);
			double x = v ? strtod(v, NULL) : NAN;
			/* utilisation a fraction, mean queue bytes to 0.1, the rest counts */
			fprintf(f, "<td class=\"n\">%.*f</td>", c == 1 ? 4 : c == 3 ? 1 : 0, x);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n", f);
}

/* summary.json's "load" (an open-loop workload's offered and measured load
 * over its statistics window; sim/load.c defines each figure) as one line */
static void load_para(FILE *f, const struct jkv *j)
{
	const char *nom = jget(j, "load.nominal"), *arr = jget(j, "load.arrived"),
		   *host = jget(j, "load.host"), *fab = jget(j, "load.fabric"),
		   *tier = jget(j, "load.fabric_tier"), *imp = jget(j, "load.fabric_implied"),
		   *from = jget(j, "load.from_us"), *until = jget(j, "load.until_us"),
		   *warn = jget(j, "load.warning");
	if (!nom || !host)
		return;
	fprintf(f,
		"<p class=\"load\">Load over [%.1f us, %.1f us), as fractions of capacity: "
		"nominal %.3f of each source host's link",
		from ? strtod(from, NULL) : NAN, until ? strtod(until, NULL) : NAN,
		strtod(nom, NULL));
	if (arr)
		fprintf(f, " (%.3f offered by the flows that arrived in the window)",
			strtod(arr, NULL));
	fprintf(f, "; measured on the host links %.3f", strtod(host, NULL));
	if (fab && tier) {
		fprintf(f, ", on the busiest fabric tier (");
		esc(f, tier);
		fprintf(f, ") %.3f", strtod(fab, NULL));
	}
	if (imp)
		fprintf(f, ", against %.3f that the nominal load implies on the ToRs' uplinks",
			strtod(imp, NULL));
	fputs(".</p>\n", f);
	if (warn) {
		fputs("<p class=\"warn\">", f);
		esc(f, warn);
		fputs("</p>\n", f);
	}
}

/* summary.json's "lb" (the load balancer's counts of its decisions) as one
 * line, its counters in the order the file has them */
static void lb_para(FILE *f, const struct jkv *j)
{
	const char *scheme = jget(j, "lb.scheme");
	if (!scheme)
		return;
	fputs("<p class=\"lb\">Load balancer ", f);
	esc(f, scheme);
	fputs(", decisions counted over the run:", f);
	bool first = true;
	for (size_t i = 0; i < j->n; i++) {
		const char *k = j->k[i];
		if (strncmp(k, "lb.", 3) || !strcmp(k, "lb.scheme"))
			continue;
		fputs(first ? " " : ", ", f);
		esc(f, k + 3);
		fputc(' ', f);
		esc(f, j->v[i]);
		first = false;
	}
	fputs(".</p>\n", f);
}

/* A run's flows: how many completed, and FCT and slowdown by size. */
static void flows_section(FILE *f, const struct jkv *jp)
{
	const char *cnt = jget(jp, "flows.count"), *done = jget(jp, "flows.completed");
	fputs("<h2 id=\"flows\">Flows</h2>\n<p>", f);
	esc(f, done ? done : "?");
	fputs(" of ", f);
	esc(f, cnt ? cnt : "?");
	fputs(" flows completed.</p>\n", f);
	if (cnt && done && strcmp(cnt, done))
		fputs("<p class=\"warn\">Some flows did not complete before the run stopped: "
		      "they count in no FCT or slowdown below, and their finish, FCT and slowdown "
		      "are empty in flows.csv (delivered_bytes says how far each got). Time-series "
		      "experiments stop on purpose; their result is in the plots.</p>\n",
		      f);
	size_t nb = 0;
	char k[128];
	for (;; nb++) {
		snprintf(k, sizeof k, "flows.by_size[%zu].bucket", nb);
		if (!jget(jp, k))
			break;
	}
	fprintf(f,
		"<div class=\"wide\"><table class=\"flows\" data-rows=\"%zu\">\n<tr><th>size"
		"</th><th>flows</th><th>FCT mean (us)</th><th>FCT p50 (us)</th><th>FCT p99 (us)"
		"</th><th>FCT max (us)</th><th>slowdown mean</th><th>slowdown p99</th><th>"
		"slowdown max</th></tr>\n",
		nb + 1);
	for (size_t b = 0; b < nb; b++) {
		char p[64];
		snprintf(p, sizeof p, "flows.by_size[%zu]", b);
		snprintf(k, sizeof k, "%s.bucket", p);
		flow_row(f, jp, p, jget(jp, k));
	}
	flow_row(f, jp, "flows", "all");
	fputs("</table></div>\n", f);
}

static int run_page(FILE *f, const char *dir, const char *up)
{
	char path[4600];
	snprintf(path, sizeof path, "%s/summary.json", dir);
	char *js = slurp(path, NULL);
	struct jkv j = { 0 };
	if (js)
		jvalue(js, "", &j, 0);
	const char *name = jget(&j, "name");
	page_begin(f, name ? name : dir);
	if (up) {
		fputs("<nav><a href=\"../report.html\">&larr; the sweep (", f);
		esc(f, up);
		fputs(")</a></nav>\n", f);
	}
	fputs("<h1>", f);
	esc(f, name ? name : dir);
	fputs("</h1>\n<p class=\"sub\">", f);
	const char *tp = jget(&j, "transport"), *topo = jget(&j, "topology.type"),
		   *hosts = jget(&j, "topology.hosts"), *wl = jget(&j, "workload"),
		   *seed = jget(&j, "seed"), *ver = jget(&j, "mpsim_version"),
		   *simt = jget(&j, "run.sim_time_us");
	/* what summary.json says is text like any other: a hand-made one may say anything */
	const char *const sub[] = { tp ? tp : "?",	 " on ",
				    topo ? topo : "?",	 " (",
				    hosts ? hosts : "?", " hosts), workload ",
				    wl ? wl : "?",	 ", seed ",
				    seed ? seed : "?" };
	for (size_t i = 0; i < sizeof sub / sizeof *sub; i++)
		esc(f, sub[i]);
	fprintf(f, "; simulated %.1f us; mpsim ", simt ? strtod(simt, NULL) : NAN);
	esc(f, ver ? ver : "?");
	fputs("</p>\n<nav><a href=\"#flows\">flows</a><a href=\"#plots\">plots</a>"
	      "<a href=\"#network\">network</a><a href=\"#config\">configuration</a>"
	      "<a href=\"#files\">files</a></nav>\n",
	      f);
	flows_section(f, &j);
	load_para(f, &j);
	lb_para(f, &j);
	if (jget(&j, "collectives.count")) {
		fputs("<h3>Collectives</h3>\n", f);
		kv_table(f, &j, "collectives.", "collectives");
	}
	if (jget(&j, "training.ranks")) { /* the bars per layer are among the plots */
		fputs("<h3>Training</h3>\n<p>The iteration, its slowest rank and what that rank "
		      "waited for longest; per rank, layer and phase in training.csv.</p>\n",
		      f);
		kv_table(f, &j, "training.", "training");
	}
	paper_section(f, dir);
	fputs("<h2 id=\"plots\">Plots</h2>\n", f);
	figures(f, dir, "");
	fputs("<h2 id=\"network\">Network</h2>\n", f);
	kv_table(f, &j, "network.", "network");
	fputs("<h3>Ports by group</h3>\n", f);
	ports_table(f, &j);
	fputs("<h3>Run</h3>\n", f);
	kv_table(f, &j, "run.", "run");
	snprintf(path, sizeof path, "%s/config.yaml", dir);
	char *cfg = slurp(path, NULL);
	fputs("<h2 id=\"config\">Effective configuration</h2>\n<details><summary>config.yaml "
	      "(every option, defaults filled in)</summary><pre>",
	      f);
	esc(f, cfg ? cfg : "(missing)");
	fputs("</pre></details>\n", f);
	mp_free(cfg);
	files_table(f, dir);
	fputs("</body></html>\n", f);
	jkv_free(&j);
	mp_free(js);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sweep_page(FILE *f, const char *dir)
{
	const char *base = strrchr(dir, '/');
	base = base && base[1] ? base + 1 : dir;
	char path[4600];
	struct csv t;
	snprintf(path, sizeof path, "%s/sweep.csv", dir);
	bool have = csv_read(path, &t);
	/* the experiment's name, from the first point's summary */
	struct jkv j = { 0 };
	char *js = NULL;
	if (have && t.nrows) {
		snprintf(path, sizeof path, "%s/%s/summary.json", dir, csv_at(&t, 0, 0));
		if ((js = slurp(path, NULL)) != NULL)
			jvalue(js, "", &j, 0);
	}
	const char *name = jget(&j, "name") ? jget(&j, "name") : base;
	page_begin(f, name);
	fputs("<h1>", f);
	esc(f, name);
	fputs("</h1>\n<p class=\"sub\">A sweep over ", f);
	for (size_t c = 1; have && c < t.ncols && strcmp(t.head[c], "flows"); c++) {
		fputs(c > 1 ? ", " : "", f);
		esc(f, t.head[c]);
	}
	fprintf(f, ": %zu points, each its own results folder (listed below).</p>\n<nav>",
		have ? t.nrows : 0);
	/* only the sections this page has: a sweep without a paper section has none */
	snprintf(path, sizeof path, "%s/paper.csv", dir);
	if (access(path, F_OK) == 0)
		fputs("<a href=\"#paper\">paper</a>", f);
	fputs(have ? "<a href=\"#plots\">plots</a><a href=\"#table\">table</a>"
		   : "<a href=\"#plots\">plots</a>",
	      f);
	fputs("<a href=\"#points\">points</a><a href=\"#files\">files</a></nav>\n", f);
	paper_section(f, dir);
	fputs("<h2 id=\"plots\">Plots</h2>\n", f);
	figures(f, dir, "");
	if (have) {
		/* the swept keys and every metric with a value somewhere */
		int *cols = mp_malloc(t.ncols * sizeof *cols);
		size_t nc = 0;
		for (size_t c = 0; c < t.ncols; c++) {
			bool any = c == 0;
			for (size_t r = 0; r < t.nrows && !any; r++)
				any = strcmp(csv_at(&t, r, c), "nan") != 0;
			if (any)
				cols[nc++] = (int)c;
		}
		fputs("<h2 id=\"table\">Every point</h2>\n<p>sweep.csv without the columns that "
		      "have no value at any point; times in us, sizes in MB, rates in Gb/s.</p>\n",
		      f);
		csv_table(f, &t, cols, nc, "sweep", false);
		mp_free(cols);
	}
	/* the points' folders */
	char **pts = NULL;
	size_t np = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		snprintf(path, sizeof path, "%s/%s/summary.json", dir, de->d_name);
		if (de->d_name[0] != '.' && access(path, F_OK) == 0) {
			pts = mp_realloc(pts, (np + 1) * sizeof *pts);
			pts[np++] = mp_strdup(de->d_name);
		}
	}
	if (d)
		closedir(d);
	if (np) /* qsort's array must not be null, even for no element */
		qsort(pts, np, sizeof *pts, cmp_str);
	fprintf(f,
		"<h2 id=\"points\">Points</h2>\n<table class=\"points\" data-rows=\"%zu\">\n"
		"<tr><th>point</th><th>its report</th></tr>\n",
		np);
	for (size_t i = 0; i < np; i++) {
		fputs("<tr><td>", f);
		esc(f, pts[i]);
		fputs("</td><td><a href=\"", f);
		url(f, pts[i]);
		fputs("/report.html\">", f);
		esc(f, pts[i]);
		fputs("/report.html</a></td></tr>\n", f);
		mp_free(pts[i]);
	}
	fputs("</table>\n", f);
	mp_free(pts);
	jkv_free(&j);
	mp_free(js);
	files_table(f, dir);
	fputs("</body></html>\n", f);
	if (have)
		csv_free(&t);
}

/* The page written at tmp renamed to path; on any failure nothing is left. */
static int commit_page(FILE *f, const char *tmp, const char *path, struct mp_err *e)
{
	if (results_fclose(f, path, e)) {
		remove(tmp);
		return e->status;
	}
	if (rename(tmp, path) != 0) {
		int err = errno;
		remove(tmp);
		return mp_errf(e, MP_EIO, "cannot rename '%s' to '%s': %s", tmp, path,
			       strerror(err));
	}
	return MP_OK;
}

static int write_page(const char *dir, bool sweep, const char *up, struct mp_err *e)
{
	char path[4600], tmp[4700];
	snprintf(path, sizeof path, "%s/report.html", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return mp_errf(e, MP_EIO, "cannot write '%s': %s", tmp, strerror(errno));
	if (sweep)
		sweep_page(f, dir);
	else
		run_page(f, dir, up);
	return commit_page(f, tmp, path, e);
}

int report_dir(const char *dir, struct mp_err *e)
{
	char path[4600];
	snprintf(path, sizeof path, "%s/sweep.csv", dir);
	bool sweep = access(path, F_OK) == 0;
	snprintf(path, sizeof path, "%s/summary.json", dir);
	if (!sweep && access(path, F_OK) != 0)
		return mp_errf(e, MP_EUSER,
			       "'%s' is not an mpsim results folder (expected summary.json or "
			       "sweep.csv in it)",
			       dir);
	if (write_page(dir, sweep, NULL, e) || !sweep)
		return e->status;
	const char *base = strrchr(dir, '/');
	base = base && base[1] ? base + 1 : dir;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		snprintf(path, sizeof path, "%s/%s/summary.json", dir, de->d_name);
		if (de->d_name[0] == '.' || access(path, F_OK) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (write_page(path, false, base, e))
			break;
	}
	if (d)
		closedir(d);
	return e->status;
}

/* ---- the experiments' index ---- */

struct exp_entry {
	char *file, *group, *name, *source, *about;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct exp_entry *)a)->file, ((const struct exp_entry *)b)->file);
}

/* the first comment lines of a file (its header), joined */
static char *header_comment(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], *out = mp_calloc(1, 1);
	size_t n = 0;
	for (int k = 0; f && k < 3 && fgets(line, sizeof line, f) && line[0] == '#'; k++) {
		char *s = line + 1;
		while (*s == ' ')
			s++;
		size_t l = strcspn(s, "\n");
		out = mp_realloc(out, n + l + 2);
		memcpy(out + n, s, l);
		n += l;
		/* a compound broken after its hyphen ("Congestion-" / "Aware") is
		 * joined whole */
		if (!(l > 1 && s[l - 1] == '-' && isalpha((unsigned char)s[l - 2])))
			out[n++] = ' ';
		out[n] = '\0';
	}
	if (f)
		fclose(f);
	return out;
}

static void scan_experiments(const char *dir, const char *group, struct exp_entry **v, size_t *n,
			     int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4600];
	while (d && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth < 2) {
			scan_experiments(path, de->d_name, v, n, depth + 1);
			continue;
		}
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".yaml"))
			continue;
		struct cfg_doc doc;
		struct mp_err e = { 0 };
		if (cfg_load_file(path, &doc, &e))
			continue;
		const struct cfg_node *nm = cfg_get(doc.root, "name");
		const struct cfg_node *pp = cfg_get(doc.root, "paper");
		const struct cfg_node *src = pp ? cfg_get(pp, "source") : NULL;
		*v = mp_realloc(*v, (*n + 1) * sizeof **v);
		(*v)[*n] = (struct exp_entry){
			.file = mp_strdup(path),
			.group = mp_strdup(group),
			.name = mp_strdup(nm && nm->kind == CFG_SCALAR ? nm->value : "experiment"),
			.source = mp_strdup(src && src->kind == CFG_SCALAR ? src->value : ""),
			.about = header_comment(path),
		};
		(*n)++;
		cfg_free(&doc);
	}
	if (d)
		closedir(d);
}

/* The index's heading: how many files, how many with results. */
static void index_intro(FILE *f, const struct exp_entry *v, size_t n, const char *expdir,
			const char *resdir)
{
	char path[4600];
	size_t have = 0;
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s/report.html", resdir, v[i].name);
		have += access(path, F_OK) == 0;
	}
	fputs("<h1>Experiments</h1>\n<p class=\"sub\">", f);
	fprintf(f, "%zu experiment files in ", n);
	esc(f, expdir);
	fprintf(f, "; %zu with results in ", have);
	esc(f, resdir);
	fputs(". Run one with <code>mpsim run FILE</code>; its results land in "
	      "<code>results/NAME/</code> and its line here links them.</p>\n",
	      f);
}

/* A group's heading and its table's header row; rows: its files. */
static void index_group(FILE *f, const char *group, size_t rows)
{
	fputs("<h2>", f);
	esc(f, *group ? group : "experiments");
	fprintf(f,
		"</h2>\n<table class=\"experiments\" data-rows=\"%zu\">\n<tr><th>file"
		"</th><th>what it reproduces</th><th>latest results</th><th>plots"
		"</th></tr>\n",
		rows);
}

/* An experiment's latest results: its report linked, with its time. */
static void index_results_cell(FILE *f, const struct exp_entry *x, const char *resdir)
{
	char path[4600];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s/report.html", resdir, x->name);
	if (stat(path, &st) == 0) {
		char when[64];
		struct tm tmv;
		localtime_r(&st.st_mtime, &tmv);
		strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tmv);
		fputs("<a href=\"", f);
		url(f, x->name);
		fputs("/report.html\">", f);
		esc(f, x->name);
		fprintf(f, "</a><br>%s", when);
	} else {
		fputs("not run yet", f);
	}
}

/* An experiment's two most telling figures, linked: a paper comparison,
 * else a queue over time. */
static void index_figures_cell(FILE *f, const struct exp_entry *x, const char *resdir)
{
	char path[4600];
	snprintf(path, sizeof path, "%s/%s/plots/figures.tsv", resdir, x->name);
	char *figs = slurp(path, NULL), *save = NULL, *names[64];
	size_t nf = 0;
	for (char *line = figs ? strtok_r(figs, "\n", &save) : NULL; line && nf < 64;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		if (tab)
			*tab = '\0';
		names[nf++] = line;
	}
	static const char *const pref[] = { "ratio_", "sweep_", "ts_queue", "ts_", "" };
	int shown = 0;
	bool used[64] = { false };
	for (size_t p = 0; p < sizeof pref / sizeof *pref && shown < 2; p++)
		for (size_t k = 0; k < nf && shown < 2; k++) {
			if (used[k] || strncmp(names[k], pref[p], strlen(pref[p])))
				continue;
			used[k] = true;
			shown++;
			fputs("<a href=\"", f);
			url(f, x->name);
			fputs("/plots/", f);
			url(f, names[k]);
			fputs(".svg\"><img src=\"", f);
			url(f, x->name);
			fputs("/plots/", f);
			url(f, names[k]);
			fputs(".png\" width=\"200\" alt=\"", f);
			esc(f, names[k]);
			fputs("\"></a> ", f);
		}
	mp_free(figs);
}

/* One experiment's row: its file, what it reproduces, results, figures. */
static void index_row(FILE *f, const struct exp_entry *x, const char *resdir)
{
	const char *base = strrchr(x->file, '/');
	fputs("<tr><td>", f);
	esc(f, base ? base + 1 : x->file);
	fputs("</td><td>", f);
	esc(f, x->about);
	if (*x->source) {
		fputs("<br><i>paper: ", f);
		esc(f, x->source);
		fputs("</i>", f);
	}
	fputs("</td><td>", f);
	index_results_cell(f, x, resdir);
	fputs("</td><td>", f);
	index_figures_cell(f, x, resdir);
	fputs("</td></tr>\n", f);
}

static void entries_free(struct exp_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		mp_free(v[i].file);
		mp_free(v[i].group);
		mp_free(v[i].name);
		mp_free(v[i].source);
		mp_free(v[i].about);
	}
	mp_free(v);
}

int report_index(const char *expdir, const char *resdir, struct mp_err *e)
{
	struct exp_entry *v = NULL;
	size_t n = 0;
	struct stat st;
	if (stat(expdir, &st) != 0 || !S_ISDIR(st.st_mode))
		return mp_errf(e, MP_EUSER, "'%s' is not a folder of experiment files", expdir);
	scan_experiments(expdir, "", &v, &n, 1);
	if (!n)
		return mp_errf(e, MP_EUSER, "'%s' holds no experiment files (*.yaml)", expdir);
	qsort(v, n, sizeof *v, cmp_entry);
	if (mkdir(resdir, 0777) != 0 && errno != EEXIST)
		return mp_errf(e, MP_EIO, "cannot create '%s': %s", resdir, strerror(errno));
	char path[4600], tmp[4700];
	snprintf(path, sizeof path, "%s/index.html", resdir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return mp_errf(e, MP_EIO, "cannot write '%s': %s", tmp, strerror(errno));
	page_begin(f, "experiments");
	index_intro(f, v, n, expdir, resdir);
	const char *group = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!group || strcmp(group, v[i].group)) {
			if (group)
				fputs("</table>\n", f);
			group = v[i].group;
			size_t rows = 0;
			for (size_t j = i; j < n && !strcmp(v[j].group, group); j++)
				rows++;
			index_group(f, group, rows);
		}
		index_row(f, &v[i], resdir);
	}
	fputs("</table>\n</body></html>\n", f);
	entries_free(v, n);
	return commit_page(f, tmp, path, e);
}

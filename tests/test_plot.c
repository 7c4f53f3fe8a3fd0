/* test_plot.c - the gnuplot script of a results folder (src/io/plot.c) and
 * the report beside it (src/io/report.c), without drawing: a stand-in gnuplot
 * that does nothing is put first on PATH, and the script is read back.
 *
 * - A CDF's x axis is in the unit its data are written in: past 5 ms the
 *   values are in ms, and so must the tick step be (it was computed in us, a
 *   step of 500 on a 9-10.3 ms axis: the CDF a vertical line).
 * - Text from the folder's files reaches the script in single quotes only,
 *   and a file name never (a hostile time-series family).
 * - A write that fails (/dev/full) is an MP_EIO that says why, and leaves no
 *   half-written file; so is a figure gnuplot could not write (it says
 *   nothing and exits 0).
 * - A sweep's metric figure with more lines than a legend holds draws only
 *   the lines the paper gives values on, with their legend (the Proteus
 *   paper's Fig. 12a: five systems on Data Mining out of 28 lines).
 * - A sweep over many values of x writes their names upright, in a figure
 *   tall enough for them
 * - A ratio figure's y axis spans the lines it draws, not those it leaves
 *   out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mem.h"
#include "io/plot.h"
#include "io/report.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *rel)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	char *b = mp_calloc(1, 1 << 20);
	size_t n = fread(b, 1, (1 << 20) - 1, f);
	b[n] = '\0';
	fclose(f);
	return b;
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/mpsim_test_plot.XXXXXX");
	assert_non_null(mkdtemp(root));
	char p[256];
	snprintf(p, sizeof p, "%s/bin", root);
	assert_int_equal(mkdir(p, 0777), 0);
	snprintf(p, sizeof p, "%s/bin/gnuplot", root);
	/* what gnuplot would draw, as the ends of whole files (plot.c checks
	 * them); with $GP_EMPTY, empty files, as gnuplot leaves on a full disk */
	put("bin/gnuplot",
	    "#!/bin/sh\n"
	    "sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" \"$1\" | while read -r f; do\n"
	    "  if [ -n \"$GP_EMPTY\" ]; then : >\"$f\"\n"
	    "  elif [ \"${f%.png}\" != \"$f\" ]; then printf 'IEND\\256B`\\202' >\"$f\"\n"
	    "  else printf '</svg>\\n\\n' >\"$f\"; fi\n"
	    "done\n");
	assert_int_equal(chmod(p, 0755), 0);
	snprintf(p, sizeof p, "%s/bin:/usr/bin:/bin", root);
	setenv("PATH", p, 1);
	snprintf(p, sizeof p, "%s/r", root);
	assert_int_equal(mkdir(p, 0777), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* flows.csv of n flows whose FCTs run from lo_us to hi_us */
static void flows(size_t n, double lo_us, double hi_us)
{
	char p[256];
	snprintf(p, sizeof p, "%s/r/flows.csv", root);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("id,bytes,fct_us,slowdown,completed\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%zu,1000000,%.3f,1.5,1\n", i,
			lo_us + (hi_us - lo_us) * (double)i / (double)(n - 1));
	assert_int_equal(fclose(f), 0);
}

/* The figure `name` of plot.gp: its xlabel's unit and tick step, against the
 * range of the x values of its data file. */
static void check_cdf_axis(const char *name, const char *unit)
{
	char *gp = slurp("r/plots/plot.gp"), head[64], want[64], dat[96];
	assert_non_null(gp);
	snprintf(head, sizeof head, "\n# %s\n", name);
	const char *fig = strstr(gp, head);
	assert_non_null(fig);
	snprintf(want, sizeof want, "(%s)", unit);
	const char *xl = strstr(fig, "set xlabel ");
	assert_non_null(xl);
	assert_non_null(strstr(xl, want));
	assert_true(strstr(xl, want) < strchr(xl, '\n'));
	const char *xt = strstr(fig, "set xtics ");
	assert_non_null(xt);
	double step = strtod(xt + 10, NULL);
	snprintf(dat, sizeof dat, "r/plots/%s.dat", name);
	char *d = slurp(dat);
	assert_non_null(d);
	double lo = INFINITY, hi = -INFINITY;
	for (char *line = strtok(d, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		double x = strtod(line, NULL);
		lo = fmin(lo, x);
		hi = fmax(hi, x);
	}
	/* a handful of ticks over the data: not one, not dozens */
	assert_true(step > 0);
	assert_true((hi - lo) / step >= 2);
	assert_true((hi - lo) / step <= 12);
	mp_free(d);
	mp_free(gp);
}

static void test_fct_cdf_ms(void **state)
{
	(void)state;
	flows(32, 9113.46, 10262.4); /* experiments/strack/incast_32to1_strack.yaml */
	struct mp_err e = { 0 };
	char dir[128];
	snprintf(dir, sizeof dir, "%s/r", root);
	assert_int_equal(plot_dir(dir, false, &e), MP_OK);
	check_cdf_axis("fct_cdf", "ms");
}

static void test_fct_cdf_us(void **state)
{
	(void)state;
	flows(50, 12.5, 48.25);
	struct mp_err e = { 0 };
	char dir[128];
	snprintf(dir, sizeof dir, "%s/r", root);
	assert_int_equal(plot_dir(dir, false, &e), MP_OK);
	check_cdf_axis("fct_cdf", "us");
}

static void test_cct_cdf_ms(void **state)
{
	(void)state;
	flows(4, 10, 20);
	char p[256];
	snprintf(p, sizeof p, "%s/r/collectives.csv", root);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("job,iter,cct_us,completed\n", f);
	for (int i = 0; i < 16; i++)
		fprintf(f, "%d,0,%.3f,1\n", i, 20000.0 + 700.0 * i);
	assert_int_equal(fclose(f), 0);
	struct mp_err e = { 0 };
	char dir[128];
	snprintf(dir, sizeof dir, "%s/r", root);
	assert_int_equal(plot_dir(dir, false, &e), MP_OK);
	check_cdf_axis("cct_cdf", "ms");
	remove(p);
}

/* Names from timeseries.csv: a family that is no plain word names no file,
 * and every string of the script is single-quoted (the only double quotes
 * are those of "\n" joined into a title). */
static void test_hostile_names(void **state)
{
	(void)state;
	flows(4, 10, 20);
	put("r/timeseries.csv", "time_us,series,value\n"
				"1,../../x`touch pwned`:a'b\"c$(touch pwned2),1\n"
				"2,../../x`touch pwned`:a'b\"c$(touch pwned2),2\n"
				"1,\"queue_bytes:p\"\"q\nr\",5\n"
				"2,\"queue_bytes:p\"\"q\nr\",6\n");
	struct mp_err e = { 0 };
	char dir[128];
	snprintf(dir, sizeof dir, "%s/r", root);
	assert_int_equal(plot_dir(dir, false, &e), MP_OK);
	char *gp = slurp("r/plots/plot.gp");
	assert_non_null(gp);
	assert_non_null(strstr(gp, "set output 'ts_0.png'"));
	assert_non_null(strstr(gp, "title 'p\"q'.\"\\n\".'r'"));
	assert_null(strstr(gp, "ts_.."));
	/* blank out the joins ("\n") and the two names' own quotes: none is left */
	static const char *const ok[] = { "\"\\n\"", "p\"q", "b\"c" };
	for (size_t i = 0; i < 3; i++)
		for (char *q = gp; (q = strstr(q, ok[i])) != NULL;)
			memset(q, ' ', strlen(ok[i]));
	assert_null(strchr(gp, '"'));
	char *figs = slurp("r/plots/figures.tsv");
	assert_non_null(figs);
	for (char *line = strtok(figs, "\n"); line; line = strtok(NULL, "\n"))
		assert_non_null(strchr(line, '\t')); /* no caption broke its line */
	mp_free(figs);
	mp_free(gp);
	char p[256];
	snprintf(p, sizeof p, "%s/x`touch pwned`.dat", root);
	assert_int_not_equal(access(p, F_OK), 0);
	snprintf(p, sizeof p, "%s/r/timeseries.csv", root);
	remove(p);
}

/* folder `sub` of the test's root, made */
static void subdir(const char *sub)
{
	char p[256];
	snprintf(p, sizeof p, "%s/%s", root, sub);
	assert_int_equal(mkdir(p, 0777), 0);
}

/* folder `sub`, made, and its sweep.csv opened with the header `head`
 * written: the caller writes the rows and closes it */
static FILE *sweep_csv(const char *sub, const char *head)
{
	char p[256];
	subdir(sub);
	snprintf(p, sizeof p, "%s/%s/sweep.csv", root, sub);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(head, f);
	return f;
}

/* the figures of results folder `sub`: its plot.gp */
static char *plot_of(const char *sub)
{
	char p[256], gp[256];
	struct mp_err e = { 0 };
	snprintf(p, sizeof p, "%s/%s", root, sub);
	assert_int_equal(plot_dir(p, false, &e), MP_OK);
	snprintf(gp, sizeof gp, "%s/plots/plot.gp", sub);
	char *text = slurp(gp);
	assert_non_null(text);
	return text;
}

/* The block of plot.gp that draws figure `name`, cut at the next figure */
static char *figure_block(char *gp, const char *name)
{
	char head[64];
	snprintf(head, sizeof head, "\n# %s\n", name);
	char *fig = strstr(gp, head);
	assert_non_null(fig);
	char *next = strstr(fig + strlen(head), "\n# ");
	if (next)
		*next = '\0';
	return fig;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (; (s = strstr(s, what)) != NULL; s += strlen(what))
		n++;
	return n;
}

/* 7 systems x 2 workloads over 2 loads: 14 lines. The paper gives hol_flows
 * on two of them: its figure draws those two, with a legend; mean_fct, which
 * the paper does not give, keeps all 14 and no legend. */
static void test_sweep_paper_lines(void **state)
{
	(void)state;
	static const char *const sys[] = { "ecmp",   "conga",	"drill",  "hermes",
					   "mprdma", "proteus", "letflow" };
	FILE *f =
	    sweep_csv("s", "point,system,traffic,workload.load,mean_fct_us,hol_flows,status\n");
	int i = 0;
	for (size_t k = 0; k < 7; k++)
		for (int t = 0; t < 2; t++)
			for (int l = 0; l < 2; l++, i++)
				fprintf(f, "p%d,%s,%s,%s,%d,%g,\"ok\"\n", i, sys[k],
					t ? "mining" : "websearch", l ? "0.3" : "0.15", 100 + i,
					0.01 * i);
	assert_int_equal(fclose(f), 0);
	put("s/paper.csv",
	    "point,metric,unit,paper,ours,ours_over_paper,note\n"
	    "\"system=conga traffic=mining load=0.3\",hol_flows,,0.35,0.07,0.2,\"CONGA\"\n"
	    "\"system=drill traffic=mining load=0.3\",hol_flows,,0.19,0.11,0.58,\"DRILL\"\n");
	char *gp = plot_of("s");
	char *hol = figure_block(gp, "sweep_hol_flows");
	assert_int_equal(count(hol, "'sweep_hol_flows.dat' index"), 2);
	/* the lines keep their data blocks, their colours numbered afresh (conga
	 * mining is block 3, drill mining block 5), the paper's marks in them */
	assert_non_null(strstr(hol, "index 3 using 1:2 with linespoints lt 1"));
	assert_non_null(strstr(hol, "index 5 using 1:2 with linespoints lt 2"));
	char *marks = slurp("s/plots/sweep_hol_flows_paper.dat");
	assert_non_null(marks);
	assert_non_null(strstr(marks, "\n1 0.35 1\n1 0.19 2\n"));
	mp_free(marks);
	assert_non_null(strstr(hol, "title 'conga mining'"));
	assert_non_null(strstr(hol, "title 'drill mining'"));
	assert_null(strstr(hol, "unset key"));
	mp_free(gp);
	gp = slurp("s/plots/plot.gp");
	char *fct = figure_block(gp, "sweep_mean_fct");
	assert_int_equal(count(fct, "'sweep_mean_fct.dat' index"), 14);
	assert_non_null(strstr(fct, "unset key"));
	/* 2 values of x: their names at -30 degrees, if at all, not upright */
	assert_null(strstr(fct, "rotate by -90"));
	mp_free(gp);
}

/* A ratio figure draws the lines the paper gives ratios on, and its y range
 * is theirs: a line left out (b over a on y, 100x) does not make the axis
 * logarithmic (fig10_11.yaml's CONGA / Proteus drawn on 0.1-100). */
static void test_ratio_range(void **state)
{
	(void)state;
	subdir("q");
	put("q/sweep.csv", "point,system,traffic,workload.load,mean_fct_us,status\n"
			   "a-x-1,a,x,1,100,\"ok\"\na-x-2,a,x,2,100,\"ok\"\n"
			   "a-y-1,a,y,1,10,\"ok\"\na-y-2,a,y,2,10,\"ok\"\n"
			   "b-x-1,b,x,1,110,\"ok\"\nb-x-2,b,x,2,130,\"ok\"\n"
			   "b-y-1,b,y,1,1000,\"ok\"\nb-y-2,b,y,2,1000,\"ok\"\n");
	put("q/paper.csv",
	    "point,metric,unit,paper,ours,ours_over_paper,note,ratio_of,ratio_point\n"
	    "\"system=a traffic=x load=2\",\"mean_fct of system=b\",x,1.5,1.3,"
	    "0.87,\"b / a\",\"system\",\"b-x-2\"\n");
	char *gp = plot_of("q");
	char *fig = figure_block(gp, "ratio_0");
	assert_int_equal(count(fig, "'ratio_0.dat' index"), 1);
	assert_non_null(strstr(fig, "title 'a x'"));
	assert_null(strstr(fig, "logscale"));
	mp_free(gp);
}

/* A sweep over 20 values of x, named "point-00" to "point-19" (8
 * characters): the names upright and small under their ticks, the PNG taller
 * by the longest, room below for them (at -30 degrees 40 names ran into each
 * other). */
static void test_sweep_many_x(void **state)
{
	(void)state;
	FILE *f = sweep_csv("m", "point,point,mean_fct_us,status\n");
	for (int i = 0; i < 20; i++)
		fprintf(f, "point-%02d,point-%02d,%d,\"ok\"\n", i, i, 100 + 7 * i);
	assert_int_equal(fclose(f), 0);
	char *gp = plot_of("m");
	char *fig = figure_block(gp, "sweep_mean_fct");
	assert_non_null(strstr(fig, "set xtics rotate by -90 font ',7'\nset bmargin 6\n"));
	assert_non_null(strstr(fig, "size 680,480 "));
	assert_null(strstr(fig, "rotate by -30"));
	mp_free(gp);
}

/* A full disk: the write's error names the file and why, the command's
 * status is MP_EIO, and nothing half-written stays. */
static void test_full_disk(void **state)
{
	(void)state;
	if (access("/dev/full", W_OK) != 0)
		skip();
	flows(4, 10, 20);
	char dir[128], p[256];
	snprintf(dir, sizeof dir, "%s/r", root);
	snprintf(p, sizeof p, "%s/r/plots", root);
	mkdir(p, 0777);
	snprintf(p, sizeof p, "%s/r/plots/fct_cdf.dat", root);
	remove(p);
	assert_int_equal(symlink("/dev/full", p), 0);
	struct mp_err e = { 0 };
	assert_int_equal(plot_dir(dir, false, &e), MP_EIO);
	assert_non_null(strstr(e.msg, "fct_cdf.dat"));
	assert_non_null(strstr(e.msg, "No space left on device"));
	snprintf(p, sizeof p, "%s/r/plots/plot.gp", root);
	assert_int_not_equal(access(p, F_OK), 0); /* the figures of a failed run went */
	snprintf(p, sizeof p, "%s/r/plots/fct_cdf.dat", root);
	remove(p);
	/* gnuplot's figures empty */
	setenv("GP_EMPTY", "1", 1);
	mp_err_clear(&e);
	assert_int_equal(plot_dir(dir, false, &e), MP_EIO);
	unsetenv("GP_EMPTY");
	assert_non_null(strstr(e.msg, "fct_cdf.png"));
	snprintf(p, sizeof p, "%s/r/plots/fct_cdf.png", root);
	assert_int_not_equal(access(p, F_OK), 0);
	mp_err_clear(&e);
	assert_int_equal(plot_dir(dir, false, &e), MP_OK);
	assert_int_equal(access(p, F_OK), 0);
	/* the report: written as report.html.tmp, renamed */
	put("r/summary.json", "{\"name\": \"x\"}\n");
	snprintf(p, sizeof p, "%s/r/report.html.tmp", root);
	assert_int_equal(symlink("/dev/full", p), 0);
	mp_err_clear(&e);
	assert_int_equal(report_dir(dir, &e), MP_EIO);
	assert_non_null(strstr(e.msg, "report.html"));
	assert_non_null(strstr(e.msg, "No space left on device"));
	assert_int_not_equal(access(p, F_OK), 0);
	snprintf(p, sizeof p, "%s/r/report.html", root);
	assert_int_not_equal(access(p, F_OK), 0);
	snprintf(p, sizeof p, "%s/r/summary.json", root);
	remove(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fct_cdf_ms),   cmocka_unit_test(test_fct_cdf_us),
		cmocka_unit_test(test_cct_cdf_ms),   cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_full_disk),    cmocka_unit_test(test_sweep_paper_lines),
		cmocka_unit_test(test_sweep_many_x), cmocka_unit_test(test_ratio_range),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

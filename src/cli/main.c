/* main.c - the mpsim command: run, validate, list, --help, --version.
 * Exit status: 0 success, 2 a problem with the input (nothing was written),
 * 4 an I/O error while writing results, 3 an internal error (a bug). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "io/experiment.h"
#include "io/plot.h"
#include "io/report.h"
#include "io/results.h"
#include "sim/batch.h"
#include "sim/ranks.h"
#include "sim/threads.h"
#include "net/lb.h"
#include "net/switch.h"
#include "transport/transport.h"

static const char usage_text[] =
    "mpsim - a packet-level simulator for multipath transports, congestion control\n"
    "and load balancing in AI/ML datacenter fabrics\n"
    "\n"
    "USAGE\n"
    "  mpsim run EXPERIMENT.yaml [--out DIR] [--seed N] [--jobs N] [--set key.path=value ...]\n"
    "            [--only KEY=VALUE ...] [--resume]\n"
    "  mpsim validate EXPERIMENT.yaml [--set key.path=value ...]\n"
    "  mpsim plot RESULTS_DIR\n"
    "  mpsim index [EXPERIMENTS_DIR [RESULTS_DIR]]\n"
    "  mpsim list [topologies|transports|lbs|workloads|sections]\n"
    "  mpsim --help | --version\n"
    "\n"
    "COMMANDS\n"
    "  run       Check the experiment file, build the fabric and workload, simulate,\n"
    "            print a summary table and write a results folder (default\n"
    "            results/<name>) holding summary.json, flows.csv, timeseries.csv,\n"
    "            config.yaml (the effective configuration with every default filled\n"
    "            in), plots/ (when gnuplot is installed) and report.html.\n"
    "            The folder is written under a temporary name and renamed at the end,\n"
    "            so an interrupted run never leaves a complete-looking folder.\n"
    "            A file with a `sweep:` section runs every combination of the swept\n"
    "            values (--jobs at a time) into one folder per point, plus sweep.csv;\n"
    "            a `paper:` section prints the paper's numbers beside ours (paper.csv).\n"
    "  validate  Check the file and build the fabric and workload without running.\n"
    "  plot      Redraw a results folder's plots (gnuplot) and its report.html.\n"
    "  index     results/index.html: every experiment file, linked to its latest results.\n"
    "  list      Every topology, transport, load balancer and workload with each of its\n"
    "            parameters, unit, default and range.\n"
    "\n"
    "OPTIONS\n"
    "  --out DIR            results folder (an existing mpsim results folder is replaced;\n"
    "                       files in it that mpsim did not write are kept; a symbolic\n"
    "                       link is followed)\n"
    "  --seed N             override the experiment's seed\n"
    "  --set key.path=value override one option, e.g. --set topology.leaves=4\n"
    "                       --set transport.entropy=rr (repeatable)\n"
    "  --jobs N, -j N       sweep points run at once (default: one per CPU; under\n"
    "                       mpirun -n R, one per rank: rank 0 hands out the points)\n"
    "  --threads N          a file without a sweep: its one run partitioned over N\n"
    "                       threads, with the same results as one thread (as\n"
    "                       mpirun -n N does over N ranks)\n"
    "  --quiet              no summary table\n"
    "  --resume             keep what an earlier run into the same folder completed\n"
    "                       with the same configuration; run only the points of a\n"
    "                       sweep that are missing or failed\n"
    "  --only KEY=VALUE     run only a sweep's points where swept KEY has VALUE\n"
    "                       (repeatable: values of one key, any; of several keys,\n"
    "                       all); with --resume, add them to an earlier run's folder\n"
    "  --no-plots           no plots at the end of a run (report.html is still written)\n"
    "  --progress           a plain progress line, also without a terminal (batch logs)\n"
    "\n"
    "UNITS\n"
    "  sizes  4000, 4KB (1000), 4KiB (1024), 16MB, 1GiB\n"
    "  rates  400Gbps, 100Mbps, 1.6Tbps (bit/s)\n"
    "  times  8us, 1.5ms, 100ns, 250ps, 2s (a unit is required)\n"
    "\n"
    "EXIT STATUS\n"
    "  0 success; 2 bad input (a sentence names file:line, the key and what was expected;\n"
    "  nothing is written); 4 results could not be written; 3 internal error. A sweep\n"
    "  whose points did not all complete exits with the first failure's status and\n"
    "  keeps the points that did (sweep.csv's status column says what happened).\n"
    "\n"
    "ENVIRONMENT\n"
    "  MPSIM_MEM_LIMIT      memory an experiment may plan for (e.g. 8GiB); default: the\n"
    "                       machine's memory or the process's and cgroup's limits\n"
    "  MPSIM_ABORT=1        an internal error aborts (core dump) instead of exit 3\n"
    "\n"
    "Simulated time is integer picoseconds; a run is deterministic for a given file and\n"
    "seed. See README.md for a tour of the experiment files.\n";

static const char run_usage[] =
    "usage: mpsim run EXPERIMENT.yaml [--out DIR] [--seed N] [--jobs N] [--set key.path=value "
    "...]\n"
    "                 [--threads N] [--quiet] [--no-plots] [--progress] [--resume]\n"
    "                 [--only KEY=VALUE ...]\n"
    "  Check the experiment file (every sweep point first), simulate, print the summary\n"
    "  table (and the paper's numbers beside ours) and write the results folder\n"
    "  (default results/<name>): summary.json, flows.csv, ports.csv, timeseries.csv,\n"
    "  config.yaml, paper.csv, sweep.csv for a sweep, plots/ (PNG and SVG, when gnuplot\n"
    "  is installed) and report.html, one page with all of it.\n"
    "\n"
    "  --out DIR            results folder (an existing mpsim results folder is replaced)\n"
    "  --seed N             override the experiment's seed\n"
    "  --set key.path=value override one option, e.g. --set topology.leaves=4 (repeatable)\n"
    "  --jobs N, -j N       sweep points run at once (default: one per CPU; under\n"
    "                       mpirun -n R, one per rank: rank 0 hands out the points)\n"
    "  --threads N          a file without a sweep: its one run partitioned over N\n"
    "                       threads, with the same results as one thread\n"
    "  --quiet, -q          no summary table\n"
    "  --resume             keep the points an earlier run into the folder completed\n"
    "  --only KEY=VALUE     only a sweep's points where swept KEY has VALUE (repeatable)\n"
    "  --no-plots           skip the plots (report.html is still written)\n"
    "  --progress           a plain progress line every 10 s, also without a terminal\n"
    "                       (batch logs); each names its sweep point\n"
    "  Exit status: 0 success, 2 bad input (nothing is written), 4 results could not be\n"
    "  written, 3 internal error. `mpsim list` shows every option of every section.\n";

static const char validate_usage[] =
    "usage: mpsim validate EXPERIMENT.yaml [--seed N] [--set key.path=value ...]\n"
    "  Check the file and every sweep point, build the fabric and the workload, and\n"
    "  print one line per point (hosts, switches, links, flows); nothing runs and\n"
    "  nothing is written. A mistake prints one sentence naming file:line, the key and\n"
    "  what was expected, with exit status 2.\n";

static const char index_usage[] =
    "usage: mpsim index [EXPERIMENTS_DIR [RESULTS_DIR]]\n"
    "  Write RESULTS_DIR/index.html (default results/index.html): every experiment file\n"
    "  under EXPERIMENTS_DIR (default experiments), what it reproduces, and a link to\n"
    "  its latest results' report.html with its first plots.\n";

static const char plot_usage[] =
    "usage: mpsim plot RESULTS_DIR\n"
    "  Draw the plots of a results folder (a run or a sweep, with its points) into\n"
    "  RESULTS_DIR/plots/ (PNG and SVG, with the gnuplot script and its data) and\n"
    "  write RESULTS_DIR/report.html. Needs gnuplot (Debian package " PLOT_GNUPLOT_PACKAGE ");\n"
    "  exit status 2 when it is missing or the folder is not a results folder.\n";

static void list_table(const char *kind, const char *name, const char *summary,
		       const struct opt_desc *opts)
{
	printf("%s %s\n    %s\n", kind, name, summary);
	if (opts && opts->name)
		opt_print_table(stdout, opts, "    ");
	else
		printf("    (no parameters)\n");
	printf("\n");
}

static int cmd_list(const char *what)
{
	bool all = !what;
	if (all || !strcmp(what, "sections")) {
		printf("== experiment file sections ==\n\n");
		list_table("top level", "(name, seed, stop_time, time_limit)", "general settings",
			   exp_general_opts);
		list_table("section", "switch", "shared buffer, ECN and PFC of every switch",
			   swcfg_opts);
		list_table("section", "failures", "links down from t=0, and per-packet loss",
			   exp_failures_opts);
		list_table("section", "output", "time series", exp_output_opts);
		list_table("section", "collective",
			   "collective jobs (the workload section becomes optional): message DAGs "
			   "over the ccl's queue pairs",
			   coll_opts);
		list_table("section", "server",
			   "GPUs per server and the intra-node fabric (NVLink / xGMI) that carries "
			   "the collective layer's messages between them",
			   intra_opts);
		printf("section ccl: type\n    the collective layer's queue pairs and how a "
		       "message is spread over them\n\n");
		for (const struct ccl_sched_ops *const *o = ccl_registry; *o; o++)
			list_table("ccl", (*o)->name, (*o)->summary, (*o)->opts);
		printf("section events\n    a sequence of {at: TIME, link: a-b, action: "
		       "down|up|rate|delay|loss, value: ...}\n\n");
	}
	if (all || !strcmp(what, "topologies")) {
		printf("== topology: type ==\n\n");
		for (const struct topo_ops *const *o = topo_registry; *o; o++)
			list_table("topology", (*o)->name, (*o)->summary, (*o)->opts);
	}
	if (all || !strcmp(what, "transports")) {
		printf("== transport: type ==\n\n");
		for (const struct transport_ops *const *o = transport_registry; *o; o++)
			list_table("transport", (*o)->name, (*o)->summary, (*o)->opts);
	}
	if (all || !strcmp(what, "lbs")) {
		printf("== lb: type ==\n\n");
		for (const struct lb_ops *const *o = lb_registry; *o; o++) {
			list_table("lb", (*o)->name, (*o)->summary, (*o)->opts);
			const struct lb_counter *c = (*o)->counters;
			if (!c || !c->name)
				continue;
			printf("    counted in summary.json's lb:\n");
			for (; c->name; c++)
				printf("      %-10s %s\n", c->name, c->what);
			printf("\n");
		}
	}
	if (all || !strcmp(what, "workloads")) {
		printf("== workload: type ==\n\n");
		for (const struct workload_ops *const *o = workload_registry; *o; o++)
			list_table("workload", (*o)->name, (*o)->summary, (*o)->opts);
	}
	if (!all && strcmp(what, "sections") && strcmp(what, "topologies") &&
	    strcmp(what, "transports") && strcmp(what, "lbs") && strcmp(what, "workloads")) {
		fprintf(stderr,
			"mpsim list: unknown category '%s' (expected topologies, "
			"transports, lbs, workloads or sections)\n",
			what);
		return 2;
	}
	return 0;
}

struct args {
	const char *cmd, *file, *out;
	int64_t seed;
	char **sets, **only;
	size_t nsets, nonly;
	unsigned jobs, threads;
	bool quiet, resume, no_plots, progress, help;
};

/* *x = option s's value v, a whole number from 1 to max; else a sentence
 * and -1 */
static int parse_count(const char *s, const char *v, unsigned long max, const char *what,
		       unsigned *x)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);
	if (*end || end == v || *v == '-' || n < 1 || n > max) {
		fprintf(stderr, "mpsim: %s: expected %s from 1 to %lu, got '%s'\n", s, what, max,
			v);
		return -1;
	}
	*x = (unsigned)n;
	return 0;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	memset(a, 0, sizeof *a);
	a->cmd = argv[1];
	a->seed = -1;
	a->sets = mp_calloc((size_t)argc, sizeof *a->sets);
	a->only = mp_calloc((size_t)argc, sizeof *a->only);
	for (int i = 2; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "--out") || !strcmp(s, "--seed") || !strcmp(s, "--set") ||
		    !strcmp(s, "--jobs") || !strcmp(s, "-j") || !strcmp(s, "--threads") ||
		    !strcmp(s, "--only")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "mpsim: %s needs a value\n", s);
				return 2;
			}
			const char *v = argv[++i];
			if (!strcmp(s, "--out")) {
				/* a control character (a newline) in a folder name would
				 * break every file that lists it (CSV, the report, the
				 * plot scripts) and every log line that names it */
				for (const char *c = v; *c; c++)
					if ((unsigned char)*c < 0x20 || *c == 0x7f) {
						fprintf(stderr,
							"mpsim: --out: expected a folder name "
							"without control characters, got one "
							"(byte 0x%02x) at position %zu\n",
							(unsigned)(unsigned char)*c,
							(size_t)(c - v) + 1);
						return 2;
					}
				if (!*v) {
					fprintf(stderr, "mpsim: --out: expected a folder name, "
							"got an empty one\n");
					return 2;
				}
				a->out = v;
			} else if (!strcmp(s, "--jobs") || !strcmp(s, "-j")) {
				if (parse_count(s, v, 4096, "a number of parallel runs", &a->jobs))
					return 2;
			} else if (!strcmp(s, "--threads")) {
				if (parse_count(s, v, THREADS_MAX, "a number of partitions",
						&a->threads))
					return 2;
			} else if (!strcmp(s, "--seed")) {
				char *end;
				unsigned long long x = strtoull(v, &end, 10);
				if (*end || end == v || *v == '-' || x > INT64_MAX) {
					fprintf(stderr,
						"mpsim: --seed: expected a non-negative "
						"integer, got '%s'\n",
						v);
					return 2;
				}
				a->seed = (int64_t)x;
			} else if (!strcmp(s, "--only")) {
				a->only[a->nonly++] = (char *)v;
			} else {
				a->sets[a->nsets++] = (char *)v;
			}
		} else if (!strncmp(s, "--set=", 6)) {
			a->sets[a->nsets++] = (char *)s + 6;
		} else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
			a->quiet = true;
		} else if (!strcmp(s, "--resume")) {
			a->resume = true;
		} else if (!strcmp(s, "--no-plots")) {
			a->no_plots = true;
		} else if (!strcmp(s, "--progress")) {
			a->progress = true;
		} else if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
			a->help = true;
			return 0;
		} else if (s[0] == '-') {
			fprintf(stderr, "mpsim: unknown option '%s' (see mpsim --help)\n", s);
			return 2;
		} else if (!a->file) {
			a->file = s;
		} else {
			fprintf(stderr, "mpsim: unexpected argument '%s' (see mpsim --help)\n", s);
			return 2;
		}
	}
	if (!a->file) {
		fprintf(stderr, "mpsim %s: an experiment file is required (see mpsim --help)\n",
			a->cmd);
		return 2;
	}
	return 0;
}

static int cmd_run(struct args *a, bool run)
{
	struct batch_args b = { .file = a->file,
				.out = a->out,
				.sets = a->sets,
				.nsets = a->nsets,
				.seed = a->seed,
				.jobs = a->jobs,
				.threads = a->threads,
				.quiet = a->quiet,
				.resume = a->resume,
				.no_plots = a->no_plots,
				.progress = a->progress,
				.only = a->only,
				.nonly = a->nonly,
				.run = run };
	return batch_main(&b);
}

static int cmd_plot(int argc, char **argv)
{
	if (argc != 3 || argv[2][0] == '-') {
		bool help = argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"));
		fputs(plot_usage, help ? stdout : stderr);
		return help ? 0 : 2;
	}
	struct mp_err e = { 0 };
	if (plot_dir(argv[2], true, &e) || report_dir(argv[2], &e)) {
		fprintf(stderr, "mpsim plot: %s\n", e.msg);
		return e.status;
	}
	printf("plots in %s/plots/, report in %s/report.html\n", argv[2], argv[2]);
	return 0;
}

static int cmd_index(int argc, char **argv)
{
	if (argc > 4 || (argc > 2 && argv[2][0] == '-')) {
		bool help = argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"));
		fputs(index_usage, help ? stdout : stderr);
		return help ? 0 : 2;
	}
	const char *exp = argc > 2 ? argv[2] : "experiments", *res = argc > 3 ? argv[3] : "results";
	struct mp_err e = { 0 };
	if (report_index(exp, res, &e)) {
		fprintf(stderr, "mpsim index: %s\n", e.msg);
		return e.status;
	}
	printf("%s/index.html\n", res);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("mpsim %s\n", MPSIM_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "list")) {
		if (argc > 3) {
			fprintf(stderr, "mpsim list: takes at most one category\n");
			return 2;
		}
		return cmd_list(argc == 3 ? argv[2] : NULL);
	}
	if (!strcmp(cmd, "plot"))
		return cmd_plot(argc, argv);
	if (!strcmp(cmd, "index"))
		return cmd_index(argc, argv);
	if (strcmp(cmd, "run") && strcmp(cmd, "validate")) {
		fprintf(stderr,
			"mpsim: unknown command '%s' (expected run, validate, plot, index or list; "
			"see mpsim --help)\n",
			cmd);
		return 2;
	}
	/* a closed stdout (mpsim run ... | head) must not kill a run and its
	 * results: writes to it fail quietly instead */
	signal(SIGPIPE, SIG_IGN);
	/* started by mpirun (or another MPI launcher) with several ranks: a
	 * sweep's points spread over them (sim/batch.c); one rank is a plain run */
	int rank = 0;
	char var[64];
	if (ranks_launched(&rank, var, sizeof var) > 1) {
		char lib[128];
		if (!ranks_built(lib, sizeof lib)) {
			if (rank == 0)
				fprintf(stderr,
					"mpsim: started by an MPI launcher as one of several ranks "
					"(%s), but this mpsim was built without MPI, so every rank "
					"would run the whole experiment into the same folder; "
					"expected an mpsim built with MPI (scripts/deps.sh --mpi, "
					"then make build), or a run without mpirun (--jobs N runs "
					"a sweep's points on this machine's cores)\n",
					var);
			return 2;
		}
		if (ranks_init(&argc, &argv))
			return 3;
	}
	struct args a;
	int rc = parse_args(argc, argv, &a);
	if (!rc && a.help)
		fputs(!strcmp(cmd, "run") ? run_usage : validate_usage, stdout);
	else if (!rc)
		rc = cmd_run(&a, !strcmp(cmd, "run"));
	mp_free(a.sets);
	mp_free(a.only);
	ranks_finalize();
	return rc;
}

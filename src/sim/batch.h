/* batch.h - what `mpsim run` and `mpsim validate` do with one experiment
 * file: check every point of its sweep before anything runs, run the points
 * (several at a time in child processes), write the results folder, and print
 * the tables, with the paper's numbers beside ours when the file has them.
 *
 * Without a sweep the results folder is the single run's; with one it holds a
 * folder per point, sweep.csv (one row per point: swept values and metrics)
 * and paper.csv. Either way it appears only when everything is written; a
 * sweep point that fails (an error, a signal) does not take the others down:
 * the folder holds the points that completed and sweep.csv's status column
 * says what happened to each of the others (--resume reruns only those).
 */
#ifndef MPSIM_SIM_BATCH_H
#define MPSIM_SIM_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct batch_args {
	const char *file, *out;
	char **sets;
	size_t nsets;
	int64_t seed;	  /* -1: the file's */
	unsigned jobs;	  /* points run at once; 0 = one per online CPU */
	unsigned threads; /* > 1: a run without a sweep partitioned over threads */
	bool quiet;
	bool run;      /* false: validate only */
	bool resume;   /* keep what an earlier run of this file into the folder completed */
	bool no_plots; /* no figures at the end (report.html is still written) */
	bool progress; /* a plain progress line (for logs), even without a terminal */
	/* --only KEY=VALUE: a sweep's points to run (the others are not run;
	 * with several values of one key, any of them; of several keys, all) */
	char **only;
	size_t nonly;
};

/* Returns the exit status (0, 2 bad input, 3 internal, 4 I/O). */
int batch_main(const struct batch_args *a);

#endif

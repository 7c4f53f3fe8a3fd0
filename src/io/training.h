/* training.h - a training workload's results (chakra, simai): training.csv,
 * timeline.json (on request: output.timeline), summary.json's `training`
 * object and the summary table's line. Nothing is written for a run without
 * training records (result.h: run_result.train). */
#ifndef MPSIM_IO_TRAINING_H
#define MPSIM_IO_TRAINING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stats/result.h"

int training_write_csv(FILE *f, const struct run_result *r);
/* At most `max` events: those that start first (every rank's, up to one
 * time); *kept says how many were written. */
int training_write_timeline(FILE *f, const struct run_result *r, uint64_t max, size_t *kept);
void training_json(FILE *f, const struct run_result *r);
void training_print(FILE *f, const struct run_result *r);
/* What the slowest rank waited for longest, as a phrase. */
void training_waited(const struct run_result *r, char *buf, size_t n);

#endif

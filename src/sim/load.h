/* load.h - an open-loop workload's load, offered against measured, over its
 * statistics window (struct load_rec; load.c says how each figure is made).
 *
 * Counting costs the packet path nothing: two events of the runner snapshot
 * the ports' own transmitted-byte counters (port.tx_bytes, what ports.csv
 * reports) at the window's start and end.
 */
#ifndef MPSIM_SIM_LOAD_H
#define MPSIM_SIM_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stats/result.h"

struct sim;

/* At the end of sim_build: when the workload offers a load (workload_ops
 * .offered) and its window is not empty, schedule the two snapshots. */
void sim_load_setup(struct sim *s);
/* In sim_collect: fill r->load (valid = false when there is nothing to
 * report); a window the run did not reach the end of ends at the run's end. */
void sim_load_collect(struct sim *s, struct run_result *r);
void sim_load_free(struct sim *s);
/* A partitioned run's gathering (sim/part.c): port i's figures (i its index
 * in the fabric's port_mem), right on the rank that owns the port: its
 * transmitted bytes at the window's start and end, and its rate then. get
 * is false without a window. */
bool sim_load_port_get(const struct sim *s, uint32_t i, uint64_t v[3]);
void sim_load_port_set(struct sim *s, uint32_t i, const uint64_t v[3]);
/* The warning for a run whose fabric load fell short (l->low), to f,
 * prefixed by the sweep point's name when point is not empty. */
void sim_load_warn(FILE *f, const struct load_rec *l, const char *point);

#endif

/* plan.h - checks of what a run will need, made by sim_build before it
 * allocates or runs anything (sim/plan.c): memory estimated from counts
 * against mp_mem_limit(), packet numbers within 32 bits, a switch buffer that
 * holds a packet, a loss rate that lets a packet through. Each failure is a
 * sentence naming the key, the estimate and what fits, MP_EUSER. */
#ifndef MPSIM_SIM_PLAN_H
#define MPSIM_SIM_PLAN_H

#include "sim/run.h"

/* Before the topology is built. */
int sim_plan_fabric(const struct experiment *x, struct mp_err *e);
/* Before the workload is generated: how many flows fit (l->max_n). */
void sim_plan_flow_limit(const struct experiment *x, struct flow_list *l);
/* After it: the flows fit, in memory and in 32-bit packet numbers. */
int sim_plan_flows(const struct sim *s, const char *section, struct mp_err *e);
/* After the samplers are set up: the time series fits (to stop_time or
 * time_limit, or else to well past the workload's ideal end: it then sets
 * s->ts->max_rows, what the memory leaves them while the run goes on). */
int sim_plan_series(const struct sim *s, struct mp_err *e);

#endif

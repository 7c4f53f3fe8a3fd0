/* training.h - a training workload's records, gathered after the run. */
#ifndef MPSIM_SIM_TRAINING_H
#define MPSIM_SIM_TRAINING_H

#include "sim/run.h"

/* Fill r->train, r->train_names and r->training from the flow list's
 * activities (nothing when the workload recorded none). */
void sim_collect_training(struct sim *s, struct run_result *r);

#endif

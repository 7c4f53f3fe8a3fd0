/* training.c - a training workload's activities (workload.h: wl_act) as
 * the records of the run (result.h: train_rec), from the message DAG's
 * release and delivery times; then their summary (stats/training.c).
 *
 * Owns: sim_collect_training (sim/training.h).
 *
 * An activity starts `lead` before its `from` flow was released (a compute
 * marker is released its duration after its dependencies) and ends when its
 * `to` flow arrived. An activity that had not ended when the run stopped
 * (stop_time, time_limit) has no record.
 */
#include "sim/training.h"

#include "core/mem.h"
#include "workload/workload.h"

void sim_collect_training(struct sim *s, struct run_result *r)
{
	struct flow_list *fl = &s->flows;
	size_t k = 0;

	if (!fl->nacts)
		return;
	r->train = mp_calloc(fl->nacts, sizeof *r->train);
	for (size_t i = 0; i < fl->nacts; i++) {
		const struct wl_act *a = &fl->acts[i];
		/* a marker completes when released (at 0 too); a message when it arrives */
		bool ended = flow_is_marker(&fl->v[a->to]) ? s->rel_at[a->to] != SIMTIME_MAX
							   : s->rx_at[a->to] != 0;
		if (s->rel_at[a->from] == SIMTIME_MAX || !ended)
			continue;
		struct train_rec *v = &r->train[k++];
		v->rank = a->rank;
		v->iter = a->iter;
		v->layer_ix = a->layer_ix;
		v->layer = fl->names[a->layer];
		v->what = fl->names[a->what];
		v->phase = wl_phase_names[a->phase];
		v->comm = a->comm;
		v->start = s->rel_at[a->from] - a->lead;
		v->end = s->rx_at[a->to];
		if (a->sync != UINT32_MAX && s->rel_at[a->sync] != SIMTIME_MAX)
			v->peers = s->rel_at[a->sync] - v->start;
	}
	r->ntrain = k;
	/* the names move to the result, which outlives the flow list */
	r->train_names = fl->names;
	r->ntrain_names = fl->nnames;
	fl->names = NULL;
	fl->nnames = fl->names_cap = 0;
	train_summarise(r);
}

/* result.c - names of the port groups and freeing a run's records; see result.h. */
#include "stats/result.h"

#include <stdio.h>
#include <string.h>

#include "core/mem.h"

const char *const port_group_names[] = { "host_up",    "last_hop", "tier1_up",
					 "tier1_down", "tier2_up", "tier2_down",
					 "all",	       "fabric",   NULL };

void run_result_free(struct run_result *r)
{
	mp_free(r->ports);
	mp_free(r->flows);
	mp_free(r->colls);
	mp_free(r->qp_trace);
	mp_free(r->train);
	for (size_t i = 0; i < r->ntrain_names; i++)
		mp_free(r->train_names[i]);
	mp_free(r->train_names);
	mp_free(r->training.iter_end);
	ts_free(&r->ts);
	memset(r, 0, sizeof *r);
}

void load_warning(const struct load_rec *l, char *buf, size_t n)
{
	snprintf(buf, n,
		 "measured fabric load %.3f (%s) is %.0f%% below the %.3f that the nominal load "
		 "%.3f implies over [%.1f us, %.1f us): %s",
		 l->fabric, l->fabric_group >= 0 ? port_group_names[l->fabric_group] : "?",
		 100.0 * (1.0 - l->fabric / l->fabric_implied), l->fabric_implied, l->nominal,
		 time_to_us(l->from), time_to_us(l->until),
		 l->fabric_implied > 1.0
		     ? "more than the uplinks' capacity, the fabric is overloaded"
		     : "lengthen workload.duration and output.fct_from");
}

/* result.c - names of the port groups and freeing a run's records; see result.h. */
#include "stats/result.h"

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
	ts_free(&r->ts);
	memset(r, 0, sizeof *r);
}

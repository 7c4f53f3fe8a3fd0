/* all_to_all.c - all-to-all: every host sends `size` bytes to every other host,
 * all flows starting at `start` (n (n-1) flows; the shuffle phase of MapReduce
 * and the AlltoAll of expert-parallel training without a parallelism limit).
 *
 * Owns: all_to_all_workload_ops and its parameters.
 * Order: host s lists its flows to s+1, s+2, ... (mod n), so that a transport
 * that opens a host's flows in id order does not have every host start on
 * host 0 first.
 */
#include <stddef.h>
#include <stdint.h>

#include "workload/workload.h"

struct all_to_all_params {
	uint64_t size;	 /* bytes per (source, destination) pair */
	simtime_t start; /* ps */
	uint64_t hosts;	 /* use hosts 0..hosts-1; 0 = every host */
};

static const struct opt_desc all_to_all_opts[] = {
	{ .name = "size",
	  .type = OPT_SIZE,
	  .offset = offsetof(struct all_to_all_params, size),
	  .def = "1MB",
	  .min = 1,
	  .max = 1e15,
	  .help = "bytes each host sends to each other host" },
	{ .name = "hosts",
	  .type = OPT_UINT,
	  .offset = offsetof(struct all_to_all_params, hosts),
	  .def = "0",
	  .help = "use the first N hosts (0 = all hosts)" },
	{ .name = "start",
	  .type = OPT_TIME,
	  .offset = offsetof(struct all_to_all_params, start),
	  .def = "0",
	  .help = "start time of every flow" },
	OPT_END,
};

static int all_to_all_generate(const void *params, const struct wl_env *env, struct flow_list *out,
			       struct mp_err *e)
{
	const struct all_to_all_params *ap = params;
	uint32_t n;

	if (workload_host_count(ap->hosts, 2, env, &n, e))
		return MP_EUSER;
	if ((uint64_t)n * (n - 1) > UINT32_MAX)
		return mp_errf(e, MP_EUSER,
			       "hosts: expected at most 65536 hosts for all_to_all "
			       "(%u hosts make more than 2^32 flows)",
			       n);
	if (flow_list_reserve(out, (uint64_t)n * (n - 1), "hosts", e))
		return MP_EUSER;
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t k = 1; k < n; k++)
			flow_list_push(out, s, (s + k) % n, ap->size, ap->start);
	return MP_OK;
}

const struct workload_ops all_to_all_workload_ops = {
	.name = "all_to_all",
	.summary = "every host sends one flow to every other host at the same time",
	.opts = all_to_all_opts,
	.params_size = sizeof(struct all_to_all_params),
	.generate = all_to_all_generate,
};

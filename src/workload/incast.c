/* incast.c - N-to-1 incast: `senders` hosts each send `size` bytes to one
 * receiver, all at `start` (the partition/aggregate pattern of the DCTCP paper,
 * and the incast experiments of the HPCC, EQDS and STrack evaluations).
 *
 * Owns: incast_workload_ops and its parameters.
 * pick first: the first `senders` hosts other than the receiver, in index
 * order (hosts 1..N for receiver 0). pick random: a uniformly random set of
 * `senders` hosts other than the receiver (partial Fisher-Yates on the
 * workload stream), listed in host order.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/mem.h"
#include "core/rng.h"
#include "workload/workload.h"

enum incast_pick { INCAST_FIRST, INCAST_RANDOM };

struct incast_params {
	uint64_t senders;  /* number of sending hosts */
	uint64_t receiver; /* host index of the receiver */
	uint64_t size;	   /* bytes per sender */
	simtime_t start;   /* ps */
	int pick;	   /* enum incast_pick */
};

static const char *const incast_picks[] = { "first", "random", NULL };

static const struct opt_desc incast_opts[] = {
	{ .name = "senders",
	  .type = OPT_UINT,
	  .offset = offsetof(struct incast_params, senders),
	  .def = "8",
	  .min = 1,
	  .max = UINT32_MAX,
	  .help = "number of sending hosts" },
	{ .name = "receiver",
	  .type = OPT_UINT,
	  .offset = offsetof(struct incast_params, receiver),
	  .def = "0",
	  .min = 0,
	  .max = UINT32_MAX,
	  .help = "host index of the receiver" },
	{ .name = "size",
	  .type = OPT_SIZE,
	  .offset = offsetof(struct incast_params, size),
	  .def = "16MB",
	  .min = 1,
	  .max = 1e15,
	  .help = "bytes each sender sends" },
	{ .name = "start",
	  .type = OPT_TIME,
	  .offset = offsetof(struct incast_params, start),
	  .def = "0",
	  .help = "start time of every flow" },
	{ .name = "pick",
	  .type = OPT_ENUM,
	  .offset = offsetof(struct incast_params, pick),
	  .def = "first",
	  .help = "first: the lowest-numbered hosts other than the receiver; random: a random set",
	  .choices = incast_picks },
	OPT_END,
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int incast_generate(const void *params, const struct wl_env *env, struct flow_list *out,
			   struct mp_err *e)
{
	const struct incast_params *ip = params;
	uint32_t n = env->nhosts, k, rcv, *cand;

	if (ip->receiver >= n)
		return mp_errf(e, MP_EUSER, "receiver: expected a host index below %u, got %llu", n,
			       (unsigned long long)ip->receiver);
	if (ip->senders < 1 || ip->senders > (uint64_t)n - 1)
		return mp_errf(e, MP_EUSER,
			       "senders: expected 1 to %u (the hosts other than the "
			       "receiver), got %llu",
			       n - 1, (unsigned long long)ip->senders);
	k = (uint32_t)ip->senders;
	rcv = (uint32_t)ip->receiver;

	/* Candidates: every host but the receiver, in index order. */
	cand = mp_malloc((size_t)(n - 1) * sizeof(*cand));
	for (uint32_t h = 0, c = 0; h < n; h++)
		if (h != rcv)
			cand[c++] = h;
	if (ip->pick == INCAST_RANDOM) {
		struct mp_rng r;

		rng_init(&r, env->seed, RNG_WORKLOAD, WORKLOAD_STREAM(WORKLOAD_STREAM_INCAST, 0));
		rng_shuffle_head(&r, cand, n - 1, k);
		qsort(cand, k, sizeof(*cand), cmp_u32);
	}
	for (uint32_t i = 0; i < k; i++)
		flow_list_push(out, cand[i], rcv, ip->size, ip->start);
	mp_free(cand);
	return MP_OK;
}

const struct workload_ops incast_workload_ops = {
	.name = "incast",
	.summary = "N senders each send one flow to one receiver at the same time",
	.opts = incast_opts,
	.params_size = sizeof(struct incast_params),
	.generate = incast_generate,
};

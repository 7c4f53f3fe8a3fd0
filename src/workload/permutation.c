/* permutation.c - permutation traffic: every host sends one flow to exactly one
 * other host and receives exactly one (a derangement: no host sends to itself),
 * as in the permutation experiments of the NDP, EQDS and STrack evaluations
 * (htsim's connection_matrices/gen_permutation.py builds the same pattern).
 *
 * Owns: permutation_workload_ops and its parameters.
 *
 * locality any: a uniformly random derangement by rejection. A Fisher-Yates
 * shuffle fixes one position per step; the shuffle is abandoned as soon as a
 * position is fixed to itself ("early refusal") and restarted. Every full
 * permutation is equally likely and exactly those with a fixed point are
 * refused, so the result is uniform over derangements; about e (2.72)
 * shuffles are needed on average. (Sattolo's algorithm is not used: it only
 * makes single cycles.)
 *
 * locality cross_tor: no host sends to a host under its own ToR. Hosts are
 * taken to be numbered ToR by ToR (host h sits under ToR h / hosts_per_tor),
 * as the topology builders number them. Rejection would need about
 * e^hosts_per_tor shuffles, so a Metropolis chain runs over the valid
 * permutations instead. It starts from a valid one (every host shifted by the
 * largest ToR group, which crosses ToRs whenever no ToR holds more than half
 * the hosts). A move picks a length L >= 2 (P(L = 2 + g) = 2^-(g+1)) and a
 * uniformly random ordered tuple of L distinct hosts, rotates their
 * destinations along the tuple, and is kept only if every new pair crosses
 * ToRs. The reverse rotation has the same proposal probability, so the
 * stationary law is uniform over cross-ToR permutations; and any two valid
 * permutations differ by disjoint rotations (the cycles of one composed with
 * the other's inverse), each a single valid move, so the chain is
 * irreducible. Swaps alone (L = 2) are not enough: with 3 ToRs of 2 hosts
 * they can never leave the ToR-level cycle 0->1->2->0. The chain runs
 * 8 n ceil(log2 n) + 1000 proposals, so the result is close to, not
 * exactly, uniform (tests/test_workload.c checks it against enumeration).
 */
#include <stddef.h>
#include <stdint.h>

#include "core/mem.h"
#include "core/rng.h"
#include "workload/workload.h"

enum permutation_locality { PERM_ANY, PERM_CROSS_TOR };

struct permutation_params {
	uint64_t size;	 /* bytes per flow */
	simtime_t start; /* ps, the same for every flow */
	uint64_t hosts;	 /* use hosts 0..hosts-1; 0 = every host */
	int locality;	 /* enum permutation_locality */
};

static const char *const permutation_localities[] = { "any", "cross_tor", NULL };

static const struct opt_desc permutation_opts[] = {
	{ .name = "size",
	  .type = OPT_SIZE,
	  .offset = offsetof(struct permutation_params, size),
	  .def = "2MB",
	  .min = 1,
	  .max = 1e15,
	  .help = "bytes each host sends" },
	{ .name = "start",
	  .type = OPT_TIME,
	  .offset = offsetof(struct permutation_params, start),
	  .def = "0",
	  .help = "start time of every flow" },
	{ .name = "hosts",
	  .type = OPT_UINT,
	  .offset = offsetof(struct permutation_params, hosts),
	  .def = "0",
	  .help = "use the first N hosts (0 = all hosts)" },
	{ .name = "locality",
	  .type = OPT_ENUM,
	  .offset = offsetof(struct permutation_params, locality),
	  .def = "any",
	  .help = "any, or cross_tor: never send to a host under the same ToR",
	  .choices = permutation_localities },
	OPT_END,
};

/* Uniform derangement of 0..n-1 into p (n >= 2), by shuffling with early refusal. */
static void derange_uniform(uint32_t *p, uint32_t n, struct mp_rng *r)
{
	for (;;) {
		uint32_t i;

		for (i = 0; i < n; i++)
			p[i] = i;
		for (i = n - 1; i > 0; i--) {
			uint32_t j = (uint32_t)rng_below(r, (uint64_t)i + 1), t = p[i];

			p[i] = p[j];
			p[j] = t;
			if (p[i] == i) /* position i is final: a fixed point */
				break;
		}
		if (i == 0 && p[0] != 0)
			return;
	}
}

static uint32_t ceil_log2(uint32_t n)
{
	uint32_t k = 0;

	while (k < 32 && (1ull << k) < n)
		k++;
	return k;
}

/* Cross-ToR permutation of 0..n-1 (hosts per ToR hpt, largest group m <= n/2):
 * Metropolis over the valid permutations with target rotations as moves. */
static void derange_cross_tor(uint32_t *p, uint32_t n, uint32_t hpt, uint32_t m, struct mp_rng *r)
{
	uint64_t steps = 8ull * n * ceil_log2(n) + 1000, bits = 0;
	uint32_t *pool = mp_malloc((size_t)n * sizeof(*pool)), *h, nbits = 0;

	/* Groups are contiguous blocks of at most m hosts and m <= n - m, so
	 * i + m (mod n) always lands in another block. */
	for (uint32_t i = 0; i < n; i++) {
		p[i] = (i + m) % n;
		pool[i] = i;
	}
	while (steps--) {
		uint32_t len = 2, t, first;

		/* Cycle length: P(len = 2 + g) = 2^-(g+1), a coin flip per
		 * step; lengths above n are proposals that are rejected. */
		for (;;) {
			int heads;

			if (!nbits) {
				bits = rng_next(r);
				nbits = 64;
			}
			heads = bits & 1;
			bits >>= 1;
			nbits--;
			if (!heads || ++len > n)
				break;
		}
		if (len > n)
			continue; /* rejected */
		/* A uniformly random ordered tuple of len distinct hosts: the
		 * first len slots of pool after a partial Fisher-Yates. */
		rng_shuffle_head(r, pool, n, len);
		h = pool;
		/* Rotate: h[t] takes the destination of h[t+1] (h[len-1] that of
		 * h[0]); accept only if every new pair crosses ToRs. */
		for (t = 0; t < len; t++)
			if (h[t] / hpt == p[h[(t + 1) % len]] / hpt)
				break;
		if (t < len)
			continue; /* rejected */
		first = p[h[0]];
		for (t = 0; t + 1 < len; t++)
			p[h[t]] = p[h[t + 1]];
		p[h[len - 1]] = first;
	}
	mp_free(pool);
}

static int permutation_generate(const void *params, const struct wl_env *env, struct flow_list *out,
				struct mp_err *e)
{
	const struct permutation_params *pp = params;
	struct mp_rng r;
	uint32_t n, *p;

	if (workload_host_count(pp->hosts, 2, env, &n, e))
		return MP_EUSER;
	if (pp->locality == PERM_CROSS_TOR) {
		uint32_t hpt = env->hosts_per_tor, m;

		if (!hpt)
			return mp_errf(e, MP_EUSER,
				       "locality: cross_tor needs the number of "
				       "hosts per ToR, which this topology does not give");
		m = hpt < n ? hpt : n;
		if (m > n - m)
			return mp_errf(e, MP_EUSER,
				       "locality: cross_tor is impossible: %u of "
				       "the %u hosts sit under one ToR (expected at most half)",
				       m, n);
	}

	rng_init(&r, env->seed, RNG_WORKLOAD, WORKLOAD_STREAM(WORKLOAD_STREAM_PERMUTATION, 0));
	p = mp_malloc((size_t)n * sizeof(*p));
	if (pp->locality == PERM_CROSS_TOR) {
		uint32_t hpt = env->hosts_per_tor;

		derange_cross_tor(p, n, hpt, hpt < n ? hpt : n, &r);
	} else {
		derange_uniform(p, n, &r);
	}
	for (uint32_t i = 0; i < n; i++)
		flow_list_push(out, i, p[i], pp->size, pp->start);
	mp_free(p);
	return MP_OK;
}

const struct workload_ops permutation_workload_ops = {
	.name = "permutation",
	.summary =
	    "each host sends one flow to one other host, receiving one (a random derangement)",
	.opts = permutation_opts,
	.params_size = sizeof(struct permutation_params),
	.generate = permutation_generate,
};

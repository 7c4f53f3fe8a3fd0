/* rng.h - random streams. Every random choice draws from a stream seeded by
 * (experiment seed, entity kind, entity id), never from one per process, so a
 * run is identical however it is partitioned. Generator: xoshiro256** (Blackman
 * & Vigna), seeded through splitmix64; 32 bytes of state per stream. */
#ifndef MPSIM_CORE_RNG_H
#define MPSIM_CORE_RNG_H

#include <stdint.h>

struct mp_rng {
	uint64_t s[4];
};

/* Entity kinds: one namespace per kind of thing that owns a stream. */
enum rng_kind {
	RNG_WORKLOAD = 1,
	RNG_TOPOLOGY = 2, /* random failures */
	RNG_SWITCH = 3,	  /* ECN marking, hash seeds, load balancers */
	RNG_HOST = 4,
	RNG_CONN = 5, /* per-connection protocol randomness */
	RNG_LINK = 6, /* per-link bit errors */
	RNG_CCL = 7,  /* collective-layer schedulers (per channel) */
	RNG_TEST = 99,
};

void rng_init(struct mp_rng *r, uint64_t seed, uint32_t kind, uint64_t id);
uint64_t rng_next(struct mp_rng *r);
/* uniform in [0, 1) with 53 random bits */
static inline double rng_u01(struct mp_rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}
/* uniform integer in [0, n), unbiased (Lemire's multiply-and-reject); n > 0 */
uint64_t rng_below(struct mp_rng *r, uint64_t n);
/* A partial Fisher-Yates shuffle: v[0..k) becomes a uniformly random ordered
 * choice of k of the n values in v[0..n) (the rest of v keeps the others), by
 * drawing j = i + rng_below(r, n - i) and swapping v[i] and v[j] for i = 0 ..
 * k - 1 in that order; k <= n. Every shuffle in mpsim is this one, so that
 * its draws are the same wherever it is used. */
void rng_shuffle_head(struct mp_rng *r, uint32_t *v, uint32_t n, uint32_t k);
/* a well-mixed 64-bit hash, for ECMP seeds and stream derivation */
uint64_t rng_mix64(uint64_t x);

#endif

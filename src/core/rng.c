/* rng.c - xoshiro256** streams seeded through splitmix64; see rng.h. */
#include "core/rng.h"

uint64_t rng_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void rng_init(struct mp_rng *r, uint64_t seed, uint32_t kind, uint64_t id)
{
	uint64_t x = rng_mix64(seed) ^ rng_mix64(((uint64_t)kind << 48) ^ id ^ 0x5bd1e995ULL);
	for (int i = 0; i < 4; i++) {
		x += 0x9e3779b97f4a7c15ULL;
		r->s[i] = rng_mix64(x);
	}
	if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		r->s[0] = 1;
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct mp_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t rng_below(struct mp_rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)rng_next(r) * n;
	uint64_t lo = (uint64_t)m;
	if (lo < n) {
		uint64_t thresh = -n % n;
		while (lo < thresh) {
			m = (unsigned __int128)rng_next(r) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

void rng_shuffle_head(struct mp_rng *r, uint32_t *v, uint32_t n, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++) {
		uint32_t j = i + (uint32_t)rng_below(r, n - i), t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/* hash.h - FNV-1a, 64 bits: for telling texts and blobs apart (a sweep's
 * config files, a protocol's interned constants), not for randomness
 * (core/rng.h). */
#ifndef MPSIM_CORE_HASH_H
#define MPSIM_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define MP_FNV_INIT 14695981039346656037ull

/* The hash of n more bytes at p, continuing from h (MP_FNV_INIT to start). */
static inline uint64_t mp_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

#endif

/* bits.h - flat bitmaps of 64-bit words (per-PSN received/acked/lost marks). */
#ifndef MPSIM_CORE_BITS_H
#define MPSIM_CORE_BITS_H

#include <stdbool.h>
#include <stdint.h>

static inline bool bit_get(const uint64_t *b, uint32_t i)
{
	return (b[i >> 6] >> (i & 63)) & 1;
}
static inline void bit_set(uint64_t *b, uint32_t i)
{
	b[i >> 6] |= 1ULL << (i & 63);
}
static inline void bit_clr(uint64_t *b, uint32_t i)
{
	b[i >> 6] &= ~(1ULL << (i & 63));
}

#endif

/* time.h - simulated time: unsigned 64-bit integer picoseconds.
 *
 * Owns: the simtime_t type, unit constants, and exact serialisation arithmetic.
 * Invariant: no floating point ever reaches the event queue; every duration is
 * an integer number of picoseconds (2^64 ps is about 213 days).
 */
#ifndef MPSIM_CORE_TIME_H
#define MPSIM_CORE_TIME_H

#include <stdint.h>

typedef uint64_t simtime_t; /* picoseconds */

#define SIMTIME_MAX UINT64_MAX
#define PS_PER_NS 1000ULL
#define PS_PER_US 1000000ULL
#define PS_PER_MS 1000000000ULL
#define PS_PER_S 1000000000000ULL

/* Serialisation time of `bytes` at `rate_bps`, rounded up to a whole ps.
 * Ports that must not accumulate rounding error use time_ser_exact(). */
static inline simtime_t time_ser_ps(uint64_t bytes, uint64_t rate_bps)
{
	unsigned __int128 num = (unsigned __int128)bytes * 8u * PS_PER_S;
	return (simtime_t)((num + rate_bps - 1) / rate_bps);
}

/* Exact serialisation with a carried remainder: over any sequence of packets
 * the sum of returned times equals floor(total_bits * 1e12 / rate) (+1 at most),
 * so a port running at 3 Gb/s never drifts. `*rem` is in units of 1/rate_bps ps
 * and must be reset (to 0) when the rate changes. */
static inline simtime_t time_ser_exact(uint64_t bytes, uint64_t rate_bps, uint64_t *rem)
{
	/* every packet: bytes * 8e12 + rem fits in 64 bits below 2^21 bytes
	 * (1.68e19) and a remainder below 2^60, and a 64-bit division is a
	 * single instruction where a 128-bit one is a library call */
	if (__builtin_expect(bytes < (1u << 21) && *rem < (1ull << 60), 1)) {
		uint64_t n = bytes * 8u * PS_PER_S + *rem;
		*rem = n % rate_bps;
		return n / rate_bps;
	}
	unsigned __int128 num = (unsigned __int128)bytes * 8u * PS_PER_S + *rem;
	*rem = (uint64_t)(num % rate_bps);
	return (simtime_t)(num / rate_bps);
}

static inline double time_to_us(simtime_t t)
{
	return (double)t / (double)PS_PER_US;
}
static inline double time_to_s(simtime_t t)
{
	return (double)t / (double)PS_PER_S;
}

#endif

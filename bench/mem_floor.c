/* mem_floor.c - what the machine's memory allows a packet path whose working
 * set is far past the caches: the time of one dependent load from a random
 * line (latency), and the time per random line when loads are independent and
 * prefetched well ahead (throughput, the floor a software-pipelined run loop
 * can reach). The cost per packet-hop at 8192 hosts is compared with the
 * second times the lines a hop misses (bench/notes/2026-11-24-where-the-misses-are.md).
 * Then the same
 * throughput by object: four-line objects at random, each read in the lines
 * it prefetched, all four, three (0, 1 and 3: a port's packet path), or one,
 * so that what a line asked for costs shows beside what a line used costs
 * (bench/notes/2026-11-27-port-in-three-lines.md).
 *
 *   bench_mem [megabytes=128] [steps=4000000] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "sim/run.h" /* sim_wall_now */

#define LINE 64
#define AHEAD 32 /* prefetch distance, in loads */

struct line {
	uint64_t next; /* the pointer chase's next line */
	uint64_t pad[LINE / 8 - 1];
};
_Static_assert(sizeof(struct line) == LINE, "one cache line");

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? strtoull(argv[1], NULL, 10) : 128;
	size_t steps = argc > 2 ? strtoull(argv[2], NULL, 10) : 4000000;
	size_t n = mb * 1024 * 1024 / LINE;
	if (n < 2 || steps < AHEAD + 1) {
		fprintf(stderr, "bench_mem: need at least 1 MB and %d steps\n", AHEAD + 1);
		return 2;
	}
	struct line *a = aligned_alloc(LINE, n * LINE);
	uint32_t *perm = malloc(n * sizeof *perm), *idx = malloc(steps * sizeof *idx);
	if (!a || !perm || !idx) {
		fprintf(stderr, "bench_mem: out of memory for %zu MB\n", mb);
		return 2;
	}
	memset(a, 0, n * LINE); /* every page mapped before anything is timed */
	struct mp_rng r;
	rng_init(&r, 1, 0, 0);
	/* one cycle through every line in random order (Sattolo), so the chase
	 * never settles in a short loop that the caches would hold */
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = rng_below(&r, i);
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		a[perm[i]].next = perm[(i + 1) % n];
	for (size_t i = 0; i < steps; i++)
		idx[i] = (uint32_t)rng_below(&r, n);

	size_t chase = steps / 4, p = perm[0];
	double t0 = sim_wall_now();
	for (size_t i = 0; i < chase; i++)
		p = a[p].next;
	double t1 = sim_wall_now();

	uint64_t sum = 0;
	for (size_t i = 0; i < steps; i++) {
		if (i + AHEAD < steps)
			__builtin_prefetch(&a[idx[i + AHEAD]]);
		sum += a[idx[i]].pad[0];
	}
	double t2 = sim_wall_now();
	printf("%zu MB: %.1f ns a dependent load, %.1f ns a line prefetched %d ahead"
	       " (%zu, %llu)\n",
	       mb, (t1 - t0) / (double)chase * 1e9, (t2 - t1) / (double)steps * 1e9, AHEAD, p % 2,
	       (unsigned long long)(sum % 2));

	/* four-line objects at random (idx / 4: the object's first line) */
	static const unsigned masks[] = { 0xF, 0xB, 0x1 };
	double per[3];
	for (int m = 0; m < 3; m++) {
		double s0 = sim_wall_now();
		for (size_t i = 0; i < steps; i++) {
			if (i + AHEAD < steps) {
				const struct line *o = &a[idx[i + AHEAD] & ~(uint32_t)3];
				for (unsigned l = 0; l < 4; l++)
					if (masks[m] & (1u << l))
						__builtin_prefetch(&o[l]);
			}
			const struct line *o = &a[idx[i] & ~(uint32_t)3];
			for (unsigned l = 0; l < 4; l++)
				if (masks[m] & (1u << l))
					sum += o[l].pad[0];
		}
		per[m] = (sim_wall_now() - s0) / (double)steps * 1e9;
	}
	printf("%zu MB: four-line objects at random, prefetched %d ahead and read: all four %.1f ns"
	       " an object, lines 0, 1 and 3 %.1f ns, line 0 alone %.1f ns (%llu)\n",
	       mb, AHEAD, per[0], per[1], per[2], (unsigned long long)(sum % 2));
	free(idx);
	free(perm);
	free(a);
	return 0;
}

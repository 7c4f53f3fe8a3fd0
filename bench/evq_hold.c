/* evq_hold.c - the classic hold model: N events pending; each step pops the
 * earliest and pushes one at now + a random increment. Reports events per
 * second, with the queue's own code (src/core/evq.c).
 *
 *   bench_evq [pending=100000] [steps=20000000] */
#include <stdio.h>
#include <stdlib.h>

#include "core/evq.h"
#include "core/rng.h"
#include "sim/run.h" /* sim_wall_now */

static uint64_t sink;

static void handler(void *obj, uint64_t arg)
{
	(void)obj;
	sink += arg;
}

int main(int argc, char **argv)
{
	size_t pending = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
	uint64_t steps = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000000;
	struct evq q;
	struct mp_rng r;
	struct ev_src src[64];
	for (int i = 0; i < 64; i++)
		src[i] = (struct ev_src){ .id = (uint32_t)i + 1 };
	rng_init(&r, 1, RNG_TEST, 0);
	evq_init(&q);
	/* increments: exponential-ish, mean 1 us, as packets and timers mix */
	for (size_t i = 0; i < pending; i++)
		evq_at(&q, &src[i & 63], rng_below(&r, 2000000), handler, NULL, i);
	double t0 = sim_wall_now();
	for (uint64_t i = 0; i < steps; i++) {
		struct ev e = evq_pop(&q);
		q.now = e.t;
		e.fn(e.obj, e.arg);
		evq_at(&q, &src[i & 63], e.t + rng_below(&r, 2000000), handler, NULL, i);
	}
	double dt = sim_wall_now() - t0;
	printf("evq: %zu pending, %llu hold steps in %.3f s: %.1f M events/s\n", pending,
	       (unsigned long long)steps, dt, (double)steps / dt / 1e6);
	evq_free(&q);
	return (int)(sink & 0);
}

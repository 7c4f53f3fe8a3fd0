/* pring.h - rings of packet pointers (egress queues). A ring keeps a port's queue in one small
 * array next to the port, so queueing a packet never touches another packet's
 * memory (a linked list would write the cold tail packet's next pointer).
 * Rings start empty and double when full: after the first microseconds of a
 * run, when every ring has reached the most it will hold, the packet path
 * allocates nothing. */
#ifndef MPSIM_NET_PRING_H
#define MPSIM_NET_PRING_H

#include <stdint.h>

#include "core/time.h"

struct packet;

struct pring {
	struct packet **v;
	uint32_t head, n, cap; /* cap is 0 or a power of two */
};

void pring_grow(struct pring *r);
void pring_free(struct pring *r);

static inline void pring_push(struct pring *r, struct packet *p)
{
	if (__builtin_expect(r->n == r->cap, 0))
		pring_grow(r);
	r->v[(r->head + r->n++) & (r->cap - 1)] = p;
}

static inline struct packet *pring_pop(struct pring *r)
{
	struct packet *p = r->v[r->head];
	r->head = (r->head + 1) & (r->cap - 1);
	r->n--;
	return p;
}

#endif

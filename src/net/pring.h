/* pring.h - rings of packet pointers (egress queues) and of (packet, arrival
 * time) pairs (packets on a wire). A ring keeps a port's queue in one small
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

struct wire_slot {
	struct packet *p;
	simtime_t at; /* arrival time at the far end, ps */
};

struct wring {
	struct wire_slot *v;
	uint32_t head, n, cap;
};

void pring_grow(struct pring *r);
void wring_grow(struct wring *r);
void pring_free(struct pring *r);
void wring_free(struct wring *r);

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

static inline struct wire_slot *wring_push(struct wring *r)
{
	if (__builtin_expect(r->n == r->cap, 0))
		wring_grow(r);
	return &r->v[(r->head + r->n++) & (r->cap - 1)];
}

static inline struct wire_slot *wring_last(struct wring *r)
{
	return &r->v[(r->head + r->n - 1) & (r->cap - 1)];
}

static inline struct wire_slot wring_pop(struct wring *r)
{
	struct wire_slot s = r->v[r->head];
	r->head = (r->head + 1) & (r->cap - 1);
	r->n--;
	return s;
}

#endif

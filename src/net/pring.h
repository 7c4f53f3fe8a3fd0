/* pring.h - rings of queued packets (egress queues). A ring keeps a port's queue in one small
 * array next to the port, so queueing a packet never touches another packet's
 * memory (a linked list would write the cold tail packet's next pointer).
 * Rings start empty and double when full: after the first microseconds of a
 * run, when every ring has reached the most it will hold, the packet path
 * allocates nothing.
 *
 * A ring is 16 bytes, so that a port keeps the queues of its two busy
 * classes in one cache line (net/port.h): its capacity (a power of two)
 * rides in the low bits of the slots' address, which is cache-line aligned.
 * Read them with pring_slots and pring_cap, never the field itself.
 *
 * A slot holds a queued packet as a pq_ent: its address with, in the bits an
 * address leaves free, what its departure needs (its size, whether RED may
 * mark it, whether it is marked already), so that sending a packet from a
 * queue reads the port and not the packet (net/port.c, "A packet's
 * departure"). */
#ifndef MPSIM_NET_PRING_H
#define MPSIM_NET_PRING_H

#include <stdint.h>

#include "core/time.h"

struct packet;

/* A queued packet: bits 4-47 its address (pool objects are 16-byte aligned
 * and lie below 2^48: core/pool.c checks), bits 48-63 its size in bytes, bit 0
 * PQ_ECT, bit 1 PQ_CE. 0: none. */
typedef uint64_t pq_ent;
#define PQ_ECT 1u /* an ECN-capable data packet: RED may mark it at departure */
#define PQ_CE 2u  /* it is marked already */
#define PQ_ADDR 0x0000fffffffffff0ull

static inline struct packet *pq_pkt(pq_ent e)
{
	return (struct packet *)(uintptr_t)(e & PQ_ADDR);
}

static inline uint32_t pq_size(pq_ent e)
{
	return (uint32_t)(e >> 48);
}

struct pring {
	uintptr_t vt;	  /* the slots' address | (log2(capacity) + 1); 0: no slots yet */
	uint32_t head, n; /* the oldest packet's slot, and how many are queued */
};
_Static_assert(sizeof(struct pring) == 16,
	       "struct pring: a port's ACK and data queues share a line");

#define PRING_TAG 63u /* the slots are 64-byte aligned: their address's low 6 bits */

static inline pq_ent *pring_slots(const struct pring *r)
{
	return (pq_ent *)(r->vt & ~(uintptr_t)PRING_TAG);
}

static inline uint32_t pring_cap(const struct pring *r)
{
	return (uint32_t)((1ull << (r->vt & PRING_TAG)) >> 1);
}

void pring_grow(struct pring *r);
void pring_free(struct pring *r);

static inline void pring_push(struct pring *r, pq_ent p)
{
	if (__builtin_expect(r->n == pring_cap(r), 0))
		pring_grow(r);
	pring_slots(r)[(r->head + r->n++) & (pring_cap(r) - 1)] = p;
}

static inline pq_ent pring_pop(struct pring *r)
{
	uint32_t cap = pring_cap(r);
	pq_ent p = pring_slots(r)[r->head];
	r->head = (r->head + 1) & (cap - 1);
	r->n--;
	return p;
}

/* The i-th queued packet (0: the oldest); i < r->n. */
static inline pq_ent pring_at(const struct pring *r, uint32_t i)
{
	return pring_slots(r)[(r->head + i) & (pring_cap(r) - 1)];
}

/* The slot of the oldest packet (what popping it reads); r->n > 0. */
static inline const pq_ent *pring_head_slot(const struct pring *r)
{
	return &pring_slots(r)[r->head];
}

#endif

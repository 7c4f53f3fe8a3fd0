/* pring.c - growth of packet rings; see pring.h. */
#include "net/pring.h"

#include <string.h>

#include "core/err.h"
#include "core/mem.h"

#define RING_MIN 8 /* one cache line of slots */

void pring_grow(struct pring *r)
{
	uint32_t old = pring_cap(r), cap = old ? old * 2 : RING_MIN;
	MP_ASSERT(cap > old); /* a ring of 2^31 packets would not fit in memory anyway */
	pq_ent *v = mp_calloc_aligned((size_t)cap * sizeof *v, PRING_TAG + 1);
	for (uint32_t i = 0; i < r->n; i++)
		v[i] = pring_at(r, i);
	mp_free_aligned(pring_slots(r));
	r->vt = (uintptr_t)v | (uintptr_t)(__builtin_ctz(cap) + 1);
	r->head = 0;
}

void pring_free(struct pring *r)
{
	mp_free_aligned(pring_slots(r));
	memset(r, 0, sizeof *r);
}

/* pring.c - growth of packet rings; see pring.h. */
#include "net/pring.h"

#include <string.h>

#include "core/mem.h"

#define RING_MIN 8

void pring_grow(struct pring *r)
{
	uint32_t cap = r->cap ? r->cap * 2 : RING_MIN;
	struct packet **v = mp_malloc((size_t)cap * sizeof *v);
	for (uint32_t i = 0; i < r->n; i++)
		v[i] = r->v[(r->head + i) & (r->cap - 1)];
	mp_free(r->v);
	r->v = v;
	r->cap = cap;
	r->head = 0;
}

void pring_free(struct pring *r)
{
	mp_free(r->v);
	memset(r, 0, sizeof *r);
}

/* pring.c - growth of packet rings; see pring.h. */
#include "net/pring.h"

#include "core/mem.h"

#define RING_MIN 8

void pring_grow(struct pring *r)
{
	uint32_t cap = r->cap ? r->cap * 2 : RING_MIN;
	struct packet **v = mp_malloc(cap * sizeof *v);
	for (uint32_t i = 0; i < r->n; i++)
		v[i] = r->v[(r->head + i) & (r->cap - 1)];
	mp_free(r->v);
	r->v = v;
	r->cap = cap;
	r->head = 0;
}

void wring_grow(struct wring *r)
{
	uint32_t cap = r->cap ? r->cap * 2 : RING_MIN;
	struct wire_slot *v = mp_malloc(cap * sizeof *v);
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
	r->v = 0;
	r->head = r->n = r->cap = 0;
}

void wring_free(struct wring *r)
{
	mp_free(r->v);
	r->v = 0;
	r->head = r->n = r->cap = 0;
}

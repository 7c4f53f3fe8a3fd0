/* pool.c - chunked free-list pools; see pool.h. */
#include "core/pool.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/err.h"
#include "core/mem.h"

/* A chunk's objects start at a cache line, the header in the line before
 * them: a 64-byte packet then fills exactly one line, and a prefetch of it
 * asks for the right one (bench/notes/2026-11-25-packets-across-two-lines.md). */
struct pool_chunk {
	struct pool_chunk *next;
};

/* Objects lie below 2^48 and on 16-byte boundaries: the packet path keeps a
 * packet's size and flags in the other bits of its address (net/pring.h).
 * User-space addresses are below 2^47 on x86-64 and below 2^48 on arm64
 * unless a program asks the kernel for more, which mpsim does not. */
static bool pool_addr_ok(uintptr_t a, size_t bytes)
{
	return (a & 15) == 0 && (uint64_t)a + bytes <= (1ull << 48);
}

void pool_init(struct pool *p, size_t obj_size, size_t per_chunk)
{
	size_t a = _Alignof(max_align_t);
	if (obj_size < sizeof(void *))
		obj_size = sizeof(void *);
	p->obj_size = (obj_size + a - 1) / a * a;
#ifdef MPSIM_SMALL_LIMITS
	per_chunk = 2;
#endif
	p->per_chunk = per_chunk ? per_chunk : 1;
	p->free_list = NULL;
	p->chunks = NULL;
	p->live = p->peak = p->chunks_n = 0;
}

void pool_destroy(struct pool *p)
{
	struct pool_chunk *c = p->chunks;
	while (c) {
		struct pool_chunk *next = c->next;
		mp_free_aligned(c);
		c = next;
	}
	p->chunks = NULL;
	p->free_list = NULL;
}

#ifdef MPSIM_POOL_DEBUG
void *pool_grow_get(struct pool *p)
{
	return pool_get(p);
}

void *pool_get(struct pool *p)
{
	void *o = malloc(p->obj_size);
	if (!o)
		MP_PANIC("out of memory in pool");
	MP_ASSERT(pool_addr_ok((uintptr_t)o, p->obj_size));
	if (++p->live > p->peak)
		p->peak = p->live;
	return o;
}

void pool_put(struct pool *p, void *obj)
{
	p->live--;
	free(obj);
}
#else
void *pool_grow_get(struct pool *p)
{
	_Static_assert(sizeof(struct pool_chunk) <= MP_CACHE_LINE,
		       "a chunk's header fits its line");
	struct pool_chunk *c =
	    mp_calloc_aligned(MP_CACHE_LINE + p->obj_size * p->per_chunk, MP_CACHE_LINE);
	MP_ASSERT(pool_addr_ok((uintptr_t)c, MP_CACHE_LINE + p->obj_size * p->per_chunk));
	c->next = p->chunks;
	p->chunks = c;
	p->chunks_n++;
	unsigned char *base = (unsigned char *)c + MP_CACHE_LINE;
	/* thread objects 1..n-1 onto the free list, hand out object 0 */
	for (size_t i = p->per_chunk; i-- > 1;) {
		void *o = base + i * p->obj_size;
		*(void **)o = p->free_list;
		p->free_list = o;
	}
	if (++p->live > p->peak)
		p->peak = p->live;
	return base;
}
#endif

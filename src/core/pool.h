/* pool.h - fixed-size object pools with a free list.
 *
 * Objects are carved from chunks that are never returned to the system until
 * the pool is destroyed; get/put are a pointer pop/push. Built with
 * MPSIM_POOL_DEBUG, every get is a malloc and every put a free, so ASan and
 * valgrind see each block's life. The pool counts live objects and the peak.
 * A chunk's objects start on a cache line: 64-byte objects (packets) fill
 * one line each (pool.c).
 */
#ifndef MPSIM_CORE_POOL_H
#define MPSIM_CORE_POOL_H

#include <stddef.h>
#include <stdint.h>

struct pool_chunk;

struct pool {
	size_t obj_size;  /* bytes per object (>= sizeof(void *)) */
	size_t per_chunk; /* objects per chunk */
	void *free_list;
	struct pool_chunk *chunks;
	uint64_t live, peak, chunks_n;
};

void pool_init(struct pool *p, size_t obj_size, size_t per_chunk);
void pool_destroy(struct pool *p);
void *pool_grow_get(struct pool *p); /* slow path */

#ifdef MPSIM_POOL_DEBUG
void *pool_get(struct pool *p);
void pool_put(struct pool *p, void *obj);
#else
static inline void *pool_get(struct pool *p)
{
	void *o = p->free_list;
	if (__builtin_expect(o == NULL, 0))
		return pool_grow_get(p);
	p->free_list = *(void **)o;
	/* the next get reads the new head's link: ask for its line now (the
	 * object is written when it is taken, so the line is one it needs
	 * anyway). Without it, taking a packet waited on a line from memory
	 * whenever allocations ran deeper into the free list than the last
	 * few frees: 91% of tp_pkt_new's samples at 8192 hosts. */
	__builtin_prefetch(p->free_list);
	if (++p->live > p->peak)
		p->peak = p->live;
	return o;
}

static inline void pool_put(struct pool *p, void *obj)
{
	*(void **)obj = p->free_list;
	p->free_list = obj;
	p->live--;
}
#endif

#endif

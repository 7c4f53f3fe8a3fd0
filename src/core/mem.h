/* mem.h - the one allocation wrapper. Counts live bytes and the peak so that a
 * run can report its memory. When the machine refuses memory it says so and
 * exits with status 2 (the experiment is too large; sim/plan.c's estimates
 * refuse most such runs before they allocate).
 * Never called on the packet path: packets and events come from pools. */
#ifndef MPSIM_CORE_MEM_H
#define MPSIM_CORE_MEM_H

#include <stddef.h>
#include <stdint.h>

void *mp_malloc(size_t n);
void *mp_calloc(size_t count, size_t n);
void *mp_realloc(void *p, size_t n);
void mp_free(void *p);
char *mp_strdup(const char *s);
/* Zeroed memory aligned to `align` (a power of two, at most 4096); free it with
 * mp_free_aligned. For structs laid out by cache line (MP_CACHE_LINE). */
#define MP_CACHE_LINE 64
void *mp_calloc_aligned(size_t n, size_t align);
void mp_free_aligned(void *p);

uint64_t mp_mem_live(void);	/* bytes currently allocated through mp_* */
uint64_t mp_mem_peak(void);	/* high-water mark of mp_mem_live() */
uint64_t mp_mem_peak_rss(void); /* process peak RSS in bytes (from the OS) */

/* The memory a run may plan for, in bytes: the smallest of the machine's
 * physical memory, RLIMIT_AS and RLIMIT_DATA, the cgroup's memory.max and the
 * MPSIM_MEM_LIMIT environment variable (a size: 8GiB, 500MB); setting a limit
 * here (not 0) takes its place. Builders compare their estimates with it
 * before they allocate, so an experiment too large for the machine is a
 * sentence, not an abort. */
uint64_t mp_mem_limit(void);
void mp_mem_set_limit(uint64_t bytes);

#endif

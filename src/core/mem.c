/* mem.c - counting allocator. Each block carries a 16-byte header holding its
 * size so that free and realloc can keep the count exact. */
#include "core/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/err.h"
#include "core/units.h"

#define HDR 16

/* per thread: a partitioned run's threads (sim/threads.c) each count their
 * own partition, as MPI ranks do; no block crosses threads */
static _Thread_local uint64_t live, peak;

/* The machine (or ulimit -v, the cgroup) refused memory. The estimates made
 * before a run (sim/plan.c) refuse what cannot fit as a sentence; what gets
 * here was larger than the machine allows all the same, which is the size of
 * the experiment, not a broken invariant: a user's error, status 2, not a
 * panic (status 3, "a bug in mpsim"). */
static _Noreturn void out_of_memory(size_t n)
{
	fflush(stdout);
	fprintf(stderr,
		"mpsim: out of memory: %zu more bytes were refused with %.1f MB in use (the "
		"machine's memory, ulimit -v or the cgroup's memory.max); expected a smaller "
		"experiment or more memory\n",
		n, (double)live / 1e6);
	fflush(stderr);
	_exit(MP_EUSER);
}

static void *account(unsigned char *b, size_t n)
{
	if (!b)
		out_of_memory(n);
	memcpy(b, &n, sizeof n);
	live += n;
	if (live > peak)
		peak = live;
	return b + HDR;
}

void *mp_malloc(size_t n)
{
	return account(malloc(n + HDR), n);
}

void *mp_calloc(size_t count, size_t n)
{
	size_t total = count * n;
	if (n && total / n != count)
		MP_PANIC("allocation size overflow");
	return account(calloc(1, total + HDR), total);
}

void *mp_realloc(void *p, size_t n)
{
	if (!p)
		return mp_malloc(n);
	unsigned char *b = (unsigned char *)p - HDR;
	size_t old;
	memcpy(&old, b, sizeof old);
	live -= old;
	return account(realloc(b, n + HDR), n);
}

void mp_free(void *p)
{
	if (!p)
		return;
	unsigned char *b = (unsigned char *)p - HDR;
	size_t old;
	memcpy(&old, b, sizeof old);
	live -= old;
	free(b);
}

char *mp_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = mp_malloc(n);
	memcpy(d, s, n);
	return d;
}

uint64_t mp_mem_live(void)
{
	return live;
}
uint64_t mp_mem_peak(void)
{
	return peak;
}

uint64_t mp_mem_peak_rss(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (uint64_t)ru.ru_maxrss * 1024u; /* Linux reports KiB */
}

void *mp_calloc_aligned(size_t n, size_t align)
{
	unsigned char *raw = mp_calloc(1, n + align + sizeof(void *));
	uintptr_t a = ((uintptr_t)raw + sizeof(void *) + align - 1) & ~(uintptr_t)(align - 1);
	memcpy((void *)(a - sizeof(void *)), &raw, sizeof raw);
	return (void *)a;
}

void mp_free_aligned(void *p)
{
	if (!p)
		return;
	void *raw;
	memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
	mp_free(raw);
}

static uint64_t limit_set;

void mp_mem_set_limit(uint64_t bytes)
{
	limit_set = bytes;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t mp_mem_limit(void)
{
	if (limit_set)
		return limit_set;
	uint64_t lim = UINT64_MAX;
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psz > 0)
		lim = (uint64_t)pages * (uint64_t)psz;
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		lim = min_u64(lim, (uint64_t)rl.rlim_cur);
	if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		lim = min_u64(lim, (uint64_t)rl.rlim_cur);
	FILE *f = fopen("/sys/fs/cgroup/memory.max", "r"); /* cgroup v2; "max" = none */
	if (f) {
		unsigned long long v;
		if (fscanf(f, "%llu", &v) == 1)
			lim = min_u64(lim, (uint64_t)v);
		fclose(f);
	}
	const char *env = getenv("MPSIM_MEM_LIMIT");
	uint64_t v;
	if (env && *env && units_parse(UNITS_SIZE, env, &v, NULL) == MP_OK && v > 0)
		lim = min_u64(lim, v);
	return lim;
}

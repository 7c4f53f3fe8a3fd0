/* threads.c - a partitioned run's ranks as threads; see threads.h.
 *
 * A collective is two barriers: each thread leaves the address of its part
 * in its slot, meets the others, reads theirs, and meets them again before
 * its part may change. The barrier spins briefly (a window's end is usually
 * near for every thread) and then sleeps on a condition variable, so that
 * more threads than cores (make test runs 4 on 2) do not burn the core the
 * last one needs.
 */
#include "sim/threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/mem.h"

/* pause instructions a thread spins at a barrier before it sleeps: about
 * 20-100 us, longer than the gap between two threads ending a balanced window
 * and shorter than a scheduler's slice */
#define SPIN 2000

static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* a ranks_send not yet received */
struct mail {
	struct mail *next;
	int src, dst, tag;
	size_t n;
	unsigned char bytes[];
};

struct world {
	int n;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int arrived;
	unsigned gen;	    /* barriers passed; read without the lock while spinning */
	const void **slot;  /* each thread's part of the current collective */
	const size_t **len; /* threads_exchange: each thread's byte counts */
	struct mail *mail, **mail_end;
};

static struct world *w;
static _Thread_local int my_rank;

bool threads_on(void)
{
	return w != NULL;
}

int threads_rank(void)
{
	return my_rank;
}

int threads_size(void)
{
	return w->n;
}

static void barrier(void)
{
	unsigned g = __atomic_load_n(&w->gen, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&w->mu);
	if (++w->arrived == w->n) {
		w->arrived = 0;
		__atomic_store_n(&w->gen, g + 1, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		return;
	}
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < SPIN && __atomic_load_n(&w->gen, __ATOMIC_ACQUIRE) == g; i++)
		spin_pause();
	pthread_mutex_lock(&w->mu);
	while (__atomic_load_n(&w->gen, __ATOMIC_ACQUIRE) == g)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

void threads_send(int dst, int tag, const void *buf, size_t n)
{
	/* malloc, not mp_malloc: the allocator's counts are per thread, and the
	 * receiving thread frees it */
	struct mail *m = malloc(sizeof *m + n);
	if (!m)
		MP_PANIC("threads_send: out of memory for %zu bytes", n);
	*m = (struct mail){ .src = my_rank, .dst = dst, .tag = tag, .n = n };
	if (n)
		memcpy(m->bytes, buf, n);
	pthread_mutex_lock(&w->mu);
	*w->mail_end = m;
	w->mail_end = &m->next;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* the first mail from src to this thread with tag, taken off the list */
static struct mail *take(int src, int tag)
{
	for (struct mail **p = &w->mail; *p; p = &(*p)->next) {
		struct mail *m = *p;
		if (m->dst != my_rank || m->src != src || m->tag != tag)
			continue;
		*p = m->next;
		if (!*p)
			w->mail_end = p;
		return m;
	}
	return NULL;
}

void *threads_recv(int src, int tag, size_t *n)
{
	struct mail *m;
	pthread_mutex_lock(&w->mu);
	while (!(m = take(src, tag)))
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	unsigned char *buf = mp_malloc(m->n + 1);
	memcpy(buf, m->bytes, m->n);
	buf[m->n] = '\0';
	*n = m->n;
	free(m);
	return buf;
}

void threads_bcast(void *buf, size_t n)
{
	w->slot[my_rank] = buf;
	barrier();
	if (my_rank)
		memcpy(buf, w->slot[0], n);
	barrier();
}

void threads_allmax(int64_t *v, size_t n)
{
	int64_t *mine = mp_malloc(n * sizeof *mine);
	memcpy(mine, v, n * sizeof *mine);
	w->slot[my_rank] = mine;
	barrier();
	for (int r = 0; r < w->n; r++) {
		const int64_t *o = w->slot[r];
		for (size_t i = 0; i < n; i++)
			if (o[i] > v[i])
				v[i] = o[i];
	}
	barrier();
	mp_free(mine);
}

void threads_allgather(const void *mine, void *all, size_t n)
{
	w->slot[my_rank] = mine;
	barrier();
	for (int r = 0; r < w->n; r++)
		memcpy((unsigned char *)all + (size_t)r * n, w->slot[r], n);
	barrier();
}

void *threads_exchange(void *const *out, const size_t *nout, size_t *nin, size_t *total)
{
	int me = my_rank;
	w->slot[me] = out;
	w->len[me] = nout;
	barrier();
	size_t sum = 0;
	for (int s = 0; s < w->n; s++)
		sum += nin[s] = w->len[s][me];
	unsigned char *in = mp_malloc(sum ? sum : 1), *at = in;
	for (int s = 0; s < w->n; s++) {
		void *const *o = w->slot[s];
		if (nin[s])
			memcpy(at, o[me], nin[s]);
		at += nin[s];
	}
	barrier(); /* every part read: the senders may reuse their buffers */
	*total = sum;
	return in;
}

struct start {
	int (*fn)(void *, int);
	void *arg;
	int rank, rc;
};

static void *thread_main(void *p)
{
	struct start *st = p;
	my_rank = st->rank;
	st->rc = st->fn(st->arg, st->rank);
	return NULL;
}

int threads_run(int n, int (*fn)(void *arg, int rank), void *arg)
{
	MP_ASSERT(!w && n >= 1 && n <= THREADS_MAX);
	struct world world = { .n = n };
	pthread_mutex_init(&world.mu, NULL);
	pthread_cond_init(&world.cv, NULL);
	world.slot = mp_calloc((size_t)n, sizeof *world.slot);
	world.len = mp_calloc((size_t)n, sizeof *world.len);
	world.mail_end = &world.mail;
	w = &world;
	struct start *st = mp_calloc((size_t)n, sizeof *st);
	pthread_t *tid = mp_calloc((size_t)n, sizeof *tid);
	for (int r = 1; r < n; r++) {
		st[r] = (struct start){ .fn = fn, .arg = arg, .rank = r };
		if (pthread_create(&tid[r], NULL, thread_main, &st[r]))
			MP_PANIC("threads_run: cannot start thread %d of %d", r, n);
	}
	st[0] = (struct start){ .fn = fn, .arg = arg, .rank = 0 };
	thread_main(&st[0]);
	int rc = st[0].rc;
	for (int r = 1; r < n; r++) {
		pthread_join(tid[r], NULL);
		if (st[r].rc > rc)
			rc = st[r].rc;
	}
	MP_ASSERT(!world.mail); /* every message was received */
	w = NULL;
	mp_free(tid);
	mp_free(st);
	mp_free(world.len);
	mp_free(world.slot);
	pthread_cond_destroy(&world.cv);
	pthread_mutex_destroy(&world.mu);
	return rc;
}

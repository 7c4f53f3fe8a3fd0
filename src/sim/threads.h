/* threads.h - a partitioned run's ranks as threads of one process
 * (`mpsim run FILE --threads N`): the same partitions, windows and results as
 * `mpirun -n N`, with the messages between partitions handed over in memory.
 *
 * ranks.c's functions answer from here while threads_run runs: each thread
 * is a rank (its number is thread-local), the collectives meet at a barrier,
 * and ranks_send / ranks_recv go through a mailbox. Nothing else of mpsim is
 * shared between the threads: each builds its own experiment and fabric, as
 * each MPI rank does; the event handler registry and the allocator's counts
 * are the only process-wide state, and both allow it (core/evq.c, core/mem.c).
 */
#ifndef MPSIM_SIM_THREADS_H
#define MPSIM_SIM_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest --threads: partitions of one run in one process. */
#define THREADS_MAX 256

/* Run fn(arg, rank) on n threads, rank 0 on the calling thread; returns
 * when all have returned, with the largest of their statuses. */
int threads_run(int n, int (*fn)(void *arg, int rank), void *arg);

bool threads_on(void); /* inside threads_run */
int threads_rank(void);
int threads_size(void);

/* ranks.h's functions of a partitioned run, between threads */
void threads_send(int dst, int tag, const void *buf, size_t n);
void *threads_recv(int src, int tag, size_t *n);
void threads_bcast(void *buf, size_t n);
void threads_allmax(int64_t *v, size_t n);
void threads_allgather(const void *mine, void *all, size_t n);
void *threads_exchange(void *const *out, const size_t *nout, size_t *nin, size_t *total);

#endif

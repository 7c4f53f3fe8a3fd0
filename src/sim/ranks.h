/* ranks.h - the MPI ranks of a sweep (`mpirun -n N mpsim run FILE`): whether
 * this process was started by an MPI launcher, and the few messages that
 * batch.c's hand-out of sweep points needs; and the messages of a
 * partitioned run (sim/part.c), between MPI ranks or, inside threads_run,
 * between the threads of `--threads N` (sim/threads.c answers them then).
 * No MPI type crosses this header.
 *
 * MPI is an optional build dependency (CMake's FindMPI; Debian's
 * libopenmpi-dev). Without it ranks_built() is false, ranks_launched() still
 * reads the launcher's environment (so a build without MPI can refuse to run
 * under mpirun), and every function is a panic but the partitioned run's
 * under threads_run: batch.c calls them only after ranks_init() succeeded or
 * inside threads_run.
 *
 * Waiting never spins: Open MPI's blocking calls poll a core at 100% while
 * they wait, which a sweep whose ranks share the cores with their own point
 * processes cannot afford, so every wait here is a test-and-sleep loop of
 * RANKS_POLL_US.
 */
#ifndef MPSIM_SIM_RANKS_H
#define MPSIM_SIM_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long an idle rank sleeps between two looks at its messages and its
 * point processes (us). Points take milliseconds to hours. */
#define RANKS_POLL_US 1000

/* The world size an MPI launcher gave this process through its environment
 * (Open MPI's OMPI_COMM_WORLD_SIZE, PMIx's PMIX_SIZE... , MPICH/Hydra's
 * PMI_SIZE), 0 when none did. *rank is this process's rank (0 when unknown);
 * var receives the variable that said so, e.g. "OMPI_COMM_WORLD_SIZE=3". */
int ranks_launched(int *rank, char *var, size_t n);

/* Was mpsim built with MPI? lib receives the library's name and version. */
bool ranks_built(char *lib, size_t n);

/* MPI_Init with MPI_COMM_WORLD; errors return MPI's status as non-zero
 * after printing it. */
int ranks_init(int *argc, char ***argv);
bool ranks_active(void); /* between ranks_init and ranks_finalize */
void ranks_finalize(void);
int ranks_rank(void);
int ranks_size(void);

/* A message waiting for this rank, without receiving it: true and its
 * source and tag, or false at once. */
bool ranks_probe(int *src, int *tag);
/* Send n bytes (any size: cut into messages under MPI's int count) to dst
 * with tag; returns when buf may be reused. The receiver takes them with one
 * ranks_recv(src, tag). */
void ranks_send(int dst, int tag, const void *buf, size_t n);
/* Receive what one ranks_send(.., tag, ..) of src sent; returns a buffer of
 * *n bytes (plus a terminating 0) to release with mp_free. */
void *ranks_recv(int src, int tag, size_t *n);
/* Send one integer without waiting for the receiver (a reply that must not
 * block the sender's loop); ranks_finalize completes what is left. */
void ranks_post(int dst, int tag, int64_t v);
/* Take the integer src posted with tag (ranks_probe said it is there). */
int64_t ranks_take(int src, int tag);
/* Rank 0's n bytes to every rank. */
void ranks_bcast(void *buf, size_t n);
/* Each v[i] becomes its largest value over the ranks. */
void ranks_allmax(int64_t *v, size_t n);

/* A partitioned run (sim/part.c) waits in these as a simulation does: it
 * has nothing else to do, so they are MPI's blocking collectives (or the
 * threads' barriers, which spin briefly before they sleep). */
/* Every rank's n bytes of `mine`, rank after rank, into `all` (size x n). */
void ranks_allgather(const void *mine, void *all, size_t n);
/* Rank r's out[d] (nout[d] bytes) to rank d, for every pair: returns what
 * this rank received, source after source, nin[s] bytes from source s (an
 * mp_malloc'd buffer; *total its size). */
void *ranks_exchange(void *const *out, const size_t *nout, size_t *nin, size_t *total);

#endif

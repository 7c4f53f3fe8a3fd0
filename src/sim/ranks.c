/* ranks.c - the MPI ranks of a sweep (see ranks.h). Compiled with MPI when
 * CMake found it (MPSIM_HAVE_MPI), as stubs otherwise. */
#include "sim/ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"
#include "core/mem.h"
#include "sim/threads.h"

int ranks_launched(int *rank, char *var, size_t n)
{
	/* the size and rank variables each launcher family sets in every
	 * process it starts: Open MPI's mpirun, PMIx launchers (prterun,
	 * Slurm's srun --mpi=pmix), MPICH's and Intel MPI's Hydra, PMI-1/2 */
	static const char *const vars[][2] = { { "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK" },
					       { "PMIX_SIZE", "PMIX_RANK" },
					       { "PMI_SIZE", "PMI_RANK" },
					       { "MPI_LOCALNRANKS", "MPI_LOCALRANKID" } };
	*rank = 0;
	if (n)
		var[0] = '\0';
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *s = getenv(vars[i][0]);
		if (!s || !*s)
			continue;
		long size = strtol(s, NULL, 10);
		const char *r = getenv(vars[i][1]);
		*rank = r ? (int)strtol(r, NULL, 10) : 0;
		snprintf(var, n, "%s=%s", vars[i][0], s);
		return size > 0 ? (int)size : 1;
	}
	/* PMIx sets the rank without a size in some versions */
	if (getenv("PMIX_RANK")) {
		*rank = (int)strtol(getenv("PMIX_RANK"), NULL, 10);
		snprintf(var, n, "PMIX_RANK=%s", getenv("PMIX_RANK"));
		return 1;
	}
	return 0;
}

#ifdef MPSIM_HAVE_MPI
#include <mpi.h>

static bool active;
static int my_rank, world;
/* ranks_post's sends: each node owns its value until the send completes
 * (nodes never move; the array of pointers may) */
static struct posted {
	MPI_Request req;
	int64_t v;
} * *posted;
static size_t nposted, capposted;

bool ranks_built(char *lib, size_t n)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0;
	MPI_Get_library_version(v, &len);
	v[strcspn(v, ",\n")] = '\0'; /* "Open MPI v4.1.4, package: ..." */
	snprintf(lib, n, "%s", v);
	return true;
}

int ranks_init(int *argc, char ***argv)
{
	int rc = MPI_Init(argc, argv);
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "mpsim: MPI_Init failed (MPI error %d)\n", rc);
		return rc;
	}
	/* errors return (and the sweep says which rank), not abort the job */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &world);
	active = true;
	return 0;
}

bool ranks_active(void)
{
	return active;
}

static int mpi_rank(void)
{
	return my_rank;
}

static int mpi_size(void)
{
	return world;
}

static void nap(void)
{
	struct timespec ts = { 0, RANKS_POLL_US * 1000L };
	nanosleep(&ts, NULL);
}

static void check(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		char s[MPI_MAX_ERROR_STRING];
		int len = 0;
		MPI_Error_string(rc, s, &len);
		MP_PANIC("rank %d: %s: %s", my_rank, what, s);
	}
}

/* Complete r, briefly polling, then sleeping between tests. */
static void wait_req(MPI_Request *r, const char *what)
{
	for (int i = 0;; i++) {
		int done = 0;
		check(MPI_Test(r, &done, MPI_STATUS_IGNORE), what);
		if (done)
			return;
		if (i > 100)
			nap();
	}
}

/* the largest piece one MPI message carries (its count is an int) */
#define PIECE ((size_t)1 << 30)

static void mpi_send(int dst, int tag, const void *buf, size_t n)
{
	MPI_Request r;
	uint64_t len = n;
	check(MPI_Isend(&len, 1, MPI_UINT64_T, dst, tag, MPI_COMM_WORLD, &r), "send");
	wait_req(&r, "send");
	for (size_t off = 0; off < n; off += PIECE) {
		size_t k = n - off < PIECE ? n - off : PIECE;
		check(MPI_Isend((const char *)buf + off, (int)k, MPI_BYTE, dst, tag, MPI_COMM_WORLD,
				&r),
		      "send");
		wait_req(&r, "send");
	}
}

static void *mpi_recv(int src, int tag, size_t *n)
{
	MPI_Request r;
	uint64_t len = 0;
	check(MPI_Irecv(&len, 1, MPI_UINT64_T, src, tag, MPI_COMM_WORLD, &r), "receive");
	wait_req(&r, "receive");
	char *buf = mp_malloc(len + 1);
	for (size_t off = 0; off < len; off += PIECE) {
		size_t k = len - off < PIECE ? len - off : PIECE;
		check(MPI_Irecv(buf + off, (int)k, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r),
		      "receive");
		wait_req(&r, "receive");
	}
	buf[len] = '\0';
	*n = len;
	return buf;
}

bool ranks_probe(int *src, int *tag)
{
	int flag = 0;
	MPI_Status st;
	check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), "probe");
	if (flag) {
		*src = st.MPI_SOURCE;
		*tag = st.MPI_TAG;
	}
	return flag != 0;
}

void ranks_post(int dst, int tag, int64_t v)
{
	size_t i = 0; /* reuse a slot whose send completed */
	for (; i < nposted; i++) {
		int done = 0;
		check(MPI_Test(&posted[i]->req, &done, MPI_STATUS_IGNORE), "send");
		if (done)
			break;
	}
	if (i == nposted) {
		if (nposted == capposted) {
			capposted = capposted ? 2 * capposted : 16;
			posted = mp_realloc(posted, capposted * sizeof *posted);
		}
		posted[nposted++] = mp_calloc(1, sizeof **posted);
	}
	posted[i]->v = v;
	check(MPI_Isend(&posted[i]->v, 1, MPI_INT64_T, dst, tag, MPI_COMM_WORLD, &posted[i]->req),
	      "send");
}

int64_t ranks_take(int src, int tag)
{
	MPI_Request r;
	int64_t v = 0;
	check(MPI_Irecv(&v, 1, MPI_INT64_T, src, tag, MPI_COMM_WORLD, &r), "receive");
	wait_req(&r, "receive");
	return v;
}

static void mpi_bcast(void *buf, size_t n)
{
	MPI_Request r;
	MP_ASSERT(n < PIECE);
	check(MPI_Ibcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD, &r), "broadcast");
	wait_req(&r, "broadcast");
}

static void mpi_allmax(int64_t *v, size_t n)
{
	MPI_Request r;
	int64_t *in = mp_malloc(n * sizeof *in);
	memcpy(in, v, n * sizeof *in);
	check(MPI_Iallreduce(in, v, (int)n, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD, &r), "reduction");
	wait_req(&r, "reduction");
	mp_free(in);
}

static void mpi_allgather(const void *mine, void *all, size_t n)
{
	MP_ASSERT(n < PIECE);
	check(MPI_Allgather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, MPI_COMM_WORLD),
	      "all-gather");
}

/* the tag of a window's messages (the sweep's are 1-4, part_gather's 16) */
#define TAG_EXCHANGE 17

/* Each destination's part straight from its buffer (no packing into one),
 * each source's into its place in what this rank receives. */
static void *mpi_exchange(void *const *out, const size_t *nout, size_t *nin, size_t *total)
{
	int64_t *n64 = mp_malloc(2 * (size_t)world * sizeof *n64);
	for (int d = 0; d < world; d++)
		n64[d] = (int64_t)nout[d];
	check(MPI_Alltoall(n64, 1, MPI_INT64_T, n64 + world, 1, MPI_INT64_T, MPI_COMM_WORLD),
	      "exchange");
	size_t ro = 0;
	for (int s = 0; s < world; s++)
		ro += nin[s] = (size_t)n64[world + s];
	char *rb = mp_malloc(ro ? ro : 1), *at = rb;
	MPI_Request *req = mp_malloc(2 * (size_t)world * sizeof *req);
	int nreq = 0;
	for (int s = 0; s < world; s++) {
		MP_ASSERT(nin[s] < PIECE && nout[s] < PIECE);
		if (s == my_rank && nin[s])
			memcpy(at, out[s], nin[s]);
		else if (nin[s])
			check(MPI_Irecv(at, (int)nin[s], MPI_BYTE, s, TAG_EXCHANGE, MPI_COMM_WORLD,
					&req[nreq++]),
			      "exchange");
		at += nin[s];
	}
	for (int d = 0; d < world; d++)
		if (d != my_rank && nout[d])
			check(MPI_Isend(out[d], (int)nout[d], MPI_BYTE, d, TAG_EXCHANGE,
					MPI_COMM_WORLD, &req[nreq++]),
			      "exchange");
	check(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE), "exchange");
	mp_free(req);
	mp_free(n64);
	*total = ro;
	return rb;
}

void ranks_finalize(void)
{
	if (!active)
		return;
	/* a posted reply nobody took (the receiver stopped first) completes
	 * locally for a small message; nothing else can be pending here */
	for (size_t i = 0; i < nposted; i++) {
		int done = 0;
		MPI_Test(&posted[i]->req, &done, MPI_STATUS_IGNORE);
		if (!done)
			MPI_Request_free(&posted[i]->req);
	}
	active = false;
	MPI_Finalize();
	for (size_t i = 0; i < nposted; i++)
		mp_free(posted[i]);
	mp_free(posted);
	posted = NULL;
	nposted = capposted = 0;
}

#else /* built without MPI */

bool ranks_built(char *lib, size_t n)
{
	if (n)
		lib[0] = '\0';
	return false;
}

int ranks_init(int *argc, char ***argv)
{
	MP_PANIC("ranks_init: mpsim was built without MPI");
}

bool ranks_active(void)
{
	return false;
}

void ranks_finalize(void) {}

static int mpi_rank(void)
{
	return 0;
}

static int mpi_size(void)
{
	return 1;
}

bool ranks_probe(int *src, int *tag)
{
	MP_PANIC("ranks_probe: mpsim was built without MPI");
}

static void mpi_send(int dst, int tag, const void *buf, size_t n)
{
	MP_PANIC("ranks_send: mpsim was built without MPI");
}

static void *mpi_recv(int src, int tag, size_t *n)
{
	MP_PANIC("ranks_recv: mpsim was built without MPI");
}

void ranks_post(int dst, int tag, int64_t v)
{
	MP_PANIC("ranks_post: mpsim was built without MPI");
}

int64_t ranks_take(int src, int tag)
{
	MP_PANIC("ranks_take: mpsim was built without MPI");
}

static void mpi_bcast(void *buf, size_t n)
{
	MP_PANIC("ranks_bcast: mpsim was built without MPI");
}

static void mpi_allmax(int64_t *v, size_t n)
{
	MP_PANIC("ranks_allmax: mpsim was built without MPI");
}

static void mpi_allgather(const void *mine, void *all, size_t n)
{
	MP_PANIC("ranks_allgather: mpsim was built without MPI");
}

static void *mpi_exchange(void *const *out, const size_t *nout, size_t *nin, size_t *total)
{
	MP_PANIC("ranks_exchange: mpsim was built without MPI");
}

#endif

/* A partitioned run's functions: between MPI ranks, or between the threads
 * of `--threads N` (sim/threads.c). */
int ranks_rank(void)
{
	return threads_on() ? threads_rank() : mpi_rank();
}

int ranks_size(void)
{
	return threads_on() ? threads_size() : mpi_size();
}

void ranks_send(int dst, int tag, const void *buf, size_t n)
{
	if (threads_on())
		threads_send(dst, tag, buf, n);
	else
		mpi_send(dst, tag, buf, n);
}

void *ranks_recv(int src, int tag, size_t *n)
{
	return threads_on() ? threads_recv(src, tag, n) : mpi_recv(src, tag, n);
}

void ranks_bcast(void *buf, size_t n)
{
	if (threads_on())
		threads_bcast(buf, n);
	else
		mpi_bcast(buf, n);
}

void ranks_allmax(int64_t *v, size_t n)
{
	if (threads_on())
		threads_allmax(v, n);
	else
		mpi_allmax(v, n);
}

void ranks_allgather(const void *mine, void *all, size_t n)
{
	if (threads_on())
		threads_allgather(mine, all, n);
	else
		mpi_allgather(mine, all, n);
}

void *ranks_exchange(void *const *out, const size_t *nout, size_t *nin, size_t *total)
{
	return threads_on() ? threads_exchange(out, nout, nin, total)
			    : mpi_exchange(out, nout, nin, total);
}

/* collective.h - collective jobs (the experiment file's `collective:` section)
 * as message DAGs: Ring / Double Binary Tree / Halving-Doubling AllReduce,
 * ring AllGather and ReduceScatter, AlltoAll with a parallelism limit, over
 * several iterations with a compute gap, for `jobs` identical jobs placed on
 * disjoint hosts. */
#ifndef MPSIM_WORKLOAD_COLLECTIVE_H
#define MPSIM_WORKLOAD_COLLECTIVE_H

#include "core/opt.h"
#include "workload/workload.h"

/* COLL_BROADCAST is reached through coll_generate_one only (a trace's
 * collective nodes), not through the `collective:` section's `type`. */
enum coll_type {
	COLL_ALLREDUCE,
	COLL_ALLTOALL,
	COLL_ALLGATHER,
	COLL_REDUCESCATTER,
	COLL_BROADCAST
};
enum coll_algo { COLL_RING, COLL_DBT, COLL_HD };
enum coll_place { PLACE_RANDOM, PLACE_PACKED, PLACE_RAIL, PLACE_LIST, PLACE_SERVERS };
enum coll_trigger { COLL_ON_ARRIVAL, COLL_ON_ACK };
enum coll_pxn { COLL_PXN_AUTO, COLL_PXN_ON, COLL_PXN_OFF };

struct coll_params {
	int type;	/* enum coll_type */
	int algorithm;	/* enum coll_algo (allreduce) */
	uint64_t size;	/* bytes per rank buffer, as NCCL-tests counts it */
	uint64_t ranks; /* per job; 0 = every host / jobs */
	uint64_t jobs;
	int placement; /* enum coll_place */
	struct opt_strlist hosts;
	uint64_t chunk;
	uint64_t channels;    /* ring algorithms: NCCL's channels */
	uint64_t parallelism; /* alltoall: messages in flight per rank; 0 = n - 1 */
	int trigger;	      /* enum coll_trigger: a data dependency is met on arrival or ack */
	uint64_t inflight;    /* chunks in flight per chain; 0 = no bound */
	uint64_t iterations;  /* measured, after `warmup` ones */
	uint64_t warmup;
	simtime_t compute_gap;
	simtime_t start;
	int pxn; /* enum coll_pxn: a ring's hop between servers by the next GPU's rail */
};

extern const struct opt_desc coll_opts[];
extern const char *const coll_type_names[], *const coll_algo_names[];

/* The jobs a collective section made: job j's ranks sit on hosts[j * nranks ..]. */
struct coll_jobs {
	uint32_t njobs, nranks;
	uint32_t *hosts;
};

/* Append the jobs' messages to `out` (job field j + 1, iter set). Errors
 * (MP_EUSER, "key: expected ..."): more ranks than hosts, a host list that
 * does not fit, a rail placement the ToRs cannot hold. */
int coll_generate(const struct coll_params *p, const struct wl_env *env, struct flow_list *out,
		  struct coll_jobs *jobs, struct mp_err *e);
void coll_jobs_free(struct coll_jobs *j);

/* One collective of p's type, algorithm, chunk, channels and parallelism
 * (p->size bytes, at least coll_min_size(p, n)) on n >= 2 ranks at hosts[],
 * appended to `out` with the job field `job` and iteration `iter`: the
 * messages that wait for nothing else of it wait for flow `after` (UINT32_MAX:
 * none), and none starts before p->start. `gpus`: hosts per server (ring
 * orders). p->iterations, warmup, jobs, placement and compute_gap are not
 * read. Broadcast is NCCL's pipelined ring from ranks[0]: chunk j of hop k
 * waits for chunk j of hop k - 1. Stops early when the list is over its
 * limit (out->over; the caller refuses the run). */
void coll_generate_one(const struct coll_params *p, const uint32_t *hosts, uint32_t n,
		       const struct wl_env *env, uint32_t job, uint32_t iter, uint32_t after,
		       struct flow_list *out);
/* One collective of a training workload among n members at hosts[]: member
 * m reaches it when deps[dep_off[m] .. dep_off[m + 1]) complete (its
 * `arrive` marker, arrive[m]); it starts when the last member has arrived
 * (NCCL starts a collective when its last rank calls it), and member m is
 * done (done[m], a marker) once every message it sends or receives has
 * completed, plus `after` (an update delay; 0 = none). n < 2: nothing to
 * move, done[m] = arrive[m]. p->size is raised to coll_min_size. Messages
 * are of job `job`. Returns the start marker (n < 2: arrive[0]). */
uint32_t coll_lower(const struct coll_params *p, const uint32_t *hosts, uint32_t n,
		    const struct wl_env *env, uint32_t job, const uint32_t *deps,
		    const uint32_t *dep_off, simtime_t after, uint32_t *arrive, uint32_t *done,
		    struct flow_list *out);
/* The least size coll_generate_one can cut among n ranks (2 bytes per rank
 * and channel). */
uint64_t coll_min_size(const struct coll_params *p, uint32_t n);

/* NCCL-tests' bus bandwidth factor: busbw = algbw x this (AllReduce
 * 2(n-1)/n; AllGather, ReduceScatter and AlltoAll (n-1)/n). */
double coll_busbw_factor(int type, uint32_t n);

#endif

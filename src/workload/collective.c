/* collective.c - collective jobs as message DAGs (see collective.h).
 *
 * Owns: the `collective:` section's options (coll_opts) and the generators.
 * Every algorithm moves NCCL's data volumes; `size` means what NCCL-tests
 * means by it (AllReduce: the buffer each rank reduces; AllGather: the output
 * buffer, each rank contributing size/n; ReduceScatter: the input buffer;
 * AlltoAll: each rank's send buffer, size/n to every rank). Uneven divisions
 * are spread byte by byte (piece k of b bytes in m: b(k+1)/m - bk/m), so
 * totals are exact. Dependencies are on data, as a CCL waits for it:
 *
 * - Ring (AllReduce: reduce-scatter then all-gather, 2(n-1) steps; AllGather
 *   and ReduceScatter: n-1 steps). Rank r sends a segment of size/n to rank
 *   r+1 at every step, cut in chunks of at most `chunk`; chunk j of step k
 *   waits for chunk j of step k-1 to arrive from rank r-1 (pipelining).
 *   With `channels` C (NCCL's channels), C independent rings each carry
 *   size/C; ring c visits the ranks in order, except that every run of
 *   consecutive ranks on one server (the `server:` section) starts c GPUs
 *   further on: ring c enters a server at its c-th GPU and leaves from the
 *   one before it, so over C = gpus rings every GPU's NIC sends for one ring
 *   and receives for one (our choice: NCCL searches its own orders, but it too
 *   spreads its rings over the NICs; with one GPU per server the rings are
 *   the same order). With `pxn` (auto: on a rail-optimized fabric, where GPU
 *   k of every server is on rail k), the hop from a server's last GPU on the
 *   ring to the next server's first leaves from the NIC of the server's GPU
 *   on the receiver's rail, after an NVLink hop to that GPU (a second
 *   message the rail one waits for), as NCCL keeps a ring's network hops on
 *   one NIC per channel (NCCL_CROSS_NIC) and reaches it over NVLink (PXN,
 *   NCCL 2.12): ring c's hops between servers all stay on rail c. Trees,
 *   halving-doubling, AlltoAll and Broadcast send from the sending GPU's own
 *   NIC: where their peers sit on other rails they cross the spines.
 * - Double binary tree AllReduce (NCCL, Sanders et al., "Two-tree algorithms
 *   for full bandwidth broadcast, reduction and scan", Parallel Computing
 *   2009): tree 0 is NCCL's binary tree (ncclGetBtree in NCCL's
 *   src/graph/trees.cc: rank r's parent is (r ^ b) | (b << 1), or r ^ b if
 *   that is out of range, b = r's lowest set bit; rank 0 is the root); tree 1
 *   mirrors it (rank n-1-r) when n is even and shifts it by one when n is odd,
 *   as NCCL's ncclGetDtree does. Each tree carries half the buffer in chunks:
 *   a node sends chunk j up once it has chunk j from every child (the 2:1
 *   incast at inner nodes); the root sends chunk j down once reduced; a node
 *   forwards chunk j to its children once it has it from its parent.
 * - Halving-doubling AllReduce (Rabenseifner's algorithm as MPICH runs it:
 *   Thakur, Rabenseifner, Gropp, "Optimization of collective communication
 *   operations in MPICH", IJHPCA 2005): recursive halving (reduce-scatter) then
 *   recursive doubling (all-gather) among p = the largest power of two <= n.
 *   When n is not a power of two, the first 2(n-p) ranks pair up first: each
 *   even one sends its whole buffer to the odd one after it and sits out, and
 *   gets the result back whole at the end; every step waits for the whole
 *   previous step from the partner (its data was reduced with it).
 * - AlltoAll (STrack paper, section 4.3): rank i sends its k-th message
 *   (k = 1 .. n-1) to rank (i + k) mod n, size/n bytes whole (the CCL
 *   scheduler may stripe it over queue pairs); message k waits for message
 *   k - P of the same rank to be acknowledged, so at most P are in flight.
 *
 * When a dependency on data is met (`trigger`, ring, tree and
 * halving-doubling): `arrival` (the default), when the chunk waited for has
 * its last byte at the receiver, as a CCL sees data land; or `ack`, when its
 * sender has that last byte acknowledged, which is how htsim's collective
 * traces chain their flows: every flow of gen_allreduce.py (and of its tree
 * and AlltoAll siblings) in Broadcom/csg-htsim sim/datacenter/
 * connection_matrices, the simulator of the STrack paper's authors (pull
 * request 4), starts the next hop of its chain with `send_done_trigger`, fired
 * when the source's last byte is acknowledged (htsim's sinks never fire
 * `recv_done_trigger`; see htsim_cm.c). The paper itself says only that
 * "messages from later steps are sent only after messages in previous steps
 * are received" (section 4.3).
 *
 * A chain is the sequence of chunks one rank sends to one peer in one ring
 * (all its steps, in step then chunk order), one tree edge and direction, or
 * one halving-doubling step. With `inflight` B > 0, chunk i of a chain also
 * waits for chunk i - B of the same chain (met as `trigger` says), so at
 * most B of a chain's chunks are posted and not yet done: NCCL's connection
 * has NCCL_STEPS (8) slots, htsim's ring trace passes one flow per ring link
 * at a time. B = 0 (the default) posts every chunk as soon as its data is
 * there. Both choices leave AlltoAll alone (its `parallelism` already counts
 * from the acknowledgement) and the barrier between iterations (on arrival).
 *
 * Iterations (`warmup` ones first, then `iterations`; only the latter are
 * measured): iteration i+1 of a job starts `compute_gap` after every message
 * of iteration i arrived (a job-wide barrier: synchronous data-parallel
 * training, as the UDMP paper describes its ResNet and VGG jobs). The barrier
 * is a marker (a zero-byte entry of the flow list, no traffic).
 *
 * Placement of job j's n ranks: `random` (a seeded shuffle of all hosts, job
 * j taking the j-th block of n: disjoint), `packed` (hosts jn .. jn+n-1),
 * `rail` (rank r of every job under ToR r mod T, as same-index GPUs share a
 * leaf in a rail-optimised cluster), `servers` (whole servers of the
 * `server:` section, chosen by a seeded shuffle, ceil(n/G) per job: rank r on
 * GPU r mod G of the job's (r/G)-th server), `list` (the hosts given, job by
 * job).
 */
#include "workload/collective.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/rng.h"

const char *const coll_type_names[] = { "allreduce", "alltoall", "allgather", "reducescatter",
					NULL };
const char *const coll_algo_names[] = { "ring", "double_binary_tree", "halving_doubling", NULL };

const struct opt_desc coll_opts[] = {
	{ "type", OPT_ENUM, offsetof(struct coll_params, type), NULL, 0, 0,
	  "the collective: allreduce, alltoall, allgather or reducescatter", coll_type_names },
	{ "algorithm", OPT_ENUM, offsetof(struct coll_params, algorithm), "ring", 0, 0,
	  "allreduce: ring, double_binary_tree (NCCL's two trees) or halving_doubling",
	  coll_algo_names },
	{ "size", OPT_SIZE, offsetof(struct coll_params, size), NULL, 1, 1e15,
	  "bytes per rank buffer, as NCCL-tests counts it (AllGather: the output buffer)" },
	{ "ranks", OPT_UINT, offsetof(struct coll_params, ranks), "0", 0, 1e7,
	  "ranks (hosts) per job; 0 = every host shared out among the jobs" },
	{ "jobs", OPT_UINT, offsetof(struct coll_params, jobs), "1", 1, 1e6,
	  "identical jobs running at once, on disjoint hosts" },
	{ "placement", OPT_ENUM, offsetof(struct coll_params, placement), "random", 0, 0,
	  "random (seeded), packed (consecutive hosts), rail (rank r under ToR r mod T), "
	  "servers (whole random servers, ranks in GPU order) or list (`hosts`)",
	  (const char *const[]){ "random", "packed", "rail", "list", "servers", NULL } },
	{ "hosts", OPT_STRLIST, offsetof(struct coll_params, hosts), "", 0, 0,
	  "placement list: host indices (or names h<i>), job after job" },
	{ "chunk", OPT_SIZE, offsetof(struct coll_params, chunk), "128KB", 1, 1e12,
	  "pipelining unit of ring and tree steps (the STrack paper uses 128 KB)" },
	{ "channels", OPT_UINT, offsetof(struct coll_params, channels), "1", 1, 1024,
	  "ring algorithms: NCCL's channels, rings of size/channels each, ring c entering "
	  "every server at its c-th GPU" },
	{ "parallelism", OPT_UINT, offsetof(struct coll_params, parallelism), "0", 0, 1e7,
	  "alltoall: messages in flight per rank; 0 = n - 1 (all at once)" },
	{ "trigger", OPT_ENUM, offsetof(struct coll_params, trigger), "arrival", 0, 0,
	  "ring, tree and halving-doubling: a chunk waiting on data starts when that data "
	  "arrives at its receiver (arrival) or when its sender has it acknowledged (ack: "
	  "htsim's send_done_trigger, as the STrack authors' simulator chains its collective "
	  "flows, Broadcom/csg-htsim connection_matrices/gen_allreduce.py)",
	  (const char *const[]){ "arrival", "ack", NULL } },
	{ "inflight", OPT_UINT, offsetof(struct coll_params, inflight), "0", 0, 65536,
	  "ring, tree and halving-doubling: chunks in flight per chain (a rank's chunks to one "
	  "peer in one ring, tree edge or halving-doubling step): chunk i also waits for chunk "
	  "i - inflight, done as `trigger` says; 0 = no bound (NCCL: NCCL_STEPS = 8 slots per "
	  "connection; htsim's ring trace: about 1 per link)" },
	{ "pxn", OPT_ENUM, offsetof(struct coll_params, pxn), "auto", 0, 0,
	  "ring hops between servers: on = from the NIC on the next GPU's rail, after an NVLink "
	  "hop to the GPU there (NCCL's PXN), off = from the sending GPU's own NIC, auto = on "
	  "where the topology puts GPU k of every server on rail k (rail_optimized)",
	  (const char *const[]){ "auto", "on", "off", NULL } },
	{ "iterations", OPT_UINT, offsetof(struct coll_params, iterations), "1", 1, 1e6,
	  "times each job runs the collective (after the warm-up ones)" },
	{ "warmup", OPT_UINT, offsetof(struct coll_params, warmup), "0", 0, 1e6,
	  "iterations run first and left out of collectives.csv and the collective metrics "
	  "(NCCL-tests' -w)" },
	{ "compute_gap", OPT_TIME, offsetof(struct coll_params, compute_gap), "0", 0, 1e15,
	  "between iterations: from the last byte of one to the start of the next" },
	{ "start", OPT_TIME, offsetof(struct coll_params, start), "0", 0, 1e16,
	  "when the jobs' first iteration starts" },
	OPT_END,
};

double coll_busbw_factor(int type, uint32_t n)
{
	return type == COLL_ALLREDUCE ? 2.0 * (n - 1) / n : (double)(n - 1) / n;
}

/* ---- the generator's state -------------------------------------------------- */

struct gen {
	const struct coll_params *p;
	struct flow_list *out;
	const uint32_t *host; /* this job's hosts, by rank */
	uint32_t n, job, iter;
	uint32_t gpus;	  /* hosts per server (1: none) */
	bool pxn;	  /* ring hops between servers by the next GPU's rail (ring_proxy) */
	uint32_t barrier; /* the previous iteration's marker, UINT32_MAX = none */
	size_t first_id;  /* this iteration's first message */
	uint32_t on_data; /* 0 or FLOW_DEP_SENT: how a dependency on data is met */
	/* chains (`inflight` B > 0): the ids of the last B chunks of each,
	 * slot[c * Bc + i % Bc] for chunk i, and how many each has had; Bc is
	 * B, or 0 while no chain of the current step has more than B chunks */
	uint32_t B, Bc, *slot;
	uint64_t *count;
};

static uint64_t piece(uint64_t b, uint64_t k, uint64_t m)
{
	return b * (k + 1) / m - b * k / m;
}

static uint32_t nchunks(const struct gen *g, uint64_t b)
{
	uint64_t m = (b + g->p->chunk - 1) / g->p->chunk;
	return (uint32_t)(m ? m : 1);
}

/* A message from rank a to rank b; `first`: it waits for nothing of this
 * iteration, so it waits for the previous one's barrier. */
static uint32_t msg(struct gen *g, uint32_t a, uint32_t b, uint64_t bytes, bool first)
{
	flow_list_push(g->out, g->host[a], g->host[b], bytes, g->p->start);
	if (g->out->over) /* refused after generation; the loops stop early */
		return 0;
	struct flow_spec *f = &g->out->v[g->out->n - 1];
	f->job = g->job + 1;
	f->iter = g->iter;
	if (first && g->barrier != UINT32_MAX)
		flow_list_dep(g->out, g->barrier);
	return f->id;
}

static void dep(struct gen *g, uint32_t id)
{
	flow_list_dep(g->out, id);
}

/* The last message pushed waits on data: message id's arrival or ack. */
static void dep_data(struct gen *g, uint32_t id)
{
	flow_list_dep(g->out, id | g->on_data);
}

/* Chains of an algorithm step (`inflight` B): nchains of them, none yet, each
 * of at most `per` chunks. */
static void chains_begin(struct gen *g, uint32_t nchains, uint64_t per)
{
	g->Bc = g->B < per ? g->B : 0;
	if (!g->Bc)
		return;
	g->slot = mp_malloc((size_t)nchains * g->Bc * sizeof *g->slot);
	g->count = mp_calloc(nchains, sizeof *g->count);
}

static void chains_end(struct gen *g)
{
	mp_free(g->slot);
	mp_free(g->count);
	g->slot = NULL;
	g->count = NULL;
}

/* The last message pushed, id, is the next chunk of chain c: it waits for the
 * chunk B before it on the chain. */
static void chain_next(struct gen *g, uint32_t c, uint32_t id)
{
	if (!g->Bc || g->out->over)
		return;
	uint64_t i = g->count[c]++;
	uint32_t *s = &g->slot[(size_t)c * g->Bc + i % g->Bc];
	if (i >= g->Bc)
		dep_data(g, *s);
	*s = id;
}

/* ---- ring ------------------------------------------------------------------- */

/* Ring c's order of the ranks: each run of consecutive ranks on one server
 * rotated by c. */
static void ring_order(const struct gen *g, uint32_t c, uint32_t *order)
{
	uint32_t n = g->n, G = g->gpus;
	for (uint32_t b = 0; b < n;) {
		uint32_t k = 1;
		while (b + k < n && g->host[b + k] / G == g->host[b] / G)
			k++;
		for (uint32_t i = 0; i < k; i++)
			order[b + i] = b + (i + c) % k;
		b += k;
	}
}

/* PXN (NCCL's PCIe x NVLink proxy, for rail-optimized fabrics): position r's
 * hop to another server leaves from the NIC of the GPU of r's server on the
 * receiver's rail, which the data reaches over NVLink first, so the hop stays
 * on one rail. proxy[r]: that rank, or UINT32_MAX (pxn off, the same server,
 * the sender on that rail already, or no GPU of the group there). */
static void ring_proxy(const struct gen *g, const uint32_t *order, uint32_t *proxy)
{
	uint32_t n = g->n, G = g->gpus;
	for (uint32_t b = 0; b < n;) {
		uint32_t k = 1;
		while (b + k < n && g->host[b + k] / G == g->host[b] / G)
			k++;
		for (uint32_t r = b; r < b + k; r++) {
			uint32_t ha = g->host[order[r]], hb = g->host[order[(r + 1) % n]];
			proxy[r] = UINT32_MAX;
			if (!g->pxn || ha / G == hb / G || ha % G == hb % G)
				continue;
			for (uint32_t q = b; q < b + k; q++) /* the run: ranks b .. b+k-1 */
				if (g->host[q] % G == hb % G)
					proxy[r] = q;
		}
		b += k;
	}
}

/* Chunk sz of ring position r to r + 1 (by its proxy, if any: an NVLink hop
 * then the rail): the message the next step's chunk waits for. `wait`: the
 * chunk of the step before, UINT32_MAX for none (the first step). */
static uint32_t ring_hop(struct gen *g, const uint32_t *order, const uint32_t *proxy, uint32_t r,
			 uint64_t sz, uint32_t wait)
{
	uint32_t a = order[r], b = order[(r + 1) % g->n];
	if (proxy[r] != UINT32_MAX) {
		uint32_t hop = msg(g, a, proxy[r], sz, wait == UINT32_MAX);
		if (wait != UINT32_MAX)
			dep_data(g, wait);
		uint32_t id = msg(g, proxy[r], b, sz, false);
		dep_data(g, hop);
		return id;
	}
	uint32_t id = msg(g, a, b, sz, wait == UINT32_MAX);
	if (wait != UINT32_MAX)
		dep_data(g, wait);
	return id;
}

static void gen_ring(struct gen *g, uint32_t steps)
{
	uint32_t n = g->n, C = (uint32_t)g->p->channels;
	uint32_t *order = mp_malloc(n * sizeof *order), *proxy = mp_malloc(n * sizeof *proxy);
	for (uint32_t c = 0; c < C && !g->out->over; c++) {
		uint64_t S = piece(g->p->size, c, C);
		uint32_t m = nchunks(g, S / n);
		uint32_t *prev = mp_malloc((size_t)n * m * sizeof *prev);
		uint32_t *cur = mp_malloc((size_t)n * m * sizeof *cur);
		ring_order(g, c, order);
		ring_proxy(g, order, proxy);
		chains_begin(g, n,
			     (uint64_t)steps * m); /* chain r: position r to r + 1, every step */
		for (uint32_t k = 0; k < steps && !g->out->over; k++) {
			for (uint32_t r = 0; r < n; r++) { /* r: a position on ring c */
				uint32_t seg = (r + n - k % n) % n;
				uint64_t sz = piece(S, seg, n);
				for (uint32_t j = 0; j < m && !g->out->over; j++) {
					cur[r * m + j] = ring_hop(
					    g, order, proxy, r, piece(sz, j, m),
					    k > 0 ? prev[((r + n - 1) % n) * m + j] : UINT32_MAX);
					chain_next(g, r, cur[r * m + j]);
				}
			}
			uint32_t *t = prev;
			prev = cur;
			cur = t;
		}
		chains_end(g);
		mp_free(prev);
		mp_free(cur);
	}
	mp_free(order);
	mp_free(proxy);
}

/* ---- double binary tree ------------------------------------------------------ */

/* NCCL's binary tree: the parent of rank r (UINT32_MAX for the root, 0). */
static uint32_t btree_parent(uint32_t n, uint32_t r)
{
	if (r == 0)
		return UINT32_MAX;
	uint32_t bit = r & -r;
	uint32_t up = (r ^ bit) | (bit << 1);
	return up >= n ? r ^ bit : up;
}

static uint32_t dtree_parent(uint32_t n, uint32_t t, uint32_t r)
{
	if (t == 0)
		return btree_parent(n, r);
	if (n % 2 == 0) { /* mirror */
		uint32_t u = btree_parent(n, n - 1 - r);
		return u == UINT32_MAX ? u : n - 1 - u;
	}
	uint32_t u = btree_parent(n, (r + n - 1) % n); /* shift */
	return u == UINT32_MAX ? u : (u + 1) % n;
}

static void gen_dbt(struct gen *g)
{
	uint32_t n = g->n;
	uint32_t *par = mp_malloc(n * sizeof *par), *order = mp_malloc(n * sizeof *order);
	uint32_t *kid0 = mp_malloc(n * sizeof *kid0), *nkid = mp_malloc(n * sizeof *nkid);
	uint32_t *kids = mp_malloc(n * sizeof *kids);
	for (uint32_t t = 0; t < 2; t++) {
		uint64_t half = t == 0 ? g->p->size / 2 : g->p->size - g->p->size / 2;
		uint32_t m = nchunks(g, half), root = UINT32_MAX;
		/* children lists (by rank order) and a breadth-first order from the root */
		memset(nkid, 0, n * sizeof *nkid);
		for (uint32_t r = 0; r < n; r++) {
			par[r] = dtree_parent(n, t, r);
			if (par[r] == UINT32_MAX)
				root = r;
			else
				nkid[par[r]]++;
		}
		for (uint32_t r = 0, o = 0; r < n; r++) {
			kid0[r] = o;
			o += nkid[r];
			nkid[r] = 0;
		}
		for (uint32_t r = 0; r < n; r++)
			if (par[r] != UINT32_MAX)
				kids[kid0[par[r]] + nkid[par[r]]++] = r;
		uint32_t no = 0;
		order[no++] = root;
		for (uint32_t i = 0; i < no; i++)
			for (uint32_t k = 0; k < nkid[order[i]]; k++)
				order[no++] = kids[kid0[order[i]] + k];
		MP_ASSERT(no == n);
		uint32_t *up = mp_malloc((size_t)n * sizeof *up),
			 *down = mp_malloc((size_t)n * sizeof *down);
		chains_begin(g, 2 * n, m); /* chain v: v to its parent; n + c: to child c */
		for (uint32_t j = 0; j < m && !g->out->over; j++) {
			uint64_t b = piece(half, j, m);
			for (uint32_t i = n; i-- > 1;) { /* children before parents */
				uint32_t v = order[i];
				up[v] = msg(g, v, par[v], b, nkid[v] == 0);
				for (uint32_t k = 0; k < nkid[v]; k++)
					dep_data(g, up[kids[kid0[v] + k]]);
				chain_next(g, v, up[v]);
			}
			for (uint32_t i = 0; i < n; i++) { /* parents before children */
				uint32_t v = order[i];
				for (uint32_t k = 0; k < nkid[v]; k++) {
					uint32_t c = kids[kid0[v] + k];
					down[c] = msg(g, v, c, b, false);
					if (v == root)
						for (uint32_t q = 0; q < nkid[v]; q++)
							dep_data(g, up[kids[kid0[v] + q]]);
					else
						dep_data(g, down[v]);
					chain_next(g, n + c, down[c]);
				}
			}
		}
		chains_end(g);
		mp_free(up);
		mp_free(down);
	}
	mp_free(par);
	mp_free(order);
	mp_free(kid0);
	mp_free(nkid);
	mp_free(kids);
}

/* ---- halving-doubling --------------------------------------------------------- */

/* The chunks of `bytes` from rank a to rank b, each waiting for every id of
 * wait[0 .. nwait) (none: first of the iteration); their ids into got. */
static uint32_t send_step(struct gen *g, uint32_t a, uint32_t b, uint64_t bytes,
			  const uint32_t *wait, uint32_t nwait, uint32_t *got)
{
	uint32_t m = nchunks(g, bytes);
	for (uint32_t j = 0; j < m && !g->out->over; j++) {
		got[j] = msg(g, a, b, piece(bytes, j, m), nwait == 0);
		for (uint32_t k = 0; k < nwait; k++)
			dep_data(g, wait[k]);
		if (g->B && j >= g->B) /* this step's chain: chunk j - B */
			dep_data(g, got[j - g->B]);
	}
	return m;
}

static void swap_ids(uint32_t **a, uint32_t **b)
{
	uint32_t *t = *a;
	*a = *b;
	*b = t;
}

static void gen_hd(struct gen *g)
{
	uint32_t n = g->n, p2 = 1, L = 0;
	uint64_t S = g->p->size;
	while (p2 * 2 <= n) {
		p2 *= 2;
		L++;
	}
	uint32_t rem = n - p2, mS = nchunks(g, S);
	/* rx[v]: ids of the chunks vrank v got in its last step; nrx[v] how many */
	uint32_t cap = mS;
	uint32_t *rx = mp_calloc((size_t)p2 * cap, sizeof *rx), *nrx = mp_calloc(p2, sizeof *nrx);
	uint32_t *tmp = mp_calloc((size_t)p2 * cap, sizeof *tmp),
		 *ntmp = mp_calloc(p2, sizeof *ntmp);
	uint64_t *lo = mp_calloc((size_t)p2 * (L + 1), sizeof *lo);
	uint64_t *hi = mp_calloc((size_t)p2 * (L + 1), sizeof *hi);
#define REAL(v) ((v) < rem ? 2 * (v) + 1 : (v) + rem)
	for (uint32_t v = 0; v < rem; v++) /* pre-step: 2v -> 2v + 1, the whole buffer */
		nrx[v] = send_step(g, 2 * v, 2 * v + 1, S, NULL, 0, &rx[(size_t)v * cap]);
	for (uint32_t v = 0; v < p2; v++) {
		lo[(size_t)v * (L + 1)] = 0;
		hi[(size_t)v * (L + 1)] = S;
	}
	for (uint32_t s = 0; s < L; s++) { /* recursive halving */
		uint32_t dist = p2 >> (s + 1);
		for (uint32_t v = 0; v < p2; v++) {
			uint32_t w = v ^ dist;
			uint64_t l = lo[(size_t)v * (L + 1) + s], h = hi[(size_t)v * (L + 1) + s];
			uint64_t mid = l + (h - l) / 2;
			bool lower = !(v & dist);
			lo[(size_t)v * (L + 1) + s + 1] = lower ? l : mid;
			hi[(size_t)v * (L + 1) + s + 1] = lower ? mid : h;
			uint64_t send = lower ? h - mid : mid - l;
			ntmp[w] = send_step(g, REAL(v), REAL(w), send, &rx[(size_t)v * cap], nrx[v],
					    &tmp[(size_t)w * cap]);
		}
		swap_ids(&rx, &tmp);
		swap_ids(&nrx, &ntmp);
	}
	for (uint32_t s = 0; s < L; s++) { /* recursive doubling: each sends what it holds */
		uint32_t dist = 1u << s, lvl = L - s;
		for (uint32_t v = 0; v < p2; v++) {
			uint32_t w = v ^ dist;
			uint64_t send =
			    hi[(size_t)v * (L + 1) + lvl] - lo[(size_t)v * (L + 1) + lvl];
			ntmp[w] = send_step(g, REAL(v), REAL(w), send, &rx[(size_t)v * cap], nrx[v],
					    &tmp[(size_t)w * cap]);
		}
		swap_ids(&rx, &tmp);
		swap_ids(&nrx, &ntmp);
	}
	for (uint32_t v = 0; v < rem; v++) /* post-step: the result back to 2v */
		send_step(g, 2 * v + 1, 2 * v, S, &rx[(size_t)v * cap], nrx[v], &tmp[0]);
#undef REAL
	mp_free(rx);
	mp_free(nrx);
	mp_free(tmp);
	mp_free(ntmp);
	mp_free(lo);
	mp_free(hi);
}

/* ---- alltoall ------------------------------------------------------------------ */

static void gen_alltoall(struct gen *g)
{
	uint32_t n = g->n;
	uint64_t P = g->p->parallelism ? g->p->parallelism : n - 1;
	for (uint32_t i = 0; i < n && !g->out->over; i++)
		for (uint32_t k = 1; k < n; k++) { /* rank i's messages have consecutive ids */
			uint32_t d = (i + k) % n;
			uint32_t x = msg(g, i, d, piece(g->p->size, d, n), k <= P);
			if (k > P) /* message k - P of rank i acknowledged */
				dep(g, (x - (uint32_t)P) | FLOW_DEP_SENT);
		}
}

/* ---- broadcast ---------------------------------------------------------------- */

/* NCCL's ring broadcast: rank 0 (the root) sends the buffer to rank 1, which
 * forwards it to rank 2, and so on, chunk by chunk (pipelined). */
static void gen_bcast(struct gen *g)
{
	uint32_t n = g->n, m = nchunks(g, g->p->size);
	uint32_t *prev = mp_malloc((size_t)m * sizeof *prev);
	for (uint32_t k = 0; k + 1 < n && !g->out->over; k++)
		for (uint32_t j = 0; j < m && !g->out->over; j++) {
			uint32_t id = msg(g, k, k + 1, piece(g->p->size, j, m), k == 0);
			if (k > 0)
				dep_data(g, prev[j]);
			prev[j] = id;
		}
	mp_free(prev);
}

/* ---- how many messages ------------------------------------------------------- */

static double chunks64(const struct coll_params *p, uint64_t b)
{
	uint64_t m = (b + p->chunk - 1) / p->chunk;
	return (double)(m ? m : 1);
}

/* The messages one iteration of one job of n ranks generates (halving-
 * doubling: its per-step shares rounded down, a slight underestimate), from
 * the parameters alone: the generators allocate arrays of chunks per rank, so
 * the count is checked before any of them (coll_generate). */
static double iter_messages(const struct coll_params *p, uint64_t n)
{
	bool ring = p->type == COLL_ALLGATHER || p->type == COLL_REDUCESCATTER ||
		    (p->type == COLL_ALLREDUCE && p->algorithm == COLL_RING);
	if (ring) {
		double steps = p->type == COLL_ALLREDUCE ? 2.0 * (double)n - 2 : (double)n - 1;
		double sum = 0;
		for (uint64_t c = 0; c < p->channels; c++)
			sum += chunks64(p, piece(p->size, c, p->channels) / n);
		return steps * (double)n * sum;
	}
	if (p->type == COLL_ALLTOALL)
		return (double)n * (double)(n - 1);
	if (p->algorithm == COLL_DBT)
		return 2.0 * (double)(n - 1) *
		       (chunks64(p, p->size / 2) + chunks64(p, p->size - p->size / 2));
	uint64_t p2 = 1, L = 0; /* halving-doubling */
	while (p2 * 2 <= n) {
		p2 *= 2;
		L++;
	}
	double sum = 2.0 * (double)(n - p2) * chunks64(p, p->size);
	for (uint64_t st = 0; st < L; st++)
		sum += 2.0 * (double)p2 * chunks64(p, p->size >> (st + 1));
	return sum;
}

/* ---- placement and jobs ----------------------------------------------------- */

static int place(const struct coll_params *p, const struct wl_env *env, uint32_t n, uint32_t njobs,
		 uint32_t *hosts, struct mp_err *e)
{
	uint32_t H = env->nhosts;
	switch (p->placement) {
	case PLACE_PACKED:
		for (uint32_t i = 0; i < n * njobs; i++)
			hosts[i] = i;
		return MP_OK;
	case PLACE_RANDOM: {
		uint32_t *all = mp_malloc(H * sizeof *all);
		struct mp_rng r;
		for (uint32_t i = 0; i < H; i++)
			all[i] = i;
		rng_init(&r, env->seed, RNG_WORKLOAD,
			 WORKLOAD_STREAM(WORKLOAD_STREAM_COLLECTIVE, 0));
		rng_shuffle_head(&r, all, H, n * njobs);
		memcpy(hosts, all, (size_t)n * njobs * sizeof *hosts);
		mp_free(all);
		return MP_OK;
	}
	case PLACE_RAIL: {
		uint32_t hpt = env->hosts_per_tor;
		if (!hpt || H % hpt)
			return mp_errf(e, MP_EUSER,
				       "placement: rail needs a topology with equal ToRs");
		uint32_t T = H / hpt, per = (n + T - 1) / T;
		if ((uint64_t)per * njobs > hpt)
			return mp_errf(e, MP_EUSER,
				       "placement: rail puts %u ranks of each of %u jobs under "
				       "every ToR, but a ToR has %u hosts",
				       per, njobs, hpt);
		for (uint32_t j = 0; j < njobs; j++)
			for (uint32_t r = 0; r < n; r++)
				hosts[j * n + r] = (r % T) * hpt + (r / T) * njobs + j;
		return MP_OK;
	}
	case PLACE_SERVERS: {
		uint32_t G = env->gpus_per_server > 1 ? env->gpus_per_server : 1;
		uint32_t ns = H / G, per = (n + G - 1) / G;
		if ((uint64_t)per * njobs > ns)
			return mp_errf(
			    e, MP_EUSER,
			    "placement: servers gives each of %u jobs %u whole servers of "
			    "%u GPUs, but the fabric has %u servers",
			    njobs, per, G, ns);
		uint32_t *all = mp_malloc((ns ? ns : 1) * sizeof *all);
		struct mp_rng r;
		for (uint32_t i = 0; i < ns; i++)
			all[i] = i;
		rng_init(&r, env->seed, RNG_WORKLOAD,
			 WORKLOAD_STREAM(WORKLOAD_STREAM_COLLECTIVE, 1));
		rng_shuffle_head(&r, all, ns, per * njobs);
		for (uint32_t j = 0; j < njobs; j++)
			for (uint32_t k = 0; k < n; k++)
				hosts[j * n + k] = all[j * per + k / G] * G + k % G;
		mp_free(all);
		return MP_OK;
	}
	default: { /* list */
		if (p->hosts.n != (size_t)n * njobs)
			return mp_errf(e, MP_EUSER,
				       "hosts: expected %u hosts (%u ranks x %u jobs), got %zu",
				       n * njobs, n, njobs, p->hosts.n);
		for (size_t i = 0; i < p->hosts.n; i++) {
			const char *s = p->hosts.v[i];
			uint64_t v;
			if (workload_parse_uint(s[0] == 'h' ? s + 1 : s, UINT32_MAX, &v) || v >= H)
				return mp_errf(
				    e, MP_EUSER,
				    "hosts: expected a host index below %u (or h<i>), got "
				    "'%s'",
				    H, s);
			for (size_t k = 0; k < i; k++)
				if (hosts[k] == v)
					return mp_errf(
					    e, MP_EUSER,
					    "hosts: host %s is listed twice (jobs and ranks "
					    "need distinct hosts)",
					    s);
			hosts[i] = (uint32_t)v;
		}
		return MP_OK;
	}
	}
}

int coll_generate(const struct coll_params *p, const struct wl_env *env, struct flow_list *out,
		  struct coll_jobs *jobs, struct mp_err *e)
{
	memset(jobs, 0, sizeof *jobs);
	uint32_t njobs = (uint32_t)p->jobs;
	uint64_t n = p->ranks;
	if (n == 0)
		n = p->placement == PLACE_LIST ? p->hosts.n / njobs : env->nhosts / njobs;
	if (n < 2)
		return mp_errf(e, MP_EUSER, "ranks: expected at least 2 ranks per job, got %llu",
			       (unsigned long long)n);
	if (n * njobs > env->nhosts)
		return mp_errf(
		    e, MP_EUSER, "ranks: %llu ranks x %u jobs need %llu hosts; the fabric has %u",
		    (unsigned long long)n, njobs, (unsigned long long)(n * njobs), env->nhosts);
	if (p->size < 2 * n)
		return mp_errf(e, MP_EUSER, "size: expected at least 2 bytes per rank (%llu)",
			       (unsigned long long)(2 * n));
	if (p->placement != PLACE_LIST && p->hosts.n)
		return mp_errf(e, MP_EUSER, "hosts: given, but placement is not list");
	bool ring = p->type == COLL_ALLGATHER || p->type == COLL_REDUCESCATTER ||
		    (p->type == COLL_ALLREDUCE && p->algorithm == COLL_RING);
	if (p->channels > 1 && !ring)
		return mp_errf(e, MP_EUSER,
			       "channels: only ring algorithms have channels (ring allreduce, "
			       "allgather, reducescatter)");
	if (p->size < 2 * n * p->channels)
		return mp_errf(e, MP_EUSER,
			       "size: expected at least 2 bytes per rank and channel (%llu)",
			       (unsigned long long)(2 * n * p->channels));
	/* every message's memory and id, before anything is allocated for them */
	double iters = (double)(p->warmup + p->iterations);
	double count = (double)njobs * (iters * iter_messages(p, n) + iters - 1);
	struct mp_err ce = { 0 };
	if (flow_list_reserve(out, count < 1.8e19 ? (uint64_t)count : UINT64_MAX, "chunk", &ce)) {
		char ch[32], sz[32], why[256];
		opt_format_size(p->chunk, ch, sizeof ch);
		opt_format_size(p->size, sz, sizeof sz);
		double need = ((double)out->n + count) * (double)out->flow_bytes;
		if (out->mem_limit && need > (double)out->mem_limit)
			snprintf(why, sizeof why,
				 "about %.1f GB of memory at %llu bytes each; %.1f GB fit (the "
				 "machine's memory or MPSIM_MEM_LIMIT)",
				 need / 1e9, (unsigned long long)out->flow_bytes,
				 (double)out->mem_limit / 1e9);
		else
			snprintf(why, sizeof why, "mpsim's message ids hold fewer than %zu",
				 out->max_ids);
		return mp_errf(e, MP_EUSER,
			       "more than %.4g messages: chunk %s cuts size %s over %llu ranks, "
			       "%u job%s and %.0f iteration%s into that many, %s: expected a "
			       "larger chunk or less data",
			       count, ch, sz, (unsigned long long)n, njobs, njobs == 1 ? "" : "s",
			       iters, iters == 1 ? "" : "s", why);
	}
	jobs->njobs = njobs;
	jobs->nranks = (uint32_t)n;
	jobs->hosts = mp_malloc(n * njobs * sizeof *jobs->hosts);
	if (place(p, env, (uint32_t)n, njobs, jobs->hosts, e))
		return e->status;
	/* a list over its limit is refused whole after generation (the caller
	 * says how many fit), so generation stops as soon as it is over */
	for (uint32_t j = 0; j < njobs && !out->over; j++) {
		uint32_t barrier = UINT32_MAX;
		uint64_t total = p->warmup + p->iterations;
		for (uint32_t it = 0; it < total && !out->over; it++) {
			size_t first_id = out->n;
			coll_generate_one(p, &jobs->hosts[(size_t)j * n], (uint32_t)n, env, j + 1,
					  it, barrier, out);
			if (it + 1 < total && !out->over) { /* the barrier before the next one */
				size_t last = out->n;
				flow_list_marker(out, p->start);
				struct flow_spec *mk = &out->v[out->n - 1];
				mk->job = j + 1;
				mk->iter = it;
				mk->delay = p->compute_gap;
				for (size_t k = first_id; k < last; k++)
					flow_list_dep(out, (uint32_t)k);
				barrier = mk->id;
			}
		}
	}
	return MP_OK;
}

void coll_jobs_free(struct coll_jobs *j)
{
	mp_free(j->hosts);
	memset(j, 0, sizeof *j);
}

uint64_t coll_min_size(const struct coll_params *p, uint32_t n)
{
	return 2ull * n * (p->channels ? p->channels : 1);
}

void coll_generate_one(const struct coll_params *p, const uint32_t *hosts, uint32_t n,
		       const struct wl_env *env, uint32_t job, uint32_t iter, uint32_t after,
		       struct flow_list *out)
{
	uint32_t gpus = env->gpus_per_server;
	MP_ASSERT(n >= 2 && p->size >= coll_min_size(p, n));
	struct gen g = { .p = p,
			 .out = out,
			 .host = hosts,
			 .n = n,
			 .gpus = gpus > 1 ? gpus : 1,
			 .job = job - 1,
			 .iter = iter,
			 .barrier = after,
			 .first_id = out->n,
			 .on_data = p->trigger == COLL_ON_ACK ? FLOW_DEP_SENT : 0,
			 .B = (uint32_t)p->inflight,
			 .pxn = p->pxn == COLL_PXN_ON || (p->pxn == COLL_PXN_AUTO && env->rails) };
	switch (p->type) {
	case COLL_ALLREDUCE:
		if (p->algorithm == COLL_DBT)
			gen_dbt(&g);
		else if (p->algorithm == COLL_HD)
			gen_hd(&g);
		else
			gen_ring(&g, 2 * n - 2);
		break;
	case COLL_ALLTOALL:
		gen_alltoall(&g);
		break;
	case COLL_BROADCAST:
		gen_bcast(&g);
		break;
	default:
		gen_ring(&g, n - 1);
		break;
	}
}

uint32_t coll_lower(const struct coll_params *p, const uint32_t *hosts, uint32_t n,
		    const struct wl_env *env, uint32_t job, const uint32_t *deps,
		    const uint32_t *dep_off, simtime_t after, uint32_t *arrive, uint32_t *done,
		    struct flow_list *out)
{
	for (uint32_t m = 0; m < n && !out->over; m++)
		arrive[m] =
		    flow_list_marker_after(out, deps + dep_off[m], dep_off[m + 1] - dep_off[m], 0);
	if (out->over)
		return 0;
	if (n < 2) {
		done[0] = after ? flow_list_marker_after(out, arrive, 1, after) : arrive[0];
		return arrive[0];
	}
	uint32_t start = flow_list_marker_after(out, arrive, n, 0);
	struct coll_params cp = *p;
	if (cp.size < coll_min_size(&cp, n))
		cp.size = coll_min_size(&cp, n);
	size_t a = out->n;
	coll_generate_one(&cp, hosts, n, env, job, 0, start, out);
	size_t b = out->n;
	for (uint32_t m = 0; m < n && !out->over; m++) {
		flow_list_marker(out, 0);
		struct flow_spec *f = &out->v[out->n - 1];
		f->delay = after;
		flow_list_dep(out, start); /* a member the algorithm gives nothing */
		for (size_t k = a; k < b; k++)
			if (out->v[k].src == hosts[m] || out->v[k].dst == hosts[m])
				flow_list_dep(out, (uint32_t)k);
		done[m] = f->id;
	}
	return start;
}

/* workload.h - traffic generators behind one ops table.
 *
 * A workload turns its parameters and the fabric's size into a list of flows
 * (messages), each a (source host, destination host, bytes, start time), and
 * optionally a DAG over them: a message may wait for other messages to
 * complete (at their receiver, or at their sender for htsim's
 * send_done_trigger), `need` of them (all, or 1 for a one-shot trigger), and
 * then a delay. A message of a collective job (job > 0) rides the collective
 * layer's long-lived queue pairs between its two hosts (src/ccl/); any other
 * message opens a connection of its own.
 */
#ifndef MPSIM_WORKLOAD_WORKLOAD_H
#define MPSIM_WORKLOAD_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/opt.h"
#include "core/time.h"

struct flow_spec {
	uint32_t id;	 /* index in the list */
	uint32_t src;	 /* host index */
	uint32_t dst;	 /* host index, != src */
	uint64_t bytes;	 /* message size, > 0 */
	simtime_t start; /* ps; with dependencies: not before this */
	/* dependencies: deps[dep0 .. dep0 + ndeps) of the list; released `delay`
	 * after `need` of them completed (need 0 = all) */
	uint32_t dep0, ndeps, need;
	simtime_t delay;
	uint32_t job;  /* 0 = its own connection; k = collective job k - 1 */
	uint32_t iter; /* the job's iteration (collectives) */
	/* 0: the load balancer places the flow; k > 0: pinned, every switch with
	 * a choice sends its packets (and ACKs) to next hop (k - 1) mod n of its
	 * n candidates, whatever the scheme (a flows file's `path` column) */
	uint16_t pin;
	/* the same for its ACKs, NACKs and CNPs alone (a flows file's
	 * `ack_path`): 0 = as its data */
	uint16_t ack_pin;
};

/* A dependency: a message id, completed at its receiver, or at its sender
 * (last byte acknowledged) with FLOW_DEP_SENT. */
#define FLOW_DEP_SENT 0x80000000u
#define FLOW_DEP_ID(d) ((d) & ~FLOW_DEP_SENT)

/* A training workload's record of what each rank does (training.csv,
 * timeline.json): one compute phase or one collective / point-to-point
 * exchange of one rank. It starts `lead` before flow `from` is released
 * (a compute marker is released its duration after its dependencies) and
 * ends when flow `to` completes at its receiver. */
enum wl_phase { WL_PH_FWD, WL_PH_IG, WL_PH_WG, WL_PH_NODE, WL_PH_N };
extern const char *const wl_phase_names[]; /* "forward", "input_grad", "weight_grad", "node" */
struct wl_act {
	uint32_t rank, iter;
	uint32_t layer;	   /* its layer (or trace node) name: flow_list.names[layer] */
	uint32_t layer_ix; /* the layer's place in the workload (rows of training.csv) */
	uint32_t what;	   /* communication: names[what], e.g. "ALLREDUCE tp"; compute: 0 */
	uint8_t phase;	   /* enum wl_phase */
	bool comm;
	uint32_t from, to;
	simtime_t lead;
	/* a collective: its start marker, released when the group's last member
	 * reached it (UINT32_MAX: none); from then on the rank waits for the
	 * network, before it for its peers */
	uint32_t sync;
};

struct flow_list {
	struct flow_spec *v;
	size_t n, cap;
	uint32_t *deps;
	size_t ndeps, deps_cap;
	/* what fits: once n reaches max_n (0 = no limit) pushes are counted in
	 * `over` and dropped, and the run is refused (sim/plan.c); flow_bytes is
	 * the memory a flow costs from generation to results */
	size_t max_n, over;
	uint64_t flow_bytes, mem_limit;
	size_t max_ids; /* 0, or the message ids the run has: more are refused too */
	/* training workloads (chakra, simai): what each rank does, and the names
	 * the records use (names[0] = "") */
	struct wl_act *acts;
	size_t nacts, acts_cap;
	char **names;
	size_t nnames, names_cap;
};

/* Before a generator pushes `count` flows: refuse (MP_EUSER, "key: N flows
 * need about X GB of memory ...") a count whose memory would not fit. */
int flow_list_reserve(const struct flow_list *l, uint64_t count, const char *key, struct mp_err *e);

void flow_list_push(struct flow_list *l, uint32_t src, uint32_t dst, uint64_t bytes,
		    simtime_t start);
/* A marker: a zero-byte entry of the DAG that moves nothing and completes
 * when released (src = dst = 0, bytes = 0): a barrier, a compute phase. */
void flow_list_marker(struct flow_list *l, simtime_t start);
static inline bool flow_is_marker(const struct flow_spec *f)
{
	return f->bytes == 0;
}
/* A marker released `t` after deps[0 .. nd) complete (none: at time t);
 * returns its id. */
uint32_t flow_list_marker_after(struct flow_list *l, const uint32_t *deps, size_t nd, simtime_t t);
/* Record an activity (copied); the index of a name in l->names, added when
 * new (a name seen last among the previous few is found without a search). */
void flow_list_act(struct flow_list *l, const struct wl_act *a);
uint32_t flow_list_name(struct flow_list *l, const char *name);
/* The last flow pushed waits for `dep` (an id, | FLOW_DEP_SENT). */
void flow_list_dep(struct flow_list *l, uint32_t dep);
void flow_list_free(struct flow_list *l);
/* Where a flow list stands (flow_list_at), and going back there: a reader
 * that fails leaves nothing half-built of what it pushed. */
struct flow_list_mark {
	size_t n, ndeps, nacts;
};
static inline struct flow_list_mark flow_list_at(const struct flow_list *l)
{
	return (struct flow_list_mark){ l->n, l->ndeps, l->nacts };
}
static inline void flow_list_back_to(struct flow_list *l, struct flow_list_mark m)
{
	l->n = m.n;
	l->ndeps = m.ndeps;
	l->nacts = m.nacts;
}
/* Check the DAG: every dependency names an earlier-or-later existing flow other
 * than itself, need <= ndeps, and no cycle. Errors: MP_EUSER, "message <id>
 * ..." (the generator or file reader adds where). */
int flow_list_check_dag(const struct flow_list *l, struct mp_err *e);
/* A cycle of a list whose dependencies all name existing flows: returns its
 * length (0 = none) and *cycle (free with mp_free) holds flow ids where each
 * waits for the next and the last waits for the first; the first is the
 * lowest id on that cycle. */
size_t flow_list_cycle(const struct flow_list *l, uint32_t **cycle);

/* What a generator may know of the fabric and run. */
struct wl_env {
	uint32_t nhosts;
	uint32_t gpus_per_server; /* hosts per server (the `server:` section); 0 or 1 = none */
	uint32_t hosts_per_tor;	  /* hosts under one ToR/leaf/edge switch (0 = unknown) */
	bool rails; /* hosts gpus_per_server apart share a rail (topology rail_optimized) */
	uint64_t host_rate_bps; /* one host link's rate, bit/s */
	uint64_t seed;		/* experiment seed; streams use (seed, RNG_WORKLOAD, id) */
	const char *base_dir;	/* folder of the experiment file, for relative paths */
};

/* What an open-loop generator offers (workload_ops.offered): `load`, a
 * fraction of each source host's link rate, from hosts 0..hosts-1 (0 = all)
 * to one another, with arrivals in [start, end) (ps). */
struct wl_offer {
	double load;
	simtime_t start, end;
	uint64_t hosts;
};

struct workload_ops {
	const char *name;
	const char *summary; /* one line for `mpsim list` */
	const struct opt_desc *opts;
	size_t params_size; /* size of the parameter struct opts points into */
	/* Build the flow list. Errors that depend on the fabric (e.g. more incast
	 * senders than hosts) go in e as "key: what was expected", status MP_EUSER;
	 * the caller prefixes file:line. */
	int (*generate)(const void *params, const struct wl_env *env, struct flow_list *out,
			struct mp_err *e);
	/* Optional, for open-loop generators (Poisson): what they offer, so a
	 * run can report its load as measured against it (sim/load.c). */
	void (*offered)(const void *params, struct wl_offer *out);
};

/* Every generator (NULL-terminated, in `mpsim list`'s order), and the one
 * named `name` (NULL: none). Adding one is one file and one line in the
 * registry (workload/workload.c). */
extern const struct workload_ops *const workload_registry[];
const struct workload_ops *workload_find(const char *name);

/* ---- helpers shared by the generators ---- */

/* Random streams of the workload kind: rng_init(&r, env->seed, RNG_WORKLOAD,
 * WORKLOAD_STREAM(tag, index)), one tag per generator so two generators never
 * share a stream; index is e.g. the source host. */
enum workload_stream_tag {
	WORKLOAD_STREAM_PERMUTATION = 1,
	WORKLOAD_STREAM_INCAST = 2,
	WORKLOAD_STREAM_POISSON = 3,
	WORKLOAD_STREAM_COLLECTIVE = 4,
};
#define WORKLOAD_STREAM(tag, index) (((uint64_t)(tag) << 32) | (uint64_t)(index))

/* The number of hosts a generator uses: `hosts` (0 = all of env->nhosts).
 * Fails (MP_EUSER, "hosts: ...") when hosts > env->nhosts or the result is
 * below `min`. */
int workload_host_count(uint64_t hosts, uint32_t min, const struct wl_env *env, uint32_t *n,
			struct mp_err *e);

/* Read a whole text file into a NUL-terminated buffer (free with mp_free).
 * `path` is used as given when readable (OPT_PATH values arrive already
 * resolved); otherwise a relative path is tried under `base_dir` (may be NULL).
 * Errors: "<path>: cannot read: <reason>", MP_EUSER. */
int workload_read_file(const char *path, const char *base_dir, char **text, size_t *len,
		       struct mp_err *e);

/* Walk a NUL-terminated text buffer line by line, in place: returns the next
 * line with its '\n' (and any '\r') replaced by NUL and surrounding blanks
 * (space, tab, '\r') removed, or NULL after the last line. A last line without
 * a trailing newline is still returned. *cursor starts at the buffer. */
char *workload_next_line(char **cursor);

/* Next blank-separated token of a line, in place (strtok-like), or NULL. */
char *workload_next_token(char **cursor);

/* Split a line at `sep` into at most `max` fields with blanks (space, tab)
 * trimmed, in place; returns the count (max + 1 when there are more). */
int workload_split(char *line, char sep, char **f, int max);

/* Fields of a file's line, parsed with one wording: on failure MP_EUSER and
 * "<where>: <key>: expected ..., found '<s>'", where `where` is "file:line".
 * A host index below nhosts; a size above 0 with an optional unit ("4000",
 * "64KB", "2MiB"); a time with a unit ("0", "10us", "1.5ms"). */
int workload_field_host(const char *where, const char *key, const char *s, uint32_t nhosts,
			uint32_t *h, struct mp_err *e);
int workload_field_bytes(const char *where, const char *key, const char *s, uint64_t *bytes,
			 struct mp_err *e);
int workload_field_time(const char *where, const char *key, const char *s, simtime_t *t,
			struct mp_err *e);

/* A plain unsigned decimal ("0", "42"; no sign, no unit) up to `max`.
 * Returns 0, or -1 when malformed or above max. */
int workload_parse_uint(const char *s, uint64_t max, uint64_t *v);

#endif

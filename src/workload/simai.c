/* simai.c - SimAI's per-layer workload files as a workload (workload "simai").
 *
 * Owns: simai_workload_ops and its parameters.
 *
 * The format is the text file AICB writes and SimAI reads (aliyun/SimAI,
 * astra-sim-alibabacloud/astra-sim/workload/Workload.cc, initialize_workload;
 * example/microAllReduce.txt, example/workload_analytical.txt):
 *
 *   POLICY key: value ...      the parallelism policy, then the header's keys
 *   N                          the number of layers
 *   name reserved fwd_compute fwd_comm fwd_size ig_compute ig_comm ig_size
 *        wg_compute wg_comm wg_size update          one line per layer
 *
 * Header keys (Workload.cc): model_parallel_NPU_group (TP), ep, pp, vpp, ga,
 * all_gpus, checkpoints and checkpoint_initiates (a count, then that many
 * layer numbers), pp_comm (bytes). Compute and update times are integer
 * ticks of SimAI's clock, nanoseconds (system/Common.hh: FREQ, 1000 ticks per
 * microsecond, divides every reported time); sizes are bytes, with SimAI's
 * meaning (AllReduce the buffer, AllGather the gathered output,
 * ReduceScatter the input, AlltoAll each rank's send buffer: the same as
 * mpsim's collective layer).
 *
 * Communication types and their groups (Workload.cc): ALLREDUCE, ALLGATHER,
 * REDUCESCATTER, ALLTOALL or NONE; with no suffix the forward and input-grad
 * collectives run on the rank's TP group and the weight-grad one on its DP
 * group; _EP runs it on the EP group, _DP_EP on the DP_EP group. Groups as
 * SimAI's MockNcclGroup builds them: TP groups are TP consecutive ranks; the
 * DP group of rank r is the DP = all_gpus / (TP x PP) ranks r mod (TP x PP)
 * + j x TP x PP; EP groups are EP consecutive members of a DP group (by j)
 * and DP_EP groups the members of a DP group with the same j mod EP. (SimAI
 * builds EP from consecutive TP groups, which with pp > 1 would mix pipeline
 * stages; mpsim keeps them inside the DP group, as Megatron-LM does.) Rank r
 * runs on host r.
 *
 * The schedule, per rank and pass, is Workload.cc's for the policies
 * HYBRID_TRANSFORMER and HYBRID_TRANSFORMER_FWD_IN_BCKWD (without
 * checkpoints, it is the same loop):
 * - forward, layers 0 .. N-1: wait for the layer's weight-grad collective of
 *   the previous pass, compute fwd_compute, run the forward collective and
 *   wait for it (blocking);
 * - backward, layers N-1 .. 0: compute ig_compute, run the input-grad
 *   collective and wait for it; compute wg_compute, start the weight-grad
 *   collective and go on without waiting (non-blocking: it overlaps the next
 *   layers' compute, and the next pass's forward of the layer waits for it).
 * DATA (Workload.cc's iterate_data_parallel): forward computes only; backward
 * per layer from N-1: wg_compute, the weight-grad collective (non-blocking),
 * then ig_compute except for layer 0; its forward and input-grad collectives
 * are not run (SimAI does not issue them).
 * Every collective completes `update` ticks after its last message (Layer.cc
 * delays each finished collective by the layer's update time). A collective
 * starts when the last member of its group reaches it (NCCL). With
 * HYBRID_TRANSFORMER_FWD_IN_BCKWD a forward collective of fewer than 4096
 * bytes moves 4096 (Workload.cc raises them).
 *
 * Where SimAI is silent or does otherwise, mpsim chooses: a collective of 0
 * bytes, or on a group of one rank, moves nothing and takes no update time;
 * pp_comm, vpp and ga only enter SimAI's analytical estimate of the pipeline
 * bubble, not its simulated time, so mpsim reads and ignores them (a
 * pipeline's point-to-point transfers are not simulated); activation
 * recomputation (checkpoints > 0) and the other policies (HYBRID_DLRM,
 * MODEL, HYBRID_CUSTOMIZED, MICRO, ...) are refused; a layer's reserved
 * field (-1 in AICB's files) is read and not used, as in SimAI.
 *
 * Refused before the run, with file:line, the field and what was expected: a
 * policy, key or communication type mpsim does not know, a missing or
 * malformed number, group sizes that do not divide all_gpus (TP x DP x PP =
 * all_gpus, EP dividing DP), all_gpus above the fabric's hosts, fewer or
 * more layer lines than the second line says.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "workload/collective.h"
#include "workload/workload.h"

struct sa_params {
	char *file;
	uint64_t passes;
	double compute_scale, comm_scale;
	simtime_t tick;
	int algorithm; /* enum coll_algo, AllReduce */
	uint64_t chunk, channels, parallelism;
};

static const struct opt_desc sa_opts[] = {
	{ "file", OPT_PATH, offsetof(struct sa_params, file), NULL, 0, 0,
	  "SimAI workload file (AICB's text format), relative to the experiment file" },
	{ "passes", OPT_UINT, offsetof(struct sa_params, passes), "1", 1, 1e6,
	  "training iterations run back to back (SimAI's passes)" },
	{ "compute_scale", OPT_DOUBLE, offsetof(struct sa_params, compute_scale), "1", 1e-9, 1e9,
	  "factor on every compute time (0.5: a GPU twice as fast; SimAI's compute_scale)" },
	{ "comm_scale", OPT_DOUBLE, offsetof(struct sa_params, comm_scale), "1", 1e-9, 1e9,
	  "factor on every communication size (SimAI's comm_scale)" },
	{ "tick", OPT_TIME, offsetof(struct sa_params, tick), "1ns", 1, 1e15,
	  "the file's unit of time: SimAI's ticks are nanoseconds (Common.hh, FREQ)" },
	{ "algorithm", OPT_ENUM, offsetof(struct sa_params, algorithm), "ring", 0, 0,
	  "AllReduce: ring, double_binary_tree or halving_doubling", coll_algo_names },
	{ "chunk", OPT_SIZE, offsetof(struct sa_params, chunk), "128KB", 1, 1e12,
	  "pipelining unit of ring and tree steps" },
	{ "channels", OPT_UINT, offsetof(struct sa_params, channels), "1", 1, 1024,
	  "ring algorithms: NCCL's channels" },
	{ "parallelism", OPT_UINT, offsetof(struct sa_params, parallelism), "0", 0, 1e7,
	  "AlltoAll: messages in flight per rank; 0 = all at once" },
	OPT_END,
};

enum sa_policy { SA_DATA, SA_TRANSFORMER, SA_FWD_IN_BCKWD };
enum sa_group { SG_NONE, SG_TP, SG_DP, SG_EP, SG_DP_EP };
static const char *const sa_group_names[] = { "none", "tp", "dp", "ep", "dp_ep" };

struct sa_comm {
	int type;  /* enum coll_type */
	int group; /* enum sa_group; SG_NONE: no collective */
	uint64_t size;
	char name[24]; /* as the file spells it */
};

struct sa_layer {
	uint32_t name; /* flow_list name */
	simtime_t compute[3];
	struct sa_comm comm[3]; /* WL_PH_FWD, WL_PH_IG, WL_PH_WG */
	simtime_t update;
};

struct sa {
	const struct sa_params *p;
	const struct wl_env *env;
	struct mp_err *e;
	const char *path;
	int policy;
	uint64_t tp, ep, pp, dp, gpus;
	struct sa_layer *layer;
	uint32_t nlayers;
};

/* "file:line: field: expected ..., found '...'"; a header key is named
 * without its colon. */
static int sa_errf(struct sa *s, int line, const char *field, const char *what, const char *found)
{
	int n = (int)strlen(field);
	if (n > 1 && field[n - 1] == ':')
		n--;
	return mp_errf(s->e, MP_EUSER, "%s:%d: %.*s: expected %s, found '%.60s'", s->path, line, n,
		       field, what, found ? found : "nothing");
}

static int sa_uint(struct sa *s, int line, const char *field, const char *tok, uint64_t max,
		   uint64_t *v)
{
	if (!tok || workload_parse_uint(tok, max, v))
		return sa_errf(s, line, field, "an unsigned integer", tok);
	return MP_OK;
}

/* ---- the header ---------------------------------------------------------------- */

static int sa_policy_of(struct sa *s, const char *tok)
{
	static const char *const ok[] = { "DATA", "HYBRID_TRANSFORMER",
					  "HYBRID_TRANSFORMER_FWD_IN_BCKWD", NULL };
	for (int i = 0; ok[i]; i++)
		if (tok && !strcmp(tok, ok[i])) {
			s->policy = i;
			return MP_OK;
		}
	return sa_errf(s, 1, "parallelism policy",
		       "DATA, HYBRID_TRANSFORMER or HYBRID_TRANSFORMER_FWD_IN_BCKWD (SimAI's other "
		       "policies are not modelled)",
		       tok);
}

/* checkpoints: / checkpoint_initiates: COUNT [layers]: only 0 is modelled. */
static int sa_checkpoints(struct sa *s, const char *key, char **cur)
{
	uint64_t n;
	char *tok = workload_next_token(cur);
	if (sa_uint(s, 1, key, tok, UINT32_MAX, &n))
		return MP_EUSER;
	if (n)
		return sa_errf(s, 1, key,
			       "0 (activation recomputation, SimAI's forward-in-backward, is not "
			       "modelled)",
			       tok);
	return MP_OK;
}

static int sa_header(struct sa *s, char *line)
{
	static const char *const keys[] = { "model_parallel_NPU_group:",
					    "ep:",
					    "pp:",
					    "vpp:",
					    "ga:",
					    "all_gpus:",
					    "pp_comm",
					    "pp_comm:",
					    NULL };
	uint64_t v[8] = { 1, 1, 1, 1, 1, 0, 0, 0 };
	char *cur = line, *tok = workload_next_token(&cur);

	if (sa_policy_of(s, tok))
		return MP_EUSER;
	while ((tok = workload_next_token(&cur))) {
		if (!strcmp(tok, "checkpoints:") || !strcmp(tok, "checkpoint_initiates:")) {
			if (sa_checkpoints(s, tok, &cur))
				return MP_EUSER;
			continue;
		}
		int k = 0;
		while (keys[k] && strcmp(keys[k], tok))
			k++;
		if (!keys[k])
			return sa_errf(s, 1, "header",
				       "one of SimAI's keys (model_parallel_NPU_group:, ep:, pp:, "
				       "vpp:, ga:, all_gpus:, checkpoints:, checkpoint_initiates:, "
				       "pp_comm)",
				       tok);
		char *val = workload_next_token(&cur);
		if (sa_uint(s, 1, tok, val, k == 6 || k == 7 ? UINT64_MAX : 1e7, &v[k]) ||
		    (k < 6 && !v[k] && sa_errf(s, 1, tok, "a count above 0", val)))
			return MP_EUSER;
	}
	bool data = s->policy == SA_DATA; /* one DP group of every rank */
	s->tp = data ? 1 : v[0];
	s->ep = data ? 1 : v[1];
	s->pp = data ? 1 : v[2];
	s->gpus = v[5] ? v[5] : s->env->nhosts;
	return MP_OK;
}

/* TP x DP x PP = all_gpus and EP | DP (SimAI's MockNcclGroup refuses the rest). */
static int sa_sizes(struct sa *s)
{
	char found[96];

	if (s->gpus > s->env->nhosts) {
		snprintf(found, sizeof found, "%llu", (unsigned long long)s->gpus);
		return sa_errf(s, 1, "all_gpus", "at most the fabric's hosts", found);
	}
	snprintf(found, sizeof found, "TP %llu, PP %llu, EP %llu, all_gpus %llu",
		 (unsigned long long)s->tp, (unsigned long long)s->pp, (unsigned long long)s->ep,
		 (unsigned long long)s->gpus);
	if (s->gpus % (s->tp * s->pp))
		return sa_errf(s, 1, "model_parallel_NPU_group", "TP x PP dividing all_gpus",
			       found);
	s->dp = s->gpus / (s->tp * s->pp);
	if (s->dp % s->ep)
		return sa_errf(s, 1, "ep", "EP dividing DP = all_gpus / (TP x PP)", found);
	return MP_OK;
}

/* ---- the layers ---------------------------------------------------------------- */

/* A communication type and its group: phase WL_PH_WG's plain types run on DP,
 * the others' on TP (Workload.cc). */
static int sa_comm_type(struct sa *s, int line, const char *field, const char *tok, int phase,
			struct sa_comm *c)
{
	static const struct {
		const char *name;
		int type;
	} base[] = { { "ALLREDUCE", COLL_ALLREDUCE },
		     { "ALLGATHER", COLL_ALLGATHER },
		     { "REDUCESCATTER", COLL_REDUCESCATTER },
		     { "ALLTOALL", COLL_ALLTOALL } };
	static const char *const sfx[] = { "", "_EP", "_DP_EP" };

	memset(c, 0, sizeof *c);
	if (tok && !strcmp(tok, "NONE"))
		return MP_OK;
	for (size_t b = 0; tok && b < sizeof base / sizeof *base; b++)
		for (int k = 0; k < 3; k++) {
			char nm[24];
			snprintf(nm, sizeof nm, "%s%s", base[b].name, sfx[k]);
			if (strcmp(nm, tok))
				continue;
			c->type = base[b].type;
			c->group = k == 1	       ? SG_EP
				   : k == 2	       ? SG_DP_EP
				   : phase == WL_PH_WG ? SG_DP
						       : SG_TP;
			snprintf(c->name, sizeof c->name, "%s", nm);
			return MP_OK;
		}
	return sa_errf(
	    s, line, field,
	    "NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER or ALLTOALL, each optionally with "
	    "_EP or _DP_EP",
	    tok);
}

static int sa_layer_line(struct sa *s, int line, char *text, struct sa_layer *l,
			 struct flow_list *out)
{
	static const char *const field[] = { "layer name",
					     "reserved",
					     "forward compute time",
					     "forward comm type",
					     "forward comm size",
					     "input-grad compute time",
					     "input-grad comm type",
					     "input-grad comm size",
					     "weight-grad compute time",
					     "weight-grad comm type",
					     "weight-grad comm size",
					     "update time" };
	char *tok[13], *cur = text;
	int n = 0;
	uint64_t v;

	while (n < 13 && (tok[n] = workload_next_token(&cur)))
		n++;
	if (n != 12)
		return sa_errf(s, line, n < 12 ? field[n] : "layer",
			       n < 12 ? "a value (a layer has 12 fields)"
				      : "12 fields (name, reserved, then forward, input-grad and "
					"weight-grad compute time, comm type and size, and the "
					"update time)",
			       n < 12 ? NULL : tok[12]);
	l->name = flow_list_name(out, tok[0]);
	if (strcmp(tok[1], "-1") && sa_uint(s, line, field[1], tok[1], UINT64_MAX, &v))
		return sa_errf(s, line, field[1], "-1 or an unsigned integer", tok[1]);
	for (int ph = 0; ph < 3; ph++) {
		struct sa_comm *c = &l->comm[ph];
		if (sa_uint(s, line, field[2 + 3 * ph], tok[2 + 3 * ph], 1e15, &v))
			return MP_EUSER;
		l->compute[ph] = (simtime_t)((double)v * (double)s->p->tick * s->p->compute_scale);
		if (sa_comm_type(s, line, field[3 + 3 * ph], tok[3 + 3 * ph], ph, c) ||
		    sa_uint(s, line, field[4 + 3 * ph], tok[4 + 3 * ph], UINT64_MAX, &c->size))
			return MP_EUSER;
		c->size = (uint64_t)((double)c->size * s->p->comm_scale);
		if (ph == WL_PH_FWD && s->policy == SA_FWD_IN_BCKWD && c->size && c->size < 4096)
			c->size = 4096;
		if (!c->size)
			c->group = SG_NONE;
	}
	if (sa_uint(s, line, field[11], tok[11], 1e15, &v))
		return MP_EUSER;
	l->update = (simtime_t)v * s->p->tick;
	return MP_OK;
}

static int sa_read(struct sa *s, struct flow_list *out)
{
	char *text, *cur, *line;
	size_t len;
	int ln = 0, rc = MP_EUSER;
	uint64_t n;

	if (workload_read_file(s->p->file, s->env->base_dir, &text, &len, s->e))
		return MP_EUSER;
	cur = text;
	line = workload_next_line(&cur);
	ln = 1;
	if (!line || sa_header(s, line) || sa_sizes(s))
		goto out;
	line = workload_next_line(&cur);
	ln = 2;
	if (sa_uint(s, 2, "layer count", line, 1e7, &n) ||
	    (!n && sa_errf(s, 2, "layer count", "at least 1 layer", line)))
		goto out;
	s->nlayers = (uint32_t)n;
	s->layer = mp_calloc(n, sizeof *s->layer);
	for (uint32_t i = 0; i < s->nlayers; i++) {
		do {
			line = workload_next_line(&cur);
			ln++;
		} while (line && !*line);
		if (!line) {
			char want[64];
			snprintf(want, sizeof want, "%u layer lines, as line 2 says", s->nlayers);
			sa_errf(s, ln, "layer", want, NULL);
			goto out;
		}
		if (sa_layer_line(s, ln, line, &s->layer[i], out))
			goto out;
	}
	while ((line = workload_next_line(&cur))) {
		ln++;
		if (*line) {
			char want[64];
			snprintf(want, sizeof want, "the end of the file after %u layers (line 2)",
				 s->nlayers);
			sa_errf(s, ln, "layer", want, line);
			goto out;
		}
	}
	rc = MP_OK;
out:
	mp_free(text);
	return rc;
}

/* ---- groups and the schedule --------------------------------------------------- */

/* The members of rank r's group g into m[] (ascending); returns their count. */
static uint32_t sa_members(const struct sa *s, int g, uint32_t r, uint32_t *m)
{
	uint32_t tpp = (uint32_t)(s->tp * s->pp), pos = r % tpp, j = r / tpp, n = 0;
	uint32_t ep = (uint32_t)s->ep, dp = (uint32_t)s->dp;

	switch (g) {
	case SG_TP:
		for (uint32_t k = 0; k < s->tp; k++)
			m[n++] = r - r % (uint32_t)s->tp + k;
		break;
	case SG_DP:
		for (uint32_t k = 0; k < dp; k++)
			m[n++] = pos + k * tpp;
		break;
	case SG_EP:
		for (uint32_t k = j - j % ep; k < j - j % ep + ep; k++)
			m[n++] = pos + k * tpp;
		break;
	default: /* SG_DP_EP */
		for (uint32_t k = j % ep; k < dp; k += ep)
			m[n++] = pos + k * tpp;
		break;
	}
	return n;
}

/* Whether rank r is the first (lowest) member of its group g: each group
 * is lowered once, from it, without listing every rank's members. */
static bool sa_is_first(const struct sa *s, int g, uint32_t r)
{
	uint32_t j = r / (uint32_t)(s->tp * s->pp);
	switch (g) {
	case SG_TP:
		return r % s->tp == 0;
	case SG_DP:
		return j == 0;
	case SG_EP:
		return j % s->ep == 0;
	default: /* SG_DP_EP */
		return j < s->ep;
	}
}

struct sa_run {
	uint32_t *prev;	   /* per rank: what its next step waits for (UINT32_MAX: nothing) */
	uint32_t *wg_done; /* per layer and rank: its weight-grad collective, done */
	uint32_t *m, *deps, *doff, *arrive, *done;
};

static void sa_act(struct flow_list *out, uint32_t r, uint32_t pass, uint32_t i,
		   const struct sa_layer *l, int ph, const char *what, uint32_t from, uint32_t to,
		   simtime_t lead)
{
	struct wl_act a = { .rank = r,
			    .iter = pass,
			    .layer = l->name,
			    .layer_ix = i,
			    .what = what ? flow_list_name(out, what) : 0,
			    .phase = (uint8_t)ph,
			    .comm = what != NULL,
			    .from = from,
			    .to = to,
			    .lead = lead,
			    .sync = UINT32_MAX };
	flow_list_act(out, &a);
}

/* Every rank computes phase ph of layer i after prev[r] (and, forward, after
 * the layer's last weight-grad collective); prev[r] becomes the compute. */
static void sa_compute(struct sa *s, struct sa_run *u, uint32_t pass, uint32_t i, int ph,
		       struct flow_list *out)
{
	const struct sa_layer *l = &s->layer[i];
	for (uint32_t r = 0; r < s->gpus && !out->over; r++) {
		uint32_t d[2];
		size_t nd = 0;
		if (u->prev[r] != UINT32_MAX)
			d[nd++] = u->prev[r];
		if (ph == WL_PH_FWD && pass)
			d[nd++] = u->wg_done[(size_t)i * s->gpus + r];
		u->prev[r] = flow_list_marker_after(out, d, nd, l->compute[ph]);
		if (l->compute[ph])
			sa_act(out, r, pass, i, l, ph, NULL, u->prev[r], u->prev[r],
			       l->compute[ph]);
	}
}

/* Phase ph's collective of layer i on every group, each member after
 * prev[r]; blocking: prev[r] becomes the member's end, otherwise (weight
 * grad) wg_done does. */
static void sa_collective(struct sa *s, struct sa_run *u, uint32_t pass, uint32_t i, int ph,
			  struct flow_list *out)
{
	const struct sa_layer *l = &s->layer[i];
	const struct sa_comm *c = &l->comm[ph];
	struct coll_params cp = { .type = c->type,
				  .algorithm =
				      c->type == COLL_ALLREDUCE ? s->p->algorithm : COLL_RING,
				  .size = c->size,
				  .chunk = s->p->chunk,
				  .channels = s->p->channels,
				  .parallelism = s->p->parallelism };
	char what[48];

	snprintf(what, sizeof what, "%s %s", c->name, sa_group_names[c->group]);
	for (uint32_t r = 0; r < s->gpus && !out->over; r++) {
		if (c->group != SG_NONE && !sa_is_first(s, c->group, r))
			continue; /* each group once, from its first member */
		uint32_t n = c->group == SG_NONE ? 1 : sa_members(s, c->group, r, u->m);
		if (n < 2) { /* nothing to move: SimAI's NONE */
			if (ph == WL_PH_WG)
				u->wg_done[(size_t)i * s->gpus + r] = u->prev[r];
			continue;
		}
		for (uint32_t k = 0; k < n; k++) {
			u->deps[k] = u->prev[u->m[k]];
			u->doff[k] = k;
		}
		u->doff[n] = n;
		uint32_t start = coll_lower(&cp, u->m, n, s->env, 1, u->deps, u->doff, l->update,
					    u->arrive, u->done, out);
		for (uint32_t k = 0; k < n && !out->over; k++) {
			uint32_t q = u->m[k];
			if (ph == WL_PH_WG)
				u->wg_done[(size_t)i * s->gpus + q] = u->done[k];
			else
				u->prev[q] = u->done[k];
			sa_act(out, q, pass, i, l, ph, what, u->arrive[k], u->done[k], 0);
			out->acts[out->nacts - 1].sync = start;
		}
	}
}

static void sa_pass(struct sa *s, struct sa_run *u, uint32_t pass, struct flow_list *out)
{
	bool data = s->policy == SA_DATA;

	for (uint32_t i = 0; i < s->nlayers; i++) {
		sa_compute(s, u, pass, i, WL_PH_FWD, out);
		if (!data)
			sa_collective(s, u, pass, i, WL_PH_FWD, out);
	}
	for (uint32_t i = s->nlayers; i-- > 0;) {
		if (data) { /* iterate_data_parallel: weight grad first, no input grad at 0 */
			sa_compute(s, u, pass, i, WL_PH_WG, out);
			sa_collective(s, u, pass, i, WL_PH_WG, out);
			if (i)
				sa_compute(s, u, pass, i, WL_PH_IG, out);
			continue;
		}
		sa_compute(s, u, pass, i, WL_PH_IG, out);
		sa_collective(s, u, pass, i, WL_PH_IG, out);
		sa_compute(s, u, pass, i, WL_PH_WG, out);
		sa_collective(s, u, pass, i, WL_PH_WG, out);
	}
}

static int sa_generate(const void *params, const struct wl_env *env, struct flow_list *out,
		       struct mp_err *e)
{
	const struct sa_params *p = params;
	struct sa s = { .p = p, .env = env, .e = e, .path = p->file };
	struct flow_list_mark at = flow_list_at(out);
	int rc = MP_EUSER;

	if (sa_read(&s, out))
		goto out;
	if (s.gpus < 1) {
		rc = mp_errf(e, MP_EUSER, "%s:1: all_gpus: expected at least 1 rank", s.path);
		goto out;
	}
	uint32_t R = (uint32_t)s.gpus;
	struct sa_run u = { .prev = mp_malloc(R * sizeof *u.prev),
			    .wg_done = mp_malloc((size_t)s.nlayers * R * sizeof *u.wg_done),
			    .m = mp_malloc(R * sizeof *u.m),
			    .deps = mp_malloc(R * sizeof *u.deps),
			    .doff = mp_malloc((R + 1) * sizeof *u.doff),
			    .arrive = mp_malloc(R * sizeof *u.arrive),
			    .done = mp_malloc(R * sizeof *u.done) };
	for (uint32_t r = 0; r < R; r++)
		u.prev[r] = UINT32_MAX;
	for (uint32_t pass = 0; pass < p->passes && !out->over; pass++)
		sa_pass(&s, &u, pass, out);
	mp_free(u.prev);
	mp_free(u.wg_done);
	mp_free(u.m);
	mp_free(u.deps);
	mp_free(u.doff);
	mp_free(u.arrive);
	mp_free(u.done);
	rc = MP_OK;
out:
	if (rc) /* nothing half-built */
		flow_list_back_to(out, at);
	mp_free(s.layer);
	return rc;
}

const struct workload_ops simai_workload_ops = {
	.name = "simai",
	.summary = "SimAI's per-layer workload files (aliyun/SimAI, AICB's text format): a header "
		   "(DATA, HYBRID_TRANSFORMER or HYBRID_TRANSFORMER_FWD_IN_BCKWD; "
		   "model_parallel_NPU_group, ep, pp, all_gpus, ...), the layer count, then per "
		   "layer: name, reserved, forward / input-grad / weight-grad compute time (ns), "
		   "comm type (ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, NONE; _EP, _DP_EP) "
		   "and size (bytes), update time; forward and input-grad collectives on the TP "
		   "group and blocking, weight-grad ones on the DP group overlapping the next "
		   "layers, as SimAI schedules them; rank r on host r",
	.opts = sa_opts,
	.params_size = sizeof(struct sa_params),
	.generate = sa_generate,
};

/* htsim_cm.c - flows from an htsim connection-matrix file (".cm"), with
 * htsim's triggers as a message DAG.
 *
 * Owns: htsim_cm_workload_ops and its parameters.
 *
 * Format, as read by htsim's ConnectionMatrix::load(istream&) in
 * github.com/Broadcom/csg-htsim, sim/datacenter/connection_matrix.cpp (commit
 * 841d9e7b), and as written by sim/datacenter/connection_matrices/
 * gen_permutation.py, gen_incast.py, gen_allreduce.py, gen_serial_alltoall.py
 * (sample: perm_16n_16c_2MB.cm; tests/data/htsim_allreduce_4n.cm):
 *
 *     Nodes 4
 *     Connections 3
 *     Triggers 1
 *     0->1 id 1 start 0 size 1000 send_done_trigger 1
 *     1->2 id 2 trigger 1 size 1000 recv_done_trigger 2
 *     2->3 id 3 start 5000000 size 1000
 *     trigger id 1 oneshot
 *
 * - Space-separated tokens; blank lines and lines whose first token starts
 *   with '#' are skipped.
 * - Header lines before the first connection or trigger line: "Nodes N",
 *   "Connections C", and optionally "Triggers T", "Failures F". There must be
 *   C connection lines and T trigger lines (htsim checks both).
 * - A connection: "src->dst" (node indices) then keyword/value pairs in any
 *   order, each at most once: "id <flow id, not 0>", "size <bytes>", and
 *   either "start <time>" or "trigger <trigger id>"; optionally
 *   "send_done_trigger <trigger id>" and "recv_done_trigger <trigger id>".
 *   start is in PICOSECONDS: the loader stores it unchanged ("start is in
 *   picoseconds already") and the generator scripts write microseconds x 1e6.
 *   (htsim's older ConnectionMatrix::save() prints "start %f" in
 *   microseconds; its loader does not read that, and neither do we.) A
 *   decimal start is rounded to the nearest ps. size is in bytes.
 * - A trigger: "trigger" then, in any order, "id <n, not 0>", one type
 *   "oneshot", "multishot" or "barrier", and "count <n>" (a barrier's
 *   activations; read, and ignored as htsim does, for the other types).
 *
 * Triggers (htsim sim/trigger.h/.cpp, wired in main_*.cpp): a connection
 * with "send_done_trigger T" activates T when its sender has its last byte
 * acknowledged, one with "recv_done_trigger T" when its receiver has the last
 * byte; a connection with "trigger T" is a target of T and has no start time
 * (targets are added in the file's order). A oneshot trigger starts all its
 * targets at its first activation; a multishot trigger starts its next target
 * at each activation (the k-th target at the k-th activation; activations
 * beyond its targets do nothing); a barrier starts all its targets at its
 * count-th activation. As a DAG over the activations of T in the file's order
 * (a connection's send_done before its recv_done; a dependency on a
 * send_done is FLOW_DEP_SENT):
 *
 *     oneshot    every target waits for 1 of T's activations
 *     multishot  the k-th target waits for k of them
 *     barrier    every target waits for count of them
 *
 * with need stored as 0 when it is all of them, and delay 0 (htsim starts a
 * target in the same instant). A completion that cannot come before a
 * target starts is left out of that target's dependencies: that of the
 * target itself and, for a oneshot or a barrier, of T's other targets, for
 * a multishot, of its targets k and later (htsim starts them after the k-th).
 * So a multishot that its own targets activate is a serial chain, not a
 * cycle.
 *
 * What htsim does that is not expressed, and what is checked instead:
 * - A target that T can never start is an error (htsim would leave it
 *   unstarted): T has no activations left for it, a multishot's k-th target
 *   with fewer than k, a barrier with fewer than count.
 * - A second activation of a oneshot, and one past a barrier's count, abort
 *   htsim (assert). Here they do nothing: a oneshot with several sources
 *   fires at the first, a barrier at the count-th. Likewise a oneshot
 *   without targets (htsim asserts when it fires) is accepted.
 * - recv_done_trigger: htsim reads and wires it (NdpSink, EqdsSink) but, at
 *   that commit, no sink ever activates it, so in htsim its targets never
 *   start; here it is the receiver-side completion it is named after.
 * - htsim drops a start written before "trigger" and rejects one after it;
 *   here both are rejected. htsim needs an id before "trigger" (assert); here
 *   a triggered connection needs no id. A trigger id used but never defined
 *   is an error (htsim: "referenced but not specified", or an exception for
 *   a send_done/recv_done-only id).
 * - A cycle of triggers through a oneshot or multishot with other sources
 *   (which htsim might still run) is reported as a cycle; only the target
 *   exclusions above are worked out.
 * - Not supported, rejected with a message: "prio <p>" (flow priorities),
 *   "addon" (htsim parses it and nothing reads it), and link failures
 *   ("failure ..." lines, "Failures F" with F > 0).
 *
 * Stricter than htsim: size and a start or trigger are required, src != dst,
 * node indices below Nodes, flow ids and trigger ids distinct, keys not
 * repeated, Nodes at most the fabric's hosts (node i is host i). Flows keep
 * the file's order; htsim's flow ids are checked but not kept (a flow's id
 * is its position).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "workload/workload.h"

struct htsim_cm_params {
	char *file; /* path of the .cm file */
};

static const struct opt_desc htsim_cm_opts[] = {
	{ .name = "file",
	  .type = OPT_PATH,
	  .offset = offsetof(struct htsim_cm_params, file),
	  .def = NULL,
	  .help = "htsim connection-matrix file (Nodes/Connections, src->dst lines)" },
	OPT_END,
};

/* Picoseconds: an unsigned integer, or a non-negative decimal rounded to the
 * nearest ps (htsim reads the field with stof). */
static int parse_ps(const char *s, uint64_t *ps)
{
	const char *q = s;
	char *end;
	double v;

	if (!workload_parse_uint(s, UINT64_MAX, ps))
		return 0;
	/* Only digits, one '.', and an exponent: no sign, hex, inf or nan. */
	if (!*q || *q == '-' || *q == '+')
		return -1;
	for (; *q; q++)
		if (!strchr("0123456789.eE+-", *q))
			return -1;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || v < 0 || v >= 9.2e18)
		return -1;
	*ps = (uint64_t)llround(v);
	return 0;
}

/* A connection line, kept until the whole file is read (a trigger may be
 * defined after the connections that use it). */
struct cm_conn {
	uint32_t src, dst;
	uint32_t id; /* htsim flow id, 0 = none given */
	uint64_t size;
	simtime_t start;
	/* htsim trigger ids (0 = none); after cm_resolve, trigger index + 1 */
	uint32_t trigger, send_done, recv_done;
	uint32_t k; /* the connection is its trigger's k-th target (1-based) */
	int line;
};

enum { CM_ONESHOT = 1, CM_MULTISHOT, CM_BARRIER };
static const char *const cm_trigger_types[] = { NULL, "oneshot", "multishot", "barrier" };

struct cm_trigger {
	uint32_t id;	/* htsim trigger id, > 0 */
	int type;	/* CM_* */
	uint32_t count; /* barrier: the activations it fires at */
	int line;
	uint32_t act0, nact; /* its activations: acts[act0 .. act0 + nact) */
	uint32_t ntargets;
};

struct cm_state {
	const char *name;
	int line;
	struct mp_err *e;
	struct cm_conn *conns;
	size_t nconns, conns_cap;
	struct cm_trigger *trigs;
	size_t ntrigs, trigs_cap;
	uint32_t *acts; /* connection index | FLOW_DEP_SENT, grouped by trigger */
};

static int __attribute__((format(printf, 2, 3))) cm_err(struct cm_state *st, const char *fmt, ...)
{
	char msg[sizeof(st->e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return mp_errf(st->e, MP_EUSER, "%s:%d: %s", st->name, st->line, msg);
}

/* st, with the line an error is about. */
static struct cm_state *cm_at(struct cm_state *st, int line)
{
	st->line = line;
	return st;
}

/* Parse "src->dst". */
static int parse_pair(struct cm_state *st, char *tok, uint64_t nodes, uint32_t *src, uint32_t *dst)
{
	char *arrow = strstr(tok, "->");
	uint64_t s, d;

	*arrow = '\0';
	if (workload_parse_uint(tok, UINT32_MAX, &s) ||
	    workload_parse_uint(arrow + 2, UINT32_MAX, &d))
		return cm_err(st,
			      "expected a connection 'src->dst' with node indices, found "
			      "'%s->%s'",
			      tok, arrow + 2);
	if (s >= nodes || d >= nodes)
		return cm_err(st,
			      "expected node indices below %llu (the Nodes line), found "
			      "%llu->%llu",
			      (unsigned long long)nodes, (unsigned long long)s,
			      (unsigned long long)d);
	if (s == d)
		return cm_err(st, "expected a destination different from the source (both %llu)",
			      (unsigned long long)s);
	*src = (uint32_t)s;
	*dst = (uint32_t)d;
	return MP_OK;
}

/* The keys of a connection line, in the order of the bits of `seen`. */
enum { K_ID, K_START, K_SIZE, K_TRIGGER, K_SEND_DONE, K_RECV_DONE, K_COUNT };
static const char *const cm_keys[K_COUNT] = {
	"id", "start", "size", "trigger", "send_done_trigger", "recv_done_trigger"
};

/* A positive uint32 (a flow or trigger id). */
static int parse_id(struct cm_state *st, const char *key, const char *what, const char *val,
		    uint32_t *id)
{
	uint64_t v;

	if (workload_parse_uint(val, UINT32_MAX, &v) || v == 0)
		return cm_err(st, "%s: expected a %s id above 0, found '%s'", key, what, val);
	*id = (uint32_t)v;
	return MP_OK;
}

static int parse_connection(struct cm_state *st, char *tok, char *rest, uint64_t nodes)
{
	struct cm_conn c = { .line = st->line };
	unsigned seen = 0;
	char *key, *val;
	int k;

	if (parse_pair(st, tok, nodes, &c.src, &c.dst))
		return MP_EUSER;
	while ((key = workload_next_token(&rest))) {
		if (!strcmp(key, "prio"))
			return cm_err(st, "'prio' (flow priorities) is not supported yet");
		if (!strcmp(key, "addon"))
			return cm_err(st, "'addon' (a re-armed barrier signal; htsim reads it "
					  "but nothing uses it) is not supported");
		for (k = 0; k < K_COUNT && strcmp(key, cm_keys[k]); k++)
			;
		if (k == K_COUNT)
			return cm_err(st,
				      "expected one of id, start, size, trigger, "
				      "send_done_trigger, recv_done_trigger, found '%s'",
				      key);
		if (seen & (1u << k))
			return cm_err(st, "expected '%s' once in a connection, found it again",
				      key);
		seen |= 1u << k;
		val = workload_next_token(&rest);
		if (!val)
			return cm_err(st, "expected a value after '%s'", key);
		switch (k) {
		case K_ID:
			if (parse_id(st, key, "flow", val, &c.id))
				return MP_EUSER;
			break;
		case K_START:
			if (parse_ps(val, &c.start))
				return cm_err(st,
					      "start: expected a time in picoseconds, found "
					      "'%s'",
					      val);
			break;
		case K_SIZE:
			if (workload_parse_uint(val, UINT64_MAX, &c.size) || c.size == 0)
				return cm_err(st,
					      "size: expected a size in bytes above 0, found "
					      "'%s'",
					      val);
			break;
		default:
			if (parse_id(st, key, "trigger", val,
				     k == K_TRIGGER	? &c.trigger
				     : k == K_SEND_DONE ? &c.send_done
							: &c.recv_done))
				return MP_EUSER;
		}
	}
	if ((seen & (1u << K_START)) && (seen & (1u << K_TRIGGER)))
		return cm_err(st, "expected either 'start' or 'trigger', not both (htsim drops a "
				  "start written before the trigger and rejects one after it)");
	if (!(seen & ((1u << K_START) | (1u << K_TRIGGER))))
		return cm_err(st, "expected 'start <picoseconds>' or 'trigger <trigger id>'");
	if (!(seen & (1u << K_SIZE)))
		return cm_err(st, "expected 'size <bytes>'");
	if (st->nconns == st->conns_cap) {
		st->conns_cap = st->conns_cap ? 2 * st->conns_cap : 64;
		st->conns = mp_realloc(st->conns, st->conns_cap * sizeof(*st->conns));
	}
	st->conns[st->nconns++] = c;
	return MP_OK;
}

/* "trigger id <n> oneshot|multishot|barrier [count <n>]", tokens in any order. */
static int parse_trigger(struct cm_state *st, char *rest)
{
	struct cm_trigger t = { .line = st->line };
	uint64_t count = 0;
	char *key, *val;

	while ((key = workload_next_token(&rest))) {
		int type = CM_ONESHOT;

		while (type <= CM_BARRIER && strcmp(key, cm_trigger_types[type]))
			type++;
		if (type <= CM_BARRIER) {
			if (t.type)
				return cm_err(st,
					      "expected one trigger type, found '%s' after '%s'",
					      key, cm_trigger_types[t.type]);
			t.type = type;
			continue;
		}
		if (strcmp(key, "id") && strcmp(key, "count"))
			return cm_err(st,
				      "expected id, count, oneshot, multishot or barrier in a "
				      "trigger line, found '%s'",
				      key);
		val = workload_next_token(&rest);
		if (!val)
			return cm_err(st, "expected a value after '%s'", key);
		if (key[0] == 'i' && parse_id(st, key, "trigger", val, &t.id))
			return MP_EUSER;
		if (key[0] == 'c' && workload_parse_uint(val, UINT32_MAX, &count))
			return cm_err(st, "count: expected a number of activations, found '%s'",
				      val);
	}
	if (!t.id)
		return cm_err(st, "expected 'id <trigger id>' in a trigger line");
	if (!t.type)
		return cm_err(st, "expected a trigger type: oneshot, multishot or barrier");
	if (t.type == CM_BARRIER && count == 0)
		return cm_err(st, "barrier: expected 'count <activations>' above 0");
	t.count = (uint32_t)count;
	if (st->ntrigs == st->trigs_cap) {
		st->trigs_cap = st->trigs_cap ? 2 * st->trigs_cap : 16;
		st->trigs = mp_realloc(st->trigs, st->trigs_cap * sizeof(*st->trigs));
	}
	st->trigs[st->ntrigs++] = t;
	return MP_OK;
}

static int parse_count(struct cm_state *st, const char *key, char *rest, uint64_t *v)
{
	char *val = workload_next_token(&rest), *extra = val ? workload_next_token(&rest) : NULL;

	if (!val || extra || workload_parse_uint(val, UINT32_MAX, v))
		return cm_err(st, "expected '%s <count>'", key);
	return MP_OK;
}

/* (id, line) pairs: flow ids and trigger ids must be distinct. */
struct cm_id {
	uint32_t id; /* 0 = none given */
	int line;
};

static int cmp_id(const void *a, const void *b)
{
	const struct cm_id *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* Sort ids and fail on the first repeat, "<what> id: ..." at its line. */
static int check_distinct(struct cm_state *st, struct cm_id *ids, size_t n, const char *what)
{
	qsort(ids, n, sizeof(*ids), cmp_id);
	for (size_t i = 1; i < n; i++)
		if (ids[i].id && ids[i].id == ids[i - 1].id) {
			return cm_err(cm_at(st, ids[i].line),
				      "id: expected distinct %s ids, found id %u again (first at "
				      "line %d)",
				      what, ids[i].id, ids[i - 1].line);
		}
	return MP_OK;
}

static int cmp_trigger(const void *a, const void *b)
{
	const struct cm_trigger *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* Trigger ids to trigger index + 1; the activations of each trigger, in the
 * file's order; each target's place among its trigger's targets. */
static int cm_resolve(struct cm_state *st)
{
	size_t n = st->nconns > st->ntrigs ? st->nconns : st->ntrigs;
	struct cm_id *ids = mp_malloc((n + 1) * sizeof(*ids));
	uint32_t nacts = 0;
	int rc;

	for (size_t i = 0; i < st->nconns; i++)
		ids[i] = (struct cm_id){ st->conns[i].id, st->conns[i].line };
	rc = check_distinct(st, ids, st->nconns, "flow");
	for (size_t i = 0; !rc && i < st->ntrigs; i++)
		ids[i] = (struct cm_id){ st->trigs[i].id, st->trigs[i].line };
	if (!rc)
		rc = check_distinct(st, ids, st->ntrigs, "trigger");
	mp_free(ids);
	if (rc)
		return rc;
	if (st->ntrigs) /* qsort and bsearch want a base, even for no elements */
		qsort(st->trigs, st->ntrigs, sizeof(*st->trigs), cmp_trigger);
	for (size_t i = 0; i < st->nconns; i++) {
		struct cm_conn *c = &st->conns[i];
		uint32_t *ref[3] = { &c->trigger, &c->send_done, &c->recv_done };

		for (int r = 0; r < 3; r++) {
			struct cm_trigger key = { .id = *ref[r] }, *t;

			if (!*ref[r])
				continue;
			t = st->ntrigs
				? bsearch(&key, st->trigs, st->ntrigs, sizeof(key), cmp_trigger)
				: NULL;
			if (!t) {
				return cm_err(cm_at(st, c->line),
					      "%s %u: expected a trigger defined by a line "
					      "'trigger id %u oneshot|multishot|barrier', found "
					      "none",
					      cm_keys[K_TRIGGER + r], *ref[r], *ref[r]);
			}
			*ref[r] = (uint32_t)(t - st->trigs) + 1;
			if (r == 0)
				c->k = ++t->ntargets;
			else
				t->nact++;
		}
	}
	for (size_t i = 0; i < st->ntrigs; i++) {
		st->trigs[i].act0 = nacts;
		nacts += st->trigs[i].nact;
		st->trigs[i].nact = 0;
	}
	st->acts = mp_malloc((nacts + 1) * sizeof(*st->acts));
	for (size_t i = 0; i < st->nconns; i++) {
		const struct cm_conn *c = &st->conns[i];
		struct cm_trigger *t;

		if (c->send_done) {
			t = &st->trigs[c->send_done - 1];
			st->acts[t->act0 + t->nact++] = (uint32_t)i | FLOW_DEP_SENT;
		}
		if (c->recv_done) {
			t = &st->trigs[c->recv_done - 1];
			st->acts[t->act0 + t->nact++] = (uint32_t)i;
		}
	}
	return MP_OK;
}

/* The dependencies of connection i, the k-th target of its trigger T: T's
 * activations that can come before T starts it (see the top comment). */
static int cm_target_deps(struct cm_state *st, size_t i, size_t n0, struct flow_list *out)
{
	const struct cm_conn *c = &st->conns[i];
	const struct cm_trigger *t = &st->trigs[c->trigger - 1];
	uint32_t m = 0, need;

	for (uint32_t a = 0; a < t->nact; a++) {
		const struct cm_conn *s = &st->conns[FLOW_DEP_ID(st->acts[t->act0 + a])];

		if (s->trigger == c->trigger && (t->type != CM_MULTISHOT || s->k >= c->k))
			continue; /* started with or after c: cannot come first */
		flow_list_dep(out, (uint32_t)n0 + st->acts[t->act0 + a]);
		m++;
	}
	need = t->type == CM_ONESHOT ? 1 : t->type == CM_MULTISHOT ? c->k : t->count;
	if (!m) {
		return cm_err(cm_at(st, c->line),
			      "trigger %u (line %d) starts this connection, but no completion "
			      "can activate it first: expected 'send_done_trigger %u' or "
			      "'recv_done_trigger %u' on a connection it does not start",
			      t->id, t->line, t->id, t->id);
	}
	if (need > m && t->type == CM_BARRIER) {
		return cm_err(cm_at(st, t->line),
			      "barrier trigger %u: expected count at most %u (the completions "
			      "that can activate it before it fires), found %u: it would never "
			      "fire",
			      t->id, m, t->count);
	}
	if (need > m) {
		return cm_err(cm_at(st, c->line),
			      "this connection is target %u of multishot trigger %u (line %d), "
			      "but only %u completions can activate it before then: it would "
			      "never start",
			      c->k, t->id, t->line, m);
	}
	out->v[out->n - 1].need = need == m ? 0 : need;
	return MP_OK;
}

/* "the connection on line 3 waits for the one on line 9, which waits for ..." */
static int cm_cycle_err(struct cm_state *st, const uint32_t *cycle, size_t len, size_t n0)
{
	char path[640];
	size_t at = 0;

	for (size_t i = 1; i <= len && i <= 12 && at < sizeof(path); i++)
		at += (size_t)snprintf(path + at, sizeof(path) - at, "%s%d",
				       i == 1 ? "" : ", which waits for the one on line ",
				       st->conns[cycle[i < len ? i : 0] - n0].line);
	return cm_err(cm_at(st, st->conns[cycle[0] - n0].line),
		      "expected triggers without a cycle, but this connection waits for the one "
		      "on line %s%s (htsim would never start them)",
		      path, len > 12 ? ", ..." : "");
}

/* Append the connections to `out`, triggered ones with their dependencies. */
static int cm_build(struct cm_state *st, struct flow_list *out)
{
	size_t n0 = out->n, len;
	uint32_t *cycle;

	if (cm_resolve(st))
		return MP_EUSER;
	for (size_t i = 0; i < st->nconns; i++) {
		const struct cm_conn *c = &st->conns[i];

		flow_list_push(out, c->src, c->dst, c->size, c->trigger ? 0 : c->start);
		if (c->trigger && cm_target_deps(st, i, n0, out))
			return MP_EUSER;
	}
	len = flow_list_cycle(out, &cycle);
	if (!len)
		return MP_OK;
	cm_cycle_err(st, cycle, len, n0);
	mp_free(cycle);
	return MP_EUSER;
}

static int htsim_cm_generate(const void *params, const struct wl_env *env, struct flow_list *out,
			     struct mp_err *e)
{
	const struct htsim_cm_params *hp = params;
	struct cm_state st = { .name = hp->file, .line = 0, .e = e };
	uint64_t nodes = 0, conns = 0, trigs = 0, count;
	int have_nodes = 0, have_conns = 0, rc = MP_OK;
	size_t len;
	struct flow_list_mark at = flow_list_at(out);
	char *text, *cur, *line;

	if (!hp->file)
		return mp_errf(e, MP_EUSER, "file: expected the path of an htsim .cm file");
	if (workload_read_file(hp->file, env->base_dir, &text, &len, e))
		return MP_EUSER;
	cur = text;
	while ((line = workload_next_line(&cur))) {
		char *rest = line, *tok;
		int body = st.nconns || st.ntrigs; /* past the header */

		st.line++;
		tok = workload_next_token(&rest);
		if (!tok || tok[0] == '#')
			continue;
		if (strstr(tok, "->") || !strcmp(tok, "trigger")) {
			if (!have_nodes || !have_conns) {
				rc = cm_err(&st, "expected the header lines 'Nodes <n>' and "
						 "'Connections <n>' before the first connection");
				goto out;
			}
			rc = tok[0] == 't' ? parse_trigger(&st, rest)
					   : parse_connection(&st, tok, rest, nodes);
			if (rc)
				goto out;
		} else if (!strcmp(tok, "failure")) {
			rc = cm_err(&st, "'failure' lines (link failures) are not supported yet");
			goto out;
		} else if (body && (!strcmp(tok, "Nodes") || !strcmp(tok, "Connections") ||
				    !strcmp(tok, "Triggers") || !strcmp(tok, "Failures"))) {
			rc = cm_err(&st,
				    "expected '%s' among the header lines, before the first "
				    "connection or trigger",
				    tok);
			goto out;
		} else if (!strcmp(tok, "Nodes")) {
			rc = parse_count(&st, tok, rest, &nodes);
			if (rc)
				goto out;
			if (nodes < 2 || nodes > env->nhosts) {
				rc = cm_err(&st,
					    "Nodes: expected 2 to %u (the fabric's hosts), "
					    "found %llu",
					    env->nhosts, (unsigned long long)nodes);
				goto out;
			}
			have_nodes = 1;
		} else if (!strcmp(tok, "Connections")) {
			rc = parse_count(&st, tok, rest, &conns);
			if (rc)
				goto out;
			have_conns = 1;
		} else if (!strcmp(tok, "Triggers")) {
			rc = parse_count(&st, tok, rest, &trigs);
			if (rc)
				goto out;
		} else if (!strcmp(tok, "Failures")) {
			rc = parse_count(&st, tok, rest, &count);
			if (rc)
				goto out;
			if (count) {
				rc = cm_err(&st,
					    "Failures %llu: link failures are not supported yet "
					    "(expected 0)",
					    (unsigned long long)count);
				goto out;
			}
		} else {
			rc = cm_err(&st,
				    "expected a header line (Nodes, Connections, Triggers), a "
				    "connection 'src->dst ...', a 'trigger ...' line or a '#' "
				    "comment, found '%s'",
				    tok);
			goto out;
		}
	}
	if (!have_nodes || !have_conns) {
		rc = cm_err(&st, "expected the header lines 'Nodes <n>' and 'Connections <n>'");
		goto out;
	}
	if (st.nconns != conns) {
		rc = cm_err(&st, "expected %llu connections (the Connections line), found %zu",
			    (unsigned long long)conns, st.nconns);
		goto out;
	}
	if (st.ntrigs != trigs) {
		rc = cm_err(&st, "expected %llu trigger lines (the Triggers line), found %zu",
			    (unsigned long long)trigs, st.ntrigs);
		goto out;
	}
	rc = cm_build(&st, out);
out:
	if (rc) /* nothing half-built */
		flow_list_back_to(out, at);
	mp_free(st.conns);
	mp_free(st.trigs);
	mp_free(st.acts);
	mp_free(text);
	return rc;
}

const struct workload_ops htsim_cm_workload_ops = {
	.name = "htsim_cm",
	.summary = "flows from an htsim connection matrix, its triggers as a DAG (start in ps)",
	.opts = htsim_cm_opts,
	.params_size = sizeof(struct htsim_cm_params),
	.generate = htsim_cm_generate,
};

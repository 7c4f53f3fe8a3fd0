/* htsim_cm.c - flows from an htsim connection-matrix file (".cm").
 *
 * Owns: htsim_cm_workload_ops and its parameters.
 *
 * Format, as read by htsim's ConnectionMatrix::load(istream&) in
 * github.com/Broadcom/csg-htsim, sim/datacenter/connection_matrix.cpp (commit
 * 20b22971), and as written by sim/datacenter/connection_matrices/
 * gen_permutation.py and gen_incast.py (sample: perm_16n_16c_2MB.cm):
 *
 *     Nodes 16
 *     Connections 16
 *     7->5 id 1 start 0 size 2000000
 *     15->1 id 2 start 0 size 2000000
 *
 * - Space-separated tokens; blank lines and lines whose first token starts
 *   with '#' are skipped.
 * - Header lines before the first connection: "Nodes N", "Connections C",
 *   and optionally "Triggers T", "Failures F". The number of connection lines
 *   must equal C.
 * - A connection: "src->dst" (node indices) then keyword/value pairs in any
 *   order: "id <flow id, not 0>", "start <time>", "size <bytes>". start is in
 *   PICOSECONDS: the loader stores it unchanged ("start is in picoseconds
 *   already") and the generator scripts write microseconds x 1e6. (htsim's
 *   older ConnectionMatrix::save() prints "start %f" in microseconds; its
 *   loader does not read that, and neither do we.) A decimal start is rounded
 *   to the nearest ps. size is in bytes.
 * - Not supported yet, rejected with a message: flow dependencies ("trigger
 *   <id>", "send_done_trigger <id>", "recv_done_trigger <id>", "trigger ..."
 *   lines, "Triggers T" with T > 0), "prio <p>", "addon", and link failures
 *   ("failure ..." lines, "Failures F" with F > 0).
 *
 * Stricter than htsim: start and size are required, src != dst, node indices
 * below Nodes, flow ids distinct, Nodes at most the fabric's hosts (node i is
 * host i). Flows keep the file's order; htsim's flow ids are checked but not
 * kept (a flow's id is its position).
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

struct cm_id {
	uint32_t id; /* htsim flow id, 0 = none given */
	int line;
};

static int cmp_id(const void *a, const void *b)
{
	const struct cm_id *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

struct cm_state {
	const char *name;
	int line;
	struct mp_err *e;
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

static int parse_connection(struct cm_state *st, char *tok, char *rest, uint64_t nodes,
			    struct flow_list *out, uint32_t *flowid)
{
	uint32_t src = 0, dst = 0;
	uint64_t start = 0, size = 0, id = 0;
	int have_start = 0, have_size = 0;
	char *key, *val;

	if (parse_pair(st, tok, nodes, &src, &dst))
		return MP_EUSER;
	while ((key = workload_next_token(&rest))) {
		if (!strcmp(key, "trigger") || !strcmp(key, "send_done_trigger") ||
		    !strcmp(key, "recv_done_trigger"))
			return cm_err(st,
				      "'%s' (flow dependencies) is not supported yet: expected "
				      "connections with a start time only",
				      key);
		if (!strcmp(key, "prio"))
			return cm_err(st, "'prio' (flow priorities) is not supported yet");
		if (!strcmp(key, "addon"))
			return cm_err(st, "'addon' (trigger signals) is not supported yet");
		if (strcmp(key, "id") && strcmp(key, "start") && strcmp(key, "size"))
			return cm_err(st, "expected one of id, start, size, found '%s'", key);
		val = workload_next_token(&rest);
		if (!val)
			return cm_err(st, "expected a value after '%s'", key);
		if (!strcmp(key, "id")) {
			if (workload_parse_uint(val, UINT32_MAX, &id) || id == 0)
				return cm_err(st, "id: expected a flow id above 0, found '%s'",
					      val);
		} else if (!strcmp(key, "start")) {
			if (parse_ps(val, &start))
				return cm_err(st,
					      "start: expected a time in picoseconds, found "
					      "'%s'",
					      val);
			have_start = 1;
		} else {
			if (workload_parse_uint(val, UINT64_MAX, &size) || size == 0)
				return cm_err(st,
					      "size: expected a size in bytes above 0, found "
					      "'%s'",
					      val);
			have_size = 1;
		}
	}
	if (!have_start)
		return cm_err(st, "expected 'start <picoseconds>' (triggered flows are not "
				  "supported yet)");
	if (!have_size)
		return cm_err(st, "expected 'size <bytes>'");
	*flowid = (uint32_t)id;
	flow_list_push(out, src, dst, size, start);
	return MP_OK;
}

static int parse_count(struct cm_state *st, const char *key, char *rest, uint64_t *v)
{
	char *val = workload_next_token(&rest), *extra = val ? workload_next_token(&rest) : NULL;

	if (!val || extra || workload_parse_uint(val, UINT32_MAX, v))
		return cm_err(st, "expected '%s <count>'", key);
	return MP_OK;
}

static int htsim_cm_generate(const void *params, const struct wl_env *env, struct flow_list *out,
			     struct mp_err *e)
{
	const struct htsim_cm_params *hp = params;
	struct cm_state st = { .name = hp->file, .line = 0, .e = e };
	uint64_t nodes = 0, conns = 0, count;
	int have_nodes = 0, have_conns = 0, rc = MP_OK;
	size_t len, n0 = out->n, nflows = 0, cap = 0;
	struct cm_id *ids = NULL;
	char *text, *cur, *line;

	if (!hp->file)
		return mp_errf(e, MP_EUSER, "file: expected the path of an htsim .cm file");
	if (workload_read_file(hp->file, env->base_dir, &text, &len, e))
		return MP_EUSER;
	cur = text;
	while ((line = workload_next_line(&cur))) {
		char *rest = line, *tok;
		uint32_t flowid = 0;

		st.line++;
		tok = workload_next_token(&rest);
		if (!tok || tok[0] == '#')
			continue;
		if (strstr(tok, "->")) {
			if (!have_nodes || !have_conns) {
				rc = cm_err(&st, "expected the header lines 'Nodes <n>' and "
						 "'Connections <n>' before the first connection");
				goto out;
			}
			rc = parse_connection(&st, tok, rest, nodes, out, &flowid);
			if (rc)
				goto out;
			if (nflows == cap) {
				cap = cap ? 2 * cap : 64;
				ids = mp_realloc(ids, cap * sizeof(*ids));
			}
			ids[nflows++] = (struct cm_id){ .id = flowid, .line = st.line };
		} else if (!strcmp(tok, "trigger") || !strcmp(tok, "failure")) {
			rc = cm_err(&st, "'%s' lines (%s) are not supported yet", tok,
				    tok[0] == 't' ? "flow dependencies" : "link failures");
			goto out;
		} else if (nflows && (!strcmp(tok, "Nodes") || !strcmp(tok, "Connections") ||
				      !strcmp(tok, "Triggers") || !strcmp(tok, "Failures"))) {
			rc = cm_err(&st,
				    "expected '%s' among the header lines, before the first "
				    "connection",
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
		} else if (!strcmp(tok, "Triggers") || !strcmp(tok, "Failures")) {
			rc = parse_count(&st, tok, rest, &count);
			if (rc)
				goto out;
			if (count) {
				rc = cm_err(&st, "%s %llu: %s are not supported yet (expected 0)",
					    tok, (unsigned long long)count,
					    tok[0] == 'T' ? "triggers (flow dependencies)"
							  : "link failures");
				goto out;
			}
		} else {
			rc = cm_err(&st,
				    "expected a header line (Nodes, Connections), a "
				    "connection 'src->dst ...' or a '#' comment, found '%s'",
				    tok);
			goto out;
		}
	}
	if (!have_nodes || !have_conns) {
		rc = cm_err(&st, "expected the header lines 'Nodes <n>' and 'Connections <n>'");
		goto out;
	}
	if (nflows != conns) {
		rc = cm_err(&st, "expected %llu connections (the Connections line), found %zu",
			    (unsigned long long)conns, nflows);
		goto out;
	}
	if (nflows > 1) {
		/* htsim triggers refer to flows by id: ids given must be distinct. */
		qsort(ids, nflows, sizeof(*ids), cmp_id);
		for (size_t i = 1; i < nflows; i++)
			if (ids[i].id && ids[i].id == ids[i - 1].id) {
				st.line = ids[i].line;
				rc = cm_err(&st,
					    "id: expected distinct flow ids, found id %u "
					    "again (first at line %d)",
					    ids[i].id, ids[i - 1].line);
				goto out;
			}
	}
out:
	if (rc)
		out->n = n0; /* nothing half-built */
	mp_free(ids);
	mp_free(text);
	return rc;
}

const struct workload_ops htsim_cm_workload_ops = {
	.name = "htsim_cm",
	.summary = "flows from an htsim connection-matrix file (start in ps, size in bytes)",
	.opts = htsim_cm_opts,
	.params_size = sizeof(struct htsim_cm_params),
	.generate = htsim_cm_generate,
};

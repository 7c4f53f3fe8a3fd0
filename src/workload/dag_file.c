/* dag_file.c - a message DAG from a CSV or JSON file (workload "dag").
 *
 * Owns: dag_file_workload_ops and its parameters.
 *
 * A message is (id, src, dst, bytes), released `delay` after `need` of the
 * messages it waits for (`deps`) completed, and not before `start`:
 *
 *   id     required; unique in the file: a non-negative integer (compared by
 *          value: 07 = 7; in JSON a number or a string) or a name (a letter
 *          or '_', then letters, digits, '_', '-', '.')
 *   src    required; host index below the fabric's hosts
 *   dst    required; host index, != src
 *   bytes  required; a size above 0 with an optional unit (4000, 64KB, 2MiB)
 *   deps   optional (none); ids of messages anywhere in the file, earlier or
 *          later. "a" waits until a's last byte is delivered at its receiver;
 *          "a:sent" until a's last byte is acknowledged at its sender.
 *   delay  optional (0); a time with a unit (0, 10us, 1.5ms) after the deps
 *   start  optional (0); a time with a unit; the message is not released
 *          before it, with or without deps
 *   need   optional (all); how many of the deps must complete, 1 to their count
 *
 * CSV (".csv", or format: csv):
 *
 *     # comment lines and blank lines are ignored
 *     id,src,dst,bytes,deps,delay
 *     a,0,1,1MB,,
 *     b,1,2,1MB,a,2us
 *     c,2,3,64KiB,a b:sent,0
 *
 * The first other line is the header: the field names above, in any order,
 * each at most once, id/src/dst/bytes required. Then one message a line with
 * as many comma-separated fields; spaces around fields are allowed, an empty
 * optional field takes its default, deps are separated by spaces or ';'. No
 * quoting: no field holds a comma.
 *
 * JSON (".json", or format: json): an array of message objects, or an object
 * whose one key "messages" holds that array:
 *
 *     [ {"id": "a", "src": 0, "dst": 1, "bytes": "1MB"},
 *       {"id": "b", "src": 1, "dst": 2, "bytes": 1000000, "deps": ["a"],
 *        "delay": "2us"} ]
 *
 * Values are numbers or strings (ids may be either; sizes and times may be a
 * number such as 4000 or 0, or a string with a unit), deps an array of ids.
 * Unknown or repeated keys are errors. The reader is strict RFC 8259 minus
 * string escapes (no value of this format needs one): no comments, no
 * trailing commas, no true/false/null.
 *
 * Why a reader of its own rather than Debian's libjansson or libjson-c (both
 * in bookworm): neither records the line of a decoded value, only of a syntax
 * error, and every error here (a dangling id, a duplicate, a cycle, a bad
 * host) must name the line of the message it is about. The subset needed is
 * about 200 lines and keeps the build to libyaml.
 *
 * Messages keep the file's order (a message's flow id is n0 + its position,
 * where n0 is the list's length before). Every error names file:line: a
 * syntax error, an unknown or missing field, a bad number or unit, a host out
 * of range or src == dst, an id given twice, a dep naming no message or the
 * message itself or listed twice, need out of range, and a cycle (naming the
 * messages on it). On error the list is left as it was.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/mem.h"
#include "workload/workload.h"

enum { DAG_FORMAT_AUTO, DAG_FORMAT_CSV, DAG_FORMAT_JSON };
static const char *const dag_formats[] = { "auto", "csv", "json", NULL };

struct dag_params {
	char *file; /* path of the .csv or .json file */
	int format; /* DAG_FORMAT_* */
};

static const struct opt_desc dag_opts[] = {
	{ .name = "file",
	  .type = OPT_PATH,
	  .offset = offsetof(struct dag_params, file),
	  .def = NULL,
	  .help = "message DAG file: CSV (id,src,dst,bytes[,deps,delay,start,need]) or JSON" },
	{ .name = "format",
	  .type = OPT_ENUM,
	  .offset = offsetof(struct dag_params, format),
	  .def = "auto",
	  .help = "auto: by the file's extension (.csv or .json); csv; json",
	  .choices = dag_formats },
	OPT_END,
};

enum dag_field { F_ID, F_SRC, F_DST, F_BYTES, F_DEPS, F_DELAY, F_START, F_NEED, F_COUNT };
static const char *const dag_field_names[F_COUNT] = { "id",   "src",   "dst",	"bytes",
						      "deps", "delay", "start", "need" };
#define DAG_REQUIRED ((1u << F_ID) | (1u << F_SRC) | (1u << F_DST) | (1u << F_BYTES))
#define DAG_VALUE_MAX 64 /* longest number or unit text read, with its NUL */

/* A span of the file's text (not NUL-terminated) and its line. */
struct dag_tok {
	const char *s;
	uint32_t len;
	int line;
};

struct dag_dep {
	struct dag_tok id; /* canonical (see dag_id) */
	uint32_t sent;	   /* FLOW_DEP_SENT or 0 */
};

struct dag_msg {
	struct dag_tok id;	 /* canonical */
	int line;		 /* CSV: the row; JSON: the object's '{' */
	int fline[F_COUNT];	 /* line of each field given */
	uint32_t have;		 /* 1 << field, for each field given */
	uint32_t src, dst, need; /* need 0: all */
	uint64_t bytes;
	simtime_t start, delay;
	uint32_t dep0, ndeps; /* rd->deps[dep0 .. dep0 + ndeps) */
};

struct dag_rd {
	const char *name;
	const struct wl_env *env;
	struct mp_err *e;
	struct dag_msg *m;
	size_t n, cap;
	struct dag_dep *deps;
	size_t ndeps, deps_cap;
};

static int __attribute__((format(printf, 3, 4)))
dag_err(struct dag_rd *rd, int line, const char *fmt, ...)
{
	char msg[sizeof(rd->e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return mp_errf(rd->e, MP_EUSER, "%s:%d: %s", rd->name, line, msg);
}

static struct dag_msg *dag_new_msg(struct dag_rd *rd, int line)
{
	struct dag_msg *m;

	if (rd->n == rd->cap) {
		rd->cap = rd->cap ? 2 * rd->cap : 64;
		rd->m = mp_realloc(rd->m, rd->cap * sizeof(*rd->m));
	}
	m = &rd->m[rd->n++];
	memset(m, 0, sizeof(*m));
	m->line = line;
	m->dep0 = (uint32_t)rd->ndeps;
	return m;
}

/* An id as written: an integer (canonical without leading zeros) or a name. */
static int dag_id(struct dag_rd *rd, const char *key, struct dag_tok *t)
{
	uint32_t n = t->len, digits = 0, i = 0;
	bool ok = n > 0;

	while (digits < n && t->s[digits] >= '0' && t->s[digits] <= '9')
		digits++;

	if (ok && digits < n) { /* a name */
		ok = t->s[0] == '_' || (t->s[0] >= 'a' && t->s[0] <= 'z') ||
		     (t->s[0] >= 'A' && t->s[0] <= 'Z');
		for (i = 1; ok && i < n; i++)
			ok = (t->s[i] && strchr("_-.", t->s[i])) ||
			     (t->s[i] >= '0' && t->s[i] <= '9') ||
			     (t->s[i] >= 'a' && t->s[i] <= 'z') ||
			     (t->s[i] >= 'A' && t->s[i] <= 'Z');
	}
	if (!ok)
		return dag_err(rd, t->line,
			       "%s: expected an id (a non-negative integer, or a name: a letter "
			       "or '_', then letters, digits, '_', '-', '.'), found '%.*s'",
			       key, (int)n, t->s);
	while (digits == n && t->len > 1 && t->s[0] == '0') {
		t->s++;
		t->len--;
	}
	return MP_OK;
}

/* One dependency "id" or "id:sent". */
static int dag_add_dep(struct dag_rd *rd, struct dag_msg *m, struct dag_tok t)
{
	struct dag_dep d = { .id = t, .sent = 0 };

	if (t.len > 5 && !memcmp(t.s + t.len - 5, ":sent", 5)) {
		d.sent = FLOW_DEP_SENT;
		d.id.len -= 5;
	}
	if (dag_id(rd, "deps", &d.id))
		return MP_EUSER;
	if (rd->ndeps == rd->deps_cap) {
		rd->deps_cap = rd->deps_cap ? 2 * rd->deps_cap : 64;
		rd->deps = mp_realloc(rd->deps, rd->deps_cap * sizeof(*rd->deps));
	}
	rd->deps[rd->ndeps++] = d;
	m->ndeps++;
	return MP_OK;
}

/* Set a scalar field (not deps) from the text of its value. */
static int dag_set(struct dag_rd *rd, struct dag_msg *m, int f, struct dag_tok t)
{
	char v[DAG_VALUE_MAX], where[320];
	uint64_t need;

	if (m->have & (1u << f))
		return dag_err(rd, t.line,
			       "expected the field '%s' once in a message, found it again",
			       dag_field_names[f]);
	m->have |= 1u << f;
	m->fline[f] = t.line;
	if (f == F_ID) {
		m->id = t;
		return dag_id(rd, "id", &m->id);
	}
	if (t.len >= sizeof(v))
		return dag_err(rd, t.line, "%s: expected at most %d characters, found '%.16s...'",
			       dag_field_names[f], DAG_VALUE_MAX - 1, t.s);
	snprintf(v, sizeof(v), "%.*s", (int)t.len, t.s);
	snprintf(where, sizeof(where), "%s:%d", rd->name, t.line);
	switch (f) {
	case F_SRC:
		return workload_field_host(where, "src", v, rd->env->nhosts, &m->src, rd->e);
	case F_DST:
		return workload_field_host(where, "dst", v, rd->env->nhosts, &m->dst, rd->e);
	case F_BYTES:
		return workload_field_bytes(where, "bytes", v, &m->bytes, rd->e);
	case F_DELAY:
		return workload_field_time(where, "delay", v, &m->delay, rd->e);
	case F_START:
		return workload_field_time(where, "start", v, &m->start, rd->e);
	default:
		MP_ASSERT(f == F_NEED);
		if (workload_parse_uint(v, UINT32_MAX, &need) || need == 0)
			return dag_err(rd, t.line,
				       "need: expected how many deps must complete (1 or more), "
				       "found '%s'",
				       v);
		m->need = (uint32_t)need;
		return MP_OK;
	}
}

/* The message is complete: required fields, src != dst. */
static int dag_end_msg(struct dag_rd *rd, struct dag_msg *m)
{
	for (int f = 0; f < F_COUNT; f++)
		if ((DAG_REQUIRED & (1u << f)) && !(m->have & (1u << f)))
			return dag_err(rd, m->line,
				       "expected a message with the fields id, src, dst and bytes; "
				       "'%s' is missing",
				       dag_field_names[f]);
	if (m->src == m->dst)
		return dag_err(rd, m->fline[F_DST],
			       "expected dst different from src (both are host %u)", m->src);
	return MP_OK;
}

/* ---- CSV ---- */

static int dag_csv_header(struct dag_rd *rd, char **f, int nf, int line, int *col)
{
	uint32_t have = 0;

	if (nf > F_COUNT)
		return dag_err(rd, line,
			       "expected a header of at most %d fields (id, src, dst, bytes, "
			       "deps, delay, start, need), found more",
			       F_COUNT);
	for (int i = 0; i < nf; i++) {
		int k = 0;

		while (k < F_COUNT && strcmp(f[i], dag_field_names[k]))
			k++;
		if (k == F_COUNT)
			return dag_err(rd, line,
				       "header: expected the fields id, src, dst, bytes and "
				       "optionally deps, delay, start, need; found '%s'",
				       f[i]);
		if (have & (1u << k))
			return dag_err(rd, line, "header: expected '%s' once, found it again",
				       f[i]);
		have |= 1u << k;
		col[i] = k;
	}
	for (int k = 0; k < F_COUNT; k++)
		if ((DAG_REQUIRED & (1u << k)) && !(have & (1u << k)))
			return dag_err(rd, line,
				       "expected a header line naming the fields id, src, dst, "
				       "bytes (and optionally deps, delay, start, need); '%s' is "
				       "missing",
				       dag_field_names[k]);
	return MP_OK;
}

static int dag_csv_row(struct dag_rd *rd, char **f, int nf, int ncols, const int *col, int line)
{
	struct dag_msg *m;

	if (nf != ncols)
		return dag_err(rd, line,
			       "expected %d comma-separated fields as in the header, found %s%d",
			       ncols, nf > ncols ? "more than " : "", nf > ncols ? ncols : nf);
	m = dag_new_msg(rd, line);
	for (int i = 0; i < ncols; i++) {
		struct dag_tok t = { .s = f[i], .len = (uint32_t)strlen(f[i]), .line = line };

		if (col[i] == F_DEPS) {
			char *cur = f[i], *d;

			m->have |= 1u << F_DEPS;
			m->fline[F_DEPS] = line;
			while ((d = strsep(&cur, " \t;")))
				if (*d &&
				    dag_add_dep(rd, m,
						(struct dag_tok){ d, (uint32_t)strlen(d), line }))
					return MP_EUSER;
		} else if (t.len || col[i] == F_ID) {
			if (dag_set(rd, m, col[i], t))
				return MP_EUSER;
		} else if (DAG_REQUIRED & (1u << col[i])) {
			return dag_err(rd, line, "%s: expected a value, found an empty field",
				       dag_field_names[col[i]]);
		}
	}
	return dag_end_msg(rd, m);
}

static int dag_read_csv(struct dag_rd *rd, char *text)
{
	char *cur = text, *line, *f[F_COUNT + 1];
	int lineno = 0, ncols = 0, col[F_COUNT];

	while ((line = workload_next_line(&cur))) {
		int nf;

		lineno++;
		if (!line[0] || line[0] == '#')
			continue;
		nf = workload_split(line, ',', f, F_COUNT);
		if (!ncols) {
			if (dag_csv_header(rd, f, nf, lineno, col))
				return MP_EUSER;
			ncols = nf;
		} else if (dag_csv_row(rd, f, nf, ncols, col, lineno)) {
			return MP_EUSER;
		}
	}
	if (!ncols)
		return dag_err(rd, lineno ? lineno : 1,
			       "expected a header line naming the fields id, src, dst, bytes "
			       "(and optionally deps, delay, start, need)");
	if (!rd->n)
		return dag_err(rd, lineno, "expected at least one message after the header");
	return MP_OK;
}

/* ---- JSON ---- */

struct dag_js {
	struct dag_rd *rd;
	const char *p;
	int line;
};

static void js_ws(struct dag_js *j)
{
	for (;; j->p++) {
		if (*j->p == '\n')
			j->line++;
		else if (*j->p != ' ' && *j->p != '\t' && *j->p != '\r')
			return;
	}
}

/* An error "expected <what>, found <the next character or the end>". */
static int js_expected(struct dag_js *j, const char *what)
{
	if (!*j->p)
		return dag_err(j->rd, j->line, "expected %s, found the end of the file", what);
	size_t n = strcspn(j->p, " \t\r\n,:[]{}\"");

	n = n ? (n < 24 ? n : 24) : 1;
	return dag_err(j->rd, j->line, "expected %s, found '%.*s'", what, (int)n, j->p);
}

/* After blanks, take `c` if it is next. */
static bool js_take(struct dag_js *j, char c)
{
	js_ws(j);
	if (*j->p != c)
		return false;
	j->p++;
	return true;
}

static int js_string(struct dag_js *j, struct dag_tok *t)
{
	const char *s = ++j->p;

	while (*j->p != '"') {
		if (*j->p == '\\')
			return dag_err(j->rd, j->line,
				       "expected a string without escapes ('\\'): ids, sizes and "
				       "times need none");
		if ((unsigned char)*j->p < 0x20)
			return dag_err(j->rd, j->line, "expected '\"' to end the string");
		j->p++;
	}
	*t = (struct dag_tok){ s, (uint32_t)(j->p - s), j->line };
	j->p++;
	return MP_OK;
}

/* A number as RFC 8259 writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int js_number(struct dag_js *j, struct dag_tok *t)
{
	const char *s = j->p, *q = s;

	q += *q == '-';
	if (*q == '0')
		q++;
	else if (*q >= '1' && *q <= '9')
		q += strspn(q, "0123456789");
	else
		return js_expected(j, "a number");
	if (*q == '.') {
		size_t n = strspn(q + 1, "0123456789");
		if (!n)
			return js_expected(j, "a number");
		q += 1 + n;
	}
	if (*q == 'e' || *q == 'E') {
		size_t n;
		q += 1 + (q[1] == '+' || q[1] == '-');
		n = strspn(q, "0123456789");
		if (!n)
			return js_expected(j, "a number");
		q += n;
	}
	if (*q && !strchr(" \t\r\n,]}", *q))
		return js_expected(j, "a number");
	*t = (struct dag_tok){ s, (uint32_t)(q - s), j->line };
	j->p = q;
	return MP_OK;
}

/* A string or a number, for the field `key`. */
static int js_scalar(struct dag_js *j, const char *key, struct dag_tok *t)
{
	char what[96];

	js_ws(j);
	if (*j->p == '"')
		return js_string(j, t);
	if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
		return js_number(j, t);
	snprintf(what, sizeof(what), "%s: a number or a string", key);
	return js_expected(j, what);
}

static int js_deps(struct dag_js *j, struct dag_msg *m)
{
	struct dag_tok t;

	if (m->have & (1u << F_DEPS))
		return dag_err(j->rd, j->line,
			       "expected the field 'deps' once in a message, found it again");
	m->have |= 1u << F_DEPS;
	m->fline[F_DEPS] = j->line;
	if (!js_take(j, '['))
		return js_expected(j, "deps: an array of ids ('[')");
	if (js_take(j, ']'))
		return MP_OK;
	do {
		if (js_scalar(j, "deps", &t) || dag_add_dep(j->rd, m, t))
			return MP_EUSER;
	} while (js_take(j, ','));
	if (!js_take(j, ']'))
		return js_expected(j, "',' or ']' in the deps array");
	return MP_OK;
}

static int js_message(struct dag_js *j)
{
	struct dag_msg *m;
	struct dag_tok key, val;

	js_ws(j);
	if (!js_take(j, '{'))
		return js_expected(j, "a message object ('{')");
	m = dag_new_msg(j->rd, j->line);
	if (js_take(j, '}'))
		return dag_end_msg(j->rd, m);
	do {
		int f = 0;

		js_ws(j);
		if (*j->p != '"')
			return js_expected(j, "a field name in double quotes");
		if (js_string(j, &key))
			return MP_EUSER;
		while (f < F_COUNT && (strlen(dag_field_names[f]) != key.len ||
				       memcmp(dag_field_names[f], key.s, key.len)))
			f++;
		if (f == F_COUNT)
			return dag_err(j->rd, key.line,
				       "expected a field id, src, dst, bytes, deps, delay, start "
				       "or need, found '%.*s'",
				       (int)key.len, key.s);
		if (!js_take(j, ':'))
			return js_expected(j, "':' after the field name");
		if (f == F_DEPS
			? js_deps(j, m)
			: js_scalar(j, dag_field_names[f], &val) || dag_set(j->rd, m, f, val))
			return MP_EUSER;
	} while (js_take(j, ','));
	if (!js_take(j, '}'))
		return js_expected(j, "',' or '}' in the message object");
	return dag_end_msg(j->rd, m);
}

static int dag_read_json(struct dag_rd *rd, const char *text)
{
	struct dag_js j = { .rd = rd, .p = text, .line = 1 };
	bool wrapped;

	js_ws(&j);
	wrapped = js_take(&j, '{');
	if (wrapped) {
		struct dag_tok key;

		js_ws(&j);
		if (*j.p != '"' || js_string(&j, &key) || key.len != 8 ||
		    memcmp(key.s, "messages", 8))
			return dag_err(rd, j.line,
				       "expected the key \"messages\" (the top-level object's "
				       "only key)");
		if (!js_take(&j, ':'))
			return js_expected(&j, "':' after \"messages\"");
	}
	if (!js_take(&j, '['))
		return js_expected(&j, "an array of messages ('[') or {\"messages\": [...]}");
	if (!js_take(&j, ']')) {
		do {
			if (js_message(&j))
				return MP_EUSER;
		} while (js_take(&j, ','));
		if (!js_take(&j, ']'))
			return js_expected(&j, "',' or ']' in the array of messages");
	}
	if (wrapped && !js_take(&j, '}'))
		return js_expected(&j, "'}' to close the top-level object");
	js_ws(&j);
	if (*j.p)
		return js_expected(&j, "the end of the file");
	if (!rd->n)
		return dag_err(rd, j.line, "expected at least one message");
	return MP_OK;
}

/* ---- ids to flows ---- */

static int dag_tok_cmp(const struct dag_tok *a, const struct dag_tok *b)
{
	int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* A message's id and position, sorted by id. */
struct dag_key {
	struct dag_tok id;
	uint32_t pos;
};

static int dag_key_cmp(const void *a, const void *b)
{
	const struct dag_key *x = a, *y = b;
	int c = dag_tok_cmp(&x->id, &y->id);

	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* The position of the message whose id is t, or -1. */
static int64_t dag_find(const struct dag_key *keys, size_t n, const struct dag_tok *t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = dag_tok_cmp(&keys[mid].id, t);

		if (!c)
			return keys[mid].pos;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* "message 'a' waits for 'b', which waits for 'a'": the first 8 steps and the last. */
static int dag_cycle_err(struct dag_rd *rd, const uint32_t *cycle, size_t len, size_t n0)
{
	const struct dag_msg *first;
	char path[640];
	size_t at = 0;

	MP_ASSERT(cycle[0] >= n0); /* the lowest id on it: flows before n0 wait for none of ours */
	first = &rd->m[cycle[0] - n0];
	for (size_t i = 1; i <= len && at < sizeof(path); i++) {
		const struct dag_tok *id;

		if (i == 8 && len > 8) {
			at += (size_t)snprintf(path + at, sizeof(path) - at,
					       ", which waits for ... (%zu more)", len - 8);
			i = len;
			if (at >= sizeof(path))
				break;
		}
		id = &rd->m[cycle[i % len] - n0].id;
		at += (size_t)snprintf(path + at, sizeof(path) - at, "%s '%.*s'",
				       i == 1 ? "" : ", which waits for", (int)id->len, id->s);
	}
	return dag_err(rd, first->line, "deps: expected no cycle, but message '%.*s' waits for%s",
		       (int)first->id.len, first->id.s, path);
}

/* Resolve ids, check the deps, and append the messages to `out`. */
static int dag_build(struct dag_rd *rd, struct flow_list *out)
{
	size_t n = rd->n, n0 = out->n, dup = 0, len;
	struct dag_key *keys = mp_malloc(n * sizeof(*keys));
	uint32_t *seen = mp_calloc(2 * n, sizeof(*seen)), *cycle = NULL;
	int rc = MP_OK;

	for (size_t i = 0; i < n; i++)
		keys[i] = (struct dag_key){ rd->m[i].id, (uint32_t)i };
	qsort(keys, n, sizeof(*keys), dag_key_cmp);
	for (size_t i = 1; i < n; i++) /* report the repeat on the earliest line */
		if (!dag_tok_cmp(&keys[i].id, &keys[i - 1].id) &&
		    (!dup || keys[i].pos < keys[dup].pos))
			dup = i;
	if (dup) {
		const struct dag_msg *m = &rd->m[keys[dup].pos];
		rc = dag_err(rd, m->fline[F_ID],
			     "id: expected a unique id, found '%.*s' again (first at line %d)",
			     (int)m->id.len, m->id.s, rd->m[keys[dup - 1].pos].fline[F_ID]);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dag_msg *m = &rd->m[i];

		flow_list_push(out, m->src, m->dst, m->bytes, m->start);
		for (uint32_t k = 0; k < m->ndeps; k++) {
			const struct dag_dep *d = &rd->deps[m->dep0 + k];
			int64_t p = dag_find(keys, n, &d->id);
			uint32_t *mark;

			if (p < 0 || (size_t)p == i) {
				rc = dag_err(
				    rd, d->id.line,
				    p < 0 ? "deps: expected ids of messages in the file, "
					    "found '%.*s' (no message has that id)"
					  : "deps: expected other messages, found '%.*s' (the "
					    "message itself)",
				    (int)d->id.len, d->id.s);
				goto out;
			}
			mark = &seen[2 * (size_t)p + !!d->sent];
			if (*mark == i + 1) {
				rc = dag_err(rd, d->id.line,
					     "deps: expected each id once, found '%.*s%s' again",
					     (int)d->id.len, d->id.s, d->sent ? ":sent" : "");
				goto out;
			}
			*mark = (uint32_t)i + 1;
			flow_list_dep(out, (uint32_t)(n0 + (size_t)p) | d->sent);
		}
		if (m->need > m->ndeps) {
			rc = m->ndeps
				 ? dag_err(rd, m->fline[F_NEED],
					   "need: expected 1 to %u (the message's deps), found %u",
					   m->ndeps, m->need)
				 : dag_err(rd, m->fline[F_NEED],
					   "need: expected no need in a message without deps, "
					   "found %u",
					   m->need);
			goto out;
		}
		out->v[out->n - 1].need = m->need == m->ndeps ? 0 : m->need;
		out->v[out->n - 1].delay = m->delay;
	}
	len = flow_list_cycle(out, &cycle);
	if (len)
		rc = dag_cycle_err(rd, cycle, len, n0);
out:
	mp_free(cycle);
	mp_free(seen);
	mp_free(keys);
	return rc;
}

static bool dag_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcasecmp(s + n - k, suffix);
}

static int dag_generate(const void *params, const struct wl_env *env, struct flow_list *out,
			struct mp_err *e)
{
	const struct dag_params *dp = params;
	struct dag_rd rd = { .name = dp->file, .env = env, .e = e };
	size_t len;
	struct flow_list_mark at = flow_list_at(out);
	int format = dp->format, rc;
	char *text;

	if (!dp->file)
		return mp_errf(e, MP_EUSER, "file: expected the path of a .csv or .json DAG file");
	if (format == DAG_FORMAT_AUTO) {
		if (dag_ends_with(dp->file, ".csv"))
			format = DAG_FORMAT_CSV;
		else if (dag_ends_with(dp->file, ".json"))
			format = DAG_FORMAT_JSON;
		else
			return mp_errf(e, MP_EUSER,
				       "file: expected a name ending in .csv or .json, or "
				       "format: csv|json, found '%s'",
				       dp->file);
	}
	if (workload_read_file(dp->file, env->base_dir, &text, &len, e))
		return MP_EUSER;
	rc = format == DAG_FORMAT_CSV ? dag_read_csv(&rd, text) : dag_read_json(&rd, text);
	if (!rc)
		rc = dag_build(&rd, out);
	if (rc) /* nothing half-built */
		flow_list_back_to(out, at);
	mp_free(rd.m);
	mp_free(rd.deps);
	mp_free(text);
	return rc;
}

const struct workload_ops dag_file_workload_ops = {
	.name = "dag",
	.summary = "a message DAG from a CSV or JSON file (id, src, dst, bytes, deps, delay, ...)",
	.opts = dag_opts,
	.params_size = sizeof(struct dag_params),
	.generate = dag_generate,
};

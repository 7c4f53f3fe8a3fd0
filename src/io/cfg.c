/* cfg.c - experiment files as a tree of YAML nodes that remember their line;
 * see cfg.h.
 *
 * Owns: turning libyaml's event stream into struct cfg_node trees, `--set`
 * overrides, applying one option table to one mapping, and the
 * "file:line: section.key: message" form of every configuration error.
 *
 * Invariants:
 *  - Every node has a 1-based line; a mapping's value carries its key's line
 *    and column. Line 0 marks a node made or replaced by `--set`.
 *  - A document is one YAML mapping with unique scalar keys; anchors, aliases,
 *    a second document and nesting deeper than CFG_MAX_DEPTH are refused.
 *  - cfg_apply_table parses into a scratch copy of the parameters and copies
 *    it back only when every key was accepted, so an error leaves `params`
 *    exactly as it was.
 */
#include "io/cfg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "core/mem.h"

#define CFG_MAX_DEPTH 64

static const char *a_kind(enum cfg_kind k)
{
	return k == CFG_SCALAR ? "a scalar" : k == CFG_MAP ? "a mapping" : "a sequence";
}

/* ---- nodes ------------------------------------------------------------- */

static struct cfg_node *node_new(enum cfg_kind kind, int line, int col)
{
	struct cfg_node *n = mp_calloc(1, sizeof *n);
	n->kind = kind;
	n->line = line;
	n->col = col;
	return n;
}

static void node_free(struct cfg_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		node_free(n->kids[i]);
	mp_free(n->kids);
	mp_free(n->key);
	mp_free(n->value);
	mp_free(n);
}

static void node_append(struct cfg_node *parent, struct cfg_node *kid)
{
	size_t n = parent->n;
	if (n == 0 || (n >= 4 && (n & (n - 1)) == 0))
		parent->kids = mp_realloc(parent->kids, (n < 4 ? 4 : 2 * n) * sizeof *parent->kids);
	parent->kids[parent->n++] = kid;
}

void cfg_put(struct cfg_node *map, struct cfg_node *kid)
{
	for (size_t i = 0; i < map->n; i++)
		if (map->kids[i]->key && strcmp(map->kids[i]->key, kid->key) == 0) {
			node_free(map->kids[i]);
			map->kids[i] = kid;
			return;
		}
	node_append(map, kid);
}

struct cfg_node *cfg_take(struct cfg_node *map, size_t i)
{
	struct cfg_node *kid = map->kids[i];
	memmove(map->kids + i, map->kids + i + 1, (map->n - i - 1) * sizeof *map->kids);
	map->n--;
	return kid;
}

struct cfg_node *cfg_get(const struct cfg_node *map, const char *key)
{
	if (!map || map->kind != CFG_MAP || !key)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (map->kids[i]->key && strcmp(map->kids[i]->key, key) == 0)
			return map->kids[i];
	return NULL;
}

void cfg_free(struct cfg_doc *doc)
{
	if (!doc)
		return;
	node_free(doc->root);
	mp_free(doc->path);
	mp_free(doc->dir);
	doc->root = NULL;
	doc->path = doc->dir = NULL;
}

/* ---- messages ---------------------------------------------------------- */

#define LINE_NONE (-1) /* name the file but no line */

static const char *doc_name(const struct cfg_doc *doc)
{
	return doc && doc->path ? doc->path : "<config>";
}

/* "file:line: section.key: msg", "--set section.key: msg" when line is 0. */
static int vloc_errf(struct mp_err *e, const struct cfg_doc *doc, int line, const char *section,
		     const char *key, const char *fmt, va_list ap)
{
	char msg[sizeof e->msg], what[512];

	vsnprintf(msg, sizeof msg, fmt, ap);
	snprintf(what, sizeof what, "%s%s%s", section ? section : "",
		 section && *section && key ? "." : "", key ? key : "");
	const char *sep = *what ? ": " : "";
	if (line == 0)
		return mp_errf(e, MP_EUSER, "--set%s%s: %s", *what ? " " : "", what, msg);
	if (line == LINE_NONE)
		return mp_errf(e, MP_EUSER, "%s: %s%s%s", doc_name(doc), what, sep, msg);
	return mp_errf(e, MP_EUSER, "%s:%d: %s%s%s", doc_name(doc), line, what, sep, msg);
}

static int loc_errf(struct mp_err *e, const struct cfg_doc *doc, int line, const char *section,
		    const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int loc_errf(struct mp_err *e, const struct cfg_doc *doc, int line, const char *section,
		    const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vloc_errf(e, doc, line, section, key, fmt, ap);
	va_end(ap);
	return rc;
}

static int root_line(const struct cfg_doc *doc)
{
	return doc && doc->root ? doc->root->line : 1;
}

int cfg_errf(struct mp_err *e, const struct cfg_doc *doc, const struct cfg_node *at,
	     const char *section, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vloc_errf(e, doc, at ? at->line : root_line(doc), section, at ? at->key : NULL,
			   fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- reading YAML ------------------------------------------------------ */

/* A mapping's keys by hash, built once it holds KEYIDX_MIN keys, so that
 * finding a duplicate stays linear in the keys (80,000 keys took 71 s with a
 * scan per key). Slots hold a kid's index + 1; 0 is empty. */
#define KEYIDX_MIN 32
struct keyidx {
	uint32_t *slot;
	uint32_t cap; /* a power of two, or 0 */
};

struct builder {
	const struct cfg_doc *doc;
	struct mp_err *e;
	struct cfg_node *stack[CFG_MAX_DEPTH];
	struct keyidx idx[CFG_MAX_DEPTH]; /* of the mapping at each depth */
	int depth;
	char *key; /* pending key of the mapping on top of the stack */
	int key_line, key_col;
	struct cfg_node *root;
	int docs;
	int tab_line; /* first line with a tab in its leading whitespace, or 0 */
};

/* Dotted path of the open containers, plus `last` when not NULL. */
static void build_path(const struct builder *b, const char *last, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 1; i < b->depth && len < n; i++) {
		const struct cfg_node *nd = b->stack[i], *parent = b->stack[i - 1];
		if (nd->key)
			len +=
			    (size_t)snprintf(buf + len, n - len, "%s%s", len ? "." : "", nd->key);
		else
			len += (size_t)snprintf(buf + len, n - len, "[%zu]", parent->n - 1);
	}
	if (last && len < n)
		snprintf(buf + len, n - len, "%s%s", len ? "." : "", last);
}

static int build_errf(struct builder *b, int line, const char *last, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int build_errf(struct builder *b, int line, const char *last, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	build_path(b, last, path, sizeof path);
	va_start(ap, fmt);
	int rc = vloc_errf(b->e, b->doc, line, "", *path ? path : NULL, fmt, ap);
	va_end(ap);
	return rc;
}

static struct cfg_node *top(const struct builder *b)
{
	return b->depth ? b->stack[b->depth - 1] : NULL;
}

static uint32_t key_hash(const char *k)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 16777619u;
	return h;
}

static void keyidx_put(struct keyidx *x, const struct cfg_node *map, uint32_t i)
{
	uint32_t m = x->cap - 1, h = key_hash(map->kids[i]->key) & m;
	while (x->slot[h])
		h = (h + 1) & m;
	x->slot[h] = i + 1;
}

/* The kid of `map` with key `k`, through the index at its depth once the map
 * is large (the index then covers every kid). */
static struct cfg_node *find_key(struct keyidx *x, const struct cfg_node *map, const char *k)
{
	if (map->n < KEYIDX_MIN)
		return cfg_get(map, k);
	if ((size_t)x->cap < 2 * (map->n + 1)) { /* (re)build at twice the size */
		mp_free(x->slot);
		x->cap = x->cap ? 2 * x->cap : 4 * KEYIDX_MIN;
		while ((size_t)x->cap < 2 * (map->n + 1))
			x->cap *= 2;
		x->slot = mp_calloc(x->cap, sizeof *x->slot);
		for (uint32_t i = 0; i < map->n; i++)
			keyidx_put(x, map, i);
	}
	uint32_t m = x->cap - 1;
	for (uint32_t h = key_hash(k) & m; x->slot[h]; h = (h + 1) & m)
		if (!strcmp(map->kids[x->slot[h] - 1]->key, k))
			return map->kids[x->slot[h] - 1];
	return NULL;
}

/* Attach a new node to the open container (or make it the root); on error
 * the node is freed. */
static int attach(struct builder *b, struct cfg_node *nd, const yaml_event_t *ev)
{
	struct cfg_node *parent = top(b);

	if (!parent) {
		if (nd->kind == CFG_SCALAR && nd->value[0] == '\0' &&
		    ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
			/* "---" with nothing after it: an empty document */
			nd->kind = CFG_MAP;
			mp_free(nd->value);
			nd->value = NULL;
		} else if (nd->kind != CFG_MAP) {
			int line = nd->line;
			const char *what = a_kind(nd->kind);
			node_free(nd);
			return build_errf(
			    b, line, NULL,
			    "the top level must be a mapping of keys to values, got %s", what);
		}
		b->root = nd;
		return MP_OK;
	}
	if (parent->kind == CFG_MAP) {
		struct keyidx *x = &b->idx[b->depth - 1];
		struct cfg_node *first = find_key(x, parent, b->key);
		if (first) {
			int rc = build_errf(b, b->key_line, b->key,
					    "duplicate key (first at line %d)", first->line);
			node_free(nd);
			return rc;
		}
		nd->key = b->key;
		nd->line = b->key_line;
		nd->col = b->key_col;
		b->key = NULL;
		node_append(parent, nd);
		if (x->cap) /* an indexed map: index the new key too */
			keyidx_put(x, parent, (uint32_t)parent->n - 1);
		return MP_OK;
	}
	node_append(parent, nd);
	return MP_OK;
}

static int push(struct builder *b, struct cfg_node *nd, const yaml_event_t *ev)
{
	if (b->depth == CFG_MAX_DEPTH) {
		int rc =
		    build_errf(b, nd->line, NULL, "nesting deeper than %d levels", CFG_MAX_DEPTH);
		node_free(nd);
		return rc;
	}
	int rc = attach(b, nd, ev);
	if (rc == MP_OK) {
		struct keyidx *x = &b->idx[b->depth];
		mp_free(x->slot);
		*x = (struct keyidx){ 0 };
		b->stack[b->depth++] = nd;
	}
	return rc;
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
	int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
	struct cfg_node *parent = top(b);
	bool key_pos = parent && parent->kind == CFG_MAP && !b->key;
	const yaml_char_t *anchor = NULL;
	struct cfg_node *nd;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->docs++ > 0)
			return build_errf(b, line, NULL,
					  "a second YAML document starts here; an experiment file "
					  "holds exactly one");
		return MP_OK;
	case YAML_ALIAS_EVENT:
		return build_errf(b, line, key_pos ? NULL : b->key,
				  "aliases (*%s) are not supported; write the value out",
				  (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		break;
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		b->depth--;
		return MP_OK;
	default:
		return MP_OK;
	}
	if (anchor)
		return build_errf(b, line, key_pos ? NULL : b->key,
				  "anchors (&%s) are not supported; write the value out",
				  (const char *)anchor);
	if (ev->type == YAML_SCALAR_EVENT) {
		const char *v = (const char *)ev->data.scalar.value;
		size_t len = ev->data.scalar.length;
		if (key_pos) {
			b->key = mp_malloc(len + 1);
			memcpy(b->key, v, len);
			b->key[len] = '\0';
			b->key_line = line;
			b->key_col = col;
			return MP_OK;
		}
		nd = node_new(CFG_SCALAR, line, col);
		nd->value = mp_malloc(len + 1);
		memcpy(nd->value, v, len);
		nd->value[len] = '\0';
		return attach(b, nd, ev);
	}
	enum cfg_kind kind = ev->type == YAML_MAPPING_START_EVENT ? CFG_MAP : CFG_SEQ;
	if (key_pos)
		return build_errf(b, line, NULL, "a key must be a scalar, got %s", a_kind(kind));
	return push(b, node_new(kind, line, col), ev);
}

static int syntax_errf(struct builder *b, const yaml_parser_t *p)
{
	const char *problem = p->problem ? p->problem : "unknown error";
	if (p->error == YAML_READER_ERROR)
		return mp_errf(b->e, MP_EUSER, "%s: cannot read YAML: %s at byte %zu",
			       doc_name(b->doc), problem, p->problem_offset);
	if (p->error == YAML_MEMORY_ERROR)
		MP_PANIC("libyaml ran out of memory");
	int line = (int)p->problem_mark.line + 1;
	if (b->tab_line == line || (p->context && b->tab_line == (int)p->context_mark.line + 1))
		return mp_errf(
		    b->e, MP_EUSER,
		    "%s:%d: YAML syntax error: a tab character; tabs cannot indent YAML, "
		    "use spaces",
		    doc_name(b->doc), b->tab_line);
	if (p->context)
		return mp_errf(b->e, MP_EUSER, "%s:%d: YAML syntax error: %s (%s at line %d)",
			       doc_name(b->doc), line, problem, p->context,
			       (int)p->context_mark.line + 1);
	return mp_errf(b->e, MP_EUSER, "%s:%d: YAML syntax error: %s", doc_name(b->doc), line,
		       problem);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return mp_strdup(".");
	if (slash == path)
		return mp_strdup("/");
	size_t n = (size_t)(slash - path);
	char *d = mp_malloc(n + 1);
	memcpy(d, path, n);
	d[n] = '\0';
	return d;
}

static int parse_text(const char *text, size_t len, const char *name, struct cfg_doc *doc,
		      struct mp_err *e)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct builder b = { .doc = doc, .e = e };
	int rc = MP_OK;

	memset(doc, 0, sizeof *doc);
	doc->path = mp_strdup(name);
	doc->dir = dir_of(name);
	/* find a tab in a line's indentation, to explain libyaml's complaint */
	for (size_t i = 0, line = 1, bol = 1; i < len && !b.tab_line; i++) {
		if (text[i] == '\n') {
			line++;
			bol = 1;
		} else if (bol && text[i] == '\t') {
			b.tab_line = (int)line;
		} else if (text[i] != ' ') {
			bol = 0;
		}
	}
	if (!yaml_parser_initialize(&p))
		MP_PANIC("libyaml: cannot initialise a parser");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	for (;;) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = syntax_errf(&b, &p);
			break;
		}
		bool end = ev.type == YAML_STREAM_END_EVENT;
		rc = on_event(&b, &ev);
		yaml_event_delete(&ev);
		if (rc != MP_OK || end)
			break;
	}
	yaml_parser_delete(&p);
	mp_free(b.key);
	for (int i = 0; i < CFG_MAX_DEPTH; i++)
		mp_free(b.idx[i].slot);
	if (rc != MP_OK) {
		node_free(b.root);
		cfg_free(doc);
		return rc;
	}
	doc->root = b.root ? b.root : node_new(CFG_MAP, 1, 1);
	return MP_OK;
}

int cfg_load_string(const char *text, const char *name, struct cfg_doc *doc, struct mp_err *e)
{
	return parse_text(text ? text : "", text ? strlen(text) : 0, name ? name : "<string>", doc,
			  e);
}

int cfg_load_file(const char *path, struct cfg_doc *doc, struct mp_err *e)
{
	memset(doc, 0, sizeof *doc);
	FILE *f = fopen(path, "rb");
	if (!f)
		return mp_errf(e, MP_EUSER, "cannot open experiment file '%s': %s", path,
			       strerror(errno));
	size_t len = 0, cap = 4096;
	char *buf = mp_malloc(cap);
	for (;;) {
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (len < cap)
			break;
		cap *= 2;
		buf = mp_realloc(buf, cap);
	}
	int err = ferror(f) ? errno : 0;
	fclose(f);
	if (err) {
		mp_free(buf);
		return mp_errf(e, MP_EUSER, "cannot read experiment file '%s': %s", path,
			       strerror(err));
	}
	int rc = parse_text(buf, len, path, doc, e);
	mp_free(buf);
	return rc;
}

/* ---- --set ------------------------------------------------------------- */

static void where(const struct cfg_doc *doc, const struct cfg_node *n, char *buf, size_t len)
{
	if (n->line == 0)
		snprintf(buf, len, "an earlier --set");
	else
		snprintf(buf, len, "%s:%d", doc_name(doc), n->line);
}

int cfg_apply_set(struct cfg_doc *doc, const char *assignment, struct mp_err *e)
{
	return cfg_apply_set_at(doc, assignment, 0, e);
}

/* The mapping that holds the last component of path (the key of
 * assignment, klen long), each component before it found or made a mapping;
 * *last points at that component in path. */
static int set_parent(struct cfg_doc *doc, char *path, const char *assignment, size_t klen,
		      struct cfg_node **map, char **last, struct mp_err *e)
{
	char at[600];
	char *comp = path;
	*map = doc->root;
	for (char *dot; (dot = strchr(comp, '.')) != NULL; comp = dot + 1) {
		*dot = '\0';
		struct cfg_node *kid = cfg_get(*map, comp);
		if (!kid) {
			kid = node_new(CFG_MAP, 0, 0);
			kid->key = mp_strdup(comp);
			node_append(*map, kid);
		} else if (kid->kind != CFG_MAP) {
			/* `path` now ends at this component */
			where(doc, kid, at, sizeof at);
			return mp_errf(e, MP_EUSER, "--set %.*s: '%s' is %s (at %s), not a mapping",
				       (int)klen, assignment, path, a_kind(kid->kind), at);
		}
		*dot = '.';
		*map = kid;
	}
	*last = comp;
	return MP_OK;
}

/* The node of key comp in map, made or emptied into a scalar of `line`;
 * a mapping there is an error (path names it). */
static int set_leaf(const struct cfg_doc *doc, struct cfg_node *map, const char *comp,
		    const char *path, int line, struct cfg_node **leaf, struct mp_err *e)
{
	char at[600];
	struct cfg_node *kid = cfg_get(map, comp);
	if (!kid) {
		kid = node_new(CFG_SCALAR, line, 0);
		kid->key = mp_strdup(comp);
		node_append(map, kid);
	} else if (kid->kind == CFG_MAP) {
		where(doc, kid, at, sizeof at);
		return mp_errf(e, MP_EUSER,
			       "--set %s: this is a mapping (at %s); set one of its keys "
			       "instead, e.g. %s.KEY=value",
			       path, at, path);
	} else {
		/* a scalar, or a sequence that one scalar replaces */
		for (size_t i = 0; i < kid->n; i++)
			node_free(kid->kids[i]);
		mp_free(kid->kids);
		mp_free(kid->value);
		/* a list value below sets kids, not value: value must not
		 * keep the freed text (cfg_free would free it again) */
		kid->value = NULL;
		kid->kids = NULL;
		kid->n = 0;
		kid->kind = CFG_SCALAR;
		kid->line = line;
		kid->col = 0;
	}
	*leaf = kid;
	return MP_OK;
}

/* The value v into the emptied scalar kid: text, or a flow sequence
 * (--set failures.links=[leaf0-spine1,leaf1-spine0]) of trimmed items. */
static void set_value(struct cfg_node *kid, const char *v, int line)
{
	size_t vl = strlen(v);
	if (!(vl >= 2 && v[0] == '[' && v[vl - 1] == ']')) {
		kid->value = mp_strdup(v);
		return;
	}
	kid->kind = CFG_SEQ;
	const char *p = v + 1, *end = v + vl - 1;
	while (p < end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		const char *stop = c ? c : end;
		while (p < stop && *p == ' ')
			p++;
		const char *q = stop;
		while (q > p && q[-1] == ' ')
			q--;
		if (q > p) {
			struct cfg_node *it = node_new(CFG_SCALAR, line, 0);
			it->value = mp_malloc((size_t)(q - p) + 1);
			memcpy(it->value, p, (size_t)(q - p));
			it->value[q - p] = '\0';
			node_append(kid, it);
		}
		p = stop + 1;
	}
}

int cfg_apply_set_at(struct cfg_doc *doc, const char *assignment, int line, struct mp_err *e)
{
	const char *eq = strchr(assignment, '=');
	if (!eq)
		return mp_errf(e, MP_EUSER,
			       "--set '%s': expected key=value, e.g. --set topology.k=8",
			       assignment);
	if (eq == assignment)
		return mp_errf(e, MP_EUSER, "--set '%s': the key before '=' is empty", assignment);

	size_t klen = (size_t)(eq - assignment);
	char *path = mp_malloc(klen + 1), *last;
	memcpy(path, assignment, klen);
	path[klen] = '\0';
	int rc = MP_OK;
	struct cfg_node *map, *leaf;

	/* Every component must be non-empty: no "a..b", ".a", "a.". */
	if (path[0] == '.' || path[klen - 1] == '.' || strstr(path, "..")) {
		rc = mp_errf(e, MP_EUSER, "--set %s: empty key component", path);
	} else {
		if (!doc->root)
			doc->root = node_new(CFG_MAP, 0, 0);
		rc = set_parent(doc, path, assignment, klen, &map, &last, e);
		if (!rc)
			rc = set_leaf(doc, map, last, path, line, &leaf, e);
		if (!rc)
			set_value(leaf, eq + 1, line);
	}
	mp_free(path);
	return rc;
}

/* ---- applying a table -------------------------------------------------- */

/* Edit distance with adjacent transpositions (optimal string alignment). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return (size_t)-1;
	size_t d[65][65];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

/* A suggestion must be close: at most one edit per three letters of the
 * known key (and at most 3), so "size" is never offered for "type". */
static void consider(const char *key, const char *cand, const char **best, size_t *best_d)
{
	size_t dist = edit_distance(key, cand), len = strlen(cand);
	size_t limit = len / 3 < 1 ? 1 : len / 3 > 3 ? 3 : len / 3;
	if (dist <= limit && dist < len && dist < *best_d) {
		*best = cand;
		*best_d = dist;
	}
}

const char *cfg_suggest(const char *key, const char *const *known)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	for (const char *const *k = known; k && *k; k++)
		consider(key, *k, &best, &best_d);
	return best;
}

int cfg_errf_line(struct mp_err *e, const struct cfg_doc *doc, int line, const char *key,
		  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vloc_errf(e, doc, line, key, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

static int unknown_key(struct mp_err *e, const struct cfg_doc *doc, const struct cfg_node *kid,
		       const char *section, const struct opt_desc *table, const char *const *skip)
{
	char known[768];
	size_t len = 0;
	const char *best = NULL;
	size_t best_d = (size_t)-1;

	known[0] = '\0';
	for (const struct opt_desc *d = table; d->name; d++) {
		consider(kid->key, d->name, &best, &best_d);
		if (len < sizeof known)
			len += (size_t)snprintf(known + len, sizeof known - len, "%s%s",
						len ? ", " : "", d->name);
	}
	for (const char *const *s = skip; s && *s; s++) {
		consider(kid->key, *s, &best, &best_d);
		if (len < sizeof known)
			len += (size_t)snprintf(known + len, sizeof known - len, "%s%s",
						len ? ", " : "", *s);
	}
	if (best)
		return cfg_errf(e, doc, kid, section,
				"unknown key; did you mean '%s'? (known keys: %s)", best, known);
	return cfg_errf(e, doc, kid, section, "unknown key (known keys: %s)", known);
}

static bool in_list(const char *key, const char *const *list)
{
	for (const char *const *s = list; s && *s; s++)
		if (strcmp(*s, key) == 0)
			return true;
	return false;
}

static void list_clear(struct opt_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		mp_free(l->v[i]);
	mp_free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Parse one scalar node for `d` into `params`; messages name `key`. */
static int apply_scalar(const struct cfg_doc *doc, const struct cfg_node *nd, const char *section,
			const char *key, const struct opt_desc *d, void *params, struct mp_err *e)
{
	struct mp_err pe = { 0 };
	/* A value typed on the command line names a path relative to the
	 * current directory, one in a file relative to that file. */
	const char *base = nd->line == 0 ? NULL : doc ? doc->dir : NULL;
	if (opt_parse_scalar(d, params, nd->value, base, &pe) != MP_OK)
		return loc_errf(e, doc, nd->line, section, key, "%s", pe.msg);
	return MP_OK;
}

static int apply_one(const struct cfg_doc *doc, const struct cfg_node *kid, const char *section,
		     const struct opt_desc *d, void *params, struct mp_err *e)
{
	if (d->type != OPT_STRLIST) {
		if (kid->kind == CFG_SEQ)
			return cfg_errf(e, doc, kid, section,
					"expected a scalar value, got a sequence of %zu; this key "
					"takes one %s (to run each of several, list them under "
					"sweep:)",
					kid->n, opt_type_name(d->type));
		if (kid->kind != CFG_SCALAR)
			return cfg_errf(e, doc, kid, section, "expected a scalar value, got %s",
					a_kind(kid->kind));
		return apply_scalar(doc, kid, section, kid->key, d, params, e);
	}
	struct opt_strlist *l = (struct opt_strlist *)((char *)params + d->offset);
	list_clear(l);
	if (kid->kind == CFG_MAP)
		return cfg_errf(e, doc, kid, section,
				"expected a list of scalars (or one scalar), got a mapping");
	if (kid->kind == CFG_SCALAR)
		return kid->value[0] ? apply_scalar(doc, kid, section, kid->key, d, params, e)
				     : MP_OK;
	for (size_t i = 0; i < kid->n; i++) {
		const struct cfg_node *item = kid->kids[i];
		if (item->kind != CFG_SCALAR)
			return loc_errf(e, doc, item->line, section, kid->key,
					"expected a list of scalars, got %s as item %zu",
					a_kind(item->kind), i + 1);
		int rc = apply_scalar(doc, item, section, kid->key, d, params, e);
		if (rc != MP_OK)
			return rc;
	}
	return MP_OK;
}

int cfg_apply_table(const struct cfg_doc *doc, const struct cfg_node *map, const char *section,
		    const struct opt_desc *table, void *params, const char *const *skip,
		    struct mp_err *e)
{
	int rc = MP_OK;

	if (!section)
		section = "";
	if (map && map->kind != CFG_MAP)
		return loc_errf(e, doc, map->line, section, NULL,
				"expected a mapping of keys to values, got %s", a_kind(map->kind));

	size_t ext = opt_extent(table);
	void *tmp = mp_malloc(ext ? ext : 1);
	memcpy(tmp, params, ext);
	opt_copy(table, tmp, params);

	for (size_t i = 0; map && i < map->n && rc == MP_OK; i++) {
		const struct cfg_node *kid = map->kids[i];
		if (in_list(kid->key, skip))
			continue;
		const struct opt_desc *d = opt_find(table, kid->key);
		if (!d)
			rc = unknown_key(e, doc, kid, section, table, skip);
		else
			rc = apply_one(doc, kid, section, d, tmp, e);
	}
	for (const struct opt_desc *d = table; rc == MP_OK && d->name; d++) {
		if (d->def || cfg_get(map, d->name))
			continue;
		int line = map ? map->line : root_line(doc);
		rc = loc_errf(e, doc, line == 0 ? LINE_NONE : line, section, d->name,
			      "required key missing");
	}
	if (rc != MP_OK) {
		opt_free(table, tmp);
		mp_free(tmp);
		return rc;
	}
	opt_free(table, params);
	memcpy(params, tmp, ext);
	mp_free(tmp);
	return MP_OK;
}

/* sweep.c - the `sweep:` and `paper:` sections (see sweep.h). */
#include "io/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

static int key_errf(struct mp_err *e, const struct cfg_doc *doc, int line, const char *key,
		    const char *msg)
{
	return cfg_errf_line(e, doc, line, key, "%s", msg);
}

/* "section.key: unknown key; did you mean 'x'? (expected ...)" */
static int unknown_key(struct mp_err *e, const struct cfg_doc *doc, const struct cfg_node *kn,
		       const char *section, const char *const *known, const char *expected)
{
	char full[300], msg[300];
	snprintf(full, sizeof full, "%s.%s", section, kn->key);
	const char *sug = cfg_suggest(kn->key, known);
	snprintf(msg, sizeof msg, "unknown key%s%s%s (expected %s)", sug ? "; did you mean '" : "",
		 sug ? sug : "", sug ? "'?" : "", expected);
	return key_errf(e, doc, kn->line, full, msg);
}

/* sweep.<name>: {variant: {section: {...}, dotted.key: value, ...}, ...} */
static int parse_variants(struct sweep *sw, const struct cfg_doc *doc, const struct cfg_node *kn,
			  const char *full, struct mp_err *e)
{
	struct sweep_key *k = &sw->keys[sw->nkeys++];
	k->key = mp_strdup(kn->key);
	k->label = mp_strdup(kn->key);
	k->line = kn->line;
	k->variants = true;
	if (kn->n == 0)
		return key_errf(e, doc, kn->line, full,
				"expected at least one variant, e.g. {strack: {transport.lb: "
				"adaptive}}");
	k->values = mp_calloc(kn->n, sizeof *k->values);
	k->lines = mp_calloc(kn->n, sizeof *k->lines);
	for (size_t v = 0; v < kn->n; v++) {
		const struct cfg_node *vn = kn->kids[v];
		char vfull[600];
		snprintf(vfull, sizeof vfull, "%s.%s", full, vn->key);
		if (vn->key[0] == '-' || vn->key[0] == '\0')
			return key_errf(e, doc, vn->line, vfull,
					"expected a variant name that does not start with '-' "
					"(it names the point's folder, and a command would read "
					"it as an option)");
		if (vn->kind != CFG_MAP)
			return key_errf(
			    e, doc, vn->line, vfull,
			    "expected a mapping of sections ({transport: {...}}) and "
			    "dotted keys (transport.lb: adaptive); {} is the file as it "
			    "is");
		for (size_t i = 0; i < vn->n; i++) {
			const struct cfg_node *s = vn->kids[i];
			char sfull[900];
			snprintf(sfull, sizeof sfull, "%s.%s", vfull, s->key);
			bool dotted = strchr(s->key, '.') != NULL;
			if (!strcmp(s->key, "sweep") || !strcmp(s->key, "paper") ||
			    !strncmp(s->key, "sweep.", 6) || !strncmp(s->key, "paper.", 6))
				return key_errf(e, doc, s->line, sfull,
						"a sweep cannot change itself");
			if (dotted ? s->kind != CFG_SCALAR : s->kind == CFG_SCALAR)
				return key_errf(e, doc, s->line, sfull,
						dotted
						    ? "expected one value for a dotted key"
						    : "expected the whole section for this "
						      "variant (a mapping, or a list for events)");
		}
		k->values[k->nvalues] = mp_strdup(vn->key);
		k->lines[k->nvalues++] = vn->line;
	}
	return MP_OK;
}

/* sweep.<dotted.key>: [values] */
static int parse_values(struct sweep *sw, const struct cfg_doc *doc, const struct cfg_node *kn,
			const char *full, char *const *sets, size_t nsets, struct mp_err *e)
{
	const char *dot = strchr(kn->key, '.');
	if (!dot || kn->key[0] == '.' || kn->key[strlen(kn->key) - 1] == '.' ||
	    strstr(kn->key, ".."))
		return key_errf(e, doc, kn->line, full,
				"expected a dotted key such as workload.size (section.key), or a "
				"name such as 'system' mapping variant names to settings");
	if (!strncmp(kn->key, "sweep.", 6) || !strncmp(kn->key, "paper.", 6))
		return key_errf(e, doc, kn->line, full, "a sweep cannot change itself");
	for (size_t s = 0; s < nsets; s++) {
		size_t kl = strlen(kn->key);
		if (!strncmp(sets[s], kn->key, kl) && (sets[s][kl] == '=' || sets[s][kl] == '.')) {
			char msg[400];
			snprintf(msg, sizeof msg,
				 "this key is swept, so --set %s cannot also set it; "
				 "change the sweep's list instead",
				 sets[s]);
			return key_errf(e, doc, kn->line, full, msg);
		}
	}
	struct sweep_key *k = &sw->keys[sw->nkeys++];
	k->key = mp_strdup(kn->key);
	k->label = mp_strdup(strrchr(kn->key, '.') + 1);
	k->line = kn->line;
	size_t nv = kn->kind == CFG_SEQ ? kn->n : 1;
	if (kn->kind == CFG_MAP || nv == 0)
		return key_errf(e, doc, kn->line, full,
				"expected a non-empty list of values, e.g. [1, 4]");
	k->values = mp_calloc(nv, sizeof *k->values);
	k->lines = mp_calloc(nv, sizeof *k->lines);
	for (size_t v = 0; v < nv; v++) {
		const struct cfg_node *vn = kn->kind == CFG_SEQ ? kn->kids[v] : kn;
		if (vn->kind != CFG_SCALAR)
			return key_errf(e, doc, vn->line, full,
					"expected scalar values (one per point)");
		for (size_t u = 0; u < k->nvalues; u++)
			if (!strcmp(k->values[u], vn->value))
				return key_errf(e, doc, vn->line, full,
						"this value is listed twice");
		k->values[k->nvalues] = mp_strdup(vn->value);
		k->lines[k->nvalues++] = vn->line;
	}
	return MP_OK;
}

static int parse_sweep(struct sweep *sw, const struct cfg_doc *doc, const struct cfg_node *n,
		       char *const *sets, size_t nsets, struct mp_err *e)
{
	if (n->kind != CFG_MAP)
		return key_errf(e, doc, n->line, "sweep",
				"expected a mapping of dotted keys to lists of values, e.g. "
				"{workload.size: [2MB, 16MB]}");
	sw->keys = mp_calloc(n->n ? n->n : 1, sizeof *sw->keys);
	for (size_t i = 0; i < n->n; i++) {
		const struct cfg_node *kn = n->kids[i];
		char full[300];
		snprintf(full, sizeof full, "sweep.%s", kn->key);
		int rc = kn->kind == CFG_MAP && !strchr(kn->key, '.')
			     ? parse_variants(sw, doc, kn, full, e)
			     : parse_values(sw, doc, kn, full, sets, nsets, e);
		if (rc)
			return rc;
		struct sweep_key *k = &sw->keys[sw->nkeys - 1];
		for (size_t j = 0; j + 1 < sw->nkeys; j++) {
			if (!strcmp(sw->keys[j].key, k->key))
				return key_errf(e, doc, kn->line, full, "this key is swept twice");
			if (!strcmp(sw->keys[j].label, k->label)) {
				/* two keys ending alike: label them in full */
				mp_free(k->label);
				k->label = mp_strdup(k->key);
			}
		}
		if (sw->npoints > 100000 / k->nvalues)
			return key_errf(e, doc, kn->line, full,
					"expected at most 100000 points in a sweep");
		sw->npoints *= k->nvalues;
	}
	return MP_OK;
}

/* {swept key: one of its values, ...} as key and value indices */
static int parse_sel(const struct sweep *sw, const struct cfg_doc *doc, const struct cfg_node *w,
		     const char *what, size_t *n, size_t **keys, size_t **vals, struct mp_err *e)
{
	if (w->kind != CFG_MAP)
		return key_errf(e, doc, w->line, what,
				"expected a mapping of swept keys to one of their values");
	*keys = mp_calloc(w->n ? w->n : 1, sizeof **keys);
	*vals = mp_calloc(w->n ? w->n : 1, sizeof **vals);
	for (size_t i = 0; i < w->n; i++) {
		const struct cfg_node *kn = w->kids[i];
		char full[300];
		snprintf(full, sizeof full, "%s.%s", what, kn->key);
		size_t k = 0;
		while (k < sw->nkeys && strcmp(sw->keys[k].key, kn->key))
			k++;
		if (k == sw->nkeys)
			return key_errf(e, doc, kn->line, full,
					"expected a key of the sweep section");
		if (kn->kind != CFG_SCALAR)
			return key_errf(e, doc, kn->line, full, "expected one swept value");
		size_t vi = 0;
		while (vi < sw->keys[k].nvalues && strcmp(sw->keys[k].values[vi], kn->value))
			vi++;
		if (vi == sw->keys[k].nvalues) {
			char msg[300];
			snprintf(msg, sizeof msg,
				 "'%s' is not among the swept values of %s (spell it as the sweep "
				 "does)",
				 kn->value, kn->key);
			return key_errf(e, doc, kn->line, full, msg);
		}
		(*keys)[*n] = k;
		(*vals)[(*n)++] = vi;
	}
	return MP_OK;
}

static int parse_entry(struct sweep *sw, const struct cfg_doc *doc, const struct cfg_node *en,
		       struct paper_entry *pe, struct mp_err *e)
{
	static const char *const known[] = { "metric", "value", "when", "ratio_of", "note", NULL };
	if (en->kind != CFG_MAP)
		return key_errf(e, doc, en->line, "paper.values",
				"expected a mapping {metric: ..., value: ..., when: {...}, note: "
				"...} per entry");
	pe->line = en->line;
	pe->note = mp_strdup("");
	for (size_t i = 0; i < en->n; i++) {
		const struct cfg_node *kn = en->kids[i];
		char full[300];
		snprintf(full, sizeof full, "paper.values.%s", kn->key);
		bool ok = false;
		for (const char *const *k = known; *k; k++)
			ok |= !strcmp(*k, kn->key);
		if (!ok)
			return unknown_key(e, doc, kn, "paper.values", known,
					   "metric, value, when, ratio_of, note");
		if (strcmp(kn->key, "when") && strcmp(kn->key, "ratio_of") &&
		    kn->kind != CFG_SCALAR)
			return key_errf(e, doc, kn->line, full, "expected a scalar");
	}
	const struct cfg_node *m = cfg_get(en, "metric"), *v = cfg_get(en, "value"),
			      *w = cfg_get(en, "when"), *nt = cfg_get(en, "note"),
			      *r = cfg_get(en, "ratio_of");
	if (!m || !v)
		return key_errf(e, doc, en->line, "paper.values",
				"each entry needs metric and value");
	pe->metric = metric_find(m->value);
	if (pe->metric < 0) {
		char msg[1200] = "unknown metric; expected one of";
		for (int i = 0; i < M_N; i++) {
			size_t l = strlen(msg);
			snprintf(msg + l, sizeof msg - l, "%s %s", i ? "," : "",
				 metric_defs[i].name);
		}
		return key_errf(e, doc, m->line, "paper.values.metric", msg);
	}
	char *end = NULL;
	if (r) { /* a ratio: a plain number */
		pe->value = strtod(v->value, &end);
		if (end == v->value || *end || !(pe->value > 0)) {
			char msg[300];
			snprintf(msg, sizeof msg,
				 "expected a positive number (a ratio, as 6.3 for \"6.3x\"), got "
				 "'%s'",
				 v->value);
			return key_errf(e, doc, v->line, "paper.values.value", msg);
		}
	} else if (metric_parse(pe->metric, v->value, &pe->value)) {
		static const char *const what[] = { [MK_TIME] = "a time such as 7.8ms",
						    [MK_BYTES] = "a size such as 2MB",
						    [MK_RATE] = "a rate such as 95Gbps",
						    [MK_COUNT] = "a number",
						    [MK_RATIO] = "a number" };
		char msg[200];
		snprintf(msg, sizeof msg, "expected %s for metric %s, got '%s'",
			 what[metric_defs[pe->metric].kind], m->value, v->value);
		return key_errf(e, doc, v->line, "paper.values.value", msg);
	}
	pe->text = mp_strdup(v->value);
	if (nt) {
		mp_free(pe->note);
		pe->note = mp_strdup(nt->value);
	}
	if (w && parse_sel(sw, doc, w, "paper.values.when", &pe->nwhen, &pe->when_key,
			   &pe->when_value, e))
		return e->status;
	if (r && parse_sel(sw, doc, r, "paper.values.ratio_of", &pe->nratio, &pe->ratio_key,
			   &pe->ratio_value, e))
		return e->status;
	if (r && !pe->nratio)
		return key_errf(e, doc, r->line, "paper.values.ratio_of",
				"expected at least one swept key whose value differs");
	/* every key ratio_of changes, `when` pins to that same value: the
	 * point compared with itself (a ratio of 1 whatever the run) */
	size_t same = 0;
	for (size_t j = 0; j < pe->nratio; j++)
		for (size_t q = 0; q < pe->nwhen; q++)
			same += pe->when_key[q] == pe->ratio_key[j] &&
				pe->when_value[q] == pe->ratio_value[j];
	if (r && same == pe->nratio)
		return key_errf(e, doc, r->line, "paper.values.ratio_of",
				"names the point that when selects, so the entry would divide "
				"a point's metric by itself: expected at least one swept key "
				"whose value differs from when's");
	return MP_OK;
}

static int parse_paper(struct sweep *sw, const struct cfg_doc *doc, const struct cfg_node *n,
		       struct mp_err *e)
{
	static const char *const known[] = { "source", "values", NULL };
	if (n->kind != CFG_MAP)
		return key_errf(e, doc, n->line, "paper",
				"expected a mapping {source: ..., values: [...]}");
	for (size_t i = 0; i < n->n; i++) {
		bool ok = !strcmp(n->kids[i]->key, "source") || !strcmp(n->kids[i]->key, "values");
		if (!ok)
			return unknown_key(e, doc, n->kids[i], "paper", known, "source, values");
	}
	const struct cfg_node *src = cfg_get(n, "source"), *vals = cfg_get(n, "values");
	if (!src || src->kind != CFG_SCALAR || !*src->value)
		return key_errf(e, doc, src ? src->line : n->line, "paper.source",
				"expected the paper, figure and setting the numbers come from");
	sw->source = mp_strdup(src->value);
	if (!vals || vals->kind != CFG_SEQ || vals->n == 0)
		return key_errf(e, doc, vals ? vals->line : n->line, "paper.values",
				"expected a non-empty list of {metric, value, when, note}");
	sw->entries = mp_calloc(vals->n, sizeof *sw->entries);
	for (size_t i = 0; i < vals->n; i++) {
		sw->nentries++; /* counted first, so sweep_free frees a half-read entry */
		if (parse_entry(sw, doc, vals->kids[i], &sw->entries[i], e))
			return e->status;
	}
	return MP_OK;
}

int sweep_parse(struct sweep *sw, const struct cfg_doc *doc, char *const *sets, size_t nsets,
		struct mp_err *e)
{
	memset(sw, 0, sizeof *sw);
	sw->npoints = 1;
	/* both sections are read here, from the file, before any --set: a --set
	 * into them would change nothing, so it is refused rather than ignored */
	for (size_t i = 0; i < nsets; i++) {
		size_t kl = strcspn(sets[i], "=.");
		if (kl == 5 && (!strncmp(sets[i], "sweep", 5) || !strncmp(sets[i], "paper", 5)))
			return mp_errf(e, MP_EUSER,
				       "--set %.*s: the sweep and the paper's numbers are read "
				       "from the file only; edit the file (a --set of an option, "
				       "e.g. --set switch.buffer=256MB, reaches every point, "
				       "variants included)",
				       (int)strcspn(sets[i], "="), sets[i]);
	}
	const struct cfg_node *s = cfg_get(doc->root, "sweep"), *p = cfg_get(doc->root, "paper");
	if (s && parse_sweep(sw, doc, s, sets, nsets, e))
		return e->status;
	if (p && parse_paper(sw, doc, p, e))
		return e->status;
	return MP_OK;
}

void sweep_free(struct sweep *sw)
{
	for (size_t i = 0; i < sw->nkeys; i++) {
		struct sweep_key *k = &sw->keys[i];
		for (size_t v = 0; v < k->nvalues; v++)
			mp_free(k->values[v]);
		mp_free(k->values);
		mp_free(k->lines);
		mp_free(k->key);
		mp_free(k->label);
	}
	mp_free(sw->keys);
	for (size_t i = 0; i < sw->nentries; i++) {
		mp_free(sw->entries[i].text);
		mp_free(sw->entries[i].note);
		mp_free(sw->entries[i].when_key);
		mp_free(sw->entries[i].when_value);
		mp_free(sw->entries[i].ratio_key);
		mp_free(sw->entries[i].ratio_value);
	}
	mp_free(sw->entries);
	mp_free(sw->source);
	memset(sw, 0, sizeof *sw);
}

size_t sweep_value_at(const struct sweep *sw, size_t point, size_t k)
{
	for (size_t j = sw->nkeys; j-- > k + 1;)
		point /= sw->keys[j].nvalues;
	return point % sw->keys[k].nvalues;
}

size_t sweep_point_with(const struct sweep *sw, size_t point, size_t k, size_t v)
{
	size_t stride = 1;
	for (size_t j = sw->nkeys; j-- > k + 1;)
		stride *= sw->keys[j].nvalues;
	return point - sweep_value_at(sw, point, k) * stride + v * stride;
}

int sweep_apply_variants(const struct sweep *sw, size_t point, struct cfg_doc *doc,
			 struct mp_err *e)
{
	for (size_t k = 0; k < sw->nkeys; k++) {
		if (!sw->keys[k].variants)
			continue;
		const char *name = sw->keys[k].values[sweep_value_at(sw, point, k)];
		struct cfg_node *vn =
		    cfg_get(cfg_get(cfg_get(doc->root, "sweep"), sw->keys[k].key), name);
		if (!vn) /* the file changed since the sweep was read */
			return mp_errf(e, MP_EUSER, "%s: sweep.%s.%s: not found", doc->path,
				       sw->keys[k].key, name);
		for (size_t i = 0; i < vn->n;) {
			struct cfg_node *s = vn->kids[i];
			if (s->kind != CFG_SCALAR) { /* a whole section, moved into the file */
				cfg_put(doc->root, cfg_take(vn, i));
				continue;
			}
			size_t n = strlen(s->key) + strlen(s->value) + 2;
			char *a = mp_malloc(n);
			snprintf(a, n, "%s=%s", s->key, s->value);
			int rc = cfg_apply_set_at(doc, a, s->line, e);
			mp_free(a);
			if (rc)
				return rc;
			i++;
		}
	}
	return MP_OK;
}

int sweep_apply(const struct sweep *sw, size_t point, struct cfg_doc *doc, struct mp_err *e)
{
	for (size_t k = 0; k < sw->nkeys; k++) {
		if (sw->keys[k].variants)
			continue;
		size_t v = sweep_value_at(sw, point, k);
		size_t n = strlen(sw->keys[k].key) + strlen(sw->keys[k].values[v]) + 2;
		char *a = mp_malloc(n);
		snprintf(a, n, "%s=%s", sw->keys[k].key, sw->keys[k].values[v]);
		int rc = cfg_apply_set_at(doc, a, sw->keys[k].lines[v], e);
		mp_free(a);
		if (rc)
			return rc;
	}
	return MP_OK;
}

void sweep_point_name(const struct sweep *sw, size_t point, char *buf, size_t n)
{
	if (!sw->nkeys) {
		snprintf(buf, n, "run");
		return;
	}
	size_t l = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < sw->nkeys && l < n; k++) {
		const char *v = sw->keys[k].values[sweep_value_at(sw, point, k)];
		if (k && l + 1 < n)
			buf[l++] = '_';
		/* a variant key is any word the file chose: as shell-friendly as the
		 * values (no '/' that would make the folder a path) */
		for (const char *c = sw->keys[k].label; *c && l + 1 < n; c++)
			buf[l++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
						  (*c >= '0' && *c <= '9') || *c == '.' ||
						  *c == '-' || *c == '_'
					      ? *c
					      : '+');
		if (l + 1 < n)
			buf[l++] = '-';
		for (const char *c = v; *c && l + 1 < n; c++) /* keep names shell-friendly */
			buf[l++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
						  (*c >= '0' && *c <= '9') || *c == '.' || *c == '-'
					      ? *c
					      : '+');
		buf[l < n ? l : n - 1] = '\0';
	}
}

bool sweep_entry_applies(const struct sweep *sw, size_t i, size_t point)
{
	const struct paper_entry *pe = &sw->entries[i];
	for (size_t w = 0; w < pe->nwhen; w++)
		if (sweep_value_at(sw, point, pe->when_key[w]) != pe->when_value[w])
			return false;
	return true;
}

/* ---- point folders: unique and short enough ---------------------------------------- */

struct named_point {
	char *name;
	size_t p;
};

static int cmp_named(const void *a, const void *b)
{
	const struct named_point *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->p > y->p) - (x->p < y->p);
}

/* The first key whose value differs between points p and q. */
size_t sweep_key_between(const struct sweep *sw, size_t p, size_t q)
{
	for (size_t k = 0; k < sw->nkeys; k++)
		if (sweep_value_at(sw, p, k) != sweep_value_at(sw, q, k))
			return k;
	return 0;
}

int sweep_check_names(const struct sweep *sw, const char *path, struct mp_err *e)
{
	if (!sw->nkeys)
		return MP_OK;
	struct named_point *v = mp_calloc(sw->npoints, sizeof *v);
	char buf[SWEEP_NAME_MAX + 2];
	int rc = MP_OK;
	for (size_t p = 0; p < sw->npoints && !rc; p++) {
		sweep_point_name(sw, p, buf, sizeof buf);
		if (strlen(buf) > SWEEP_NAME_MAX) {
			const struct sweep_key *k = &sw->keys[sw->nkeys - 1];
			rc = mp_errf(e, MP_EUSER,
				     "%s:%d: sweep: point folder names such as '%.60s...' are "
				     "longer than %d characters (a file system takes 255 with "
				     "mpsim's temporary suffix); shorten the swept values or the "
				     "variant names",
				     path, k->line, buf, SWEEP_NAME_MAX);
		}
		v[p] = (struct named_point){ mp_strdup(buf), p };
	}
	if (!rc)
		qsort(v, sw->npoints, sizeof *v, cmp_named);
	for (size_t i = 1; i < sw->npoints && !rc; i++) {
		if (strcmp(v[i - 1].name, v[i].name))
			continue;
		size_t p = v[i - 1].p, q = v[i].p, k = sweep_key_between(sw, p, q);
		const struct sweep_key *sk = &sw->keys[k];
		size_t a = sweep_value_at(sw, p, k), b = sweep_value_at(sw, q, k);
		rc = mp_errf(e, MP_EUSER,
			     "%s:%d: sweep.%s: %s '%s' and '%s' give both points the folder "
			     "name '%s' (folder names keep A-Z a-z 0-9 . - and turn anything "
			     "else into +); rename one",
			     path, sk->lines[b], sk->key, sk->variants ? "variants" : "values",
			     sk->values[a], sk->values[b], v[i].name);
	}
	for (size_t p = 0; p < sw->npoints; p++)
		mp_free(v[p].name);
	mp_free(v);
	return rc;
}

/* workload.c - the workload registry, the flow list, and helpers shared by the
 * generators (host counts, reading and splitting text files).
 *
 * Owns: workload_registry[] (the one list of generators; adding a workload is
 * one file and one line here) and struct flow_list storage.
 * Invariants: a flow list holds flows with src != dst and bytes > 0, and each
 * flow's id is its index in the list.
 */
#include "workload/workload.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"

extern const struct workload_ops permutation_workload_ops, incast_workload_ops,
    all_to_all_workload_ops, flows_file_workload_ops, htsim_cm_workload_ops, poisson_workload_ops,
    dag_file_workload_ops, chakra_workload_ops, simai_workload_ops;

/* The generators, in `mpsim list`'s order. */
const struct workload_ops *const workload_registry[] = {
	&permutation_workload_ops, &incast_workload_ops,
	&all_to_all_workload_ops,  &flows_file_workload_ops,
	&htsim_cm_workload_ops,	   &poisson_workload_ops,
	&dag_file_workload_ops,	   &chakra_workload_ops,
	&simai_workload_ops,	   NULL,
};

const struct workload_ops *workload_find(const char *name)
{
	for (const struct workload_ops *const *o = workload_registry; *o; o++)
		if (strcmp((*o)->name, name) == 0)
			return *o;
	return NULL;
}

static void flow_list_append(struct flow_list *l, uint32_t src, uint32_t dst, uint64_t bytes,
			     simtime_t start)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		l->v = mp_realloc(l->v, cap * sizeof(*l->v));
		l->cap = cap;
	}
	MP_ASSERT(l->n < UINT32_MAX);
	struct flow_spec *f = &l->v[l->n];

	memset(f, 0, sizeof(*f)); /* padding too: lists compare and hash bytewise */
	f->id = (uint32_t)l->n;
	f->src = src;
	f->dst = dst;
	f->bytes = bytes;
	f->start = start;
	l->n++;
}

void flow_list_push(struct flow_list *l, uint32_t src, uint32_t dst, uint64_t bytes,
		    simtime_t start)
{
	MP_ASSERT(src != dst);
	MP_ASSERT(bytes > 0);
	if ((l->max_n && l->n >= l->max_n) || (l->max_ids && l->n + 1 >= l->max_ids)) {
		l->over++; /* refused after generation: see struct flow_list */
		return;
	}
	flow_list_append(l, src, dst, bytes, start);
}

int flow_list_reserve(const struct flow_list *l, uint64_t count, const char *key, struct mp_err *e)
{
	double need = ((double)l->n + (double)count) * (double)l->flow_bytes;
	if (!l->mem_limit || need <= (double)l->mem_limit) {
		if (l->max_ids && (double)l->n + (double)count >= (double)l->max_ids)
			return mp_errf(e, MP_EUSER,
				       "%s: %llu flows (messages): mpsim's message ids hold fewer "
				       "than %zu",
				       key, (unsigned long long)count, l->max_ids);
		return MP_OK;
	}
	return mp_errf(e, MP_EUSER,
		       "%s: %llu flows need about %.1f GB of memory (about %llu bytes each); "
		       "%.1f GB fit (the machine's memory or MPSIM_MEM_LIMIT): expected fewer "
		       "flows",
		       key, (unsigned long long)count, need / 1e9,
		       (unsigned long long)l->flow_bytes, (double)l->mem_limit / 1e9);
}

void flow_list_marker(struct flow_list *l, simtime_t start)
{
	flow_list_append(l, 0, 0, 0, start);
}

const char *const wl_phase_names[] = { "forward", "input_grad", "weight_grad", "node", NULL };

uint32_t flow_list_marker_after(struct flow_list *l, const uint32_t *deps, size_t nd, simtime_t t)
{
	flow_list_marker(l, nd ? 0 : t);
	struct flow_spec *f = &l->v[l->n - 1];
	f->delay = nd ? t : 0;
	for (size_t k = 0; k < nd; k++)
		flow_list_dep(l, deps[k]);
	return f->id;
}

void flow_list_act(struct flow_list *l, const struct wl_act *a)
{
	if (l->nacts == l->acts_cap) {
		l->acts_cap = l->acts_cap ? 2 * l->acts_cap : 64;
		l->acts = mp_realloc(l->acts, l->acts_cap * sizeof *l->acts);
	}
	l->acts[l->nacts++] = *a;
}

uint32_t flow_list_name(struct flow_list *l, const char *name)
{
	if (!l->nnames) {
		l->names_cap = 16;
		l->names = mp_malloc(l->names_cap * sizeof *l->names);
		l->names[l->nnames++] = mp_strdup("");
	}
	/* names repeat in runs (a layer's phases, a group's collectives): the
	 * last few are searched, anything older is added again (a duplicate
	 * costs a string, never a wrong name) */
	for (size_t k = 0; k < 8 && k < l->nnames; k++)
		if (!strcmp(l->names[l->nnames - 1 - k], name))
			return (uint32_t)(l->nnames - 1 - k);
	if (l->nnames == l->names_cap) {
		l->names_cap *= 2;
		l->names = mp_realloc(l->names, l->names_cap * sizeof *l->names);
	}
	l->names[l->nnames] = mp_strdup(name);
	return (uint32_t)l->nnames++;
}

void flow_list_dep(struct flow_list *l, uint32_t dep)
{
	if (l->over) /* the list will be refused: its last flow is not the dependant */
		return;
	MP_ASSERT(l->n > 0);
	struct flow_spec *f = &l->v[l->n - 1];
	if (f->ndeps == 0)
		f->dep0 = (uint32_t)l->ndeps;
	MP_ASSERT(f->dep0 + f->ndeps == l->ndeps); /* a flow's deps are contiguous */
	if (l->ndeps == l->deps_cap) {
		l->deps_cap = l->deps_cap ? 2 * l->deps_cap : 64;
		l->deps = mp_realloc(l->deps, l->deps_cap * sizeof *l->deps);
	}
	MP_ASSERT(l->ndeps < UINT32_MAX);
	l->deps[l->ndeps++] = dep;
	f->ndeps++;
}

/* Kahn's algorithm over the edges dep -> flow, on a list whose dependencies
 * name existing flows: returns how many flows it could not order (0 = no
 * cycle); those keep indeg[i] > 0, and each of them waits for another of them. */
static size_t dag_kahn(const struct flow_list *l, uint32_t *indeg)
{
	size_t n = l->n, top = 0, seen = 0;
	uint32_t *off = mp_calloc(n + 2, sizeof *off),
		 *adj = mp_malloc((l->ndeps + 1) * sizeof *adj),
		 *stack = mp_malloc((n + 1) * sizeof *stack);

	memset(indeg, 0, n * sizeof *indeg);
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < l->v[i].ndeps; k++) {
			indeg[i]++;
			off[FLOW_DEP_ID(l->deps[l->v[i].dep0 + k]) + 2]++;
		}
	for (size_t i = 0; i < n; i++)
		off[i + 2] += off[i + 1];
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < l->v[i].ndeps; k++)
			adj[off[FLOW_DEP_ID(l->deps[l->v[i].dep0 + k]) + 1]++] = (uint32_t)i;
	for (size_t i = 0; i < n; i++)
		if (!indeg[i])
			stack[top++] = (uint32_t)i;
	while (top) {
		uint32_t v = stack[--top];
		seen++;
		for (uint32_t k = off[v]; k < off[v + 1]; k++)
			if (--indeg[adj[k]] == 0)
				stack[top++] = adj[k];
	}
	mp_free(off);
	mp_free(adj);
	mp_free(stack);
	return n - seen;
}

/* A dependency of flow v that Kahn's algorithm left over (there is one). */
static uint32_t dag_left_dep(const struct flow_list *l, const uint32_t *indeg, uint32_t v)
{
	const struct flow_spec *f = &l->v[v];

	for (uint32_t k = 0; k < f->ndeps; k++)
		if (indeg[FLOW_DEP_ID(l->deps[f->dep0 + k])])
			return FLOW_DEP_ID(l->deps[f->dep0 + k]);
	MP_PANIC("flow %u is left over by Kahn's algorithm without a left-over dependency", v);
}

size_t flow_list_cycle(const struct flow_list *l, uint32_t **cycle)
{
	size_t n = l->n, len = 0, low = 0, first;
	uint32_t *indeg = mp_malloc((n + 1) * sizeof *indeg), *step, *path, v = 0;

	*cycle = NULL;
	if (!dag_kahn(l, indeg)) {
		mp_free(indeg);
		return 0;
	}
	/* Walk from a left-over flow to a left-over dependency until a flow
	 * repeats: the walk from its first visit is a cycle. step[v] = 1 + v's
	 * place on the walk (0 = not visited). */
	step = mp_calloc(n + 1, sizeof *step);
	path = mp_malloc((n + 1) * sizeof *path);
	while (!indeg[v])
		v++;
	while (!step[v]) {
		path[len++] = v;
		step[v] = (uint32_t)len;
		v = dag_left_dep(l, indeg, v);
	}
	first = step[v] - 1;
	len -= first;
	for (size_t i = 1; i < len; i++)
		if (path[first + i] < path[first + low])
			low = i;
	*cycle = mp_malloc(len * sizeof **cycle);
	for (size_t i = 0; i < len; i++)
		(*cycle)[i] = path[first + (low + i) % len];
	mp_free(path);
	mp_free(step);
	mp_free(indeg);
	return len;
}

int flow_list_check_dag(const struct flow_list *l, struct mp_err *e)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct flow_spec *f = &l->v[i];
		if (f->need > f->ndeps)
			return mp_errf(e, MP_EUSER,
				       "message %zu waits for %u of its %u dependencies", i,
				       f->need, f->ndeps);
		for (uint32_t k = 0; k < f->ndeps; k++) {
			uint32_t d = FLOW_DEP_ID(l->deps[f->dep0 + k]);
			if (d >= l->n || d == i)
				return mp_errf(
				    e, MP_EUSER, "message %zu waits for %s %u", i,
				    d == i ? "itself," : "a message that does not exist:", d);
		}
	}
	uint32_t *cycle;
	size_t len = flow_list_cycle(l, &cycle);
	if (!len)
		return MP_OK;
	mp_errf(e, MP_EUSER, "the dependencies form a cycle of %zu messages (message %u is on it)",
		len, cycle[0]);
	mp_free(cycle);
	return MP_EUSER;
}

void flow_list_free(struct flow_list *l)
{
	for (size_t i = 0; i < l->nnames; i++)
		mp_free(l->names[i]);
	mp_free(l->names);
	l->names = NULL;
	l->nnames = l->names_cap = 0;
	mp_free(l->acts);
	l->acts = NULL;
	l->nacts = l->acts_cap = 0;
	mp_free(l->deps);
	l->deps = NULL;
	l->ndeps = l->deps_cap = 0;
	mp_free(l->v);
	l->v = NULL;
	l->n = 0;
	l->cap = 0;
}

int workload_host_count(uint64_t hosts, uint32_t min, const struct wl_env *env, uint32_t *n,
			struct mp_err *e)
{
	if (hosts > env->nhosts)
		return mp_errf(e, MP_EUSER,
			       "hosts: expected at most %u (the fabric's hosts), got %llu",
			       env->nhosts, (unsigned long long)hosts);
	*n = hosts ? (uint32_t)hosts : env->nhosts;
	if (*n < min)
		return mp_errf(e, MP_EUSER, "hosts: expected at least %u hosts, got %u", min, *n);
	return MP_OK;
}

static FILE *open_path(const char *path, const char *base_dir, int *err)
{
	FILE *f = fopen(path, "rb");

	*err = f ? 0 : errno;
	if (!f && path[0] != '/' && base_dir && base_dir[0]) {
		size_t n = strlen(base_dir) + strlen(path) + 2;
		char *full = mp_malloc(n);

		snprintf(full, n, "%s/%s", base_dir, path);
		f = fopen(full, "rb");
		mp_free(full);
	}
	return f;
}

int workload_read_file(const char *path, const char *base_dir, char **text, size_t *len,
		       struct mp_err *e)
{
	int err;
	FILE *f;
	char *buf;
	size_t n = 0, cap = 4096;

	if (!path || !path[0])
		return mp_errf(e, MP_EUSER, "expected a file name");
	f = open_path(path, base_dir, &err);
	if (!f)
		return mp_errf(e, MP_EUSER, "%s: cannot read: %s", path, strerror(err));
	buf = mp_malloc(cap);
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);

		n += got;
		if (n + 1 < cap)
			break;
		cap *= 2;
		buf = mp_realloc(buf, cap);
	}
	if (ferror(f)) {
		err = errno;
		fclose(f);
		mp_free(buf);
		return mp_errf(e, MP_EUSER, "%s: cannot read: %s", path, strerror(err));
	}
	fclose(f);
	buf[n] = '\0';
	if (n >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) {
		/* a UTF-8 byte-order mark (some editors save one): not part of
		 * the first line, as the YAML reader already agrees */
		memmove(buf, buf + 3, n - 3 + 1);
		n -= 3;
	}
	if (memchr(buf, '\0', n)) {
		mp_free(buf);
		return mp_errf(e, MP_EUSER, "%s: expected a text file (found a NUL byte)", path);
	}
	*text = buf;
	*len = n;
	return MP_OK;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

char *workload_next_line(char **cursor)
{
	char *s = *cursor, *nl, *end;

	if (!s)
		return NULL;
	nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		*cursor = nl + 1;
	} else {
		if (!*s) {
			*cursor = NULL;
			return NULL;
		}
		*cursor = NULL;
	}
	while (is_blank(*s))
		s++;
	end = s + strlen(s);
	while (end > s && is_blank(end[-1]))
		*--end = '\0';
	return s;
}

char *workload_next_token(char **cursor)
{
	char *s = *cursor, *t;

	while (*s && is_blank(*s))
		s++;
	if (!*s) {
		*cursor = s;
		return NULL;
	}
	t = s;
	while (*s && !is_blank(*s))
		s++;
	if (*s)
		*s++ = '\0';
	*cursor = s;
	return t;
}

int workload_parse_uint(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		uint64_t d;

		if (*s < '0' || *s > '9')
			return -1;
		d = (uint64_t)(*s - '0');
		if (d > max || x > (max - d) / 10)
			return -1;
		x = 10 * x + d;
	}
	*v = x;
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

int workload_split(char *line, char sep, char **f, int max)
{
	int n = 0;

	for (;;) {
		char *at = strchr(line, sep);

		if (n == max)
			return max + 1;
		if (at)
			*at = '\0';
		f[n++] = trim(line);
		if (!at)
			return n;
		line = at + 1;
	}
}

int workload_field_host(const char *where, const char *key, const char *s, uint32_t nhosts,
			uint32_t *h, struct mp_err *e)
{
	uint64_t v;

	if (workload_parse_uint(s, UINT32_MAX, &v))
		return mp_errf(e, MP_EUSER,
			       "%s: %s: expected a host index (an unsigned integer), found '%s'",
			       where, key, s);
	if (v >= nhosts)
		return mp_errf(e, MP_EUSER,
			       "%s: %s: expected a host index below %u (the fabric's hosts), "
			       "found %s",
			       where, key, nhosts, s);
	*h = (uint32_t)v;
	return MP_OK;
}

int workload_field_bytes(const char *where, const char *key, const char *s, uint64_t *bytes,
			 struct mp_err *e)
{
	if (opt_parse_size(s, bytes) || *bytes == 0)
		return mp_errf(e, MP_EUSER,
			       "%s: %s: expected a size above 0 such as 4000, 64KB or 2MiB, "
			       "found '%s'",
			       where, key, s);
	return MP_OK;
}

int workload_field_time(const char *where, const char *key, const char *s, simtime_t *t,
			struct mp_err *e)
{
	uint64_t ps;

	if (opt_parse_time(s, &ps))
		return mp_errf(e, MP_EUSER,
			       "%s: %s: expected a time with a unit such as 0, 10us or 1.5ms, "
			       "found '%s'",
			       where, key, s);
	*t = ps;
	return MP_OK;
}

/* csv.c - CSV fields quoted on the way out, results CSV files read back; see
 * csv.h. */
#include "io/csv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

char *csv_field(const char *s, bool always)
{
	if (!always && !strpbrk(s, ",\"\r\n"))
		return mp_strdup(s);
	size_t n = 3;
	for (const char *c = s; *c; c++)
		n += *c == '"' ? 2 : 1;
	char *q = mp_malloc(n), *o = q;
	*o++ = '"';
	for (; *s; s++) {
		if (*s == '"')
			*o++ = '"';
		*o++ = *s;
	}
	*o++ = '"';
	*o = '\0';
	return q;
}

/* Cut one cell at *p (quoted or not) in place; *p moves past its comma or to
 * the end of the line. Returns the cell and sets *eol at a line's end. */
static char *cut_cell(char **p, bool *eol)
{
	char *s = *p, *out = s, *start = s;
	if (*s == '"') {
		s++;
		for (;;) {
			if (!*s)
				break;
			if (*s == '"' && s[1] == '"') {
				*out++ = '"';
				s += 2;
			} else if (*s == '"') {
				s++;
				break;
			} else {
				*out++ = *s++;
			}
		}
		while (*s && *s != ',' && *s != '\n')
			s++;
	} else {
		while (*s && *s != ',' && *s != '\n' && *s != '\r')
			s++;
		out = s;
		while (*s == '\r')
			s++;
	}
	*eol = *s != ',';
	if (*s)
		s++;
	*out = '\0';
	*p = s;
	return start;
}

int csv_split(char *s, char **f, size_t max)
{
	size_t n = 0;
	bool eol = !*s;
	while (!eol) {
		if (n == max)
			return -1;
		f[n++] = cut_cell(&s, &eol);
	}
	return (int)n;
}

bool csv_read(const char *path, struct csv *t)
{
	memset(t, 0, sizeof *t);
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t cap = 1 << 16, n = 0;
	t->text = mp_malloc(cap);
	for (size_t k; (k = fread(t->text + n, 1, cap - n - 1, f)) > 0;) {
		n += k;
		if (n + 1 == cap)
			t->text = mp_realloc(t->text, cap *= 2);
	}
	fclose(f);
	t->text[n] = '\0';
	char *p = t->text;
	size_t hcap = 8;
	t->head = mp_malloc(hcap * sizeof *t->head);
	for (bool eol = false; *p && !eol;) {
		if (t->ncols == hcap)
			t->head = mp_realloc(t->head, (hcap *= 2) * sizeof *t->head);
		t->head[t->ncols++] = cut_cell(&p, &eol);
	}
	size_t ccap = t->ncols * 64 + 1;
	t->cell = mp_malloc(ccap * sizeof *t->cell);
	while (*p) {
		if (*p == '\n') { /* a blank line */
			p++;
			continue;
		}
		if ((t->nrows + 1) * t->ncols > ccap)
			t->cell = mp_realloc(t->cell, (ccap *= 2) * sizeof *t->cell);
		char **row = t->cell + t->nrows * t->ncols;
		size_t c = 0;
		for (bool eol = false; *p && !eol;) {
			char *v = cut_cell(&p, &eol);
			if (c < t->ncols)
				row[c++] = v;
		}
		for (; c < t->ncols; c++)
			row[c] = t->text + n; /* "" */
		t->nrows++;
	}
	return t->ncols > 0;
}

void csv_free(struct csv *t)
{
	mp_free(t->head);
	mp_free(t->cell);
	mp_free(t->text);
	memset(t, 0, sizeof *t);
}

int csv_col(const struct csv *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcmp(t->head[i], name))
			return (int)i;
	return -1;
}

double csv_num(const struct csv *t, size_t row, size_t col)
{
	const char *s = csv_at(t, row, col);
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end)
		return NAN;
	return v;
}

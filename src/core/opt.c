/* opt.c - option tables: parsing values with units, defaults, ranges, and
 * printing tables and values; see opt.h.
 *
 * Owns: the per-type scalar parsers behind opt_parse_scalar (sizes, rates
 * and times through core/units.c, which parses them exactly), range checks,
 * `mpsim list` tables and YAML dumps of values.
 *
 * Invariants:
 *  - Whatever opt_format_value prints for a size, rate or time parses back to
 *    the identical integer (core/units.h).
 *  - A failed opt_parse_scalar leaves the field as it was.
 *  - Ranges: min == max == 0 means none. Otherwise the value must be >= min,
 *    and <= max unless max == 0 and min > 0 (then only the lower bound holds,
 *    printed as ">=min").
 */
#include "core/opt.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/units.h"

/* ---- a small growable string ------------------------------------------ */

struct sb {
	char *p;
	size_t len, cap;
};

static void sb_putn(struct sb *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->p = mp_realloc(b->p, cap);
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_puts(struct sb *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

static void sb_putc(struct sb *b, char c)
{
	sb_putn(b, &c, 1);
}

static void sb_printf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct sb *b, const char *fmt, ...)
{
	char small[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		sb_putn(b, small, (size_t)n);
		return;
	}
	char *big = mp_malloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb_putn(b, big, (size_t)n);
	mp_free(big);
}

/* The text so far (never NULL); the builder keeps ownership. */
static const char *sb_str(const struct sb *b)
{
	return b->p ? b->p : "";
}

static void sb_done(struct sb *b)
{
	mp_free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---- units ------------------------------------------------------------- */

/* The unit kind of an option type; false for a type without units. */
static bool units_of(enum opt_type t, enum units_kind *k)
{
	switch (t) {
	case OPT_SIZE:
		*k = UNITS_SIZE;
		return true;
	case OPT_RATE:
		*k = UNITS_RATE;
		return true;
	case OPT_TIME:
		*k = UNITS_TIME;
		return true;
	default:
		return false;
	}
}

static void fmt_units(struct sb *b, uint64_t v, enum units_kind k)
{
	char t[UNITS_BUF];
	units_format(k, v, t, sizeof t);
	sb_puts(b, t);
}

/* ---- doubles and YAML strings ------------------------------------------ */

/* Shortest %g text that reads back as exactly `v`. */
static void fmt_double(struct sb *b, double v)
{
	char tmp[64];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	sb_puts(b, tmp);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool yaml_plain_ok(const char *s, bool flow)
{
	static const char *const reserved[] = {
		"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", NULL,
	};
	size_t len = strlen(s);

	if (len == 0 || strchr("-?:,[]{}#&*!|>'\"%@`. \t", s[0]) || is_blank(s[len - 1]))
		return false;
	for (const char *const *w = reserved; *w; w++)
		if (strcasecmp(s, *w) == 0)
			return false;
	char *end;
	(void)strtod(s, &end);
	if (*end == '\0')
		return false; /* would read as a number */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			return false;
		if (c == ':' && (flow || s[i + 1] == ' ' || s[i + 1] == '\0'))
			return false;
		if (c == '#' && i > 0 && is_blank(s[i - 1]))
			return false;
		if (flow && strchr(",[]{}", c))
			return false;
	}
	return true;
}

static void fmt_yaml_quoted(struct sb *b, const char *s);

static void fmt_yaml_string(struct sb *b, const char *s, bool flow)
{
	if (!s)
		s = "";
	if (yaml_plain_ok(s, flow)) {
		sb_puts(b, s);
		return;
	}
	fmt_yaml_quoted(b, s);
}

/* s double-quoted, with YAML's escapes */
static void fmt_yaml_quoted(struct sb *b, const char *s)
{
	sb_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			sb_puts(b, "\\\"");
			break;
		case '\\':
			sb_puts(b, "\\\\");
			break;
		case '\n':
			sb_puts(b, "\\n");
			break;
		case '\t':
			sb_puts(b, "\\t");
			break;
		case '\r':
			sb_puts(b, "\\r");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				sb_printf(b, "\\x%02x", *p);
			else
				sb_putc(b, (char)*p);
		}
	}
	sb_putc(b, '"');
}

void opt_fput_yaml_string(FILE *f, const char *s, bool flow)
{
	struct sb b = { 0 };
	fmt_yaml_string(&b, s, flow);
	fputs(sb_str(&b), f);
	sb_done(&b);
}

void opt_fput_yaml_quoted(FILE *f, const char *s)
{
	struct sb b = { 0 };
	fmt_yaml_quoted(&b, s ? s : "");
	fputs(sb_str(&b), f);
	sb_done(&b);
}

/* ---- fields ------------------------------------------------------------ */

static void *field(void *params, const struct opt_desc *d)
{
	return (char *)params + d->offset;
}

static const void *cfield(const void *params, const struct opt_desc *d)
{
	return (const char *)params + d->offset;
}

static size_t field_size(enum opt_type t)
{
	switch (t) {
	case OPT_BOOL:
		return sizeof(bool);
	case OPT_INT:
		return sizeof(int64_t);
	case OPT_UINT:
	case OPT_SIZE:
	case OPT_RATE:
	case OPT_TIME:
		return sizeof(uint64_t);
	case OPT_DOUBLE:
		return sizeof(double);
	case OPT_ENUM:
		return sizeof(int);
	case OPT_STRING:
	case OPT_PATH:
		return sizeof(char *);
	case OPT_STRLIST:
		return sizeof(struct opt_strlist);
	}
	MP_PANIC("unknown option type %d", (int)t);
}

static void strlist_clear(struct opt_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		mp_free(l->v[i]);
	mp_free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void strlist_push(struct opt_strlist *l, const char *s, size_t len)
{
	l->v = mp_realloc(l->v, (l->n + 1) * sizeof *l->v);
	char *c = mp_malloc(len + 1);
	memcpy(c, s, len);
	c[len] = '\0';
	l->v[l->n++] = c;
}

/* ---- ranges ------------------------------------------------------------ */

static bool has_range(const struct opt_desc *d)
{
	return d->min != 0 || d->max != 0;
}

static bool has_upper(const struct opt_desc *d)
{
	return has_range(d) && !(d->max == 0 && d->min > 0);
}

/* Compare an integer with a double exactly: -1, 0 or 1 as v <, ==, > x. */
static int cmp_u64(uint64_t v, double x)
{
	if (x < 0)
		return 1;
	if (x >= 18446744073709551616.0)
		return -1;
	uint64_t xi = (uint64_t)x;
	if (v != xi)
		return v < xi ? -1 : 1;
	return x > (double)xi ? -1 : 0;
}

static int cmp_i64(int64_t v, double x)
{
	if (x < -9223372036854775808.0)
		return 1;
	if (x >= 9223372036854775808.0)
		return -1;
	int64_t xi = (int64_t)x;
	if (v != xi)
		return v < xi ? -1 : 1;
	double f = x - (double)xi;
	return f > 0 ? -1 : f < 0 ? 1 : 0;
}

static uint64_t dbl_to_u64(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)x;
}

/* A range limit written in the option's unit. */
static void fmt_limit(struct sb *b, const struct opt_desc *d, double x)
{
	enum units_kind k;
	if (units_of(d->type, &k)) {
		fmt_units(b, dbl_to_u64(x), k);
	} else if ((d->type == OPT_INT || d->type == OPT_UINT) && x > -9.2e18 && x < 9.2e18 &&
		   x == (double)(int64_t)x) {
		sb_printf(b, "%" PRId64, (int64_t)x);
	} else {
		fmt_double(b, x);
	}
}

static void fmt_range(struct sb *b, const struct opt_desc *d)
{
	if (!has_upper(d)) {
		sb_puts(b, ">=");
		fmt_limit(b, d, d->min);
		return;
	}
	fmt_limit(b, d, d->min);
	sb_puts(b, "..");
	fmt_limit(b, d, d->max);
}

static const char *range_noun(enum opt_type t)
{
	enum units_kind k;
	if (units_of(t, &k))
		return units_noun(k);
	return t == OPT_DOUBLE ? "a number" : "an integer";
}

/* `got` is the value as formatted. */
static int range_errf(struct mp_err *e, const struct opt_desc *d, const char *got)
{
	struct sb lo = { 0 }, hi = { 0 };
	fmt_limit(&lo, d, d->min);
	if (has_upper(d)) {
		fmt_limit(&hi, d, d->max);
		mp_errf(e, MP_EUSER, "expected %s between %s and %s, got %s", range_noun(d->type),
			sb_str(&lo), sb_str(&hi), got);
	} else {
		mp_errf(e, MP_EUSER, "expected %s of at least %s, got %s", range_noun(d->type),
			sb_str(&lo), got);
	}
	sb_done(&lo);
	sb_done(&hi);
	return MP_EUSER;
}

/* Returns MP_OK when the (already parsed) value is inside d's range. */
static int check_range(const struct opt_desc *d, int cmp_lo, int cmp_hi, const struct sb *got,
		       struct mp_err *e)
{
	if (!has_range(d))
		return MP_OK;
	if (cmp_lo < 0 || (has_upper(d) && cmp_hi > 0))
		return range_errf(e, d, sb_str(got));
	return MP_OK;
}

/* ---- parsing one scalar ------------------------------------------------ */

static int parse_bool(const char *t, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1", NULL };
	static const char *const no[] = { "false", "no", "off", "0", NULL };
	for (int i = 0; yes[i]; i++) {
		if (strcasecmp(t, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(t, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

static int parse_path(const struct opt_desc *d, void *params, const char *text,
		      const char *base_dir, struct mp_err *e)
{
	char *res;
	struct stat st;

	if (!*text)
		return mp_errf(e, MP_EUSER, "expected a file path, got ''");
	if (text[0] == '/' || !base_dir || !*base_dir || strcmp(base_dir, ".") == 0) {
		res = mp_strdup(text);
	} else {
		size_t bl = strlen(base_dir), tl = strlen(text);
		bool slash = base_dir[bl - 1] == '/';
		res = mp_malloc(bl + tl + 2);
		memcpy(res, base_dir, bl);
		if (!slash)
			res[bl++] = '/';
		memcpy(res + bl, text, tl + 1);
	}
	/* O_NONBLOCK: opening a FIFO must not hang the parser. */
	int fd = open(res, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int err = 0;
	if (fd < 0)
		err = errno;
	else if (fstat(fd, &st) != 0)
		err = errno;
	else if (S_ISDIR(st.st_mode))
		err = EISDIR;
	else if (!S_ISREG(st.st_mode))
		err = EINVAL;
	if (fd >= 0)
		close(fd);
	if (err) {
		mp_errf(e, MP_EUSER, "cannot read file '%s' (resolved to '%s'): %s", text, res,
			err == EINVAL ? "not a regular file" : strerror(err));
		mp_free(res);
		return MP_EUSER;
	}
	/* store the absolute path, so that the effective configuration written
	 * beside the results can be run again from any folder */
	char *abs = realpath(res, NULL);
	if (abs) {
		mp_free(res);
		res = mp_strdup(abs);
		free(abs);
	}
	char **f = field(params, d);
	mp_free(*f);
	*f = res;
	return MP_OK;
}

int opt_parse_scalar(const struct opt_desc *d, void *params, const char *text, const char *base_dir,
		     struct mp_err *e)
{
	enum units_kind k = UNITS_SIZE;
	struct sb got = { 0 };
	char *end;
	int rc = MP_OK;

	if (!text)
		text = "";
	switch (d->type) {
	case OPT_SIZE:
	case OPT_RATE:
	case OPT_TIME: {
		uint64_t v;
		units_of(d->type, &k);
		rc = units_parse(k, text, &v, e);
		if (rc != MP_OK)
			return rc;
		fmt_units(&got, v, k);
		rc = check_range(d, cmp_u64(v, d->min), cmp_u64(v, d->max), &got, e);
		if (rc == MP_OK)
			*(uint64_t *)field(params, d) = v;
		break;
	}
	case OPT_INT: {
		errno = 0;
		long long v = strtoll(text, &end, 10);
		if (!*text || *end || end == text)
			return mp_errf(e, MP_EUSER, "expected an integer, got '%s'", text);
		if (errno == ERANGE)
			return mp_errf(e, MP_EUSER,
				       "expected an integer between %" PRId64 " and %" PRId64
				       ", got '%s'",
				       INT64_MIN, INT64_MAX, text);
		sb_printf(&got, "%lld", v);
		rc = check_range(d, cmp_i64(v, d->min), cmp_i64(v, d->max), &got, e);
		if (rc == MP_OK)
			*(int64_t *)field(params, d) = v;
		break;
	}
	case OPT_UINT: {
		const char *p = text;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '-')
			return mp_errf(e, MP_EUSER, "expected a non-negative integer, got '%s'",
				       text);
		errno = 0;
		unsigned long long v = strtoull(p, &end, 10);
		if (!*p || *end || end == p)
			return mp_errf(e, MP_EUSER, "expected a non-negative integer, got '%s'",
				       text);
		if (errno == ERANGE)
			return mp_errf(e, MP_EUSER,
				       "expected an integer of at most %" PRIu64 ", got '%s'",
				       UINT64_MAX, text);
		sb_printf(&got, "%llu", v);
		rc = check_range(d, cmp_u64(v, d->min), cmp_u64(v, d->max), &got, e);
		if (rc == MP_OK)
			*(uint64_t *)field(params, d) = v;
		break;
	}
	case OPT_DOUBLE: {
		errno = 0;
		double v = strtod(text, &end);
		if (!*text || *end || end == text || !isfinite(v))
			return mp_errf(e, MP_EUSER,
				       "expected a finite number such as 0.5 or 1e-3, got '%s'",
				       text);
		fmt_double(&got, v);
		int lo = v < d->min ? -1 : v > d->min, hi = v < d->max ? -1 : v > d->max;
		rc = check_range(d, lo, hi, &got, e);
		if (rc == MP_OK)
			*(double *)field(params, d) = v;
		break;
	}
	case OPT_BOOL: {
		bool v;
		if (parse_bool(text, &v) != 0)
			return mp_errf(
			    e, MP_EUSER,
			    "expected true or false (also yes/no, on/off, 1/0), got '%s'", text);
		*(bool *)field(params, d) = v;
		break;
	}
	case OPT_ENUM: {
		if (!d->choices)
			MP_PANIC("option '%s' is an enum without choices", d->name);
		for (int i = 0; d->choices[i]; i++) {
			if (strcmp(d->choices[i], text) == 0) {
				*(int *)field(params, d) = i;
				return MP_OK;
			}
		}
		for (int i = 0; d->choices[i]; i++)
			sb_printf(&got, "%s%s", i ? ", " : "", d->choices[i]);
		rc = mp_errf(e, MP_EUSER, "expected one of %s, got '%s'", sb_str(&got), text);
		break;
	}
	case OPT_STRING: {
		char **f = field(params, d);
		mp_free(*f);
		*f = mp_strdup(text);
		break;
	}
	case OPT_PATH:
		rc = parse_path(d, params, text, base_dir, e);
		break;
	case OPT_STRLIST:
		strlist_push(field(params, d), text, strlen(text));
		break;
	}
	sb_done(&got);
	return rc;
}

/* ---- tables ------------------------------------------------------------ */

void opt_set_defaults(const struct opt_desc *table, void *params)
{
	for (const struct opt_desc *d = table; d->name; d++) {
		for (const struct opt_desc *o = table; o != d; o++)
			if (strcmp(o->name, d->name) == 0)
				MP_PANIC("option table: key '%s' appears twice", d->name);
		memset(field(params, d), 0, field_size(d->type));
		if (!d->def)
			continue;
		if (d->type == OPT_PATH) {
			/* Resolved and checked when a file names it; a default
			 * path is only checked when it is opened. */
			*(char **)field(params, d) = mp_strdup(d->def);
			continue;
		}
		if (d->type == OPT_STRLIST) {
			struct opt_strlist *l = field(params, d);
			const char *s = d->def;
			while (*s) {
				size_t len = strcspn(s, ",");
				const char *a = s, *b = s + len;
				while (a < b && isspace((unsigned char)*a))
					a++;
				while (b > a && isspace((unsigned char)b[-1]))
					b--;
				if (b > a)
					strlist_push(l, a, (size_t)(b - a));
				s += len;
				if (*s == ',')
					s++;
			}
			continue;
		}
		struct mp_err e = { 0 };
		if (opt_parse_scalar(d, params, d->def, NULL, &e) != MP_OK)
			MP_PANIC("option table: default '%s' of '%s' is invalid: %s", d->def,
				 d->name, e.msg);
	}
}

void opt_free(const struct opt_desc *table, void *params)
{
	for (const struct opt_desc *d = table; d->name; d++) {
		if (d->type == OPT_STRING || d->type == OPT_PATH) {
			char **f = field(params, d);
			mp_free(*f);
			*f = NULL;
		} else if (d->type == OPT_STRLIST) {
			strlist_clear(field(params, d));
		}
	}
}

const struct opt_desc *opt_find(const struct opt_desc *table, const char *name)
{
	if (!table || !name)
		return NULL;
	for (const struct opt_desc *d = table; d->name; d++)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

size_t opt_extent(const struct opt_desc *table)
{
	size_t ext = 0;
	for (const struct opt_desc *d = table; d->name; d++) {
		size_t end = d->offset + field_size(d->type);
		if (end > ext)
			ext = end;
	}
	return ext;
}

void opt_copy(const struct opt_desc *table, void *dst, const void *src)
{
	for (const struct opt_desc *d = table; d->name; d++) {
		const void *s = cfield(src, d);
		void *t = field(dst, d);
		if (d->type == OPT_STRING || d->type == OPT_PATH) {
			const char *str = *(char *const *)s;
			*(char **)t = str ? mp_strdup(str) : NULL;
		} else if (d->type == OPT_STRLIST) {
			const struct opt_strlist *sl = s;
			struct opt_strlist copy = { NULL, 0 };
			for (size_t i = 0; i < sl->n; i++)
				strlist_push(&copy, sl->v[i], strlen(sl->v[i]));
			*(struct opt_strlist *)t = copy;
		} else {
			memmove(t, s, field_size(d->type));
		}
	}
}

/* ---- formatting -------------------------------------------------------- */

static void fmt_value(struct sb *b, const struct opt_desc *d, const void *params)
{
	const void *f = cfield(params, d);
	enum units_kind k;

	switch (d->type) {
	case OPT_SIZE:
	case OPT_RATE:
	case OPT_TIME:
		units_of(d->type, &k);
		fmt_units(b, *(const uint64_t *)f, k);
		break;
	case OPT_INT:
		sb_printf(b, "%" PRId64, *(const int64_t *)f);
		break;
	case OPT_UINT:
		sb_printf(b, "%" PRIu64, *(const uint64_t *)f);
		break;
	case OPT_DOUBLE:
		fmt_double(b, *(const double *)f);
		break;
	case OPT_BOOL:
		sb_puts(b, *(const bool *)f ? "true" : "false");
		break;
	case OPT_ENUM: {
		int v = *(const int *)f, i = 0;
		if (d->choices)
			while (d->choices[i] && i < v)
				i++;
		if (d->choices && v >= 0 && i == v && d->choices[i])
			sb_puts(b, d->choices[i]);
		else
			sb_printf(b, "%d", v);
		break;
	}
	case OPT_STRING:
	case OPT_PATH:
		fmt_yaml_string(b, *(char *const *)f, false);
		break;
	case OPT_STRLIST: {
		const struct opt_strlist *l = f;
		sb_putc(b, '[');
		for (size_t i = 0; i < l->n; i++) {
			if (i)
				sb_puts(b, ", ");
			fmt_yaml_string(b, l->v[i], true);
		}
		sb_putc(b, ']');
		break;
	}
	}
}

void opt_format_value(const struct opt_desc *d, const void *params, char *buf, size_t n)
{
	struct sb b = { 0 };
	if (!n)
		return;
	fmt_value(&b, d, params);
	snprintf(buf, n, "%s", sb_str(&b));
	sb_done(&b);
}

const char *opt_type_name(enum opt_type t)
{
	switch (t) {
	case OPT_BOOL:
		return "bool";
	case OPT_INT:
		return "int";
	case OPT_UINT:
		return "uint";
	case OPT_DOUBLE:
		return "number";
	case OPT_SIZE:
		return "size";
	case OPT_RATE:
		return "rate";
	case OPT_TIME:
		return "time";
	case OPT_ENUM:
		return "enum";
	case OPT_STRING:
		return "string";
	case OPT_PATH:
		return "path";
	case OPT_STRLIST:
		return "list";
	}
	return "?";
}

enum { COL_NAME, COL_TYPE, COL_DEF, COL_RANGE, NCOLS };

void opt_print_table(FILE *f, const struct opt_desc *table, const char *indent)
{
	size_t rows = 0, width[NCOLS] = { 0 };
	for (const struct opt_desc *d = table; d->name; d++)
		rows++;
	if (!rows)
		return;
	struct sb *cell = mp_calloc(rows * NCOLS, sizeof *cell);

	for (size_t r = 0; r < rows; r++) {
		const struct opt_desc *d = &table[r];
		struct sb *c = &cell[r * NCOLS];
		sb_puts(&c[COL_NAME], d->name);
		if (d->type == OPT_ENUM && d->choices) {
			for (int i = 0; d->choices[i]; i++)
				sb_printf(&c[COL_TYPE], "%s%s", i ? "|" : "", d->choices[i]);
		} else {
			sb_puts(&c[COL_TYPE], opt_type_name(d->type));
		}
		if (!d->def)
			sb_puts(&c[COL_DEF], "required");
		else if (!*d->def)
			sb_puts(&c[COL_DEF], d->type == OPT_STRLIST ? "[]" : "\"\"");
		else
			sb_puts(&c[COL_DEF], d->def);
		bool ranged = has_range(d) && d->type != OPT_STRING && d->type != OPT_PATH &&
			      d->type != OPT_STRLIST && d->type != OPT_BOOL && d->type != OPT_ENUM;
		if (ranged)
			fmt_range(&c[COL_RANGE], d);
		else
			sb_puts(&c[COL_RANGE], "-");
		for (int i = 0; i < NCOLS; i++)
			if (c[i].len > width[i])
				width[i] = c[i].len;
	}
	for (size_t r = 0; r < rows; r++) {
		struct sb *c = &cell[r * NCOLS];
		fputs(indent ? indent : "", f);
		for (int i = 0; i < NCOLS; i++)
			fprintf(f, "%-*s  ", (int)width[i], sb_str(&c[i]));
		fprintf(f, "%s\n", table[r].help ? table[r].help : "");
		for (int i = 0; i < NCOLS; i++)
			sb_done(&c[i]);
	}
	mp_free(cell);
}

void opt_dump_yaml(FILE *f, const struct opt_desc *table, const void *params, const char *indent)
{
	struct sb b = { 0 };
	for (const struct opt_desc *d = table; d->name; d++) {
		b.len = 0;
		if (b.p)
			b.p[0] = '\0';
		fmt_value(&b, d, params);
		fprintf(f, "%s%s: %s\n", indent ? indent : "", d->name, sb_str(&b));
	}
	sb_done(&b);
}

/* ---- the unit parsers and formatters on their own ----------------------- */

int opt_parse_size(const char *text, uint64_t *bytes)
{
	return text && units_parse(UNITS_SIZE, text, bytes, NULL) == MP_OK ? 0 : -1;
}

int opt_parse_rate(const char *text, uint64_t *bps)
{
	return text && units_parse(UNITS_RATE, text, bps, NULL) == MP_OK ? 0 : -1;
}

int opt_parse_time(const char *text, uint64_t *ps)
{
	return text && units_parse(UNITS_TIME, text, ps, NULL) == MP_OK ? 0 : -1;
}

void opt_format_size(uint64_t bytes, char *buf, size_t n)
{
	units_format(UNITS_SIZE, bytes, buf, n);
}

void opt_format_rate(uint64_t bps, char *buf, size_t n)
{
	units_format(UNITS_RATE, bps, buf, n);
}

void opt_format_time(uint64_t ps, char *buf, size_t n)
{
	units_format(UNITS_TIME, ps, buf, n);
}

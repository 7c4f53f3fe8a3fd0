/* units.c - quantities with units, parsed and formatted exactly; see units.h.
 *
 * Invariants:
 *  - Numbers with units are parsed exactly: the decimal text is read into an
 *    unsigned __int128 mantissa and a power-of-ten scale and multiplied by the
 *    unit's integer factor, never through a double. A value that is not a whole
 *    number of base units ("0.5ps", "1.5B") is rejected, not rounded.
 *  - Whatever units_format prints parses back to the identical integer (at
 *    most two decimals, in a unit that divides it).
 */
#include "core/units.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

#define U128_MAX (~(u128)0)

/* ---- units ------------------------------------------------------------- */

struct unit {
	const char *name;
	uint64_t factor; /* base units per one of this unit */
};

#define K1 1000ULL
#define M1 1000000ULL
#define G1 1000000000ULL
#define T1 1000000000000ULL

static const struct unit size_in[] = {
	{ "B", 1 },
	{ "KB", K1 },
	{ "kB", K1 },
	{ "MB", M1 },
	{ "GB", G1 },
	{ "TB", T1 },
	{ "KiB", 1ULL << 10 },
	{ "MiB", 1ULL << 20 },
	{ "GiB", 1ULL << 30 },
	{ "TiB", 1ULL << 40 },
	{ NULL, 0 },
};

static const struct unit rate_in[] = {
	{ "bps", 1 },	  { "Kbps", K1 },   { "kbps", K1 },   { "Mbps", M1 },	{ "Gbps", G1 },
	{ "Tbps", T1 },	  { "b/s", 1 },	    { "Kb/s", K1 },   { "kb/s", K1 },	{ "Mb/s", M1 },
	{ "Gb/s", G1 },	  { "Tb/s", T1 },   { "bit/s", 1 },   { "Kbit/s", K1 }, { "kbit/s", K1 },
	{ "Mbit/s", M1 }, { "Gbit/s", G1 }, { "Tbit/s", T1 }, { NULL, 0 },
};

static const struct unit time_in[] = {
	{ "ps", 1 },	     { "ns", K1 }, { "us", M1 },
	{ "\xc2\xb5s", M1 }, /* U+00B5 micro sign */
	{ "\xce\xbcs", M1 }, /* U+03BC greek mu */
	{ "ms", G1 },	     { "s", T1 },  { NULL, 0 },
};

/* What a kind of quantity is called in messages, and its units. */
struct ukind {
	const char *noun;    /* "a size" */
	const char *example; /* "4KiB or 16MB" */
	const char *units;   /* list for messages */
	const char *base;    /* "bytes" */
	/* the units a text may name; a unit's first name in the list is the
	 * one written (KB before kB, Gbps before Gb/s, us before the micro
	 * signs): the formatter takes a factor only when it is larger than
	 * the best one so far */
	const struct unit *in;
	bool bare_ok; /* a number without a unit is in base units */
};

static const struct ukind kind_size = {
	"a size", "4KiB or 16MB", "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB; a bare number is bytes",
	"bytes",  size_in,	  true,
};
static const struct ukind kind_rate = {
	"a rate",
	"400Gbps or 100Mb/s",
	"bps, Kbps, Mbps, Gbps, Tbps or Gb/s style; a bare number is bit/s",
	"bit/s",
	rate_in,
	true,
};
static const struct ukind kind_time = {
	"a time", "8us or 1.5ms", "ps, ns, us, ms, s", "picoseconds", time_in, false,
};

static const struct ukind *ukind(enum units_kind k)
{
	return k == UNITS_SIZE ? &kind_size : k == UNITS_RATE ? &kind_rate : &kind_time;
}

const char *units_noun(enum units_kind k)
{
	return ukind(k)->noun;
}

/* ---- exact decimal numbers with units ---------------------------------- */

enum num_err {
	NUM_OK,
	NUM_SYNTAX,    /* empty, no digits, garbage */
	NUM_NEG,       /* starts with '-' */
	NUM_BIG,       /* does not fit 64 bits */
	NUM_FRAC,      /* not a whole number of base units */
	NUM_DIGITS,    /* more precision than we can carry */
	NUM_UNIT,      /* unknown unit */
	NUM_NEED_UNIT, /* bare non-zero number where a unit is required */
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parse "<digits>[.<digits>][e[+-]<digits>][ ]<unit>" exactly. */
static enum num_err parse_exact(const char *text, const struct ukind *k, uint64_t *out)
{
	const char *s = text;
	u128 n = 0; /* value = n * 10^-scale */
	long scale = 0;
	long pending = 0; /* fraction zeros not yet applied (dropped if trailing) */
	bool digits = false;

	while (is_blank(*s))
		s++;
	if (*s == '-')
		return (is_digit(s[1]) || s[1] == '.') ? NUM_NEG : NUM_SYNTAX;
	for (; is_digit(*s); s++) {
		if (n > (U128_MAX - 9) / 10)
			return NUM_BIG;
		n = n * 10 + (unsigned)(*s - '0');
		digits = true;
	}
	if (*s == '.') {
		for (s++; is_digit(*s); s++) {
			digits = true;
			if (*s == '0') {
				pending++;
				continue;
			}
			for (long i = 0; i <= pending; i++) {
				if (n > U128_MAX / 10)
					return NUM_DIGITS;
				n *= 10;
			}
			n += (unsigned)(*s - '0');
			scale += pending + 1;
			pending = 0;
		}
	}
	if (!digits)
		return NUM_SYNTAX;
	if ((*s == 'e' || *s == 'E') &&
	    (is_digit(s[1]) || ((s[1] == '+' || s[1] == '-') && is_digit(s[2])))) {
		bool neg = false;
		long ex = 0;
		s++;
		if (*s == '+' || *s == '-')
			neg = *s++ == '-';
		for (; is_digit(*s); s++)
			if (ex < 100000)
				ex = ex * 10 + (*s - '0');
		scale += neg ? ex : -ex;
	}
	while (is_blank(*s))
		s++;
	size_t ulen = strlen(s);
	while (ulen && is_blank(s[ulen - 1]))
		ulen--;

	uint64_t factor = 0;
	if (ulen == 0) {
		if (k->bare_ok)
			factor = 1;
		else if (n == 0)
			factor = 1;
		else
			return NUM_NEED_UNIT;
	} else {
		for (const struct unit *u = k->in; u->name; u++) {
			if (strlen(u->name) == ulen && memcmp(u->name, s, ulen) == 0) {
				factor = u->factor;
				break;
			}
		}
		if (!factor)
			return NUM_UNIT;
	}
	if (n == 0) {
		*out = 0;
		return NUM_OK;
	}
	while (scale > 0 && n % 10 == 0) {
		n /= 10;
		scale--;
	}
	while (scale < 0) {
		if (n > U128_MAX / 10)
			return NUM_BIG;
		n *= 10;
		scale++;
	}
	if (scale > 38)
		return NUM_DIGITS;
	u128 pow = 1;
	for (long i = 0; i < scale; i++)
		pow *= 10;
	u128 q = n / pow, r = n % pow;
	if (q > UINT64_MAX)
		return NUM_BIG;
	u128 total = q * factor;
	if (r) {
		if (r > U128_MAX / factor)
			return NUM_DIGITS;
		u128 t = r * factor;
		if (t % pow)
			return NUM_FRAC;
		total += t / pow;
	}
	if (total > UINT64_MAX)
		return NUM_BIG;
	*out = (uint64_t)total;
	return NUM_OK;
}

static int unit_errf(struct mp_err *e, const struct ukind *k, enum num_err err, const char *text)
{
	switch (err) {
	case NUM_NEG:
		return mp_errf(e, MP_EUSER, "expected a non-negative %s, got '%s'", k->noun + 2,
			       text);
	case NUM_BIG:
		return mp_errf(e, MP_EUSER, "expected %s of at most %" PRIu64 " %s, got '%s'",
			       k->noun, UINT64_MAX, k->base, text);
	case NUM_FRAC:
		return mp_errf(e, MP_EUSER, "expected a whole number of %s, got '%s'", k->base,
			       text);
	case NUM_DIGITS:
		return mp_errf(e, MP_EUSER,
			       "expected %s with at most 38 significant digits, got '%s'", k->noun,
			       text);
	case NUM_NEED_UNIT:
		return mp_errf(e, MP_EUSER,
			       "expected %s with a unit such as %s (units: %s; only 0 may be "
			       "written without one), got '%s'",
			       k->noun, k->example, k->units, text);
	default:
		return mp_errf(e, MP_EUSER, "expected %s such as %s (units: %s), got '%s'", k->noun,
			       k->example, k->units, text);
	}
}

int units_parse(enum units_kind kind, const char *text, uint64_t *out, struct mp_err *e)
{
	const struct ukind *k = ukind(kind);
	uint64_t v;
	enum num_err ne = parse_exact(text ? text : "", k, &v);
	if (ne != NUM_OK)
		return unit_errf(e, k, ne, text ? text : "");
	*out = v;
	return MP_OK;
}

/* Natural unit: the largest unit in which `v` is written with at most two
 * decimals. The base unit always qualifies, so this never fails. */
void units_format(enum units_kind kind, uint64_t v, char *buf, size_t n)
{
	const struct unit *out = ukind(kind)->in;
	const struct unit *best = &out[0];
	unsigned best_d = 0;

	if (!n)
		return;
	for (const struct unit *u = out; u->name; u++) {
		if (u->factor > v || u->factor <= best->factor)
			continue;
		u128 p = 1;
		for (unsigned d = 0; d <= 2; d++, p *= 10) {
			if (((u128)v * p) % u->factor == 0) {
				best = u;
				best_d = d;
				break;
			}
		}
	}
	if (best_d) {
		u128 p = best_d == 1 ? 10 : 100;
		unsigned frac = (unsigned)(((u128)v * p / best->factor) % p);
		snprintf(buf, n, "%" PRIu64 ".%0*u%s", v / best->factor, (int)best_d, frac,
			 best->name);
	} else {
		snprintf(buf, n, "%" PRIu64 "%s", v / best->factor, best->name);
	}
}

/* opt.h - option tables: one table per scheme (topology, transport, load
 * balancer, workload, and each fixed section of an experiment file) drives
 * parsing, defaults, ranges, `--help`, `mpsim list` and the effective config.
 *
 * A table is an array of struct opt_desc ending with an entry whose name is
 * NULL. Each entry says where its value lives (offset into the scheme's
 * parameter struct), its type and unit, its default (a string parsed by the same
 * code that parses files, so what `mpsim list` prints is what runs), and its
 * range. Values with units:
 *   OPT_SIZE  bytes (uint64_t):  "4000", "4KB" (1000), "4KiB" (1024), "16MB",
 *             "16MiB", "1GB", "1GiB", "512B"
 *   OPT_RATE  bit/s (uint64_t):  "400Gbps", "100Mbps", "1Tbps", "40e9" (bit/s);
 *             also "Gb/s" spellings
 *   OPT_TIME  ps (uint64_t):     "8us", "1.5ms", "100ns", "250ps", "2s";
 *             a bare number is rejected (a unit is required) except "0"
 *   OPT_DOUBLE double, OPT_INT int64_t, OPT_UINT uint64_t, OPT_BOOL bool
 *             (true/false/yes/no/on/off), OPT_ENUM int (index into choices),
 *   OPT_STRING char * (owned, mp_strdup), OPT_PATH char * (must name a
 *             readable file, resolved relative to the experiment file's folder),
 *   OPT_STRLIST struct opt_strlist (a YAML sequence of scalars, or one scalar).
 * min/max bound the parsed value (in the base unit: bytes, bit/s, ps); both 0
 * means unbounded. For OPT_STRING/OPT_PATH/OPT_STRLIST they are ignored.
 */
#ifndef MPSIM_CORE_OPT_H
#define MPSIM_CORE_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/err.h"

enum opt_type {
	OPT_BOOL,
	OPT_INT,
	OPT_UINT,
	OPT_DOUBLE,
	OPT_SIZE,
	OPT_RATE,
	OPT_TIME,
	OPT_ENUM,
	OPT_STRING,
	OPT_PATH,
	OPT_STRLIST,
};

struct opt_strlist {
	char **v;
	size_t n;
};

struct opt_desc {
	const char *name; /* key in the experiment file */
	enum opt_type type;
	size_t offset;		    /* offsetof(params struct, field) */
	const char *def;	    /* default, as it would be written in a file; NULL = required */
	double min, max;	    /* inclusive range in base units; 0,0 = none */
	const char *help;	    /* one line, what it is and its unit */
	const char *const *choices; /* OPT_ENUM: NULL-terminated names */
};

#define OPT_END              \
	{                    \
		.name = NULL \
	}

/* Parse one scalar into the field of `params` described by `d`. `base_dir` is
 * used to resolve OPT_PATH (may be NULL = current directory). On failure returns
 * MP_EUSER and writes "what was expected" (without file:line or key) into e;
 * the caller prefixes location and key. */
int opt_parse_scalar(const struct opt_desc *d, void *params, const char *text, const char *base_dir,
		     struct mp_err *e);

/* Fill every field of `params` with its default (required ones are zeroed).
 * Panics if a default does not parse: the table itself is broken. */
void opt_set_defaults(const struct opt_desc *table, void *params);

/* Free owned strings/lists held in `params`. */
void opt_free(const struct opt_desc *table, void *params);

/* Look up a descriptor by name; NULL when the table has no such key. */
const struct opt_desc *opt_find(const struct opt_desc *table, const char *name);

/* Format the current value of `d` in `params` with its natural unit
 * (e.g. "400Gbps", "8us", "4KiB"), re-parseable by opt_parse_scalar. */
void opt_format_value(const struct opt_desc *d, const void *params, char *buf, size_t n);

/* Name of the unit/type for help text: "size", "rate", "time", "bool", ... */
const char *opt_type_name(enum opt_type t);

/* Print a table as `mpsim list` shows it: name, type/unit, default, range, help. */
void opt_print_table(FILE *f, const struct opt_desc *table, const char *indent);

/* Write the table's current values as YAML `key: value` lines with `indent`. */
void opt_dump_yaml(FILE *f, const struct opt_desc *table, const void *params, const char *indent);

/* Write `s` as one YAML scalar that reads back as exactly `s`: plain where
 * that is unambiguous, else double-quoted with escapes; `flow` when it stands
 * inside a flow collection ({...} or [...]). */
void opt_fput_yaml_string(FILE *f, const char *s, bool flow);
/* The same, always double-quoted. */
void opt_fput_yaml_quoted(FILE *f, const char *s);

/* The same unit parsers (core/units.h), for code that reads numbers outside
 * a table. Each returns 0 on success, -1 on a malformed or out-of-range text. */
int opt_parse_size(const char *text, uint64_t *bytes);
int opt_parse_rate(const char *text, uint64_t *bps);
int opt_parse_time(const char *text, uint64_t *ps);

/* Additions (io/cfg.c and callers that print numbers). */

/* The matching formatters: the natural unit, at most two decimals, always
 * re-parseable to the same value ("400Gbps", "1.5us", "4KiB", "4001B"). */
void opt_format_size(uint64_t bytes, char *buf, size_t n);
void opt_format_rate(uint64_t bps, char *buf, size_t n);
void opt_format_time(uint64_t ps, char *buf, size_t n);

/* Bytes from the start of a params struct to the end of the last field that
 * `table` describes; with opt_copy this lets a caller parse into a scratch
 * copy and keep the original untouched on error. */
size_t opt_extent(const struct opt_desc *table);

/* Copy every field `table` describes from src to dst, duplicating owned
 * strings and lists. dst's previous owned values are not freed. */
void opt_copy(const struct opt_desc *table, void *dst, const void *src);

/* Notes on the functions above:
 *  - opt_set_defaults overwrites fields without freeing them (params may be
 *    uninitialised); call opt_free first when reusing a params struct. An
 *    OPT_PATH default is stored as written and not checked (it is checked
 *    when opened); an OPT_STRLIST default is split on commas ("" = empty).
 *  - opt_parse_scalar also checks the range; for OPT_STRING/OPT_PATH it
 *    frees the previous value, for OPT_STRLIST it appends one element.
 *  - Ranges: min == max == 0 means none; max == 0 with min > 0 means only a
 *    lower bound. */

#endif

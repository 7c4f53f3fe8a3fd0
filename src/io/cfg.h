/* cfg.h - experiment files as a tree of YAML nodes that remember their line.
 *
 * Owns: reading a YAML file (libyaml) into a small tree, `--set a.b.c=value`
 * overrides, and applying one option table (core/opt.h) to one mapping node.
 * Every error names file:line, the dotted key and what was expected, with
 * status MP_EUSER; nothing is applied partially when an error is returned.
 */
#ifndef MPSIM_IO_CFG_H
#define MPSIM_IO_CFG_H

#include <stddef.h>

#include "core/err.h"
#include "core/opt.h"

enum cfg_kind { CFG_SCALAR, CFG_MAP, CFG_SEQ };

struct cfg_node {
	enum cfg_kind kind;
	char *key;		/* key when this node is a value in a mapping, else NULL */
	char *value;		/* CFG_SCALAR: the text */
	int line, col;		/* 1-based position of the node (the key for map values) */
	struct cfg_node **kids; /* CFG_MAP: values (each with key); CFG_SEQ: items */
	size_t n;
};

struct cfg_doc {
	char *path;	       /* as given, used in messages */
	char *dir;	       /* folder of the file, to resolve relative paths */
	struct cfg_node *root; /* a CFG_MAP (an empty file gives an empty map) */
};

int cfg_load_file(const char *path, struct cfg_doc *doc, struct mp_err *e);
/* `name` stands for the file name in messages. */
int cfg_load_string(const char *text, const char *name, struct cfg_doc *doc, struct mp_err *e);
void cfg_free(struct cfg_doc *doc);

/* Apply "a.b.c=value": creates missing maps, replaces a scalar. Line 0 marks
 * nodes that came from the command line; messages then say "--set a.b.c". */
int cfg_apply_set(struct cfg_doc *doc, const char *assignment, struct mp_err *e);
/* The same with the new value's nodes at `line` of the file (a sweep value),
 * so later messages about the value point there. */
int cfg_apply_set_at(struct cfg_doc *doc, const char *assignment, int line, struct mp_err *e);

/* Child of a mapping by key, or NULL. */
struct cfg_node *cfg_get(const struct cfg_node *map, const char *key);
/* Detach value i of a mapping and return it (the caller now owns it). */
struct cfg_node *cfg_take(struct cfg_node *map, size_t i);
/* Put a detached keyed node into a mapping, in place of (and freeing) the
 * value of the same key if there is one, else at the end. */
void cfg_put(struct cfg_node *map, struct cfg_node *kid);

/* Check `map` (may be NULL: all defaults) against `table`, parse every value
 * into `params` (which must already hold defaults: opt_set_defaults). Keys in
 * `skip` (NULL-terminated, may be NULL) are allowed and ignored (e.g. "type").
 * `section` is the dotted path used in messages ("topology", "switch.ecn").
 * Rejects: unknown keys (suggesting the closest known one), a mapping or
 * sequence where a scalar is expected, values that do not parse or are out of
 * range, missing required keys. */
int cfg_apply_table(const struct cfg_doc *doc, const struct cfg_node *map, const char *section,
		    const struct opt_desc *table, void *params, const char *const *skip,
		    struct mp_err *e);

/* Notes on cfg_apply_set and cfg_apply_table (additions, no new API):
 *  - cfg_apply_set replaces a scalar or a whole sequence by the scalar; it
 *    refuses to replace a mapping and to descend through a scalar/sequence.
 *  - cfg_apply_table parses into a scratch copy (opt_extent/opt_copy) and
 *    copies it back only on success: on error `params` is unchanged.
 *    An OPT_STRLIST key replaces the default list: a sequence of scalars, one
 *    scalar (a one-element list) or an empty value (an empty list). An
 *    OPT_PATH value from the file is resolved against doc->dir, one from
 *    --set (line 0) against the current directory. A required key missing
 *    from a section that exists only through --set is reported as
 *    "file: section.key: required key missing" (no line). */

/* Error helper: "file:line: section.key: <message>" (line omitted for --set nodes).
 * `key` is at->key when `at` has one (a mapping value), so pass the node the
 * message is about; at == NULL uses the line of the root. */
int cfg_errf(struct mp_err *e, const struct cfg_doc *doc, const struct cfg_node *at,
	     const char *section, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* "file:LINE: KEY: message", or "--set KEY: message" when line is 0 (the
 * value came from the command line); KEY is a dotted key such as
 * "topology.type". */
int cfg_errf_line(struct mp_err *e, const struct cfg_doc *doc, int line, const char *key,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The known name closest to `key` (a likely typo), or NULL. */
const char *cfg_suggest(const char *key, const char *const *known);

#endif

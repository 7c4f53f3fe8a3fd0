/* sweep.h - the `sweep:` and `paper:` sections of an experiment file.
 *
 *   sweep:                      # every combination runs, first key outermost
 *     transport.qps: [1, 4]
 *     workload.size: [4KB, 2MB, 16MB]
 *   paper:                      # printed beside our numbers at the end
 *     source: "STrack paper, Fig. 9 (RoCEv2, 1 QP)"
 *     values:
 *       - {metric: max_fct, value: 2.1ms, when: {transport.qps: 1, workload.size: 16MB},
 *          note: "read off the figure"}
 *
 * A sweep key is any dotted key --set accepts; its values are scalars written
 * as the key expects them. Each point is the file with those values set, and
 * a value's errors point at its own line. `when` selects points by swept
 * values, spelled as in the sweep; without `when` an entry applies to every
 * point. Metrics are those of io/metrics.h.
 *
 * A key without a dot whose value is a mapping names variants, systems run
 * side by side on the same fabric and workload:
 *
 *   sweep:
 *     system:
 *       strack: {transport.lb: adaptive}
 *       roce: {transport: {type: roce, qps: 1}, switch: {mode: lossless}}
 *
 * A variant's mapping values replace whole sections of the file; its dotted
 * keys are set as --set sets them. Variants apply before --set (which then
 * changes every variant alike), scalar sweep keys after.
 *
 * `ratio_of` makes an entry a ratio between points: ours is the metric at the
 * point with those swept values changed, over the metric at this point, e.g.
 *   {metric: max_fct, when: {system: strack}, ratio_of: {system: roce}, value: 6.3}
 * compares RoCE's max FCT over STrack's with the paper's "6.3x better".
 */
#ifndef MPSIM_IO_SWEEP_H
#define MPSIM_IO_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "io/cfg.h"
#include "io/metrics.h"

struct sweep_key {
	char *key;     /* dotted, e.g. "workload.size" */
	char *label;   /* short name for folders and tables: the last component */
	char **values; /* as written; for variants, their names */
	bool variants; /* values name variants (sweep.<key>.<name> mappings) */
	int *lines;    /* each value's line */
	size_t nvalues;
	int line; /* the key's line */
};

struct paper_entry {
	int metric;   /* enum metric_id */
	double value; /* in the metric's base unit */
	char *text;   /* as written */
	char *note;   /* may be "" */
	size_t nwhen;
	size_t *when_key;   /* index into sweep keys */
	size_t *when_value; /* index into that key's values */
	size_t nratio;	    /* ratio_of: the other point's changed keys, 0 = plain */
	size_t *ratio_key;
	size_t *ratio_value;
	int line;
};

struct sweep {
	struct sweep_key *keys;
	size_t nkeys;
	size_t npoints; /* 1 when there is no sweep */
	char *source;	/* paper.source, or NULL when there is no paper section */
	struct paper_entry *entries;
	size_t nentries;
};

/* Read both sections from `doc` (either may be absent). `sets` are the
 * command line's --set assignments: setting a swept key, or a key of either
 * section, is an error. */
int sweep_parse(struct sweep *sw, const struct cfg_doc *doc, char *const *sets, size_t nsets,
		struct mp_err *e);
void sweep_free(struct sweep *sw);
/* The value index of key k at point p (first key outermost). */
size_t sweep_value_at(const struct sweep *sw, size_t point, size_t k);
/* Apply point p's variants to doc: before any --set. */
int sweep_apply_variants(const struct sweep *sw, size_t point, struct cfg_doc *doc,
			 struct mp_err *e);
/* Apply point p's scalar values to doc (their lines kept for messages). */
int sweep_apply(const struct sweep *sw, size_t point, struct cfg_doc *doc, struct mp_err *e);
/* Point p with key k's value changed to value v. */
size_t sweep_point_with(const struct sweep *sw, size_t point, size_t k, size_t v);
/* "qps-1_size-16MB" (a folder name), or "run" when there is no sweep. */
void sweep_point_name(const struct sweep *sw, size_t point, char *buf, size_t n);
/* Longest point folder name (a file name of 255 with the temporary suffix). */
#define SWEEP_NAME_MAX 200
/* Every point's folder name is unique and at most SWEEP_NAME_MAX long:
 * "path:line: sweep.key: ..." naming the two values otherwise (MP_EUSER). */
int sweep_check_names(const struct sweep *sw, const char *path, struct mp_err *e);
/* The first key whose value differs between points p and q (0 if none). */
size_t sweep_key_between(const struct sweep *sw, size_t p, size_t q);
/* Does paper entry i apply to point p? */
bool sweep_entry_applies(const struct sweep *sw, size_t i, size_t point);

#endif

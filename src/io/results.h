/* results.h - the results folder and the summary table.
 *
 * A results folder holds paper.csv when the experiment has a `paper:` section, summary.json, flows.csv, ports.csv (one row per
 * egress port: bytes, utilisation, max and mean queue, drops, ECN marks, PFC
 * pauses and paused time), timeseries.csv and config.yaml (the effective
 * configuration); with a training workload training.csv, and timeline.json
 * when output.timeline asks (io/training.h). It is written into a temporary
 * sibling folder and renamed into place at the end, so an interrupted run never
 * leaves a folder that looks complete. flows.csv, ports.csv and timeseries.csv depend only
 * on the experiment and seed (byte-identical across runs); summary.json also
 * holds wall time and memory, which do not.
 */
#ifndef MPSIM_IO_RESULTS_H
#define MPSIM_IO_RESULTS_H

#include <stdbool.h>
#include <stdio.h>

#include "core/err.h"
#include "io/experiment.h"
#include "stats/result.h"

/* The folder half (io/resdir.c): mpsim removes only what it wrote, listed in
 * each folder's RESULTS_MANIFEST; see resdir.c for the rules. */
#define RESULTS_MANIFEST ".mpsim-files"
/* The marker of a temporary folder (OUT.partial-PID): "mpsim-partial PID
 * START HOST BOOT", START the process's start time (0 where unknown), HOST
 * its machine's name and BOOT the kernel's boot id, so that a folder a killed
 * process left is told from a live one's, even when the process id has been
 * reused, and one of another machine is left alone (resdir.c). */
#define RESULTS_PARTIAL ".mpsim-partial"
/* plots/ and report.html: drawn after the commit from the files, mpsim's in
 * every results folder (listed in its manifest whether drawn or not). */
bool results_is_drawn(const char *name);
/* The temporary folders of outdir that mpsim processes which no longer run
 * left (OUT.partial-PID: a sweep's parent killed by SIGKILL); fn(dir, arg) is
 * called for each (it may remove it); returns how many. A live process's
 * partial folder, and one without mpsim's marker, is never among them. Every
 * commit into outdir removes them. */
size_t results_stale(const char *outdir, void (*fn)(const char *dir, void *arg), void *arg);
/* `out` as given (--out, or results/<name>) to the folder to write: trailing
 * slashes dropped, a symbolic link followed to its target; refuses "", "."
 * and "..", and names too long for a file system. */
int results_resolve(const char *out, char *dir, size_t n, struct mp_err *e);
/* Check before a run that `outdir` (resolved) can receive results (absent, or
 * an earlier mpsim results folder), create the folders above it and prove a
 * new folder can be made beside it. */
int results_prepare(const char *outdir, struct mp_err *e);
/* Write every file (and paper.csv when paper_csv is not NULL) and rename the
 * folder into place. */
int results_write(const char *outdir, const struct experiment *x, const struct run_result *r,
		  const char *paper_csv, struct mp_err *e);
/* The same steps for a folder assembled by the caller (a sweep): a fresh
 * temporary sibling of outdir, files written into it, then the rename that
 * replaces outdir (or the removal of the temporary folder). */
int results_tmpdir(const char *outdir, char *tmp, size_t n, struct mp_err *e);
int results_write_text(const char *dir, const char *name, const char *text, struct mp_err *e);
int results_commit(const char *tmp, const char *outdir, struct mp_err *e);
/* Move entry `name` of the existing outdir into tmp (a sweep's completed
 * point that --resume keeps). */
int results_adopt(const char *outdir, const char *tmp, const char *name, struct mp_err *e);
void results_discard(const char *tmp);
/* A folder's files and subfolders as one buffer (released with mp_free), and
 * that buffer written out again as folder dir (created; paths that would
 * leave it are refused): how an MPI rank hands a sweep point's folder to the
 * rank that owns the results, whether or not they share a file system. */
int results_pack(const char *dir, char **buf, size_t *n, struct mp_err *e);
int results_unpack(const char *dir, const char *buf, size_t n, struct mp_err *e);
/* Flush and close f, written at path: MP_OK, or MP_EIO and "error writing
 * 'path': why" (a full disk) in e. The caller removes what it half wrote. */
int results_fclose(FILE *f, const char *path, struct mp_err *e);
void results_print_table(FILE *f, const struct experiment *x, const struct run_result *r);

/* s as a JSON string, quoted, with quotes, backslashes and control
 * characters escaped (summary.json, timeline.json). */
void json_string(FILE *f, const char *s);

#endif

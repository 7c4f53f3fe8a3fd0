/* report.h - report.html, one self-contained page per results folder, and
 * an index of a folder of experiment files with links to their latest
 * results. */
#ifndef MPSIM_IO_REPORT_H
#define MPSIM_IO_REPORT_H

#include "core/err.h"

/* DIR/report.html (and its sweep points' pages). MP_EUSER when dir is not a
 * results folder. */
int report_dir(const char *dir, struct mp_err *e);
/* RESDIR/index.html: every experiment file under EXPDIR (and its
 * subfolders), what it reproduces (its header comment and paper source), a
 * link to RESDIR/<name>/report.html when it has run, and its first plots. */
int report_index(const char *expdir, const char *resdir, struct mp_err *e);

#endif

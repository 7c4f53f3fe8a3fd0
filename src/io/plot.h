/* plot.h - the plots of a results folder, drawn by gnuplot.
 *
 * Everything is read back from the folder's files (flows.csv, timeseries.csv,
 * collectives.csv, sweep.csv, paper.csv), so `mpsim plot DIR` redraws any
 * folder, and a run draws its own at the end when gnuplot is installed. The
 * figures land in DIR/plots/ as NAME.png and NAME.svg, beside NAME.dat (the
 * numbers drawn), plot.gp (the gnuplot script: edit it and run
 * `gnuplot plot.gp` in that folder) and figures.tsv (one line per figure:
 * name, tab, caption; what report.html shows).
 *
 * A run: the FCT CDF, slowdown by flow size (mean and p99, per size bucket),
 * one figure per family of time series (queue_bytes, utilisation, goodput_gbps,
 * cwnd_bytes, ...), and the collective completion time CDF.
 * A sweep: each metric against the swept value, one line per combination of
 * the other swept keys (the systems), the paper's values as marked points,
 * and each `ratio_of` comparison as a ratio against the swept value. Its
 * point folders get their own plots.
 *
 * The folder's files are data, whoever made them: every text from them (a
 * variant name, a paper note, a series name) reaches plot.gp in gnuplot's
 * single quotes, where nothing is substituted, and is drawn as written
 * (`noenhanced`: no ^ _ @ markup); none names a file. A figure gnuplot could
 * not write whole (a full disk) is an error, and the plots folder is emptied.
 */
#ifndef MPSIM_IO_PLOT_H
#define MPSIM_IO_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"

/* The Debian package that provides gnuplot (named in messages). */
#define PLOT_GNUPLOT_PACKAGE "gnuplot-nox"

/* gnuplot's path when it is on PATH (copied into path), else false. */
bool plot_have_gnuplot(char *path, size_t n);
/* Draw the plots of results folder `dir` (a run or a sweep, and with `points`
 * a sweep's point folders too). MP_EUSER when dir is not a results folder or
 * gnuplot is missing; MP_EIO when gnuplot fails. */
int plot_dir(const char *dir, bool points, struct mp_err *e);

#endif

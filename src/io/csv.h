/* csv.h - writing a CSV field, and reading the CSV files a results folder holds (flows.csv,
 * timeseries.csv, sweep.csv, paper.csv, ...) back for plots and reports.
 *
 * A file is read whole: a header row, then rows of cells. A cell may be
 * quoted ("a, b" with "" for a quote); an empty cell is "". Rows shorter than
 * the header read as "" in the missing cells.
 */
#ifndef MPSIM_IO_CSV_H
#define MPSIM_IO_CSV_H

#include <stdbool.h>
#include <stddef.h>

/* s as one CSV field (RFC 4180): as it is, unless it holds a comma, a quote,
 * a CR or a newline (or `always`): then in double quotes, each quote doubled.
 * Released with mp_free. Every text a user chose (a variant name, a paper
 * note) goes into sweep.csv and paper.csv through it. */
char *csv_field(const char *s, bool always);

/* Cut s, one CSV record (fields as csv_field writes them), into its fields
 * in place: f[0..n) point into s. Returns n (0 for an empty s), or -1 when it
 * has more than max fields. */
int csv_split(char *s, char **f, size_t max);

struct csv {
	char **head; /* ncols names */
	size_t ncols, nrows;
	char **cell; /* nrows * ncols, row-major; never NULL */
	char *text;  /* the file, cut in place */
};

/* Read `path`; false (and a zeroed *t) when it cannot be read. */
bool csv_read(const char *path, struct csv *t);
void csv_free(struct csv *t);
/* Column index of `name`, or -1. */
int csv_col(const struct csv *t, const char *name);
static inline const char *csv_at(const struct csv *t, size_t row, size_t col)
{
	return t->cell[row * t->ncols + col];
}
/* The cell as a number; NAN when empty or not a number ("nan", "n/a"). */
double csv_num(const struct csv *t, size_t row, size_t col);

#endif

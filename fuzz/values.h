/* values.h - the value-level fuzz target (fuzz/values.c), shared by the
 * libFuzzer build and the corpus replay (fuzz/replay.c). */
#ifndef MPSIM_FUZZ_VALUES_H
#define MPSIM_FUZZ_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Once per process: panics abort, mpsim's memory plan and every run are
 * capped, a scratch folder holds the cases and a gnuplot that does nothing. */
int fuzz_values_init(void);
/* Remove the scratch folder. */
void fuzz_values_cleanup(void);
/* Run one case (an experiment file's text, then its "#@set" and "#@file"
 * directives) as `mpsim run` would, each run bounded, and check its plot
 * scripts and report. Returns its status: 0, MP_EUSER with mpsim's messages
 * in *e (in the replay; libFuzzer leaves them on stderr), anything else is
 * a finding (*e says what when the check of an output failed). */
int fuzz_values_run(const char *text, struct mp_err *e);
/* One to three changes to the case in data (a value, a text, a --set, a side
 * file's line; in place, at most max_size bytes); returns the new size. */
size_t fuzz_values_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#endif

/* values.h - the value-level fuzz target (fuzz/values.c), shared by the
 * libFuzzer build and the corpus replay (fuzz/replay.c). */
#ifndef MPSIM_FUZZ_VALUES_H
#define MPSIM_FUZZ_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Once per process: panics abort, mpsim's memory plan is capped. */
int fuzz_values_init(void);
/* Remove the scratch results folder. */
void fuzz_values_cleanup(void);
/* Load, build, run (bounded) and write one experiment file's text. Returns
 * its status (0, or MP_EUSER with the sentence in *e); *events is the number
 * of events run. */
int fuzz_values_run(const char *text, struct mp_err *e, uint64_t *events);
/* Replace one to three scalar values of the YAML text in data (in place, at
 * most max_size bytes); returns the new size. */
size_t fuzz_values_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#endif

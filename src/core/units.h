/* units.h - quantities with units, read and written exactly: sizes in bytes,
 * rates in bit/s, times in picoseconds, all uint64_t.
 *
 *   UNITS_SIZE  "4000", "4KB" (1000), "4KiB" (1024), "16MB", "1GiB", "512B"
 *   UNITS_RATE  "400Gbps", "100Mbps", "1Tbps", "40e9" (bit/s), "100Gb/s"
 *   UNITS_TIME  "8us", "1.5ms", "100ns", "250ps", "2s"; a bare number is
 *               rejected (a unit is required) except "0"
 *
 * The option tables (core/opt.c) parse and print their values with units
 * through this module, and so does the allocator's MPSIM_MEM_LIMIT
 * (core/mem.c), which must not depend on the option tables.
 */
#ifndef MPSIM_CORE_UNITS_H
#define MPSIM_CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

enum units_kind { UNITS_SIZE, UNITS_RATE, UNITS_TIME };

/* Room for any value units_format writes, with its terminating NUL. */
#define UNITS_BUF 32

/* Parse text exactly (never through a double: a value that is not a whole
 * number of base units, "0.5ps" or "1.5B", is rejected, not rounded). Returns
 * MP_OK, or MP_EUSER with a sentence in e (e may be NULL) saying what was
 * expected; *out is written only on success. */
int units_parse(enum units_kind k, const char *text, uint64_t *out, struct mp_err *e);
/* The natural unit: the largest in which v is written with at most two
 * decimals ("400Gbps", "1.5us", "4KiB", "4001B"); what it writes parses back
 * to v. */
void units_format(enum units_kind k, uint64_t v, char *buf, size_t n);
/* What a kind of quantity is called in messages: "a size", "a rate", "a time". */
const char *units_noun(enum units_kind k);

#endif

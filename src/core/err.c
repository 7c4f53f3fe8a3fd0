/* err.c - user errors and panics; see err.h. */
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mp_errf(struct mp_err *e, int status, const char *fmt, ...)
{
	if (!e || e->status != MP_OK)
		return e ? e->status : status;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	e->status = status;
	return status;
}

void mp_err_clear(struct mp_err *e)
{
	e->status = MP_OK;
	e->msg[0] = '\0';
}

_Noreturn void mp_panic_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "mpsim: internal error at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nThis is a bug in mpsim, not in your experiment file.\n", stderr);
	fflush(stderr);
	/* exit status 3, as --help documents; MPSIM_ABORT=1 aborts instead, for a
	 * core dump, a debugger or a fuzzer */
	const char *ab = getenv("MPSIM_ABORT");
	if (ab && *ab && strcmp(ab, "0"))
		abort();
	_exit(3);
}

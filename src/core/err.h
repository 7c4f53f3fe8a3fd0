/* err.h - the two kinds of error, never mixed.
 *
 * A user's mistake (bad key, bad value, missing file, impossible topology) is
 * reported through struct mp_err: a status (MP_EUSER = exit status 2) and one
 * sentence naming file:line, the key and what was expected. Nothing runs after
 * it. A broken invariant inside the simulator calls MP_PANIC, which names the
 * source file:line and exits with status 3 (abort() instead when the
 * environment sets MPSIM_ABORT=1).
 */
#ifndef MPSIM_CORE_ERR_H
#define MPSIM_CORE_ERR_H

#include <stdarg.h>

enum { MP_OK = 0, MP_EUSER = 2, MP_EIO = 4 };

struct mp_err {
	int status;	/* MP_OK when no error */
	char msg[1024]; /* one sentence, no trailing newline */
};

/* Record an error (the first one wins) and return `status`. */
int mp_errf(struct mp_err *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void mp_err_clear(struct mp_err *e);

_Noreturn void mp_panic_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define MP_PANIC(...) mp_panic_at(__FILE__, __LINE__, __VA_ARGS__)
#define MP_ASSERT(cond)                                                                 \
	do {                                                                            \
		if (__builtin_expect(!(cond), 0))                                       \
			mp_panic_at(__FILE__, __LINE__, "assertion failed: %s", #cond); \
	} while (0)

#endif

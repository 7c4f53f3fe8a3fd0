/* test_err.c - an internal error (MP_PANIC, a broken MP_ASSERT) ends the
 * process with exit status 3, as `mpsim --help` documents (it aborted, 134,
 * before); MPSIM_ABORT=1 makes it abort for a core dump or a fuzzer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/err.h"

/* The wait status of a child that asserts something false. */
static int child_status(const char *abort_env)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (abort_env)
			setenv("MPSIM_ABORT", abort_env, 1);
		else
			unsetenv("MPSIM_ABORT");
		if (freopen("/dev/null", "w", stderr) == NULL)
			_exit(99);
		int one = 1;
		MP_ASSERT(one == 2);
		_exit(0);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static void test_panic_exits_3(void **state)
{
	(void)state;
	int st = child_status(NULL);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
	st = child_status("0");
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
}

static void test_panic_aborts_on_request(void **state)
{
	(void)state;
	int st = child_status("1");
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGABRT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_panic_exits_3),
		cmocka_unit_test(test_panic_aborts_on_request),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

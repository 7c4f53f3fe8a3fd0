/* replay.c - runs the value fuzz target (values.c) over saved experiment
 * files without libFuzzer: the CI replay of fuzz/corpus/, deterministic and
 * a few seconds long.
 *
 *   fuzz_replay [--mutate N] FILE...
 *   fuzz_replay --emit N FILE      print mutant N of FILE (to save it as a case)
 *
 * Each file must load, build and run to status 0 or 2 within 20 s of wall
 * time; one that begins with "# expect: N text" must end with status N and a
 * message holding `text`. --mutate N also runs N mutants of each file
 * (mutator seeds 1..N), so the mutator itself is exercised. Prints one line
 * per file; exits 1 when a check fails. A panic aborts the process: the file
 * named last on stderr is the one.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/values.h"

static const char *current;

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "fuzz_replay: more than 20 s on ";
	if (write(2, m, sizeof m - 1) < 0 || write(2, current, strlen(current)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(1);
	_exit(1);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *s = malloc(cap);
	size_t k;
	while ((k = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += k;
		if (len + 1 == cap)
			s = realloc(s, cap *= 2);
	}
	fclose(f);
	s[len] = '\0';
	*n = len;
	return s;
}

/* One case: 0 when it meets its expectation. */
static int check(const char *name, const char *text, int want, const char *want_text)
{
	struct mp_err e = { 0 };
	current = name;
	alarm(20);
	int rc = fuzz_values_run(text, &e);
	alarm(0);
	int bad = rc != 0 && rc != 2;
	if (want >= 0)
		bad |= rc != want || (want_text && !strstr(e.msg, want_text));
	printf("%s %s: status %d%s%s\n", bad ? "FAIL" : "ok  ", name, rc, rc ? ": " : "",
	       rc ? e.msg : "");
	if (bad && want >= 0)
		printf("  expected status %d%s%s%s\n", want,
		       want_text ? " and a message with '" : "", want_text ? want_text : "",
		       want_text ? "'" : "");
	return bad;
}

int main(int argc, char **argv)
{
	int nbad = 0, mutants = 0, first = 1;
	if (argc == 4 && !strcmp(argv[1], "--emit")) {
		size_t n;
		char *text = slurp(argv[3], &n);
		if (!text)
			return 1;
		size_t cap = n * 2 + 4096;
		text = realloc(text, cap + 1);
		size_t k = fuzz_values_mutate((uint8_t *)text, n, cap, (unsigned)atoi(argv[2]));
		fwrite(text, 1, k, stdout);
		free(text);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--mutate")) {
		mutants = atoi(argv[2]);
		first = 3;
	}
	fuzz_values_init();
	signal(SIGALRM, on_alarm);
	for (int i = first; i < argc; i++) {
		size_t n;
		char *text = slurp(argv[i], &n);
		if (!text) {
			printf("FAIL %s: cannot read\n", argv[i]);
			nbad++;
			continue;
		}
		fprintf(stderr, "%s\n", argv[i]);
		int want = -1;
		char *want_text = NULL;
		if (!strncmp(text, "# expect: ", 10)) {
			want = atoi(text + 10);
			char *sp = strchr(text + 10, ' '), *nl = strchr(text, '\n');
			if (sp && nl && sp < nl) {
				want_text = strndup(sp + 1, (size_t)(nl - sp - 1));
			}
		}
		nbad += check(argv[i], text, want, want_text);
		free(want_text);
		for (int m = 1; m <= mutants; m++) {
			size_t cap = n * 2 + 4096;
			char *mt = malloc(cap + 1);
			memcpy(mt, text, n);
			size_t k = fuzz_values_mutate((uint8_t *)mt, n, cap, (unsigned)m);
			mt[k] = '\0';
			char nm[512];
			snprintf(nm, sizeof nm, "%s~%d", argv[i], m);
			nbad += check(nm, mt, -1, NULL);
			free(mt);
		}
		free(text);
	}
	fuzz_values_cleanup();
	if (nbad)
		printf("fuzz_replay: %d case(s) failed\n", nbad);
	return nbad ? 1 : 0;
}

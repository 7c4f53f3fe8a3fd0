/* simtest.h - shared helpers for tests that run whole simulations from a
 * YAML string. Header-only so each test executable stays standalone. */
#ifndef MPSIM_TESTS_SIMTEST_H
#define MPSIM_TESTS_SIMTEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "io/experiment.h"
#include "sim/run.h"

/* Run the experiment in `yaml`; fails the test on any load/build error. */
static inline void simtest_run(const char *yaml, struct run_result *r)
{
	struct experiment x;
	struct mp_err e = { 0 };
	struct sim s;
	if (exp_load_string(&x, yaml, "test.yaml", &e)) {
		fprintf(stderr, "load: %s\n", e.msg);
		fail();
	}
	if (sim_build(&s, &x, &e)) {
		fprintf(stderr, "build: %s\n", e.msg);
		fail();
	}
	sim_run(&s);
	sim_collect(&s, r);
	sim_free(&s);
	exp_free(&x);
}

static inline double simtest_max_slowdown(const struct run_result *r)
{
	double m = 0;
	for (size_t i = 0; i < r->nflows; i++)
		if (r->flows[i].slowdown > m)
			m = r->flows[i].slowdown;
	return m;
}

static inline simtime_t simtest_max_fct(const struct run_result *r)
{
	simtime_t m = 0;
	for (size_t i = 0; i < r->nflows; i++)
		if (r->flows[i].fct > m)
			m = r->flows[i].fct;
	return m;
}

#endif

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
#include <unistd.h>
#include <cmocka.h>

#include "core/time.h"
#include "io/experiment.h"
#include "sim/run.h"

/* Load, build and run the experiment in `yaml`, keeping the simulation for
 * the caller to inspect (its fabric, counters, flows); fails the test on any
 * load/build error. simtest_close frees both. */
static inline void simtest_open(const char *yaml, struct experiment *x, struct sim *s)
{
	struct mp_err e = { 0 };
	if (exp_load_string(x, yaml, "test.yaml", &e)) {
		fprintf(stderr, "load: %s\n", e.msg);
		fail();
	}
	if (sim_build(s, x, &e)) {
		fprintf(stderr, "build: %s\n", e.msg);
		fail();
	}
	sim_run(s);
}

static inline void simtest_close(struct experiment *x, struct sim *s)
{
	sim_free(s);
	exp_free(x);
}

/* Run the experiment in `yaml`; fails the test on any load/build error. */
static inline void simtest_run(const char *yaml, struct run_result *r)
{
	struct experiment x;
	struct sim s;
	simtest_open(yaml, &x, &s);
	sim_collect(&s, r);
	simtest_close(&x, &s);
}

/* Runs `yaml` twice and asserts the runs are the same: flows, events, and
 * every flow's FCT and retransmitted bytes; at least min_flows flows. */
static inline void simtest_assert_deterministic(const char *yaml, size_t min_flows)
{
	struct run_result a, b;
	simtest_run(yaml, &a);
	simtest_run(yaml, &b);
	assert_true(a.nflows > min_flows);
	assert_int_equal(a.nflows, b.nflows);
	assert_int_equal(a.events, b.events);
	for (size_t i = 0; i < a.nflows; i++) {
		assert_int_equal(a.flows[i].fct, b.flows[i].fct);
		assert_int_equal(a.flows[i].retx_bytes, b.flows[i].retx_bytes);
	}
	run_result_free(&a);
	run_result_free(&b);
}

/* A load balancer's determinism scenario: Web Search at 0.6 load for 300 us
 * over RoCEv2 on a lossless 4 x 4 leaf-spine of 8 hosts per leaf, switches
 * running `lb` (a flow-style mapping body, e.g. "type: conga"). */
#define SIMTEST_LB_DET_YAML(lb)                                                              \
	"seed: 9\n"                                                                          \
	"topology: {type: leaf_spine, hosts_per_leaf: 8, leaves: 4, spines: 4}\n"            \
	"switch: {mode: lossless, buffer: 12MB}\n"                                           \
	"transport: {type: roce}\n"                                                          \
	"lb: {" lb "}\n"                                                                     \
	"workload: {type: poisson, cdf: " MPSIM_SOURCE_DIR "/data/workloads/websearch.txt, " \
	"load: 0.6, duration: 300us}\n"

/* Write `text` to a temporary file named after `tag` and this process;
 * `path` (n bytes) receives its name. */
static inline void simtest_temp_file(char *path, size_t n, const char *tag, const char *text)
{
	snprintf(path, n, "/tmp/mpsim_test_%s_%d.csv", tag, (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "cannot write %s\n", path);
		fail();
	}
}

/* Store-and-forward FCT of one flow over `hops` links of equal rate and delay:
 * every packet through the first link back to back, the last packet across
 * the remaining hops, and the last ACK back. */
static inline simtime_t simtest_expected_fct(uint64_t bytes, uint64_t mtu, uint64_t ack,
					     uint64_t rate, simtime_t delay, int hops)
{
	uint64_t n = (bytes + mtu - 1) / mtu, last = bytes - (n - 1) * mtu;
	simtime_t t = 0;
	uint64_t rem = 0;
	for (uint64_t i = 0; i + 1 < n; i++)
		t += time_ser_exact(mtu, rate, &rem);
	t += time_ser_exact(last, rate, &rem);
	t += (simtime_t)(hops - 1) * time_ser_ps(last, rate) + (simtime_t)hops * delay;
	t += (simtime_t)hops * (time_ser_ps(ack, rate) + delay);
	return t;
}

/* The value of time series `name` sampled at t (ps); -1 when there is none. */
static inline double simtest_series_at(const struct run_result *r, const char *name, simtime_t t)
{
	for (size_t i = 0; i < r->ts.n; i++)
		if (r->ts.rows[i].t == t && !strcmp(r->ts.names[r->ts.rows[i].series], name))
			return r->ts.rows[i].value;
	return -1;
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

/* test_hermes.c - Hermes's defining behaviour (Zhang et al., SIGCOMM 2017):
 * timely yet cautious rerouting at the edge.
 *
 * A 20 MB flow crosses a 2x2 leaf-spine at 100 Gb/s (reference transport,
 * ECN-capable, marking from 10 KB to 50 KB of queue). Once it runs, the
 * downlink of the spine its path crosses is slowed:
 * - to 10 Gb/s for good: the path's RTT rises far above its base and its
 *   packets are ECN-marked, so the path is congested; the flow, now slow and
 *   past S bytes, moves to the other (probed, good) path;
 * - to 1 Gb/s for 50 us only: a single RTT spike (a queue above kmax, a
 *   window of marked packets) in an otherwise fast path; the flow stays,
 *   with the paper's RTT and ECN signals and with RTT alone.
 * And determinism: the same file and seed, the same flows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lb/hermes.h"
#include "net/fabric.h"
#include "net/port.h"
#include "net/switch.h"
#include "simtest.h"

static const char *yaml_fmt = "seed: 3\n"
			      "topology:\n"
			      "  type: leaf_spine\n"
			      "  hosts_per_leaf: 2\n"
			      "  leaves: 2\n"
			      "  spines: 2\n"
			      "switch:\n"
			      "  buffer: 32MB\n"
			      "  kmin: 10KB\n"
			      "  kmax: 50KB\n"
			      "  pmax: 1\n"
			      "transport:\n"
			      "  type: ref\n"
			      "  ecn: true\n"
			      "lb:\n"
			      "  type: hermes\n"
			      "  signals: %s\n"
			      "workload:\n"
			      "  type: flows_file\n"
			      "  file: %s\n"
			      "stop_time: 3ms\n";

static const char *flows = "src,dst,bytes,start\n"
			   "0,2,20MB,0\n";

struct outcome {
	int before, after; /* the flow's path before the change and at the end */
	uint32_t reroutes; /* moves after the change */
	uint64_t maxq;	   /* the slowed port's largest queue, bytes */
	int cls_during;	   /* how the sender saw the path 500 us into the change */
	int path_during;   /* the flow's path then */
};

/* Runs to 300 us, slows the flow's spine downlink to `rate` for `len` (0:
 * for good), and runs to 3 ms. */
static void run(const char *signals, uint64_t rate, simtime_t len, struct outcome *o)
{
	char path[128], yaml[1024];
	simtest_temp_file(path, sizeof path, "hermes", flows);
	snprintf(yaml, sizeof yaml, yaml_fmt, signals, path);
	struct experiment x;
	struct mp_err e = { 0 };
	struct sim s;
	assert_int_equal(exp_load_string(&x, yaml, "test.yaml", &e), MP_OK);
	assert_int_equal(sim_build(&s, &x, &e), MP_OK);
	struct fabric *f = &s.fab;
	const simtime_t t1 = 300 * PS_PER_US;
	evq_run(&s.q, t1);
	o->before = hermes_flow_path(f, 0);
	assert_true(o->before >= 0);
	uint32_t r0 = hermes_flow_reroutes(f, 0);
	/* the spine path `before` crosses: member (path mod n) at leaf0 */
	struct sw *leaf0 = (struct sw *)fab_find_node(f, "leaf0");
	struct sw *leaf1 = (struct sw *)fab_find_node(f, "leaf1");
	const struct nhset *nh = &leaf0->route[leaf1->tor_idx];
	struct port *up = &leaf0->node.ports[f->nh_ports[nh->off + (unsigned)o->before % nh->n]];
	char name[64];
	snprintf(name, sizeof name, "%s-leaf1", up->peer_node->name);
	uint32_t link = fab_find_link(f, name);
	assert_true(link != UINT32_MAX);
	struct port *down = NULL;
	for (uint16_t i = 0; i < up->peer_node->nports; i++)
		if (up->peer_node->ports[i].peer_node == &leaf1->node)
			down = &up->peer_node->ports[i];
	assert_non_null(down);
	fab_link_set_rate(f, link, rate);
	if (len) {
		evq_run(&s.q, t1 + len);
		fab_link_set_rate(f, link, 100000000000ULL);
	}
	evq_run(&s.q, t1 + 500 * PS_PER_US);
	o->cls_during = hermes_path_class(f, 0, leaf1->tor_idx, (uint32_t)o->before);
	o->path_during = hermes_flow_path(f, 0);
	evq_run(&s.q, 3000 * PS_PER_US);
	o->after = hermes_flow_path(f, 0);
	o->reroutes = hermes_flow_reroutes(f, 0) - r0;
	o->maxq = down->max_qbytes;
	printf("signals %s, %llu bit/s for %.0f us: path %d -> %d, %u reroutes, class %d, "
	       "max queue %llu B\n",
	       signals, (unsigned long long)rate, time_to_us(len), o->before, o->after, o->reroutes,
	       o->cls_during, (unsigned long long)o->maxq);
	sim_free(&s);
	exp_free(&x);
	unlink(path);
}

static void test_moves_off_raised_rtt(void **state)
{
	(void)state;
	struct outcome o;
	run("rtt_ecn", 10000000000ULL, 0, &o);
	assert_true(o.path_during != o.before); /* within 500 us */
	assert_true(o.reroutes >= 1);
	assert_true(o.after != o.before);
}

static void test_stays_through_spike(void **state)
{
	(void)state;
	const char *sig[] = { "rtt_ecn", "rtt" };
	for (int i = 0; i < 2; i++) {
		struct outcome o;
		run(sig[i], 1000000000ULL, 50 * PS_PER_US, &o);
		assert_true(o.maxq > 50000); /* the spike was real: past kmax */
		assert_int_equal(o.cls_during, HERMES_GOOD);
		assert_int_equal(o.reroutes, 0);
		assert_int_equal(o.after, o.before);
	}
}

static const char *det_yaml = SIMTEST_LB_DET_YAML("type: hermes");

static void test_deterministic(void **state)
{
	(void)state;
	simtest_assert_deterministic(det_yaml, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moves_off_raised_rtt),
		cmocka_unit_test(test_stays_through_spike),
		cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

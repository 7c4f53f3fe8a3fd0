/* test_intra.c - the intra-node fabric: a message between two GPUs of one
 * server takes exactly its serialisation at the GPU's port rate plus the
 * fabric's latency and no NIC carries a byte of it; transfers share GPU ports
 * max-min fairly; ring channels spread a server's inter-node traffic over all
 * its GPUs' NICs; the `servers` placement gives jobs whole servers. */
#include "simtest.h"

#include "ccl/intra.h"
#include "core/mem.h"
#include "workload/collective.h"

/* Rate 1 Tb/s, latency 700 ns: a message of b bytes alone takes
 * time_ser_ps(b, 1e12) + 700 ns = 8 b ps + 700 ns. */
#define INTRA_YAML(coll)                                                                    \
	"name: t\n"                                                                         \
	"topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 2, spines: 2, host_rate: " \
	"400Gbps, fabric_rate: 400Gbps}\n"                                                  \
	"server: {gpus: 4, rate: 1Tbps, latency: 700ns}\n"                                  \
	"transport: {type: roce}\n"                                                         \
	"ccl: {type: stripe, qps: 4}\n"                                                     \
	"collective: " coll "\n"

/* Two GPUs of server 0 swap 1 MB each (AlltoAll of 2 MB on hosts 1 and 2):
 * the two transfers use different ports, so each runs alone: delivered and
 * acknowledged at 8 us + 700 ns exactly, the ideal; the NICs, ToRs and
 * spines carry nothing. */
static void test_alone(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run(INTRA_YAML("{type: alltoall, size: 2MB, placement: list, hosts: [1, 2]}"), &r);
	assert_int_equal(r.nflows, 2);
	const simtime_t want = 8 * PS_PER_US + 700 * PS_PER_NS;
	assert_int_equal(
	    intra_ideal(&(struct intra_cfg){ 4, 1000000000000ULL, 700 * PS_PER_NS }, 1000000),
	    want);
	for (size_t i = 0; i < r.nflows; i++) {
		assert_true(r.flows[i].completed);
		assert_int_equal(r.flows[i].bytes, 1000000);
		assert_int_equal(r.flows[i].delivered, want);
		assert_int_equal(r.flows[i].fct, want);
		assert_int_equal(r.flows[i].ideal_fct, want);
	}
	assert_int_equal(r.net.tx_bytes, 0);
	for (size_t i = 0; i < r.nports; i++)
		assert_int_equal(r.ports[i].tx_bytes, 0);
	run_result_free(&r);
}

/* AlltoAll of 3 MB among GPUs 0..2 of a server: every GPU sends 1 MB to each
 * of two peers at once and receives two, so every port carries two transfers
 * at half rate: all six arrive at 2 x 8 us + 700 ns. Between servers (GPUs 0
 * and 4) the same messages cross the NICs. */
static void test_shared_and_cross(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run(INTRA_YAML("{type: alltoall, size: 3MB, placement: list, hosts: [0, 1, 2]}"),
		    &r);
	assert_int_equal(r.nflows, 6);
	for (size_t i = 0; i < r.nflows; i++)
		assert_int_equal(r.flows[i].delivered, 16 * PS_PER_US + 700 * PS_PER_NS);
	assert_int_equal(r.net.tx_bytes, 0);
	run_result_free(&r);
	simtest_run(INTRA_YAML("{type: alltoall, size: 2MB, placement: list, hosts: [0, 4]}"), &r);
	uint64_t nic = 0;
	for (size_t i = 0; i < r.nports; i++)
		if (r.ports[i].group == G_HOST_UP)
			nic += r.ports[i].tx_bytes;
	assert_true(nic >= 2000000); /* both messages and their headers and ACKs */
	assert_true(r.flows[0].fct > 8 * PS_PER_US * 2); /* at 400 Gb/s, not 1 Tb/s */
	run_result_free(&r);
}

/* `warmup: 1, iterations: 2` runs three iterations and records the last two
 * (iterations 1 and 2), each the 16.7 us of the case above. */
static void test_warmup(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run(INTRA_YAML("{type: alltoall, size: 3MB, placement: list, hosts: [0, 1, 2], "
			       "warmup: 1, iterations: 2}"),
		    &r);
	assert_int_equal(r.nflows, 18);
	assert_int_equal(r.ncolls, 2);
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(r.colls[i].iter, i + 1);
		assert_true(r.colls[i].completed);
		assert_int_equal(r.colls[i].cct, 16 * PS_PER_US + 700 * PS_PER_NS);
	}
	run_result_free(&r);
}

/* Max-min by hand: GPU 0 sends to 1, 2 and 3 (its port gives each R/3);
 * GPU 3 sends to 1, whose port has R - R/3 left for it: 2R/3. All messages
 * are 1.2 MB: 0 -> x end at 3 x 9.6 us; 3 -> 1 moves at 2R/3 while they run
 * and would end at 14.4 us, first. After it, nothing changes for the rest. */
static simtime_t done_at[8];
static struct evq *done_q;
static void on_done(void *ctx, uint32_t id)
{
	(void)ctx;
	done_at[id] = done_q->now;
}

static void test_maxmin(void **state)
{
	(void)state;
	struct evq q;
	struct intra f;
	struct intra_cfg cfg = { .gpus = 4, .rate_bps = 3000000000000ULL, .latency = 0 };
	evq_init(&q);
	intra_init(&f, &q, &cfg, 8, 1);
	f.done = on_done;
	done_q = &q;
	intra_send(&f, 0, 1, 3600000, 0);
	intra_send(&f, 0, 2, 3600000, 1);
	intra_send(&f, 0, 3, 3600000, 2);
	intra_send(&f, 3, 1, 3600000, 3);
	intra_send(&f, 4, 5, 3600000, 4); /* server 1: alone, 9.6 us */
	evq_run(&q, SIMTIME_MAX);
	/* 3.6 MB at 3 Tb/s = 9.6 us; at 1 Tb/s 28.8 us; at 2 Tb/s 14.4 us */
	assert_int_equal(done_at[3], 14400 * PS_PER_NS);
	for (int i = 0; i < 3; i++)
		assert_int_equal(done_at[i], 28800 * PS_PER_NS);
	assert_int_equal(done_at[4], 9600 * PS_PER_NS);
	intra_free(&f);
	evq_free(&q);
}

static void gen(const char *type, uint32_t n, uint32_t gpus, uint32_t nhosts, uint64_t channels,
		int placement, uint64_t jobs, struct flow_list *fl, struct coll_jobs *J)
{
	struct coll_params p;
	struct mp_err e = { 0 };
	opt_set_defaults(coll_opts, &p);
	for (int i = 0; coll_type_names[i]; i++)
		if (!strcmp(coll_type_names[i], type))
			p.type = i;
	p.size = 8000000;
	p.ranks = n;
	p.jobs = jobs;
	p.channels = channels;
	p.placement = placement;
	struct wl_env env = { .nhosts = nhosts, .gpus_per_server = gpus, .seed = 3 };
	memset(fl, 0, sizeof *fl);
	assert_int_equal(coll_generate(&p, &env, fl, J, &e), MP_OK);
	assert_int_equal(flow_list_check_dag(fl, &e), MP_OK);
}

/* A ring AllGather on 2 servers of 4 GPUs with 4 channels: ring c leaves a
 * server from GPU c-1 and enters the next at GPU c, so every GPU sends the
 * same inter-server bytes (one ring's) and every ring its size/4; inside a
 * server a GPU sends only to the next GPU of its ring. One channel keeps the
 * plain ring: two GPUs (3 and 7) carry all inter-server bytes. */
static void test_channels(void **state)
{
	(void)state;
	struct flow_list fl;
	struct coll_jobs J;
	gen("allgather", 8, 4, 8, 4, PLACE_PACKED, 1, &fl, &J);
	uint64_t cross[8] = { 0 }, total = 0;
	for (size_t i = 0; i < fl.n; i++) {
		const struct flow_spec *f = &fl.v[i];
		total += f->bytes;
		if (f->src / 4 != f->dst / 4)
			cross[f->src] += f->bytes;
		else
			assert_true(f->dst % 4 == (f->src + 1) % 4);
	}
	assert_int_equal(total, 8 * 8000000ULL * 7 / 8);
	for (int h = 0; h < 8; h++) /* 7 steps of 2 MB / 8 per ring */
		assert_int_equal(cross[h], 7 * 250000ULL);
	flow_list_free(&fl);
	coll_jobs_free(&J);
	gen("allgather", 8, 4, 8, 1, PLACE_PACKED, 1, &fl, &J);
	memset(cross, 0, sizeof cross);
	for (size_t i = 0; i < fl.n; i++)
		if (fl.v[i].src / 4 != fl.v[i].dst / 4)
			cross[fl.v[i].src] += fl.v[i].bytes;
	for (int h = 0; h < 8; h++)
		assert_int_equal(cross[h], h % 4 == 3 ? 7 * 1000000ULL : 0);
	flow_list_free(&fl);
	coll_jobs_free(&J);
}

/* `servers`: 2 jobs of 6 ranks on 4 servers of 4 GPUs take two whole servers
 * each (ranks 0-3 on one, 4-5 on GPUs 0-1 of another), no server shared. */
static void test_servers_placement(void **state)
{
	(void)state;
	struct flow_list fl;
	struct coll_jobs J;
	gen("allreduce", 6, 4, 16, 1, PLACE_SERVERS, 2, &fl, &J);
	bool used[4] = { false };
	for (uint32_t j = 0; j < 2; j++) {
		const uint32_t *h = &J.hosts[j * 6];
		uint32_t s0 = h[0] / 4, s1 = h[4] / 4;
		assert_true(s0 != s1 && !used[s0] && !used[s1]);
		used[s0] = used[s1] = true;
		for (uint32_t r = 0; r < 6; r++)
			assert_int_equal(h[r], (r < 4 ? s0 : s1) * 4 + r % 4);
	}
	flow_list_free(&fl);
	coll_jobs_free(&J);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alone),	 cmocka_unit_test(test_shared_and_cross),
		cmocka_unit_test(test_warmup),	 cmocka_unit_test(test_maxmin),
		cmocka_unit_test(test_channels), cmocka_unit_test(test_servers_placement),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

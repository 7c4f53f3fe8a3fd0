/* test_mprdma.c - MP-RDMA (src/transport/mprdma.c) rules that have a source
 * (see the file's header): OOO-aware path selection prunes a slow virtual
 * path (UDMP III-D), and the receiver's fixed L-packet bitmap discards and
 * NACKs what lies beyond it, with every byte still delivered exactly once
 * (UDMP III-D). Two spines, the `entropy` balancer (entropy e takes spine
 * e mod 2, data and ACK alike) and paths: 2, so the two VPs are the two
 * spines; the link leaf0-spine1 is made slower. */
#include "simtest.h"

#include <unistd.h>

static char *flows_file(void)
{
	static char p[256];
	snprintf(p, sizeof p, "/tmp/mpsim_test_mprdma_%d.csv", (int)getpid());
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "src,dst,bytes,start\n0,1,4MB,0us\n");
	fclose(f);
	return p;
}

static const struct port_rec *port(const struct run_result *r, const char *name)
{
	for (size_t i = 0; i < r->nports; i++)
		if (!strcmp(r->ports[i].name, name))
			return &r->ports[i];
	fail_msg("no port %s", name);
	return NULL;
}

struct two_vp {
	double slow_share; /* of the bytes leaf0 sent up, the slow spine's */
	uint64_t retx, dup, drops;
};

/* One 4 MB flow over the two VPs, leaf0-spine1 `delay_us` longer each way;
 * `opts` is appended to the transport's options. */
static void two_vp(const char *opts, unsigned delay_us, struct two_vp *out)
{
	char *ff = flows_file();
	char yaml[1024];
	snprintf(yaml, sizeof yaml,
		 "seed: 1\n"
		 "topology: {type: leaf_spine, hosts_per_leaf: 1, leaves: 2, spines: 2, "
		 "host_rate: 100Gbps, fabric_rate: 100Gbps}\n"
		 "lb: {type: entropy}\n"
		 "transport: {type: mprdma, paths: 2, p: 0%s}\n"
		 "workload: {type: flows_file, file: %s}\n"
		 "events:\n"
		 "  - {at: 0us, link: leaf0-spine1, action: delay, value: %uus}\n",
		 opts, ff, delay_us);
	struct run_result r;
	simtest_run(yaml, &r);
	remove(ff);
	assert_int_equal(r.ncompleted, 1);
	assert_int_equal(r.flows[0].rcvd_bytes, 4000000);
	assert_true(r.flows[0].dup_bytes <= r.flows[0].retx_bytes);
	double fast = (double)port(&r, "leaf0-spine0")->tx_bytes;
	double slow = (double)port(&r, "leaf0-spine1")->tx_bytes;
	out->slow_share = slow / (fast + slow);
	out->retx = r.flows[0].retx_bytes;
	out->dup = r.flows[0].dup_bytes;
	out->drops = r.net.drops_buffer;
	print_message("opts '%s', slow spine +%u us: %.1f%% of bytes on it, %llu B retransmitted, "
		      "%llu B duplicate, FCT %.1f us\n",
		      opts, delay_us, 100 * out->slow_share, (unsigned long long)out->retx,
		      (unsigned long long)out->dup, r.flows[0].fct / 1e6);
	run_result_free(&r);
}

/* A VP 20 us slower each way returns ACKs far more than Delta = 32 PSNs
 * below snd_ooh: each such ACK cuts cwnd by one and releases nothing, so
 * after the sprayed first window the slow spine carries (almost) nothing.
 * With Delta and L out of reach the same VP keeps its ACK clock. */
static void test_ooo_aware_path_selection(void **state)
{
	(void)state;
	struct two_vp on, off;
	two_vp("", 20, &on);
	two_vp(", Delta: 50000, L: 100000", 20, &off);
	assert_true(on.slow_share < 0.03);
	assert_true(off.slow_share > 0.10);
	assert_int_equal(off.retx, 0);
}

/* A 16-packet bitmap (Delta 8 below it) and a VP 20 us slower each way: the
 * half of the sprayed first window that takes the slow VP leaves holes, the
 * fast VP runs more than L past them, and those packets are discarded and
 * NACKed, then resent; no switch drops anything, yet every byte arrives
 * exactly once (checked in two_vp). With L and Delta out of reach nothing is
 * resent (test_ooo_aware_path_selection). */
static void test_bitmap_discard(void **state)
{
	(void)state;
	struct two_vp small;
	two_vp(", L: 16, Delta: 8", 20, &small);
	assert_int_equal(small.drops, 0);
	assert_true(small.retx > 0);
	assert_true(small.retx < 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ooo_aware_path_selection),
		cmocka_unit_test(test_bitmap_discard),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

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

/* A 32 -> 1 incast of 2 MB that overflows a 4 MB buffer: the first windows
 * (about a BDP each) queue up faster than srtt + 4 rttvar grows, so timeouts
 * fire while the packets are still queued. Each timeout must back off
 * (mprdma.c, RFC 6298 5.5): without it every timeout sent another window on top
 * of the queue, 4.9x the dropped bytes were resent and the incast took 1.50x
 * its ideal. Ideal: 32 x 2 MB back to back on the receiver's 100 Gb/s link. */
static void test_incast_timeout_backoff(void **state)
{
	(void)state;
	struct run_result r;
	simtest_run("seed: 1\n"
		    "topology: {type: star, hosts: 33, link_rate: 100Gbps, link_delay: 3us}\n"
		    "switch: {buffer: 4MB, kmin: 36KB, kmax: 36KB, pmax: 1}\n"
		    "transport: {type: mprdma, mtu: 1000B}\n"
		    "workload: {type: incast, senders: 32, receiver: 0, size: 2MB}\n",
		    &r);
	assert_int_equal(r.ncompleted, 32);
	uint64_t retx = 0;
	simtime_t last = 0;
	for (size_t i = 0; i < r.nflows; i++) {
		assert_int_equal(r.flows[i].rcvd_bytes, 2000000);
		retx += r.flows[i].retx_bytes;
		if (r.flows[i].finish > last)
			last = r.flows[i].finish;
	}
	double ideal = 32 * 2e6 * 8 / 100e9, fct = (double)last / PS_PER_S;
	double dropped = (double)r.net.drops_buffer * 1000;
	print_message("32 -> 1: last FCT %.3f ms (ideal %.3f), %llu drops, %.1f MB resent\n",
		      fct * 1e3, ideal * 1e3, (unsigned long long)r.net.drops_buffer,
		      (double)retx / 1e6);
	assert_true(r.net.drops_buffer > 0);
	assert_true(fct < 1.25 * ideal);
	assert_true((double)retx < 2.5 * dropped);
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ooo_aware_path_selection),
		cmocka_unit_test(test_bitmap_discard),
		cmocka_unit_test(test_incast_timeout_backoff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_stream.c - long-lived connections (stream connections, a queue pair
 * of the collective layer): every transport that carries them keeps one PSN
 * space and one congestion state across messages, pipelines messages posted
 * back to back, goes idle and resumes, and reports each message's receiver
 * and sender completion in order. */
#include "simtest.h"

#include "core/time.h"
#include "transport/conn.h"
#include "transport/tp_world.h"

#define MAXMSG 64

struct srec {
	struct sim s;
	struct experiment x;
	struct conn *c;
	uint32_t nposted, nrx, ntx;
	simtime_t posted[MAXMSG], rx[MAXMSG], tx[MAXMSG];
	uint64_t bytes[MAXMSG];
	bool order_ok;
	/* messages to post later: at[i], bytes_at[i] */
	uint32_t nlater;
	simtime_t later_at[MAXMSG];
	uint64_t later_bytes[MAXMSG];
};

static void on_msg(void *ctx, struct conn *c, uint32_t tag, bool rx)
{
	struct srec *r = ctx;
	if (c != r->c)
		return; /* the workload's own flow */
	if (rx) {
		r->order_ok &= tag == r->nrx && r->rx[tag] == 0;
		r->rx[tag] = tp_now(c);
		r->nrx++;
	} else {
		r->order_ok &= tag == r->ntx && r->rx[tag] != 0;
		r->tx[tag] = tp_now(c);
		r->ntx++;
	}
}

static void post_ev(void *obj, uint64_t arg)
{
	struct srec *r = obj;
	r->posted[r->nposted] = r->s.q.now;
	r->bytes[r->nposted] = arg;
	tp_post(r->c, arg, r->nposted);
	r->nposted++;
}

/* A dumbbell of two hosts at 100 Gb/s (a 50 Gb/s bottleneck when `slow`),
 * `transport` as a YAML flow mapping, a stream connection h0 -> h1. */
static void stream_build(struct srec *r, const char *transport, bool slow)
{
	char yaml[1024];
	struct mp_err e = { 0 };
	memset(r, 0, sizeof *r);
	r->order_ok = true;
	/* the workload's one flow runs between two other hosts and is over
	 * long before the stream's traffic matters */
	snprintf(yaml, sizeof yaml,
		 "topology: {type: dumbbell, left: 2, right: 2, host_rate: 100Gbps, "
		 "bottleneck_rate: %s}\n"
		 "switch: {buffer: 16MB, kmin: 100KB, kmax: 400KB}\n"
		 "transport: %s\n"
		 "workload: {type: incast, senders: 1, receiver: 3, size: 4KB}\n",
		 slow ? "50Gbps" : "100Gbps", transport);
	if (exp_load_string(&r->x, yaml, "test.yaml", &e) || sim_build(&r->s, &r->x, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		fail();
	}
	r->s.w.on_msg = on_msg;
	r->s.w.ctx = r;
	r->c = tp_stream_add(&r->s.w, 0, 2, 0);
}

static void stream_post_at(struct srec *r, simtime_t at, uint64_t bytes)
{
	evq_at(&r->s.q, &r->s.evs, at, post_ev, r, bytes);
}

static void stream_free(struct srec *r)
{
	sim_free(&r->s);
	exp_free(&r->x);
}

static const char *const transports[] = {
	"{type: ref, window: 150KB}",
	"{type: strack}",
	"{type: roce, preset: hpcc}",
	"{type: roce, preset: paper, qps: 4, ack_interval: 4}",
	"{type: udmp}",
	"{type: mprdma}",
	"{type: timely}",
	NULL,
};

/* 16 messages of 1 MB posted at once on an idle 100 Gb/s path: they go back
 * to back (no round trip between messages), complete in order at the
 * receiver then the sender, and the last one is acknowledged within 3% of
 * the ideal time of 16 MB on the path. */
static void test_pipelined(void **state)
{
	(void)state;
	for (const char *const *t = transports; *t; t++) {
		struct srec r;
		stream_build(&r, *t, false);
		for (int i = 0; i < 16; i++)
			stream_post_at(&r, 0, 1000000);
		sim_run(&r.s);
		assert_int_equal(r.nrx, 16);
		assert_int_equal(r.ntx, 16);
		assert_true(r.order_ok);
		assert_int_equal(r.c->rcvd_bytes, 16000000);
		assert_true(r.c->idle);
		assert_false(r.c->done);
		simtime_t ideal = tp_ideal_fct(r.c, 16000000);
		double ratio = (double)r.tx[15] / (double)ideal;
		printf("%s: 16 x 1MB acknowledged at %.2f us, ideal %.2f us (x%.3f)\n", *t,
		       time_to_us(r.tx[15]), time_to_us(ideal), ratio);
		assert_true(ratio < 1.03);
		for (int i = 0; i < 16; i++)
			assert_true(r.rx[i] <= r.tx[i]);
		stream_free(&r);
	}
}

/* Messages posted after the connection went idle, and while it is busy:
 * every one completes and the byte counts add up; the PSN space continues. */
static void test_idle_resume(void **state)
{
	(void)state;
	for (const char *const *t = transports; *t; t++) {
		struct srec r;
		stream_build(&r, *t, true);
		stream_post_at(&r, 0, 300000);
		stream_post_at(&r, (500 * PS_PER_US), 5000); /* after idle */
		stream_post_at(&r, (500 * PS_PER_US), 1);    /* a one-byte message */
		stream_post_at(&r, (1000 * PS_PER_US), 2000000);
		stream_post_at(&r, (1010 * PS_PER_US), 777777); /* while busy */
		sim_run(&r.s);
		assert_int_equal(r.nrx, 5);
		assert_int_equal(r.ntx, 5);
		assert_true(r.order_ok);
		assert_int_equal(r.c->rcvd_bytes, 300000 + 5000 + 1 + 2000000 + 777777);
		assert_int_equal(r.c->acked_bytes, 300000 + 5000 + 1 + 2000000 + 777777);
		assert_true(r.tx[0] < (500 * PS_PER_US));
		assert_true(r.rx[1] > (500 * PS_PER_US));
		assert_int_equal(r.c->npkts, tp_npkts(r.c, 300000) + tp_npkts(r.c, 5000) + 1 +
						 tp_npkts(r.c, 2000000) + tp_npkts(r.c, 777777));
		stream_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipelined),
		cmocka_unit_test(test_idle_resume),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_pool.c - pool reuse (a freed object is handed out again), growth over
 * many chunks, live/peak counts, 64-byte objects (packets) one cache line
 * each; packet rings (FIFO across growth and wrap, the capacity carried in
 * the slots' address); and RNG reproducibility per stream. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/mem.h"
#include "core/pool.h"
#include "core/rng.h"
#include "net/pring.h"
#include <string.h>

static void test_pool_reuse(void **state)
{
	(void)state;
	struct pool p;
	pool_init(&p, 64, 16);
	void *a = pool_get(&p);
	void *b = pool_get(&p);
	assert_ptr_not_equal(a, b);
	assert_int_equal(p.live, 2);
	pool_put(&p, a);
	assert_int_equal(p.live, 1);
#ifndef MPSIM_POOL_DEBUG
	/* LIFO free list: the block just freed comes back first */
	assert_ptr_equal(pool_get(&p), a);
#else
	a = pool_get(&p);
#endif
	pool_put(&p, a);
	pool_put(&p, b);
	assert_int_equal(p.live, 0);
	assert_int_equal(p.peak, 2);
	pool_destroy(&p);
}

static void test_pool_growth(void **state)
{
	(void)state;
	struct pool p;
	pool_init(&p, 40, 8);
	void *objs[1000];
	for (int i = 0; i < 1000; i++) {
		objs[i] = pool_get(&p);
		memset(objs[i], i & 0xff, 40); /* every block is usable and distinct */
	}
	for (int i = 0; i < 1000; i++)
		assert_int_equal(((unsigned char *)objs[i])[39], i & 0xff);
	assert_int_equal(p.live, 1000);
	for (int i = 0; i < 1000; i++)
		pool_put(&p, objs[i]);
	/* a second round needs no new chunk */
	uint64_t chunks = p.chunks_n;
	for (int i = 0; i < 1000; i++)
		objs[i] = pool_get(&p);
	assert_int_equal(p.chunks_n, chunks);
	for (int i = 0; i < 1000; i++)
		pool_put(&p, objs[i]);
	pool_destroy(&p);
}

/* A 64-byte object fills one cache line, not parts of two: a pool's chunks
 * are aligned (bench/notes/2026-11-25-packets-across-two-lines.md). */
static void test_pool_lines(void **state)
{
	(void)state;
#ifndef MPSIM_POOL_DEBUG /* there every get is a malloc */
	struct pool p;
	pool_init(&p, 64, 100);
	void *objs[300];
	for (int i = 0; i < 300; i++) {
		objs[i] = pool_get(&p);
		assert_int_equal((uintptr_t)objs[i] % 64, 0);
	}
	for (int i = 0; i < 300; i++)
		pool_put(&p, objs[i]);
	pool_destroy(&p);
#endif
}

static void test_rng_streams(void **state)
{
	(void)state;
	struct mp_rng a, b, c, d;
	rng_init(&a, 42, RNG_HOST, 7);
	rng_init(&b, 42, RNG_HOST, 7);
	rng_init(&c, 42, RNG_HOST, 8);
	rng_init(&d, 43, RNG_HOST, 7);
	int same_c = 0, same_d = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = rng_next(&a);
		assert_int_equal(x, rng_next(&b));
		same_c += x == rng_next(&c);
		same_d += x == rng_next(&d);
	}
	assert_int_equal(same_c, 0);
	assert_int_equal(same_d, 0);
	/* rng_below is unbiased enough: 6 buckets, 600k draws, each within 1% */
	uint64_t cnt[6] = { 0 };
	for (int i = 0; i < 600000; i++)
		cnt[rng_below(&a, 6)]++;
	for (int i = 0; i < 6; i++)
		assert_true(cnt[i] > 99000 && cnt[i] < 101000);
	double sum = 0;
	for (int i = 0; i < 100000; i++) {
		double u = rng_u01(&a);
		assert_true(u >= 0 && u < 1);
		sum += u;
	}
	assert_true(sum / 100000 > 0.495 && sum / 100000 < 0.505);
}

static void test_mem_accounting(void **state)
{
	(void)state;
	uint64_t before = mp_mem_live();
	void *p = mp_malloc(1000);
	assert_int_equal(mp_mem_live(), before + 1000);
	p = mp_realloc(p, 5000);
	assert_int_equal(mp_mem_live(), before + 5000);
	assert_true(mp_mem_peak() >= before + 5000);
	mp_free(p);
	assert_int_equal(mp_mem_live(), before);
}

/* A ring is FIFO however pushes and pops interleave: it grows while wrapped
 * (head past slot 0), its capacity doubles from 8, its slots stay 64-byte
 * aligned with the capacity in their address's low bits, and pring_at and
 * pring_head_slot name the entries in order. Entries are stand-ins with every
 * part of a pq_ent set (a size in the top bits, the flags in the low ones),
 * which the ring must keep whole. */
static pq_ent ent(uint32_t i)
{
	return (uint64_t)(i * 7u + 1u) << 48 | (uint64_t)(i + 1u) << 4 | (i & (PQ_ECT | PQ_CE));
}

static void test_pring_fifo(void **state)
{
	(void)state;
	struct pring r;
	memset(&r, 0, sizeof r);
	assert_int_equal(pring_cap(&r), 0);
	uint32_t in = 0, out = 0;
	for (int round = 0; round < 40; round++) {
		/* push more than pop each round, so the ring fills while wrapped */
		for (int i = 0; i < 3 * round + 5 && in < 5000; i++)
			pring_push(&r, ent(in++));
		assert_int_equal(r.n, in - out);
		assert_true((pring_cap(&r) & (pring_cap(&r) - 1)) == 0 && pring_cap(&r) >= r.n);
		assert_true(pring_cap(&r) >= 8);
		assert_int_equal((uintptr_t)pring_slots(&r) % 64, 0);
		for (uint32_t i = 0; i < r.n; i++)
			assert_true(pring_at(&r, i) == ent(out + i));
		assert_true(*pring_head_slot(&r) == ent(out));
		for (int i = 0; i < 2 * round + 3 && r.n; i++)
			assert_true(pring_pop(&r) == ent(out++));
	}
	assert_true(pring_cap(&r) >= 512); /* it grew through several doublings */
	while (r.n)
		assert_true(pring_pop(&r) == ent(out++));
	assert_int_equal(out, in);
	pring_free(&r);
	assert_int_equal(pring_cap(&r), 0);
}

/* An entry gives back the address and the size it was made of, whatever its
 * flags, for addresses up to the 2^48 that pool objects stay below, and for
 * the objects of a pool of packet-sized objects with a load balancer's
 * fields (88 bytes: 16-byte aligned, not 64). */
static void test_pq_ent(void **state)
{
	(void)state;
	const uint64_t addr[] = { 16, 0x7fffdeadbee0ull, 0xfffffffffff0ull };
	const uint32_t size[] = { 0, 64, 4096, 65535 };
	for (size_t a = 0; a < sizeof addr / sizeof addr[0]; a++)
		for (size_t z = 0; z < sizeof size / sizeof size[0]; z++)
			for (unsigned fl = 0; fl < 4; fl++) {
				pq_ent e = addr[a] | (uint64_t)size[z] << 48 | fl;
				assert_true((uintptr_t)pq_pkt(e) == addr[a]);
				assert_int_equal(pq_size(e), size[z]);
				assert_int_equal(e & (PQ_ECT | PQ_CE), fl);
			}
	struct pool p;
	pool_init(&p, 88, 64);
	static void *k[500];
	for (int i = 0; i < 500; i++) {
		k[i] = pool_get(&p);
		pq_ent e = (uint64_t)(uintptr_t)k[i] | (uint64_t)4096 << 48 | PQ_CE;
		assert_ptr_equal(pq_pkt(e), k[i]);
	}
	for (int i = 0; i < 500; i++)
		pool_put(&p, k[i]);
	pool_destroy(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_reuse),     cmocka_unit_test(test_pool_growth),
		cmocka_unit_test(test_pool_lines),     cmocka_unit_test(test_rng_streams),
		cmocka_unit_test(test_mem_accounting), cmocka_unit_test(test_pring_fifo),
		cmocka_unit_test(test_pq_ent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

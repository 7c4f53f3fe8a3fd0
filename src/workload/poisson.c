/* poisson.c - open-loop Poisson arrivals with flow sizes from a CDF table, at
 * a target load: the background traffic of the DCTCP, pFabric, HPCC, ConWeave
 * and Proteus evaluations (HPCC's traffic_gen/traffic_gen.py is the reference
 * recipe: exponential inter-arrivals per host, a uniformly random other host
 * as destination, sizes drawn from the CDF).
 *
 * Owns: poisson_workload_ops and its parameters.
 *
 * Each host h in 0..hosts-1 is an independent Poisson source of rate
 *     lambda = load * host_rate_bps / (8 * cdf_mean)   flows per second,
 * so its offered bytes average load x its link rate. cdf_mean() uses the same
 * linear interpolation as the sampler, so the calibration is exact in
 * expectation. Arrivals fall in [start, start + duration); the first one is
 * one exponential gap after start. Every draw of host h (gap, destination,
 * size, next gap, ...) comes from host h's own stream (seed, RNG_WORKLOAD,
 * WORKLOAD_STREAM(POISSON, h)), so a host's flows do not change when other
 * hosts are added. Times are integer ps (each gap is rounded to the nearest
 * ps). The per-host sequences are merged by (start, host), so the list is
 * sorted by start time and then id; max_flows keeps the first flows of that
 * order.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mem.h"
#include "core/rng.h"
#include "workload/cdf.h"
#include "workload/workload.h"

struct poisson_params {
	char *cdf;	    /* path of the flow-size CDF table */
	int cdf_format;	    /* enum cdf_format: auto, percent, fraction */
	double load;	    /* offered load, fraction of one host link's rate */
	simtime_t duration; /* ps, the arrival window */
	simtime_t start;    /* ps, opening of the window */
	uint64_t hosts;	    /* sources and destinations 0..hosts-1; 0 = all */
	uint64_t max_flows; /* stop after this many flows; 0 = no limit */
};

static const char *const poisson_cdf_formats[] = { "auto", "percent", "fraction", NULL };

static const struct opt_desc poisson_opts[] = {
	{ .name = "cdf",
	  .type = OPT_PATH,
	  .offset = offsetof(struct poisson_params, cdf),
	  .def = NULL,
	  .help =
	      "flow-size CDF table (size in bytes, cumulative probability; see data/workloads)" },
	{ .name = "cdf_format",
	  .type = OPT_ENUM,
	  .offset = offsetof(struct poisson_params, cdf_format),
	  .def = "auto",
	  .help = "cumulative column: auto (from the last value), percent (0-100), fraction (0-1)",
	  .choices = poisson_cdf_formats },
	{ .name = "load",
	  .type = OPT_DOUBLE,
	  .offset = offsetof(struct poisson_params, load),
	  .def = "0.5",
	  .min = 0,
	  .max = 1,
	  .help = "offered load per host, fraction of the host link rate, in (0, 1]" },
	{ .name = "duration",
	  .type = OPT_TIME,
	  .offset = offsetof(struct poisson_params, duration),
	  .def = "1ms",
	  .min = 1,
	  .max = 1e18,
	  .help = "length of the arrival window" },
	{ .name = "start",
	  .type = OPT_TIME,
	  .offset = offsetof(struct poisson_params, start),
	  .def = "0",
	  .help = "opening of the arrival window" },
	{ .name = "hosts",
	  .type = OPT_UINT,
	  .offset = offsetof(struct poisson_params, hosts),
	  .def = "0",
	  .help = "use the first N hosts (0 = all hosts)" },
	{ .name = "max_flows",
	  .type = OPT_UINT,
	  .offset = offsetof(struct poisson_params, max_flows),
	  .def = "0",
	  .help = "stop after this many flows, the earliest first (0 = no limit)" },
	OPT_END,
};

struct poisson_src {
	struct mp_rng r;
	simtime_t next; /* ps, the host's next arrival */
};

/* Binary min-heap of host indices ordered by (next arrival, host). */
struct poisson_heap {
	uint32_t *v;
	uint32_t n;
	const struct poisson_src *s;
};

static int heap_less(const struct poisson_heap *h, uint32_t a, uint32_t b)
{
	if (h->s[a].next != h->s[b].next)
		return h->s[a].next < h->s[b].next;
	return a < b;
}

static void heap_push(struct poisson_heap *h, uint32_t x)
{
	uint32_t i = h->n++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!heap_less(h, x, h->v[parent]))
			break;
		h->v[i] = h->v[parent];
		i = parent;
	}
	h->v[i] = x;
}

static uint32_t heap_pop(struct poisson_heap *h)
{
	uint32_t top = h->v[0], x = h->v[--h->n], i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && heap_less(h, h->v[c + 1], h->v[c]))
			c++;
		if (!heap_less(h, h->v[c], x))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

/* Advance src to its next arrival; false when it falls outside the window. */
static int next_arrival(struct poisson_src *src, double mean_gap_ps, simtime_t end)
{
	double gap = -log1p(-rng_u01(&src->r)) * mean_gap_ps;

	gap = floor(gap + 0.5);
	if (gap >= (double)(end - src->next))
		return 0;
	src->next += (simtime_t)gap;
	return 1;
}

static int poisson_generate(const void *params, const struct wl_env *env, struct flow_list *out,
			    struct mp_err *e)
{
	const struct poisson_params *pp = params;
	struct poisson_heap heap = { 0 };
	struct poisson_src *src = NULL;
	struct cdf cdf;
	simtime_t end;
	double mean, mean_gap_ps;
	uint64_t count = 0;
	size_t n0 = out->n;
	uint32_t n;
	int rc;

	if (workload_host_count(pp->hosts, 2, env, &n, e))
		return MP_EUSER;
	if (!(pp->load > 0 && pp->load <= 1))
		return mp_errf(e, MP_EUSER,
			       "load: expected a fraction of the link rate in (0, 1], "
			       "got %g",
			       pp->load);
	if (!env->host_rate_bps)
		return mp_errf(e, MP_EUSER,
			       "load: needs the host link rate, which this topology "
			       "does not give");
	if (pp->duration == 0 || pp->start > SIMTIME_MAX - pp->duration)
		return mp_errf(e, MP_EUSER,
			       "duration: expected a window above 0 ps that ends "
			       "before 2^64 ps");
	if (!pp->cdf)
		return mp_errf(e, MP_EUSER, "cdf: expected the path of a flow-size CDF table");
	rc = cdf_load(&cdf, pp->cdf, env->base_dir, (enum cdf_format)pp->cdf_format, e);
	if (rc) {
		char msg[sizeof e->msg];
		snprintf(msg, sizeof msg, "%s", e->msg);
		mp_err_clear(e);
		return mp_errf(e, rc, "cdf: %s", msg);
	}
	mean = cdf_mean(&cdf);
	if (mean < 1.0) {
		rc = mp_errf(e, MP_EUSER,
			     "cdf: expected a mean flow size of at least 1 byte, %s "
			     "has %g",
			     pp->cdf, mean);
		goto out;
	}
	/* 1 / lambda in ps: 8 * mean bits at load * rate bit/s. */
	mean_gap_ps = 8.0 * mean * (double)PS_PER_S / (pp->load * (double)env->host_rate_bps);
	end = pp->start + pp->duration;
	{ /* the expected number of flows, before any is drawn */
		double expect = (double)n * (double)pp->duration / mean_gap_ps;
		if (pp->max_flows && expect > (double)pp->max_flows)
			expect = (double)pp->max_flows;
		if (flow_list_reserve(out, expect > 1.8e19 ? UINT64_MAX : (uint64_t)expect,
				      "duration", e)) {
			rc = MP_EUSER;
			goto out;
		}
	}

	src = mp_malloc((size_t)n * sizeof(*src));
	heap.v = mp_malloc((size_t)n * sizeof(*heap.v));
	heap.s = src;
	for (uint32_t h = 0; h < n; h++) {
		rng_init(&src[h].r, env->seed, RNG_WORKLOAD,
			 WORKLOAD_STREAM(WORKLOAD_STREAM_POISSON, h));
		src[h].next = pp->start;
		if (next_arrival(&src[h], mean_gap_ps, end))
			heap_push(&heap, h);
	}
	while (heap.n) {
		uint32_t h = heap_pop(&heap), dst;
		uint64_t bytes;

		if (count == UINT32_MAX) {
			rc = mp_errf(e, MP_EUSER,
				     "duration: expected fewer than 2^32 flows; "
				     "shorten the window or set max_flows");
			goto out;
		}
		dst = (uint32_t)rng_below(&src[h].r, (uint64_t)n - 1);
		if (dst >= h)
			dst++;
		bytes = cdf_sample(&cdf, &src[h].r);
		flow_list_push(out, h, dst, bytes, src[h].next);
		if (++count == pp->max_flows)
			break;
		if (next_arrival(&src[h], mean_gap_ps, end))
			heap_push(&heap, h);
	}
out:
	if (rc)
		out->n = n0; /* nothing half-built */
	mp_free(heap.v);
	mp_free(src);
	cdf_free(&cdf);
	return rc;
}

/* The nominal load: `load` of each source host's link, arrivals in
 * [start, start + duration). */
static void poisson_offered(const void *params, struct wl_offer *out)
{
	const struct poisson_params *P = params;
	out->load = P->load;
	out->start = P->start;
	out->end = P->start + P->duration;
	out->hosts = P->hosts;
}

const struct workload_ops poisson_workload_ops = {
	.name = "poisson",
	.summary = "Poisson flow arrivals per host at a target load, sizes from a CDF table",
	.opts = poisson_opts,
	.params_size = sizeof(struct poisson_params),
	.generate = poisson_generate,
	.offered = poisson_offered,
};

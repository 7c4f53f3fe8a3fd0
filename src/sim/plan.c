/* plan.c - what a run will need, checked before it is allocated or run (see
 * plan.h): values that are legal one by one but not together.
 *
 * Memory is estimated from counts known before allocation and compared with
 * mp_mem_limit(): the fabric from the topology's parameters, the flows as the
 * workload generates them (a generator that knows its count asks first,
 * flow_list_reserve; any other is stopped at the limit by flow_list_push),
 * a transport's per-packet state from the flows' packets, the time series
 * from samples x series. The estimates count the structures that grow with
 * the experiment (ports, routes, flows, packets' books, samples); a fixed
 * margin covers the rest.
 */
#include "sim/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "net/topo.h"
#include "transport/conn.h"
#include "transport/tp_world.h"
#include "transport/transport.h"

/* what does not grow with the experiment (pools' first chunks, the binary) */
#define PLAN_MARGIN (64ull << 20)

static uint64_t limit_bytes(void)
{
	uint64_t l = mp_mem_limit();
	return l > PLAN_MARGIN ? l - PLAN_MARGIN : l;
}

static uint64_t tp_payload_of(const struct experiment *x)
{
	const struct tp_common *c = x->tp_params;
	return c->mtu > c->header ? c->mtu - c->header : 1;
}

int sim_plan_fabric(const struct experiment *x, struct mp_err *e)
{
	const struct tp_common *c = x->tp_params;
	if (topo_check_memory(x->topo, x->topo_params, limit_bytes(), e))
		return exp_reraise(e, x, "topology");
	/* a switch that cannot hold one packet drops every one */
	uint64_t pkt = x->sw.mtu > c->mtu ? x->sw.mtu : c->mtu;
	if (x->sw.buffer < pkt)
		return exp_errf(e, x, "switch",
				"buffer: %llu B cannot hold one %llu B packet, so every packet "
				"would be dropped; expected at least the mtu",
				(unsigned long long)x->sw.buffer, (unsigned long long)pkt);
	/* lossy admission: a queue may hold dt_alpha x the free buffer, so even
	 * an empty switch refuses a packet larger than dt_alpha x buffer */
	if (x->sw.mode != BUF_LOSSLESS && x->sw.dt_alpha * (double)x->sw.buffer < (double)pkt)
		return exp_errf(e, x, "switch",
				"dt_alpha: %g lets an egress queue hold %g x the free buffer, "
				"%.0f B of the %llu B buffer even when all of it is free, less "
				"than one %llu B packet, so every packet would be dropped; "
				"expected at least %.3g (or a larger buffer)",
				x->sw.dt_alpha, x->sw.dt_alpha,
				x->sw.dt_alpha * (double)x->sw.buffer,
				(unsigned long long)x->sw.buffer, (unsigned long long)pkt,
				(double)pkt / (double)x->sw.buffer);
	if (x->sw.queue_limit && x->sw.queue_limit < pkt)
		return exp_errf(e, x, "switch",
				"queue_limit: %llu B cannot hold one %llu B packet, so every "
				"packet would be dropped; expected 0 (none) or at least the mtu",
				(unsigned long long)x->sw.queue_limit, (unsigned long long)pkt);
	if (x->fail.loss_rate >= 1)
		return exp_errf(e, x, "failures",
				"loss_rate: 1 loses every packet on every switch link, so no "
				"flow could complete; expected below 1");
	if (x->fail.host_loss_rate >= 1)
		return exp_errf(e, x, "failures",
				"host_loss_rate: 1 loses every packet on every host link, so no "
				"flow could complete; expected below 1");
	return MP_OK;
}

void sim_plan_flow_limit(const struct experiment *x, struct flow_list *l)
{
	/* a flow's spec, connection and protocol state, its record, the
	 * runner's per-flow arrays, and an event or two */
	l->flow_bytes = sizeof(struct flow_spec) + sizeof(struct conn) +
			tp_priv_size(x->tp, x->tp_params) + 64 +
			sizeof(void *) + /* the connection's line alignment */
			sizeof(struct flow_rec) + 12 * sizeof(uint64_t) + 2 * sizeof(struct evs);
	l->mem_limit = limit_bytes();
	l->max_n = (size_t)(l->mem_limit / l->flow_bytes) + 1;
	l->max_ids = TP_ENTITY_BASE;
}

struct pair_pkts {
	uint64_t pair; /* src << 32 | dst */
	uint64_t pkts;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair_pkts *x = a, *y = b;
	return (x->pair > y->pair) - (x->pair < y->pair);
}

/* The most packets the jobs' messages put on one rank pair's channel (its
 * queue pairs share them; counted as if one carried them all). */
static uint64_t max_channel_pkts(const struct flow_list *l, uint64_t pl, uint64_t *pair)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].job && l->v[i].bytes;
	struct pair_pkts *v = mp_malloc((n ? n : 1) * sizeof *v);
	n = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct flow_spec *f = &l->v[i];
		if (f->job && f->bytes)
			v[n++] = (struct pair_pkts){ ((uint64_t)f->src << 32) | f->dst,
						     f->bytes / pl + (f->bytes % pl != 0) };
	}
	qsort(v, n, sizeof *v, cmp_pair);
	uint64_t best = 0, run = 0;
	for (size_t i = 0; i < n; i++) {
		run = i && v[i].pair == v[i - 1].pair ? run + v[i].pkts : v[i].pkts;
		if (run > best) {
			best = run;
			*pair = v[i].pair;
		}
	}
	mp_free(v);
	return best;
}

int sim_plan_flows(const struct sim *s, const char *section, struct mp_err *e)
{
	const struct experiment *x = s->x;
	const struct flow_list *l = &s->flows;
	if (l->over && l->max_ids && l->n + 1 >= l->max_ids)
		return exp_errf(e, x, section,
				"more than %zu flows (messages): mpsim's message ids hold fewer "
				"than %zu",
				l->n, l->max_ids);
	if (l->over)
		return exp_errf(e, x, section,
				"more than %zu flows (messages), about %.1f GB of memory at %llu "
				"bytes each; %.1f GB fit (the machine's memory or "
				"MPSIM_MEM_LIMIT): expected fewer",
				l->max_n, (double)l->max_n * (double)l->flow_bytes / 1e9,
				(unsigned long long)l->flow_bytes, (double)l->mem_limit / 1e9);
	/* a connection numbers its packets in 32 bits: a plain flow is one
	 * connection, a job's messages share its queue pairs */
	uint64_t pl = tp_payload_of(x), job_pkts = 0, max_pkts = 0;
	double state = 0;
	size_t worst = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct flow_spec *f = &l->v[i];
		uint64_t n = f->bytes / pl + (f->bytes % pl != 0);
		if (f->job)
			job_pkts += n;
		else if (n > max_pkts) {
			max_pkts = n;
			worst = i;
		}
		state += (double)n * x->tp->pkt_state_bits / 8.0;
	}
	const struct tp_common *c = x->tp_params;
	if (max_pkts >= UINT32_MAX)
		return exp_errf(e, x, section,
				"flow %zu of %llu B is %llu packets of %llu B payload "
				"(transport.mtu %llu B - header %llu B); a connection carries at "
				"most %u packets (%.4g B at this mtu): expected smaller flows or "
				"a larger mtu",
				worst, (unsigned long long)l->v[worst].bytes,
				(unsigned long long)max_pkts, (unsigned long long)pl,
				(unsigned long long)c->mtu, (unsigned long long)c->header,
				UINT32_MAX - 1, (double)(UINT32_MAX - 1) * (double)pl);
	uint64_t pair = 0;
	if (job_pkts >= UINT32_MAX && (job_pkts = max_channel_pkts(l, pl, &pair)) >= UINT32_MAX)
		return exp_errf(e, x, "collective",
				"the messages from host %u to host %u add up to %llu packets of "
				"%llu B payload; their queue pairs carry at most %u packets in "
				"all: expected less data (size x iterations) or a larger mtu",
				(unsigned)(pair >> 32), (unsigned)(pair & 0xffffffffu),
				(unsigned long long)job_pkts, (unsigned long long)pl,
				UINT32_MAX - 1);
	/* a workload that starts when the run has ended would report every flow
	 * as not completed "by 0.0 us" */
	simtime_t end = x->gen.stop_time ? x->gen.stop_time : x->gen.time_limit, first = UINT64_MAX;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].start < first)
			first = l->v[i].start;
	if (l->n && first >= end) {
		const struct opt_desc *opts = x->wl ? x->wl->opts : coll_opts;
		char fs[32], es[32];
		opt_format_time(first, fs, sizeof fs);
		opt_format_time(end, es, sizeof es);
		const char *by = x->gen.stop_time ? "stop_time" : "time_limit";
		return exp_errf(e, x, section,
				"%sthe first flow starts at %s, when the run has ended (%s %s), "
				"so no flow would run: expected a start before %s",
				opt_find(opts, "start") ? "start: " : "", fs, by, es, by);
	}
	uint64_t limit = limit_bytes();
	double have = (double)l->n * (double)l->flow_bytes;
	if (state + have > (double)limit)
		return exp_errf(
		    e, x, "transport",
		    "%s keeps %u bits per packet of a flow: the flows' %.4g packets "
		    "need about %.1f GB of memory; %.1f GB fit (the machine's memory or "
		    "MPSIM_MEM_LIMIT): expected smaller flows or a larger mtu",
		    x->tp->name, x->tp->pkt_state_bits,
		    state * 8.0 / (x->tp->pkt_state_bits ? x->tp->pkt_state_bits : 1),
		    (state + have) / 1e9, (double)limit / 1e9);
	return MP_OK;
}

/* The time series: samples every interval from 0 to the run's end. With
 * stop_time that end is known. Without it the run ends when its flows
 * complete, which only running tells, and time_limit is a bound that real
 * runs seldom approach (estimating from it refused the 180 us quickstart
 * under MPSIM_MEM_LIMIT=64MiB). So a run that fits to time_limit runs; one
 * that does not is refused here unless it fits to PLAN_TS_SLACK times the
 * workload's ideal end (plain flows: start + serialisation at the slowest
 * host link, the soonest each could end; with dependencies the end is not
 * known and time_limit stands). Such a run gets the rows the memory leaves as
 * the series' ceiling (ts_buf.max_rows, grown by doubling): one that reaches
 * it (a link down, a stall) stops with a sentence, status 2, and writes
 * nothing (sim/run.c, ts_over). The slack also keeps a sampling interval of
 * a few ps, which would take hours to reach the ceiling, refused up front. */
#define PLAN_TS_SLACK 1000.0

static double ideal_end(const struct sim *s)
{
	uint64_t rate = UINT64_MAX;
	for (uint32_t h = 0; h < s->fab.nhosts; h++)
		for (uint16_t p = 0; p < s->fab.hosts[h]->node.nports; p++)
			if (s->fab.hosts[h]->node.ports[p].rate_bps < rate)
				rate = s->fab.hosts[h]->node.ports[p].rate_bps;
	if (!rate || rate == UINT64_MAX)
		return -1;
	double end = 0;
	for (size_t i = 0; i < s->flows.n; i++) {
		const struct flow_spec *f = &s->flows.v[i];
		if (f->ndeps)
			return -1;
		double t = (double)f->start + (double)f->bytes * 8.0 / (double)rate * 1e12;
		if (t > end)
			end = t;
	}
	return end;
}

int sim_plan_series(const struct sim *s, struct mp_err *e)
{
	const struct experiment *x = s->x;
	if (!x->out.interval || !s->nsamplers)
		return MP_OK;
	simtime_t span = x->gen.stop_time ? x->gen.stop_time : x->gen.time_limit;
	const char *by = x->gen.stop_time ? "stop_time" : "time_limit";
	double row = s->nsamplers * sizeof(struct ts_row);
	double samples = (double)span / (double)x->out.interval + 1;
	double need = samples * row;
	double have = (double)s->flows.n * (double)s->flows.flow_bytes;
	uint64_t limit = limit_bytes();
	double rows = ((double)limit - have) / sizeof(struct ts_row);
	if (need + have <= (double)limit)
		return MP_OK;
	double end = x->gen.stop_time ? -1 : ideal_end(s);
	if (end >= 0 &&
	    (PLAN_TS_SLACK * end / (double)x->out.interval + 1) * row + have <= (double)limit) {
		s->ts->max_rows = rows < 1e18 ? (size_t)rows : 0;
		return MP_OK;
	}
	char iv[32], sp[32], iv2[32];
	opt_format_time(x->out.interval, iv, sizeof iv);
	opt_format_time(span, sp, sizeof sp);
	double fit = (double)limit - have;
	double min_iv = fit > 0 ? (double)span * row / fit : 0;
	opt_format_time(min_iv > 0 && min_iv < 1.8e19 ? (uint64_t)min_iv + 1 : span, iv2,
			sizeof iv2);
	return exp_errf(e, x, "output",
			"interval: %s over %s (%s) is up to %.4g samples of %u series, about "
			"%.1f GB of memory; %.1f GB fit (the machine's memory or "
			"MPSIM_MEM_LIMIT): expected an interval of at least %s or a shorter %s",
			iv, by, sp, samples, s->nsamplers, need / 1e9, (double)limit / 1e9, iv2,
			by);
}

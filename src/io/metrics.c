/* metrics.c - the named figures of a run (see metrics.h). */
#include "io/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/opt.h"

const struct metric_def metric_defs[M_N] = {
	[M_FLOWS] = { "flows", MK_COUNT, "flows in the workload" },
	[M_COMPLETED] = { "completed", MK_COUNT, "flows that completed" },
	[M_MEAN_FCT] = { "mean_fct", MK_TIME, "mean flow completion time" },
	[M_P50_FCT] = { "p50_fct", MK_TIME, "median flow completion time" },
	[M_P99_FCT] = { "p99_fct", MK_TIME, "99th percentile flow completion time" },
	[M_MAX_FCT] = { "max_fct", MK_TIME, "largest flow completion time" },
	[M_MEAN_SLOWDOWN] = { "mean_slowdown", MK_RATIO, "mean FCT / ideal FCT" },
	[M_P99_SLOWDOWN] = { "p99_slowdown", MK_RATIO, "99th percentile FCT / ideal FCT" },
	[M_MAX_SLOWDOWN] = { "max_slowdown", MK_RATIO, "largest FCT / ideal FCT" },
	[M_GOODPUT] = { "goodput", MK_RATE,
			"message bytes of completed flows over first start to last finish" },
	[M_DROPS] = { "drops", MK_COUNT, "packets dropped (buffer and link)" },
	[M_RETX_BYTES] = { "retx_bytes", MK_BYTES, "retransmitted data bytes" },
	[M_ECN_MARKS] = { "ecn_marks", MK_COUNT, "CE marks made by the switches (a packet once)" },
	[M_PAUSE_FRAMES] = { "pause_frames", MK_COUNT, "PFC PAUSE frames sent" },
	[M_PAUSED_TIME] = { "paused_time", MK_TIME, "time ports spent paused, summed" },
	[M_MAX_QUEUE] = { "max_queue", MK_BYTES, "largest egress queue of any switch port" },
	[M_MAX_QUEUE_LAST_HOP] = { "max_queue_last_hop", MK_BYTES,
				   "largest queue of a switch port facing a host" },
	[M_MAX_QUEUE_FABRIC] = { "max_queue_fabric", MK_BYTES,
				 "largest queue of a switch-to-switch port" },
	[M_MEAN_TPUT] = { "mean_tput", MK_RATE,
			  "mean per-flow throughput (message bytes / FCT) of completed flows" },
	[M_P99_TPUT] = { "p99_tput", MK_RATE,
			 "tail per-flow throughput: the one 99% of completed flows reach or "
			 "exceed (the 1st percentile)" },
	[M_P99_OOD] = { "p99_ood", MK_COUNT,
			"99th percentile out-of-order degree of data packets at the receivers "
			"(PSNs below the highest seen; UDMP and MP-RDMA note it)" },
	[M_MAX_OOD] = { "max_ood", MK_COUNT, "largest out-of-order degree (as p99_ood)" },
	[M_CONVERGENCE] = { "convergence", MK_TIME,
			    "from the last flow start until every running flow's sampled "
			    "throughput stays within output.convergence_band of their mean "
			    "(needs output.flow_throughput)" },
	[M_CONVERGENCE_JAIN] = { "convergence_jain", MK_TIME,
				 "from the last flow start until Jain's fairness index of the "
				 "running "
				 "flows' sampled throughput stays at or above "
				 "output.convergence_jain "
				 "(needs output.flow_throughput)" },
	[M_QUEUE_SETTLE] = { "queue_settle", MK_TIME,
			     "from the last flow start until the first sampled queue "
			     "(output.queues) stays at or below output.settle_queue" },
	[M_QUEUE_DRAIN] = { "queue_drain", MK_TIME,
			    "from the last flow start until the first sampled queue first falls "
			    "back to output.settle_queue after exceeding it" },
	[M_CCT_MEAN] = { "cct_mean", MK_TIME,
			 "collectives: mean completion time over jobs and iterations (first "
			 "message posted to last byte delivered)" },
	[M_CCT_P50] = { "cct_p50", MK_TIME, "collectives: median completion time" },
	[M_CCT_MAX] = { "cct_max", MK_TIME, "collectives: largest completion time" },
	[M_BUSBW_MIN] = { "busbw_min", MK_RATE,
			  "collectives: smallest bus bandwidth (NCCL-tests: algbw x 2(n-1)/n "
			  "for AllReduce, x (n-1)/n otherwise)" },
	[M_BUSBW_MEAN] = { "busbw_mean", MK_RATE, "collectives: mean bus bandwidth" },
	[M_HOL_FLOWS] = { "hol_flows", MK_RATIO,
			  "fraction of flows HoL-blocked: their data waited behind a port paused "
			  "by PFC longer than output.hol_fraction of their FCT (needs "
			  "output.pfc_counters)" },
	[M_REORDERED] = { "reordered", MK_COUNT,
			  "data packets that reached their receiver below a PSN already seen "
			  "(first copies)" },
	[M_REORDER_RATIO] = { "reorder_ratio", MK_RATIO,
			      "reordered / data packets received (first copies)" },
	[M_LOAD_HOST] = { "load_host", MK_RATIO,
			  "open-loop workloads: bytes the source hosts sent over the statistics "
			  "window / (window x their links' capacity), summary.json's load.host" },
	[M_LOAD_FABRIC] = { "load_fabric", MK_RATIO,
			    "open-loop workloads: the same on the busiest switch-to-switch tier "
			    "(summary.json's load.fabric, beside load.nominal and "
			    "load.fabric_implied)" },
	[M_ITERATION] = { "iteration", MK_TIME,
			  "training workloads (chakra, simai): mean iteration time, the last "
			  "activity's end over the iterations (summary.json's training)" },
	[M_EXPOSED_COMM] = { "exposed_comm", MK_TIME,
			     "training workloads: the slowest rank's exposed communication, "
			     "time it waited for the network while computing nothing" },
};

int metric_find(const char *name)
{
	for (int i = 0; i < M_N; i++)
		if (!strcmp(metric_defs[i].name, name))
			return i;
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* nearest rank, as stats.h */
static double pct(const double *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p / 100 * (double)n);
	return v[k ? k - 1 : 0];
}

/* Convergence from the per-flow throughput series ("goodput_gbps:flowN",
 * sampled every interval, each the mean over the interval before it): a sample
 * counts when at least two flows ran through its whole interval; it is fair
 * when each of them is within band of their mean (band > 0), or when Jain's
 * index (sum x)^2 / (n sum x^2) is at least jain (band = 0). The answer is the
 * end of the first fair sample after which every counted sample up to the
 * first completion is fair, measured from the last flow start. */
static double convergence(const struct run_result *r, double band, double jain)
{
	static const char prefix[] = "goodput_gbps:flow";
	size_t np = strlen(prefix);
	uint32_t ns = r->ts.nnames;
	int64_t *flow_of = mp_calloc(ns ? ns : 1, sizeof *flow_of);
	bool any = false;
	for (uint32_t s = 0; s < ns; s++) {
		flow_of[s] = -1;
		const char *nm = r->ts.names[s];
		if (!strncmp(nm, prefix, np)) {
			long id = strtol(nm + np, NULL, 10);
			if (id >= 0 && (size_t)id < r->nflows) {
				flow_of[s] = id;
				any = true;
			}
		}
	}
	double res = NAN;
	if (!any || r->ts.n == 0)
		goto out;
	simtime_t last_start = 0, first_finish = SIMTIME_MAX;
	for (size_t i = 0; i < r->nflows; i++) {
		if (r->flows[i].start > last_start)
			last_start = r->flows[i].start;
		if (r->flows[i].completed && r->flows[i].finish < first_finish)
			first_finish = r->flows[i].finish;
	}
	/* rows are in time order; consecutive sample times give the interval */
	simtime_t prev_t = 0, cand = SIMTIME_MAX;
	size_t i = 0;
	bool have_prev = false;
	while (i < r->ts.n) {
		simtime_t t = r->ts.rows[i].t;
		double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
		unsigned cnt = 0;
		for (; i < r->ts.n && r->ts.rows[i].t == t; i++) {
			int64_t f = flow_of[r->ts.rows[i].series];
			if (f < 0 || !have_prev)
				continue;
			const struct flow_rec *fr = &r->flows[f];
			if (fr->start > prev_t || (fr->completed && fr->finish < t))
				continue;
			double v = r->ts.rows[i].value;
			sum += v;
			sq += v * v;
			cnt++;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		bool counted = have_prev && cnt >= 2 && prev_t >= last_start && t <= first_finish;
		if (counted) {
			double mean = sum / cnt;
			bool fair = mean > 0 &&
				    (band > 0 ? lo >= (1 - band) * mean && hi <= (1 + band) * mean
					      : sum * sum >= jain * cnt * sq);
			if (!fair)
				cand = SIMTIME_MAX;
			else if (cand == SIMTIME_MAX)
				cand = t;
		}
		prev_t = t;
		have_prev = true;
	}
	if (cand != SIMTIME_MAX)
		res = (double)(cand - last_start);
out:
	mp_free(flow_of);
	return res;
}

/* The first sample after the last one above `thr` in the first queue series. */
static double queue_settle(const struct run_result *r, uint64_t thr, bool first_drain)
{
	uint32_t series = UINT32_MAX;
	for (uint32_t s = 0; s < r->ts.nnames && series == UINT32_MAX; s++)
		if (!strncmp(r->ts.names[s], "queue_bytes:", 12))
			series = s;
	if (!thr || series == UINT32_MAX)
		return NAN;
	simtime_t last_start = 0, settled = 0, first = SIMTIME_MAX;
	for (size_t i = 0; i < r->nflows; i++)
		if (r->flows[i].start > last_start)
			last_start = r->flows[i].start;
	bool above = false;
	for (size_t i = 0; i < r->ts.n; i++) {
		const struct ts_row *row = &r->ts.rows[i];
		if (row->series != series)
			continue;
		if (row->t > last_start && first == SIMTIME_MAX)
			first = row->t;
		if (row->value > (double)thr)
			above = true;
		else if (above) {
			settled = row->t;
			above = false;
			if (first_drain)
				break;
		}
	}
	if (above)
		return NAN;
	if (settled <= last_start) /* never above: settled by the first sample */
		settled = first;
	return settled != SIMTIME_MAX ? (double)(settled - last_start) : NAN;
}

/* The flows' metrics: counts, FCT, slowdown, throughput, goodput, retransmitted bytes. */
static void flow_metrics(const struct run_result *r, double v[M_N])
{
	size_t n = r->nflows, c = 0;
	double *fct = mp_calloc(n ? n : 1, sizeof *fct);
	double *sd = mp_calloc(n ? n : 1, sizeof *sd);
	double *tput = mp_calloc(n ? n : 1, sizeof *tput);
	double sum_fct = 0, sum_sd = 0, bytes = 0;
	simtime_t first = SIMTIME_MAX, last = 0;
	uint64_t retx = 0;
	for (size_t i = 0; i < n; i++) {
		const struct flow_rec *f = &r->flows[i];
		retx += f->retx_bytes;
		if (!f->completed || !f->measured)
			continue;
		fct[c] = (double)f->fct;
		sd[c] = f->slowdown;
		tput[c] = f->fct ? (double)f->bytes * 8 / time_to_s(f->fct) : NAN;
		sum_fct += fct[c];
		sum_sd += sd[c];
		bytes += (double)f->bytes;
		first = f->start < first ? f->start : first;
		last = f->finish > last ? f->finish : last;
		c++;
	}
	v[M_FLOWS] = (double)n;
	v[M_COMPLETED] = (double)c;
	if (c) {
		qsort(fct, c, sizeof *fct, cmp_double);
		qsort(sd, c, sizeof *sd, cmp_double);
		v[M_MEAN_FCT] = sum_fct / (double)c;
		v[M_P50_FCT] = pct(fct, c, 50);
		v[M_P99_FCT] = pct(fct, c, 99);
		v[M_MAX_FCT] = fct[c - 1];
		v[M_MEAN_SLOWDOWN] = sum_sd / (double)c;
		v[M_P99_SLOWDOWN] = pct(sd, c, 99);
		v[M_MAX_SLOWDOWN] = sd[c - 1];
		double sum_tput = 0;
		for (size_t i = 0; i < c; i++)
			sum_tput += tput[i];
		qsort(tput, c, sizeof *tput, cmp_double);
		v[M_MEAN_TPUT] = sum_tput / (double)c;
		v[M_P99_TPUT] = pct(tput, c, 1);
		if (last > first)
			v[M_GOODPUT] = bytes * 8 / time_to_s(last - first);
	}
	v[M_RETX_BYTES] = (double)retx;
	mp_free(fct);
	mp_free(sd);
	mp_free(tput);
}

/* The network's metrics: drops, ECN, PFC, queues, reordering. */
static void net_metrics(const struct run_result *r, double v[M_N])
{
	const struct net_totals *t = &r->net;
	v[M_DROPS] = (double)(t->drops_buffer + t->drops_link);
	v[M_ECN_MARKS] = (double)t->ecn_marks;
	v[M_PAUSE_FRAMES] = (double)t->pause_frames;
	v[M_PAUSED_TIME] = (double)t->paused_time;
	v[M_MAX_QUEUE] = (double)t->max_queue_bytes;
	v[M_MAX_QUEUE_LAST_HOP] = (double)r->groups[G_LAST_HOP].max_qbytes;
	v[M_MAX_QUEUE_FABRIC] = (double)r->groups[G_FABRIC].max_qbytes;
	uint64_t data = 0, reord = 0;
	size_t hol = 0;
	for (size_t i = 0; i < r->nflows; i++)
		if (r->flows[i].measured) {
			data += r->flows[i].data_pkts;
			reord += r->flows[i].reordered;
			hol += r->flows[i].hol;
		}
	data += r->qp_data_pkts; /* collective messages: their queue pairs' */
	reord += r->qp_reordered;
	if (r->pfc_counters && r->nmeasured)
		v[M_HOL_FLOWS] = (double)hol / (double)r->nmeasured;
	v[M_REORDERED] = (double)reord;
	if (data)
		v[M_REORDER_RATIO] = (double)reord / (double)data;
	if (r->load.valid) {
		v[M_LOAD_HOST] = r->load.host;
		if (r->load.fabric_group >= 0)
			v[M_LOAD_FABRIC] = r->load.fabric;
	}
	v[M_P99_OOD] = r->ood_p99;
	v[M_MAX_OOD] = r->ood_max;
}

/* The collectives' metrics: CCT and bus bandwidth of the completed ones. */
static void coll_metrics(const struct run_result *r, double v[M_N])
{
	size_t nc = 0;
	double *cct = mp_calloc(r->ncolls ? r->ncolls : 1, sizeof *cct), sum_cct = 0, sum_bw = 0,
	       min_bw = INFINITY;
	for (size_t i = 0; i < r->ncolls; i++)
		if (r->colls[i].completed) {
			cct[nc++] = (double)r->colls[i].cct;
			sum_cct += (double)r->colls[i].cct;
			sum_bw += r->colls[i].busbw;
			min_bw = r->colls[i].busbw < min_bw ? r->colls[i].busbw : min_bw;
		}
	if (nc) {
		qsort(cct, nc, sizeof *cct, cmp_double);
		v[M_CCT_MEAN] = sum_cct / (double)nc;
		v[M_CCT_P50] = pct(cct, nc, 50);
		v[M_CCT_MAX] = cct[nc - 1];
		v[M_BUSBW_MIN] = min_bw;
		v[M_BUSBW_MEAN] = sum_bw / (double)nc;
	}
	mp_free(cct);
}

void metrics_compute(const struct run_result *r, double band, double jain, uint64_t settle,
		     double v[M_N])
{
	for (int i = 0; i < M_N; i++)
		v[i] = NAN;
	if (r->ntrain) {
		v[M_ITERATION] = (double)r->training.iteration;
		v[M_EXPOSED_COMM] = (double)r->training.exposed;
	}
	flow_metrics(r, v);
	net_metrics(r, v);
	v[M_CONVERGENCE] = convergence(r, band, 0);
	v[M_CONVERGENCE_JAIN] = convergence(r, 0, jain);
	v[M_QUEUE_SETTLE] = queue_settle(r, settle, false);
	v[M_QUEUE_DRAIN] = queue_settle(r, settle, true);
	coll_metrics(r, v);
}

double metric_display(enum metric_id m, double v)
{
	switch (metric_defs[m].kind) {
	case MK_TIME:
		return v / 1e6; /* us */
	case MK_BYTES:
		return v / 1e6; /* MB */
	case MK_RATE:
		return v / 1e9; /* Gb/s */
	default:
		return v;
	}
}

const char *metric_unit(enum metric_id m)
{
	static const char *const units[] = { [MK_TIME] = "us",
					     [MK_BYTES] = "MB",
					     [MK_RATE] = "Gbps",
					     [MK_COUNT] = "",
					     [MK_RATIO] = "" };
	return units[metric_defs[m].kind];
}

int metric_parse(enum metric_id m, const char *text, double *out)
{
	uint64_t u;
	char *end;
	switch (metric_defs[m].kind) {
	case MK_TIME:
		if (opt_parse_time(text, &u))
			return -1;
		*out = (double)u;
		return 0;
	case MK_BYTES:
		if (opt_parse_size(text, &u))
			return -1;
		*out = (double)u;
		return 0;
	case MK_RATE:
		if (opt_parse_rate(text, &u))
			return -1;
		*out = (double)u;
		return 0;
	default:
		*out = strtod(text, &end);
		return end != text && !*end && isfinite(*out) ? 0 : -1;
	}
}

/* results.c - writing a results folder atomically, and the summary table. */
#include "io/results.h"
#include "io/training.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "stats/stats.h"
#include "net/switch.h"
#include <math.h>

#define NBUCKETS 6
static const uint64_t bucket_hi[NBUCKETS] = { 10000,	100000,	   1000000,
					      10000000, 100000000, UINT64_MAX };
static const char *const bucket_name[NBUCKETS] = { "<=10KB",   "10KB-100KB", "100KB-1MB",
						   "1MB-10MB", "10MB-100MB", ">100MB" };

struct fct_stats {
	struct dist_summary fct_us, slowdown;
};

/* Summaries over completed flows whose size is in (lo, hi]. */
static void summarize(const struct run_result *r, uint64_t lo, uint64_t hi, struct fct_stats *s)
{
	double *a = mp_malloc((r->nflows + 1) * sizeof *a);
	double *b = mp_malloc((r->nflows + 1) * sizeof *b);
	size_t n = 0;
	for (size_t i = 0; i < r->nflows; i++) {
		const struct flow_rec *f = &r->flows[i];
		if (!f->completed || !f->measured || f->bytes <= lo || f->bytes > hi)
			continue;
		a[n] = time_to_us(f->fct);
		b[n++] = f->slowdown;
	}
	stats_summarize(a, n, &s->fct_us);
	stats_summarize(b, n, &s->slowdown);
	mp_free(a);
	mp_free(b);
}

/* PFC counters over the measured flows, and the collective queue pairs'
 * packets (a queue pair carries many messages). */
struct pfc_summary {
	size_t hol;
	double blocked_us_mean;
	uint64_t data_pkts, reordered;
};

static void pfc_summarize(const struct run_result *r, struct pfc_summary *ps)
{
	memset(ps, 0, sizeof *ps);
	double blocked = 0;
	for (size_t i = 0; i < r->nflows; i++) {
		const struct flow_rec *f = &r->flows[i];
		if (!f->measured)
			continue;
		ps->hol += f->hol;
		blocked += time_to_us(f->blocked);
		ps->data_pkts += f->data_pkts;
		ps->reordered += f->reordered;
	}
	ps->data_pkts += r->qp_data_pkts;
	ps->reordered += r->qp_reordered;
	ps->blocked_us_mean = r->nmeasured ? blocked / (double)r->nmeasured : 0;
}

static void json_dist(FILE *f, const char *name, const struct dist_summary *d, const char *end)
{
	fprintf(f,
		"\"%s\": {\"n\": %zu, \"mean\": %.6f, \"p50\": %.6f, \"p90\": %.6f, "
		"\"p99\": %.6f, \"p999\": %.6f, \"max\": %.6f}%s",
		name, d->n, d->mean, d->p50, d->p90, d->p99, d->p999, d->max, end);
}

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* The completed collectives of a run: CCT (us) and bus bandwidth (Gb/s). */
struct coll_summary {
	struct dist_summary cct_us;
	double busbw_min_gbps, busbw_mean_gbps; /* 0 when none completed */
};

static void coll_summarize(const struct run_result *r, struct coll_summary *cs)
{
	double *v = mp_calloc(r->ncolls ? r->ncolls : 1, sizeof *v), bw = 0, bwmin = INFINITY;
	size_t n = 0;
	for (size_t i = 0; i < r->ncolls; i++)
		if (r->colls[i].completed) {
			v[n++] = time_to_us(r->colls[i].cct);
			bw += r->colls[i].busbw;
			bwmin = r->colls[i].busbw < bwmin ? r->colls[i].busbw : bwmin;
		}
	stats_summarize(v, n, &cs->cct_us);
	cs->busbw_min_gbps = n ? bwmin / 1e9 : 0.0;
	cs->busbw_mean_gbps = n ? bw / (double)n / 1e9 : 0.0;
	mp_free(v);
}

/* "load": the offered and measured load of an open-loop workload over its
 * statistics window (sim/load.c defines each figure); fabric keys only
 * where the fabric has switch-to-switch ports, warning only when low. */
static void json_load(FILE *f, const struct load_rec *l)
{
	if (!l->valid)
		return;
	fprintf(f, "  \"load\": {\"from_us\": %.6f, \"until_us\": %.6f, \"nominal\": %.6f, ",
		time_to_us(l->from), time_to_us(l->until), l->nominal);
	fprintf(f, "\"arrived\": %.6f, \"host\": %.6f", l->arrived, l->host);
	if (l->fabric_group >= 0)
		fprintf(f, ", \"fabric\": %.6f, \"fabric_tier\": \"%s\"", l->fabric,
			port_group_names[l->fabric_group]);
	if (isfinite(l->fabric_implied))
		fprintf(f, ", \"fabric_implied\": %.6f", l->fabric_implied);
	if (l->low) {
		char w[320];
		load_warning(l, w, sizeof w);
		fputs(", \"warning\": ", f);
		json_string(f, w);
	}
	fputs("},\n", f);
}

/* the load line of the printed summary */
static void print_load(FILE *f, const struct load_rec *l)
{
	if (!l->valid)
		return;
	fprintf(f, "  load over [%.1f us, %.1f us): nominal %.3f (arrived %.3f), host links %.3f",
		time_to_us(l->from), time_to_us(l->until), l->nominal, l->arrived, l->host);
	if (l->fabric_group >= 0)
		fprintf(f, ", fabric %.3f (%s)", l->fabric, port_group_names[l->fabric_group]);
	if (isfinite(l->fabric_implied))
		fprintf(f, ", implied %.3f", l->fabric_implied);
	fputs("\n", f);
	if (l->low) {
		char w[320];
		load_warning(l, w, sizeof w);
		fprintf(f, "  warning: %s\n", w);
	}
}

/* summary.json's "flows": counts, FCT and slowdown, and the same by size. */
static void json_flows(FILE *f, const struct run_result *r)
{
	struct fct_stats all;
	summarize(r, 0, UINT64_MAX, &all);
	fprintf(f, "  \"flows\": {\"count\": %zu, \"completed\": %zu,\n    ", r->nflows,
		r->ncompleted);
	json_dist(f, "fct_us", &all.fct_us, ",\n    ");
	json_dist(f, "slowdown", &all.slowdown, ",\n");
	fputs("    \"by_size\": [\n", f);
	bool first = true;
	for (int b = 0; b < NBUCKETS; b++) {
		struct fct_stats bs;
		summarize(r, b ? bucket_hi[b - 1] : 0, bucket_hi[b], &bs);
		if (!bs.fct_us.n)
			continue;
		fprintf(f, "%s      {\"bucket\": \"%s\", ", first ? "" : ",\n", bucket_name[b]);
		json_dist(f, "fct_us", &bs.fct_us, ", ");
		json_dist(f, "slowdown", &bs.slowdown, "}");
		first = false;
	}
	fputs("\n    ]},\n", f);
}

/* summary.json's "ports": per port group, those it has. */
static void json_ports(FILE *f, const struct run_result *r)
{
	fputs("  \"ports\": {", f);
	bool firstg = true;
	for (int g = 0; g < G_N; g++) {
		const struct group_totals *gt = &r->groups[g];
		if (!gt->nports)
			continue;
		fprintf(f,
			"%s\n    \"%s\": {\"ports\": %u, \"tx_bytes\": %llu, "
			"\"utilisation\": %.6f, \"max_queue_bytes\": %llu, "
			"\"mean_queue_bytes\": %.3f, \"drops\": %llu, \"ecn_marks\": %llu, "
			"\"pause_frames\": %llu}",
			firstg ? "" : ",", port_group_names[g], gt->nports,
			(unsigned long long)gt->tx_bytes, gt->utilisation,
			(unsigned long long)gt->max_qbytes, gt->mean_qbytes,
			(unsigned long long)gt->drops, (unsigned long long)gt->ecn_marks,
			(unsigned long long)gt->pauses);
		firstg = false;
	}
	fputs("\n  },\n", f);
}

static int write_summary(FILE *f, const struct experiment *x, const struct run_result *r)
{
	uint64_t retx = 0;
	for (size_t i = 0; i < r->nflows; i++)
		retx += r->flows[i].retx_bytes;
	fputs("{\n  \"name\": ", f);
	json_string(f, x->gen.name);
	fprintf(f, ",\n  \"seed\": %llu,\n", (unsigned long long)x->gen.seed);
	fprintf(f, "  \"mpsim_version\": \"%s\",\n", MPSIM_VERSION);
	fprintf(f,
		"  \"topology\": {\"type\": \"%s\", \"hosts\": %u, \"switches\": %u, "
		"\"links\": %u},\n",
		x->topo->name, r->nhosts, r->nswitches, r->nlinks);
	char wl[128];
	exp_workload_name(x, wl, sizeof wl);
	fprintf(f, "  \"transport\": \"%s\",\n  \"workload\": \"%s\",\n", x->tp->name, wl);
	json_flows(f, r);
	const struct net_totals *t = &r->net;
	fprintf(f,
		"  \"network\": {\"drops_buffer\": %llu, \"drops_link\": %llu, "
		"\"drops_no_route\": %llu, \"ecn_marks\": %llu, \"pause_frames\": %llu, "
		"\"resume_frames\": %llu, \"paused_time_us\": %.6f, \"retx_bytes\": %llu, "
		"\"max_queue_bytes\": %llu, \"max_buffer_used_bytes\": %llu, "
		"\"lossless_overflow_bytes\": %llu, \"trimmed\": %llu, \"trimmed_bytes\": %llu},\n",
		(unsigned long long)t->drops_buffer, (unsigned long long)t->drops_link,
		(unsigned long long)t->drops_no_route, (unsigned long long)t->ecn_marks,
		(unsigned long long)t->pause_frames, (unsigned long long)t->resume_frames,
		time_to_us(t->paused_time), (unsigned long long)retx,
		(unsigned long long)t->max_queue_bytes, (unsigned long long)t->max_buffer_used,
		(unsigned long long)t->lossless_overflow, (unsigned long long)t->trimmed,
		(unsigned long long)t->trimmed_bytes);
	if (r->pfc_counters || r->nmeasured < r->nflows) {
		struct pfc_summary ps;
		pfc_summarize(r, &ps);
		fprintf(f,
			"  \"pfc\": {\"measured_flows\": %zu, \"hol_flows\": %zu, "
			"\"blocked_us_mean\": %.6f, \"data_pkts\": %llu, \"reordered\": %llu},\n",
			r->nmeasured, ps.hol, ps.blocked_us_mean, (unsigned long long)ps.data_pkts,
			(unsigned long long)ps.reordered);
	}
	if (r->lb.scheme) {
		fprintf(f, "  \"lb\": {\"scheme\": \"%s\"", r->lb.scheme);
		for (unsigned i = 0; i < r->lb.n; i++)
			fprintf(f, ", \"%s\": %llu", r->lb.name[i], (unsigned long long)r->lb.v[i]);
		fputs("},\n", f);
	}
	json_load(f, &r->load);
	json_ports(f, r);
	training_json(f, r);
	if (r->ncolls) {
		struct coll_summary cs;
		coll_summarize(r, &cs);
		fprintf(f, "  \"collectives\": {\"count\": %zu, \"completed\": %zu, ", r->ncolls,
			cs.cct_us.n);
		json_dist(f, "cct_us", &cs.cct_us, ", ");
		fprintf(f, "\"busbw_gbps\": {\"min\": %.6f, \"mean\": %.6f}},\n", cs.busbw_min_gbps,
			cs.busbw_mean_gbps);
	}
	if (r->part.ranks > 1)
		fprintf(f,
			"  \"partition\": {\"ranks\": %u, \"over\": \"%s\", \"scheme\": \"%s\", "
			"\"cut_links\": %u, "
			"\"lookahead_us\": %.6f, \"windows\": %llu, \"lockstep_rounds\": %llu, "
			"\"cut_packets\": %llu, \"rank0_wait_s\": %.6f},\n",
			r->part.ranks, r->part.threads ? "threads" : "mpi", r->part.scheme,
			r->part.cut_links, time_to_us(r->part.lookahead),
			(unsigned long long)r->part.windows,
			(unsigned long long)r->part.lockstep_rounds,
			(unsigned long long)r->part.cut_pkts, r->part.wait_s);
	fprintf(f,
		"  \"run\": {\"ranks\": %u, \"sim_time_us\": %.6f, \"events\": %llu, "
		"\"events_peak_pending\": %llu, \"wall_s\": %.6f, "
		"\"events_per_s\": %.0f, \"peak_rss_bytes\": %llu, \"peak_heap_bytes\": %llu, "
		"\"packet_pool_peak\": %llu}\n}\n",
		r->part.ranks ? r->part.ranks : 1, time_to_us(r->sim_end),
		(unsigned long long)r->events, (unsigned long long)r->events_peak_pending,
		r->wall_s, r->wall_s > 0 ? (double)r->events / r->wall_s : 0.0,
		(unsigned long long)r->peak_rss, (unsigned long long)r->peak_heap,
		(unsigned long long)r->pkt_pool_peak);
	return ferror(f) ? -1 : 0;
}

/* A flow that did not complete has empty finish, FCT and slowdown (never 0:
 * a 0 would read as a measurement); delivered_bytes says how far it got (the
 * distinct payload bytes at the receiver; a collective message counts whole
 * once delivered, 0 before). With dependencies or collectives, three more
 * columns: the job (0 = none), its iteration, and when the last byte reached
 * the receiver (what released the dependants; empty when it has not); finish
 * is when the sender learnt it (the FCT's end). */
static int write_flows(FILE *f, const struct run_result *r)
{
	fputs("id,src,dst,bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,retx_bytes,"
	      "completed,delivered_bytes",
	      f);
	if (r->dag)
		fputs(",job,iter,delivered_us", f);
	fputs(r->pfc_counters ? ",blocked_us,hol,data_pkts,reordered\n" : "\n", f);
	for (size_t i = 0; i < r->nflows; i++) {
		const struct flow_rec *fr = &r->flows[i];
		fprintf(f, "%u,%u,%u,%llu,%.6f,", fr->id, fr->src, fr->dst,
			(unsigned long long)fr->bytes, time_to_us(fr->start));
		if (fr->completed)
			fprintf(f, "%.6f,%.6f,", time_to_us(fr->finish), time_to_us(fr->fct));
		else
			fputs(",,", f);
		fprintf(f, "%.6f,", time_to_us(fr->ideal_fct));
		if (fr->completed)
			fprintf(f, "%.6f", fr->slowdown);
		fprintf(f, ",%llu,%d,%llu", (unsigned long long)fr->retx_bytes,
			fr->completed ? 1 : 0, (unsigned long long)fr->rcvd_bytes);
		if (r->dag) {
			fprintf(f, ",%u,%u,", fr->job, fr->iter);
			if (fr->delivered)
				fprintf(f, "%.6f", time_to_us(fr->delivered));
		}
		if (r->pfc_counters && fr->on_qps) /* the queue pairs': summary.json */
			fputs(",,,,", f);
		else if (r->pfc_counters)
			fprintf(f, ",%.6f,%d,%llu,%llu", time_to_us(fr->blocked), fr->hol ? 1 : 0,
				(unsigned long long)fr->data_pkts,
				(unsigned long long)fr->reordered);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

static int write_colls(FILE *f, const struct run_result *r)
{
	fputs("job,iter,ranks,size_bytes,start_us,finish_us,cct_us,algbw_gbps,busbw_gbps,"
	      "completed\n",
	      f);
	for (size_t i = 0; i < r->ncolls; i++) {
		const struct coll_rec *c = &r->colls[i];
		fprintf(f, "%u,%u,%u,%llu,%.6f,%.6f,%.6f,%.6f,%.6f,%d\n", c->job, c->iter,
			c->nranks, (unsigned long long)c->size, time_to_us(c->start),
			time_to_us(c->finish), time_to_us(c->cct), c->algbw / 1e9, c->busbw / 1e9,
			c->completed ? 1 : 0);
	}
	return ferror(f) ? -1 : 0;
}

static int write_ports(FILE *f, const struct run_result *r)
{
	fputs("port,link,group,rate_gbps,tx_bytes,tx_pkts,utilisation,max_queue_bytes,"
	      "mean_queue_bytes,drops_buffer,drops_link,ecn_marks,pause_sent,resume_sent,"
	      "pause_rcvd,paused_us,trimmed,trimmed_bytes\n",
	      f);
	for (size_t i = 0; i < r->nports; i++) {
		const struct port_rec *p = &r->ports[i];
		fprintf(f,
			"%s,%u,%s,%.3f,%llu,%llu,%.6f,%llu,%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%.6f,"
			"%llu,%llu\n",
			p->name, p->link, port_group_names[p->group], (double)p->rate_bps / 1e9,
			(unsigned long long)p->tx_bytes, (unsigned long long)p->tx_pkts,
			p->utilisation, (unsigned long long)p->max_qbytes, p->mean_qbytes,
			(unsigned long long)p->drops_buffer, (unsigned long long)p->drops_link,
			(unsigned long long)p->ecn_marks, (unsigned long long)p->pause_sent,
			(unsigned long long)p->resume_sent, (unsigned long long)p->pause_rcvd,
			time_to_us(p->paused_time), (unsigned long long)p->trimmed,
			(unsigned long long)p->trimmed_bytes);
	}
	return ferror(f) ? -1 : 0;
}

static int write_ts(FILE *f, const struct run_result *r)
{
	fputs("time_us,series,value\n", f);
	for (size_t i = 0; i < r->ts.n; i++) {
		const struct ts_row *row = &r->ts.rows[i];
		fprintf(f, "%.6f,%s,%.6g\n", time_to_us(row->t), r->ts.names[row->series],
			row->value);
	}
	return ferror(f) ? -1 : 0;
}

int results_fclose(FILE *f, const char *path, struct mp_err *e)
{
	/* a failed write leaves its errno to the stream's error flag only: the
	 * flush repeats it (ENOSPC, EDQUOT, EIO); EIO when nothing says more */
	errno = 0;
	int err = fflush(f) != 0 || ferror(f) ? (errno ? errno : EIO) : 0;
	if (fclose(f) != 0 && !err)
		err = errno ? errno : EIO;
	if (err)
		return mp_errf(e, MP_EIO, "error writing '%s': %s", path, strerror(err));
	return MP_OK;
}

static int write_file(const char *dir, const char *name, struct mp_err *e,
		      int (*fn)(FILE *, const struct experiment *, const struct run_result *),
		      const struct experiment *x, const struct run_result *r)
{
	char path[4400];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return mp_errf(e, MP_EIO, "cannot write '%s': %s", path, strerror(errno));
	fn(f, x, r);
	return results_fclose(f, path, e);
}

static int w_summary(FILE *f, const struct experiment *x, const struct run_result *r)
{
	return write_summary(f, x, r);
}
static int w_flows(FILE *f, const struct experiment *x, const struct run_result *r)
{
	(void)x;
	return write_flows(f, r);
}
static int w_colls(FILE *f, const struct experiment *x, const struct run_result *r)
{
	(void)x;
	return write_colls(f, r);
}

static int w_training(FILE *f, const struct experiment *x, const struct run_result *r)
{
	(void)x;
	return training_write_csv(f, r);
}
static int w_timeline(FILE *f, const struct experiment *x, const struct run_result *r)
{
	size_t kept;
	int rc = training_write_timeline(f, r, x->out.timeline_events, &kept);
	if (kept < r->ntrain)
		fprintf(stderr,
			"mpsim: warning: timeline.json holds the first %zu of %zu events "
			"(output.timeline_events)\n",
			kept, r->ntrain);
	return rc;
}

static int w_ports(FILE *f, const struct experiment *x, const struct run_result *r)
{
	(void)x;
	return write_ports(f, r);
}
static int w_ts(FILE *f, const struct experiment *x, const struct run_result *r)
{
	(void)x;
	return write_ts(f, r);
}
static int w_config(FILE *f, const struct experiment *x, const struct run_result *r)
{
	(void)r;
	exp_write_effective(f, x);
	return ferror(f) ? -1 : 0;
}

int results_write(const char *outdir, const struct experiment *x, const struct run_result *r,
		  const char *paper_csv, struct mp_err *e)
{
	char tmp[4096];
	if (results_tmpdir(outdir, tmp, sizeof tmp, e))
		return e->status;
	if (write_file(tmp, "config.yaml", e, w_config, x, r) ||
	    write_file(tmp, "flows.csv", e, w_flows, x, r) ||
	    write_file(tmp, "timeseries.csv", e, w_ts, x, r) ||
	    write_file(tmp, "ports.csv", e, w_ports, x, r) ||
	    (r->ncolls && write_file(tmp, "collectives.csv", e, w_colls, x, r)) ||
	    (r->ntrain && write_file(tmp, "training.csv", e, w_training, x, r)) ||
	    (r->ntrain && x->out.timeline &&
	     write_file(tmp, "timeline.json", e, w_timeline, x, r)) ||
	    (r->qp_trace && results_write_text(tmp, "qp_trace.csv", r->qp_trace, e)) ||
	    write_file(tmp, "summary.json", e, w_summary, x, r) ||
	    (paper_csv && results_write_text(tmp, "paper.csv", paper_csv, e))) {
		results_discard(tmp);
		return e->status;
	}
	return results_commit(tmp, outdir, e);
}

void results_print_table(FILE *f, const struct experiment *x, const struct run_result *r)
{
	struct fct_stats all;
	summarize(r, 0, UINT64_MAX, &all);
	char wl[128];
	exp_workload_name(x, wl, sizeof wl);
	fprintf(f, "\n%s: %s on %s (%u hosts), workload %s, seed %llu\n", x->gen.name, x->tp->name,
		x->topo->name, r->nhosts, wl, (unsigned long long)x->gen.seed);
	fprintf(f, "  flows completed %zu / %zu, simulated %.1f us\n\n", r->ncompleted, r->nflows,
		time_to_us(r->sim_end));
	fprintf(f, "  %-12s %7s %11s %11s %11s %11s %9s %9s\n", "size", "flows", "FCT mean",
		"FCT p50", "FCT p99", "FCT max", "slow p99", "slow max");
	fprintf(f, "  %-12s %7s %11s %11s %11s %11s %9s %9s\n", "", "", "(us)", "(us)", "(us)",
		"(us)", "", "");
	for (int b = 0; b <= NBUCKETS; b++) {
		struct fct_stats bs;
		if (b < NBUCKETS)
			summarize(r, b ? bucket_hi[b - 1] : 0, bucket_hi[b], &bs);
		else
			bs = all;
		if (!bs.fct_us.n)
			continue;
		fprintf(f, "  %-12s %7zu %11.2f %11.2f %11.2f %11.2f %9.3f %9.3f\n",
			b < NBUCKETS ? bucket_name[b] : "all", bs.fct_us.n, bs.fct_us.mean,
			bs.fct_us.p50, bs.fct_us.p99, bs.fct_us.max, bs.slowdown.p99,
			bs.slowdown.max);
	}
	if (r->ncolls) {
		struct coll_summary cs;
		coll_summarize(r, &cs);
		fprintf(f,
			"\n  collectives completed %zu / %zu (jobs x iterations; collectives.csv)\n"
			"  CCT (us): mean %.2f, p50 %.2f, max %.2f   busbw (Gb/s): min %.2f, "
			"mean %.2f\n",
			cs.cct_us.n, r->ncolls, cs.cct_us.mean, cs.cct_us.p50, cs.cct_us.max,
			cs.busbw_min_gbps, cs.busbw_mean_gbps);
	}
	training_print(f, r);
	const struct net_totals *t = &r->net;
	uint64_t retx = 0;
	for (size_t i = 0; i < r->nflows; i++)
		retx += r->flows[i].retx_bytes;
	fprintf(f, "\n  drops: buffer %llu, link %llu, no route %llu   ECN marks %llu\n",
		(unsigned long long)t->drops_buffer, (unsigned long long)t->drops_link,
		(unsigned long long)t->drops_no_route, (unsigned long long)t->ecn_marks);
	if (t->trimmed)
		fprintf(f, "  trimmed %llu packets (%llu B cut)\n", (unsigned long long)t->trimmed,
			(unsigned long long)t->trimmed_bytes);
	fprintf(f,
		"  PFC pauses %llu (paused %.1f us in all)   retransmitted %llu B   "
		"max queue %llu B\n",
		(unsigned long long)t->pause_frames, time_to_us(t->paused_time),
		(unsigned long long)retx, (unsigned long long)t->max_queue_bytes);
	if (r->nmeasured < r->nflows)
		fprintf(f, "  FCT statistics count the %zu flows started in [%.1f us, %.1f us)\n",
			r->nmeasured, time_to_us(x->out.fct_from),
			x->out.fct_until ? time_to_us(x->out.fct_until) : INFINITY);
	print_load(f, &r->load);
	if (r->lb.scheme) {
		fprintf(f, "  %s:", r->lb.scheme);
		for (unsigned i = 0; i < r->lb.n; i++)
			fprintf(f, "%s %s %llu", i ? "," : "", r->lb.name[i],
				(unsigned long long)r->lb.v[i]);
		fputc('\n', f);
	}
	if (r->pfc_counters) {
		struct pfc_summary ps;
		pfc_summarize(r, &ps);
		fprintf(
		    f,
		    "  PFC: %zu of %zu flows HoL-blocked (blocked > %.0f%% of FCT), mean blocked "
		    "%.2f us; reordered %llu of %llu data packets\n",
		    ps.hol, r->nmeasured, 100 * x->out.hol_fraction, ps.blocked_us_mean,
		    (unsigned long long)ps.reordered, (unsigned long long)ps.data_pkts);
	}
	if (x->sw.mode == BUF_LOSSLESS)
		fprintf(f, "  lossless: max buffer used %llu of %llu B, lossless_overflow %llu B\n",
			(unsigned long long)t->max_buffer_used, (unsigned long long)x->sw.buffer,
			(unsigned long long)t->lossless_overflow);
	fprintf(f, "  %llu events in %.2f s wall (%.1f M events/s), peak RSS %.1f MB\n",
		(unsigned long long)r->events, r->wall_s,
		r->wall_s > 0 ? (double)r->events / r->wall_s / 1e6 : 0.0,
		(double)r->peak_rss / 1e6);
}

/* run.c - one experiment from a checked description to results; see run.h. */
#include "sim/run.h"
#include "sim/training.h"
#include "sim/load.h"
#include "sim/part.h"
#include "sim/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/rng.h"
#include "net/fabric.h"
#include "net/lb.h"
#include "net/node.h"
#include "net/port.h"
#include "net/switch.h"
#include "transport/conn.h"
#include "transport/tp_world.h"
#include "transport/transport.h"

enum samp_kind {
	SAMP_QUEUE_PORT,
	SAMP_QUEUE_MAX,
	SAMP_UTIL,
	SAMP_FLOW_TPUT,
	SAMP_PAUSES,
	SAMP_DROPS,
	SAMP_PAUSED,
	SAMP_INGRESS,
	SAMP_TRACE,	/* series .. series + 3: cwnd, rate, RTT, path of conn */
	SAMP_CCL_WINDOW /* the collective scheduler's window of chan */
};
#define group_names port_group_names

struct ts_sampler {
	enum samp_kind kind;
	uint32_t series;
	struct port *port;
	int group;
	struct conn *conn;
	struct ccl_chan *chan;
	uint64_t prev; /* SAMP_PAUSES: the count at the previous sample; SAMP_PAUSED: ps */
};

double sim_wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool port_in_group(const struct port *pt, int g)
{
	uint32_t lo = pt->owner->level, lp = pt->peer->owner->level;
	bool up = lp > lo || (lp == lo && pt->owner->id < pt->peer->owner->id);
	switch (g) {
	case G_HOST_UP:
		return lo == 0;
	case G_LAST_HOP:
		return lp == 0;
	case G_T1_UP:
		return pt->tier == TIER_1 && up;
	case G_T1_DOWN:
		return pt->tier == TIER_1 && !up;
	case G_T2_UP:
		return pt->tier == TIER_2 && up;
	case G_T2_DOWN:
		return pt->tier == TIER_2 && !up;
	case G_FABRIC:
		return lo != 0 && lp != 0;
	default:
		return lo != 0;
	}
}

/* the ports a group sampler reads: its group, or its one named port */
static bool sampler_has(const struct ts_sampler *sp, const struct port *pt)
{
	return sp->port ? pt == sp->port : port_in_group(pt, sp->group);
}

static int find_group(const char *name)
{
	for (int i = 0; group_names[i]; i++)
		if (strcmp(group_names[i], name) == 0)
			return i;
	return -1;
}

/* A directed link "a-b": the port at a facing b. */
static struct port *find_port(struct fabric *f, const char *name)
{
	uint32_t l = fab_find_link(f, name);
	if (l == UINT32_MAX)
		return NULL;
	const struct fab_link_spec *ls = &f->links[l];
	/* which end was named first? */
	const char *an = f->nodes[ls->a]->name;
	size_t n = strlen(an);
	bool a_first = strncmp(name, an, n) == 0 && name[n] == '-';
	return a_first ? &f->nodes[ls->a]->ports[ls->pa] : &f->nodes[ls->b]->ports[ls->pb];
}

static void sampler_add(struct sim *s, struct ts_sampler sp)
{
	s->samplers = mp_realloc(s->samplers, (s->nsamplers + 1) * sizeof *s->samplers);
	s->samplers[s->nsamplers++] = sp;
}

/* `output.queues`: a port's queue, or the largest of a group's. */
static int add_queue_samplers(struct sim *s, struct mp_err *e)
{
	const struct exp_output *o = &s->x->out;
	char name[300];
	for (size_t i = 0; i < o->queues.n; i++) {
		const char *q = o->queues.v[i];
		struct ts_sampler sp = { 0 };
		if (strncmp(q, "max:", 4) == 0) {
			sp.kind = SAMP_QUEUE_MAX;
			sp.group = find_group(q + 4);
			if (sp.group < 0)
				return exp_errf(
				    e, s->x, "output",
				    "queues: unknown group '%s'; expected max:host_up, "
				    "max:last_hop, max:tier1_up, max:tier1_down, "
				    "max:tier2_up, max:tier2_down, max:all or max:fabric",
				    q + 4);
		} else {
			sp.kind = SAMP_QUEUE_PORT;
			sp.port = find_port(&s->fab, q);
			if (!sp.port)
				return exp_errf(
				    e, s->x, "output",
				    "queues: no link named '%s' (expected max:<group> or a "
				    "link such as leaf0-spine1)",
				    q);
		}
		snprintf(name, sizeof name, "queue_bytes:%s", q);
		sp.series = ts_series(s->ts, name);
		sampler_add(s, sp);
	}
	return MP_OK;
}

/* `output.utilisation`, `pauses`, `drops`, `paused`: one series per listed
 * port group or link. */
static int add_group_samplers(struct sim *s, struct mp_err *e)
{
	const struct exp_output *o = &s->x->out;
	char name[300];
	const struct {
		const struct opt_strlist *list;
		enum samp_kind kind;
		const char *key, *prefix;
	} per_group[] = {
		{ &o->utilisation, SAMP_UTIL, "utilisation", "utilisation" },
		{ &o->pauses, SAMP_PAUSES, "pauses", "pause_frames" },
		{ &o->drops, SAMP_DROPS, "drops", "drops" },
		{ &o->paused, SAMP_PAUSED, "paused", "paused_frac" },
	};
	for (size_t k = 0; k < sizeof per_group / sizeof *per_group; k++)
		for (size_t i = 0; i < per_group[k].list->n; i++) {
			const char *g = per_group[k].list->v[i];
			struct ts_sampler sp = { .kind = per_group[k].kind,
						 .group = find_group(g) };
			if (sp.group < 0 && !(sp.port = find_port(&s->fab, g)))
				return exp_errf(
				    e, s->x, "output",
				    "%s: unknown group or link '%s' (expected host_up, "
				    "last_hop, tier1_up, tier1_down, tier2_up, tier2_down, "
				    "all, fabric, or a directed link such as leaf0-spine1)",
				    per_group[k].key, g);
			snprintf(name, sizeof name, "%s:%s", per_group[k].prefix, g);
			sp.series = ts_series(s->ts, name);
			sampler_add(s, sp);
		}
	return MP_OK;
}

/* `output.ingress`: a switch port's ingress bytes. */
static int add_ingress_samplers(struct sim *s, struct mp_err *e)
{
	const struct exp_output *o = &s->x->out;
	char name[300];
	for (size_t i = 0; i < o->ingress.n; i++) {
		const char *q = o->ingress.v[i];
		struct ts_sampler sp = { .kind = SAMP_INGRESS, .port = find_port(&s->fab, q) };
		if (!sp.port || sp.port->owner->kind != NODE_SWITCH)
			return exp_errf(
			    e, s->x, "output",
			    "ingress: expected a directed link a-b from a switch a (its "
			    "port toward b), got '%s'",
			    q);
		snprintf(name, sizeof name, "ingress_bytes:%s", q);
		sp.series = ts_series(s->ts, name);
		sampler_add(s, sp);
	}
	return MP_OK;
}

/* `output.flow_throughput` and `output.traces`: per connection (its goodput;
 * its cwnd, rate, RTT and path), and per channel of a collective scheduler
 * with a window. */
static void add_conn_samplers(struct sim *s)
{
	const struct exp_output *o = &s->x->out;
	char name[300];
	if (o->flow_throughput)
		for (uint32_t i = 0; i < s->w.nconns && i < o->flow_throughput_max; i++) {
			snprintf(name, sizeof name, "goodput_gbps:flow%u", i);
			sampler_add(s, (struct ts_sampler){ .kind = SAMP_FLOW_TPUT,
							    .series = ts_series(s->ts, name),
							    .conn = s->w.conns[i] });
		}
	if (!o->traces)
		return;
	tp_world_trace(&s->w);
	static const char *const fam[] = { "cwnd_bytes", "rate_gbps", "rtt_us", "path" };
	for (uint32_t i = 0; i < s->w.nconns && i < o->traces_max; i++) {
		struct ts_sampler sp = { .kind = SAMP_TRACE, .conn = s->w.conns[i] };
		for (int k = 0; k < 4; k++) {
			snprintf(name, sizeof name, "%s:flow%u", fam[k], i);
			uint32_t id = ts_series(s->ts, name);
			if (k == 0)
				sp.series = id;
		}
		sampler_add(s, sp);
	}
	/* a collective scheduler with a window (MCC): each channel's, chunks */
	const struct ccl_sched_ops *so = s->x->coll ? s->ccl.ops : NULL;
	for (uint32_t i = 0; so && so->window && i < s->ccl.nchans && i < o->traces_max; i++) {
		snprintf(name, sizeof name, "ccl_window:ch%u", i);
		sampler_add(s, (struct ts_sampler){ .kind = SAMP_CCL_WINDOW,
						    .series = ts_series(s->ts, name),
						    .chan = s->ccl.chans[i] });
	}
}

/* The samplers of the `output:` section, in the order of their series. */
static int setup_samplers(struct sim *s, struct mp_err *e)
{
	if (add_queue_samplers(s, e) || add_group_samplers(s, e) || add_ingress_samplers(s, e))
		return e->status;
	add_conn_samplers(s);
	return MP_OK;
}

/* One trace sample of a connection: the four series after sp->series; a
 * value the protocol does not keep is left out. */
static void sample_trace(struct sim *s, struct ts_sampler *sp, simtime_t now, simtime_t dt)
{
	struct conn *c = sp->conn;
	struct tp_trace t;
	tp_trace_fill(c, &t);
	double sent = (double)(c->sent_bytes - sp->prev);
	sp->prev = c->sent_bytes;
	if (isnan(t.rate) && c->started)
		t.rate = sent * 8.0 / time_to_s(dt); /* a window protocol: what it sent */
	double v[4] = { t.cwnd, t.rate / 1e9, t.rtt / 1e6, t.path };
	for (uint32_t k = 0; k < 4; k++)
		if (!isnan(v[k]))
			ts_push(s->ts, now, sp->series + k, v[k]);
}

static void progress_tick(struct sim *s);

/* The time series reached the rows sim_plan_series left them: stop the run
 * with a sentence (a run without stop_time ends when its flows complete,
 * which cannot be known before it runs; plan.c refuses before the first event
 * what cannot fit to well past the workload's ideal end). */
static void ts_over(struct sim *s, simtime_t now)
{
	const struct experiment *x = s->x;
	char iv[32], at[32];
	opt_format_time(x->out.interval, iv, sizeof iv);
	opt_format_time(now, at, sizeof at);
	exp_errf(&s->err, x, "output",
		 "interval: the time series of %u series every %s outgrew the memory at %s "
		 "of simulated time (%zu rows, about %.1f MB; the machine's memory or "
		 "MPSIM_MEM_LIMIT), and the run was stopped: expected a longer interval, "
		 "fewer series or a stop_time",
		 s->nsamplers, iv, at, s->ts->n,
		 (double)s->ts->n * (double)sizeof(struct ts_row) / 1e6);
	s->q.stop = true;
}

/* Utilisation's fixed point: a port's share of dt in units of 2^-32. */
#define UTIL_ONE 4294967296.0

/* A partitioned run's row of a summing sampler holds the bits of the rank's
 * integer sum, which sim_ts_combine adds up over the ranks. */
static double part_bits(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

/* A partitioned run's rank samples the ports it owns, and for drops also
 * those whose wire ends here: what a failed link loses on its way from
 * another rank is counted at its sending port on this one (port_wire_lost,
 * sim/part.c). */
static bool sample_here(const struct sim *s, const struct port *pt, bool drops)
{
	return part_mine(s->part, pt->owner) || (drops && part_mine(s->part, pt->peer_node));
}

/* A port-group sampler's value over the ports it covers: the largest
 * queue, the mean utilisation, the pauses or drops since the last sample,
 * or the mean paused share of dt. */
static double sample_ports(struct sim *s, struct ts_sampler *sp, simtime_t now, simtime_t dt)
{
	struct fabric *f = &s->fab;
	double v = 0;
	switch (sp->kind) {
	case SAMP_QUEUE_MAX:
		for (uint32_t n = 0; n < f->nnodes; n++)
			for (uint16_t p = 0;
			     p < f->nodes[n]->nports && part_mine(s->part, f->nodes[n]); p++) {
				struct port *pt = &f->nodes[n]->ports[p];
				if (port_in_group(pt, sp->group) && pt->qbytes_total > v)
					v = (double)pt->qbytes_total;
			}
		break;
	case SAMP_UTIL: {
		/* each port's share in fixed point (2^-32), summed as an integer:
		 * the same in any order, so ranks' partial sums add up to it */
		uint64_t sum = 0;
		uint32_t cnt = 0;
		for (uint32_t n = 0; n < f->nnodes; n++)
			for (uint16_t p = 0;
			     p < f->nodes[n]->nports && part_mine(s->part, f->nodes[n]); p++) {
				struct port *pt = &f->nodes[n]->ports[p];
				if (!sampler_has(sp, pt))
					continue;
				uint64_t b = pt->tx_bytes - pt->ts_tx_bytes;
				sum += (uint64_t)((double)b * 8.0 /
						      ((double)pt->rate_bps * time_to_s(dt)) *
						      UTIL_ONE +
						  0.5);
				cnt++;
			}
		if (s->part)
			return part_bits(sum);
		v = cnt ? (double)sum / UTIL_ONE / cnt : 0;
		break;
	}
	case SAMP_PAUSES:
	case SAMP_DROPS: {
		uint64_t sum = 0;
		for (uint32_t n = 0; n < f->nnodes; n++)
			for (uint16_t p = 0; p < f->nodes[n]->nports; p++) {
				struct port *pt = &f->nodes[n]->ports[p];
				if (sampler_has(sp, pt) &&
				    sample_here(s, pt, sp->kind == SAMP_DROPS))
					sum += sp->kind == SAMP_PAUSES
						   ? pt->st.pause_sent
						   : pt->st.drops_buffer + pt->st.drops_link;
			}
		v = s->part ? part_bits(sum - sp->prev) : (double)(sum - sp->prev);
		sp->prev = sum;
		break;
	}
	case SAMP_PAUSED: { /* mean over the ports of the paused share of dt */
		uint64_t sum = 0, cnt = 0;
		for (uint32_t n = 0; n < f->nnodes; n++)
			for (uint16_t p = 0;
			     p < f->nodes[n]->nports && part_mine(s->part, f->nodes[n]); p++) {
				struct port *pt = &f->nodes[n]->ports[p];
				if (!sampler_has(sp, pt))
					continue;
				sum += port_paused_time(pt, now);
				cnt++;
			}
		v = s->part ? part_bits(sum - sp->prev)
		    : cnt   ? (double)(sum - sp->prev) / (double)cnt / (double)dt
			    : 0;
		sp->prev = sum;
		break;
	}
	default:
		MP_PANIC("sampler kind %d walks no ports", (int)sp->kind);
	}
	return v;
}

/* Take one sampler's sample at now into its series. */
static void sample_one(struct sim *s, struct ts_sampler *sp, simtime_t now, simtime_t dt)
{
	double v = 0;
	if (s->part) { /* a port's or a connection's: its rank's row alone */
		const struct port *pt = sp->port;
		if ((pt && (sp->kind == SAMP_QUEUE_PORT || sp->kind == SAMP_INGRESS) &&
		     !part_mine(s->part, pt->owner)) ||
		    (sp->conn && !part_mine(s->part, &sp->conn->src->node)) ||
		    (sp->chan && !part_mine(s->part, &s->fab.hosts[sp->chan->src]->node)))
			return;
	}
	switch (sp->kind) {
	case SAMP_QUEUE_PORT:
		v = (double)sp->port->qbytes_total;
		break;
	case SAMP_QUEUE_MAX:
	case SAMP_UTIL:
	case SAMP_PAUSES:
	case SAMP_DROPS:
	case SAMP_PAUSED:
		v = sample_ports(s, sp, now, dt);
		break;
	case SAMP_INGRESS:
		v = (double)(sp->port->ingress_bytes[CLS_DATA] + sp->port->hdrm_used);
		break;
	case SAMP_TRACE:
		sample_trace(s, sp, now, dt);
		return;
	case SAMP_CCL_WINDOW:
		v = s->ccl.ops->window(sp->chan);
		if (isnan(v))
			return;
		break;
	case SAMP_FLOW_TPUT:
		v = (double)(sp->conn->acked_bytes - sp->conn->ts_acked_bytes) * 8.0 /
		    time_to_s(dt) / 1e9;
		sp->conn->ts_acked_bytes = sp->conn->acked_bytes;
		break;
	}
	ts_push(s->ts, now, sp->series, v);
}

/* The sampling event: every sampler's sample, the next sampling event
 * while flows run or stop_time is ahead, the time series' bound and the
 * progress line. */
static void sample(void *obj, uint64_t arg)
{
	struct sim *s = obj;
	simtime_t now = s->q.now, dt = s->x->out.interval;
	struct fabric *f = &s->fab;
	(void)arg;
	for (uint32_t i = 0; i < s->nsamplers; i++)
		sample_one(s, &s->samplers[i], now, dt);
	/* utilisation baselines move after every sampler has read them */
	for (uint32_t n = 0; n < f->nnodes; n++)
		for (uint16_t p = 0; p < f->nodes[n]->nports; p++)
			f->nodes[n]->ports[p].ts_tx_bytes = f->nodes[n]->ports[p].tx_bytes;
	/* a partitioned run's ranks do not know the count of flows done; they
	 * push the next sample always: one process pushes it too whenever it
	 * will be taken (not after the last flow, beyond stop_time) */
	if (s->part || s->nflows_done < s->flows.n ||
	    (s->x->gen.stop_time && now + dt <= s->x->gen.stop_time))
		evq_at(&s->q, &s->evs, now + dt, sample, s, 0);
	if (s->ts->over && !s->err.status) {
		ts_over(s, now);
		return;
	}
	/* a sample walks every port: where samples are most of the events
	 * (flows done, stop_time ahead) a batch of events takes long, so the
	 * clock is read here too */
	if (s->show_progress)
		progress_tick(s);
}

static int row_cmp(const void *a, const void *b)
{
	const struct ts_row *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->series < y->series ? -1 : x->series > y->series;
}

/* The sampler whose series `series` is (a trace has four). */
static const struct ts_sampler *sampler_of(const struct sim *s, uint32_t series)
{
	for (uint32_t i = 0; i < s->nsamplers; i++) {
		const struct ts_sampler *sp = &s->samplers[i];
		if (series >= sp->series && series < sp->series + (sp->kind == SAMP_TRACE ? 4 : 1))
			return sp;
	}
	MP_PANIC("no sampler has series %u", series);
}

/* The ports a group sampler covers, over the whole fabric. */
static uint64_t sampler_ports(const struct sim *s, const struct ts_sampler *sp)
{
	uint64_t cnt = 0;
	for (uint32_t n = 0; n < s->fab.nnodes; n++)
		for (uint16_t p = 0; p < s->fab.nodes[n]->nports; p++)
			cnt += sampler_has(sp, &s->fab.nodes[n]->ports[p]);
	return cnt;
}

/* Rows of one sample time and series from every rank, [a, b): the value
 * one process takes (sample_ports) from the ranks' partial ones. */
static double combine_rows(const struct sim *s, const struct ts_row *a, const struct ts_row *b)
{
	const struct ts_sampler *sp = sampler_of(s, a->series);
	if (sp->kind == SAMP_QUEUE_MAX) {
		double v = 0;
		for (; a < b; a++)
			v = a->value > v ? a->value : v;
		return v;
	}
	if (sp->kind != SAMP_UTIL && sp->kind != SAMP_PAUSES && sp->kind != SAMP_DROPS &&
	    sp->kind != SAMP_PAUSED) {
		MP_ASSERT(b - a == 1); /* a port's or a connection's: its rank's */
		return a->value;
	}
	uint64_t sum = 0;
	for (; a < b; a++) {
		uint64_t u;
		memcpy(&u, &a->value, sizeof u);
		sum += u;
	}
	if (sp->kind == SAMP_PAUSES || sp->kind == SAMP_DROPS)
		return (double)sum;
	uint64_t cnt = sampler_ports(s, sp);
	if (!cnt)
		return 0;
	if (sp->kind == SAMP_UTIL)
		return (double)sum / UTIL_ONE / (double)cnt;
	return (double)sum / (double)cnt / (double)s->x->out.interval;
}

void sim_ts_combine(struct sim *s, struct ts_row *rows, size_t n)
{
	if (n) /* no rows: rows may be NULL */
		qsort(rows, n, sizeof *rows, row_cmp);
	size_t k = 0;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && rows[j].t == rows[i].t && rows[j].series == rows[i].series;
		     j++)
			;
		struct ts_row r = rows[i];
		r.value = combine_rows(s, rows + i, rows + j);
		rows[k++] = r;
	}
	mp_free(s->ts->rows);
	s->ts->rows = rows;
	s->ts->n = s->ts->cap = k;
}

static void conn_start(void *obj, uint64_t arg)
{
	struct conn *c = obj;
	(void)arg;
	c->started = true;
	c->w->ops->open(c);
}

/* ---- the message DAG ------------------------------------------------------------ */

static void msg_release(void *obj, uint64_t arg);
static void marker_release(struct sim *s, uint32_t id, simtime_t at);

static void flow_finished(struct sim *s)
{
	if (++s->nflows_done == s->flows.n && s->x->gen.stop_time == 0)
		s->q.stop = true;
}

/* Flow f's dependency on a completion at t: the latest completion is
 * kept, so that the release time does not depend on the order the
 * completions are heard in (a partitioned run hears another rank's at a
 * window's end): in one process the last one heard is the latest. */
void sim_dep_arrive(struct sim *s, uint32_t f, simtime_t t)
{
	if (!s->left[f])
		return;
	s->dep_last[f] = t > s->dep_last[f] ? t : s->dep_last[f];
	if (--s->left[f])
		return;
	const struct flow_spec *fs = &s->flows.v[f];
	simtime_t at = s->dep_last[f] + fs->delay;
	at = at > fs->start ? at : fs->start;
	if (at < s->q.now) {
		/* partitioned: a marker whose last completion is heard from
		 * another rank after its time; what it releases comes no
		 * earlier than the window it is heard after (part.c checks) */
		MP_ASSERT(s->part && flow_is_marker(fs));
		marker_release(s, f, at);
		return;
	}
	evq_push(&s->q, at, sim_rel_key(s, f), msg_release, s, f);
}

/* Flow f's completion at t reaches dependant g. Partitioned, a message's
 * release is its sender's rank's and a marker's every rank's: a message's
 * completion goes to the rank of a message that waits for it and to every
 * other rank for a marker; a marker's own completion, which every rank has,
 * stays on each. */
static void dep_reach(struct sim *s, uint32_t f, uint32_t g, simtime_t t)
{
	if (!s->part) {
		sim_dep_arrive(s, g, t);
		return;
	}
	bool from_marker = flow_is_marker(&s->flows.v[f]);
	if (flow_is_marker(&s->flows.v[g])) {
		sim_dep_arrive(s, g, t);
		if (!from_marker)
			part_dep_bcast(s, g, t);
	} else if (part_flow_mine(s, g)) {
		sim_dep_arrive(s, g, t);
	} else if (!from_marker) {
		part_dep_send(s, g, t);
	}
}

/* Flow id completed at its receiver (rx) or sender at `now`: release what
 * waited. */
static void flow_done(struct sim *s, uint32_t id, bool rx, simtime_t now)
{
	if (rx)
		s->rx_at[id] = now;
	else
		s->tx_at[id] = now;
	for (uint32_t k = s->dep_off[id]; k < s->dep_off[id + 1]; k++) {
		uint32_t d = s->dep_to[k];
		if (!(d & FLOW_DEP_SENT) == rx)
			dep_reach(s, id, FLOW_DEP_ID(d), now);
	}
	/* a marker, released on every rank, is counted on one (part_flow_mine) */
	if (!rx && (!s->part || !flow_is_marker(&s->flows.v[id]) || part_flow_mine(s, id)))
		flow_finished(s);
}

/* A marker's release at `at` (now, or earlier when a partitioned run hears
 * of its last completion late): it completes at once. */
static void marker_release(struct sim *s, uint32_t id, simtime_t at)
{
	s->rel_at[id] = at;
	s->nmarkers_rel += !s->part || part_flow_mine(s, id);
	flow_done(s, id, true, at);
	flow_done(s, id, false, at);
}

static void msg_release(void *obj, uint64_t arg)
{
	struct sim *s = obj;
	uint32_t id = (uint32_t)arg;
	const struct flow_spec *fs = &s->flows.v[id];
	if (flow_is_marker(fs)) {
		marker_release(s, id, s->q.now);
		return;
	}
	s->rel_at[id] = s->q.now;
	if (s->fconn[id]) {
		s->fconn[id]->start = s->q.now;
		conn_start(s->fconn[id], 0);
	} else {
		ccl_post(&s->ccl, s->fchan[id], id, fs->bytes);
	}
}

static void pend_drain(void *obj, uint64_t arg)
{
	struct sim *s = obj;
	(void)arg;
	s->pend_ev = false;
	/* completions that arrive while draining join the end */
	for (uint32_t i = 0; i < s->npend; i++) {
		struct pend_msg pm = s->pend[i];
		ccl_on_msg(&s->ccl, pm.c, pm.tag, pm.rx);
	}
	s->npend = 0;
}

static void on_msg(void *ctx, struct conn *c, uint32_t tag, bool rx)
{
	struct sim *s = ctx;
	if (!c->stream) {
		/* partitioned: a delivery is reported on the side the protocol
		 * reports it from, and on the other side's rank again, by
		 * tp_msgq_tx's catch-up (its copy never saw the receiver's
		 * report) or by nothing: that side's rank alone counts it */
		if (rx && s->part &&
		    !part_mine(s->part, c->w->ops->tx_reports_rx ? &c->src->node : &c->dst->node))
			return;
		flow_done(s, s->conn_flow[c->id], rx, s->q.now);
		return;
	}
	/* partitioned: a queue pair's delivery is its receiver's rank's (the
	 * sender's tp_msgq_tx catches up on what its copy never saw) */
	if (rx && s->part && !part_mine(s->part, &c->dst->node))
		return;
	/* a queue pair's message: the ccl hears of it from an event of its own,
	 * never from inside the transport (it may post on the same queue pair) */
	tp_grow((void **)&s->pend, sizeof *s->pend, &s->pend_cap, s->npend + 1);
	s->pend[s->npend++] = (struct pend_msg){ c, tag, rx };
	if (!s->pend_ev) {
		s->pend_ev = true;
		evq_push(&s->q, s->q.now, SIM_PEND_KEY, pend_drain, s, 0);
	}
}

static void ccl_done(void *ctx, uint32_t id, bool rx)
{
	struct sim *s = ctx;
	s->nccl_rx += rx;
	flow_done(s, id, rx, s->q.now);
}

/* The flows become connections (their own, or the ccl's queue pairs), the DAG
 * its dependants' lists, and the flows that wait for nothing are scheduled. */
static int setup_flows(struct sim *s, struct mp_err *e)
{
	const struct experiment *x = s->x;
	struct flow_list *fl = &s->flows;
	size_t n = fl->n;
	if (fl->ndeps && flow_list_check_dag(fl, e))
		return exp_reraise(e, x, x->coll && !x->wl ? "collective" : "workload");
	s->left = mp_calloc(n + 1, sizeof *s->left);
	s->dep_off = mp_calloc(n + 2, sizeof *s->dep_off);
	s->dep_to = mp_malloc((fl->ndeps + 1) * sizeof *s->dep_to);
	s->rel_at = mp_malloc((n + 1) * sizeof *s->rel_at);
	s->dep_last = mp_calloc(n + 1, sizeof *s->dep_last);
	for (size_t i = 0; i <= n; i++)
		s->rel_at[i] = SIMTIME_MAX; /* not released yet */
	s->rx_at = mp_calloc(n + 1, sizeof *s->rx_at);
	s->tx_at = mp_calloc(n + 1, sizeof *s->tx_at);
	s->fconn = mp_calloc(n + 1, sizeof *s->fconn);
	s->fchan = mp_calloc(n + 1, sizeof *s->fchan);
	s->conn_flow = mp_calloc(n + 1, sizeof *s->conn_flow);
	for (size_t i = 0; i < n; i++) {
		const struct flow_spec *fs = &fl->v[i];
		s->left[i] = fs->need ? fs->need : fs->ndeps;
		for (uint32_t k = 0; k < fs->ndeps; k++)
			s->dep_off[FLOW_DEP_ID(fl->deps[fs->dep0 + k]) + 2]++;
	}
	for (size_t i = 0; i < n; i++)
		s->dep_off[i + 2] += s->dep_off[i + 1];
	for (size_t i = 0; i < n; i++) {
		const struct flow_spec *fs = &fl->v[i];
		for (uint32_t k = 0; k < fs->ndeps; k++) {
			uint32_t d = fl->deps[fs->dep0 + k];
			s->dep_to[s->dep_off[FLOW_DEP_ID(d) + 1]++] =
			    (uint32_t)i | (d & FLOW_DEP_SENT);
		}
	}
	/* plain flows first, in order: their connection ids are as they always were */
	for (size_t i = 0; i < n; i++) {
		const struct flow_spec *fs = &fl->v[i];
		if (fs->job || flow_is_marker(fs))
			continue;
		if (fs->src >= s->fab.nhosts || fs->dst >= s->fab.nhosts || fs->src == fs->dst)
			return exp_errf(e, x, "workload",
					"flow %zu goes from host %u to host %u "
					"but the fabric has hosts 0..%u",
					i, fs->src, fs->dst, s->fab.nhosts - 1);
		struct conn *c = tp_conn_add(&s->w, fs->src, fs->dst, fs->bytes, fs->start);
		s->fconn[i] = c;
		s->conn_flow[c->id] = (uint32_t)i;
		if (fs->pin || fs->ack_pin)
			fab_pin(&s->fab, c->id, fs->pin, fs->ack_pin);
		if (!fs->ndeps)
			evq_at(&s->q, &c->evs, fs->start, conn_start, c, 0);
	}
	ccl_init(&s->ccl, &s->w, x->ccl, x->ccl_params, &x->server, (uint32_t)n);
	s->ccl.on_done = ccl_done;
	s->ccl.ctx = s;
	for (size_t i = 0; i < n; i++) {
		const struct flow_spec *fs = &fl->v[i];
		if (fs->job && !flow_is_marker(fs))
			s->fchan[i] = ccl_chan_get(&s->ccl, fs->job, fs->src, fs->dst);
	}
	/* every connection is made: the releases' entities come above theirs */
	s->rel_base = TP_ENTITY_BASE + s->w.nconns;
	if ((uint64_t)s->rel_base + n > (uint64_t)EVQ_MAX_ENTITY + 1)
		return exp_errf(e, x, x->coll && !x->wl ? "collective" : "workload",
				"%zu messages over %u connections: expected at most %u of them "
				"together (the event key's entities)",
				n, s->w.nconns, EVQ_MAX_ENTITY + 1 - TP_ENTITY_BASE);
	for (size_t i = 0; i < n; i++)
		if (!s->fconn[i] && !fl->v[i].ndeps)
			evq_push(&s->q, fl->v[i].start, sim_rel_key(s, (uint32_t)i), msg_release, s,
				 i);
	return MP_OK;
}

static void apply_link(struct fabric *f, const struct exp_event *ev, uint32_t link)
{
	switch (ev->action) {
	case LINK_DOWN:
		fab_link_set_up(f, link, false);
		break;
	case LINK_UP:
		fab_link_set_up(f, link, true);
		break;
	case LINK_RATE:
		fab_link_set_rate(f, link, ev->u);
		break;
	case LINK_DELAY:
		fab_link_set_delay(f, link, ev->u);
		break;
	case LINK_LOSS:
		fab_link_set_loss(f, link, ev->d);
		break;
	case LINK_PROC_DELAY:
		fab_link_set_proc_delay(f, link, ev->u);
		break;
	}
}

/* Lossless switches size their PFC headroom for the fastest and longest a
 * link of event ev will be (low as in link_event). */
static void plan_event(struct fabric *f, const struct exp_event *ev, uint32_t low)
{
	uint64_t rate = ev->action == LINK_RATE ? ev->u : 0;
	simtime_t prop = ev->action == LINK_DELAY ? ev->u : 0;
	simtime_t proc = ev->action == LINK_PROC_DELAY ? ev->u : 0;
	const struct node *n = low & 0x80000000u ? f->nodes[low & 0x7fffffffu] : NULL;
	for (uint32_t l = n ? 0 : low; l < (n ? f->nlinks : low + 1); l++)
		if (!n || f->links[l].a == n->id || f->links[l].b == n->id)
			fab_plan_link(f, l, rate, prop, proc, n);
}

/* arg: event index << 32 | link, or | node id with bit 31 set */
static void link_event(void *obj, uint64_t arg)
{
	struct sim *s = obj;
	const struct exp_event *ev = &s->x->events[arg >> 32];
	uint32_t low = (uint32_t)arg;
	struct fabric *f = &s->fab;
	if (!(low & 0x80000000u)) {
		if (ev->one_way) /* rate only (checked): the named first node's port */
			fab_port_set_rate(find_port(f, ev->link), ev->u);
		else
			apply_link(f, ev, low);
		return;
	}
	struct node *n = f->nodes[low & 0x7fffffffu];
	if (ev->action == LINK_PROC_DELAY) { /* a slow node: its egress ports only */
		for (uint16_t p = 0; p < n->nports; p++)
			fab_port_set_proc_delay(&n->ports[p], ev->u);
		return;
	}
	for (uint32_t l = 0; l < f->nlinks; l++)
		if (f->links[l].a == n->id || f->links[l].b == n->id)
			apply_link(f, ev, l);
}

/* The lower end of link l (the leaf of a leaf-spine link). */
static uint32_t link_low(const struct fabric *f, uint32_t l)
{
	const struct fab_link_spec *ls = &f->links[l];
	return f->nodes[ls->a]->level <= f->nodes[ls->b]->level ? ls->a : ls->b;
}

/* k links of `tier` down, uniformly, or (tier 1 with failures.tier1_switches =
 * N) k/N uplinks of each of N random lower-tier switches. */
static int pick_random_links(struct sim *s, uint8_t tier, uint64_t k, uint32_t **down,
			     size_t *ndown, struct mp_err *e)
{
	struct fabric *f = &s->fab;
	uint64_t nsw = tier == TIER_1 ? s->x->fail.tier1_switches : 0;
	if (!k && !nsw)
		return MP_OK;
	uint32_t *cand = mp_malloc((f->nlinks + 1) * sizeof *cand);
	uint32_t *sw = mp_malloc((f->nnodes + 1) * sizeof *sw);
	uint32_t n = 0, nlow = 0, minup = UINT32_MAX;
	for (uint32_t i = 0; i < f->nlinks; i++)
		if (f->links[i].tier == tier)
			cand[n++] = i;
	int rc = MP_OK;
	if (k > n) {
		rc = exp_errf(e, s->x, "failures",
			      "random_tier%u: expected at most %u (the "
			      "topology has %u such links), got %llu",
			      tier, n, n, (unsigned long long)k);
		goto out;
	}
	if (nsw) { /* the switches below tier-1 links, and their fewest uplinks */
		uint32_t *up = mp_calloc(f->nnodes + 1, sizeof *up);
		for (uint32_t i = 0; i < n; i++)
			up[link_low(f, cand[i])]++;
		for (uint32_t id = 0; id < f->nnodes; id++)
			if (up[id]) {
				sw[nlow++] = id;
				minup = up[id] < minup ? up[id] : minup;
			}
		mp_free(up);
		if (nsw > nlow || k % nsw || k / nsw > minup) {
			rc = exp_errf(e, s->x, "failures",
				      "tier1_switches: expected a number of switches (at most %u) "
				      "that divides random_tier1 (%llu) into at most %u links "
				      "each, got %llu",
				      nlow, (unsigned long long)k, minup, (unsigned long long)nsw);
			goto out;
		}
	}
	struct mp_rng r;
	rng_init(&r, s->x->gen.seed, RNG_TOPOLOGY, tier);
	*down = mp_realloc(*down, (*ndown + k + 1) * sizeof **down);
	if (!nsw) {
		rng_shuffle_head(&r, cand, n, (uint32_t)k);
		memcpy(*down + *ndown, cand, k * sizeof *cand);
		*ndown += k;
		goto out;
	}
	rng_shuffle_head(&r, sw, nlow, (uint32_t)nsw);
	for (uint64_t i = 0; i < nsw; i++) {
		uint32_t m = 0;
		for (uint32_t j = 0; j < n; j++)
			if (link_low(f, cand[j]) == sw[i]) { /* to the front */
				uint32_t t = cand[m];
				cand[m++] = cand[j];
				cand[j] = t;
			}
		rng_shuffle_head(&r, cand, m, (uint32_t)(k / nsw));
		memcpy(*down + *ndown, cand, k / nsw * sizeof *cand);
		*ndown += k / nsw;
	}
out:
	mp_free(sw);
	mp_free(cand);
	return rc;
}

/* "file:line: events[i].key: ..." at the line of that key of event i */
static int event_errf(struct mp_err *e, const struct experiment *x, size_t i, const char *key,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int event_errf(struct mp_err *e, const struct experiment *x, size_t i, const char *key,
		      const char *fmt, ...)
{
	char dotted[64], msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const struct cfg_node *evs = cfg_get(x->doc.root, "events");
	const struct cfg_node *kn = evs && i < evs->n ? cfg_get(evs->kids[i], key) : NULL;
	snprintf(dotted, sizeof dotted, "events[%zu].%s", i, key);
	return cfg_errf_line(e, &x->doc, kn ? kn->line : x->events[i].line, dotted, "%s", msg);
}

/* The topology's nodes and links, before failures; *info receives what the
 * workload needs of it. */
static int build_topology(struct sim *s, struct topo_info *info, struct mp_err *e)
{
	const struct experiment *x = s->x;
	if (sim_plan_fabric(x, e))
		return e->status;
	x->topo->build(x->topo_params, &s->fab, info);
	/* the event keys' entities: the nodes', the ports' and, below the
	 * connections', each server's (ccl/intra.h) */
	uint64_t nsrv = intra_on(&x->server) ? s->fab.nhosts / x->server.gpus : 0;
	if (s->fab.nnodes + 1 + 2 * (uint64_t)s->fab.nlinks + nsrv >= TP_ENTITY_BASE)
		return exp_errf(e, x, "topology",
				"the fabric has too many ports for mpsim's "
				"event keys (%u nodes, %u links, %llu servers)",
				s->fab.nnodes, s->fab.nlinks, (unsigned long long)nsrv);
	return MP_OK;
}

/* The links that are down from the start (random per tier, then named,
 * each once), the fabric finalized around them, and the lossy links' loss
 * rates. */
static int build_failures(struct sim *s, struct mp_err *e)
{
	const struct experiment *x = s->x;
	uint32_t *down = NULL;
	size_t ndown = 0;
	if (pick_random_links(s, TIER_1, x->fail.random_tier1, &down, &ndown, e) ||
	    pick_random_links(s, TIER_2, x->fail.random_tier2, &down, &ndown, e))
		goto fail_down;
	for (size_t i = 0; i < x->fail.links.n; i++) {
		uint32_t l = fab_find_link(&s->fab, x->fail.links.v[i]);
		if (l == UINT32_MAX) {
			exp_errf(e, x, "failures",
				 "links: no link named '%s' (links are named "
				 "after their two nodes, e.g. leaf0-spine3)",
				 x->fail.links.v[i]);
			goto fail_down;
		}
		for (size_t j = 0; j < i; j++)
			if (fab_find_link(&s->fab, x->fail.links.v[j]) == l) {
				exp_errf(e, x, "failures",
					 "links: '%s' (item %zu) is the link '%s' (item %zu) "
					 "names again: expected each link once",
					 x->fail.links.v[i], i + 1, x->fail.links.v[j], j + 1);
				goto fail_down;
			}
		down = mp_realloc(down, (ndown + 1) * sizeof *down);
		down[ndown++] = l;
	}
	if (fab_finalize(&s->fab, down, ndown, e)) {
		if (!strncmp(e->msg, "lb: ", 4)) { /* the scheme's own check (lb_ops.init) */
			char msg[sizeof e->msg];
			snprintf(msg, sizeof msg, "%s", e->msg + 4);
			mp_err_clear(e);
			exp_errf(e, x, "lb", "%s", msg);
		} else {
			exp_reraise(e, x, ndown ? "failures" : "topology");
		}
		goto fail_down;
	}
	mp_free(down);
	for (uint32_t i = 0; i < s->fab.nlinks; i++) {
		double lr =
		    s->fab.links[i].tier == TIER_HOST ? x->fail.host_loss_rate : x->fail.loss_rate;
		if (lr > 0)
			fab_link_set_loss(&s->fab, i, lr);
	}
	return MP_OK;
fail_down:
	mp_free(down);
	return e->status;
}

/* The `events:` section: each event on its node or link, at its time. */
static int schedule_events(struct sim *s, struct mp_err *e)
{
	const struct experiment *x = s->x;
	for (size_t i = 0; i < x->nevents; i++) {
		const struct exp_event *ev = &x->events[i];
		if (*ev->node) {
			struct node *n = fab_find_node(&s->fab, ev->node);
			if (!n)
				return event_errf(e, x, i, "node",
						  "no node named '%s' (e.g. h0, leaf0, spine3, "
						  "edge0_1, agg0_1, core2)",
						  ev->node);
			evq_at(&s->q, &s->evs, ev->at, link_event, s,
			       ((uint64_t)i << 32) | 0x80000000u | n->id);
			plan_event(&s->fab, ev, 0x80000000u | n->id);
			continue;
		}
		uint32_t l = fab_find_link(&s->fab, ev->link);
		if (l == UINT32_MAX)
			return event_errf(e, x, i, "link",
					  "no link named '%s' (links are named after their two "
					  "nodes, e.g. leaf0-spine3; see the topology's names)",
					  ev->link);
		evq_at(&s->q, &s->evs, ev->at, link_event, s, ((uint64_t)i << 32) | l);
		plan_event(&s->fab, ev, l);
	}
	return MP_OK;
}

/* The workload's flows and the collectives' messages, checked against what
 * a run can hold. */
static int build_workload(struct sim *s, const struct topo_info *info, struct mp_err *e)
{
	const struct experiment *x = s->x;
	struct wl_env env = { .nhosts = s->fab.nhosts,
			      .gpus_per_server = (uint32_t)x->server.gpus,
			      .hosts_per_tor = info->hosts_per_tor,
			      .rails = info->rails,
			      .host_rate_bps = info->host_rate_bps,
			      .seed = x->gen.seed,
			      .base_dir = x->doc.dir };
	sim_plan_flow_limit(x, &s->flows);
	if (x->wl && x->wl->generate(x->wl_params, &env, &s->flows, e))
		return exp_reraise(e, x, "workload");
	if (x->coll && coll_generate(x->coll, &env, &s->flows, &s->jobs, e))
		return exp_reraise(e, x, "collective");
	if (sim_plan_flows(s, x->wl ? "workload" : "collective", e))
		return e->status;
	if (s->flows.n == 0)
		return exp_errf(e, x, "workload", "the workload produced no flows");
	if (s->flows.n >= TP_ENTITY_BASE)
		return exp_errf(e, x, x->wl ? "workload" : "collective",
				"%zu messages: mpsim's message ids hold fewer than %u", s->flows.n,
				TP_ENTITY_BASE);
	return MP_OK;
}

int sim_build(struct sim *s, const struct experiment *x, struct mp_err *e)
{
	memset(s, 0, sizeof *s);
	s->x = x;
	s->ts = mp_calloc(1, sizeof *s->ts);
	evq_init(&s->q);
	/* a transport that reads INT gets its record after the load
	 * balancer's metadata, in the same pool object (packet.h) */
	size_t pkt_size = lb_pkt_size(x->lb), int_off = 0;
	if (x->tp->int_telemetry) {
		int_off = (sizeof(struct packet) + (x->lb ? x->lb->pkt_meta_size : 0) + 7) / 8 * 8;
		pkt_size = (int_off + sizeof(struct pkt_int) + 63) / 64 * 64;
	}
	pool_init(&s->pkts, pkt_size, 4096);
	fab_init(&s->fab, &s->q, &s->pkts, x->gen.seed, &x->sw);
	s->fab.int_off = (uint32_t)int_off;
	s->fab.lb = x->lb;
	s->fab.lb_params = x->lb_params;
	s->evs.id = 0;
	struct topo_info info = { 0 };
	if (build_topology(s, &info, e) || build_failures(s, e) || schedule_events(s, e))
		return e->status;
	if (fab_check_buffer(&s->fab, e))
		return exp_reraise(e, x, "switch");
	if (intra_check(&x->server, s->fab.nhosts, e))
		return exp_reraise(e, x, "server");
	if (build_workload(s, &info, e))
		return e->status;
	tp_world_init(&s->w, &s->q, &s->fab, x->tp, x->tp_params, x->gen.seed);
	s->w.on_msg = on_msg;
	s->w.ctx = s;
	if (setup_flows(s, e))
		return e->status;
	if (x->out.pfc_counters)
		fab_hol_enable(&s->fab, s->w.nconns);
	if (setup_samplers(s, e) || sim_plan_series(s, e))
		return e->status;
	if (x->out.interval && s->nsamplers)
		evq_at(&s->q, &s->evs, 0, sample, s, 0);
	s->show_progress = x->out.progress && isatty(STDERR_FILENO) && !getenv("CI");
	sim_load_setup(s);
	return MP_OK;
}

static void progress(struct sim *s, bool final)
{
	double el = sim_wall_now() - s->wall_start;
	double evps = el > 0 ? (double)s->q.processed / el : 0;
	/* progress: the larger of flows (messages) done and bytes acknowledged;
	 * a collective's queue pairs live to the end, so count its messages */
	double frac = s->flows.n ? (double)s->nflows_done / (double)s->flows.n : 0;
	uint64_t acked = 0, total = 0;
	for (uint32_t i = 0; i < s->w.nconns; i++) {
		acked += s->w.conns[i]->acked_bytes;
		total += s->w.conns[i]->bytes;
	}
	if (total && (double)acked / (double)total > frac)
		frac = (double)acked / (double)total;
	simtime_t lim = s->x->gen.stop_time ? s->x->gen.stop_time : 0;
	if (lim)
		frac = time_to_s(s->q.now) / time_to_s(lim);
	char eta[32] = "?";
	if (frac > 0.001)
		snprintf(eta, sizeof eta, "%.0fs", el / frac - el);
	fprintf(stderr, "%s  %s%st=%.1fus  flows %zu/%zu  %.1f Mev/s  ETA %s   %s",
		s->progress_plain ? "" : "\r", s->progress_label ? s->progress_label : "",
		s->progress_label ? ": " : "", time_to_us(s->q.now), s->nflows_done, s->flows.n,
		evps / 1e6, eta, final || s->progress_plain ? "\n" : "");
	fflush(stderr);
}

/* A progress line when its period has passed (10 s plain, 0.5 s on a
 * terminal): one clock read. */
static void progress_tick(struct sim *s)
{
	double now = sim_wall_now();
	if (now - s->progress_last > (s->progress_plain ? 10.0 : 0.5)) {
		progress(s, false);
		s->progress_last = now;
	}
}

/* Events run in batches of SIM_BATCH between looks at the clock (and at the
 * end conditions): at 10-50 million events a second that is a look every
 * 0.3-1.6 ms, a clock read the packet path does not see; a run whose events
 * are slow (time-series samples over a large fabric) also looks from the
 * sampling event. */
#define SIM_BATCH (1u << 14)

uint64_t sim_fuzz_max_events;

void sim_run(struct sim *s)
{
	simtime_t until = s->x->gen.stop_time ? s->x->gen.stop_time : s->x->gen.time_limit;
	s->wall_start = sim_wall_now();
	s->progress_last = s->wall_start;
	for (;;) {
		uint64_t budget = SIM_BATCH, cap = sim_fuzz_max_events;
		if (cap && cap - s->q.processed < budget)
			budget = cap - s->q.processed;
		evq_run_n(&s->q, until, budget);
		if (s->q.stop || evq_empty(&s->q) || evq_next_time(&s->q) > until ||
		    (cap && s->q.processed >= cap))
			break;
		if (s->show_progress)
			progress_tick(s);
	}
	if (s->x->gen.stop_time && s->q.now < s->x->gen.stop_time)
		s->q.now = s->x->gen.stop_time;
	if (s->show_progress && (s->progress_plain || sim_wall_now() - s->wall_start > 0.5))
		progress(s, true);
}

/* The group a port belongs to (the first that matches; G_ALL for none). */
static int port_group_of(const struct port *pt)
{
	for (int g = 0; g < G_ALL; g++)
		if (port_in_group(pt, g))
			return g;
	return G_ALL;
}

int sim_port_group(const struct port *pt)
{
	return port_group_of(pt);
}

static void collect_ports(struct sim *s, struct run_result *r)
{
	struct fabric *f = &s->fab;
	double T = (double)s->q.now;
	r->nports = f->nports;
	r->ports = mp_calloc(f->nports ? f->nports : 1, sizeof *r->ports);
	size_t k = 0;
	for (uint32_t l = 0; l < f->nlinks; l++) {
		const struct fab_link_spec *ls = &f->links[l];
		for (int end = 0; end < 2; end++) {
			struct node *n = f->nodes[end ? ls->b : ls->a];
			struct port *pt = &n->ports[end ? ls->pb : ls->pa];
			struct port_rec *pr = &r->ports[k++];
			snprintf(pr->name, sizeof pr->name, "%s-%s", n->name,
				 pt->peer->owner->name);
			pr->link = l;
			pr->group = port_group_of(pt);
			pr->rate_bps = pt->rate_bps;
			pr->tx_bytes = pt->tx_bytes;
			pr->tx_pkts = pt->tx_pkts;
			pr->utilisation = T > 0 ? (double)pt->tx_bytes * 8.0 /
						      ((double)pt->rate_bps * T / (double)PS_PER_S)
						: 0;
			pr->max_qbytes = pt->max_qbytes;
			pr->mean_qbytes = T > 0 ? (double)pt->qbytes_integral / T : 0;
			pr->drops_buffer = pt->st.drops_buffer;
			pr->drops_link = pt->st.drops_link;
			struct port_trim tr = fab_port_trim(&s->fab, pt);
			pr->trimmed = tr.pkts;
			pr->trimmed_bytes = tr.bytes;
			pr->ecn_marks = port_ecn_marks(pt);
			pr->pause_sent = pt->st.pause_sent;
			pr->resume_sent = pt->st.resume_sent;
			pr->pause_rcvd = pt->st.pause_rcvd;
			pr->paused_time = port_paused_time(pt, s->q.now);
			for (int g = 0; g < G_N; g++) {
				if (g < G_ALL ? g != pr->group : !port_in_group(pt, g))
					continue;
				struct group_totals *gt = &r->groups[g];
				gt->nports++;
				gt->tx_bytes += pr->tx_bytes;
				gt->utilisation += pr->utilisation;
				gt->mean_qbytes += pr->mean_qbytes;
				if (pr->max_qbytes > gt->max_qbytes)
					gt->max_qbytes = pr->max_qbytes;
				gt->drops += pr->drops_buffer + pr->drops_link;
				gt->ecn_marks += pr->ecn_marks;
				gt->pauses += pr->pause_sent;
			}
		}
	}
	for (int g = 0; g < G_N; g++)
		if (r->groups[g].nports) {
			r->groups[g].utilisation /= r->groups[g].nports;
			r->groups[g].mean_qbytes /= r->groups[g].nports;
		}
}

/* Per job and iteration: from its first message posted to its last byte
 * delivered. */
static void collect_colls(struct sim *s, struct run_result *r)
{
	const struct coll_jobs *J = &s->jobs;
	if (!J->njobs)
		return;
	uint32_t iters = (uint32_t)s->x->coll->iterations, w0 = (uint32_t)s->x->coll->warmup;
	r->ncolls = (size_t)J->njobs * iters;
	r->colls = mp_calloc(r->ncolls, sizeof *r->colls);
	for (size_t i = 0; i < r->ncolls; i++) {
		struct coll_rec *cr = &r->colls[i];
		cr->job = (uint32_t)(i / iters) + 1;
		cr->iter = (uint32_t)(i % iters) + w0; /* warm-up iterations are not recorded */
		cr->nranks = J->nranks;
		cr->size = s->x->coll->size;
		cr->start = SIMTIME_MAX;
		cr->completed = true;
	}
	for (size_t i = 0; i < s->flows.n; i++) {
		const struct flow_spec *fs = &s->flows.v[i];
		if (!fs->job || flow_is_marker(fs) || fs->iter < w0)
			continue;
		struct coll_rec *cr = &r->colls[(size_t)(fs->job - 1) * iters + fs->iter - w0];
		if (s->rel_at[i] < cr->start)
			cr->start = s->rel_at[i];
		if (!s->rx_at[i])
			cr->completed = false;
		else if (s->rx_at[i] > cr->finish)
			cr->finish = s->rx_at[i];
	}
	for (size_t i = 0; i < r->ncolls; i++) {
		struct coll_rec *cr = &r->colls[i];
		if (cr->start == SIMTIME_MAX)
			cr->start = 0;
		if (!cr->completed || cr->finish <= cr->start) {
			cr->completed = false;
			continue;
		}
		cr->cct = cr->finish - cr->start;
		cr->algbw = (double)cr->size * 8.0 / time_to_s(cr->cct);
		cr->busbw = cr->algbw * coll_busbw_factor(s->x->coll->type, cr->nranks);
	}
}

/* Flow i's record: what its connection (or, for a message on the ccl's
 * queue pairs, the runner) saw of it, and whether it is measured. */
static void collect_flow(struct sim *s, size_t i, struct flow_rec *fr, struct run_result *r)
{
	const struct flow_spec *fs = &s->flows.v[i];
	const struct conn *c = s->fconn[i];
	fr->id = (uint32_t)i;
	fr->src = fs->src;
	fr->dst = fs->dst;
	fr->job = fs->job;
	fr->iter = fs->iter;
	fr->bytes = fs->bytes;
	fr->delivered = s->rx_at[i];
	if (c) {
		fr->start = c->start;
		fr->ideal_fct = c->ideal_fct;
		fr->completed = c->done;
		fr->retx_bytes = c->retx_bytes;
		fr->sent_bytes = c->sent_bytes;
		fr->rcvd_bytes = c->rcvd_bytes;
		fr->dup_bytes = c->dup_bytes;
		fr->data_pkts = c->rx_data_pkts;
		fr->reordered = c->rx_reordered;
		fr->blocked = fab_hol_blocked(&s->fab, c->id);
	} else { /* a message on the ccl's queue pairs */
		fr->on_qps = true;
		fr->start = s->rel_at[i] == SIMTIME_MAX ? 0 : s->rel_at[i];
		fr->ideal_fct = ccl_ideal_fct(&s->ccl, s->fchan[i], fs->bytes);
		fr->completed = s->tx_at[i] != 0;
		fr->rcvd_bytes = s->rx_at[i] ? fs->bytes : 0;
	}
	if (fr->completed) {
		fr->finish = c ? c->finish : s->tx_at[i];
		fr->fct = fr->finish - fr->start;
		fr->slowdown = (double)fr->fct / (double)fr->ideal_fct;
		r->ncompleted++;
	}
	const struct exp_output *o = &s->x->out;
	simtime_t life = fr->completed ? fr->fct : s->q.now - fr->start;
	fr->hol = o->pfc_counters && (double)fr->blocked > o->hol_fraction * (double)life;
	fr->measured = fr->start >= o->fct_from && (!o->fct_until || fr->start < o->fct_until);
	r->nmeasured += fr->measured;
}

/* A record per flow (markers have none). */
static void collect_flows(struct sim *s, struct run_result *r)
{
	size_t nrec = 0;
	for (size_t i = 0; i < s->flows.n; i++)
		nrec += !flow_is_marker(&s->flows.v[i]);
	r->nflows = nrec;
	r->dag = s->flows.ndeps || s->ccl.nchans;
	r->flows = mp_calloc(nrec ? nrec : 1, sizeof *r->flows);
	for (size_t i = 0, k = 0; i < s->flows.n; i++)
		if (!flow_is_marker(&s->flows.v[i]))
			collect_flow(s, i, &r->flows[k++], r);
}

/* The queue pairs' own counters, credited to the first message of a job
 * (a queue pair's retransmissions belong to no one message). */
static void collect_qps(struct sim *s, struct run_result *r)
{
	size_t first_job = 0;
	while (first_job < r->nflows && !r->flows[first_job].job)
		first_job++;
	for (uint32_t i = 0; i < s->w.nconns && first_job < r->nflows; i++) {
		const struct conn *c = s->w.conns[i];
		if (!c->stream)
			continue;
		r->flows[first_job].retx_bytes += c->retx_bytes;
		r->flows[first_job].sent_bytes += c->sent_bytes;
		r->flows[first_job].dup_bytes += c->dup_bytes;
		r->qp_data_pkts += c->rx_data_pkts;
		r->qp_reordered += c->rx_reordered;
	}
}

/* The 99th percentile (nearest rank) and the largest out-of-order distance
 * of the run's arrivals. */
static void collect_ood(struct sim *s, struct run_result *r)
{
	uint64_t nood = 0, k = 0, seen = 0;
	r->ood_p99 = r->ood_max = NAN;
	for (uint32_t i = 0; i <= TP_OOD_MAX; i++)
		nood += s->w.ood_hist[i];
	for (uint32_t i = 0; i <= TP_OOD_MAX && nood; i++) {
		seen += s->w.ood_hist[i];
		if (seen && !k && seen * 100 >= nood * 99) { /* nearest rank */
			r->ood_p99 = i;
			k = 1;
		}
		if (s->w.ood_hist[i])
			r->ood_max = i;
	}
}

/* The network's totals over every port (each port's counters synced to the
 * end of the run first) and switch. */
static void collect_net(struct sim *s, struct run_result *r)
{
	struct net_totals *t = &r->net;
	struct fabric *f = &s->fab;
	for (uint32_t n = 0; n < f->nnodes; n++) {
		struct node *nd = f->nodes[n];
		for (uint16_t p = 0; p < nd->nports; p++) {
			struct port *pt = &nd->ports[p];
			port_stats_sync(pt, s->q.now);
			t->drops_buffer += pt->st.drops_buffer;
			t->drops_link += pt->st.drops_link;
			struct port_trim tr = fab_port_trim(f, pt);
			t->trimmed += tr.pkts;
			t->trimmed_bytes += tr.bytes;
			t->ecn_marks += port_ecn_marks(pt);
			t->pause_frames += pt->st.pause_sent;
			t->resume_frames += pt->st.resume_sent;
			t->paused_time += port_paused_time(pt, s->q.now);
			t->tx_bytes += pt->tx_bytes;
			if (nd->kind == NODE_SWITCH && pt->max_qbytes > t->max_queue_bytes)
				t->max_queue_bytes = pt->max_qbytes;
		}
		if (nd->kind == NODE_SWITCH && ((struct sw *)nd)->buf_peak > t->max_buffer_used)
			t->max_buffer_used = ((struct sw *)nd)->buf_peak;
	}
	t->drops_no_route = f->no_route_drops;
}

_Static_assert(RES_LB_MAX == LB_MAX_COUNTERS, "stats/result.h's lb_rec holds every counter");

/* The load balancer's counts of its decisions, with their names. */
static void collect_lb(struct sim *s, struct run_result *r)
{
	const struct lb_ops *lb = s->fab.lb;
	if (!lb || !lb->counters || !lb->counts)
		return;
	uint64_t v[LB_MAX_COUNTERS] = { 0 };
	if (s->lb_summed)
		memcpy(v, s->lb_sum, sizeof v);
	else
		lb->counts(&s->fab, v);
	struct lb_rec *l = &r->lb;
	l->scheme = lb->name;
	for (; l->n < LB_MAX_COUNTERS && lb->counters[l->n].name; l->n++) {
		l->name[l->n] = lb->counters[l->n].name;
		l->v[l->n] = v[l->n];
	}
}

void sim_collect(struct sim *s, struct run_result *r)
{
	memset(r, 0, sizeof *r);
	r->wall_s = sim_wall_now() - s->wall_start;
	r->events = s->q.processed;
	r->events_peak_pending = s->q.peak;
	r->sim_end = s->q.now;
	collect_flows(s, r);
	r->pfc_counters = s->x->out.pfc_counters;
	collect_qps(s, r);
	collect_colls(s, r);
	sim_collect_training(s, r);
	ccl_trace_sort(&s->ccl);
	r->qp_trace = s->ccl.trace; /* the scheduler's trace, if it kept one */
	r->qp_trace_len = s->ccl.trace_len;
	s->ccl.trace = NULL;
	collect_ood(s, r);
	collect_net(s, r);
	collect_lb(s, r);
	collect_ports(s, r);
	struct fabric *f = &s->fab;
	sim_load_collect(s, r);
	r->net.lossless_overflow = f->lossless_overflow;
	fab_assert_lossless(f);
	r->ts = *s->ts;
	memset(s->ts, 0, sizeof *s->ts);
	r->peak_rss = mp_mem_peak_rss();
	r->peak_heap = mp_mem_peak();
	r->pkt_pool_peak = s->pkts.peak;
	r->nhosts = f->nhosts;
	r->nswitches = f->nsws;
	r->nlinks = f->nlinks;
}

static void free_wire_packet(void *ctx, const struct ev *e)
{
	if (port_event_carries_packet(e->fn))
		pkt_free(ctx, port_wire_packet(e->arg));
}

void sim_free(struct sim *s)
{
	/* packets on the wire travel in pending events; queued ones are freed
	 * with the fabric */
	evq_drain(&s->q, free_wire_packet, &s->fab);
	sim_load_free(s);
	tp_world_free(&s->w);
	ccl_free(&s->ccl);
	coll_jobs_free(&s->jobs);
	mp_free(s->left);
	mp_free(s->dep_off);
	mp_free(s->dep_to);
	mp_free(s->rel_at);
	mp_free(s->dep_last);
	mp_free(s->rx_at);
	mp_free(s->tx_at);
	mp_free(s->fconn);
	mp_free(s->fchan);
	mp_free(s->conn_flow);
	mp_free(s->pend);
	flow_list_free(&s->flows);
	fab_free(&s->fab);
	pool_destroy(&s->pkts);
	evq_free(&s->q);
	if (s->ts) {
		ts_free(s->ts);
		mp_free(s->ts);
	}
	mp_free(s->samplers);
	memset(s, 0, sizeof *s);
}

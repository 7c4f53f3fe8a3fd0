/* load.c - the load a Poisson (open-loop) workload offers, and the load the
 * fabric carried, over the run's statistics window; see load.h.
 *
 * The window [from, until): from = the later of output.fct_from and the
 * opening of the arrivals; until = the earliest of the end of the arrivals
 * (workload start + duration), output.fct_until (when set) and the start of
 * the last flow generated (so the snapshot never prolongs a run whose
 * arrivals stopped early, e.g. at max_flows); a run that stops before
 * `until` (stop_time, time_limit) ends the window where it stopped. It is
 * the window the FCT statistics count flows from, so a point's load and its
 * FCTs describe the same stretch of the run.
 *
 * The figures (fractions of capacity; rates are the ports' at the window's
 * start):
 *  - nominal: the workload's `load`, a fraction of each source host's link
 *    (payload bytes offered per second / link rate).
 *  - arrived: the payload bytes of the flows that arrived in the window
 *    (started in [from, until), from a source host) / (window x the sum of
 *    those hosts' first links' rates): nominal as the draws of this run
 *    realised it. A heavy-tailed CDF's few large flows make it differ from
 *    nominal (Data Mining by a few percent over 100 ms); fabric below what
 *    arrived implies means a backlog still growing, not a lighter load.
 *  - host: bytes the source hosts put on their links in the window (every
 *    packet: data with its headers, ACKs, CNPs, retransmissions) / (window x
 *    the sum of those links' rates). At a steady state it is nominal plus the
 *    acknowledgements and resent bytes.
 *  - fabric: the same ratio for each switch-to-switch tier and direction
 *    (tier1_up: ToR/leaf/edge toward spine/agg; tier1_down; tier2_up;
 *    tier2_down: enum port_group), the busiest of them (fabric_group).
 *  - fabric_implied: what nominal offers the ToRs' uplinks when every source
 *    sends to a uniformly random other source host, as the Poisson generator
 *    does: sum over source hosts h of nominal x rate(h) x (the share of the
 *    other sources under another ToR) / (the sum of the rates of the ToRs'
 *    ports toward a higher level). NAN when the ToRs have no such port (a
 *    star, a dumbbell). On the 2:1 8 x 8 leaf-spine of 128 hosts a host load
 *    of 0.3 implies 0.3 x 2 x 112/127 = 0.529.
 *  - low: fabric < 0.85 x fabric_implied: the run did not reach the load it
 *    names in its window (Data Mining's large flows need tens of ms to), and
 *    its FCTs describe a lighter load; lengthen workload.duration and
 *    output.fct_from.
 */
#include "sim/load.h"

#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "sim/run.h"

struct sim_load {
	simtime_t from, until;
	struct wl_offer off;
	uint32_t nports;
	uint64_t *tx0, *rate0; /* per port: tx_bytes and rate at the window's start */
	uint64_t *tx1;	       /* ... at its end */
	simtime_t t0, t1;      /* when the snapshots were taken */
	bool started, ended;
};

/* per port, node after node: the order of the fabric's port_mem */
static void snapshot(struct sim *s, uint64_t *tx, uint64_t *rate)
{
	struct fabric *f = &s->fab;
	uint32_t k = 0;
	for (uint32_t n = 0; n < f->nnodes; n++)
		for (uint16_t p = 0; p < f->nodes[n]->nports; p++, k++) {
			tx[k] = f->nodes[n]->ports[p].tx_bytes;
			if (rate)
				rate[k] = f->nodes[n]->ports[p].rate_bps;
		}
}

/* the runner's event at the window's start (arg 0) and end (arg 1) */
static void load_snap(void *obj, uint64_t arg)
{
	struct sim *s = obj;
	struct sim_load *L = s->load;
	if (!arg) {
		snapshot(s, L->tx0, L->rate0);
		L->t0 = s->q.now;
		L->started = true;
	} else {
		snapshot(s, L->tx1, NULL);
		L->t1 = s->q.now;
		L->ended = true;
	}
}

void sim_load_setup(struct sim *s)
{
	const struct experiment *x = s->x;
	if (!x->wl || !x->wl->offered || !s->flows.n)
		return;
	struct wl_offer off;
	x->wl->offered(x->wl_params, &off);
	simtime_t from = off.start > x->out.fct_from ? off.start : x->out.fct_from;
	simtime_t until = off.end;
	if (x->out.fct_until && x->out.fct_until < until)
		until = x->out.fct_until;
	simtime_t last = 0;
	for (size_t i = 0; i < s->flows.n; i++)
		if (s->flows.v[i].start > last)
			last = s->flows.v[i].start;
	if (last < until)
		until = last;
	if (from >= until)
		return;
	struct sim_load *L = mp_calloc(1, sizeof *L);
	struct fabric *f = &s->fab;
	for (uint32_t n = 0; n < f->nnodes; n++)
		L->nports += f->nodes[n]->nports;
	L->from = from;
	L->until = until;
	L->off = off;
	L->tx0 = mp_calloc(L->nports ? L->nports : 1, sizeof *L->tx0);
	L->tx1 = mp_calloc(L->nports ? L->nports : 1, sizeof *L->tx1);
	L->rate0 = mp_calloc(L->nports ? L->nports : 1, sizeof *L->rate0);
	s->load = L;
	evq_at(&s->q, &s->evs, from, load_snap, s, 0);
	evq_at(&s->q, &s->evs, until, load_snap, s, 1);
}

/* a host's ToR (the switch its first port leads to), by node id */
static uint32_t host_tor_id(const struct host *h)
{
	return h->node.ports[0].peer->owner->id;
}

/* what nominal offers the ToRs' uplinks (see the top of the file) */
static double implied_uplinks(const struct fabric *f, const struct sim_load *L, uint32_t nsrc)
{
	double up_bps = 0, cross_bps = 0;
	for (uint32_t n = 0; n < f->nnodes; n++) {
		const struct node *nd = f->nodes[n];
		if (nd->kind != NODE_SWITCH || ((const struct sw *)nd)->tor_idx == UINT32_MAX)
			continue;
		for (uint16_t p = 0; p < nd->nports; p++)
			if (nd->ports[p].peer->owner->level > nd->level)
				up_bps += (double)nd->ports[p].rate_bps;
	}
	if (up_bps <= 0 || nsrc < 2)
		return NAN;
	/* sources per ToR, by the ToR's node id */
	uint32_t *per = mp_calloc(f->nnodes, sizeof *per);
	for (uint32_t h = 0; h < nsrc; h++)
		per[host_tor_id(f->hosts[h])]++;
	for (uint32_t h = 0; h < nsrc; h++) {
		const struct host *hp = f->hosts[h];
		double cross = (double)(nsrc - per[host_tor_id(hp)]) / (double)(nsrc - 1);
		cross_bps += L->off.load * (double)hp->node.ports[0].rate_bps * cross;
	}
	mp_free(per);
	return cross_bps / up_bps;
}

void sim_load_collect(struct sim *s, struct run_result *r)
{
	struct sim_load *L = s->load;
	struct load_rec *lr = &r->load;
	memset(lr, 0, sizeof *lr);
	lr->fabric_group = -1;
	lr->fabric = lr->fabric_implied = NAN;
	if (!L || !L->started)
		return;
	if (!L->ended) { /* the run stopped inside the window */
		snapshot(s, L->tx1, NULL);
		L->t1 = s->q.now;
	}
	if (L->t1 <= L->t0)
		return;
	struct fabric *f = &s->fab;
	double T = time_to_s(L->t1 - L->t0);
	uint32_t nsrc =
	    L->off.hosts && L->off.hosts < f->nhosts ? (uint32_t)L->off.hosts : f->nhosts;
	double bits[G_N] = { 0 }, bps[G_N] = { 0 }, hbits = 0, hbps = 0, first_bps = 0;
	uint32_t k = 0;
	for (uint32_t n = 0; n < f->nnodes; n++) {
		const struct node *nd = f->nodes[n];
		for (uint16_t p = 0; p < nd->nports; p++, k++) {
			double b = 8.0 * (double)(L->tx1[k] - L->tx0[k]), c = (double)L->rate0[k];
			if (nd->kind == NODE_HOST) {
				if (((const struct host *)nd)->hid < nsrc) {
					hbits += b;
					hbps += c;
					first_bps += p == 0 ? c : 0;
				}
				continue;
			}
			if (nd->ports[p].peer->owner->kind == NODE_HOST)
				continue;
			int g = sim_port_group(&nd->ports[p]);
			if (g >= G_T1_UP && g <= G_T2_DOWN) {
				bits[g] += b;
				bps[g] += c;
			}
		}
	}
	lr->valid = true;
	lr->from = L->t0;
	lr->until = L->t1;
	lr->nominal = L->off.load;
	lr->host = hbps > 0 ? hbits / (hbps * T) : NAN;
	double abits = 0;
	for (size_t i = 0; i < s->flows.n; i++) {
		const struct flow_spec *fs = &s->flows.v[i];
		if (fs->src < nsrc && fs->start >= L->t0 && fs->start < L->t1)
			abits += 8.0 * (double)fs->bytes;
	}
	lr->arrived = first_bps > 0 ? abits / (first_bps * T) : NAN;
	for (int g = G_T1_UP; g <= G_T2_DOWN; g++) {
		if (bps[g] <= 0)
			continue;
		double u = bits[g] / (bps[g] * T);
		if (lr->fabric_group < 0 || u > lr->fabric) {
			lr->fabric = u;
			lr->fabric_group = g;
		}
	}
	lr->fabric_implied = implied_uplinks(f, L, nsrc);
	lr->low = lr->fabric_group >= 0 && isfinite(lr->fabric_implied) &&
		  lr->fabric < 0.85 * lr->fabric_implied;
}

bool sim_load_port_get(const struct sim *s, uint32_t i, uint64_t v[3])
{
	const struct sim_load *L = s->load;
	if (!L)
		return false;
	v[0] = L->tx0[i];
	v[1] = L->tx1[i];
	v[2] = L->rate0[i];
	return true;
}

void sim_load_port_set(struct sim *s, uint32_t i, const uint64_t v[3])
{
	struct sim_load *L = s->load;
	L->tx0[i] = v[0];
	L->tx1[i] = v[1];
	L->rate0[i] = v[2];
}

void sim_load_free(struct sim *s)
{
	struct sim_load *L = s->load;
	if (!L)
		return;
	mp_free(L->tx0);
	mp_free(L->tx1);
	mp_free(L->rate0);
	mp_free(L);
	s->load = NULL;
}

void sim_load_warn(FILE *f, const struct load_rec *l, const char *point)
{
	if (!l->valid || !l->low)
		return;
	char w[320];
	load_warning(l, w, sizeof w);
	fprintf(f, "mpsim: warning: %s%s%s\n", point && *point ? point : "",
		point && *point ? ": " : "", w);
}

/* proteus.c - Proteus: PFC-aware load balancing with multi-level signals, as
 * Hu, Zeng, Wang, Zhang, Guo, Xu, Huang and Chen describe it in "Load
 * Balancing With Multi-Level Signals for Lossless Datacenter Networks",
 * IEEE/ACM Transactions on Networking 32(3), 2024 (and IEEE ICNP 2023),
 * sections III (design) and IV (implementation).
 *
 * Owns: proteus_lb_ops, its options, the path tables (f->lb_priv), each
 * switch's flow table (s->lb_state) and the metadata every packet carries.
 *
 * RTT-level signals (III-A1, IV-C). Every edge switch (ToR) knows the paths
 * to every other edge: the paths are enumerated from the next-hop sets when a
 * pair of edges first talks, path k being one choice at each hop (byte h of
 * `digits` is the member of the next-hop set taken at hop h: source routing,
 * the path id is all a downstream switch needs). The destination edge
 * measures, per source edge and path, the one-way delay of the packets it
 * receives (stamped when the source edge routed them, normalised to a
 * full-size packet so that probes and short packets compare) and the
 * utilisation of the link they came in on (a DRE); it piggybacks one fresh
 * measurement, round robin, on each packet going back to that source edge
 * (CONGA's way, which the paper cites for it). A path that carried nothing of
 * ours for `probe_interval` is probed when the pair next has traffic.
 * Paths fall in three classes (Table II): non-congested, delay t_pd below
 * RTT_low = (1 + rtt_low) x the path's one-way base delay; undetermined, delay
 * above it and utilisation below `util_full` (PFC pausing: queueing without
 * throughput); congested, delay above it and utilisation at `util_full` or
 * more.
 *
 * Algorithm 1 (III-B1), at the source edge for every data packet: a new flow
 * takes SelectPath over the active paths: the non-congested path of least
 * delay, else the undetermined one of highest utilisation, else the congested
 * one of least delay (lines 12-24). A running flow on path p moves only to a
 * path p' with 0 < p.t_pd - p'.t_pd < t_cur - t_pre (lines 6-7: the packet
 * then arrives after its predecessor), chosen by SelectPath among those; else
 * it stays (line 11). The packet carries the chosen path, `alternatives`
 * alternative path ids in SelectPath's order over the other active paths,
 * and its tolerable delay t_td = how much slower the first alternative is than
 * the chosen path, 0 if it is the faster (III-C: a packet waits at most D_ps -
 * D_po; IV-A: 12-bit ids, a 24-bit t_td).
 *
 * Algorithm 2 (III-B2), at every switch the packet crosses: if PFC has paused
 * the packet's egress (its class), predict the minimum queueing delay t_qd =
 * the bytes queued there / the link rate (what is ahead of it once the pause
 * ends). If t_td > t_qd it waits (lines 5-7), and every switch subtracts the
 * packet's sojourn (arrival to departure) from t_td; else it is rerouted to
 * the next alternative it carries that diverges here and is usable, and path
 * p is marked inactive at the source edge until its egress there resumes
 * (lines 9-10; as the public re-implementation does, "resumes" is read from
 * the pause state of the path's first hop). No usable alternative: it stays
 * (the paper: "the packet will not switch path").
 *
 * Where the paper is silent:
 *  - probe_interval 4.5 us, DRE period 50 us and alpha 0.2, util_full 0.6,
 *    rtt_low 0.4 (RTT_low = 1.4 x base) and 4 paths carried (the chosen one +
 *    3): the values of scut2024hjt/ns3-conweave, an unofficial ns-3 port
 *    (its network-load-balance.cc and proteus-routing.cc); the paper gives
 *    RTT_low as 20-40% above the base and 3 alternatives. That port probes
 *    every path of every edge pair every 4.5 us from a timer; here a path is
 *    probed only when the pair has traffic and the path carried none of it
 *    for 4.5 us (same freshness where it matters, no probes on idle pairs).
 *  - SelectPath's argmin among non-congested paths that tie: one of them at
 *    random (the switch's generator), as that port does ("random among the
 *    paths of equal RTT"); ties in the other two classes too (the port takes
 *    its first there), where paused paths of no utilisation tie the same
 *    way. The alternatives a packet carries take the lower path id on ties
 *    (set_alternatives says why). On an idle fabric every path measures its base
 *    delay, and taking the lowest path id sent every new flow of an edge pair
 *    to one spine: at 0.3 load of Fig. 10's Web Search, Proteus's AFCT was
 *    515 us against ECMP's 432 (now 341). The port's other guard against
 *    such herding, a fixed delay added to a path's RTT for every packet sent
 *    on it, is its own and not taken.
 *  - The decision of Algorithm 2 is taken when the packet arrives, from the
 *    predicted t_qd (as the P4 pipeline of section IV must: a queued packet
 *    cannot be recalled); a pause that outlasts the prediction is waited out.
 *  - After a reroute the packet's t_td is the delay difference between its
 *    new path and the next alternative when that happens at the source edge
 *    (which has the table), and 0 downstream (its tolerance is spent).
 *  - in_order (default `off`: the paper's rules alone, Algorithms 1-2 as
 *    written; the receivers mask reordering with a reorder buffer, as the
 *    paper's footnote 2 does for every scheme: "We use reordering buffer to
 *    mask packet reordering"). Ours, as a named variant: with `delivered` a
 *    packet leaves its flow's path (by either algorithm) only when every
 *    earlier packet of its flow has reached the destination edge, whose
 *    arrival the source edge is modelled to learn at once (an echo would
 *    only make it later, never unsafe), which a switch cannot know.
 *    Why it exists: the paper claims Proteus reorders nothing (Fig. 12b), but
 *    its rules alone do not ensure it. Algorithm 1 compares path delays fed back at
 *    different times, so a flow hops between paths whose delays differ by
 *    less than their error (on the 8x8 fabric at 0.6 Web Search load, 44k
 *    moves for 550 flows, and gigabytes resent by go-back-N on
 *    fig10_11.yaml's points); and a packet that
 *    waits at a paused egress for a pause that outlasts its prediction is
 *    overtaken by its rerouted successors; that reordering is a finding to
 *    report, not a reason to change the algorithm, so the paper's rules are
 *    the default. `local` only waits for the flow's packets still queued in
 *    this switch.
 *  - Control packets (ACK, NACK, CNP) are not source routed: ECMP. They carry
 *    the piggybacked feedback like any packet.
 *  - The flow table is exact (no CRC16 collisions) and forgets a flow idle for
 *    `flow_idle`; its next packet is a new flow.
 */
#include "lb/proteus.h"

#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "core/rng.h"
#include "lb/lbcommon.h"
#include "net/fabric.h"
#include "net/lb.h"
#include "net/node.h"
#include "net/port.h"
#include "net/switch.h"

#define PR_MAX_ALT 7
#define PR_MAX_HOPS 8

struct pr_params {
	double rtt_low;
	double util_full;
	uint64_t alternatives;
	simtime_t probe_interval;
	simtime_t dre_period;
	double dre_alpha;
	uint64_t max_paths;
	bool reroute;
	bool tolerate;
	int in_order; /* enum pr_order */
	simtime_t flow_idle;
};

enum pr_order { ORD_DELIVERED, ORD_LOCAL, ORD_OFF };
static const char *const pr_order_names[] = { "delivered", "local", "off", NULL };

static const struct opt_desc pr_opts[] = {
	{ "rtt_low", OPT_DOUBLE, offsetof(struct pr_params, rtt_low), "0.4", 0, 100,
	  "RTT_low = (1 + rtt_low) x a path's one-way base delay: below it a path is "
	  "non-congested (paper: 20-40% above the base; 0.4 as the ns-3 port)" },
	{ "util_full", OPT_DOUBLE, offsetof(struct pr_params, util_full), "0.6", 0, 10,
	  "utilisation at which a path above RTT_low is congested rather than undetermined "
	  "(paper: full utilisation; 0.6 as the ns-3 port measures it with a DRE)" },
	{ "alternatives", OPT_UINT, offsetof(struct pr_params, alternatives), "3", 0, PR_MAX_ALT,
	  "alternative path ids each packet carries for Algorithm 2 (paper: 3)" },
	{ "probe_interval", OPT_TIME, offsetof(struct pr_params, probe_interval), "4.5us", 1e3,
	  1e13,
	  "a path that carried nothing of an edge pair with traffic this long is probed "
	  "(ns-3 port: every path every 4.5 us)" },
	{ "dre_period", OPT_TIME, offsetof(struct pr_params, dre_period), "50us", 1e3, 1e13,
	  "utilisation estimator at the destination edge: decay period (ns-3 port: 50 us)" },
	{ "dre_alpha", OPT_DOUBLE, offsetof(struct pr_params, dre_alpha), "0.2", 0.001, 1,
	  "utilisation estimator: decay factor per period (ns-3 port: 0.2)" },
	{ "max_paths", OPT_UINT, offsetof(struct pr_params, max_paths), "256", 1, 4096,
	  "paths kept per pair of edges (the first in next-hop order; paper: 12-bit ids)" },
	{ "reroute", OPT_BOOL, offsetof(struct pr_params, reroute), "true", 0, 0,
	  "Algorithm 2: reroute at a paused egress (false: RTT-level routing only)" },
	{ "tolerate", OPT_BOOL, offsetof(struct pr_params, tolerate), "true", 0, 0,
	  "wait up to the tolerable delay at a paused egress (false: leave a paused path at "
	  "once, the 'kick out' strategy of the paper's Fig. 6)" },
	{ "in_order", OPT_ENUM, offsetof(struct pr_params, in_order), "off", 0, 0,
	  "off: the paper's rules alone (Algorithms 1-2); ours, beyond the paper: a packet "
	  "leaves its flow's path only when every earlier packet of the flow has reached the "
	  "destination edge (delivered) or has left this switch (local)",
	  pr_order_names },
	{ "flow_idle", OPT_TIME, offsetof(struct pr_params, flow_idle), "10ms", 1e6, 1e15,
	  "the edge's flow table forgets a flow idle this long (its next packet is a new "
	  "flow)" },
	OPT_END
};

/* One path from a source edge to a destination edge. The source edge reads
 * and writes the first group, the destination edge the second. */
struct pr_path {
	uint64_t digits;    /* byte h: member of the next-hop set at hop h */
	uint16_t port0;	    /* egress port at the source edge */
	uint16_t kick_port; /* inactive: the source edge's egress whose resume revives it */
	bool active;
	simtime_t base;	     /* one-way base delay of a full-size packet, ps */
	double ser_per_byte; /* serialisation summed over its hops, ps per byte */
	simtime_t rtt_low;   /* RTT_low, ps */
	/* at the source edge: the RTT-level signals fed back */
	simtime_t t_pd;	   /* one-way delay, ps */
	double u_link;	   /* utilisation */
	simtime_t last_tx; /* last packet (or probe) of the pair sent on it */
	bool sent;	   /* last_tx is set */
	/* at the destination edge: its latest measurement, not yet fed back */
	simtime_t m_delay;
	uint16_t m_port; /* the destination edge's port it came in on */
	bool m_fresh;
};

struct pr_pair {
	uint32_t n, rr; /* paths; round robin of the feedback */
	struct pr_path *p;
};

struct pr_state {
	const struct pr_params *P;
	uint32_t ntors;
	struct pr_pair *pairs; /* [src edge * ntors + dst edge], filled when first used */
	struct dre *dre;       /* per port (fab_port_index): arrivals at edges */
	struct dre_params dp;
	struct proteus_counts cnt;
	uint32_t *order; /* scratch: SelectPath's order */
	uint8_t *cls;	 /* scratch: class of each path */
};

/* Per switch: the flow table of an edge. A flow's aux counts its packets routed
 * here and not yet out of this switch (low 32 bits) and not yet at the
 * destination edge (high 32 bits). */
#define AUX_LOCAL 1ull
#define AUX_NET (1ull << 32)
struct pr_sw {
	struct flowlet_table flows;
};

/* What each packet carries (pkt_meta). */
struct pr_meta {
	simtime_t t_edge;	  /* when the source edge routed it, ps (0: not routed by us) */
	simtime_t t_arr;	  /* arrival at the current switch, ps */
	int64_t t_td;		  /* tolerable delay left, ps */
	simtime_t fb_delay;	  /* feedback: one-way delay of path fb_path - 1 */
	float fb_util;		  /* feedback: its utilisation */
	uint16_t path;		  /* path index + 1 in (source edge, destination edge); 0: none */
	uint16_t alt[PR_MAX_ALT]; /* alternative path index + 1, best first; 0: none */
	uint16_t fb_path;	  /* feedback: path index + 1 of (this dst edge, that src edge) */
	uint16_t out;		  /* the egress port chosen at the current switch */
	uint8_t hop;		  /* switches since the source edge (0 there) */
	uint8_t probe;		  /* a probe of path `path` */
};

enum { CL_NONCONG, CL_UNDET, CL_CONG };

static inline struct pr_meta *meta(struct packet *p)
{
	return pkt_meta(p);
}

static inline simtime_t now_of(const struct fabric *f)
{
	return f->q->now;
}

static inline uint32_t edge_of(const struct fabric *f, uint32_t host, uint8_t rail)
{
	return f->host_tor[host * f->rails + rail % f->rails];
}

/* ---- path enumeration --------------------------------------------------------- */
struct walk {
	const struct fabric *f;
	uint32_t dst;
	struct pr_pair *pr;
	uint32_t cap, max;
};

static void walk_add(struct walk *w, uint64_t digits, uint16_t port0, simtime_t prop, double spb)
{
	if (w->pr->n == w->max)
		return;
	if (w->pr->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 8;
		w->pr->p = mp_realloc(w->pr->p, w->cap * sizeof *w->pr->p);
	}
	struct pr_path *pa = &w->pr->p[w->pr->n++];
	memset(pa, 0, sizeof *pa);
	pa->digits = digits;
	pa->port0 = port0;
	pa->active = true;
	pa->ser_per_byte = spb;
	pa->base = prop + (simtime_t)llround(spb * (double)w->f->cfg.mtu);
}

static void walk(struct walk *w, const struct sw *s, unsigned hop, uint64_t digits, uint16_t port0,
		 simtime_t prop, double spb)
{
	const struct nhset *nh = &s->route[w->dst];
	for (uint16_t i = 0; i < nh->n && i < 256 && w->pr->n < w->max; i++) {
		uint16_t pi = w->f->nh_ports[nh->off + i];
		const struct port *pt = &s->node.ports[pi];
		uint64_t d = digits | (uint64_t)i << (8 * hop);
		uint16_t p0 = hop ? port0 : pi;
		simtime_t pr = prop + pt->delay;
		double sp = spb + 8.0 * (double)PS_PER_S / (double)pt->rate_bps;
		const struct sw *nx = (const struct sw *)pt->peer_node;
		if (nx->tor_idx == w->dst)
			walk_add(w, d, p0, pr, sp);
		else if (hop + 1 < PR_MAX_HOPS)
			walk(w, nx, hop + 1, d, p0, pr, sp);
	}
}

static struct pr_pair *pair_get(struct fabric *f, uint32_t se, uint32_t de)
{
	struct pr_state *st = f->lb_priv;
	struct pr_pair *pr = &st->pairs[(size_t)se * st->ntors + de];
	if (pr->p)
		return pr;
	struct walk w = { .f = f, .dst = de, .pr = pr, .max = (uint32_t)st->P->max_paths };
	walk(&w, f->tors[se], 0, 0, 0, 0, 0.0);
	MP_ASSERT(pr->n > 0); /* fab_finalize checked every edge reaches every other */
	for (uint32_t k = 0; k < pr->n; k++) {
		struct pr_path *pa = &pr->p[k];
		pa->t_pd = pa->base;
		pa->rtt_low = (simtime_t)llround((double)pa->base * (1.0 + st->P->rtt_low));
	}
	return pr;
}

/* ---- SelectPath (Algorithm 1, lines 12-24) --------------------------------------- */
static int path_class(const struct pr_params *P, const struct pr_path *pa)
{
	if (pa->t_pd < pa->rtt_low)
		return CL_NONCONG;
	return pa->u_link < P->util_full ? CL_UNDET : CL_CONG;
}

/* Compare a with b within their class (both of class c): > 0 when a is
 * better, 0 when they tie. */
static int better(int c, const struct pr_path *a, const struct pr_path *b)
{
	if (c == CL_UNDET)
		return (a->u_link > b->u_link) - (a->u_link < b->u_link);
	return (a->t_pd < b->t_pd) - (a->t_pd > b->t_pd);
}

/* Order the paths in `cand` (indices, n of them) as SelectPath ranks them, the
 * best first; only the first `want` are ordered (the rest unspecified). Of
 * paths that tie, one at random from r, or the first when r is NULL. */
static void select_order(const struct pr_state *st, const struct pr_pair *pr, uint32_t *cand,
			 uint32_t n, uint32_t want, struct mp_rng *r)
{
	uint8_t *cls = st->cls;
	for (uint32_t i = 0; i < n; i++)
		cls[i] = (uint8_t)path_class(st->P, &pr->p[cand[i]]);
	for (uint32_t i = 0; i < n && i < want; i++) {
		uint32_t b = i, ties = 1;
		for (uint32_t j = i + 1; j < n; j++) {
			int c = cls[j] < cls[b] ? 1
				: cls[j] > cls[b]
				    ? -1
				    : better(cls[j], &pr->p[cand[j]], &pr->p[cand[b]]);
			if (c > 0) {
				b = j;
				ties = 1;
			} else if (c == 0 && r && rng_below(r, ++ties) == 0) {
				b = j;
			}
		}
		uint32_t t = cand[i];
		cand[i] = cand[b];
		cand[b] = t;
		uint8_t c = cls[i];
		cls[i] = cls[b];
		cls[b] = c;
	}
}

/* A kicked path comes back when its egress at the source edge resumes. */
static void revive(const struct sw *s, struct pr_pair *pr, uint8_t cls)
{
	for (uint32_t k = 0; k < pr->n; k++) {
		struct pr_path *pa = &pr->p[k];
		if (!pa->active && !(s->node.ports[pa->kick_port].paused & (1u << cls)))
			pa->active = true;
	}
}

/* The active paths (all of them when none is), except `skip` (UINT32_MAX: none). */
static uint32_t active_set(const struct pr_pair *pr, uint32_t *out, uint32_t skip)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < pr->n; k++)
		if (pr->p[k].active && k != skip)
			out[n++] = k;
	if (n == 0)
		for (uint32_t k = 0; k < pr->n; k++)
			if (k != skip)
				out[n++] = k;
	return n;
}

/* The tolerable delay of a packet on path `cur` whose first alternative is
 * `alt`: how much slower alt is (III-C: wait at most D_ps - D_po), 0 when alt
 * is the faster (a flow Algorithm 1 kept on a path that became the slower
 * should leave a paused egress at once). */
static int64_t tolerable(const struct pr_path *alt, const struct pr_path *cur)
{
	return alt->t_pd > cur->t_pd ? (int64_t)(alt->t_pd - cur->t_pd) : 0;
}

/* The packet's alternatives (SelectPath over the other active paths) and its
 * tolerable delay, for path `cur`. Ties go to the lower path id: drawing for
 * them would make how many alternatives a packet carries change which paths
 * new flows take, through the generator. */
static void set_alternatives(struct pr_state *st, struct pr_pair *pr, struct pr_meta *m,
			     uint32_t cur)
{
	uint32_t want = (uint32_t)st->P->alternatives;
	uint32_t n = active_set(pr, st->order, cur);
	select_order(st, pr, st->order, n, want, NULL);
	memset(m->alt, 0, sizeof m->alt);
	for (uint32_t i = 0; i < want && i < n; i++)
		m->alt[i] = (uint16_t)(st->order[i] + 1);
	m->t_td = n && want ? tolerable(&pr->p[st->order[0]], &pr->p[cur]) : INT64_MAX;
	if (!st->P->tolerate)
		m->t_td = 0;
}

/* ---- at the source edge: Algorithm 1 ------------------------------------------------ */
/* in_order: may the flow's next packet leave its path? */
static bool held(const struct pr_params *P, const struct flowlet *fl)
{
	switch (P->in_order) {
	case ORD_DELIVERED:
		return fl->aux != 0;
	case ORD_LOCAL:
		return (fl->aux & 0xffffffffu) != 0;
	default:
		return false;
	}
}

/* The path a pinned packet takes (fab_pin): next hop (pin - 1) mod n at
 * every switch from s to edge de; UINT32_MAX if it is not enumerated. */
static uint32_t pinned_path(const struct fabric *f, const struct sw *s, const struct pr_pair *pr,
			    uint32_t de, uint16_t pin)
{
	uint64_t d = 0;
	for (unsigned hop = 0; hop < PR_MAX_HOPS && s->tor_idx != de; hop++) {
		const struct nhset *nh = &s->route[de];
		if (!nh->n)
			return UINT32_MAX;
		unsigned i = fab_pin_choice(pin, nh->n);
		d |= (uint64_t)i << (8 * hop);
		s = (const struct sw *)s->node.ports[f->nh_ports[nh->off + i]].peer_node;
	}
	for (uint32_t k = 0; k < pr->n; k++)
		if (pr->p[k].digits == d)
			return k;
	return UINT32_MAX;
}

static void route_new_packet(struct fabric *f, struct sw *s, struct packet *p, struct pr_pair *pr)
{
	struct pr_state *st = f->lb_priv;
	struct pr_sw *ss = s->lb_state;
	struct pr_meta *m = meta(p);
	simtime_t now = now_of(f);
	revive(s, pr, p->cls);
	struct flowlet *fl = flowlet_get(&ss->flows, p, now);
	uint32_t cur;
	uint16_t pin = fab_pin_of(f, p);
	if (pin && (cur = pinned_path(f, s, pr, edge_of(f, p->dst, p->rail), pin)) != UINT32_MAX) {
		/* pinned by the experiment: measured on the path it takes, never
		 * moved, waits out any pause (no alternatives) */
		fl->path = (uint16_t)(cur + 1);
		fl->last = now;
		m->path = (uint16_t)(cur + 1);
		m->t_edge = now;
		m->t_td = INT64_MAX;
		return;
	}
	if (fl->path == 0 || now - fl->last > st->P->flow_idle) { /* lines 3-4 */
		uint32_t n = active_set(pr, st->order, UINT32_MAX);
		select_order(st, pr, st->order, n, 1, &s->rng);
		cur = st->order[0];
		st->cnt.flows++;
	} else { /* lines 5-11 */
		cur = fl->path - 1;
		const struct pr_path *pp = &pr->p[cur];
		simtime_t gap = now - fl->last;
		uint32_t n = 0;
		for (uint32_t k = 0; k < pr->n; k++) {
			const struct pr_path *q = &pr->p[k];
			if (k != cur && q->active && q->t_pd < pp->t_pd && pp->t_pd - q->t_pd < gap)
				st->order[n++] = k;
		}
		if (n && !held(st->P, fl)) {
			select_order(st, pr, st->order, n, 1, &s->rng);
			cur = st->order[0];
			st->cnt.moves++;
		}
	}
	fl->path = (uint16_t)(cur + 1);
	fl->last = now;
	m->path = (uint16_t)(cur + 1);
	m->t_edge = now;
	set_alternatives(st, pr, m, cur);
}

/* Piggyback one fresh measurement of the reverse pair on p (round robin). */
static void piggyback(struct fabric *f, struct sw *s, struct packet *p, struct pr_pair *rev)
{
	struct pr_state *st = f->lb_priv;
	struct pr_meta *m = meta(p);
	for (uint32_t i = 0; i < rev->n; i++) {
		uint32_t k = (rev->rr + i) % rev->n;
		struct pr_path *pa = &rev->p[k];
		if (!pa->m_fresh)
			continue;
		pa->m_fresh = false;
		rev->rr = (k + 1) % rev->n;
		struct port *in = &s->node.ports[pa->m_port];
		m->fb_path = (uint16_t)(k + 1);
		m->fb_delay = pa->m_delay;
		m->fb_util = (float)dre_util(&st->dre[fab_port_index(f, in)], &st->dp, now_of(f),
					     in->rate_bps);
		return;
	}
}

/* Probe the paths of the pair that carried nothing for probe_interval. */
static void probe_idle(struct fabric *f, struct sw *s, const struct packet *p, struct pr_pair *pr)
{
	struct pr_state *st = f->lb_priv;
	simtime_t now = now_of(f);
	for (uint32_t k = 0; k < pr->n; k++) {
		struct pr_path *pa = &pr->p[k];
		if (pa->sent && now - pa->last_tx < st->P->probe_interval)
			continue;
		pa->last_tx = now;
		pa->sent = true;
		struct packet *q = pkt_alloc(f);
		q->type = PKT_PROBE;
		q->cls = CLS_DATA;
		q->size = 64;
		q->src = p->src;
		q->dst = p->dst;
		q->rail = p->rail;
		q->conn = UINT32_MAX;
		q->entropy = 0;
		q->psn = 0;
		q->ts = now;
		struct pr_meta *qm = meta(q);
		qm->path = (uint16_t)(k + 1);
		qm->t_edge = now;
		qm->t_td = INT64_MAX;
		qm->probe = 1;
		st->cnt.probes++;
		/* it starts here, sent by the switch itself: it shares the
		 * buffer but no ingress port's PFC counters (as if by the port it
		 * leaves by, it could make that port pause its neighbour) */
		node_recv(&s->node, PORT_SELF, q);
	}
}

/* ---- at every switch: Algorithm 2 --------------------------------------------------- */
static uint16_t hop_port(const struct fabric *f, const struct sw *s, const struct pr_path *pa,
			 unsigned hop, uint32_t de)
{
	const struct nhset *nh = &s->route[de];
	if (nh->n == 0)
		return UINT16_MAX;
	unsigned d = hop < PR_MAX_HOPS ? (unsigned)(pa->digits >> (8 * hop)) & 0xff : 0;
	return f->nh_ports[nh->off + d % nh->n];
}

/* Path b passes the switches a passes before hop `hop`. */
static bool same_prefix(const struct pr_path *a, const struct pr_path *b, unsigned hop)
{
	if (hop == 0)
		return true;
	uint64_t mask = hop >= 8 ? UINT64_MAX : ((uint64_t)1 << (8 * hop)) - 1;
	return (a->digits & mask) == (b->digits & mask);
}

static void algorithm2(struct fabric *f, struct sw *s, struct packet *p, struct pr_pair *pr,
		       uint32_t de, bool at_source)
{
	struct pr_state *st = f->lb_priv;
	struct pr_meta *m = meta(p);
	struct pr_path *pa = &pr->p[m->path - 1];
	uint16_t o = hop_port(f, s, pa, m->hop, de);
	m->out = o;
	if (o == UINT16_MAX || m->probe || !st->P->reroute)
		return;
	const struct port *eg = &s->node.ports[o];
	uint8_t bit = (uint8_t)(1u << p->cls);
	if (!(eg->paused & bit)) /* line 4 */
		return;
	/* line 3: the least it will wait, once the pause ends */
	simtime_t t_qd =
	    (simtime_t)((unsigned __int128)eg->q[p->cls].bytes * 8u * PS_PER_S / eg->rate_bps);
	if (m->t_td > 0 && (simtime_t)m->t_td > t_qd) { /* lines 5-7: wait */
		st->cnt.waits++;
		return;
	}
	struct flowlet *fl = NULL;
	if (at_source) {
		fl = flowlet_get(&((struct pr_sw *)s->lb_state)->flows, p, now_of(f));
		if (held(st->P, fl)) { /* its predecessors might be overtaken */
			st->cnt.held++;
			return;
		}
	}
	/* lines 8-10: the next alternative that leaves this switch elsewhere */
	for (unsigned i = 0; i < PR_MAX_ALT && m->alt[i]; i++) {
		struct pr_path *q = &pr->p[m->alt[i] - 1];
		if (!same_prefix(pa, q, m->hop) || (at_source && !q->active))
			continue;
		uint16_t qo = hop_port(f, s, q, m->hop, de);
		if (qo == o || qo == UINT16_MAX || (s->node.ports[qo].paused & bit))
			continue;
		st->cnt.reroutes++;
		st->cnt.last_reroute = now_of(f);
		st->cnt.last_reroute_td = m->t_td;
		st->cnt.last_reroute_qd = t_qd;
		if (at_source) {
			pa->active = false;
			pa->kick_port = o;
			st->cnt.kicks++;
			fl->path = m->alt[i];
		}
		m->path = m->alt[i];
		/* the alternatives left are those after it */
		unsigned j = 0;
		for (unsigned k = i + 1; k < PR_MAX_ALT && m->alt[k]; k++)
			m->alt[j++] = m->alt[k];
		while (j < PR_MAX_ALT)
			m->alt[j++] = 0;
		m->t_td = at_source && m->alt[0] && st->P->tolerate
			      ? tolerable(&pr->p[m->alt[0] - 1], q)
			      : 0;
		m->out = qo;
		return;
	}
	st->cnt.stuck++;
}

/* ---- hooks --------------------------------------------------------------------------- */
static void pr_sw_rx(struct fabric *f, struct sw *s, uint16_t in_idx, struct packet *p)
{
	struct pr_state *st = f->lb_priv;
	struct pr_meta *m = meta(p);
	simtime_t now = now_of(f);
	uint32_t se = edge_of(f, p->src, p->rail), de = edge_of(f, p->dst, p->rail);
	m->t_arr = now;
	if (se == de)
		return;
	if (s->tor_idx == de) { /* the destination edge: measure, take the feedback */
		struct port *in = &s->node.ports[in_idx];
		dre_add(&st->dre[fab_port_index(f, in)], &st->dp, now, p->size);
		if (m->fb_path) {
			struct pr_pair *mine = pair_get(f, de, se);
			struct pr_path *pa = &mine->p[m->fb_path - 1];
			pa->t_pd = m->fb_delay;
			pa->u_link = m->fb_util;
			st->cnt.feedback++;
		}
		if (m->path && m->t_edge && !m->probe && st->P->in_order == ORD_DELIVERED) {
			/* the source edge learns it arrived (in_order: delivered; modelled
			 * as known at once, which only lets a flow move sooner than an
			 * echo would; only `delivered` reads it, and only it touches
			 * another switch's state: pr_unpartitioned) */
			struct pr_sw *src_sw = f->tors[se]->lb_state;
			struct flowlet *fl = flowlet_get(&src_sw->flows, p, now);
			if (fl->aux >> 32)
				fl->aux -= AUX_NET;
		}
		if (m->path && m->t_edge) {
			struct pr_path *pa = &pair_get(f, se, de)->p[m->path - 1];
			double d = (double)(now - m->t_edge) -
				   pa->ser_per_byte * ((double)p->size - (double)f->cfg.mtu);
			pa->m_delay = d > 0 ? (simtime_t)llround(d) : 0;
			pa->m_port = in_idx;
			pa->m_fresh = true;
		}
		if (m->probe)
			p->flags |= PKT_F_SINK;
		return;
	}
	if (s->tor_idx == se && !m->probe) { /* the source edge: route it */
		struct pr_pair *pr = pair_get(f, se, de);
		/* a transport may turn a packet it received into its ACK: start afresh */
		memset(m, 0, sizeof *m);
		m->t_arr = now;
		piggyback(f, s, p, pair_get(f, de, se));
		if (p->type == PKT_DATA) {
			route_new_packet(f, s, p, pr);
			algorithm2(f, s, p, pr, de, true);
			pr->p[m->path - 1].last_tx = now;
			pr->p[m->path - 1].sent = true;
		}
		probe_idle(f, s, p, pr); /* after the decision: a probe queues behind it */
		if (p->type != PKT_DATA)
			return;
		if (m->path) {
			struct flowlet *fl =
			    flowlet_get(&((struct pr_sw *)s->lb_state)->flows, p, now);
			fl->aux += AUX_LOCAL + AUX_NET; /* until sw_tx, the destination edge */
		}
		return;
	}
	if (!m->path)
		return;
	if (s->tor_idx != se)
		m->hop++;
	algorithm2(f, s, p, pair_get(f, se, de), de, false);
}

extern const struct lb_ops ecmp_lb_ops;

/* The port sw_rx chose for a source-routed packet; ECMP for the others. */
static uint16_t pr_choose(struct fabric *f, struct sw *s, const struct packet *p,
			  const uint16_t *cand, unsigned n)
{
	const struct pr_meta *m = pkt_meta_c(p);
	if (m->path && m->out != UINT16_MAX)
		for (unsigned i = 0; i < n; i++)
			if (cand[i] == m->out)
				return m->out;
	return ecmp_lb_ops.choose(f, s, p, cand, n);
}

static void pr_sw_tx(struct fabric *f, struct sw *s, struct port *out, struct packet *p)
{
	(void)out;
	struct pr_meta *m = meta(p);
	if (!m->path || m->probe)
		return;
	/* Algorithm 2 line 7: the sojourn here comes off the tolerable delay */
	simtime_t soj = now_of(f) - m->t_arr;
	if (m->t_td != INT64_MAX)
		m->t_td = m->t_td > (int64_t)soj ? m->t_td - (int64_t)soj : 0;
	if (m->hop == 0 && s->tor_idx == edge_of(f, p->src, p->rail)) {
		struct flowlet *fl =
		    flowlet_get(&((struct pr_sw *)s->lb_state)->flows, p, now_of(f));
		if (fl->aux & 0xffffffffu)
			fl->aux -= AUX_LOCAL;
	}
}

/* Every piece of state is one edge's (a pair's path is read and written at
 * its source edge, its measurement at its destination edge), except what
 * `delivered` has the destination edge write into the source edge's flow
 * table at the instant of arrival. */
static const char *pr_unpartitioned(const void *params)
{
	const struct pr_params *P = params;
	if (P->in_order != ORD_DELIVERED)
		return NULL;
	return "in_order: Proteus's delivered (a destination edge tells the source edge the "
	       "instant a packet arrives, and the two may be on different ranks, nearer than "
	       "any lookahead)";
}

static int pr_init(struct fabric *f, struct mp_err *e)
{
	(void)e;
	const struct pr_params *P = f->lb_params;
	struct pr_state *st = mp_calloc(1, sizeof *st);
	st->P = P;
	st->ntors = f->ntors;
	st->pairs = mp_calloc((size_t)f->ntors * f->ntors, sizeof *st->pairs);
	st->dre = mp_calloc(f->nports ? f->nports : 1, sizeof *st->dre);
	st->dp = (struct dre_params){ .period = P->dre_period, .alpha = P->dre_alpha };
	st->order = mp_calloc(P->max_paths, sizeof *st->order);
	st->cls = mp_calloc(P->max_paths, sizeof *st->cls);
	for (uint32_t i = 0; i < f->nsws; i++)
		if (f->sws[i]->tor_idx != UINT32_MAX)
			flowlet_init(&((struct pr_sw *)f->sws[i]->lb_state)->flows, 256,
				     P->flow_idle);
	f->lb_priv = st;
	return MP_OK;
}

static void pr_fini(struct fabric *f)
{
	struct pr_state *st = f->lb_priv;
	for (size_t i = 0; i < (size_t)st->ntors * st->ntors; i++)
		mp_free(st->pairs[i].p);
	for (uint32_t i = 0; i < f->nsws; i++)
		if (f->sws[i]->tor_idx != UINT32_MAX)
			flowlet_free(&((struct pr_sw *)f->sws[i]->lb_state)->flows);
	mp_free(st->pairs);
	mp_free(st->dre);
	mp_free(st->order);
	mp_free(st->cls);
	mp_free(st);
	f->lb_priv = NULL;
}

/* summary.json's `lb`: struct proteus_counts' counts, in its order */
static const struct lb_counter pr_counters[] = {
	{ "flows", "new flows routed by SelectPath at a source edge (Algorithm 1, lines 3-4)" },
	{ "moves", "running flows moved to a path faster by less than their packet gap "
		   "(Algorithm 1, lines 6-7)" },
	{ "waits", "packets that met a paused egress and waited (Algorithm 2, t_td > t_qd)" },
	{ "reroutes", "packets rerouted at a paused egress (Algorithm 2, t_td <= t_qd)" },
	{ "held", "packets kept on their path at a paused egress by in_order" },
	{ "stuck", "packets that found no usable alternative at a paused egress" },
	{ "kicks", "paths marked inactive at a source edge until their egress resumes" },
	{ "probes", "probe packets sent on paths idle for probe_interval" },
	{ "feedback", "path states piggybacked back to a source edge" },
	{ NULL, NULL }
};

static void pr_counts(const struct fabric *f, uint64_t *v)
{
	const struct proteus_counts *c = &((const struct pr_state *)f->lb_priv)->cnt;
	const uint64_t w[] = { c->flows, c->moves, c->waits,  c->reroutes, c->held,
			       c->stuck, c->kicks, c->probes, c->feedback };
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		v[i] += w[i];
}

const struct lb_ops proteus_lb_ops = {
	.name = "proteus",
	.summary = "Proteus (IEEE/ACM ToN 2024): edge path states from one-way delay and "
		   "utilisation, order-preserving Algorithm 1, source routing with alternatives, "
		   "Algorithm 2's tolerable-delay reroute at paused egresses",
	.opts = pr_opts,
	.params_size = sizeof(struct pr_params),
	.state_size = sizeof(struct pr_sw),
	.pkt_meta_size = sizeof(struct pr_meta),
	.init = pr_init,
	.fini = pr_fini,
	.choose = pr_choose,
	.sw_rx = pr_sw_rx,
	.sw_tx = pr_sw_tx,
	.unpartitioned = pr_unpartitioned,
	.counters = pr_counters,
	.counts = pr_counts,
};

const struct proteus_counts *proteus_counts(const struct fabric *f)
{
	if (f->lb != &proteus_lb_ops || !f->lb_priv)
		return NULL;
	return &((const struct pr_state *)f->lb_priv)->cnt;
}

simtime_t proteus_path_delay(struct fabric *f, uint32_t se, uint32_t de, uint32_t k)
{
	struct pr_pair *pr = pair_get(f, se, de);
	MP_ASSERT(k < pr->n);
	return pr->p[k].base;
}

void proteus_set_path(struct fabric *f, uint32_t se, uint32_t de, uint32_t k, simtime_t t_pd,
		      double util)
{
	struct pr_pair *pr = pair_get(f, se, de);
	MP_ASSERT(k < pr->n);
	pr->p[k].t_pd = t_pd;
	pr->p[k].u_link = util;
}

int64_t proteus_tolerable_delay(const struct packet *p)
{
	return ((const struct pr_meta *)pkt_meta_c(p))->t_td;
}

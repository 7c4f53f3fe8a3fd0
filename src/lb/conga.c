/* conga.c - CONGA (Alizadeh, Edsall, Dharmapurikar, Vaidyanathan, Chu,
 * Fingerhut, Lam, Matus, Pan, Yadav and Varghese, "CONGA: Distributed
 * Congestion-Aware Load Balancing for Datacenters", ACM SIGCOMM 2014),
 * section 3, on a leaf-spine fabric.
 *
 * What it owns (f->lb_priv, fabric-wide; nothing per packet is allocated):
 * - a DRE per switch-to-switch port (lbcommon.h): X grows by every byte the
 *   port sends and decays by (1 - alpha) every T_dre, so X / (C tau) with
 *   tau = T_dre / alpha is the link's recent utilisation, quantised to `bits`
 *   (3 in the paper);
 * - per leaf (ToR) the Congestion-To-Leaf table [destination leaf][uplink]:
 *   the path metrics fed back to it, and the Congestion-From-Leaf table
 *   [source leaf][uplink]: the metrics it measured on arriving packets, still
 *   to be fed back;
 * - per leaf a flowlet table (lbcommon.h).
 *
 * Every packet between two leaves (data and control: the paper balances the
 * whole overlay) carries the paper's overlay fields in its metadata: LBTag
 * (the uplink the source leaf sent it on), CE (the path's congestion so far),
 * FB_LBTag and FB_Metric (one metric fed back to the leaf it is going to).
 * - Source leaf, arrival from a host (sw_rx): piggyback one entry of
 *   Congestion-From-Leaf[destination leaf], round robin with preference to
 *   the entries that changed since they were last fed back (section 3).
 * - Source leaf, path choice (choose): a packet of a live flowlet (gap since
 *   the flow's last packet <= flowlet_timeout) keeps the flowlet's uplink; a
 *   new flowlet takes the uplink minimising max(local DRE metric,
 *   Congestion-To-Leaf[destination][uplink]); among equals the uplink the
 *   flow used last, so a flow moves only to a strictly better one, else one
 *   at random (the paper's tie rule).
 * - Every switch egress toward a switch (sw_tx): DRE += size; the source leaf
 *   writes LBTag and CE = its uplink's metric; later hops CE = max(CE, the
 *   egress metric).
 * - Destination leaf, arrival from the fabric (sw_rx): Congestion-From-Leaf
 *   [source leaf][LBTag] = CE (marked changed), and Congestion-To-Leaf
 *   [source leaf][FB_LBTag] = FB_Metric.
 * - Aging: an entry not refreshed for `aging` counts as 0 in Congestion-To-
 *   Leaf (a stale congested path becomes eligible again) and is not fed back
 *   from Congestion-From-Leaf. The paper ages stale metrics toward zero; both
 *   public ns-3 models (the Hermes authors' snowzjx/ns3-load-balance and
 *   ConWeave's conweave-project/conweave-ns3) reset them at once after the
 *   aging time, and so do we.
 *
 * Defaults: quantisation 3 bits and aging 10 ms (the paper; 10 ms is also the
 * Hermes authors' ns-3 default); flowlet timeout 100 us, T_dre 50 us and
 * alpha 0.2 from ConWeave's ns-3 runs of CONGA (Song et al., "Network Load
 * Balancing with In-network Reordering Support for RDMA", SIGCOMM 2023) at
 * 100 Gb/s RDMA, the setting the Proteus comparison uses; the paper's testbed
 * (10/40 Gb/s TCP) used a 500 us flowlet timeout. ConWeave's own runs age
 * after 500 us and sample only 4 of the uplinks per decision; we follow the
 * paper (every uplink).
 *
 * After the source leaf (conga_choose, later hops): the paper's LBTag is the
 * source leaf's uplink port; it "partially identifies the packet's path" and
 * is what the destination leaf aggregates metrics by (section 3, packet
 * format), and an uplink's remote metric is that of the path or paths to the
 * destination leaf that start at it (section 3, overview). A spine holds no
 * CONGA state and forwards as a standard switch: among its parallel links to
 * the destination leaf it hashes the flow's 5-tuple (ECMP, ecmp.c), as the
 * Hermes authors' ns-3 CONGA does at its spines; a tag does not pick the
 * link. The CE a packet carries is the max over the links it actually took
 * (sw_tx runs on the port chosen), so an LBTag's fed-back metric is that of
 * whichever of its paths the last packets took. (ConWeave's ns-3 CONGA
 * source-routes a whole path id, one port per hop, but keeps one interface
 * per neighbour, so it has no parallel links to choose among.)
 * Beyond two tiers (a fat tree), a switch whose choice is among different
 * switches hashes (LBTag, source leaf, destination leaf), so a tag names one
 * next switch at every tier (ours: the paper designs for leaf-spine).
 *
 * Counts (summary.json's `lb`, conga_counters): new flowlets, how many moved,
 * how many were placed by the tie rule's coin, how many took the uplink the
 * leaf's previous new flowlet took (herding: the leaves' new flowlets crowd
 * onto the uplink that looks least loaded until its DRE catches up), and the
 * metrics fed back.
 */
#include "lb/conga.h"

#include <limits.h>

#include "core/mem.h"
#include "core/rng.h"
#include "lb/lbcommon.h"
#include "net/fabric.h"
#include "net/lb.h"
#include "net/node.h"
#include "net/port.h"
#include "net/switch.h"

struct conga_params {
	simtime_t flowlet_timeout; /* T_fl, ps */
	simtime_t dre_period;	   /* T_dre, ps */
	double alpha;		   /* DRE decay per period */
	uint64_t bits;		   /* quantisation of metrics */
	simtime_t aging;	   /* table entries expire after this, ps */
};

static const struct opt_desc conga_opts[] = {
	{ "flowlet_timeout", OPT_TIME, offsetof(struct conga_params, flowlet_timeout), "100us", 1,
	  1e13,
	  "T_fl: a gap longer than this starts a new flowlet, which may take a new uplink "
	  "(ConWeave's ns-3; the paper's testbed used 500us)" },
	{ "dre_period", OPT_TIME, offsetof(struct conga_params, dre_period), "50us", 1, 1e12,
	  "T_dre: the DRE register decays by (1 - alpha) every period (ConWeave's ns-3)" },
	{ "alpha", OPT_DOUBLE, offsetof(struct conga_params, alpha), "0.2", 0.0001, 1,
	  "DRE decay factor; tau = dre_period / alpha (ConWeave's ns-3)" },
	{ "bits", OPT_UINT, offsetof(struct conga_params, bits), "3", 1, 8,
	  "quantisation of link and path metrics (the paper: 3 bits)" },
	{ "aging", OPT_TIME, offsetof(struct conga_params, aging), "10ms", 1, 1e13,
	  "a table entry not refreshed for this long counts as 0 (To-Leaf) or is not fed back "
	  "(From-Leaf)" },
	OPT_END
};

/* The overlay header fields of the paper (LBTag 4 bits, CE 3, FB_LBTag 4,
 * FB_Metric 3), wider here so a leaf may have more than 16 uplinks. */
struct conga_meta {
	uint16_t lbtag;	   /* uplink slot at the source leaf */
	uint16_t fb_lbtag; /* the slot fed-back metric is for */
	uint8_t ce;	   /* path metric so far */
	uint8_t fb_metric;
	uint8_t flags; /* CM_* */
};
enum { CM_TAGGED = 1, CM_FB = 2 };

struct conga_ent {
	simtime_t t; /* last update, ps */
	uint8_t ce;
	bool valid;   /* updated at least once */
	bool changed; /* From-Leaf: not fed back since the last update */
};

#define NOSLOT UINT16_MAX

struct conga {
	struct dre_params dp;
	simtime_t gap, aging;
	unsigned bits;
	uint32_t ntors;
	uint32_t width;		     /* most uplinks any leaf has: the LBTag space */
	uint32_t maxports;	     /* most ports any leaf has */
	struct dre *dre;	     /* per fabric port (fab_port_index) */
	uint16_t *slot;		     /* [leaf][port]: uplink slot, or NOSLOT */
	struct conga_ent *to_leaf;   /* [leaf][destination leaf][slot] */
	struct conga_ent *from_leaf; /* [leaf][source leaf][slot] */
	uint32_t *fb_next;	     /* [leaf][destination leaf]: round robin */
	struct flowlet_table *fl;    /* per leaf */
	uint8_t *metric;	     /* scratch: one per uplink (choose) */
	uint16_t *prev;		     /* per leaf: the uplink its last new flowlet took */
	struct {
		uint64_t flowlets, moves, ties, repeats, feedback;
	} cnt; /* summary.json's `lb` (conga_counters) */
};

static inline uint32_t tor_of(const struct fabric *f, uint32_t host, uint8_t rail)
{
	return f->host_tor[host * f->rails + rail];
}

static inline struct conga_ent *ent(struct conga *c, struct conga_ent *tab, uint32_t a, uint32_t b,
				    uint32_t slot)
{
	return &tab[((size_t)a * c->ntors + b) * c->width + slot];
}

static inline bool live(const struct conga *c, const struct conga_ent *e, simtime_t now)
{
	return e->valid && now - e->t <= c->aging;
}

static inline unsigned port_metric(struct conga *c, const struct fabric *f, const struct port *pt,
				   simtime_t now)
{
	struct dre *d = &c->dre[fab_port_index(f, pt)];
	return dre_quantise(dre_util(d, &c->dp, now, pt->rate_bps), c->bits);
}

extern const struct lb_ops ecmp_lb_ops;

/* ---- the source leaf: path choice ------------------------------------------- */
static uint16_t conga_choose(struct fabric *f, struct sw *s, const struct packet *p,
			     const uint16_t *cand, unsigned n)
{
	struct conga *c = f->lb_priv;
	uint32_t src = tor_of(f, p->src, p->rail), dst = tor_of(f, p->dst, p->rail);
	if (s->tor_idx != src) { /* later hops */
		/* parallel links to one switch (a spine's to the destination
		 * leaf): ECMP on the flow, never by tag (header note) */
		const struct node *peer = s->node.ports[cand[0]].peer_node;
		unsigned i = 1;
		while (i < n && s->node.ports[cand[i]].peer_node == peer)
			i++;
		if (i == n)
			return ecmp_lb_ops.choose(f, s, p, cand, n);
		const struct conga_meta *m = pkt_meta_c(p);
		uint64_t h = rng_mix64(s->hash_seed ^ ((uint64_t)m->lbtag << 48) ^
				       ((uint64_t)src << 24) ^ dst);
		return cand[(uint64_t)(((unsigned __int128)h * n) >> 64)];
	}
	simtime_t now = f->q->now;
	struct flowlet *fl = flowlet_get(&c->fl[src], p, now);
	bool expired = flowlet_expired(fl, now, c->gap);
	bool had = fl->last != 0; /* the flow's last uplink is known */
	fl->last = now;
	if (!expired)
		for (unsigned i = 0; i < n; i++)
			if (cand[i] == fl->port)
				return fl->port; /* same flowlet, same uplink */
	/* a new flowlet: min over uplinks of max(local, remote) */
	const uint16_t *slot = c->slot + (size_t)src * c->maxports;
	unsigned best = UINT_MAX, nbest = 0;
	bool keep = false;
	for (unsigned i = 0; i < n; i++) {
		unsigned local = port_metric(c, f, &s->node.ports[cand[i]], now);
		unsigned remote = 0;
		if (slot[cand[i]] != NOSLOT) {
			const struct conga_ent *e = ent(c, c->to_leaf, src, dst, slot[cand[i]]);
			if (live(c, e, now))
				remote = e->ce;
		}
		unsigned m = local > remote ? local : remote;
		c->metric[i] = (uint8_t)m;
		if (m < best) {
			best = m;
			nbest = 0;
			keep = false;
		}
		if (m == best) {
			nbest++;
			keep |= had && cand[i] == fl->port;
		}
	}
	uint16_t last = fl->port;
	if (!keep) {
		uint64_t k = nbest > 1 ? rng_below(&s->rng, nbest) : 0;
		for (unsigned i = 0; i < n; i++)
			if (c->metric[i] == best && k-- == 0) {
				fl->port = cand[i];
				break;
			}
	}
	c->cnt.flowlets++;
	c->cnt.moves += had && fl->port != last;
	c->cnt.ties += !keep && nbest > 1;
	c->cnt.repeats += c->prev[src] == fl->port;
	c->prev[src] = fl->port;
	return fl->port;
}

/* ---- arrivals at a leaf: feedback out, measurements in ---------------------- */
/* Source leaf: one metric of Congestion-From-Leaf[dst] rides to leaf dst. */
static void piggyback(struct conga *c, uint32_t leaf, uint32_t dst, struct conga_meta *m,
		      simtime_t now)
{
	struct conga_ent *row = ent(c, c->from_leaf, leaf, dst, 0);
	uint32_t *next = &c->fb_next[(size_t)leaf * c->ntors + dst];
	uint32_t pick = NOSLOT;
	for (uint32_t j = 0; j < c->width; j++) {
		uint32_t i = (*next + j) % c->width;
		if (!live(c, &row[i], now))
			continue;
		if (row[i].changed) {
			pick = i;
			break;
		}
		if (pick == NOSLOT)
			pick = i;
	}
	if (pick == NOSLOT)
		return;
	m->flags |= CM_FB;
	m->fb_lbtag = (uint16_t)pick;
	m->fb_metric = row[pick].ce;
	row[pick].changed = false;
	*next = (pick + 1) % c->width;
	c->cnt.feedback++;
}

static void conga_sw_rx(struct fabric *f, struct sw *s, uint16_t in_idx, struct packet *p)
{
	(void)in_idx;
	if (s->tor_idx == UINT32_MAX)
		return;
	struct conga *c = f->lb_priv;
	uint32_t src = tor_of(f, p->src, p->rail), dst = tor_of(f, p->dst, p->rail);
	if (src == dst)
		return;
	struct conga_meta *m = pkt_meta(p);
	simtime_t now = f->q->now;
	if (s->tor_idx == src) {
		piggyback(c, src, dst, m, now);
	} else if (s->tor_idx == dst && (m->flags & CM_TAGGED)) {
		struct conga_ent *e = ent(c, c->from_leaf, dst, src, m->lbtag);
		*e = (struct conga_ent){ .t = now, .ce = m->ce, .valid = true, .changed = true };
		if (m->flags & CM_FB) {
			e = ent(c, c->to_leaf, dst, src, m->fb_lbtag);
			*e = (struct conga_ent){ .t = now, .ce = m->fb_metric, .valid = true };
		}
	}
}

/* ---- departures: DRE and CE ------------------------------------------------- */
static void conga_sw_tx(struct fabric *f, struct sw *s, struct port *out, struct packet *p)
{
	if (out->peer_node->kind != NODE_SWITCH)
		return;
	struct conga *c = f->lb_priv;
	simtime_t now = f->q->now;
	struct dre *d = &c->dre[fab_port_index(f, out)];
	dre_add(d, &c->dp, now, p->size);
	unsigned q = dre_quantise(dre_util(d, &c->dp, now, out->rate_bps), c->bits);
	struct conga_meta *m = pkt_meta(p);
	if (s->tor_idx != UINT32_MAX && s->tor_idx == tor_of(f, p->src, p->rail)) {
		uint16_t sl = c->slot[(size_t)s->tor_idx * c->maxports + out->idx];
		if (sl == NOSLOT || tor_of(f, p->dst, p->rail) == s->tor_idx)
			return;
		m->flags |= CM_TAGGED;
		m->lbtag = sl;
		m->ce = (uint8_t)q;
	} else if ((m->flags & CM_TAGGED) && q > m->ce) {
		m->ce = (uint8_t)q;
	}
}

/* ---- tables ----------------------------------------------------------------- */
static void conga_fini(struct fabric *f)
{
	struct conga *c = f->lb_priv;
	for (uint32_t t = 0; t < c->ntors; t++)
		flowlet_free(&c->fl[t]);
	mp_free(c->fl);
	mp_free(c->dre);
	mp_free(c->slot);
	mp_free(c->to_leaf);
	mp_free(c->from_leaf);
	mp_free(c->fb_next);
	mp_free(c->metric);
	mp_free(c->prev);
	mp_free(c);
	f->lb_priv = NULL;
}

static int conga_init(struct fabric *f, struct mp_err *e)
{
	(void)e;
	const struct conga_params *P = f->lb_params;
	struct conga *c = mp_calloc(1, sizeof *c);
	f->lb_priv = c;
	c->dp = (struct dre_params){ .period = P->dre_period, .alpha = P->alpha };
	c->gap = P->flowlet_timeout;
	c->aging = P->aging;
	c->bits = (unsigned)P->bits;
	c->ntors = f->ntors;
	for (uint32_t t = 0; t < f->ntors; t++) {
		const struct sw *s = f->tors[t];
		uint32_t up = 0;
		for (uint16_t i = 0; i < s->node.nports; i++)
			up += s->node.ports[i].peer_node->kind == NODE_SWITCH;
		if (up > c->width)
			c->width = up;
		if (s->node.nports > c->maxports)
			c->maxports = s->node.nports;
	}
	if (c->width == 0)
		c->width = 1;
	c->slot = mp_malloc((size_t)c->ntors * c->maxports * sizeof *c->slot);
	for (uint32_t t = 0; t < f->ntors; t++) {
		const struct sw *s = f->tors[t];
		uint16_t *sl = c->slot + (size_t)t * c->maxports, k = 0;
		for (uint32_t i = 0; i < c->maxports; i++)
			sl[i] =
			    i < s->node.nports && s->node.ports[i].peer_node->kind == NODE_SWITCH
				? k++
				: NOSLOT;
	}
	size_t cells = (size_t)c->ntors * c->ntors * c->width;
	c->to_leaf = mp_calloc(cells, sizeof *c->to_leaf);
	c->from_leaf = mp_calloc(cells, sizeof *c->from_leaf);
	c->fb_next = mp_calloc((size_t)c->ntors * c->ntors, sizeof *c->fb_next);
	c->dre = mp_calloc(f->nports ? f->nports : 1, sizeof *c->dre);
	c->metric = mp_calloc(c->maxports ? c->maxports : 1, 1);
	c->fl = mp_calloc(c->ntors ? c->ntors : 1, sizeof *c->fl);
	c->prev = mp_malloc((c->ntors ? c->ntors : 1) * sizeof *c->prev);
	for (uint32_t t = 0; t < c->ntors; t++)
		c->prev[t] = UINT16_MAX;
	/* an entry idle ten gaps may be forgotten: the flow then only loses
	 * its preference for its last uplink on ties (ours) */
	for (uint32_t t = 0; t < c->ntors; t++)
		flowlet_init(&c->fl[t], 256, 10 * c->gap);
	return MP_OK;
}

/* summary.json's `lb`: struct conga's cnt, in its order */
static const struct lb_counter conga_counters[] = {
	{ "flowlets", "new flowlets placed on an uplink at a source leaf" },
	{ "moves", "new flowlets that left their flow's last uplink for a strictly better one" },
	{ "ties", "new flowlets placed at random among equally good uplinks" },
	{ "repeats", "new flowlets placed on the uplink the leaf's previous new flowlet took "
		     "(about flowlets / uplinks when a leaf spreads them evenly)" },
	{ "feedback", "Congestion-From-Leaf metrics piggybacked to the leaf they describe" },
	{ NULL, NULL }
};

static void conga_counts(const struct fabric *f, uint64_t *v)
{
	const struct conga *c = f->lb_priv;
	const uint64_t w[] = { c->cnt.flowlets, c->cnt.moves, c->cnt.ties, c->cnt.repeats,
			       c->cnt.feedback };
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		v[i] += w[i];
}

const struct lb_ops conga_lb_ops = {
	.name = "conga",
	.summary = "CONGA (SIGCOMM 2014): flowlets on the uplink with the least max(local DRE, "
		   "fed-back path metric); leaf-to-leaf tables fed back in packets",
	.opts = conga_opts,
	.params_size = sizeof(struct conga_params),
	.pkt_meta_size = sizeof(struct conga_meta),
	.init = conga_init,
	.fini = conga_fini,
	.choose = conga_choose,
	.sw_rx = conga_sw_rx,
	.sw_tx = conga_sw_tx,
	.counters = conga_counters,
	.counts = conga_counts,
};

/* ---- for tests -------------------------------------------------------------- */
int conga_to_leaf(const struct fabric *f, uint32_t src_tor, uint32_t dst_tor, uint16_t port)
{
	struct conga *c = f->lb_priv;
	uint16_t sl = port < c->maxports ? c->slot[(size_t)src_tor * c->maxports + port] : NOSLOT;
	if (sl == NOSLOT)
		return -1;
	const struct conga_ent *e = ent(c, c->to_leaf, src_tor, dst_tor, sl);
	return live(c, e, f->q->now) ? e->ce : 0;
}

void conga_set_to_leaf(struct fabric *f, uint32_t src_tor, uint32_t dst_tor, uint16_t port,
		       unsigned metric)
{
	struct conga *c = f->lb_priv;
	uint16_t sl = c->slot[(size_t)src_tor * c->maxports + port];
	MP_ASSERT(sl != NOSLOT);
	*ent(c, c->to_leaf, src_tor, dst_tor, sl) =
	    (struct conga_ent){ .t = f->q->now, .ce = (uint8_t)metric, .valid = true };
}

double conga_port_util(const struct fabric *f, const struct port *pt)
{
	struct conga *c = f->lb_priv;
	return dre_util(&c->dre[fab_port_index(f, pt)], &c->dp, f->q->now, pt->rate_bps);
}

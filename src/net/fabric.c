/* fabric.c - building a fabric: nodes, links, ports, and next-hop sets.
 *
 * Routes: for every ToR (a switch with hosts attached) a breadth-first search
 * over the switch graph gives each switch its distance to that ToR; a switch's
 * next-hop set toward the ToR is every up port leading to a neighbour one step
 * closer. This is ECMP over all shortest paths, computed once per topology.
 * Links that are down at t=0 are left out of the search (the fabric's routing
 * has converged around them). A link that fails or recovers during a run is
 * learnt by the routes cfg.failover_delay later: then every switch recomputes
 * its next-hop sets (routes_compute) from each link's state as of that delay
 * ago (port->routed). Until then a switch keeps sending into a dead link, and
 * what it sends is lost, as before a real fabric detects the failure (loss of
 * signal, then a hardware ECMP group update: microseconds) or its routing
 * protocol reconverges (BGP or OSPF: milliseconds to seconds).
 *
 * Lossless mode: mmu_size reserves every switch port's PFC headroom and
 * control reserve out of the buffer; fab_check_buffer says when it does not
 * fit (the packet path, port.c, relies on it).
 */
#include "net/fabric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "net/host.h"
#include "net/lb.h"
#include "net/node.h"
#include "net/port.h"
#include "net/switch.h"

const struct opt_desc swcfg_opts[] = {
	{ "buffer", OPT_SIZE, offsetof(struct swcfg, buffer), "32MB", 1, 1e12,
	  "shared packet buffer per switch" },
	{ "dt_alpha", OPT_DOUBLE, offsetof(struct swcfg, dt_alpha), "1", 0.0001, 1024,
	  "dynamic threshold: an egress queue may hold alpha x the free buffer (lossy)" },
	{ "queue_limit", OPT_SIZE, offsetof(struct swcfg, queue_limit), "0", 0, 1e12,
	  "lossy: also drop when an egress queue would exceed this many bytes; 0 = no cap" },
	{ "mode", OPT_ENUM, offsetof(struct swcfg, mode), "lossy", 0, 0,
	  "lossy: tail drop on overflow; lossless: PFC pauses, never drops data",
	  (const char *const[]){ "lossy", "lossless", NULL } },
	{ "ecn", OPT_BOOL, offsetof(struct swcfg, ecn), "true", 0, 0,
	  "mark CE at egress dequeue, RED-style between kmin and kmax" },
	{ "kmin", OPT_SIZE, offsetof(struct swcfg, kmin), "100KB", 0, 1e12,
	  "queue (bytes behind the departing packet) where marking starts" },
	{ "kmax", OPT_SIZE, offsetof(struct swcfg, kmax), "400KB", 0, 1e12,
	  "queue above which every ECN-capable packet is marked" },
	{ "pmax", OPT_DOUBLE, offsetof(struct swcfg, pmax), "0.2", 0, 1,
	  "marking probability at kmax" },
	{ "pfc_xoff", OPT_SIZE, offsetof(struct swcfg, pfc_xoff), "0", 0, 1e12,
	  "per ingress port and class: send PAUSE above this; 0 = dynamic (pfc_alpha)" },
	{ "pfc_xon_gap", OPT_SIZE, offsetof(struct swcfg, pfc_xon_gap), "8KB", 0, 1e12,
	  "send RESUME when the ingress count falls this far below XOFF" },
	{ "pfc_alpha", OPT_DOUBLE, offsetof(struct swcfg, pfc_alpha), "0.125", 0.0001, 1024,
	  "dynamic XOFF = alpha x the free shared pool (the buffer less headroom and reserves)" },
	{ "pfc_frame", OPT_SIZE, offsetof(struct swcfg, ctrl_size), "64B", 64, 1500,
	  "size of a PFC frame on the wire" },
	{ "pfc_headroom", OPT_SIZE, offsetof(struct swcfg, pfc_headroom), "0", 0, 1e12,
	  "per ingress port, buffer reserved for what arrives after PAUSE; 0 = its link's "
	  "worst case, rate x (delay both ways) + 3 mtu + pfc_frame" },
	{ "ctrl_reserve", OPT_SIZE, offsetof(struct swcfg, ctrl_reserve), "4KB", 0, 1e12,
	  "lossless: per ingress port, buffer reserved for ACK/NACK/CNP (then the shared "
	  "pool)" },
	{ "mtu", OPT_SIZE, offsetof(struct swcfg, mtu), "0", 0, 65535,
	  "largest packet on a link, for the PFC headroom; 0 = the transport's mtu" },
	{ "failover_delay", OPT_TIME, offsetof(struct swcfg, failover_delay), "100us", 0, 1e13,
	  "a link that fails (or recovers) during a run leaves (rejoins) every switch's "
	  "next-hop sets this much later; meanwhile what is sent into it is lost "
	  "(~10us-1ms: hardware failover; 10ms-1s: routing reconvergence)" },
	/* packet trimming as NDP does it (Handley et al., "Re-architecting
	 * datacenter networks and stacks for low latency and high performance",
	 * SIGCOMM 2017) and the UEC htsim's switches (compositequeue.cpp; 64 B:
	 * its main_uec.cpp default -trimsize) */
	{ "trim", OPT_BOOL, offsetof(struct swcfg, trim), "false", 0, 0,
	  "lossy mode: a data packet that would be dropped for lack of buffer is cut to its first "
	  "trim_size bytes and forwarded in the control class (high priority); the "
	  "transport must handle trimmed packets (uet)" },
	{ "trim_size", OPT_SIZE, offsetof(struct swcfg, trim_size), "64B", 64, 1500,
	  "bytes on the wire of a trimmed packet (its headers)" },
	OPT_END
};

void fab_init(struct fabric *f, struct evq *q, struct pool *pkts, uint64_t seed,
	      const struct swcfg *cfg)
{
	memset(f, 0, sizeof *f);
	port_register_prefetchers();
	f->q = q;
	f->pkts = pkts;
	f->seed = seed;
	f->cfg = *cfg;
}

static void add_node(struct fabric *f, struct node *n, enum node_kind kind, const char *name,
		     uint32_t level)
{
	n->kind = (uint8_t)kind;
	n->fab = f;
	n->id = f->nnodes;
	n->level = (uint8_t)level;
	n->name = mp_strdup(name);
	f->nodes = mp_realloc(f->nodes, (f->nnodes + 1) * sizeof *f->nodes);
	f->nodes[f->nnodes++] = n;
}

struct host *fab_add_host(struct fabric *f, const char *name)
{
	struct host *h = mp_calloc_aligned(sizeof *h, MP_CACHE_LINE);
	add_node(f, &h->node, NODE_HOST, name, 0);
	h->hid = f->nhosts;
	f->hosts = mp_realloc(f->hosts, (f->nhosts + 1) * sizeof *f->hosts);
	f->hosts[f->nhosts++] = h;
	return h;
}

struct sw *fab_add_switch(struct fabric *f, const char *name, uint32_t level)
{
	struct sw *s = mp_calloc_aligned(sizeof *s, MP_CACHE_LINE);
	add_node(f, &s->node, NODE_SWITCH, name, level);
	s->sid = f->nsws;
	s->tor_idx = UINT32_MAX;
	f->sws = mp_realloc(f->sws, (f->nsws + 1) * sizeof *f->sws);
	f->sws[f->nsws++] = s;
	return s;
}

uint32_t fab_add_link(struct fabric *f, struct node *a, struct node *b, uint64_t rate_bps,
		      simtime_t delay, enum link_tier tier)
{
	if (f->nlinks == f->links_cap) {
		f->links_cap = f->links_cap ? f->links_cap * 2 : 64;
		f->links = mp_realloc(f->links, f->links_cap * sizeof *f->links);
	}
	struct fab_link_spec *l = &f->links[f->nlinks];
	*l = (struct fab_link_spec){
		.a = a->id, .b = b->id, .rate_bps = rate_bps, .delay = delay, .tier = (uint8_t)tier
	};
	a->nports++;
	b->nports++;
	return f->nlinks++;
}

void fab_bond(struct fabric *f, struct host *h, uint16_t a, uint16_t b)
{
	f->bonds = mp_realloc(f->bonds, (f->nbonds + 1) * sizeof *f->bonds);
	f->bonds[f->nbonds++] = (struct fab_bond_pair){ .host = h->hid, .a = a, .b = b };
}

void fab_free(struct fabric *f)
{
	if (f->lb && f->lb->fini && f->lb_priv)
		f->lb->fini(f);
	mp_free(f->trim_st);
	for (uint32_t i = 0; i < f->nnodes; i++) {
		struct node *n = f->nodes[i];
		mp_free(n->name);
		if (n->kind == NODE_SWITCH) {
			struct sw *s = (struct sw *)n;
			mp_free(s->route);
			mp_free(s->lb_state);
			mp_free_aligned(s);
		} else {
			mp_free_aligned(n);
		}
	}
	mp_free(f->nodes);
	mp_free(f->hosts);
	mp_free(f->sws);
	mp_free(f->tors);
	mp_free(f->links);
	for (struct port *pt = f->port_mem; f->port_mem && pt < f->port_mem + f->nports; pt++) {
		port_drain(f, pt);
		for (int c = 0; c < NCLS; c++)
			pring_free(&pt->q[c].ring);
	}
	mp_free(f->port_raw);
	mp_free(f->host_tor);
	mp_free(f->host_port);
	mp_free(f->bonds);
	mp_free(f->nh_ports);
	mp_free(f->pin);
	mp_free(f->ack_pin);
	if (f->hol) {
		mp_free(f->hol->n);
		mp_free(f->hol->since);
		mp_free(f->hol->total);
		mp_free(f->hol->spans);
		mp_free(f->hol);
	}
	memset(f, 0, sizeof *f);
}

static void init_port(struct fabric *f, struct node *n, uint16_t idx, const struct fab_link_spec *l)
{
	struct port *pt = &n->ports[idx];
	pt->owner = n;
	pt->idx = idx;
	pt->up = true;
	pt->tier = l->tier;
	pt->rate_bps = l->rate_bps;
	pt->prop_delay = l->delay;
	pt->delay = l->delay;
	pt->routed = true;
	pt->plan_rate = l->rate_bps;
	pt->plan_prop = l->delay;
	/* entity ids: nodes first, then ports (see sim.c for the id plan) */
	pt->evs.id = (uint32_t)(pt - f->port_mem) + f->nnodes + 1;
	rng_init(&pt->rng, f->seed, RNG_SWITCH, ((uint64_t)n->id << 16) | idx);
}

/* Next-hop sets, interned: equal port lists share one copy in nh_ports (every
 * leaf's "all uplinks" set, every spine's port toward a leaf), so the table
 * holds the distinct sets, not one per switch and ToR: a 4096-leaf fabric's
 * 1.1 G entries (2 GB) become a few thousand. An open-addressing table of
 * the sets added, keyed by a hash of their ports; sets are never changed in
 * place (the forwarding path only reads them). */
struct nh_intern {
	struct nhset *slot; /* n = 0: empty */
	uint32_t cap, used;
};

static uint64_t nh_hash(const uint16_t *ports, uint16_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	for (uint16_t i = 0; i < n; i++)
		h = (h ^ ports[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static struct nhset add_nhset(struct fabric *f, struct nh_intern *t, const uint16_t *ports,
			      uint16_t n)
{
	if (n == 0)
		return (struct nhset){ 0, 0 };
	if (2 * (t->used + 1) > t->cap) {
		struct nh_intern g = { .cap = t->cap ? 2 * t->cap : 1024 };
		g.slot = mp_calloc(g.cap, sizeof *g.slot);
		for (uint32_t i = 0; i < t->cap; i++) {
			struct nhset e = t->slot[i];
			if (!e.n)
				continue;
			uint32_t k = (uint32_t)nh_hash(f->nh_ports + e.off, e.n) & (g.cap - 1);
			while (g.slot[k].n)
				k = (k + 1) & (g.cap - 1);
			g.slot[k] = e;
		}
		g.used = t->used;
		mp_free(t->slot);
		*t = g;
	}
	uint32_t k = (uint32_t)nh_hash(ports, n) & (t->cap - 1);
	for (; t->slot[k].n; k = (k + 1) & (t->cap - 1)) {
		struct nhset e = t->slot[k];
		if (e.n == n && !memcmp(f->nh_ports + e.off, ports, n * sizeof *ports))
			return e;
	}
	while (f->nnh_ports + n > f->nh_ports_cap) {
		f->nh_ports_cap = f->nh_ports_cap ? f->nh_ports_cap * 2 : 1024;
		f->nh_ports = mp_realloc(f->nh_ports, f->nh_ports_cap * sizeof *f->nh_ports);
	}
	memcpy(f->nh_ports + f->nnh_ports, ports, n * sizeof *ports);
	struct nhset r = { .off = f->nnh_ports, .n = n };
	f->nnh_ports += n;
	t->slot[k] = r;
	t->used++;
	return r;
}

static void link_ports(struct fabric *f, uint32_t link, struct port **pa, struct port **pb)
{
	MP_ASSERT(link < f->nlinks);
	struct fab_link_spec *l = &f->links[link];
	*pa = &f->nodes[l->a]->ports[l->pa];
	*pb = &f->nodes[l->b]->ports[l->pb];
}

/* Next-hop sets from scratch: a breadth-first search from every ToR over the
 * switch-switch links the routing knows to be up (port->routed). Each
 * switch's neighbours are first flattened (nb[first[i] + p]: the neighbour
 * switch behind port p, or UINT32_MAX), so the ToRs x ports inner loops read
 * one array instead of chasing port -> peer -> owner. */
static void routes_compute(struct fabric *f)
{
	uint32_t *dist = mp_malloc(f->nsws * sizeof *dist);
	uint32_t *fifo = mp_malloc(f->nsws * sizeof *fifo);
	uint16_t *cand = mp_malloc(65536 * sizeof *cand);
	size_t *first = mp_malloc((f->nsws + 1) * sizeof *first);
	first[0] = 0;
	for (uint32_t i = 0; i < f->nsws; i++)
		first[i + 1] = first[i] + f->sws[i]->node.nports;
	uint32_t *nb = mp_malloc((first[f->nsws] ? first[f->nsws] : 1) * sizeof *nb);
	for (uint32_t i = 0; i < f->nsws; i++) {
		const struct sw *s = f->sws[i];
		for (uint16_t p = 0; p < s->node.nports; p++) {
			const struct port *pt = &s->node.ports[p];
			const struct node *o = pt->peer->owner;
			nb[first[i] + p] = pt->routed && o->kind == NODE_SWITCH
					       ? ((const struct sw *)o)->sid
					       : UINT32_MAX;
		}
	}
	struct nh_intern tab = { 0 };
	f->nnh_ports = 0;
	for (uint32_t t = 0; t < f->ntors; t++) {
		for (uint32_t i = 0; i < f->nsws; i++)
			dist[i] = UINT32_MAX;
		uint32_t head = 0, tail = 0;
		dist[f->tors[t]->sid] = 0;
		fifo[tail++] = f->tors[t]->sid;
		while (head < tail) {
			uint32_t u = fifo[head++];
			for (size_t k = first[u]; k < first[u + 1]; k++) {
				uint32_t v = nb[k];
				if (v != UINT32_MAX && dist[v] == UINT32_MAX) {
					dist[v] = dist[u] + 1;
					fifo[tail++] = v;
				}
			}
		}
		for (uint32_t i = 0; i < f->nsws; i++) {
			struct sw *s = f->sws[i];
			s->route[t] = (struct nhset){ 0, 0 };
			if (dist[i] == UINT32_MAX || dist[i] == 0)
				continue;
			uint16_t n = 0;
			for (size_t k = first[i]; k < first[i + 1]; k++)
				if (nb[k] != UINT32_MAX && dist[nb[k]] == dist[i] - 1)
					cand[n++] = (uint16_t)(k - first[i]);
			s->route[t] = add_nhset(f, &tab, cand, n);
		}
	}
	mp_free(tab.slot);
	mp_free(nb);
	mp_free(first);
	mp_free(cand);
	mp_free(fifo);
	mp_free(dist);
}

/* ---- PFC headroom (lossless mode) -------------------------------------------
 * What can still arrive on a switch's ingress port after it decides to pause
 * its upstream (the argument is in port.c, "shared buffer and PFC"): the bytes
 * its link carries in the round trip of the PAUSE, rate x (delay from the
 * upstream + delay back to it), plus three packets of the largest size and the
 * PAUSE frame. The HPCC ns-3 model (Li et al., "HPCC: High Precision Congestion
 * Control", SIGCOMM 2019) reserves 3 x rate x one-way delay per port; ConWeave's
 * (Song et al., "Network Load Balancing with In-network Reordering Support for
 * RDMA", SIGCOMM 2023) 2 x rate x delay + 2 MTU. Delays count the extra
 * per-packet delay of a slow switch, and rates and delays are the largest the
 * run will give the link (fab_plan_link). */
static uint64_t hdrm_need(const struct fabric *f, const struct port *pt)
{
	const struct port *up = pt->peer;
	unsigned __int128 bits = (unsigned __int128)pt->plan_rate *
				 (pt->plan_prop + pt->plan_proc + up->plan_prop + up->plan_proc);
	uint64_t wire = (uint64_t)((bits + 8 * PS_PER_S - 1) / (8 * PS_PER_S));
	return wire + 3 * f->cfg.mtu + f->cfg.ctrl_size;
}

static uint64_t hdrm_cap(const struct fabric *f, const struct port *pt)
{
	uint64_t need = hdrm_need(f, pt);
	return f->cfg.pfc_headroom > need ? f->cfg.pfc_headroom : need;
}

/* Every switch port's headroom and the shared pool left (none when the buffer
 * does not hold the reserves: fab_check_buffer reports it). */
static void mmu_size(struct fabric *f)
{
	bool lossless = f->cfg.mode == BUF_LOSSLESS;
	for (uint32_t i = 0; i < f->nsws; i++) {
		struct sw *s = f->sws[i];
		uint64_t rsv = 0;
		s->hdrm_total = 0;
		for (uint16_t p = 0; p < s->node.nports && lossless; p++) {
			struct port *pt = &s->node.ports[p];
			pt->hdrm_cap = hdrm_cap(f, pt);
			s->hdrm_total += pt->hdrm_cap;
			rsv += f->cfg.ctrl_reserve;
		}
		rsv += s->hdrm_total;
		s->shared_size = f->cfg.buffer > rsv ? f->cfg.buffer - rsv : 0;
	}
}

void fab_plan_link(struct fabric *f, uint32_t link, uint64_t rate_bps, simtime_t prop,
		   simtime_t proc, const struct node *at)
{
	struct port *ends[2];
	link_ports(f, link, &ends[0], &ends[1]);
	for (int k = 0; k < 2; k++) {
		struct port *pt = ends[k];
		if (rate_bps > pt->plan_rate)
			pt->plan_rate = rate_bps;
		if (prop > pt->plan_prop)
			pt->plan_prop = prop;
		if ((!at || pt->owner == at) && proc > pt->plan_proc)
			pt->plan_proc = proc;
	}
}

int fab_check_buffer(struct fabric *f, struct mp_err *e)
{
	if (f->cfg.mode != BUF_LOSSLESS)
		return MP_OK;
	mmu_size(f);
	const struct sw *worst = NULL;
	uint64_t worst_need = 0;
	for (uint32_t i = 0; i < f->nsws; i++) {
		const struct sw *s = f->sws[i];
		for (uint16_t p = 0; p < s->node.nports; p++) {
			const struct port *pt = &s->node.ports[p];
			uint64_t need = hdrm_need(f, pt);
			if (f->cfg.pfc_headroom && f->cfg.pfc_headroom < need)
				return mp_errf(e, MP_EUSER,
					       "pfc_headroom: expected 0 or at least %llu B (what "
					       "can arrive on %s's port from %s after PAUSE), got "
					       "%llu B",
					       (unsigned long long)need, s->node.name,
					       pt->peer->owner->name,
					       (unsigned long long)f->cfg.pfc_headroom);
		}
		uint64_t rsv = s->hdrm_total + s->node.nports * f->cfg.ctrl_reserve;
		if (rsv > worst_need) {
			worst_need = rsv;
			worst = s;
		}
	}
	if (!worst || worst_need < f->cfg.buffer)
		return MP_OK;
	const struct port *big = &worst->node.ports[0];
	for (uint16_t p = 1; p < worst->node.nports; p++)
		if (worst->node.ports[p].hdrm_cap > big->hdrm_cap)
			big = &worst->node.ports[p];
	return mp_errf(e, MP_EUSER,
		       "buffer: expected more than %llu B in lossless mode, got %llu B: switch %s "
		       "reserves %llu B of PFC headroom for its %u ports (up to %llu B for the "
		       "port from %s: %.0f Gb/s x %.3f us both ways + 3 x mtu %llu B + "
		       "pfc_frame %llu B) and %llu B of ctrl_reserve",
		       (unsigned long long)worst_need, (unsigned long long)f->cfg.buffer,
		       worst->node.name, (unsigned long long)worst->hdrm_total,
		       (unsigned)worst->node.nports, (unsigned long long)big->hdrm_cap,
		       big->peer->owner->name, (double)big->plan_rate / 1e9,
		       time_to_us(big->plan_prop + big->plan_proc + big->peer->plan_prop +
				  big->peer->plan_proc),
		       (unsigned long long)f->cfg.mtu, (unsigned long long)f->cfg.ctrl_size,
		       (unsigned long long)(worst->node.nports * f->cfg.ctrl_reserve));
}

void fab_assert_lossless(const struct fabric *f)
{
	if (f->cfg.mode != BUF_LOSSLESS)
		return;
	for (uint32_t i = 0; i < f->nsws; i++) {
		const struct sw *s = f->sws[i];
		uint64_t drops = 0;
		for (uint16_t p = 0; p < s->node.nports; p++)
			drops += s->node.ports[p].st.drops_buffer;
		if (drops || s->buf_peak > f->cfg.buffer)
			MP_PANIC("lossless switch %s dropped %llu packets for lack of buffer and "
				 "held up to %llu B of its %llu B buffer",
				 s->node.name, (unsigned long long)drops,
				 (unsigned long long)s->buf_peak,
				 (unsigned long long)f->cfg.buffer);
	}
	if (f->lossless_overflow)
		MP_PANIC("lossless switches admitted %llu B beyond their ports' PFC headroom",
			 (unsigned long long)f->lossless_overflow);
}

/* A dual-ToR pair after the routes learnt of its links (fab_bond): a port
 * whose link is down while its partner's is up is bond_away, its host's rows
 * of host_tor and host_port name the partner's switch, and its NIC flows move
 * there. Both down: nothing to move to, both stay (what is sent is lost). */
static void bond_update(struct fabric *f, struct host *h, struct port *a, struct port *b)
{
	a->bond_away = !a->routed && b->routed;
	b->bond_away = !b->routed && a->routed;
	for (uint32_t r = 0; r < f->rails; r++) {
		struct port *hp = &h->node.ports[r % h->node.nports];
		if (hp != a && hp != b)
			continue;
		const struct port *use = hp->bond_away ? hp->bond : hp;
		f->host_tor[h->hid * f->rails + r] = ((const struct sw *)use->peer_node)->tor_idx;
		f->host_port[h->hid * f->rails + r] = use->peer_idx;
	}
	if (a->bond_away)
		port_bond_move(f, a);
	if (b->bond_away)
		port_bond_move(f, b);
}

/* The pairs of fab_bond, once ports exist: "topology: ..." when a port is not
 * the host's or links the same switch twice. */
static int bonds_link(struct fabric *f, struct mp_err *e)
{
	for (uint32_t i = 0; i < f->nbonds; i++) {
		struct host *h = f->hosts[f->bonds[i].host];
		uint16_t a = f->bonds[i].a, b = f->bonds[i].b;
		if (a >= h->node.nports || b >= h->node.nports || a == b ||
		    h->node.ports[a].peer_node == h->node.ports[b].peer_node)
			return mp_errf(e, MP_EUSER,
				       "topology: host '%s' bonds ports %u and %u, expected two "
				       "of its links to two switches",
				       h->node.name, a, b);
		h->node.ports[a].bond = &h->node.ports[b];
		h->node.ports[b].bond = &h->node.ports[a];
		bond_update(f, h, &h->node.ports[a], &h->node.ports[b]);
	}
	return MP_OK;
}

/* Every ToR reaches every other ToR of the same rail (a rail's ToRs: those
 * host_tor names for it; planes of a rail-optimized fabric share no switch). */
static int tors_check(struct fabric *f, struct mp_err *e)
{
	uint8_t *mark = mp_malloc(f->ntors);
	uint32_t *list = mp_malloc(f->ntors * sizeof *list);
	int rc = MP_OK;
	for (uint32_t r = 0; r < f->rails && rc == MP_OK; r++) {
		uint32_t n = 0;
		memset(mark, 0, f->ntors);
		for (uint32_t h = 0; h < f->nhosts; h++) {
			uint32_t t = f->host_tor[h * f->rails + r];
			if (!mark[t]) {
				mark[t] = 1;
				list[n++] = t;
			}
		}
		for (uint32_t i = 0; i < n && rc == MP_OK; i++)
			for (uint32_t j = 0; j < n; j++)
				if (j != i && f->tors[list[i]]->route[list[j]].n == 0) {
					rc = mp_errf(e, MP_EUSER,
						     "topology: switch '%s' cannot reach switch "
						     "'%s' (too many links down?)",
						     f->tors[list[i]]->node.name,
						     f->tors[list[j]]->node.name);
					break;
				}
	}
	mp_free(list);
	mp_free(mark);
	return rc;
}

/* The ports of every node in one aligned array, wired along the links; those
 * of links down from the start neither up nor routed. */
static int ports_wire(struct fabric *f, const uint32_t *down_links, size_t ndown, struct mp_err *e)
{
	size_t nports = 0;
	for (uint32_t i = 0; i < f->nnodes; i++)
		nports += f->nodes[i]->nports;
	/* ports on 64-byte boundaries, so a port's hot line is one cache line */
	f->port_raw = mp_calloc(1, (nports ? nports : 1) * sizeof *f->port_mem + 64);
	f->port_mem = (struct port *)(((uintptr_t)f->port_raw + 63) & ~(uintptr_t)63);
	f->nports = (uint32_t)nports;
	if (f->cfg.trim)
		f->trim_st = mp_calloc(nports, sizeof *f->trim_st);
	struct port *next = f->port_mem;
	for (uint32_t i = 0; i < f->nnodes; i++) {
		struct node *n = f->nodes[i];
		if (n->nports == 0)
			return mp_errf(e, MP_EUSER, "topology: node '%s' has no links", n->name);
		n->ports = next;
		next += n->nports;
		n->nports = 0; /* refilled below */
	}
	for (uint32_t i = 0; i < f->nlinks; i++) {
		struct fab_link_spec *l = &f->links[i];
		struct node *a = f->nodes[l->a], *b = f->nodes[l->b];
		l->pa = a->nports++;
		l->pb = b->nports++;
		init_port(f, a, l->pa, l);
		init_port(f, b, l->pb, l);
		a->ports[l->pa].peer = &b->ports[l->pb];
		b->ports[l->pb].peer = &a->ports[l->pa];
		a->ports[l->pa].peer_node = b;
		a->ports[l->pa].peer_idx = l->pb;
		b->ports[l->pb].peer_node = a;
		b->ports[l->pb].peer_idx = l->pa;
	}
	/* what a departure reads of its packet beyond its queue entry (port.c,
	 * "A packet's departure"): the prefetchers ask for the packet then */
	bool reads_pkt = f->cfg.mode == BUF_LOSSLESS ||
			 (f->lb && (f->lb->sw_tx || f->lb->host_tx)) || f->int_off;
	for (size_t i = 0; i < nports; i++)
		f->port_mem[i].tx_reads_pkt = reads_pkt;
	for (size_t i = 0; i < ndown; i++) {
		struct fab_link_spec *l = &f->links[down_links[i]];
		struct port *pa = &f->nodes[l->a]->ports[l->pa],
			    *pb = &f->nodes[l->b]->ports[l->pb];
		pa->up = pb->up = pa->routed = pb->routed = false;
	}
	return MP_OK;
}

int fab_finalize(struct fabric *f, const uint32_t *down_links, size_t ndown, struct mp_err *e)
{
	if (f->nhosts == 0)
		return mp_errf(e, MP_EUSER, "topology has no hosts");
	if (ports_wire(f, down_links, ndown, e))
		return e->status;
	/* hosts: every port linked to a switch; each such switch is a ToR */
	f->rails = 1;
	for (uint32_t i = 0; i < f->nhosts; i++) {
		struct host *h = f->hosts[i];
		if (h->node.nports > 255)
			return mp_errf(e, MP_EUSER, "topology: host '%s' has more than 255 ports",
				       h->node.name);
		if (h->node.nports > f->rails)
			f->rails = h->node.nports;
		for (uint16_t k = 0; k < h->node.nports; k++) {
			struct node *peer = h->node.ports[k].peer->owner;
			if (peer->kind != NODE_SWITCH)
				return mp_errf(e, MP_EUSER,
					       "topology: host '%s' is linked to host '%s'; hosts "
					       "connect to switches",
					       h->node.name, peer->name);
			struct sw *t = (struct sw *)peer;
			if (t->tor_idx == UINT32_MAX) {
				t->tor_idx = f->ntors;
				f->tors = mp_realloc(f->tors, (f->ntors + 1) * sizeof *f->tors);
				f->tors[f->ntors++] = t;
			}
		}
	}
	f->host_tor = mp_malloc((size_t)f->nhosts * f->rails * sizeof *f->host_tor);
	f->host_port = mp_malloc((size_t)f->nhosts * f->rails * sizeof *f->host_port);
	for (uint32_t i = 0; i < f->nhosts; i++) {
		const struct host *h = f->hosts[i];
		for (uint32_t r = 0; r < f->rails; r++) {
			const struct port *hp = &h->node.ports[r % h->node.nports];
			f->host_tor[i * f->rails + r] = ((struct sw *)hp->peer_node)->tor_idx;
			f->host_port[i * f->rails + r] = hp->peer_idx;
		}
	}
	for (uint32_t i = 0; i < f->nsws; i++) {
		struct sw *s = f->sws[i];
		s->hash_seed = rng_mix64(f->seed ^ rng_mix64(0xec3bULL + s->node.id));
		rng_init(&s->rng, f->seed, RNG_SWITCH, 0x100000000ULL + s->node.id);
		s->route = mp_malloc(f->ntors * sizeof *s->route);
		if (f->lb && f->lb->state_size)
			s->lb_state = mp_calloc(1, f->lb->state_size);
	}
	routes_compute(f);
	mmu_size(f);
	f->pkt_meta = f->lb ? (uint32_t)f->lb->pkt_meta_size : 0;
	if (bonds_link(f, e) || tors_check(f, e))
		return e->status;
	if (f->lb && f->lb->init)
		return f->lb->init(f, e);
	return MP_OK;
}

/* The routes learn that `link` went down or came up (arg: link << 1 | up). */
static void reroute_ev(void *obj, uint64_t arg)
{
	struct fabric *f = obj;
	struct port *a, *b;
	link_ports(f, (uint32_t)(arg >> 1), &a, &b);
	a->routed = b->routed = arg & 1;
	routes_compute(f);
	struct port *hp = a->owner->kind == NODE_HOST ? a : b->owner->kind == NODE_HOST ? b : NULL;
	if (hp && hp->bond)
		bond_update(f, (struct host *)hp->owner, hp, hp->bond);
}

void fab_link_set_up(struct fabric *f, uint32_t link, bool up)
{
	struct port *a, *b;
	link_ports(f, link, &a, &b);
	if (a->up == up)
		return;
	a->up = b->up = up;
	if (up) {
		port_link_up(f, a);
		port_link_up(f, b);
	} else {
		port_link_down(f, a);
		port_link_down(f, b);
	}
	evq_at(f->q, &a->evs, f->q->now + f->cfg.failover_delay, reroute_ev, f,
	       (uint64_t)link << 1 | up);
}

/* Lossless: a change the headroom was not sized for (fab_plan_link) would let
 * the lossless class overrun it. */
static void hdrm_recheck(struct fabric *f, uint32_t link)
{
	struct port *ends[2];
	link_ports(f, link, &ends[0], &ends[1]);
	for (int k = 0; k < 2; k++) {
		struct port *pt = ends[k];
		if (pt->rate_bps > pt->plan_rate)
			pt->plan_rate = pt->rate_bps;
		if (pt->prop_delay > pt->plan_prop)
			pt->plan_prop = pt->prop_delay;
		if (pt->proc_delay > pt->plan_proc)
			pt->plan_proc = pt->proc_delay;
	}
	for (int k = 0; k < 2 && f->cfg.mode == BUF_LOSSLESS; k++)
		if (ends[k]->owner->kind == NODE_SWITCH &&
		    hdrm_need(f, ends[k]) > ends[k]->hdrm_cap)
			MP_PANIC("link %u changed beyond what its PFC headroom was sized for "
				 "(fab_plan_link was not told)",
				 link);
}

void fab_link_set_rate(struct fabric *f, uint32_t link, uint64_t rate_bps)
{
	struct port *a, *b;
	link_ports(f, link, &a, &b);
	a->rate_bps = b->rate_bps = rate_bps;
	a->ser_rem = b->ser_rem = 0;
	f->links[link].rate_bps = rate_bps;
	hdrm_recheck(f, link);
}

void fab_link_set_delay(struct fabric *f, uint32_t link, simtime_t delay)
{
	struct port *a, *b;
	link_ports(f, link, &a, &b);
	a->prop_delay = b->prop_delay = delay;
	a->delay = delay + a->proc_delay;
	b->delay = delay + b->proc_delay;
	f->links[link].delay = delay;
	hdrm_recheck(f, link);
}

/* The headroom check of the link port pt belongs to (rare: a run-time change). */
static void port_recheck(struct port *pt)
{
	struct fabric *f = pt->owner->fab;
	for (uint32_t l = 0; l < f->nlinks; l++)
		if ((f->links[l].a == pt->owner->id && f->links[l].pa == pt->idx) ||
		    (f->links[l].b == pt->owner->id && f->links[l].pb == pt->idx)) {
			hdrm_recheck(f, l);
			break;
		}
}

/* links[].rate_bps keeps the rate the link was built with (what headroom is
 * first sized for); a one-way change has no single rate to write there. */
void fab_port_set_rate(struct port *pt, uint64_t rate_bps)
{
	pt->rate_bps = rate_bps;
	pt->ser_rem = 0;
	port_recheck(pt);
}

void fab_port_set_proc_delay(struct port *pt, simtime_t d)
{
	pt->proc_delay = d;
	pt->delay = pt->prop_delay + d;
	port_recheck(pt); /* rare: a slow switch appears */
}

void fab_link_set_proc_delay(struct fabric *f, uint32_t link, simtime_t d)
{
	struct port *a, *b;
	link_ports(f, link, &a, &b);
	fab_port_set_proc_delay(a, d);
	fab_port_set_proc_delay(b, d);
}

void fab_link_set_loss(struct fabric *f, uint32_t link, double loss_rate)
{
	struct port *a, *b;
	link_ports(f, link, &a, &b);
	a->loss_rate = b->loss_rate = loss_rate;
	a->lossy_link = b->lossy_link = loss_rate > 0;
}

struct node *fab_find_node(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->nnodes; i++)
		if (strcmp(f->nodes[i]->name, name) == 0)
			return f->nodes[i];
	return NULL;
}

uint32_t fab_find_link(const struct fabric *f, const char *name)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", name);
	unsigned k = 0;
	char *hash = strchr(buf, '#');
	if (hash) {
		*hash = '\0';
		char *end;
		unsigned long v = strtoul(hash + 1, &end, 10);
		if (*end || end == hash + 1)
			return UINT32_MAX;
		k = (unsigned)v;
	}
	/* node names may contain '-': try every split point */
	for (char *dash = strchr(buf, '-'); dash; dash = strchr(dash + 1, '-')) {
		*dash = '\0';
		struct node *a = fab_find_node(f, buf), *b = fab_find_node(f, dash + 1);
		*dash = '-';
		if (!a || !b)
			continue;
		unsigned seen = 0;
		for (uint32_t i = 0; i < f->nlinks; i++) {
			const struct fab_link_spec *l = &f->links[i];
			if ((l->a == a->id && l->b == b->id) || (l->a == b->id && l->b == a->id))
				if (seen++ == k)
					return i;
		}
	}
	return UINT32_MAX;
}

void fab_link_name(const struct fabric *f, uint32_t link, char *buf, size_t n)
{
	const struct fab_link_spec *l = &f->links[link];
	unsigned k = 0;
	for (uint32_t i = 0; i < link; i++)
		if ((f->links[i].a == l->a && f->links[i].b == l->b) ||
		    (f->links[i].a == l->b && f->links[i].b == l->a))
			k++;
	if (k)
		snprintf(buf, n, "%s-%s#%u", f->nodes[l->a]->name, f->nodes[l->b]->name, k);
	else
		snprintf(buf, n, "%s-%s", f->nodes[l->a]->name, f->nodes[l->b]->name);
}

/* Walk one shortest path (the first member of each next-hop set). With
 * uniform tiers every shortest path has the same delay. */
static simtime_t path_walk(const struct fabric *f, uint32_t a, uint32_t b, unsigned rail,
			   uint32_t bytes, uint64_t *bottleneck_bps, unsigned *switches)
{
	const struct host *src = f->hosts[a];
	const struct port *pt = &src->node.ports[rail % src->node.nports];
	if (pt->bond_away)
		pt = pt->bond;
	uint32_t t = f->host_tor[b * f->rails + rail % f->rails];
	simtime_t d = 0;
	uint64_t bn = UINT64_MAX;
	unsigned nsw = 0;
	for (unsigned guard = 0; guard < 64; guard++) {
		d += time_ser_ps(bytes, pt->rate_bps) + pt->delay;
		if (pt->rate_bps < bn)
			bn = pt->rate_bps;
		const struct node *n = pt->peer_node;
		if (n->kind == NODE_HOST)
			break;
		nsw++;
		const struct sw *s = (const struct sw *)n;
		if (s->tor_idx == t) {
			pt = &s->node.ports[f->host_port[b * f->rails + rail % f->rails]];
			continue;
		}
		const struct nhset *nh = &s->route[t];
		if (!nh->n) /* cut off by a failure during the run */
			break;
		pt = &s->node.ports[f->nh_ports[nh->off]];
	}
	if (bottleneck_bps)
		*bottleneck_bps = bn;
	if (switches)
		*switches = nsw;
	return d;
}

simtime_t fab_path_delay(const struct fabric *f, uint32_t a, uint32_t b, unsigned rail,
			 uint32_t bytes, uint64_t *bottleneck_bps)
{
	return path_walk(f, a, b, rail, bytes, bottleneck_bps, NULL);
}

unsigned fab_path_switches(const struct fabric *f, uint32_t a, uint32_t b, unsigned rail)
{
	unsigned n;
	path_walk(f, a, b, rail, 0, NULL, &n);
	return n;
}

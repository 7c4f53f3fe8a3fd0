/* topo.c - the topologies: star, dumbbell, leaf_spine (two-tier fat tree) and
 * fat_tree (three tiers with pods: the k-ary fat tree and UDMP's 5-pod variant),
 * and the registry, which also lists rail_optimized (net/rail.c).
 */
#include "net/topo.h"

#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "net/fabric.h"
#include "net/host.h"
#include "net/port.h"
#include "net/switch.h"

static struct host *host_n(struct fabric *f, uint32_t i)
{
	char name[32];
	snprintf(name, sizeof name, "h%u", i);
	return fab_add_host(f, name);
}

/* ---- star ------------------------------------------------------------------ */
struct star_params {
	uint64_t hosts, host_ports;
	uint64_t rate;
	simtime_t delay;
};

static void star_build(const void *pp, struct fabric *f, struct topo_info *info)
{
	const struct star_params *p = pp;
	struct sw *s = fab_add_switch(f, "sw0", 1);
	for (uint32_t i = 0; i < p->hosts; i++) {
		struct host *h = host_n(f, i);
		for (uint32_t k = 0; k < p->host_ports; k++)
			fab_add_link(f, &h->node, &s->node, p->rate, p->delay, TIER_HOST);
	}
	info->hosts_per_tor = (uint32_t)p->hosts;
	info->host_rate_bps = p->rate;
}

static const struct opt_desc star_opts[] = {
	{ "hosts", OPT_UINT, offsetof(struct star_params, hosts), "16", 2, 65535,
	  "number of hosts" },
	{ "host_ports", OPT_UINT, offsetof(struct star_params, host_ports), "1", 1, 8,
	  "NIC ports per host, each its own link to the switch (rails)" },
	{ "link_rate", OPT_RATE, offsetof(struct star_params, rate), "100Gbps", 1e6, 1.6e13,
	  "host link rate" },
	{ "link_delay", OPT_TIME, offsetof(struct star_params, delay), "1us", 0, 1e12,
	  "host link propagation delay" },
	OPT_END
};

static void star_size(const void *pp, struct topo_size *sz)
{
	const struct star_params *p = pp;
	*sz = (struct topo_size){
		.hosts = p->hosts, .switches = 1, .links = p->hosts * p->host_ports, .tors = 1
	};
}

static const struct topo_ops star_topo_ops = {
	.name = "star",
	.summary = "N hosts on one switch",
	.opts = star_opts,
	.params_size = sizeof(struct star_params),
	.build = star_build,
	.size = star_size,
};

/* ---- dumbbell --------------------------------------------------------------- */
struct dumbbell_params {
	uint64_t left, right;
	uint64_t host_rate, bottleneck_rate;
	simtime_t host_delay, bottleneck_delay;
};

static void dumbbell_build(const void *pp, struct fabric *f, struct topo_info *info)
{
	const struct dumbbell_params *p = pp;
	struct sw *l = fab_add_switch(f, "left", 1), *r = fab_add_switch(f, "right", 1);
	uint32_t i = 0;
	for (; i < p->left; i++)
		fab_add_link(f, &host_n(f, i)->node, &l->node, p->host_rate, p->host_delay,
			     TIER_HOST);
	for (; i < p->left + p->right; i++)
		fab_add_link(f, &host_n(f, i)->node, &r->node, p->host_rate, p->host_delay,
			     TIER_HOST);
	fab_add_link(f, &l->node, &r->node, p->bottleneck_rate, p->bottleneck_delay, TIER_1);
	info->hosts_per_tor = (uint32_t)p->left;
	info->host_rate_bps = p->host_rate;
}

static const struct opt_desc dumbbell_opts[] = {
	{ "left", OPT_UINT, offsetof(struct dumbbell_params, left), "1", 1, 65535,
	  "hosts on the left switch (h0 ...)" },
	{ "right", OPT_UINT, offsetof(struct dumbbell_params, right), "1", 1, 65535,
	  "hosts on the right switch (after the left ones)" },
	{ "host_rate", OPT_RATE, offsetof(struct dumbbell_params, host_rate), "100Gbps", 1e6,
	  1.6e13, "host link rate" },
	{ "bottleneck_rate", OPT_RATE, offsetof(struct dumbbell_params, bottleneck_rate), "100Gbps",
	  1e6, 1.6e13, "rate of the link between the two switches" },
	{ "host_delay", OPT_TIME, offsetof(struct dumbbell_params, host_delay), "1us", 0, 1e12,
	  "host link propagation delay" },
	{ "bottleneck_delay", OPT_TIME, offsetof(struct dumbbell_params, bottleneck_delay), "1us",
	  0, 1e12, "bottleneck link propagation delay" },
	OPT_END
};

static void dumbbell_size(const void *pp, struct topo_size *sz)
{
	const struct dumbbell_params *p = pp;
	*sz = (struct topo_size){ .hosts = p->left + p->right,
				  .switches = 2,
				  .links = p->left + p->right + 1,
				  .tors = 2,
				  .nexthops = 2 };
}

static const struct topo_ops dumbbell_topo_ops = {
	.name = "dumbbell",
	.summary =
	    "two switches joined by one bottleneck link; hosts h0.. on the left, then the right",
	.opts = dumbbell_opts,
	.params_size = sizeof(struct dumbbell_params),
	.build = dumbbell_build,
	.size = dumbbell_size,
};

/* ---- leaf_spine ------------------------------------------------------------- */
struct leaf_spine_params {
	uint64_t hosts_per_leaf, leaves, spines, uplinks_per_leaf, host_ports;
	uint64_t host_rate, fabric_rate;
	simtime_t host_delay, fabric_delay;
};

static int leaf_spine_check(const void *pp, struct mp_err *e)
{
	const struct leaf_spine_params *p = pp;
	uint64_t up = p->uplinks_per_leaf ? p->uplinks_per_leaf : p->spines;
	if (up % p->spines)
		return mp_errf(e, MP_EUSER,
			       "uplinks_per_leaf: expected a multiple of spines (%llu), got %llu "
			       "(each leaf connects to every spine with the same number of links)",
			       (unsigned long long)p->spines, (unsigned long long)up);
	if (p->hosts_per_leaf + up > 65535)
		return mp_errf(e, MP_EUSER,
			       "hosts_per_leaf: a leaf would need more than 65535 ports");
	if (p->leaves * up / p->spines > 65535)
		return mp_errf(e, MP_EUSER, "leaves: a spine would need more than 65535 ports");
	if (p->hosts_per_leaf * p->leaves > 1000000)
		return mp_errf(e, MP_EUSER, "leaves: more than 1,000,000 hosts");
	if (p->leaves % p->host_ports)
		return mp_errf(
		    e, MP_EUSER,
		    "host_ports: expected a divisor of leaves (%llu): each NIC port (rail) "
		    "has its own set of leaves/%llu leaves",
		    (unsigned long long)p->leaves, (unsigned long long)p->host_ports);
	return MP_OK;
}

static void leaf_spine_size(const void *pp, struct topo_size *sz)
{
	const struct leaf_spine_params *p = pp;
	uint64_t up = p->uplinks_per_leaf ? p->uplinks_per_leaf : p->spines;
	uint64_t rails = p->host_ports ? p->host_ports : 1, per_rail = p->leaves / rails;
	/* a leaf reaches each other leaf of its rail over all its uplinks (one
	 * set, interned), a spine each leaf over its links to it; failures add a
	 * few sets more */
	*sz =
	    (struct topo_size){ .hosts = p->hosts_per_leaf * p->leaves / rails,
				.switches = p->leaves + p->spines,
				.links = p->hosts_per_leaf * p->leaves + p->leaves * up,
				.tors = p->leaves,
				.nexthops = (per_rail > 1 ? p->leaves * up : 0) + p->leaves * up };
}

static void leaf_spine_build(const void *pp, struct fabric *f, struct topo_info *info)
{
	const struct leaf_spine_params *p = pp;
	uint64_t up = p->uplinks_per_leaf ? p->uplinks_per_leaf : p->spines;
	char name[32];
	struct sw **leaf = mp_malloc(p->leaves * sizeof *leaf);
	struct sw **spine = mp_malloc(p->spines * sizeof *spine);
	for (uint32_t i = 0; i < p->leaves; i++) {
		snprintf(name, sizeof name, "leaf%u", i);
		leaf[i] = fab_add_switch(f, name, 1);
	}
	for (uint32_t i = 0; i < p->spines; i++) {
		snprintf(name, sizeof name, "spine%u", i);
		spine[i] = fab_add_switch(f, name, 2);
	}
	/* with P ports per host, leaves form P rails of leaves/P; host h's port k
	 * goes to leaf k * leaves/P + h / hosts_per_leaf */
	uint64_t per_rail = p->leaves / p->host_ports;
	uint32_t nh = (uint32_t)(per_rail * p->hosts_per_leaf);
	for (uint32_t h = 0; h < nh; h++) {
		struct host *hh = host_n(f, h);
		for (uint32_t k = 0; k < p->host_ports; k++)
			fab_add_link(f, &hh->node,
				     &leaf[k * per_rail + h / p->hosts_per_leaf]->node,
				     p->host_rate, p->host_delay, TIER_HOST);
	}
	for (uint32_t l = 0; l < p->leaves; l++)
		for (uint32_t k = 0; k < up; k++)
			fab_add_link(f, &leaf[l]->node, &spine[k % p->spines]->node, p->fabric_rate,
				     p->fabric_delay, TIER_1);
	mp_free(leaf);
	mp_free(spine);
	info->hosts_per_tor = (uint32_t)p->hosts_per_leaf;
	info->host_rate_bps = p->host_rate;
}

static const struct opt_desc leaf_spine_opts[] = {
	{ "hosts_per_leaf", OPT_UINT, offsetof(struct leaf_spine_params, hosts_per_leaf), "16", 1,
	  65535, "hosts under each leaf (ToR) switch" },
	{ "leaves", OPT_UINT, offsetof(struct leaf_spine_params, leaves), "8", 1, 65535,
	  "number of leaf switches" },
	{ "spines", OPT_UINT, offsetof(struct leaf_spine_params, spines), "16", 1, 65535,
	  "number of spine switches" },
	{ "host_ports", OPT_UINT, offsetof(struct leaf_spine_params, host_ports), "1", 1, 8,
	  "NIC ports per host; port k goes to rail k, leaves/host_ports leaves of its own "
	  "(hosts = hosts_per_leaf x leaves / host_ports)" },
	{ "uplinks_per_leaf", OPT_UINT, offsetof(struct leaf_spine_params, uplinks_per_leaf), "0",
	  0, 65535, "links from each leaf to the spines, spread evenly; 0 = one per spine" },
	{ "host_rate", OPT_RATE, offsetof(struct leaf_spine_params, host_rate), "100Gbps", 1e6,
	  1.6e13, "host-leaf link rate" },
	{ "fabric_rate", OPT_RATE, offsetof(struct leaf_spine_params, fabric_rate), "100Gbps", 1e6,
	  1.6e13, "leaf-spine link rate" },
	{ "host_delay", OPT_TIME, offsetof(struct leaf_spine_params, host_delay), "1us", 0, 1e12,
	  "host-leaf propagation delay" },
	{ "fabric_delay", OPT_TIME, offsetof(struct leaf_spine_params, fabric_delay), "1us", 0,
	  1e12, "leaf-spine propagation delay" },
	OPT_END
};

static const struct topo_ops leaf_spine_topo_ops = {
	.name = "leaf_spine",
	.summary = "two-tier fat tree; oversubscription = hosts_per_leaf*host_rate / "
		   "(uplinks_per_leaf*fabric_rate)",
	.opts = leaf_spine_opts,
	.params_size = sizeof(struct leaf_spine_params),
	.check = leaf_spine_check,
	.size = leaf_spine_size,
	.build = leaf_spine_build,
};

/* ---- fat_tree --------------------------------------------------------------- */
/* Three tiers with pods. With k > 0 the classic k-ary fat tree: k pods of k/2
 * edge and k/2 aggregation switches, k/2 hosts per edge switch and (k/2)^2
 * cores. With k = 0 every count is given (UDMP: 5 pods, 4 edge, 4 agg, 16 hosts
 * per edge, 16 cores). Aggregation switch j of every pod connects to core group
 * j: cores j*C/A ... (j+1)*C/A - 1, where C = cores and A = aggs per pod.
 * Oversubscription R at the aggregation-core tier divides each aggregation
 * switch's core bandwidth by R: it keeps 1/g of each group's cores, g = gcd(R,
 * cores per group), and runs their links at g/R of the fabric rate (16 cores, 4
 * aggs: 2:1 and 4:1 keep 2 or 1 core links per agg at full rate; 8:1 keeps one
 * at half rate). */
struct fat_tree_params {
	uint64_t k, pods, edges_per_pod, aggs_per_pod, hosts_per_edge, cores, oversub;
	uint64_t host_rate, fabric_rate;
	simtime_t host_delay, fabric_delay;
};

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static void fat_tree_dims(const struct fat_tree_params *p, struct fat_tree_params *d)
{
	*d = *p;
	if (p->k) {
		d->pods = p->k;
		d->edges_per_pod = d->aggs_per_pod = d->hosts_per_edge = p->k / 2;
		d->cores = (p->k / 2) * (p->k / 2);
	}
}

static int fat_tree_check(const void *pp, struct mp_err *e)
{
	struct fat_tree_params d;
	fat_tree_dims(pp, &d);
	if (d.k && d.k % 2)
		return mp_errf(e, MP_EUSER, "k: expected an even number, got %llu",
			       (unsigned long long)d.k);
	if (!d.pods || !d.edges_per_pod || !d.aggs_per_pod || !d.hosts_per_edge || !d.cores)
		return mp_errf(
		    e, MP_EUSER,
		    "k: with k = 0, pods, edges_per_pod, aggs_per_pod, hosts_per_edge and "
		    "cores must all be given and non-zero");
	if (d.cores % d.aggs_per_pod)
		return mp_errf(e, MP_EUSER,
			       "cores: expected a multiple of aggs_per_pod (%llu), got %llu",
			       (unsigned long long)d.aggs_per_pod, (unsigned long long)d.cores);
	if (d.pods * d.edges_per_pod * d.hosts_per_edge > 1000000)
		return mp_errf(e, MP_EUSER, "pods: more than 1,000,000 hosts");
	return MP_OK;
}

static void fat_tree_size(const void *pp, struct topo_size *sz)
{
	struct fat_tree_params d;
	fat_tree_dims(pp, &d);
	uint64_t edges = d.pods * d.edges_per_pod, aggs = d.pods * d.aggs_per_pod;
	uint64_t group = d.aggs_per_pod ? d.cores / d.aggs_per_pod : 0;
	/* an edge reaches other edges over its aggs (one set, interned); an agg
	 * its own edges one link each and other pods over its core group; a core
	 * each pod over one link */
	*sz = (struct topo_size){
		.hosts = edges * d.hosts_per_edge,
		.switches = edges + aggs + d.cores,
		.links = edges * d.hosts_per_edge + edges * d.aggs_per_pod + aggs * group,
		.tors = edges,
		.nexthops = edges * d.aggs_per_pod +
			    aggs * (d.edges_per_pod + 2 * (group ? group : 1)) + d.cores * edges
	};
}

static void fat_tree_build(const void *pp, struct fabric *f, struct topo_info *info)
{
	struct fat_tree_params d;
	fat_tree_dims(pp, &d);
	char name[48];
	uint64_t group = d.cores / d.aggs_per_pod, g = gcd_u64(group, d.oversub), used = group / g;
	uint64_t core_rate = d.fabric_rate / d.oversub * g;
	struct sw **core = mp_malloc(d.cores * sizeof *core);
	struct sw **agg = mp_malloc(d.aggs_per_pod * sizeof *agg);
	uint32_t hid = 0;
	for (uint32_t c = 0; c < d.cores; c++) {
		snprintf(name, sizeof name, "core%u", c);
		core[c] = (c % group) < used ? fab_add_switch(f, name, 3) : NULL;
	}
	for (uint32_t p = 0; p < d.pods; p++) {
		for (uint32_t a = 0; a < d.aggs_per_pod; a++) {
			snprintf(name, sizeof name, "agg%u_%u", p, a);
			agg[a] = fab_add_switch(f, name, 2);
			for (uint32_t c = (uint32_t)(a * group); c < (a + 1) * group; c++)
				if (core[c])
					fab_add_link(f, &agg[a]->node, &core[c]->node, core_rate,
						     d.fabric_delay, TIER_2);
		}
		for (uint32_t e = 0; e < d.edges_per_pod; e++) {
			snprintf(name, sizeof name, "edge%u_%u", p, e);
			struct sw *edge = fab_add_switch(f, name, 1);
			for (uint32_t i = 0; i < d.hosts_per_edge; i++)
				fab_add_link(f, &host_n(f, hid++)->node, &edge->node, d.host_rate,
					     d.host_delay, TIER_HOST);
			for (uint32_t a = 0; a < d.aggs_per_pod; a++)
				fab_add_link(f, &edge->node, &agg[a]->node, d.fabric_rate,
					     d.fabric_delay, TIER_1);
		}
	}
	mp_free(core);
	mp_free(agg);
	info->hosts_per_tor = (uint32_t)d.hosts_per_edge;
	info->host_rate_bps = d.host_rate;
}

static const struct opt_desc fat_tree_opts[] = {
	{ "k", OPT_UINT, offsetof(struct fat_tree_params, k), "8", 0, 256,
	  "k-ary fat tree (k pods, k^3/4 hosts); 0 = use the explicit counts below" },
	{ "pods", OPT_UINT, offsetof(struct fat_tree_params, pods), "0", 0, 4096, "pods (k = 0)" },
	{ "edges_per_pod", OPT_UINT, offsetof(struct fat_tree_params, edges_per_pod), "0", 0, 4096,
	  "edge (ToR) switches per pod (k = 0)" },
	{ "aggs_per_pod", OPT_UINT, offsetof(struct fat_tree_params, aggs_per_pod), "0", 0, 4096,
	  "aggregation switches per pod (k = 0)" },
	{ "hosts_per_edge", OPT_UINT, offsetof(struct fat_tree_params, hosts_per_edge), "0", 0,
	  4096, "hosts per edge switch (k = 0)" },
	{ "cores", OPT_UINT, offsetof(struct fat_tree_params, cores), "0", 0, 65535,
	  "core switches (k = 0)" },
	{ "oversubscription", OPT_UINT, offsetof(struct fat_tree_params, oversub), "1", 1, 64,
	  "aggregation-core oversubscription N:1: fewer cores, then slower core links" },
	{ "host_rate", OPT_RATE, offsetof(struct fat_tree_params, host_rate), "100Gbps", 1e6,
	  1.6e13, "host-edge link rate" },
	{ "fabric_rate", OPT_RATE, offsetof(struct fat_tree_params, fabric_rate), "100Gbps", 1e6,
	  1.6e13, "edge-agg and agg-core link rate" },
	{ "host_delay", OPT_TIME, offsetof(struct fat_tree_params, host_delay), "1us", 0, 1e12,
	  "host-edge propagation delay" },
	{ "fabric_delay", OPT_TIME, offsetof(struct fat_tree_params, fabric_delay), "1us", 0, 1e12,
	  "edge-agg and agg-core propagation delay" },
	OPT_END
};

static const struct topo_ops fat_tree_topo_ops = {
	.name = "fat_tree",
	.summary = "three-tier fat tree with pods (k-ary, or explicit counts as in UDMP)",
	.opts = fat_tree_opts,
	.params_size = sizeof(struct fat_tree_params),
	.check = fat_tree_check,
	.size = fat_tree_size,
	.build = fat_tree_build,
};

/* The topologies, in `mpsim list`'s order. */
const struct topo_ops *const topo_registry[] = {
	&star_topo_ops,	    &dumbbell_topo_ops,	      &leaf_spine_topo_ops,
	&fat_tree_topo_ops, &rail_optimized_topo_ops, NULL,
};

const struct topo_ops *topo_find(const char *name)
{
	for (const struct topo_ops *const *o = topo_registry; *o; o++)
		if (strcmp((*o)->name, name) == 0)
			return *o;
	return NULL;
}

/* ---- memory, before anything is built --------------------------------------- */

uint64_t topo_estimate_bytes(const struct topo_ops *o, const void *params, struct topo_size *sz)
{
	*sz = (struct topo_size){ 0 };
	if (!o->size)
		return 0;
	o->size(params, sz);
	/* what fab_add_* and fab_finalize allocate: a port at each end of a
	 * link, the node structs, a route entry per switch and ToR, the
	 * next-hop ports (uint16_t) and the names (about 64 bytes a node) */
	double b = (double)sz->links * (2.0 * sizeof(struct port) + sizeof(struct fab_link_spec)) +
		   (double)sz->hosts * (sizeof(struct host) + 64 + 2 * sizeof(uint32_t)) +
		   (double)sz->switches * (sizeof(struct sw) + 128) +
		   (double)sz->switches * (double)sz->tors * sizeof(struct nhset) +
		   (double)sz->nexthops * sizeof(uint16_t);
	return b >= 1.8e19 ? UINT64_MAX : (uint64_t)b;
}

int topo_check_memory(const struct topo_ops *o, const void *params, uint64_t limit,
		      struct mp_err *e)
{
	struct topo_size sz;
	uint64_t need = topo_estimate_bytes(o, params, &sz);
	if (need <= limit)
		return MP_OK;
	return mp_errf(e, MP_EUSER,
		       "%llu hosts, %llu switches, %llu links and %llu next-hop entries need "
		       "about %.1f GB of memory; %.1f GB fit (the machine's memory or "
		       "MPSIM_MEM_LIMIT): expected a smaller fabric",
		       (unsigned long long)sz.hosts, (unsigned long long)sz.switches,
		       (unsigned long long)sz.links, (unsigned long long)sz.nexthops,
		       (double)need / 1e9, (double)limit / 1e9);
}

/* rail.c - the rail-optimized GPU cluster (topology "rail_optimized").
 *
 * Owns: rail_optimized_topo_ops and its parameters.
 *
 * The fabric as GPU clusters are built (NVIDIA's DGX SuperPOD reference
 * architecture; Gangidi et al., "RDMA over Ethernet for Distributed AI
 * Training at Meta Scale", SIGCOMM 2024; Qian et al., "Alibaba HPN: A Data
 * Center Network for Large Language Model Training", SIGCOMM 2024): servers
 * of `gpus` GPUs, each GPU with its own NIC (one mpsim host), and GPU k of
 * every server under the leaf of rail k. A rail has servers/servers_per_leaf
 * leaves, leaf i holding the rail's GPU of servers i*spl .. i*spl + spl - 1.
 * Every leaf of a plane has `uplinks` links spread evenly over the plane's
 * spines, so a same-rail pair under one leaf crosses that leaf alone, and
 * every other pair (another leaf of the rail, another rail) a leaf, a spine
 * and a leaf. Routes are the fabric's: ECMP over all shortest paths.
 *
 * Hosts are numbered server-major, host = server x gpus + gpu, which is
 * NCCL's rank order on such a cluster: a job's consecutive ranks (a
 * tensor-parallel group) share a server and talk over its NVLink (the
 * `server:` section, ccl/intra.c, whose `gpus` this topology sets), and
 * ranks `gpus` apart (data- and pipeline-parallel groups) sit on one rail.
 *
 * Planes: each NIC has `planes` ports, port p to plane p, a full copy of the
 * leaves and spines; planes share no switch. With `dual_tor` each NIC port
 * is two links to the two leaves of a pair (HPN's dual-ToR: leaf ...a and
 * leaf ...b of the same rail and servers), so a host has planes x 2 ports,
 * port 2p + t to side t of plane p. The transport's connection (a queue
 * pair) keeps one port at both ends: queue pair q of a collective channel
 * takes port q mod (planes x sides), so two queue pairs use both sides. When
 * a host's link fails, the fabric moves its traffic to the other link of the
 * pair once the routes learn of it (switch.failover_delay: fab_bond).
 *
 * Oversubscription R: uplinks = servers_per_leaf x host_rate / (R x
 * fabric_rate) per leaf, which must be whole.
 */
#include <stdio.h>

#include "core/mem.h"
#include "net/fabric.h"
#include "net/host.h"
#include "net/switch.h"
#include "net/topo.h"

struct rail_params {
	uint64_t servers, gpus, planes, servers_per_leaf, spines, oversub;
	bool dual_tor;
	uint64_t host_rate, fabric_rate;
	simtime_t host_delay, fabric_delay;
};

/* What the parameters make, per plane. */
struct rail_dims {
	uint64_t spl;	 /* servers per leaf */
	uint64_t lpr;	 /* leaves per rail and side */
	uint64_t sides;	 /* 2 with dual_tor */
	uint64_t leaves; /* per plane: gpus x lpr x sides */
	uint64_t up;	 /* uplinks per leaf */
	uint64_t spines; /* per plane */
};

static void rail_dims(const struct rail_params *p, struct rail_dims *d)
{
	d->spl = p->servers_per_leaf ? p->servers_per_leaf : p->servers;
	d->lpr = d->spl ? p->servers / d->spl : 0;
	d->sides = p->dual_tor ? 2 : 1;
	d->leaves = p->gpus * d->lpr * d->sides;
	/* the host-facing bandwidth over R, in fabric links; 0 when not whole */
	unsigned __int128 down = (unsigned __int128)d->spl * p->host_rate;
	unsigned __int128 per = (unsigned __int128)p->oversub * p->fabric_rate;
	d->up = per && down % per == 0 ? (uint64_t)(down / per) : 0;
	d->spines = p->spines ? p->spines : d->up;
}

static int rail_check(const void *pp, struct mp_err *e)
{
	const struct rail_params *p = pp;
	struct rail_dims d;
	rail_dims(p, &d);
	if (d.spl > p->servers || p->servers % d.spl)
		return mp_errf(e, MP_EUSER,
			       "servers_per_leaf: expected a divisor of servers (%llu), got %llu "
			       "(each leaf holds its rail's GPU of servers_per_leaf servers)",
			       (unsigned long long)p->servers, (unsigned long long)d.spl);
	if (!d.up)
		return mp_errf(e, MP_EUSER,
			       "oversubscription: expected a ratio that leaves each leaf a whole "
			       "number of uplinks, servers_per_leaf x host_rate / "
			       "(oversubscription x fabric_rate) = %llu x %.0f Gb/s / (%llu x %.0f "
			       "Gb/s), got %llu",
			       (unsigned long long)d.spl, (double)p->host_rate / 1e9,
			       (unsigned long long)p->oversub, (double)p->fabric_rate / 1e9,
			       (unsigned long long)p->oversub);
	if (d.up % d.spines)
		return mp_errf(e, MP_EUSER,
			       "spines: expected a divisor of the %llu uplinks of each leaf "
			       "(servers_per_leaf x host_rate / (oversubscription x fabric_rate)), "
			       "got %llu",
			       (unsigned long long)d.up, (unsigned long long)d.spines);
	if (d.spl + d.up > 65535)
		return mp_errf(e, MP_EUSER,
			       "servers_per_leaf: a leaf would need more than 65535 "
			       "ports");
	if (d.leaves * (d.up / d.spines) > 65535)
		return mp_errf(e, MP_EUSER,
			       "spines: a spine would need %llu ports (every leaf of its plane), "
			       "more than 65535",
			       (unsigned long long)(d.leaves * (d.up / d.spines)));
	if (p->servers * p->gpus > 1000000)
		return mp_errf(e, MP_EUSER, "servers: more than 1,000,000 GPUs");
	if (p->planes * d.sides > 8)
		return mp_errf(e, MP_EUSER,
			       "planes: expected at most %d with dual_tor (8 NIC links per host), "
			       "got %llu",
			       p->dual_tor ? 4 : 8, (unsigned long long)p->planes);
	return MP_OK;
}

static void rail_size(const void *pp, struct topo_size *sz)
{
	const struct rail_params *p = pp;
	struct rail_dims d;
	rail_dims(p, &d);
	uint64_t hosts = p->servers * p->gpus, leaves = p->planes * d.leaves;
	/* a leaf reaches every other leaf of its plane over all its uplinks (one
	 * set, interned), a spine each leaf over its links to it */
	*sz = (struct topo_size){ .hosts = hosts,
				  .switches = leaves + p->planes * d.spines,
				  .links = hosts * p->planes * d.sides + leaves * d.up,
				  .tors = leaves,
				  .nexthops = 2 * leaves * d.up };
}

static uint64_t rail_server_gpus(const void *pp)
{
	return ((const struct rail_params *)pp)->gpus;
}

/* Plane pl's leaves (gpu-major: rail g, leaf i, side t at (g x lpr + i) x
 * sides + t) and spines, then its leaf-spine links. */
static void rail_plane(const struct rail_params *p, const struct rail_dims *d, uint32_t pl,
		       struct fabric *f, struct sw **leaf)
{
	char name[64];
	for (uint32_t g = 0; g < p->gpus; g++)
		for (uint32_t i = 0; i < d->lpr; i++)
			for (uint32_t t = 0; t < d->sides; t++) {
				snprintf(name, sizeof name, "leaf%u_%u_%u%s", pl, g, i,
					 d->sides > 1 ? (t ? "b" : "a") : "");
				leaf[(g * d->lpr + i) * d->sides + t] = fab_add_switch(f, name, 1);
			}
	struct sw **spine = mp_malloc(d->spines * sizeof *spine);
	for (uint32_t j = 0; j < d->spines; j++) {
		snprintf(name, sizeof name, "spine%u_%u", pl, j);
		spine[j] = fab_add_switch(f, name, 2);
	}
	for (uint64_t l = 0; l < d->leaves; l++)
		for (uint64_t k = 0; k < d->up; k++)
			fab_add_link(f, &leaf[l]->node, &spine[k % d->spines]->node, p->fabric_rate,
				     p->fabric_delay, TIER_1);
	mp_free(spine);
}

static void rail_build(const void *pp, struct fabric *f, struct topo_info *info)
{
	const struct rail_params *p = pp;
	struct rail_dims d;
	rail_dims(p, &d);
	struct sw **leaf = mp_malloc(p->planes * d.leaves * sizeof *leaf);
	for (uint32_t pl = 0; pl < p->planes; pl++)
		rail_plane(p, &d, pl, f, leaf + pl * d.leaves);
	char name[32];
	for (uint32_t s = 0; s < p->servers; s++)
		for (uint32_t g = 0; g < p->gpus; g++) {
			snprintf(name, sizeof name, "h%u", (unsigned)(s * p->gpus + g));
			struct host *h = fab_add_host(f, name);
			/* port pl x sides + t: plane pl, side t */
			for (uint32_t pl = 0; pl < p->planes; pl++)
				for (uint32_t t = 0; t < d.sides; t++) {
					uint64_t l = (g * d.lpr + s / d.spl) * d.sides + t;
					fab_add_link(f, &h->node, &leaf[pl * d.leaves + l]->node,
						     p->host_rate, p->host_delay, TIER_HOST);
				}
			for (uint32_t k = 0; d.sides > 1 && k < p->planes; k++)
				fab_bond(f, h, (uint16_t)(2 * k), (uint16_t)(2 * k + 1));
		}
	mp_free(leaf);
	/* hosts under one leaf are not consecutive: placements and workloads
	 * that assume so are refused (hosts_per_tor 0) */
	info->hosts_per_tor = 0;
	info->host_rate_bps = p->host_rate;
	info->rails = true;
}

static const struct opt_desc rail_opts[] = {
	{ "servers", OPT_UINT, offsetof(struct rail_params, servers), "16", 1, 1e6,
	  "servers (hosts = servers x gpus, numbered server-major: h = server x gpus + gpu)" },
	{ "gpus", OPT_UINT, offsetof(struct rail_params, gpus), "8", 1, 256,
	  "GPUs per server, each with its own NIC; GPU k of every server is on rail k; also "
	  "the server section's gpus (NVLink inside the server)" },
	{ "planes", OPT_UINT, offsetof(struct rail_params, planes), "1", 1, 8,
	  "NIC ports per GPU, port p to plane p: its own rail leaves and spines" },
	{ "servers_per_leaf", OPT_UINT, offsetof(struct rail_params, servers_per_leaf), "0", 0,
	  65535,
	  "servers under each rail leaf (its host-facing ports); a rail has servers / "
	  "servers_per_leaf leaves; 0 = every server (one leaf per rail)" },
	{ "spines", OPT_UINT, offsetof(struct rail_params, spines), "0", 0, 65535,
	  "spines per plane, above every leaf of the plane; 0 = one per leaf uplink" },
	{ "oversubscription", OPT_UINT, offsetof(struct rail_params, oversub), "1", 1, 64,
	  "leaf oversubscription N:1: each leaf has servers_per_leaf x host_rate / (N x "
	  "fabric_rate) uplinks, spread evenly over the spines" },
	{ "dual_tor", OPT_BOOL, offsetof(struct rail_params, dual_tor), "false", 0, 0,
	  "each NIC port is two links to a pair of leaves (sides a and b), both used; a failed "
	  "link's traffic moves to the other switch.failover_delay later" },
	{ "host_rate", OPT_RATE, offsetof(struct rail_params, host_rate), "400Gbps", 1e6, 1.6e13,
	  "NIC-leaf link rate (ConnectX-7: 400 Gb/s)" },
	{ "fabric_rate", OPT_RATE, offsetof(struct rail_params, fabric_rate), "400Gbps", 1e6,
	  1.6e13, "leaf-spine link rate" },
	{ "host_delay", OPT_TIME, offsetof(struct rail_params, host_delay), "1us", 0, 1e12,
	  "NIC-leaf propagation delay" },
	{ "fabric_delay", OPT_TIME, offsetof(struct rail_params, fabric_delay), "1us", 0, 1e12,
	  "leaf-spine propagation delay" },
	OPT_END
};

const struct topo_ops rail_optimized_topo_ops = {
	.name = "rail_optimized",
	.summary = "GPU cluster: servers of `gpus` GPUs (NVLink inside, the server section), GPU k "
		   "of every server under a leaf of rail k, spines above all rails of a plane. "
		   "Hosts (ranks) are server-major as NCCL orders them: consecutive ranks "
		   "(tensor-parallel groups) share a server, ranks `gpus` apart (data- and "
		   "pipeline-parallel groups) share a rail; leaves are leaf<plane>_<rail>_<i>"
		   "[a|b], spines spine<plane>_<j>",
	.opts = rail_opts,
	.params_size = sizeof(struct rail_params),
	.check = rail_check,
	.size = rail_size,
	.build = rail_build,
	.server_gpus = rail_server_gpus,
};

/* topo.h - topology builders behind one ops table. A builder adds hosts,
 * switches and links to a fabric (fab_add_*); the caller finalizes it. Names:
 * hosts "h<i>", and switches by role ("sw0", "left"/"right", "leaf<i>",
 * "spine<i>", "edge<p>_<i>", "agg<p>_<i>", "core<i>"; rail_optimized's
 * "leaf<plane>_<rail>_<i>[a|b]", "spine<plane>_<j>"), so that links can be
 * named "leaf3-spine5" in experiment files. */
#ifndef MPSIM_NET_TOPO_H
#define MPSIM_NET_TOPO_H

#include "core/err.h"
#include "core/opt.h"
#include "net/fabric.h"

struct topo_info {
	uint32_t hosts_per_tor;
	uint64_t host_rate_bps;
	bool rails; /* GPU k of every server on rail k (hosts numbered server-major) */
};

/* What a topology will build, known from its parameters alone: for the
 * memory estimate made before anything is allocated (topo_check_memory). */
struct topo_size {
	uint64_t hosts, switches, links; /* links: host links and switch links */
	uint64_t tors;			 /* switches with hosts: route destinations */
	uint64_t nexthops;		 /* entries of every switch's next-hop sets */
};

struct topo_ops {
	const char *name;
	const char *summary;
	const struct opt_desc *opts;
	size_t params_size;
	/* Check the parameters against each other (before anything is built):
	 * "key: what was expected", MP_EUSER. */
	int (*check)(const void *params, struct mp_err *e);
	void (*build)(const void *params, struct fabric *f, struct topo_info *info);
	/* Counts of what build makes (optional: without it nothing is estimated). */
	void (*size)(const void *params, struct topo_size *sz);
	/* GPUs per server the topology is built around (optional): the server
	 * section's `gpus` unless that is given (io/experiment.c). */
	uint64_t (*server_gpus)(const void *params);
};

/* Every topology (NULL-terminated, in `mpsim list`'s order), and the one
 * named `name` (NULL: none). Adding one is one ops table and one line in the
 * registry (net/topo.c). */
extern const struct topo_ops *const topo_registry[];
/* The builders of their own files (net/rail.c). */
extern const struct topo_ops rail_optimized_topo_ops;
const struct topo_ops *topo_find(const char *name);
/* Bytes the fabric of `o` with `params` will take (0 without a size op). */
uint64_t topo_estimate_bytes(const struct topo_ops *o, const void *params, struct topo_size *sz);
/* Refuse, before anything is allocated, a fabric larger than `limit` bytes
 * (mp_mem_limit()): "N hosts, N switches, N links and N next-hop entries need
 * about X GB of memory; Y GB fit", MP_EUSER. */
int topo_check_memory(const struct topo_ops *o, const void *params, uint64_t limit,
		      struct mp_err *e);

#endif

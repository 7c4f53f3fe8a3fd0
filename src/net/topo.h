/* topo.h - topology builders behind one ops table. A builder adds hosts,
 * switches and links to a fabric (fab_add_*); the caller finalizes it. Names:
 * hosts "h<i>", and switches by role ("sw0", "left"/"right", "leaf<i>",
 * "spine<i>", "edge<p>_<i>", "agg<p>_<i>", "core<i>"), so that links can be
 * named "leaf3-spine5" in experiment files. */
#ifndef MPSIM_NET_TOPO_H
#define MPSIM_NET_TOPO_H

#include "core/err.h"
#include "core/opt.h"
#include "net/fabric.h"

struct topo_info {
	uint32_t hosts_per_tor;
	uint64_t host_rate_bps;
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
};

extern const struct topo_ops *const topo_registry[];
const struct topo_ops *topo_find(const char *name);

#endif

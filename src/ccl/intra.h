/* intra.h - the intra-node fabric: the GPUs of one server talk to each other
 * over NVLink / Infinity Fabric (xGMI), not through their NICs.
 *
 * A server is `gpus` consecutive hosts of the fabric (server s: hosts
 * s*gpus .. s*gpus + gpus - 1; each host is a GPU with its own NIC). Inside
 * it every GPU has one port of `rate` bit/s each way into a non-blocking
 * internal switch (an NVSwitch; an idealised xGMI mesh when traffic spreads
 * over all peers), and a transfer reaches its peer `latency` after its last
 * byte leaves. The collective layer sends a message between two GPUs of one
 * server here instead of over a queue pair: no NIC, ToR or spine carries it.
 *
 * The model is fluid, per message, not per packet: transfers in flight on a
 * server share the ports max-min fairly (progressive filling over every GPU's
 * egress and ingress port), rates are recomputed when one starts or ends, and
 * a transfer alone takes exactly time_ser_ps(bytes, rate) + latency. Work is
 * integer (bits x 1e12, decreased by rate x ps), so runs stay deterministic.
 * It costs one event per message plus one per change of a server's rates; the
 * packet path never sees it. `gpus: 1` (the default) turns it off and leaves
 * every run as it was.
 */
#ifndef MPSIM_CCL_INTRA_H
#define MPSIM_CCL_INTRA_H

#include <stdbool.h>
#include <stdint.h>

#include "core/err.h"
#include "core/evq.h"
#include "core/opt.h"
#include "core/time.h"

/* The experiment file's `server:` section. */
struct intra_cfg {
	uint64_t gpus;	   /* hosts per server; 1 = no intra-node fabric */
	uint64_t rate_bps; /* each GPU's port into the server's switch, each way, bit/s */
	simtime_t latency; /* last byte out to last byte at the peer, ps */
};
extern const struct opt_desc intra_opts[];

/* A transfer in flight inside one server. */
struct intra_xfer {
	uint32_t id;	       /* the poster's message id */
	uint16_t src, dst;     /* GPU index within the server */
	uint64_t rate;	       /* bit/s, max-min share since the server's last change */
	unsigned __int128 rem; /* bits still to send x PS_PER_S */
};

struct intra_server {
	struct intra_xfer *x;
	uint32_t n, cap;
	uint32_t gen;	   /* generation of the pending end-of-transfer event */
	simtime_t last;	   /* rates hold since then, ps */
	struct ev_src evs; /* its events' entity: one per server, so that a
			    * partitioned run keys them as one process does */
};

struct intra {
	const struct intra_cfg *cfg;
	struct evq *q;
	struct intra_server *srv;
	uint32_t nsrv;
	/* scratch for the max-min shares: per port (egress g, ingress gpus + g) */
	uint64_t *cap;
	uint32_t *cnt;
	uint8_t *frozen; /* per transfer */
	uint32_t frozen_cap;
	uint64_t bytes, msgs; /* carried so far */
	/* a message arrived (its sender learns it at the same time) */
	void (*done)(void *ctx, uint32_t id);
	void *ctx;
};

/* Entity id of server k's events: the ids below the connections', counting
 * down (k < nhosts / gpus; above the fabric's nodes and ports: run.c checks). */
#define INTRA_ENTITY_ID(tp_base, k) ((tp_base)-1u - (k))

/* The section against a fabric of `nhosts` hosts: "gpus: expected ...". */
int intra_check(const struct intra_cfg *cfg, uint32_t nhosts, struct mp_err *e);
static inline bool intra_on(const struct intra_cfg *cfg)
{
	return cfg && cfg->gpus > 1;
}
/* Server k's events are entity `entity0` - k. */
void intra_init(struct intra *f, struct evq *q, const struct intra_cfg *cfg, uint32_t nhosts,
		uint32_t entity0);
/* Hosts a and b are two GPUs of one server. */
static inline bool intra_same(const struct intra *f, uint32_t a, uint32_t b)
{
	return f->cfg->gpus > 1 && a / f->cfg->gpus == b / f->cfg->gpus;
}
/* Send message `id` of `bytes` from host src to host dst (same server) now. */
void intra_send(struct intra *f, uint32_t src, uint32_t dst, uint64_t bytes, uint32_t id);
/* A message alone on the fabric: time_ser_ps(bytes, rate) + latency. */
simtime_t intra_ideal(const struct intra_cfg *cfg, uint64_t bytes);
void intra_free(struct intra *f);

#endif

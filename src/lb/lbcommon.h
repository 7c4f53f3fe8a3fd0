/* lbcommon.h - what several load balancers share: a flowlet table, a
 * discounting rate estimator (DRE) of a port's recent utilisation, and the
 * leaf-spine path ids of the source-routed schemes.
 *
 * Flowlets (Kandula et al., "Dynamic load balancing without packet
 * reordering", CCR 2007; used by CONGA, LetFlow and Hermes): a flow's packets
 * separated by more than a gap may take a new path without reordering. The
 * table is per switch, indexed by a hash of the flow and checked against the
 * flow's key (an exact table, as the ns-3 models of CONGA and LetFlow keep one
 * entry per flow; a hardware table's collisions are not modelled).
 *
 * DRE (Alizadeh et al., "CONGA: distributed congestion-aware load balancing
 * for datacenters", SIGCOMM 2014, section 3.2): a register X grows by every
 * byte sent and is multiplied by (1 - alpha) every T_dre, so X is about
 * rate * tau with tau = T_dre / alpha; utilisation = X / (link rate * tau).
 * The decay is applied lazily when the register is touched (the same values
 * as a periodic timer, without one event per port per period). */
#ifndef MPSIM_LB_LBCOMMON_H
#define MPSIM_LB_LBCOMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "core/time.h"
#include "net/packet.h"

/* Whether port is a member of the next-hop set cand[0..n-1] (a scheme's
 * remembered port may have left it when a link failed). */
static inline bool lb_nh_has(const uint16_t *cand, unsigned n, uint16_t port)
{
	for (unsigned i = 0; i < n; i++)
		if (cand[i] == port)
			return true;
	return false;
}

/* ---- flowlets --------------------------------------------------------------- */
struct flowlet {
	uint32_t key;	/* 0: empty; else flowlet_key(p) */
	uint16_t port;	/* egress port index chosen for the current flowlet */
	uint16_t path;	/* a scheme's path id for it (CONGA's LBTag, ...) */
	simtime_t last; /* when the flow's last packet passed, ps */
	uint64_t aux;	/* scheme's own */
};

struct flowlet_table {
	struct flowlet *v;
	uint32_t mask; /* entries - 1 (a power of two) */
	uint32_t used;
	simtime_t stale; /* an entry idle this long may be forgotten (0: never) */
};

/* A flow's key at a switch: its connection and direction (data or control). */
static inline uint32_t flowlet_key(const struct packet *p)
{
	return (p->conn << 1 | (p->type != PKT_DATA)) + 1;
}

/* stale: an entry idle longer may be forgotten when the table fills (its
 * flow then starts a new flowlet anyway, if stale > the scheme's gap). */
void flowlet_init(struct flowlet_table *t, uint32_t entries, simtime_t stale);
void flowlet_free(struct flowlet_table *t);
/* The flow's entry (created empty, key set and last = 0, when new). When the
 * table is half full it first forgets stale entries, then doubles if still
 * more than a quarter full: its size follows the flows active at once, so
 * after warm-up it allocates nothing. */
struct flowlet *flowlet_get(struct flowlet_table *t, const struct packet *p, simtime_t now);
/* A new flowlet starts: the entry is new, or the flow was idle more than gap. */
static inline bool flowlet_expired(const struct flowlet *fl, simtime_t now, simtime_t gap)
{
	return fl->last == 0 || now - fl->last > gap;
}

/* ---- discounting rate estimator ------------------------------------------- */
struct dre {
	double x;	 /* bytes, decayed */
	simtime_t epoch; /* start of the current period, ps */
};

struct dre_params {
	simtime_t period; /* T_dre, ps */
	double alpha;
};

/* Bring x up to now (apply the decays of the periods since the last touch). */
void dre_sync(struct dre *d, const struct dre_params *dp, simtime_t now);
static inline void dre_add(struct dre *d, const struct dre_params *dp, simtime_t now,
			   uint32_t bytes)
{
	if (now - d->epoch >= dp->period)
		dre_sync(d, dp, now);
	d->x += bytes;
}
/* Utilisation (0 .. ~1, can pass 1 briefly) of a link of rate_bps. */
double dre_util(struct dre *d, const struct dre_params *dp, simtime_t now, uint64_t rate_bps);
/* CONGA's quantisation of utilisation to `bits` bits (3 in the paper). */
static inline unsigned dre_quantise(double util, unsigned bits)
{
	unsigned top = (1u << bits) - 1;
	double q = util * (double)(top + 1);
	return q >= top ? top : (unsigned)q;
}

#endif

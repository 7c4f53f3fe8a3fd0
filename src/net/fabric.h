/* fabric.h - the fabric: its nodes, links and routes, how a topology builds
 * it, what changes links at run time, and the packets it owns.
 *
 * A link is a pair of ports, one at each end (net/port.h). Switches
 * (net/switch.h) forward with next-hop sets computed once per topology
 * (shortest paths to each ToR), choose a member through the configured load
 * balancer (net/lb.h; ECMP by default), admit into a shared buffer with
 * dynamic thresholds, mark ECN at dequeue (RED: Kmin, Kmax, Pmax) and, in
 * lossless mode, pause upstream ports with PFC instead of dropping: each
 * ingress port has headroom reserved for what arrives after its PAUSE, so the
 * lossless class never overruns the buffer (port.c). Hosts (net/host.h) have
 * a NIC port whose scheduler pulls data from active flows in round robin.
 *
 * A link that fails or recovers during a run changes at once (packets queued
 * for it or on its wire are lost); the switches' next-hop sets follow
 * cfg.failover_delay later (fab_link_set_up).
 *
 * net/ knows nothing of transports: a host hands arriving packets to
 * fab->host_rx and pulls data through fab->nic_pull.
 */
#ifndef MPSIM_NET_FABRIC_H
#define MPSIM_NET_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/evq.h"
#include "core/pool.h"
#include "core/time.h"
#include "net/host.h"
#include "net/packet.h"
#include "net/port.h"
#include "net/switch.h"

struct lb_ops;
struct node;

/* ---- the fabric ------------------------------------------------------------ */
struct fab_link_spec { /* a link as the builder declared it */
	uint32_t a, b; /* node ids */
	uint64_t rate_bps;
	simtime_t delay;
	uint8_t tier;
	uint16_t pa, pb; /* port index at a and b (after finalize) */
};

/* PFC head-of-line blocking per connection (fab_hol_enable): how long any
 * of its data packets waited in a switch egress queue whose class PFC had
 * paused. A connection's blocked time is the union of those waits (time with
 * at least one packet waiting), not their sum. */
struct fab_hol {
	uint32_t *n;	  /* packets of the connection waiting behind a paused port */
	simtime_t *since; /* when n last rose from 0, ps */
	simtime_t *total; /* time with n > 0 up to `since`, ps */
	uint32_t nconns;
	/* fab_hol_spans: each wait that ended, kept, so that a partitioned
	 * run's ranks, each seeing its own ports, can take the union of theirs
	 * (sim/part.c); NULL when not kept */
	struct hol_span *spans;
	size_t nspans, cap;
};

/* A connection's wait behind paused ports of one rank: [from, to), ps. */
struct hol_span {
	uint32_t conn, pad;
	simtime_t from, to;
};

struct fabric {
	struct evq *q;
	struct pool *pkts;
	uint64_t seed;
	struct swcfg cfg;
	const struct lb_ops *lb;
	const void *lb_params;
	void *lb_priv;	   /* the scheme's fabric-wide state (its init/fini) */
	uint32_t pkt_meta; /* lb->pkt_meta_size: zeroed in every new packet */
	/* bytes from a packet to its INT record (struct pkt_int), 0: no INT;
	 * set before the topology is built (transport_ops.int_telemetry) */
	uint32_t int_off;

	struct node **nodes;
	uint32_t nnodes;
	struct host **hosts;
	uint32_t nhosts;
	struct sw **sws;
	uint32_t nsws;
	uint32_t ntors;
	struct sw **tors;

	struct fab_link_spec *links;
	uint32_t nlinks, links_cap;
	struct port *port_mem;
	void *port_raw; /* the allocation port_mem is aligned within */
	uint32_t nports;

	/* per (host, rail), at host * rails + rail: the ToR index of the switch
	 * that port is linked to, and the switch's port toward the host
	 * (dense, stays in cache) */
	uint32_t *host_tor;
	uint16_t *host_port;
	uint32_t rails; /* the most ports any host has */
	/* dual-ToR pairs of host ports (fab_bond): host id, its two port indices */
	struct fab_bond_pair {
		uint32_t host;
		uint16_t a, b;
	} * bonds;
	uint32_t nbonds;
	uint16_t *nh_ports;
	uint32_t nnh_ports, nh_ports_cap;

	host_rx_fn host_rx;
	nic_pull_fn nic_pull;
	host_rx_pf_fn host_rx_prefetch; /* NULL: none */
	nic_pull_pf_fn nic_pull_prefetch;
	void *cb_ctx;
	void *pf_ctx; /* the prefetchers' own (host_rx and nic_pull may be wrapped) */

	/* a partitioned run (sim/part.c): a packet leaving a port marked `cut`
	 * arrives at node peer_node on another rank at `at`; key is the event
	 * key its arrival would have had (the port's own). The callee copies the
	 * packet; the port frees it. NULL in a one-rank run. */
	void (*cut_send)(void *ctx, const struct port *pt, const struct packet *p, simtime_t at,
			 uint64_t key);
	/* ... and a cut port's link went down: what it sent and has not been
	 * handed over yet is lost on the wire */
	void (*cut_down)(void *ctx, const struct port *pt);
	/* ... and a cut port changed the PFC state it holds its upstream in
	 * (pause_sent), which the upstream's rank reads when their link comes
	 * back up (port_link_up); NULL: nobody needs it */
	void (*cut_pfc)(void *ctx, const struct port *pt);
	void *cut_ctx;

	struct fab_hol *hol; /* NULL: not tracked (fab_hol_enable) */
	uint16_t *pin;	     /* per connection (fab_pin): 0 = the lb, k = next hop k - 1 */
	uint16_t *ack_pin;   /* the same for its ACK, NACK and CNP; 0 = as pin; NULL: none */
	uint32_t npin;
	uint64_t lossless_overflow; /* lossless: bytes admitted beyond a port's headroom */
	uint64_t no_route_drops;
	uint16_t host_level_max;
	/* switch.trim: per port (fab_port_index), what it trimmed; NULL without
	 * trimming, so struct port keeps its lines (net/port.c, switch_overflow) */
	struct port_trim *trim_st;
};

/* What a port trimmed (switch.trim): data packets cut to their header, and
 * the bytes cut from them. */
struct port_trim {
	uint64_t pkts, bytes;
};

/* Building: add nodes, then links, then finalize (allocates ports, routes). */
void fab_init(struct fabric *f, struct evq *q, struct pool *pkts, uint64_t seed,
	      const struct swcfg *cfg);
void fab_free(struct fabric *f);
struct host *fab_add_host(struct fabric *f, const char *name);
struct sw *fab_add_switch(struct fabric *f, const char *name, uint32_t level);
uint32_t fab_add_link(struct fabric *f, struct node *a, struct node *b, uint64_t rate_bps,
		      simtime_t delay, enum link_tier tier);
/* Ports a and b of host h (the a-th and b-th link added for it) are a
 * dual-ToR pair: two links of one NIC port to two switches. While the routes
 * know one of them down (from the start, or failover_delay after it fails) and
 * the other up, everything host h sends on the dead one leaves on the other,
 * and every switch routes what is for the dead one to the other's switch. */
void fab_bond(struct fabric *f, struct host *h, uint16_t a, uint16_t b);
/* Allocates ports and computes next-hop sets. Links marked down before this
 * call (fab_link_set_up before finalize is not allowed; use `down` list) are
 * excluded from routes. Returns MP_EUSER when the fabric is not connected. */
int fab_finalize(struct fabric *f, const uint32_t *down_links, size_t ndown, struct mp_err *e);

/* Lossless mode. A run-time event will give this link a rate (0: unchanged), a
 * propagation delay or an extra per-packet delay at the egress of node `at`
 * (NULL: both ends): size its PFC headroom for the largest. Then
 * fab_check_buffer says whether every switch's buffer holds the headroom and
 * control reserve of all its ports ("buffer: expected at least ..."). */
void fab_plan_link(struct fabric *f, uint32_t link, uint64_t rate_bps, simtime_t prop,
		   simtime_t proc, const struct node *at);
int fab_check_buffer(struct fabric *f, struct mp_err *e);
/* Lossless mode, after a run: panics (a broken invariant) if a switch dropped a
 * packet for lack of buffer, overran a port's headroom or its buffer. */
void fab_assert_lossless(const struct fabric *f);

/* Link-level changes at run time (both directions). A link that goes down
 * loses what is queued for it and on its wire at once; after cfg.failover_delay
 * every switch recomputes its next-hop sets from the links then up or down as
 * of the change (and the same after it comes back up). */
void fab_link_set_up(struct fabric *f, uint32_t link, bool up);
void fab_link_set_rate(struct fabric *f, uint32_t link, uint64_t rate_bps);
void fab_link_set_delay(struct fabric *f, uint32_t link, simtime_t delay);
void fab_link_set_loss(struct fabric *f, uint32_t link, double loss_rate);
/* One direction only: the rate of a port's egress (its peer's stays). */
void fab_port_set_rate(struct port *pt, uint64_t rate_bps);
/* Extra per-packet delay at a port's egress (a slow switch), and at both ends of a link. */
void fab_port_set_proc_delay(struct port *pt, simtime_t d);
void fab_link_set_proc_delay(struct fabric *f, uint32_t link, simtime_t d);
/* "a-b" or "a-b#k" (k-th parallel link, from 0); UINT32_MAX when unknown */
uint32_t fab_find_link(const struct fabric *f, const char *name);
void fab_link_name(const struct fabric *f, uint32_t link, char *buf, size_t n);
struct node *fab_find_node(const struct fabric *f, const char *name);

/* Minimum (no-queueing) one-way delay from host a to host b over `rail` for a
 * packet of `bytes`, store-and-forward, and the bottleneck rate on the path. */
simtime_t fab_path_delay(const struct fabric *f, uint32_t a, uint32_t b, unsigned rail,
			 uint32_t bytes, uint64_t *bottleneck_bps);
/* Switches a packet from host a to host b over `rail` passes (one shortest
 * path, as fab_path_delay walks it). */
unsigned fab_path_switches(const struct fabric *f, uint32_t a, uint32_t b, unsigned rail);
/* A port's index in f->port_mem (0..nports-1): for per-port scheme tables. */
static inline uint32_t fab_port_index(const struct fabric *f, const struct port *pt)
{
	return (uint32_t)(pt - f->port_mem);
}

/* What port pt trimmed (zeros without switch.trim). */
static inline struct port_trim fab_port_trim(const struct fabric *f, const struct port *pt)
{
	return f->trim_st ? f->trim_st[fab_port_index(f, pt)] : (struct port_trim){ 0, 0 };
}

/* ---- the packet path ------------------------------------------------------- */
static inline struct packet *pkt_alloc(struct fabric *f)
{
	struct packet *p = pool_get(f->pkts);
	p->next = NULL;
	p->flags = 0;
	if (f->pkt_meta)
		__builtin_memset(p + 1, 0, f->pkt_meta);
	return p;
}
/* p's INT record (f->int_off != 0 only). */
static inline struct pkt_int *pkt_int(const struct fabric *f, struct packet *p)
{
	return (struct pkt_int *)((char *)p + f->int_off);
}
static inline const struct pkt_int *pkt_int_c(const struct fabric *f, const struct packet *p)
{
	return (const struct pkt_int *)((const char *)p + f->int_off);
}
static inline void pkt_free(struct fabric *f, struct packet *p)
{
	pool_put(f->pkts, p);
}

/* Track PFC head-of-line blocking of connections 0..nconns-1 (packets with a
 * larger p->conn are not tracked). Costs a walk over a port's queue each time
 * PFC pauses or resumes it. */
void fab_hol_enable(struct fabric *f, uint32_t nconns);
/* Keep every wait as a span as well (after fab_hol_enable): a partitioned
 * run's. Storing one grows an array, only when a connection stops waiting
 * behind a paused port; spans open at the end are left to the caller (n). */
void fab_hol_spans(struct fabric *f);
/* Pin connection `conn`: every switch with n > 1 next hops sends its data,
 * ACK, NACK and CNP packets to candidate (pin - 1) mod n, never asking the
 * load balancer (pin 0: the load balancer chooses, the default). Its probes
 * and the scheme's own packets are not pinned. ack_pin, when not 0, pins its
 * ACK, NACK and CNP packets alone, the same way (a simulator that hashes an
 * ACK on its own 5-tuple sends it on another path than its data). Call
 * before the run. */
void fab_pin(struct fabric *f, uint32_t conn, uint16_t pin, uint16_t ack_pin);
/* The pin of p's connection (0: none, or p is a probe). */
static inline uint16_t fab_pin_of(const struct fabric *f, const struct packet *p)
{
	if (p->conn >= f->npin || p->type == PKT_PROBE)
		return 0;
	if (f->ack_pin && p->type != PKT_DATA && f->ack_pin[p->conn])
		return f->ack_pin[p->conn];
	return f->pin[p->conn];
}
/* Which of n next-hop candidates a pin (non-zero) names: one rule for the
 * switches and for a scheme that must know the path a pinned packet takes. */
static inline unsigned fab_pin_choice(uint16_t pin, unsigned n)
{
	return (pin - 1u) % n;
}
/* Connection c's blocked time up to now, ps. */
simtime_t fab_hol_blocked(const struct fabric *f, uint32_t c);

#endif

/* fabric.h - nodes, ports, links, switches, host NICs and routes.
 *
 * A link is a pair of ports, one at each end; a port is both the egress queue
 * toward its peer and the ingress point for packets arriving from it (PFC
 * accounting). Switches forward with next-hop sets computed once per topology
 * (shortest paths to each ToR), choose a member through the configured load
 * balancer (ECMP by default), admit into a shared buffer with dynamic
 * thresholds, mark ECN at dequeue (RED: Kmin, Kmax, Pmax) and, in lossless
 * mode, pause upstream ports with PFC instead of dropping: each ingress port
 * has headroom reserved for what arrives after its PAUSE, so the lossless
 * class never overruns the buffer (port.c). Hosts have a NIC port whose
 * scheduler pulls data from active flows in round robin.
 *
 * A link that fails or recovers during a run changes at once (packets queued
 * for it or on its wire are lost); the switches' next-hop sets follow
 * cfg.failover_delay later (fab_link_set_up).
 *
 * Events: at most two per packet per hop, both created by the sending port:
 * arrival at the peer (port_wire_arrive: the peer node is its object, the
 * packet and a mark made on its way out its argument: port_wire_arg; the
 * packet names the port it comes in on) and,
 * only when another packet waits, end of transmission (port_tx_done).
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
#include "core/opt.h"
#include "core/pool.h"
#include "core/rng.h"
#include "core/time.h"
#include "net/packet.h"
#include "net/pring.h"

struct node;
struct sw;
struct host;
struct fabric;

/* ---- per-port counters ---------------------------------------------------- */
struct port_stats {
	uint64_t drops_buffer; /* lossy: no room in the shared buffer */
	uint64_t drops_link;   /* sent onto a down link, or corrupted */
	uint64_t ecn_marks;
	uint64_t pause_sent, resume_sent; /* PFC frames this port sent upstream */
	uint64_t pause_rcvd;		  /* PFC pause frames received (we were paused) */
	simtime_t paused_time;		  /* total time any data class was paused, ps */
};

/* ---- port ------------------------------------------------------------------ */
/* A port is the egress queue toward its peer and the ingress point for what
 * the peer sends. Packets on the wire are events (port_wire_arrive, created by
 * this port in transmission order, arriving in that order: a link is FIFO).
 *
 * Layout: the packet path misses the cache on ports at large fabric sizes
 * (32,768 ports at 8192 hosts), so what it touches lies in three lines,
 * PORT_HOT_LINES (0, 1 and 3), which its prefetchers load (core/evq.c,
 * wire_arrive_prefetch), grouped by use (bench/README.md, "Cost per
 * packet-hop by fabric size", and "A port in three lines"). An arrival reads
 * nothing of the port that sent it; a transmission lines 0-1; queueing a
 * packet or taking one adds its class's queue: ACKs and data in line 3, PFC
 * frames in line 2 (only lossless runs, and only while they pause).
 * A class keeps the packet it sends next in the port itself (`first`), so the
 * prefetcher of an end of transmission finds it without reading the ring,
 * when the departure reads it at all (tx_reads_pkt: a queue entry holds what
 * a lossy switch's departure needs, net/pring.h). */
struct port_queue {
	pq_ent first;	   /* the packet this class sends next; 0: empty */
	struct pring ring; /* the packets waiting behind it, oldest first */
	uint64_t bytes;	   /* bytes queued in this class, first included */
};

#define PORT_HOT_LINES 0xBu /* lines 0, 1 and 3 (a mask for evq_prefetch_mask) */

struct port {
	/* line 0: transmission, and putting a packet on the wire */
	struct node *peer_node; /* peer->owner */
	simtime_t busy_until;	/* the wire is busy serialising until then, ps */
	simtime_t wire_last;	/* arrival time of the last packet put on the wire */
	uint64_t rate_bps;	/* bit/s */
	simtime_t delay;	/* propagation + extra processing ("slow switch"), ps */
	uint64_t ser_rem;	/* time_ser_exact remainder */
	struct ev_src evs;	/* events created by this port (4 + 4 bytes) */
	uint16_t peer_idx;	/* peer->idx: a packet put on the wire carries it */
	bool up;
	bool tx_ev;	       /* a port_tx_done event is pending */
	bool lossy_link : 1;   /* loss_rate > 0 */
	bool tx_reads_pkt : 1; /* a departure reads the packet, not only its queue entry
				* (lossless switches, load balancers' tx hooks: port.c) */
	uint8_t paused;	       /* bit per class: paused by the downstream peer */
	uint8_t qmask;	       /* bit per class: that class's queue is not empty */
	/* ECN marks not yet in st.ecn_marks: every 256th adds them, so a mark
	 * writes a line the departure holds rather than the cold statistics
	 * (port_ecn_marks reads the sum) */
	uint8_t ecn_marks_lo;
	/* line 1: what a transmission counts, and the queue as a whole */
	struct node *owner;
	uint64_t qbytes_total;	   /* bytes queued, all classes */
	struct nic_flow *nic_ring; /* host ports: active flows, round robin */
	uint64_t tx_bytes;	   /* bytes transmitted (all packets) */
	uint64_t tx_pkts;
	uint64_t max_qbytes; /* max total bytes queued */
	/* minus the sum over queue changes of (bytes added) x (time), byte-ps:
	 * the integral of qbytes_total over time is this plus qbytes_total x
	 * now (port_stats_sync), so a change needs no time of the last one */
	unsigned __int128 qbytes_neg_t;
	/* line 2: the other end, and the cold fields (its second half holds
	 * the queue of PFC frames, q[CLS_PAUSE]) */
	struct port *peer;	    /* the other end of the link */
	struct packet *pfc_pending; /* a PFC frame queued here, not yet on the wire */
	uint16_t idx;		    /* index in owner->ports */
	uint8_t tier;		    /* link tier for stats (see enum link_tier) */
	bool routed;		    /* the routing's view of the link: in next-hop sets */
	/* the egress queues, strict priority: PFC frames in line 2, ACKs and
	 * data (the two classes of nearly every run) together in line 3, the
	 * second data class in line 4 (unused by most runs) */
	_Alignas(32) struct port_queue q[NCLS];
	/* line 5, lossless switches (port.c, "shared buffer and PFC"): all that
	 * admitting a packet that comes in here and releasing it read of this
	 * port. Bytes in this switch's buffer that arrived here, per class:
	 * CLS_DATA the part in the shared pool, CLS_CTRL all of it (reserve
	 * first, then shared). pause_sent is here, not in line 0, so that a
	 * departure reads one line of the port its packet came in on. */
	_Alignas(64) uint64_t ingress_bytes[NCLS];
	uint64_t hdrm_used; /* CLS_DATA bytes from here held in PFC headroom */
	uint64_t hdrm_cap;  /* headroom reserved for this ingress port, bytes */
	uint8_t pause_sent; /* bit per class: we have paused our upstream */
	unsigned __int128
	    qbytes_integral;  /* sum of qbytes_total * dt up to port_stats_sync, byte-ps */
	simtime_t prop_delay; /* propagation delay alone, ps */
	simtime_t proc_delay; /* extra per-packet delay at this egress, ps */
	/* the fastest and longest this port will be during the run (headroom) */
	uint64_t plan_rate;		/* bit/s */
	simtime_t plan_prop, plan_proc; /* ps */
	double loss_rate;		/* per-packet corruption probability on this direction */
	simtime_t paused_at[NCLS];
	struct mp_rng rng; /* ECN marking, corruption */
	struct port_stats st;
	uint64_t ts_tx_bytes; /* tx bytes at the last time-series sample */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct port_queue) == 32 && offsetof(struct port, owner) == 64 &&
		   offsetof(struct port, q[CLS_PAUSE]) == 160 &&
		   offsetof(struct port, q[CLS_CTRL]) == 192 &&
		   offsetof(struct port, q[CLS_DATA]) == 224,
	       "struct port: the packet path's fields fill lines 0, 1 and 3 (PORT_HOT_LINES)");
_Static_assert(offsetof(struct port, ecn_marks_lo) < 64, "struct port: a mark counts in line 0");
_Static_assert(offsetof(struct port, ingress_bytes) == 320 &&
		   offsetof(struct port, pause_sent) < 384,
	       "struct port: a lossless ingress port's counters share line 5");

/* ---- nodes ----------------------------------------------------------------- */
enum node_kind { NODE_HOST, NODE_SWITCH };

/* Tiers of links, for stats and random failures. */
enum link_tier {
	TIER_HOST = 0, /* host <-> first switch */
	TIER_1 = 1,    /* leaf-spine, or edge-agg */
	TIER_2 = 2,    /* agg-core */
	TIER_COUNT
};

/* 32 bytes; with a switch's hot fields after it, one cache line */
struct node {
	uint8_t kind;  /* enum node_kind */
	uint8_t level; /* 0 host, 1 ToR/leaf/edge, 2 spine/agg, 3 core */
	uint16_t nports;
	uint32_t id; /* index in fab->nodes */
	struct fabric *fab;
	struct port *ports;
	char *name;
};

/* One cache line (allocated aligned, as switches are): an arrival at a host
 * reads the node and counts its bytes. */
struct host {
	struct node node;      /* nodes are allocated one by one */
	uint32_t hid;	       /* host index 0..nhosts-1 */
	uint16_t tor_port;     /* port index on the tor facing this host */
	struct sw *tor;	       /* attached switch */
	struct nic_flow *ring; /* active flows, circular list through ->next */
	uint64_t rx_bytes;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct host) == 64, "struct host is one cache line");

struct sw {
	struct node node;
	/* hot: with the node, the first cache line */
	uint32_t tor_idx;    /* index among ToRs, or UINT32_MAX */
	uint32_t sid;	     /* switch index */
	uint64_t buf_used;   /* bytes in the shared buffer */
	struct nhset *route; /* per ToR: the next-hop set (n = 0: unreachable) */
	uint64_t hash_seed;  /* per-switch ECMP seed (no polarisation) */
	/* cold */
	uint64_t buf_peak;
	/* lossless: the buffer less every port's headroom and control reserve,
	 * and the bytes of it in use (port.c, "shared buffer and PFC") */
	uint64_t shared_size, shared_used;
	uint64_t hdrm_total; /* headroom reserved over all ports, bytes */
	void *lb_state;	     /* load balancer private state */
	struct mp_rng rng;   /* load balancer randomness */
} __attribute__((aligned(64)));

/* A connection's presence on a NIC scheduler. Embedded in the transport's
 * connection object; the NIC asks fab->nic_pull for its next packet. */
struct nic_flow {
	struct nic_flow *next, *prev;
	struct port *port; /* the host NIC port this flow sends on */
	void *owner;	   /* the transport's object (a connection) */
	uint16_t index;	   /* which of the owner's flows (e.g. a queue pair) */
	bool active;
};

/* ---- switch configuration (the `switch:` section) ------------------------ */
enum buf_mode { BUF_LOSSY, BUF_LOSSLESS };

struct swcfg {
	uint64_t buffer;      /* shared buffer per switch, bytes */
	double dt_alpha;      /* dynamic threshold: queue <= alpha * free buffer */
	uint64_t queue_limit; /* lossy: static cap per egress queue, bytes; 0 = none */
	int mode;	      /* enum buf_mode */
	bool ecn;	      /* RED/ECN marking at dequeue */
	uint64_t kmin, kmax;  /* bytes */
	double pmax;
	uint64_t pfc_xoff;	  /* static XOFF per ingress port & class, bytes; 0 = dynamic */
	uint64_t pfc_xon_gap;	  /* XON = XOFF - gap, bytes */
	double pfc_alpha;	  /* dynamic XOFF = alpha * free shared buffer */
	uint64_t ctrl_size;	  /* bytes of a PFC frame on the wire */
	uint64_t pfc_headroom;	  /* per ingress port, bytes; 0 = the worst case of its link */
	uint64_t ctrl_reserve;	  /* lossless: per ingress port for control packets, bytes */
	uint64_t mtu;		  /* largest packet on a link, bytes (0 = the transport's) */
	simtime_t failover_delay; /* a link's failure or recovery reaches the routes, ps */
};
extern const struct opt_desc swcfg_opts[];

/* ---- load balancer interface (implemented in src/lb/) ---------------------- */
/* A scheme is a table of functions plus its own state. Only `choose` is
 * required; the hooks are optional (NULL: never called, and a run without them
 * pays one predictable branch per hook site). Path-aware schemes carry their
 * per-packet metadata (CONGA's LBTag and CE, Proteus's path and tolerable
 * delay, ...) in pkt_meta_size bytes that follow struct packet in the same
 * pool object (pkt_meta), zeroed when the packet is allocated: packets stay 64
 * bytes for schemes that carry nothing. */
struct lb_ops {
	const char *name;
	const char *summary;
	const struct opt_desc *opts;
	size_t params_size;
	size_t state_size;    /* per-switch private state (s->lb_state), zeroed */
	size_t pkt_meta_size; /* bytes of metadata each packet carries (pkt_meta) */
	/* after the fabric is built and routed: allocate tables (f->lb_priv) */
	int (*init)(struct fabric *f, struct mp_err *e);
	void (*fini)(struct fabric *f);
	/* choose one of n candidate egress ports (indices into s->node.ports) */
	uint16_t (*choose)(struct fabric *f, struct sw *s, const struct packet *p,
			   const uint16_t *cand, unsigned n);
	/* choose is a function of its arguments alone (a hash, no state read
	 * or written): the run loop's prefetcher may call it ahead of time to
	 * find the egress port a packet will take */
	bool choose_pure;
	/* a packet (not a PFC frame) arrived at switch s through port in_idx,
	 * before it is routed: read or write its metadata, measure. A scheme's
	 * own packet (a probe it made with pkt_alloc and handed to node_recv at
	 * the switch it starts from, charged to the ingress port it names) ends
	 * where its sw_rx sets PKT_F_SINK: the switch frees it. */
	void (*sw_rx)(struct fabric *f, struct sw *s, uint16_t in_idx, struct packet *p);
	/* a packet leaves switch s through port `out` (it left the queue now;
	 * the packet's in_port is not the port it came in on if the scheme
	 * was set after fab_finalize, which marks the ports whose departures
	 * read their packets: tx_reads_pkt, net/port.c) */
	void (*sw_tx)(struct fabric *f, struct sw *s, struct port *out, struct packet *p);
	/* the edge: a host puts a packet on its NIC's wire, and one reaches a host
	 * (before the transport sees it); host_rx returns true when the packet
	 * was the scheme's own (an edge scheme's probe) and it took and freed
	 * it: the transport never sees it */
	void (*host_tx)(struct fabric *f, struct host *h, struct packet *p);
	bool (*host_rx)(struct fabric *f, struct host *h, struct packet *p);
};
/* Bytes of a packet object with the scheme's metadata (whole cache lines). */
size_t lb_pkt_size(const struct lb_ops *lb);
static inline void *pkt_meta(struct packet *p)
{
	return p + 1;
}
static inline const void *pkt_meta_c(const struct packet *p)
{
	return p + 1;
}
/* Every load balancer (NULL-terminated, in `mpsim list`'s order), and the
 * one named `name` (NULL: none). Adding one is one file and one line in the
 * registry (lb/lb.c). */
extern const struct lb_ops *const lb_registry[];
const struct lb_ops *lb_find(const char *name);

/* ---- the fabric ------------------------------------------------------------ */
struct nhset {
	uint32_t off; /* into fab->nh_ports */
	uint16_t n;
};

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
};

typedef void (*host_rx_fn)(void *ctx, struct host *h, struct packet *p);
typedef struct packet *(*nic_pull_fn)(void *ctx, struct nic_flow *f);
/* Optional prefetchers of the run loop's pipeline (core/evq.c): issue
 * prefetches for what host_rx will touch for packet p, and what nic_pull
 * will touch for flow f (they change nothing): the connection itself when
 * `late` is false, what it points to (read from it) a few events later. */
typedef void (*host_rx_pf_fn)(const void *ctx, const struct packet *p, bool late);
typedef void (*nic_pull_pf_fn)(const void *ctx, const struct nic_flow *f, bool late);

struct fabric {
	struct evq *q;
	struct pool *pkts;
	uint64_t seed;
	struct swcfg cfg;
	const struct lb_ops *lb;
	const void *lb_params;
	void *lb_priv;	   /* the scheme's fabric-wide state (its init/fini) */
	uint32_t pkt_meta; /* lb->pkt_meta_size: zeroed in every new packet */

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
	uint16_t *nh_ports;
	uint32_t nnh_ports, nh_ports_cap;

	host_rx_fn host_rx;
	nic_pull_fn nic_pull;
	host_rx_pf_fn host_rx_prefetch; /* NULL: none */
	nic_pull_pf_fn nic_pull_prefetch;
	void *cb_ctx;
	void *pf_ctx; /* the prefetchers' own (host_rx and nic_pull may be wrapped) */

	struct fab_hol *hol; /* NULL: not tracked (fab_hol_enable) */
	uint16_t *pin;	     /* per connection (fab_pin): 0 = the lb, k = next hop k - 1 */
	uint32_t npin;
	uint64_t lossless_overflow; /* lossless: bytes admitted beyond a port's headroom */
	uint64_t no_route_drops;
	uint16_t host_level_max;
};

/* Building: add nodes, then links, then finalize (allocates ports, routes). */
void fab_init(struct fabric *f, struct evq *q, struct pool *pkts, uint64_t seed,
	      const struct swcfg *cfg);
void fab_free(struct fabric *f);
struct host *fab_add_host(struct fabric *f, const char *name);
struct sw *fab_add_switch(struct fabric *f, const char *name, uint32_t level);
uint32_t fab_add_link(struct fabric *f, struct node *a, struct node *b, uint64_t rate_bps,
		      simtime_t delay, enum link_tier tier);
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
/* A port's index in f->port_mem (0..nports-1): for per-port scheme tables. */
static inline uint32_t fab_port_index(const struct fabric *f, const struct port *pt)
{
	return (uint32_t)(pt - f->port_mem);
}
/* Ports a host has (its rails). */
static inline unsigned host_nports(const struct host *h)
{
	return h->node.nports;
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
static inline void pkt_free(struct fabric *f, struct packet *p)
{
	pool_put(f->pkts, p);
}

/* A host sends a packet now on NIC port p->rail (control packets: queued in
 * class p->cls; data normally comes through nic_pull instead). */
void host_send(struct fabric *f, struct host *h, struct packet *p);
/* A flow has something to send: put it on its host's round robin. */
void nic_activate(struct fabric *f, struct nic_flow *fl);
void nic_deactivate(struct fabric *f, struct nic_flow *fl);

/* A packet reached node n through its port in_idx; at a switch, in_idx may
 * be PORT_SELF: a packet the switch itself sends (a load balancer's probe),
 * as a switch's CPU or packet generator does. It shares the buffer but is
 * counted against no ingress port, so it never makes a port pause its
 * neighbour (PFC); with the shared pool full it is dropped. */
#define PORT_SELF UINT16_MAX
void node_recv(struct node *n, uint16_t in_idx, struct packet *p);
/* Software pipelining of the packet path (see evq_set_prefetch). */
void port_register_prefetchers(void);
/* Event handler: a packet reached node `n` through its port p->in_port
 * (net/port.c, wire_push). Its argument (port_wire_arg) holds the packet's
 * address and, in bit 1, PKT_F_CE if a switch marked it on the way out, which
 * the arrival writes into the packet. */
void port_wire_arrive(void *n, uint64_t arg);
static inline uint64_t port_wire_arg(pq_ent e)
{
	return e & (PQ_ADDR | PQ_CE); /* PQ_CE is PKT_F_CE */
}
static inline struct packet *port_wire_packet(uint64_t arg)
{
	return (struct packet *)(uintptr_t)(arg & ~(uint64_t)15);
}
/* Does an event of this handler carry a packet in its argument (an arrival,
 * or an arrival its link's failure made a loss: port_wire_packet)? */
bool port_event_carries_packet(ev_fn fn);

/* Return every packet queued at this port to the pool (those on its wire
 * ride in arrival events: port_event_carries_packet). */
void port_drain(struct fabric *f, struct port *pt);
/* The link went down: what is queued here is lost at once (counted in
 * drops_link, released from the switch's buffer), and what is on its wire
 * when it would have arrived (counted then), even if the link is back up by
 * then; PFC state stays as it was. */
void port_link_down(struct fabric *f, struct port *pt);
/* The link came back up: a pause whose RESUME was lost with the link ends;
 * one the peer still holds stays (what follows it fits its headroom). */
void port_link_up(struct fabric *f, struct port *pt);

/* Track PFC head-of-line blocking of connections 0..nconns-1 (packets with a
 * larger p->conn are not tracked). Costs a walk over a port's queue each time
 * PFC pauses or resumes it. */
void fab_hol_enable(struct fabric *f, uint32_t nconns);
/* Pin connection `conn`: every switch with n > 1 next hops sends its data,
 * ACK, NACK and CNP packets to candidate (pin - 1) mod n, never asking the
 * load balancer (pin 0: the load balancer chooses, the default). Its probes
 * and the scheme's own packets are not pinned. Call before the run. */
void fab_pin(struct fabric *f, uint32_t conn, uint16_t pin);
/* The pin of p's connection (0: none, or p is a probe). */
static inline uint16_t fab_pin_of(const struct fabric *f, const struct packet *p)
{
	return p->conn < f->npin && p->type != PKT_PROBE ? f->pin[p->conn] : 0;
}
/* Which of n next-hop candidates a pin (non-zero) names: one rule for the
 * switches and for a scheme that must know the path a pinned packet takes. */
static inline unsigned fab_pin_choice(uint16_t pin, unsigned n)
{
	return (pin - 1u) % n;
}
/* Connection c's blocked time up to now, ps. */
simtime_t fab_hol_blocked(const struct fabric *f, uint32_t c);

/* Time any class of pt has been paused by its peer up to now, ps. */
static inline simtime_t port_paused_time(const struct port *pt, simtime_t now)
{
	simtime_t t = pt->st.paused_time;
	for (int c = 0; c < NCLS; c++)
		if (pt->paused & (1u << c))
			t += now - pt->paused_at[c];
	return t;
}

/* Bring qbytes_integral up to `now` (call before reading port stats). */
void port_stats_sync(struct port *pt, simtime_t now);
/* The CE marks this port made (not those of packets marked upstream). */
static inline uint64_t port_ecn_marks(const struct port *pt)
{
	return pt->st.ecn_marks + pt->ecn_marks_lo;
}

#endif

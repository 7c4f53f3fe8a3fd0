/* port.h - a port: one end of a link, the egress queue toward its peer and
 * the ingress point for what the peer sends (PFC accounting).
 *
 * Events: at most two per packet per hop, both created by the sending port:
 * arrival at the peer (port_wire_arrive: the peer node is its object, the
 * packet and a mark made on its way out its argument: port_wire_arg; the
 * packet names the port it comes in on) and, only when another packet waits,
 * end of transmission (port_tx_done). Implemented in net/port.c, with the
 * switch's shared buffer and PFC and the host NIC's round robin.
 */
#ifndef MPSIM_NET_PORT_H
#define MPSIM_NET_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/evq.h"
#include "core/rng.h"
#include "core/time.h"
#include "net/packet.h"
#include "net/pring.h"

struct fabric;
struct nic_flow;
struct node;

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
 * wire_arrive_prefetch), grouped by use
 * (bench/notes/2026-11-24-packet-hop-rounds-1-3.md,
 * bench/notes/2026-11-27-port-in-three-lines.md). An arrival reads
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
	bool bond_away : 1;    /* a host port whose link the routes know is down: what
				* it would send goes to its bond partner (fab_bond) */
	/* the link ends on another rank's partition (sim/part.c): what leaves
	 * here is handed to fabric.cut_send, not pushed as a local arrival.
	 * Tested with lossy_link, in one branch a packet pays anyway. */
	bool cut : 1;
	uint8_t paused; /* bit per class: paused by the downstream peer */
	uint8_t qmask;	/* bit per class: that class's queue is not empty */
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
	struct port *bond;	    /* a host port's partner (fab_bond: dual-ToR); NULL: none */
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
		   offsetof(struct port, q[CLS_DATA]) == 224 && offsetof(struct port, bond) < 160,
	       "struct port: the packet path's fields fill lines 0, 1 and 3 (PORT_HOT_LINES)");
_Static_assert(offsetof(struct port, ecn_marks_lo) < 64, "struct port: a mark counts in line 0");
_Static_assert(offsetof(struct port, ingress_bytes) == 320 &&
		   offsetof(struct port, pause_sent) < 384,
	       "struct port: a lossless ingress port's counters share line 5");

/* Tiers of links, for stats and random failures. */
enum link_tier {
	TIER_HOST = 0, /* host <-> first switch */
	TIER_1 = 1,    /* leaf-spine, or edge-agg */
	TIER_2 = 2,    /* agg-core */
	TIER_COUNT
};

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
/* Event handler: the arrival of a packet whose link failed under it, lost
 * and counted at the port that sent it (a partitioned run's receiving rank
 * pushes it for what crossed a cut: sim/part.c). */
void port_wire_lost(void *n, uint64_t arg);
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
/* A host port became bond_away: the flows on its NIC round robin move to its
 * bond partner (and send from there). */
void port_bond_move(struct fabric *f, struct port *pt);

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

/* conn.h - a connection, and what a protocol calls on one: its messages and
 * their payloads, its one timer, its NIC flows, sending and freeing packets,
 * and reporting progress (tp_rx_upto, tp_tx_upto, tp_complete) that the
 * connection turns into message completions. Implemented in
 * transport/transport.c.
 */
#ifndef MPSIM_TRANSPORT_CONN_H
#define MPSIM_TRANSPORT_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/evq.h"
#include "core/time.h"
#include "net/fabric.h"
#include "net/host.h"
#include "net/packet.h"
#include "transport/tp_world.h"
#include "transport/transport.h"

/* A message posted on a connection: PSNs psn0 .. psn0 + npkts - 1. */
struct tp_msg {
	uint64_t bytes;
	uint32_t psn0, npkts;
	uint32_t tag; /* the caller's name for it (a message record) */
	bool rx_done;
};

/* The messages of a connection not yet acknowledged, oldest first: a ring. */
struct tp_msgq {
	struct tp_msg *v;
	uint32_t head, n, cap; /* cap a power of two */
	uint32_t rx;	       /* the first rx_done ones of the ring */
	uint32_t hint;	       /* ring offset of the last payload lookup */
	/* tp_tx_upto: where the first unacknowledged message ends (UINT32_MAX:
	 * none), beside the queue so that an ACK reads no message record; it
	 * fills what would be the struct's padding in the connection's line 1 */
	uint32_t tx_end;
};

/* A connection, laid out by cache line (allocated on a line boundary) for
 * the run loop's prefetchers (transport.c, conn_prefetch): lines 0-1 are
 * what every packet of either direction reads, line 2 the receiver's
 * counters, line 3 what the sender's packets and ACKs read, line 4 the cold
 * figures (times, open-time figures, traces). A data packet's arrival then
 * asks for 3 of the 5 lines (and the protocol's receiver part,
 * transport_ops.priv_rx_size), a sender's packet or ACK for 3 (and the rest
 * of the protocol's state) (bench/notes/2026-11-27-connection-constants-shared.md). */
struct conn {
	/* line 0 */
	struct nic_flow nf; /* flow 0's presence on the sender NIC's round robin */
	struct tp_world *w;
	uint32_t id;
	uint32_t src_hid, dst_hid; /* src->hid, dst->hid: no far host read per packet */
	uint8_t rail;		   /* NIC port at both ends (rail-aligned) */
	bool stream : 1;	   /* a queue pair: open for more messages, never done */
	bool idle : 1;		   /* stream: every PSN posted is acknowledged */
	bool done : 1;
	uint16_t nflows;
	/* line 1 */
	struct host *src, *dst;
	uint64_t bytes; /* bytes posted (one message: its size) */
	uint32_t npkts; /* PSNs posted: every message's packets */
	uint32_t nmsgs; /* messages posted */
	struct tp_msgq mq;
	/* line 2: the receiver */
	_Alignas(64) uint64_t rcvd_bytes; /* distinct payload bytes the receiver got */
	uint64_t dup_bytes;		  /* payload bytes the receiver got more than once */
	uint64_t rx_psn_top;		  /* the highest data PSN seen + 1 (tp_rx_ood) */
	uint64_t rx_data_pkts;		  /* first copies of data packets (tp_rx_order) */
	uint64_t rx_reordered;		  /* ... of them that arrived below the highest PSN seen */
	uint32_t rx_order_top;		  /* tp_rx_order's highest PSN + 1, one PSN space */
	uint32_t mq_rx_end; /* tp_rx_upto: where mq's first undelivered message ends */
	/* line 3: the sender */
	_Alignas(64) struct ev_src evs; /* events created by this connection */
	simtime_t timer_at;		/* wanted timer, SIMTIME_MAX = none */
	simtime_t timer_ev_at;		/* earliest timer event in the queue */
	simtime_t timer_ev_next;	/* the one after it (tp_timer_set), SIMTIME_MAX = none */
	uint64_t sent_bytes;		/* data bytes on the wire, incl. retransmissions */
	uint64_t acked_bytes;		/* payload bytes the sender knows arrived */
	struct nic_flow *xnf;		/* flows 1..nflows-1 (tp_set_flows) */
	simtime_t base_rtt; /* full data packet out + ACK back, no queueing, ps (ideal) */
	/* line 4: cold */
	_Alignas(64) simtime_t start; /* ps */
	simtime_t finish;	      /* ps: the sender learnt every byte arrived */
	uint64_t retx_bytes;	      /* retransmitted data bytes on the wire */
	uint64_t ts_acked_bytes;      /* acked_bytes at the last time-series sample */
	/* ideal (empty-network) figures, from the path at open time (and base_rtt) */
	uint64_t bottleneck_bps;
	simtime_t ideal_fct; /* ps */
	/* traces (output.traces; written only when tracing, see tp_world_trace) */
	simtime_t trace_rtt; /* latest ACK/NACK at the sender: now - echoed send time */
	uint32_t trace_path; /* entropy of the latest data packet sent + 1 (0 = none) */
	bool started;
	_Alignas(64) unsigned char priv[];
};

/* A receiver saw data PSN `psn` (the first copy or not): its out-of-order
 * degree, as MP-RDMA and UDMP (Fig. 6b) define it, is how far it arrives
 * below the highest PSN seen so far (0 for a new highest). */
static inline void tp_rx_ood(struct conn *c, uint64_t psn)
{
	uint64_t ood = psn + 1 >= c->rx_psn_top ? 0 : c->rx_psn_top - 1 - psn;
	if (psn + 1 > c->rx_psn_top)
		c->rx_psn_top = psn + 1;
	c->w->ood_hist[ood < TP_OOD_MAX ? ood : TP_OOD_MAX]++;
}

/* A receiver got data packet p of a PSN space whose highest PSN seen + 1 is
 * *top (the connection's rx_order_top, or a queue pair's own): counts first
 * copies (not PKT_F_RETX) and the reordered ones among them, which arrive
 * below a PSN already seen (overtaken on the way). */
static inline void tp_rx_order(struct conn *c, uint32_t *top, const struct packet *p)
{
	if (p->flags & PKT_F_RETX)
		return;
	c->rx_data_pkts++;
	if (p->psn + 1 < *top)
		c->rx_reordered++;
	else
		*top = p->psn + 1;
}

static inline void *tp_priv(struct conn *c)
{
	return c->priv;
}
static inline const void *tp_params(const struct conn *c)
{
	return c->w->params;
}
/* A data packet or a probe goes to the receiver, anything else (an ACK,
 * NACK or CNP) to the sender: the split of on_packet that the run loop's
 * prefetchers follow (transport.c, priv_rx_size). */
static inline bool tp_to_receiver(const struct packet *p)
{
	return p->type == PKT_DATA || p->type == PKT_PROBE;
}

static inline const struct tp_common *tp_common(const struct conn *c)
{
	return (const struct tp_common *)c->w->params;
}
static inline simtime_t tp_now(const struct conn *c)
{
	return c->w->q->now;
}
static inline uint64_t tp_payload(const struct conn *c)
{
	return tp_common(c)->mtu - tp_common(c)->header;
}

/* Payload of PSN psn (posted, not yet acknowledged at the sender): full, or
 * what is left in the last packet of its message. A PSN already retired
 * (its message acknowledged) counts full: a receiver counts what arrives from
 * the packet's own size instead (tp_rx_payload). */
uint64_t tp_msgq_payload(const struct conn *c, uint32_t psn, bool *last);
static inline uint64_t tp_psn_payload(const struct conn *c, uint32_t psn)
{
	uint64_t pl = tp_common(c)->mtu - tp_common(c)->header;
	if (c->nmsgs == 1)
		return psn + 1 < c->npkts ? pl : c->bytes - (uint64_t)(c->npkts - 1) * pl;
	return tp_msgq_payload(c, psn, NULL);
}
/* psn is the last packet of its message (PKT_F_LAST). */
static inline bool tp_psn_last(const struct conn *c, uint32_t psn)
{
	bool last;
	if (c->nmsgs == 1)
		return psn + 1 == c->npkts;
	tp_msgq_payload(c, psn, &last);
	return last;
}
/* Payload bytes of an arriving data packet, from its size on the wire. */
static inline uint64_t tp_rx_payload(const struct conn *c, const struct packet *p)
{
	return p->size - tp_common(c)->header;
}

/* Packets of `bytes` of payload at tp_payload bytes each (at least one). */
static inline uint32_t tp_npkts(const struct conn *c, uint64_t bytes)
{
	uint64_t pl = tp_payload(c), n = (bytes + pl - 1) / pl;
	MP_ASSERT(n < UINT32_MAX);
	return (uint32_t)(n ? n : 1);
}
/* Payload of packet psn when `bytes` go out as npkts packets: full ones, the
 * last one what is left. */
static inline uint64_t tp_seg_payload(const struct conn *c, uint64_t bytes, uint32_t npkts,
				      uint32_t psn)
{
	uint64_t pl = tp_payload(c);
	return psn + 1 < npkts ? pl : bytes - (uint64_t)(npkts - 1) * pl;
}
/* The path's bandwidth-delay product at open: bottleneck rate x base RTT, bytes. */
static inline uint64_t tp_bdp_bytes(const struct conn *c)
{
	return (uint64_t)((unsigned __int128)c->bottleneck_bps * c->base_rtt / 8u / PS_PER_S);
}

/* Timer: at most one per connection; a later call replaces the earlier one;
 * SIMTIME_MAX cancels. */
void tp_timer_set(struct conn *c, simtime_t t);
/* The sender has data to send: join the NIC round robin. */
static inline struct nic_flow *tp_flow(struct conn *c, unsigned i)
{
	return i ? &c->xnf[i - 1] : &c->nf;
}
static inline void tp_activate(struct conn *c)
{
	nic_activate(c->w->fab, &c->nf);
}
/* Flow i (0 .. nflows-1) has something to send. */
static inline void tp_activate_flow(struct conn *c, unsigned i)
{
	nic_activate(c->w->fab, tp_flow(c, i));
}
/* Give the connection n NIC flows (n >= 1), each its own place in the NIC's
 * round robin, all on the connection's rail; call from open. */
void tp_set_flows(struct conn *c, unsigned n);
/* Send a packet from the host `from` now (ACKs, NACKs, CNPs). */
static inline void tp_send(struct conn *c, struct host *from, struct packet *p)
{
	host_send(c->w->fab, from, p);
}
struct packet *tp_pkt_new(struct conn *c, enum pkt_type type, bool from_sender);
static inline void tp_pkt_free(struct conn *c, struct packet *p)
{
	pkt_free(c->w->fab, p);
}
/* Every PSN posted is acknowledged: a plain connection is done; a stream
 * connection goes idle (off the NIC, timer cancelled) until the next tp_post.
 * Fires the sender completions still owed (tp_tx_upto(c, c->npkts)). */
void tp_complete(struct conn *c);
void tp_msgq_rx(struct conn *c, uint32_t rcv_nxt);
void tp_msgq_tx(struct conn *c, uint32_t snd_una);
/* The receiver holds every PSN below rcv_nxt: messages that end there are
 * delivered (on_msg rx). Cheap when nothing completes; call on every advance. */
static inline void tp_rx_upto(struct conn *c, uint32_t rcv_nxt)
{
	if (rcv_nxt >= c->mq_rx_end)
		tp_msgq_rx(c, rcv_nxt);
}
/* The sender knows every PSN below snd_una arrived: messages that end there
 * are acknowledged (on_msg tx) and leave the queue. */
static inline void tp_tx_upto(struct conn *c, uint32_t snd_una)
{
	if (snd_una >= c->mq.tx_end)
		tp_msgq_tx(c, snd_una);
}
/* Grow a zeroed array of `elem`-byte entries to hold at least `need` (doubling). */
void tp_grow(void **a, size_t elem, uint32_t *cap, uint32_t need);
/* Grow a zeroed bitmap from `had` to at least `need` bits (words doubled). */
void tp_bits_grow(uint64_t **b, uint32_t *words, uint32_t need);

#endif

/* transport.h - host-side protocols behind one ops table, and the connection
 * object they all share.
 *
 * A connection joins a sender host and a receiver host. It carries a queue of
 * messages, as a queue pair does: one PSN space, the messages' packets back to
 * back in it (each message segmented on its own, its last packet short), and
 * one congestion state that lives from one message to the next. A plain flow
 * is a connection with one message (tp_conn_add posts it); a queue pair of the
 * collective layer is a `stream` connection, posted to while it runs
 * (tp_post) and never done.
 *
 * Its protocol sees these calls: open (the first message is posted: c->npkts
 * PSNs, c->bytes bytes), post (more messages were appended while open: grow
 * the per-PSN state to c->npkts and send), next_packet (the sender's NIC can
 * transmit now: return a data packet or NULL to leave the round robin until
 * tp_activate), on_packet (a packet of this connection arrived at either end:
 * p->dst says which) and on_timer (the connection's one timer fired). Both
 * ends' state live in the protocol's private struct, but the ends talk only
 * through packets. The protocol reports progress with tp_rx_upto (the
 * receiver's cumulative PSN advanced), tp_tx_upto (the sender's cumulative
 * acknowledged PSN advanced) and tp_complete (every PSN posted is
 * acknowledged); the connection turns those into message completions.
 * Adding a protocol is one file and one line in transport_registry; nothing
 * in net/ changes.
 */
#ifndef MPSIM_TRANSPORT_TRANSPORT_H
#define MPSIM_TRANSPORT_TRANSPORT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bits.h"
#include "core/err.h"
#include "core/evq.h"
#include "core/opt.h"
#include "net/fabric.h"

/* Options every protocol has; a protocol's params struct starts with this. */
struct tp_common {
	uint64_t mtu;	   /* bytes on the wire of a full data packet */
	uint64_t header;   /* bytes of each data packet that are headers, not payload */
	uint64_t ack_size; /* bytes on the wire of an ACK/NACK/CNP */
};

/* `at` names where struct tp_common sits in `type` (common, or rv.common
 * for a params struct that starts with another one that starts with it). */
#define TP_COMMON_OPTS(type) TP_COMMON_OPTS_AT(type, common)
#define TP_COMMON_OPTS_AT(type, at)                                                    \
	{ "mtu",                                                                       \
	  OPT_SIZE,                                                                    \
	  offsetof(type, at.mtu),                                                      \
	  "4000B",                                                                     \
	  256,                                                                         \
	  65000,                                                                       \
	  "bytes on the wire of a full data packet" },                                 \
	    { "header",                                                                \
	      OPT_SIZE,                                                                \
	      offsetof(type, at.header),                                               \
	      "0B",                                                                    \
	      0,                                                                       \
	      1024,                                                                    \
	      "bytes of each data packet that are headers (payload = mtu - header)" }, \
	{                                                                              \
		"ack_size", OPT_SIZE, offsetof(type, at.ack_size), "64B", 64, 1500,    \
		    "bytes on the wire of an ACK, NACK or CNP"                         \
	}

struct conn;
struct tp_trace;

/* transport_ops.prefetch's flow for the connection's timer */
#define TP_PF_TIMER UINT_MAX

struct transport_ops {
	const char *name;
	const char *summary;
	const struct opt_desc *opts;
	size_t params_size; /* starts with struct tp_common */
	size_t priv_size;   /* per-connection state, zeroed, reached by tp_priv() */
	/* optional, instead of priv_size: the state's size for these
	 * parameters, when it grows with them (RoCEv2 keeps each queue pair's
	 * deadlines in it). Every connection of a world has the same size. */
	size_t (*priv_size_for)(const void *params);
	/* optional, for the run loop's prefetchers: the first priv_rx_size bytes
	 * of that state are all that the receiver's on_packet (a data packet or
	 * a probe arriving) reads, the rest all that the sender's (ACK, NACK,
	 * CNP) and next_packet read; 0 when the protocol does not say */
	size_t priv_rx_size;
	/* bits a connection keeps per packet of its messages from open to
	 * close (0: bounded by the window): for the memory estimate */
	unsigned pkt_state_bits;
	/* the switches run lossless (PFC) unless the file sets switch.mode: the
	 * protocol was built for a lossless fabric (RoCEv2) */
	bool lossless_default;
	/* optional: check the parameters against each other and resolve values
	 * that depend on others (e.g. a preset), before anything runs */
	int (*check)(void *params, struct mp_err *e);
	void (*open)(struct conn *c);
	/* messages were appended after open (c->npkts grew): grow what is kept
	 * per PSN and resume sending; a transport without it carries plain flows
	 * only (tp_post refuses stream connections for it) */
	void (*post)(struct conn *c);
	/* flow: which of the connection's NIC flows asks (0 unless the protocol
	 * asked for more with tp_set_flows, e.g. one per queue pair) */
	struct packet *(*next_packet)(struct conn *c, unsigned flow);
	void (*on_packet)(struct conn *c, struct packet *p);
	/* optional, for the run loop's pipeline: issue prefetches for what the
	 * protocol's state points to (per-PSN rings, queue pairs) and
	 * on_packet(c, p) will read; with p NULL, what next_packet(c, flow)
	 * will read, or on_timer(c) when flow is TP_PF_TIMER. c itself and its
	 * state are in cache. Reads c and p, changes nothing. */
	void (*prefetch)(const struct conn *c, const struct packet *p, unsigned flow);
	void (*on_timer)(struct conn *c);
	void (*close)(struct conn *c); /* optional: free what open allocated */
	/* optional: the congestion state for traces (output.traces), read at
	 * each sample, never on the packet path; a field the protocol does not
	 * keep stays NAN */
	void (*trace)(const struct conn *c, struct tp_trace *t);
};

/* What a protocol reports for a trace sample (tp_trace_fill fills the rest). */
struct tp_trace {
	double cwnd; /* congestion window, bytes (window-based protocols) */
	double rate; /* the congestion control's rate, bit/s (rate-based ones) */
	double rtt;  /* latest RTT sample at the sender, ps */
	double path; /* entropy (UDP source port) of the latest data packet sent */
};

/* Every protocol (NULL-terminated, in `mpsim list`'s order), and the one
 * named `name` (NULL: none). Adding one is one file and one line in the
 * registry (transport/transport.c). */
extern const struct transport_ops *const transport_registry[];
const struct transport_ops *transport_find(const char *name);
static inline size_t tp_priv_size(const struct transport_ops *ops, const void *params)
{
	return ops->priv_size_for ? ops->priv_size_for(params) : ops->priv_size;
}

/* What the runner shares with every connection. */
struct tp_world {
	struct evq *q;
	struct fabric *fab;
	const struct transport_ops *ops;
	const void *params;
	size_t priv_size; /* each connection's state (transport_ops.priv_size_for) */
	uint64_t seed;
	struct conn **conns;
	uint32_t nconns, ndone;
	void (*on_complete)(void *ctx, struct conn *c);
	/* a message of connection c (the tag given to tp_post) completed at
	 * the receiver (its last byte delivered: rx) or at the sender (its
	 * last byte acknowledged: !rx); receiver completions come in posting
	 * order and before the sender's */
	void (*on_msg)(void *ctx, struct conn *c, uint32_t tag, bool rx);
	void *ctx;
	/* out-of-order degree of every data packet a multipath receiver noted
	 * (tp_rx_ood): ood_hist[min(ood, TP_OOD_MAX)], allocated with the world */
	uint64_t *ood_hist;
	/* optional (tp_world_rtt_hook): every ACK or NACK that reaches its
	 * sender reports the RTT sample it carries, now - the echoed send time
	 * of the data packet that caused it, before the protocol sees it. From
	 * inside the packet path: the callee only notes it (posts nothing). */
	void (*on_rtt)(void *ctx, struct conn *c, simtime_t rtt);
	void *rtt_ctx;
	/* tp_intern's blobs: an open-addressing table, intern_cap a power of two */
	struct tp_blob **intern;
	uint32_t intern_cap, nintern;
};
#define TP_OOD_MAX 65535

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
 * of the protocol's state) (bench/README.md, "A connection's constants,
 * shared"). */
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

/* The receiver's bitmap of a per-packet-ACK multipath transport: which PSNs
 * from rcv_nxt on arrived. A ring: PSN psn >= rcv_nxt sits at bit
 * psn & (cap - 1), cap a power of two larger than the farthest PSN beyond
 * rcv_nxt accepted so far (doubled when one lands farther), so its size is
 * the span of reordering, not the connection's length. */
struct tp_rxmap {
	uint64_t *bits;
	uint32_t cap;	  /* bits, a power of two (0 before the first packet) */
	uint32_t rcv_nxt; /* every PSN below arrived */
};

/* The receiver of a per-packet-ACK multipath transport (UDMP, MP-RDMA): data
 * packet p is recorded in `m`, discarded and NACKed when it lies `bitmap` or
 * more beyond rcv_nxt, and NACKed when it lands `delta` or more beyond a hole;
 * p then becomes its ACK or NACK (p0 = its PSN, p1 = rcv_nxt, aux16 = 1 if
 * discarded, ECN echoed) and goes back. */
void tp_perpkt_rx(struct conn *c, struct packet *p, struct tp_rxmap *m, uint32_t npkts,
		  uint64_t bitmap, uint64_t delta);
void tp_rxmap_free(struct tp_rxmap *m);
/* The map's steps, for receivers with their own ACK rules (STrack, the
 * RoCEv2 reorder buffer): whether PSN psn arrived (below rcv_nxt, or recorded
 * beyond it); record PSN psn >= rcv_nxt (the ring grows to hold it); if PSN
 * rcv_nxt is recorded, forget it, advance rcv_nxt and return true; advance
 * rcv_nxt over everything recorded, up to npkts; and the 64 bits for PSNs
 * base .. base + 63 (bit i: base + i arrived; 0 at and beyond npkts). */
bool tp_rxmap_has(const struct tp_rxmap *m, uint32_t psn);
void tp_rxmap_mark(struct tp_rxmap *m, uint32_t psn);
bool tp_rxmap_take(struct tp_rxmap *m);
uint32_t tp_rxmap_advance(struct tp_rxmap *m, uint32_t npkts);
uint64_t tp_rxmap_bits64(const struct tp_rxmap *m, uint32_t base, uint32_t npkts);

/* The sender's side of a per-packet-ACK multipath transport (UDMP, MP-RDMA):
 * which PSNs are acknowledged and which are marked for retransmission, with
 * the loss rule both share. A NACK (tp_perpkt_rx) starts a round of loss
 * marking, at most one per round trip: a NACK for a packet sent before the
 * round began tells nothing new. Within the round every PSN still missing
 * Delta or more below snd_ooh is marked, once, as soon as it falls there
 * (marking only when a round began left the holes that fell behind later for
 * the next round, a round trip each, with the receiver's bitmap held back).
 * A discarded packet is marked on its own NACK.
 *
 * Per-PSN state is a ring over the last `cap` PSNs sent, [snd_nxt - cap,
 * snd_nxt), PSN psn at slot psn & (cap - 1); cap is a power of two at least
 * snd_nxt - snd_una, doubled when the PSNs outstanding fill it, so memory
 * follows the window, not the bytes a connection ever carries. Every PSN
 * below snd_una is acknowledged and none is marked; the acked and lost bits
 * mean something only from snd_una to snd_nxt. A copy still in flight of a
 * PSN sent cap or more PSNs ago (its feedback late, or lost) moves to a small
 * table (`late`) when its slot is taken, so its ACK still takes it off. */
struct tp_late {
	uint32_t psn;
	uint8_t n; /* copies in flight; 0 = an empty entry */
};

struct tp_pktbook {
	uint32_t npkts;
	uint32_t snd_nxt;	/* next new PSN (tp_book_new) */
	uint32_t snd_una;	/* every PSN below is acknowledged */
	uint32_t snd_ooh1;	/* highest PSN acknowledged + 1 (0 = none yet) */
	uint32_t nacked;	/* PSNs acknowledged */
	uint32_t nlost;		/* PSNs marked for retransmission */
	uint32_t lost_lo;	/* no marked PSN below this */
	uint32_t scan_lo;	/* PSNs below were judged in this round */
	simtime_t recover_time; /* start of the last round of loss marking */
	/* Packets in flight: copies sent whose ACK or NACK has not returned and
	 * that were not written off as lost. Counted per PSN, so that the late
	 * ACK of a copy already written off (a packet presumed lost that was
	 * only slow) takes nothing off: a single counter, decremented both when
	 * the copy was written off and when its ACK came, drifted to zero while
	 * the network was full (1.3 GB resent in UDMP Fig. 7's delay anomaly). */
	uint32_t inflight;
	uint32_t cap;		/* ring slots, a power of two */
	uint64_t *acked, *lost; /* ring bitmaps */
	uint8_t *copies;	/* ring: copies in flight per PSN, saturating at 255 */
	struct tp_late *late;	/* open addressing, linear probing */
	uint32_t late_cap, late_n;
};

void tp_book_open(struct tp_pktbook *b, uint32_t npkts);
void tp_book_close(struct tp_pktbook *b);
/* More PSNs were posted (a stream connection): the book covers npkts now. */
void tp_book_grow(struct tp_pktbook *b, uint32_t npkts);
/* The next new PSN (snd_nxt) goes out: takes its slot, returns it. */
uint32_t tp_book_new(struct tp_pktbook *b);
/* Nothing sent is unacknowledged (snd_una == snd_nxt) but copies of
 * acknowledged PSNs still count as in flight (a duplicate whose ACK is late or
 * was lost): they are written off, so that a stream connection resuming after
 * a pause does not wait for feedback that may never come. */
void tp_book_forget(struct tp_pktbook *b);
/* Marks psn for retransmission unless it is unsent, acknowledged or marked. */
void tp_book_mark_lost(struct tp_pktbook *b, uint32_t psn);
/* psn is marked for retransmission. */
bool tp_book_is_lost(const struct tp_pktbook *b, uint32_t psn);
/* The lowest PSN marked and not acknowledged since, or UINT32_MAX. */
uint32_t tp_book_next_lost(struct tp_pktbook *b);
/* psn, marked, is being sent again (call tp_book_sent as well). */
void tp_book_resent(struct tp_pktbook *b, uint32_t psn);
/* A copy of psn, new (after tp_book_new) or marked, goes out. */
void tp_book_sent(struct tp_pktbook *b, uint32_t psn);
/* ACK or NACK p (p0 = PSN, p1 = cumulative) is the feedback of one copy of
 * p0, and acknowledges its PSNs unless p reports a discarded packet; the
 * bytes go to c->acked_bytes. Returns whether any PSN was newly acknowledged. */
bool tp_book_ack(struct conn *c, struct tp_pktbook *b, const struct packet *p, bool discarded);
/* NACK p, after tp_book_ack: the loss rule above. */
void tp_book_nack(struct tp_pktbook *b, const struct packet *p, bool discarded, uint64_t delta,
		  simtime_t now);
/* A timeout: every PSN outstanding is marked, nothing is in flight any more
 * (feedback lost on the way is written off too), and a new round begins. */
void tp_book_timeout(struct tp_pktbook *b, simtime_t now);

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

/* Runner side. */
void tp_world_init(struct tp_world *w, struct evq *q, struct fabric *fab,
		   const struct transport_ops *ops, const void *params, uint64_t seed);
/* A plain connection: one message of `bytes` (tag = the connection's id),
 * opened at `start` by the runner. */
struct conn *tp_conn_add(struct tp_world *w, uint32_t src, uint32_t dst, uint64_t bytes,
			 simtime_t start);
/* A stream connection (a queue pair): no message yet; the first tp_post opens
 * it. `rail` picks the NIC port at both ends (taken modulo what they have). */
struct conn *tp_stream_add(struct tp_world *w, uint32_t src, uint32_t dst, unsigned rail);
/* Append a message of `bytes` (> 0) to connection c; opens c at the first
 * post, else calls the protocol's post. Returns MP_OK. */
void tp_post(struct conn *c, uint64_t bytes, uint32_t tag);
/* The empty-network completion time of a `bytes` message on c's path, from
 * its first byte sent to its last byte acknowledged (ps). */
simtime_t tp_ideal_fct(const struct conn *c, uint64_t bytes);
void tp_world_free(struct tp_world *w);

/* A copy of the n bytes at p, one per distinct value among the world's
 * calls, freed with the world: a protocol's per-connection constants, of
 * which thousands of connections have a few distinct values, so that they
 * stay in cache rather than cost each connection lines of its own (STrack's
 * congestion control: bench/README.md). The bytes are compared whole, so a
 * struct's padding must be zeroed. Aligned to a cache line. */
const void *tp_intern(struct tp_world *w, const void *p, size_t n);
/* Tracing on: the host and NIC callbacks become ones that also note each
 * connection's latest RTT sample and data path (c->trace_rtt, trace_path).
 * Off (the default) the packet path is untouched. */
void tp_world_trace(struct tp_world *w);
/* RTT samples on: the host callback becomes one that also hands every
 * ACK's or NACK's RTT sample at the sender to fn (w->on_rtt), whatever the
 * protocol; combines with tp_world_trace. Off (the default) the packet path
 * is untouched. */
void tp_world_rtt_hook(struct tp_world *w, void (*fn)(void *ctx, struct conn *c, simtime_t rtt),
		       void *ctx);
/* A trace sample of c: the protocol's cwnd and rate (NAN when it keeps none),
 * the latest RTT sample and path (NAN before the first). */
void tp_trace_fill(const struct conn *c, struct tp_trace *t);

/* Entity ids for event tie-breaking: connections sit above every node and port. */
#define TP_ENTITY_BASE (1u << 22)

#endif

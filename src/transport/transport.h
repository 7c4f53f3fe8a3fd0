/* transport.h - host-side protocols behind one ops table.
 *
 * A protocol drives connections (transport/conn.h): a connection joins a
 * sender host and a receiver host and carries a queue of messages, as a queue
 * pair does: one PSN space, the messages' packets back to back in it (each
 * message segmented on its own, its last packet short), and one congestion
 * state that lives from one message to the next. A plain flow is a
 * connection with one message (tp_conn_add posts it); a queue pair of the
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
 * in net/ changes. What several protocols share: transport/rxmap.h (the
 * receiver's bitmap) and transport/pktbook.h (the sender's per-PSN book).
 */
#ifndef MPSIM_TRANSPORT_TRANSPORT_H
#define MPSIM_TRANSPORT_TRANSPORT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/opt.h"

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
struct mp_err;
struct packet;
struct tp_trace;
struct tp_world;

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
	/* the switches stamp INT records into its data packets (net/packet.h,
	 * struct pkt_int; fabric.int_off says where): HPCC */
	bool int_telemetry;
	/* it handles a data packet a switch trimmed to its header (PKT_F_TRIM):
	 * switch.trim is refused for a protocol without it */
	bool trims;
	/* a plain connection's delivery is reported at its sender, on the
	 * acknowledgement of its last byte (tp_msgq_tx), its receiver reporting
	 * only a queue pair's messages (RoCEv2); otherwise the receiver reports
	 * it. A partitioned run counts the report of that side's rank alone. */
	bool tx_reports_rx;
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
	/* optional: state kept per host for every connection into or out of it
	 * (a receiving NIC's, as UET's pull pacer): host_priv_size bytes a
	 * host, zeroed, allocated with the world and reached by tp_host_priv;
	 * a host's events (tp_host_timer, tp_world.h) call on_host_timer */
	size_t host_priv_size;
	void (*on_host_timer)(struct tp_world *w, uint32_t hid);
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

#endif

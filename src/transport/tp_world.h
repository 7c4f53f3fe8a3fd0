/* tp_world.h - the runner's side of the transports: what every connection
 * of a run shares (the event queue, the fabric, the protocol and its
 * parameters, the completion callbacks), and the calls that add connections,
 * post messages and turn on traces and RTT samples. Implemented in
 * transport/transport.c.
 */
#ifndef MPSIM_TRANSPORT_TP_WORLD_H
#define MPSIM_TRANSPORT_TP_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/time.h"

struct conn;
struct ev_src;
struct evq;
struct fabric;
struct tp_blob;
struct tp_trace;
struct transport_ops;

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
	/* per host (transport_ops.host_priv_size): the creator of the host's
	 * events (entity EVQ_MAX_ENTITY - hid) and the protocol's state, nhosts
	 * x host_stride bytes; NULL when the protocol keeps none */
	struct ev_src *host_evs;
	unsigned char *host_priv;
	size_t host_stride;
	/* tp_intern's blobs: an open-addressing table, intern_cap a power of two */
	struct tp_blob **intern;
	uint32_t intern_cap, nintern;
};
#define TP_OOD_MAX 65535

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
 * congestion control: bench/notes/2026-11-27-connection-constants-shared.md).
 * The bytes are compared whole, so a
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

/* A protocol's state of host hid (transport_ops.host_priv_size). */
static inline void *tp_host_priv(const struct tp_world *w, uint32_t hid)
{
	return w->host_priv + (size_t)hid * w->host_stride;
}
/* An event of host hid at time t (>= now) that calls the protocol's
 * on_host_timer(w, hid): each one pushed fires (nothing supersedes it). */
void tp_host_timer(struct tp_world *w, uint32_t hid, simtime_t t);

/* Entity ids for event tie-breaking: connections sit above every node and
 * port, counting up; the hosts' transport events (tp_host_timer) at the top
 * of the range, counting down from EVQ_MAX_ENTITY (core/evq.h). */
#define TP_ENTITY_BASE (1u << 22)

#endif

/* lb.h - the load balancer interface: how a switch chooses among its next
 * hops, and the hooks a scheme may have on the packet path. Declared in net/
 * so that a switch calls its scheme without net/ depending on lb/; the
 * schemes and their registry are in src/lb/.
 */
#ifndef MPSIM_NET_LB_H
#define MPSIM_NET_LB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/packet.h"

struct fabric;
struct host;
struct mp_err;
struct opt_desc;
struct port;
struct sw;

/* A scheme's count of one kind of decision it took (summary.json's `lb`). */
struct lb_counter {
	const char *name, *what;
};
#define LB_MAX_COUNTERS 12

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
	/* A partitioned run (sim/part.c) builds the whole scheme on every rank
	 * and runs each switch's (host's) hooks on the rank that owns it, so a
	 * scheme partitions when every piece of its state is read and written
	 * at one switch or host, what it tells another travels in packets, its
	 * random draws come from that switch's (host's) stream and its events
	 * are that host's. NULL: true of every configuration; else NULL when
	 * true of `params`, or why not (a phrase, for the refusal). */
	const char *(*unpartitioned)(const void *params);
	/* what it decided, counted over the run (summary.json's `lb`, the printed
	 * summary, report.html): its counters, at most LB_MAX_COUNTERS, ended by
	 * one with a NULL name, and `counts`, which adds this rank's values in
	 * that order into v (a partitioned run sums its ranks'). NULL: none. */
	const struct lb_counter *counters;
	void (*counts)(const struct fabric *f, uint64_t *v);
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

#endif

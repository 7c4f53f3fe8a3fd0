/* host.h - a host and its NIC: the ports it sends on (its rails), the round
 * robin over the flows with something to send, and the two callbacks through
 * which the transport above it sees arriving packets and supplies data
 * (installed in struct fabric by transport/; net/ knows nothing of transports).
 * Implemented in net/port.c.
 */
#ifndef MPSIM_NET_HOST_H
#define MPSIM_NET_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "net/node.h"

struct fabric;
struct packet;
struct port;
struct sw;

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

/* A connection's presence on a NIC scheduler. Embedded in the transport's
 * connection object; the NIC asks fab->nic_pull for its next packet. */
struct nic_flow {
	struct nic_flow *next, *prev;
	struct port *port; /* the host NIC port this flow sends on */
	void *owner;	   /* the transport's object (a connection) */
	uint16_t index;	   /* which of the owner's flows (e.g. a queue pair) */
	bool active;
};

typedef void (*host_rx_fn)(void *ctx, struct host *h, struct packet *p);
typedef struct packet *(*nic_pull_fn)(void *ctx, struct nic_flow *f);
/* Optional prefetchers of the run loop's pipeline (core/evq.c): issue
 * prefetches for what host_rx will touch for packet p, and what nic_pull
 * will touch for flow f (they change nothing): the connection itself when
 * `late` is false, what it points to (read from it) a few events later. */
typedef void (*host_rx_pf_fn)(const void *ctx, const struct packet *p, bool late);
typedef void (*nic_pull_pf_fn)(const void *ctx, const struct nic_flow *f, bool late);

/* Ports a host has (its rails). */
static inline unsigned host_nports(const struct host *h)
{
	return h->node.nports;
}

/* A host sends a packet now on NIC port p->rail (control packets: queued in
 * class p->cls; data normally comes through nic_pull instead). */
void host_send(struct fabric *f, struct host *h, struct packet *p);
/* A flow has something to send: put it on its host's round robin. */
void nic_activate(struct fabric *f, struct nic_flow *fl);
void nic_deactivate(struct fabric *f, struct nic_flow *fl);

#endif

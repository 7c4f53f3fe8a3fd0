/* node.h - what hosts and switches share: a node with its ports, and the
 * door through which a packet reaches one (node_recv, net/port.c).
 */
#ifndef MPSIM_NET_NODE_H
#define MPSIM_NET_NODE_H

#include <stdint.h>

struct fabric;
struct packet;
struct port;

enum node_kind { NODE_HOST, NODE_SWITCH };

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

/* A packet reached node n through its port in_idx; at a switch, in_idx may
 * be PORT_SELF: a packet the switch itself sends (a load balancer's probe),
 * as a switch's CPU or packet generator does. It shares the buffer but is
 * counted against no ingress port, so it never makes a port pause its
 * neighbour (PFC); with the shared pool full it is dropped. */
#define PORT_SELF UINT16_MAX
void node_recv(struct node *n, uint16_t in_idx, struct packet *p);

#endif

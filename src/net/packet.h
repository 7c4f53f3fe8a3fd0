/* packet.h - the packet: a small fixed struct, never any payload bytes.
 *
 * Budget: 64 bytes (one cache line), enforced below. Units are in the names or
 * comments. Protocol fields p0..p2/u64/aux16 mean what the owning transport
 * says they mean (e.g. an ACK's cumulative PSN); the fabric never reads them.
 */
#ifndef MPSIM_NET_PACKET_H
#define MPSIM_NET_PACKET_H

#include <stdint.h>

#include "core/time.h"

enum pkt_type {
	PKT_DATA = 0,
	PKT_ACK,
	PKT_NACK,
	PKT_CNP,
	PKT_PAUSE, /* PFC pause/resume frame: link-local, never forwarded */
	PKT_PROBE,
	PKT_TYPE_COUNT
};

enum pkt_flag {
	PKT_F_ECT = 1u << 0,  /* ECN-capable transport */
	PKT_F_CE = 1u << 1,   /* congestion experienced (set by a switch) */
	PKT_F_ECE = 1u << 2,  /* ECN echo, on ACKs */
	PKT_F_RETX = 1u << 3, /* a retransmission */
	PKT_F_LAST = 1u << 4, /* last packet of a message */
	PKT_F_ACKREQ = 1u << 5,
	PKT_F_XON = 1u << 6, /* PKT_PAUSE: resume (else pause) */
	/* PKT_DATA: a switch cut it to its header rather than drop it (switch.trim;
	 * the bit is XON's, which only PKT_PAUSE frames carry) */
	PKT_F_TRIM = 1u << 6,
	/* a load balancer's own packet (a probe) reached its end at a switch:
	 * set by the scheme's sw_rx, the switch frees it instead of routing it */
	PKT_F_SINK = 1u << 7,
};

/* Traffic classes, strict priority, lowest number first. Class 0 carries PFC
 * frames (MAC control, never paused); class 1 control (ACK, NACK, CNP); class 2
 * and 3 data. PFC pauses data classes only. */
enum { CLS_PAUSE = 0, CLS_CTRL = 1, CLS_DATA = 2, CLS_DATA2 = 3, NCLS = 4 };

struct packet {
	struct packet *next; /* queue link while queued */
	simtime_t ts;	     /* sender's timestamp, ps (echoed by ACKs) */
	uint32_t conn;	     /* connection index */
	uint32_t src, dst;   /* host indices */
	uint32_t psn;	     /* packet sequence number */
	uint16_t size;	     /* bytes on the wire, headers included */
	uint16_t entropy;    /* UDP source port: the multipath entropy */
	uint8_t type;	     /* enum pkt_type */
	uint8_t flags;	     /* enum pkt_flag */
	uint8_t cls;	     /* traffic class (CLS_*) */
	uint8_t rail;	     /* NIC port used at both ends (multi-port hosts) */
	uint16_t in_port;    /* ingress port index at the node it reaches (set on the wire) */
	uint16_t aux16;	     /* protocol field */
	uint32_t p0, p1, p2; /* protocol fields */
	uint64_t u64;	     /* protocol field (e.g. a 64-bit SACK bitmap) */
};
_Static_assert(sizeof(struct packet) == 64, "struct packet budget is 64 bytes");

/* In-band network telemetry (INT), as HPCC reads it: each switch egress a
 * data packet leaves pushes one hop record (Li et al., "HPCC: High Precision
 * Congestion Control", SIGCOMM 2019, section 3.2 and Fig. 4; the authors'
 * simulation/src/point-to-point/model/int-header.h: maxHop = 5, and
 * switch-node.cc, SwitchNotifyDequeue). Only runs whose transport asks for
 * it (transport_ops.int_telemetry) carry it: the record follows struct
 * packet (and a load balancer's pkt_meta) in the same pool object, at
 * fabric.int_off, so every other run keeps 64-byte packets and an untouched
 * departure. Values are exact, not ns-3's quantised fields. */
#define PKT_INT_MAX_HOPS 5
struct pkt_int_hop {
	simtime_t ts;	   /* when the packet left the egress, ps */
	uint64_t tx_bytes; /* bytes the egress had sent before this packet */
	uint64_t qlen;	   /* bytes left queued at the egress (all classes) */
	uint64_t rate_bps; /* the egress's line rate, bit/s */
};
struct pkt_int {
	uint32_t nhop; /* hop records pushed (the sender zeroes it) */
	struct pkt_int_hop hop[PKT_INT_MAX_HOPS];
};

#endif

/* rxmap.h - the receiver's bitmap of a multipath transport (which PSNs
 * beyond the cumulative point arrived), and the per-packet-ACK receiver of
 * UDMP and MP-RDMA built on it. STrack's receiver and the RoCEv2 reorder
 * buffer use the map's steps. Implemented in transport/transport.c.
 */
#ifndef MPSIM_TRANSPORT_RXMAP_H
#define MPSIM_TRANSPORT_RXMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "net/packet.h"

struct conn;

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
/* The fields of that ACK or NACK, as its sender reads them: the PSN of the
 * data packet it answers, the receiver's cumulative point (rcv_nxt: every PSN
 * below arrived) and, on a NACK, whether the data packet was discarded. */
static inline uint32_t tp_ack_psn(const struct packet *p)
{
	return p->p0;
}
static inline uint32_t tp_ack_cum(const struct packet *p)
{
	return p->p1;
}
static inline bool tp_nack_discarded(const struct packet *p)
{
	return p->aux16 & 1;
}
static inline void tp_ack_set(struct packet *p, uint32_t psn, uint32_t cum, bool discarded)
{
	p->p0 = psn;
	p->p1 = cum;
	p->aux16 = discarded;
}
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

#endif

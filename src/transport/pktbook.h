/* pktbook.h - the sender's per-PSN book of a per-packet-ACK multipath
 * transport (UDMP, MP-RDMA): which PSNs are acknowledged, which are marked
 * for retransmission and how many copies are in flight, with the loss rule
 * both share. Implemented in transport/transport.c.
 */
#ifndef MPSIM_TRANSPORT_PKTBOOK_H
#define MPSIM_TRANSPORT_PKTBOOK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/time.h"

struct conn;
struct packet;

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

#endif

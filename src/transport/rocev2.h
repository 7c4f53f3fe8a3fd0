/* rocev2.h - the RoCEv2 reliable connection (RC) that every rate-based
 * congestion control of RDMA NICs runs over: queue pairs, go-back-N, ACK
 * coalescing, the notification point's CNPs and pacing at a per-QP rate.
 * roce.c (DCQCN) and timely.c (TIMELY) are this layer plus a rocev2_cc table:
 * the transport's ops table points at the rocev2_* functions below and its
 * open calls rocev2_open with its congestion control.
 *
 * RC semantics as RoCEv2 uses them (InfiniBand Architecture Specification,
 * vol. 1, ch. 9): the responder expects PSNs in order; an out-of-order packet
 * is dropped and answered by a NAK (sequence error, once per gap) carrying the
 * expected PSN, and the requester goes back to it (go-back-N); a retransmission
 * timeout covers lost NAKs and tail losses.
 *
 * A plain connection (one message) runs over Q queue pairs (`qps`), each with
 * its own UDP source port, PSN space and congestion state, as NCCL/RCCL do:
 * `stripe` cuts the message into Q equal sub-chunks, `rr` puts it whole on QP
 * (connection id mod Q). A stream connection (tp_stream_add) IS one queue pair:
 * the collective layer opens N of them for N QPs, so it runs one QP whatever
 * `qps` says, its PSN space and congestion state carried from one message to
 * the next, and it goes idle (tp_complete) when every posted PSN is
 * acknowledged.
 *
 * The sender keeps no per-PSN state (go-back-N needs snd_una, snd_nxt and
 * snd_max only) and the receiver only the expected PSN, so a queue pair costs
 * the same memory after 1 GB as after 1 KB.
 *
 * Reorder buffer (`reorder_buffer`, off by default): the receiver keeps a
 * packet that arrives less than that many PSNs beyond the expected one (a
 * bitmap ring, tp_rxmap) and acknowledges cumulatively once the gap fills,
 * as NICs with out-of-order placement do; only a packet beyond the buffer is
 * dropped and NAKed. A real loss is then repaired when the sender runs past
 * the buffer (its NAK) or by the timeout.
 *
 * Packet fields: DATA psn, aux16 = QP, ts = when the NIC took it; ACK p0 =
 * expected PSN (every PSN below it arrived), ECE = congestion echo, aux16 = QP,
 * ts = the ts of the data packet that triggered it (the NIC's hardware
 * timestamp, as TIMELY uses it); NACK p0 = expected PSN, aux16 = QP, ts as an
 * ACK's; CNP aux16 = QP (rocev2_pkt_qp, rocev2_ack_epsn).
 */
#ifndef MPSIM_TRANSPORT_ROCEV2_H
#define MPSIM_TRANSPORT_ROCEV2_H

#include "net/packet.h"
#include "transport/conn.h"
#include "transport/rxmap.h"
#include "transport/transport.h"

/* The queue pair a packet of either direction belongs to (its destination
 * QP number, which the BTH carries), and the PSN an ACK or NACK expects next
 * (every PSN below it arrived). */
static inline unsigned rocev2_pkt_qp(const struct packet *pk)
{
	return pk->aux16;
}
static inline void rocev2_pkt_set_qp(struct packet *pk, unsigned qp)
{
	pk->aux16 = (uint16_t)qp;
}
static inline uint32_t rocev2_ack_epsn(const struct packet *pk)
{
	return pk->p0;
}
static inline void rocev2_ack_set_epsn(struct packet *pk, uint32_t epsn)
{
	pk->p0 = epsn;
}

enum rocev2_qp_mode { ROCEV2_STRIPE, ROCEV2_RR };
#define ROCEV2_NO_WND UINT32_MAX
/* How the notification point reports CE marks; NONE is also roce's
 * unresolved `preset` (its check resolves it before anything runs). */
enum rocev2_cnp { ROCEV2_CNP_NONE, ROCEV2_CNP_PACED, ROCEV2_CNP_ON_ACK };

/* Every RoCEv2 transport's params start with this. */
struct rocev2_params {
	struct tp_common common;
	uint64_t qps;		/* queue pairs per plain connection */
	int qp_mode;		/* enum rocev2_qp_mode */
	uint64_t ack_interval;	/* ACK every this many packets (and at each message end) */
	simtime_t rto;		/* retransmission timeout, ps */
	int cnp_mode;		/* enum rocev2_cnp */
	simtime_t cnp_interval; /* paced: at most one CNP per QP per interval, ps */
	bool ect;		/* data packets are ECN-capable */
	uint64_t reorder;	/* receiver's reorder buffer, packets per QP (0: go-back-N) */
};

/* The options the RoCEv2 transports share (after TP_COMMON_OPTS). */
#define ROCEV2_QP_OPTS(type)                                                                   \
	{ "qps",                                                                               \
	  OPT_UINT,                                                                            \
	  offsetof(type, rv.qps),                                                              \
	  "1",                                                                                 \
	  1,                                                                                   \
	  1024,                                                                                \
	  "queue pairs a plain connection's message is split over (QP scaling, see qp_mode), " \
	  "each with its own UDP source port, PSN space and rate; a stream connection is one " \
	  "QP whatever this says" },                                                           \
	{                                                                                      \
		"qp_mode", OPT_ENUM, offsetof(type, rv.qp_mode), "stripe", 0, 0,               \
		    "stripe: a plain message in equal sub-chunks over the QPs; rr: each "      \
		    "connection's message whole on QP (connection id mod qps)",                \
		    rocev2_qp_modes                                                            \
	}
/* 67.1 ms = the InfiniBand local ACK timeout 4.096 us x 2^14, a common setting
 * for lossless RoCE. A 1 ms timeout fired in lossless 32 -> 1 incasts of
 * 64-100 MB, where PFC holds a packet for several ms, and went back N
 * spuriously (1.3 GB resent, no drop). */
#define ROCEV2_RTO_OPT(type)                                                                 \
	{                                                                                    \
		"rto", OPT_TIME, offsetof(type, rv.rto), "67.1ms", 1e6, 1e13,                \
		    "retransmission timeout (the InfiniBand local ACK timeout): go back to " \
		    "the oldest unacknowledged PSN"                                          \
	}
/* The Proteus paper (footnote 2) masks the baselines' reordering with a
 * reorder buffer, as NICs with out-of-order placement have; commodity NICs go
 * back N, our default. */
#define ROCEV2_REORDER_OPT(type)                                                                \
	{                                                                                       \
		"reorder_buffer", OPT_UINT, offsetof(type, rv.reorder), "0", 0, 1 << 24,        \
		    "receiver's reorder buffer per QP, packets: one arriving fewer than this "  \
		    "beyond the expected PSN is kept until the gap fills (no NAK); 0: dropped " \
		    "and NAKed (go-back-N)"                                                     \
	}
extern const char *const rocev2_qp_modes[];

/* One queue pair: the sender's and the receiver's side, a line each, so that
 * a data packet's arrival reads one line of it and a NIC's pull, an ACK or a
 * CNP the sender's (line 0 and the congestion control's, from line 2 on). */
struct rocev2_qp {
	/* line 0: the sender (requester) */
	uint32_t npkts; /* PSNs in this QP (a stream: every PSN posted) */
	/* the congestion control's window: at most this many PSNs in flight
	 * (snd_nxt - snd_una); ROCEV2_NO_WND (init's default) for rate-only
	 * ones. A CC that sets it keeps it >= 1. */
	uint32_t wnd;
	uint64_t bytes;	     /* payload bytes in them */
	uint32_t snd_nxt;    /* next PSN to send */
	uint32_t snd_una;    /* every PSN below is acknowledged */
	uint32_t snd_max;    /* one past the highest PSN ever sent */
	uint16_t entropy;    /* UDP source port */
	double rate;	     /* pacing rate, bit/s: the congestion control's output */
	simtime_t cc_at;     /* the congestion control's next timer (SIMTIME_MAX: none) */
	simtime_t next_tx;   /* pacing: earliest time of the next packet */
	simtime_t last_prog; /* last acknowledgement progress, for the RTO */
	/* line 1: the receiver (responder, notification point) */
	_Alignas(64) uint32_t epsn; /* expected PSN */
	uint32_t rx_top;	    /* highest PSN arrived + 1 (tp_rx_order) */
	uint32_t unacked;	    /* in-order packets not yet acknowledged */
	bool nak_sent;		    /* a NAK for the current gap is out */
	struct tp_rxmap rob;	    /* reorder buffer: PSNs kept beyond epsn (rob.rcv_nxt = epsn) */
	bool ce_pending;	    /* CE seen, to be echoed on the next ACK (on_ack) */
	bool cnp_sent;		    /* a paced CNP has been sent */
	simtime_t last_cnp;	    /* when (paced) */
} __attribute__((aligned(64)));	    /* a congestion control's own fields start at line 2 */
_Static_assert(sizeof(struct rocev2_qp) == 128, "a queue pair: a sender's line, a receiver's");

/* A congestion control over the RC layer. The layer calls it for each QP;
 * everything it keeps lives in its per-QP struct, which starts with struct
 * rocev2_qp (qp_size bytes, zeroed at open). Its outputs are q->rate and
 * q->cc_at, the earliest time its timers want to run, which it keeps up to
 * date whenever its state changes (a field rather than a call, because the
 * connection's timer is re-armed over every QP on every ACK). */
struct rocev2_cc {
	size_t qp_size;
	/* feedback reads the CC's own fields (those past struct rocev2_qp) only
	 * for a CNP or an ECE-marked ACK or NAK: what an ACK's prefetch asks for */
	bool feedback_marked_only;
	/* a QP opens at the line rate (q->rate, q->cc_at = SIMTIME_MAX): set
	 * the CC's own state */
	void (*init)(struct conn *c, struct rocev2_qp *q);
	/* an ACK, NAK or CNP of q reached the sender, after the PSNs it
	 * acknowledges were retired and before a NAK sends the QP back */
	void (*feedback)(struct conn *c, struct rocev2_qp *q, const struct packet *p);
	/* optional: the responder answers data packet `data` of q with `ack`
	 * (an ACK or NAK, built, not yet sent): what the CC's ACK echoes
	 * beyond the RC layer's fields (HPCC: the INT record) */
	void (*echo)(struct conn *c, const struct packet *data, struct packet *ack);
	/* optional: q's retransmission timeout fired (it goes back to snd_una) */
	void (*timeout)(struct conn *c, struct rocev2_qp *q);
	/* optional: data packet p of q went out (q->next_tx already set) */
	void (*sent)(struct conn *c, struct rocev2_qp *q, struct packet *p);
	/* optional: run the CC's timers that are due at `now`; called when
	 * q->cc_at <= now, and when a stream QP resumes after being idle,
	 * before it sends */
	void (*timers)(struct conn *c, struct rocev2_qp *q, simtime_t now);
};

/* A queue pair's deadlines as the connection's one timer sees them (kept by
 * the layer whenever the QP's state changes), so that re-arming the timer on
 * every ACK, and the timer itself, read the connection's state rather than
 * every QP's line: `at` the earlier of the congestion control's timer (cc_at)
 * and the retransmission timeout (while PSNs are outstanding), `tx` the pacing
 * deadline (next_tx, while PSNs are left to send); both SIMTIME_MAX once
 * every PSN is acknowledged. */
struct rocev2_due {
	simtime_t at, tx;
};

struct rocev2_state {
	const struct rocev2_cc *cc;
	uint32_t nqp;
	uint32_t done_qps;	 /* QPs with every PSN acknowledged */
	uint64_t line_bps;	 /* the NIC port's rate */
	unsigned char *qp;	 /* nqp entries of cc->qp_size bytes */
	struct rocev2_due due[]; /* nqp entries (rocev2_priv_size) */
};

static inline struct rocev2_qp *rocev2_qp(struct conn *c, unsigned i)
{
	struct rocev2_state *s = tp_priv(c);
	return (struct rocev2_qp *)(s->qp + (size_t)i * s->cc->qp_size);
}
static inline uint64_t rocev2_line_bps(struct conn *c)
{
	return ((struct rocev2_state *)tp_priv(c))->line_bps;
}

/* The transport ops a RoCEv2 transport points at (its open calls rocev2_open;
 * its receiver reports the deliveries of queue pairs' messages alone:
 * tx_reports_rx;
 * priv_size_for is rocev2_priv_size, which grows with qps, priv_rx_size
 * sizeof(struct rocev2_state): the receiver reads no deadline).
 * ROCEV2_RC_OPS fills them in a congestion control's ops table, which adds
 * its name, options, check, open and trace. */
#define ROCEV2_RC_OPS                                                                          \
	.priv_size_for = rocev2_priv_size, .priv_rx_size = sizeof(struct rocev2_state),        \
	.post = rocev2_post, .next_packet = rocev2_next_packet, .on_packet = rocev2_on_packet, \
	.prefetch = rocev2_prefetch, .on_timer = rocev2_on_timer, .close = rocev2_close,       \
	.tx_reports_rx = true
size_t rocev2_priv_size(const void *params);
void rocev2_open(struct conn *c, const struct rocev2_cc *cc);
void rocev2_post(struct conn *c);
struct packet *rocev2_next_packet(struct conn *c, unsigned flow);
void rocev2_on_packet(struct conn *c, struct packet *p);
void rocev2_on_timer(struct conn *c);
void rocev2_prefetch(const struct conn *c, const struct packet *pk, unsigned flow);
void rocev2_close(struct conn *c);
/* traces: the rate is the sum of the QPs' rates (a single QP's: its DCQCN or
 * TIMELY rate) */
void rocev2_trace(const struct conn *c, struct tp_trace *t);

#endif

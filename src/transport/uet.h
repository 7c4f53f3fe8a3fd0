/* uet.h - the parts of the Ultra Ethernet transport (transport/uet.c) that
 * stand alone: NSCC, the sender's window congestion control, and REPS, the
 * recycled-entropy path choice. Each is a struct of state and constants with
 * functions that read no connection, so tests drive them by hand.
 *
 * Names follow the Ultra Ethernet Specification 1.0 (Ultra Ethernet
 * Consortium, 2025) where the UEC's htsim (github.com/ultraethernet/uet-htsim,
 * htsim/sim/uec.cpp, buffer_reps.cpp) uses them; constants are that code's.
 */
#ifndef MPSIM_TRANSPORT_UET_H
#define MPSIM_TRANSPORT_UET_H

#include <stdbool.h>
#include <stdint.h>

#include "core/rng.h"
#include "core/time.h"

/* ---- NSCC ------------------------------------------------------------------- */
/* Constants, derived from the network's RTT and the NIC's rate as uec.cpp's
 * initNsccParams derives them (uet_nscc_consts). Bytes and ps. */
struct uet_nscc_k {
	simtime_t target_qdelay; /* queueing delay aimed at */
	simtime_t qa_threshold;	 /* quick adapt on a delay above this: 4 x target */
	unsigned qa_gate;	 /* quick adapt only below maxwnd >> qa_gate achieved */
	double alpha;		 /* proportional increase, bytes per (byte x ps) */
	double fi;		 /* fair increase per byte acknowledged */
	double eta;		 /* additive increase per adjust period, bytes */
	double fi_scale;	 /* fast increase per byte acknowledged */
	double gamma;		 /* multiplicative decrease gain */
	double delay_alpha;	 /* EWMA gain of avg_delay */
	simtime_t fast_delay;	 /* fast increase below this delay */
	simtime_t adjust_period; /* fulfil at least once per this (network RTT) */
	int64_t adjust_bytes;	 /* ... or once per this many bytes received */
	int64_t min_cwnd;	 /* one mtu */
	bool quick_adapt;
};

/* One sender's NSCC state. */
struct uet_nscc {
	int64_t cwnd, maxwnd; /* bytes */
	simtime_t base_rtt;   /* the least RTT seen (starts at the network's) */
	simtime_t avg_delay;  /* EWMA of queueing delay, ps */
	int64_t achieved_bytes, received_bytes, bytes_to_ignore, bytes_ignored;
	int64_t inc_bytes; /* increase owed, bytes^2: applied / cwnd at fulfil */
	int64_t fi_count;
	bool increase, trigger_qa;
	simtime_t qa_endtime, last_dec_time, last_adjust_time;
};

/* The constants for a network RTT `rtt` (ps), NIC rate `bps`, payload `mss`
 * and full packet `mtu` bytes, with or without trimming in the network;
 * target 0 = derived (0.75 x rtt with trimming, rtt without). */
void uet_nscc_consts(struct uet_nscc_k *k, simtime_t rtt, uint64_t bps, uint64_t mss, uint64_t mtu,
		     bool trimming, simtime_t target, unsigned qa_gate, double gamma,
		     double delay_alpha, simtime_t fast_delay, bool quick_adapt);
/* A sender's start: base RTT `rtt`, maxwnd = maxwnd_bdp x its BDP, cwnd = maxwnd. */
void uet_nscc_init(struct uet_nscc *n, simtime_t rtt, uint64_t bps, double maxwnd_bdp);
/* An ACK: `raw_rtt` its RTT sample (0: none valid), `ecn` its ECN echo,
 * `newly` the bytes the receiver got since the last ACK; in_flight the
 * sender's bytes in flight (quick adapt ignores that many afterwards). */
void uet_nscc_on_ack(const struct uet_nscc_k *k, struct uet_nscc *n, simtime_t now,
		     simtime_t raw_rtt, bool ecn, int64_t newly, int64_t in_flight);
/* A NACK of a trimmed packet of `bytes` sent `raw_rtt` ago; network_rtt
 * stands for the delay that trimming implies. */
void uet_nscc_on_nack(const struct uet_nscc_k *k, struct uet_nscc *n, simtime_t now,
		      simtime_t raw_rtt, int64_t bytes, simtime_t network_rtt, int64_t in_flight,
		      bool rccc);

/* ---- REPS --------------------------------------------------------------------- */
#define UET_REPS_MAX 64

enum uet_path_fb { UET_PATH_GOOD, UET_PATH_ECN, UET_PATH_NACK, UET_PATH_TIMEOUT };

/* A circular buffer of entropies that came back in clean ACKs: each is sent
 * once more, oldest fresh one first; an ECN-marked or NACKed one is not kept.
 * With the buffer empty, a random entropy is explored. After a timeout
 * (with trimming on) the buffer freezes: its entropies are cycled without
 * being used up, until exit_freeze has passed; then it restarts empty and
 * explores `explore` random entropies first (buffer_reps.cpp, uec_mp.cpp). */
struct uet_reps {
	uint16_t ev[UET_REPS_MAX];
	bool valid[UET_REPS_MAX];
	uint16_t size, head, count, nfresh, head_frozen, explore;
	bool frozen, freezing;
	simtime_t exit_at, exit_freeze;
	uint16_t paths, base; /* random entropies: base + [0, paths) */
};

void uet_reps_init(struct uet_reps *r, uint16_t size, uint16_t paths, uint16_t base, bool freezing,
		   simtime_t exit_freeze);
uint16_t uet_reps_next(struct uet_reps *r, struct mp_rng *rng);
void uet_reps_feedback(struct uet_reps *r, uint16_t ev, enum uet_path_fb fb, simtime_t now);

#endif

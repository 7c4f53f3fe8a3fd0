/* dctcp.h - DCTCP's reaction to one ACK (dctcp.c), exposed so a test can
 * feed it a known marking sequence and check alpha and the window. */
#ifndef MPSIM_TRANSPORT_DCTCP_H
#define MPSIM_TRANSPORT_DCTCP_H

#include <stdbool.h>
#include <stdint.h>

/* A sender's DCTCP state, bytes (RFC 8257 section 3.3 names). */
struct dctcp_cc {
	double cwnd, ssthresh; /* bytes */
	double alpha;	       /* DCTCP.Alpha */
	uint64_t bytes_acked;  /* DCTCP.BytesAcked, this observation window */
	uint64_t bytes_marked; /* DCTCP.BytesMarked */
	uint32_t window_end;   /* DCTCP.WindowEnd, a PSN */
	uint32_t recover;      /* no further cut until snd_una passes this PSN */
	bool cwr;	       /* a cut was made in the current window */
};

/* One ACK that acknowledged `acked` new bytes (0 for a duplicate), with its
 * ECN echo; snd_una and snd_nxt are the sender's PSNs after it. g is the
 * EWMA gain, mss the bytes of a full packet's payload. */
void dctcp_on_ack(struct dctcp_cc *cc, double g, double mss, uint64_t acked, bool ece,
		  uint32_t snd_una, uint32_t snd_nxt);

/* The packets a window of cwnd bytes lets fly: whole MSS only, at least 1. */
uint32_t dctcp_wnd_packets(double cwnd, double mss);

#endif

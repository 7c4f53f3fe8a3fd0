/* hpcc.h - HPCC's reaction to one ACK's INT record (hpcc.c), exposed so a
 * test can hand it INT values and check the window it computes. */
#ifndef MPSIM_TRANSPORT_HPCC_H
#define MPSIM_TRANSPORT_HPCC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/time.h"
#include "net/packet.h"

/* The constants one update reads (hpcc_params, resolved for the QP). */
struct hpcc_consts {
	double eta;	    /* target utilisation */
	uint64_t max_stage; /* additive steps before a multiplicative one */
	double rai;	    /* W_AI / T: the additive step as a rate, bit/s */
	double min_rate;    /* bit/s */
	double line;	    /* the NIC's rate (ns-3 m_max_rate), bit/s */
	simtime_t t;	    /* T, the base RTT, ps */
	double w_init;	    /* W_init = line x T, bytes */
};

/* A sender's HPCC state (the paper's Algorithm 1 in rate form, as the
 * authors' rdma-hw.cc keeps it: W = rate x T). */
struct hpcc_cc {
	double u;	    /* U, the EWMA of the most utilised hop's u (starts at 1) */
	double rc;	    /* W_c / T: the reference rate (m_curRate), bit/s */
	uint32_t inc_stage; /* additive steps since the last multiplicative one */
	uint32_t nhop;	    /* hop records in `hop` */
	struct pkt_int_hop hop[PKT_INT_MAX_HOPS]; /* the last ACK's INT */
};

/* One ACK's INT record `in` (the stored one of the previous ACK in cc);
 * full: an update of the reference (once per RTT), else a fast reaction
 * (the rate changes, the reference does not). Returns the new rate, bit/s
 * (the window is rate x T), or a negative value when the record updated
 * nothing (no hop, or none with time elapsed). */
double hpcc_react(const struct hpcc_consts *k, struct hpcc_cc *cc, const struct pkt_int *in,
		  bool full);

/* The HPCC state of connection c's first queue pair (for tests: what the
 * last ACK's INT record left in it). */
struct conn;
const struct hpcc_cc *hpcc_conn_cc(const struct conn *c);

#endif

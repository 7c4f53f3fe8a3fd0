/* uet.c - the Ultra Ethernet transport (UET) as the UEC's htsim runs it:
 * packets sprayed per packet over entropies (REPS, or oblivious), NSCC (the
 * sender's window from queueing delay and ECN), RCCC (the receiver's credit)
 * or both, selective ACKs, and loss recovery by the NACK of a trimmed packet
 * and by a retransmission timeout.
 *
 * Facts and constants: github.com/ultraethernet/uet-htsim, htsim/sim/uec.cpp
 * (UecSrc, UecSink), buffer_reps.cpp and uec_mp.cpp (REPS, oblivious), and
 * datacenter/main_uec.cpp (defaults: 64 entropies, a 16 KB ACK threshold, the
 * RTO). Names: Ultra Ethernet Specification 1.0 (Ultra Ethernet Consortium,
 * 2025): PDC, PSN, SACK, NACK, entropy value (EV), NSCC, RCCC, REPS. NSCC and
 * REPS themselves live in transport/uet_cc.c (transport/uet.h).
 *
 * Sender (per connection, the PDC's source):
 *  - a packet goes out when the window allows it (NSCC: cwnd >= bytes in
 *    flight + its size) and, under RCCC, when credit is left; retransmissions
 *    (lowest PSN first) before new PSNs; every packet takes the next entropy;
 *  - bytes in flight fall by what the receiver reports it got (each ACK
 *    carries the receiver's byte count, htsim's recvd_bytes), by a NACKed
 *    packet and by a timed-out one;
 *  - the ACK request flag (AR) asks for an ACK at once: on the last new
 *    packet, on one that fills the window or spends the last credit, and on
 *    every retransmission.
 * Receiver (the PDC's sink): a bitmap of PSNs beyond the cumulative point
 * (transport/rxmap.h). A SACK goes back when the packet is ECN-marked, carries
 * AR, is the first, is a duplicate, or moves the cumulative point with nothing
 * left out of order after an AR, or once ack_bytes have arrived since the last
 * one (ACK coalescing);
 * it names the cumulative PSN, the packet it answers (for the RTT sample and
 * its entropy, echoed) and a 64-PSN bitmap from max(psn - 63, cum + 1) (or
 * from the packet itself when it is marked or carries AR). A trimmed packet
 * (PKT_F_TRIM, switch.trim) is answered by a NACK at once: the sender resends
 * it on its next chance, within about one RTT of the trim, with no timeout.
 *
 * RCCC: the sender starts with maxwnd of speculative credit, dropped at the
 * first feedback; from then on it sends only against credit the receiver
 * grants (PULL, carried as PKT_CNP: both are receiver-to-sender pacing
 * messages, p0 = the credit granted so far, bytes mod 2^32, p1 = the PSN it
 * answers), up to the pull target each data packet carries (what the sender
 * still has to send, at most its window + one mtu and maxwnd). As htsim
 * (rccc_pacer host), the credit of all the connections into a host comes
 * from one pull pacer per host (UecPullPacer, state per host and one event
 * per host: transport_ops.host_priv_size, tp_host_timer): a connection whose
 * pull target moves ahead of its credit, or whose packet was trimmed, joins
 * the pacer's round robin; each pull grants it pull_mtus payloads (no more
 * than asked), and the next pull waits the time the credit granted takes at
 * pull_rate (0.99) x the host's link rate. One whose target is met leaves
 * for a list that gets speculative pulls, one at a time, while nobody else
 * wants credit, until it holds maxwnd beyond its target. A sender that times
 * out with no credit sends an RTS (PKT_PROBE, p0 = its pull target), which
 * puts it in the round robin. With rccc_pacer arrivals, each connection's
 * credit is clocked on its own arrivals instead: each whole data packet
 * grants one mtu, a trimmed packet's credit is not replaced, and a timeout
 * with no credit grants the sender one mtu. (choice) Credit is counted in
 * bytes, where htsim counts 256 B quanta (its pull targets round up to one).
 *
 * Packet fields. DATA: psn, entropy = EV, ts = send time, PKT_F_ACKREQ = AR,
 * PKT_F_RETX; p0 = pull target (RCCC). ACK (a SACK): p0 = the PSN answered,
 * p1 = cumulative PSN, p2 = receiver's bytes (mod 2^32), u64 = bitmap,
 * aux16 = psn - bitmap base (int16), entropy and ts echoed, PKT_F_ECE = ECN
 * echo, PKT_F_RETX echoed. NACK: p0 = PSN, p1 = cumulative, p2 = bytes.
 *
 * Differences from htsim, each a choice: NSCC's network RTT is the
 * connection's own base RTT unless network_rtt is set (htsim uses the
 * fabric's largest unloaded RTT for every connection); a trim records no hop,
 * so REPS drops the entropy of every NACK (htsim recycles a last-hop trim's);
 * no SLEEK probes (off by default in htsim) and no NIC-wide division of the
 * pull target among active sources. On the same matrices and fabric as
 * htsim_uec, NSCC's mean, p99 and max FCT agree within 3%, RCCC's and
 * NSCC+RCCC's within 3% too (bench/README.md, bench/uet_htsim.yaml).
 */
#include <string.h>

#include "core/mem.h"
#include "core/rng.h"
#include "transport/conn.h"
#include "transport/rxmap.h"
#include "transport/transport.h"
#include "transport/uet.h"

enum uet_cc_kind { UET_NSCC, UET_RCCC, UET_BOTH };
enum uet_lb_kind { UET_LB_REPS, UET_LB_OBLIVIOUS };
enum uet_pacer_kind { UET_PACER_HOST, UET_PACER_ARRIVALS };

struct uet_params {
	struct tp_common common;
	int cc, lb, rccc_pacer;
	uint64_t paths;
	simtime_t network_rtt, target_qdelay, fast_delay, rto, reps_exit_freeze;
	uint64_t qa_gate, ack_bytes, reps_buffer, pull_mtus, pull_empty;
	double gamma, delay_alpha, maxwnd_bdp, pull_rate;
	bool quick_adapt, reps_freeze;
};

/* RCCC's pull pacer, one per host (UecPullPacer): the connections into the
 * host that want credit, in a round robin, and those whose pull target is
 * met, which get speculative (slow) pulls while no other wants any. Lists
 * run through the receivers' states (rx_next_act, rx_next_idle): connection
 * id + 1, 0 = none. */
struct uet_fifo {
	uint32_t head, tail;
};
struct uet_pacer {
	struct uet_fifo act, idle; /* htsim's _active_senders, _idle_senders */
	uint64_t bps;		   /* pull_rate x the host's link rate (set at the first pull) */
	bool busy;		   /* its event is pending (htsim's _active) */
};

/* per-PSN sender state (st) */
enum { PS_ACKED = 1, PS_QUEUED = 2, PS_OUT = 4, PS_RTX_SHIFT = 3 };

struct uet_state {
	/* receiver */
	struct tp_rxmap rx;
	uint32_t rx_recvd;		    /* bytes on the wire received, mod 2^32 */
	uint32_t rx_pending;		    /* bytes since the last ACK (ACK coalescing) */
	uint32_t rx_ooo;		    /* PSNs recorded beyond the cumulative point */
	uint32_t rx_pull, rx_pull_target;   /* RCCC: credit granted / asked, mod 2^32 */
	uint32_t rx_next_act, rx_next_idle; /* RCCC: the pacer's lists (struct uet_pacer) */
	uint32_t rx_psn_hi;		    /* the highest PSN arrived (whole or trimmed) + 1 */
	int64_t rx_maxwnd; /* RCCC: the configured maxwnd (getConfiguredMaxWnd), bytes */
	uint8_t rx_ev;	   /* RCCC: the last PULL's entropy (UecSink::nextEntropy) */
	bool rx_any, rx_ack_request;
	bool rx_in_pull, rx_in_idle; /* RCCC: on the pacer's lists (htsim's _in_pull) */
	/* sender */
	bool nscc_on, rccc_on, speculating;
	uint32_t spec_from;		/* RCCC: the first PSN of the speculation (a message's) */
	uint32_t posted;		/* PSNs posted so far (c->npkts at the last post) */
	uint32_t snd_nxt, snd_una, cap; /* cap: the rings' slots */
	uint32_t rtx_lo, nrtx;		/* lowest PSN maybe queued; PSNs queued */
	uint64_t rtx_bytes, sent_payload;
	int64_t in_flight, credit;
	uint32_t tx_recvd, tx_pull;
	/* per PSN outstanding, a ring over [snd_una, snd_nxt): PSN psn at slot
	 * psn & (cap - 1), cap a power of two doubled when the PSNs outstanding
	 * fill it, so memory follows the window, not the bytes carried */
	simtime_t *sent_at; /* the latest copy's send time */
	uint8_t *st;	    /* PS_* and retransmissions << PS_RTX_SHIFT */
	simtime_t rto, network_rtt;
	struct uet_nscc n;
	const struct uet_nscc_k *k; /* interned: shared by connections alike */
	/* path choice */
	struct mp_rng rng;
	struct uet_reps reps;
	uint16_t ob_index, ob_xor, ob_base; /* oblivious */
};

static uint16_t pkt_size_of(const struct conn *c, uint32_t psn)
{
	return (uint16_t)(tp_psn_payload(c, psn) + tp_common(c)->header);
}

#ifdef MPSIM_SMALL_LIMITS
#define UET_RING_MIN 4u /* the rings' growth runs in every test */
#else
#define UET_RING_MIN 64u
#endif

static inline uint8_t *st_of(const struct uet_state *s, uint32_t psn)
{
	return &s->st[psn & (s->cap - 1)];
}
static inline simtime_t *sent_of(const struct uet_state *s, uint32_t psn)
{
	return &s->sent_at[psn & (s->cap - 1)];
}
/* psn is outstanding: sent, not known to have arrived (its ring slot is its) */
static inline bool in_window(const struct uet_state *s, uint32_t psn)
{
	return psn >= s->snd_una && psn < s->snd_nxt;
}

/* Room in the rings for PSN snd_nxt: double them, each outstanding PSN to
 * its new slot. */
static void ring_fit(struct uet_state *s)
{
	if (s->cap && s->snd_nxt - s->snd_una < s->cap)
		return;
	uint32_t cap = s->cap ? 2 * s->cap : UET_RING_MIN;
	simtime_t *sent = mp_calloc(cap, sizeof *sent);
	uint8_t *st = mp_calloc(cap, 1);
	for (uint32_t i = s->snd_una; i < s->snd_nxt; i++) {
		sent[i & (cap - 1)] = *sent_of(s, i);
		st[i & (cap - 1)] = *st_of(s, i);
	}
	mp_free(s->sent_at);
	mp_free(s->st);
	s->sent_at = sent;
	s->st = st;
	s->cap = cap;
}

/* main_uec.cpp: RTO = 15 us + 6 queues' drain at line rate, a queue being
 * one BDP with trimming and five without */
static simtime_t default_rto(const struct conn *c, bool trimming, uint64_t bps)
{
	uint64_t q = (trimming ? 1 : 5) * tp_bdp_bytes(c);
	return 15 * PS_PER_US + (simtime_t)((unsigned __int128)q * 6 * 8 * PS_PER_S / bps);
}

static void uet_open(struct conn *c)
{
	const struct uet_params *pp = tp_params(c);
	struct uet_state *s = tp_priv(c);
	bool trimming = c->w->fab->cfg.trim;
	uint64_t bps = c->src->node.ports[c->rail % c->src->node.nports].rate_bps;
	s->nscc_on = pp->cc != UET_RCCC;
	s->rccc_on = pp->cc != UET_NSCC;
	s->network_rtt = pp->network_rtt ? pp->network_rtt : c->base_rtt;
	s->rto = pp->rto ? pp->rto : default_rto(c, trimming, bps);
	struct uet_nscc_k k;
	uet_nscc_consts(&k, s->network_rtt, bps, tp_payload(c), pp->common.mtu, trimming,
			pp->target_qdelay, (unsigned)pp->qa_gate, pp->gamma, pp->delay_alpha,
			pp->fast_delay, pp->quick_adapt);
	s->k = tp_intern(c->w, &k, sizeof k);
	uet_nscc_init(&s->n, s->network_rtt, bps, pp->maxwnd_bdp);
	s->rx_maxwnd = s->n.maxwnd;
	s->credit = s->n.maxwnd; /* startConnection: speculative credit */
	s->speculating = true;
	s->posted = c->npkts;
	rng_init(&s->rng, c->w->seed, RNG_CONN, c->id);
	uint16_t base = (uint16_t)rng_below(&s->rng, 65536);
	uet_reps_init(&s->reps, (uint16_t)pp->reps_buffer, (uint16_t)pp->paths, base,
		      pp->reps_freeze && trimming, pp->reps_exit_freeze);
	s->ob_base = base;
	s->ob_xor = (uint16_t)rng_below(&s->rng, pp->paths);
	ring_fit(s);
	s->rtx_lo = UINT32_MAX;
	tp_activate(c);
}

/* A message posted on a connection that has sent all it was given starts as
 * a new flow does (startConnection): with maxwnd of speculative credit under
 * RCCC, until feedback on one of its own PSNs. (choice) The UEC htsim opens a
 * connection per message, so each of its messages speculates; without this,
 * a queue pair's next message would find no credit and no pull target at the
 * receiver to earn any, and wait for the previous message's last credit or a
 * timeout's RTS. */
static void uet_post(struct conn *c)
{
	struct uet_state *s = tp_priv(c);
	if (s->rccc_on && s->snd_nxt == s->posted) {
		if (s->credit < s->n.maxwnd)
			s->credit = s->n.maxwnd;
		s->speculating = true;
		s->spec_from = s->snd_nxt;
	}
	s->posted = c->npkts;
	tp_activate(c);
}

static void uet_close(struct conn *c)
{
	struct uet_state *s = tp_priv(c);
	tp_rxmap_free(&s->rx);
	mp_free(s->sent_at);
	mp_free(s->st);
}

/* ---- paths ---------------------------------------------------------------------- */
/* oblivious (UecMpOblivious): every path once per round, in an order xored
 * with a new random value each round */
static uint16_t oblivious_next(struct uet_state *s, uint16_t paths)
{
	uint16_t mask = (uint16_t)(paths - 1);
	uint16_t ev = (uint16_t)((s->ob_index ^ s->ob_xor) & mask);
	if (++s->ob_index == paths) {
		s->ob_index = 0;
		s->ob_xor = (uint16_t)rng_below(&s->rng, paths);
	}
	return (uint16_t)(s->ob_base + ev);
}

static uint16_t next_ev(struct conn *c, struct uet_state *s)
{
	const struct uet_params *pp = tp_params(c);
	return pp->lb == UET_LB_REPS ? uet_reps_next(&s->reps, &s->rng)
				     : oblivious_next(s, (uint16_t)pp->paths);
}

static void path_feedback(const struct conn *c, struct uet_state *s, uint16_t ev,
			  enum uet_path_fb fb)
{
	if (((const struct uet_params *)tp_params(c))->lb == UET_LB_REPS)
		uet_reps_feedback(&s->reps, ev, fb, tp_now(c));
}

/* ---- sender --------------------------------------------------------------------- */
static uint32_t next_rtx(struct uet_state *s)
{
	if (!s->nrtx)
		return UINT32_MAX;
	uint32_t i = s->rtx_lo > s->snd_una ? s->rtx_lo : s->snd_una;
	while (!(*st_of(s, i) & PS_QUEUED))
		i++;
	s->rtx_lo = i;
	return i;
}

static void queue_rtx(struct uet_state *s, uint32_t psn, uint16_t size)
{
	*st_of(s, psn) = (uint8_t)((*st_of(s, psn) & ~PS_OUT) | PS_QUEUED);
	s->nrtx++;
	s->rtx_bytes += size;
	if (psn < s->rtx_lo)
		s->rtx_lo = psn;
}

static void unqueue_rtx(struct uet_state *s, uint32_t psn, uint16_t size)
{
	*st_of(s, psn) &= (uint8_t)~PS_QUEUED;
	s->nrtx--;
	s->rtx_bytes -= size;
}

/* The next packet's size, or 0 when there is nothing to send. */
static uint16_t next_size(const struct conn *c, struct uet_state *s, uint32_t *psn)
{
	*psn = next_rtx(s);
	if (*psn == UINT32_MAX) {
		if (s->snd_nxt >= c->npkts)
			return 0;
		*psn = s->snd_nxt;
	}
	return pkt_size_of(c, *psn);
}

static bool may_send(const struct uet_state *s, uint16_t size)
{
	return size && (!s->nscc_on || s->n.cwnd >= s->in_flight + size) &&
	       (!s->rccc_on || s->credit > 0);
}

/* computePullTarget: what is left to send, at most the window + one mtu and
 * maxwnd, less the credit held; at least an mtu while speculating */
static uint32_t pull_target(const struct conn *c, const struct uet_state *s)
{
	uint64_t mtu = tp_common(c)->mtu;
	int64_t backlog = (int64_t)(c->bytes - s->sent_payload) +
			  (int64_t)(c->npkts - s->snd_nxt) * (int64_t)tp_common(c)->header;
	int64_t t = backlog + (int64_t)s->rtx_bytes;
	if (s->nscc_on && t > s->n.cwnd + (int64_t)mtu)
		t = s->n.cwnd + (int64_t)mtu;
	if (t > s->n.maxwnd)
		t = s->n.maxwnd;
	t -= s->credit;
	if (s->speculating && t < (int64_t)mtu && backlog > 0)
		t = (int64_t)mtu;
	if (t < 0)
		t = 0;
	return s->tx_pull + (uint32_t)t;
}

static void arm_rto(struct conn *c, struct uet_state *s)
{
	if (c->timer_at == SIMTIME_MAX)
		tp_timer_set(c, tp_now(c) + s->rto);
}

static struct packet *uet_next_packet(struct conn *c, unsigned flow)
{
	(void)flow;
	struct uet_state *s = tp_priv(c);
	uint32_t psn;
	uint16_t size = next_size(c, s, &psn);
	if (!may_send(s, size))
		return NULL;
	bool retx = psn < s->snd_nxt;
	struct packet *p = tp_pkt_new(c, PKT_DATA, true);
	p->psn = psn;
	p->size = size;
	p->flags |= PKT_F_ECT;
	if (tp_psn_last(c, psn))
		p->flags |= PKT_F_LAST;
	if (s->rccc_on)
		s->credit -= size;
	s->in_flight += size;
	if (retx) {
		unqueue_rtx(s, psn, size);
		uint8_t *f = st_of(s, psn);
		unsigned n = *f >> PS_RTX_SHIFT;
		*f = (uint8_t)((*f & 7) | (n < 31 ? n + 1 : 31) << PS_RTX_SHIFT);
		p->flags |= PKT_F_RETX | PKT_F_ACKREQ;
		c->retx_bytes += size;
	} else {
		ring_fit(s);
		*st_of(s, psn) = 0;
		s->snd_nxt++;
		s->sent_payload += tp_psn_payload(c, psn);
		if (s->snd_nxt == c->npkts || (s->rccc_on && s->credit <= 0) ||
		    (s->nscc_on && s->in_flight + size >= s->n.cwnd))
			p->flags |= PKT_F_ACKREQ;
	}
	*st_of(s, psn) |= PS_OUT;
	*sent_of(s, psn) = tp_now(c);
	if (s->rccc_on)
		p->p0 = pull_target(c, s);
	p->entropy = next_ev(c, s);
	c->sent_bytes += size;
	arm_rto(c, s);
	return p;
}

/* PSN psn is known to have arrived (cumulatively or in a SACK bitmap). */
static void ack_one(struct conn *c, struct uet_state *s, uint32_t psn)
{
	if (!in_window(s, psn))
		return;
	uint8_t f = *st_of(s, psn);
	if (f & PS_ACKED)
		return;
	if (f & PS_QUEUED) { /* a copy arrived after all: its bytes were counted out twice */
		uint16_t size = pkt_size_of(c, psn);
		unqueue_rtx(s, psn, size);
		s->in_flight += size;
	}
	*st_of(s, psn) = (uint8_t)((f & ~(PS_OUT | PS_QUEUED)) | PS_ACKED);
	c->acked_bytes += tp_psn_payload(c, psn);
}

/* feedback on PSN psn (an ACK's, a NACK's, the packet a PULL answers) ends
 * the speculation it belongs to */
static void stop_speculating(struct uet_state *s, uint32_t psn)
{
	if (s->speculating && psn >= s->spec_from) {
		s->speculating = false;
		if (s->credit > 0)
			s->credit = 0;
	}
}

/* everything acknowledged: done (or, a stream, idle until the next post) */
static bool check_done(struct conn *c, struct uet_state *s)
{
	while (s->snd_una < s->snd_nxt && (*st_of(s, s->snd_una) & PS_ACKED))
		s->snd_una++;
	tp_tx_upto(c, s->snd_una);
	if (s->snd_una < c->npkts)
		return false;
	tp_complete(c);
	return true;
}

static void resume(struct conn *c, struct uet_state *s)
{
	uint32_t psn;
	if (may_send(s, next_size(c, s, &psn)))
		tp_activate(c);
}

/* processAck */
static void on_ack(struct conn *c, struct uet_state *s, const struct packet *p)
{
	simtime_t now = tp_now(c);
	int64_t newly = 0;
	if ((int32_t)(p->p2 - s->tx_recvd) > 0) {
		newly = (int64_t)(uint32_t)(p->p2 - s->tx_recvd);
		s->tx_recvd = p->p2;
	}
	s->in_flight -= newly;
	/* an RTT sample from the send record, if it is the copy acknowledged:
	 * never resent and no RETX echo, or resent once and echoed */
	uint32_t psn = p->p0;
	simtime_t raw = 0;
	if (in_window(s, psn) && (*st_of(s, psn) & PS_OUT)) {
		unsigned n = *st_of(s, psn) >> PS_RTX_SHIFT;
		bool echo = (p->flags & PKT_F_RETX) != 0;
		if ((n == 0 && !echo) || (n == 1 && echo))
			raw = now - *sent_of(s, psn);
	}
	uint32_t cum = p->p1 < s->snd_nxt ? p->p1 : s->snd_nxt;
	for (uint32_t i = s->snd_una; i < cum; i++)
		ack_one(c, s, i);
	uint32_t base = p->p0 - (uint32_t)(int32_t)(int16_t)p->aux16;
	for (uint64_t b = p->u64; b; b &= b - 1) {
		uint32_t i = base + (uint32_t)__builtin_ctzll(b);
		ack_one(c, s, i);
	}
	bool ecn = (p->flags & PKT_F_ECE) != 0;
	path_feedback(c, s, p->entropy, ecn ? UET_PATH_ECN : UET_PATH_GOOD);
	if (s->nscc_on)
		uet_nscc_on_ack(s->k, &s->n, now, raw, ecn, newly, s->in_flight);
	stop_speculating(s, psn);
}

/* processNack: the trimmed packet goes back in the queue at once */
static void on_nack(struct conn *c, struct uet_state *s, const struct packet *p)
{
	uint32_t psn = p->p0;
	if (!in_window(s, psn) || !(*st_of(s, psn) & PS_OUT))
		return; /* acknowledged meanwhile, or already queued */
	uint16_t size = pkt_size_of(c, psn);
	simtime_t now = tp_now(c);
	if (s->nscc_on)
		uet_nscc_on_nack(s->k, &s->n, now, now - *sent_of(s, psn), size, s->network_rtt,
				 s->in_flight, s->rccc_on);
	s->in_flight -= size;
	stop_speculating(s, psn);
	queue_rtx(s, psn, size);
	path_feedback(c, s, p->entropy, UET_PATH_NACK);
}

/* processPull */
static void on_pull(struct conn *c, struct uet_state *s, const struct packet *p)
{
	stop_speculating(s, p->p1);
	if ((int32_t)(p->p0 - s->tx_pull) > 0) {
		s->credit += (int64_t)(uint32_t)(p->p0 - s->tx_pull);
		if (s->credit > s->n.maxwnd)
			s->credit = s->n.maxwnd;
		s->tx_pull = p->p0;
	}
	(void)c;
}

static void uet_sender(struct conn *c, struct packet *p)
{
	struct uet_state *s = tp_priv(c);
	if (c->done || c->idle) {
		tp_pkt_free(c, p);
		return;
	}
	if (p->type == PKT_ACK)
		on_ack(c, s, p);
	else if (p->type == PKT_NACK)
		on_nack(c, s, p);
	else
		on_pull(c, s, p);
	tp_pkt_free(c, p);
	if (!check_done(c, s))
		resume(c, s);
}

/* ---- receiver ------------------------------------------------------------------- */
/* p becomes its reply (type ACK or NACK) and goes back, its entropy, ts and
 * RETX flag echoed */
static void reply(struct conn *c, struct uet_state *s, struct packet *p, enum pkt_type type,
		  uint32_t base)
{
	uint8_t fl = (uint8_t)(p->flags & PKT_F_RETX);
	if (p->flags & PKT_F_CE)
		fl |= PKT_F_ECE;
	uint32_t psn = p->psn;
	p->type = (uint8_t)type;
	p->cls = CLS_CTRL;
	p->size = (uint16_t)tp_common(c)->ack_size;
	p->src = c->dst_hid;
	p->dst = c->src_hid;
	p->flags = fl;
	p->p0 = psn;
	p->p1 = s->rx.rcv_nxt;
	p->p2 = s->rx_recvd;
	p->u64 = 0;
	p->aux16 = 0;
	if (type == PKT_ACK) {
		int64_t d = (int64_t)psn - (int64_t)base; /* the bitmap base, near psn */
		if (d > INT16_MAX)
			d = INT16_MAX;
		if (d < INT16_MIN)
			d = INT16_MIN;
		base = (uint32_t)((int64_t)psn - d);
		p->aux16 = (uint16_t)(int16_t)d;
		p->u64 = tp_rxmap_bits64(&s->rx, base, c->npkts);
	}
	tp_send(c, c->dst, p);
}

/* sackBitmapBase */
static uint32_t sack_base(const struct uet_state *s, uint32_t psn)
{
	uint32_t lo = s->rx.rcv_nxt + 1;
	return psn >= 63 && psn - 63 > lo ? psn - 63 : lo;
}

/* A PULL: the receiver's credit granted so far, and the PSN it answers (the
 * sender's speculation on later PSNs, a newer message's, goes on). */
static void send_pull(struct conn *c, struct uet_state *s, uint32_t psn)
{
	struct packet *q = tp_pkt_new(c, PKT_CNP, false);
	q->p0 = s->rx_pull;
	q->p1 = psn;
	/* the receiver's own counter over 2^7 entropies (UecSink::nextEntropy,
	 * TGT_EV_SIZE 7): the sender's random stream is the sender's alone */
	s->rx_ev = (uint8_t)((s->rx_ev + 1) & 127);
	q->entropy = s->rx_ev;
	tp_send(c, c->dst, q);
}

/* ---- RCCC's pull pacer (pacer host) ---------------------------------------------- */
static uint32_t *fifo_link(struct tp_world *w, uint32_t id1, bool idle)
{
	struct uet_state *s = tp_priv(w->conns[id1 - 1]);
	return idle ? &s->rx_next_idle : &s->rx_next_act;
}

static void fifo_push(struct tp_world *w, struct uet_fifo *q, const struct conn *c, bool idle)
{
	*fifo_link(w, c->id + 1, idle) = 0;
	if (q->tail)
		*fifo_link(w, q->tail, idle) = c->id + 1;
	else
		q->head = c->id + 1;
	q->tail = c->id + 1;
}

static struct conn *fifo_pop(struct tp_world *w, struct uet_fifo *q, bool idle)
{
	struct conn *c = w->conns[q->head - 1];
	q->head = *fifo_link(w, q->head, idle);
	if (!q->head)
		q->tail = 0;
	return c;
}

/* credit asked and not granted yet (htsim's backlog()), and granted beyond
 * what was asked (slowCredit()) */
static uint32_t pull_backlog(const struct uet_state *s)
{
	int32_t d = (int32_t)(s->rx_pull_target - s->rx_pull);
	return d > 0 ? (uint32_t)d : 0;
}
static uint32_t slow_credit(const struct uet_state *s)
{
	int32_t d = (int32_t)(s->rx_pull - s->rx_pull_target);
	return d > 0 ? (uint32_t)d : 0;
}

/* requestPull: c joins the round robin of its receiver's pacer, which wakes
 * now if it was asleep */
static void request_pull(struct conn *c, struct uet_state *s)
{
	struct uet_pacer *pc = tp_host_priv(c->w, c->dst_hid);
	s->rx_in_pull = true;
	fifo_push(c->w, &pc->act, c, false);
	if (pc->bps == 0) { /* (choice) all the host's ports: htsim's linkspeed x ports */
		const struct node *n = &c->dst->node;
		for (unsigned i = 0; i < n->nports; i++)
			pc->bps += n->ports[i].rate_bps;
		pc->bps = (uint64_t)((double)pc->bps *
				     ((const struct uet_params *)tp_params(c))->pull_rate);
	}
	if (!pc->busy) {
		pc->busy = true;
		tp_host_timer(c->w, c->dst_hid, tp_now(c));
	}
}

/* handlePullTarget: a pull target beyond the last asks for credit */
static void pull_target_in(struct conn *c, struct uet_state *s, uint32_t target)
{
	if ((int32_t)(target - s->rx_pull_target) <= 0)
		return;
	s->rx_pull_target = target;
	if (!s->rx_in_pull)
		request_pull(c, s);
}

/* UecSink::pull: pull_mtus x the payload of credit, no more than asked
 * unless slow (speculative); the PULL goes even when it grants nothing */
static uint32_t pull_one(struct conn *c, struct uet_state *s, bool slow)
{
	const struct uet_params *pp = tp_params(c);
	uint32_t g = (uint32_t)(pp->pull_mtus * tp_payload(c));
	if (!slow && g > pull_backlog(s))
		g = pull_backlog(s);
	s->rx_pull += g;
	send_pull(c, s, s->rx_psn_hi ? s->rx_psn_hi - 1 : 0); /* the highest PSN seen */
	return g;
}

/* UecPullPacer::doNextEvent: one pull, to the first connection that wants
 * credit (then to the back of the round robin, or among the satisfied ones),
 * or, with none, a slow pull to the first satisfied one, which stays for
 * more until it holds maxwnd beyond its pull target; the next pull when the
 * credit granted (pull_empty if none) would take at pull_rate x the link
 * rate. (choice) A connection is on the satisfied list once (htsim may list
 * it twice). */
static void uet_host_timer(struct tp_world *w, uint32_t hid)
{
	struct uet_pacer *pc = tp_host_priv(w, hid);
	struct conn *c;
	struct uet_state *s;
	uint32_t g;
	if (pc->act.head) {
		c = fifo_pop(w, &pc->act, false);
		s = tp_priv(c);
		g = pull_one(c, s, false);
		if (pull_backlog(s) > 0) {
			fifo_push(w, &pc->act, c, false);
		} else {
			s->rx_in_pull = false;
			if (!s->rx_in_idle)
				fifo_push(w, &pc->idle, c, true);
			s->rx_in_idle = true;
		}
	} else if (pc->idle.head) {
		c = fifo_pop(w, &pc->idle, true);
		s = tp_priv(c);
		g = pull_one(c, s, true);
		s->rx_in_idle = pull_backlog(s) == 0 && (int64_t)slow_credit(s) < s->rx_maxwnd;
		if (s->rx_in_idle)
			fifo_push(w, &pc->idle, c, true);
	} else {
		pc->busy = false;
		return;
	}
	const struct uet_params *pp = w->params;
	simtime_t gap = time_ser_ps(g ? g : pp->pull_empty, pc->bps);
	tp_host_timer(w, hid, w->q->now + (gap ? gap : 1));
}

/* ---- RCCC clocked on arrivals (pacer arrivals) ------------------------------------ */
/* one mtu of credit per whole data packet that arrives, up to the pull
 * target (see the header) */
static void grant(struct conn *c, struct uet_state *s, uint32_t target, uint32_t psn)
{
	if ((int32_t)(target - s->rx_pull_target) > 0)
		s->rx_pull_target = target;
	if ((int32_t)(s->rx_pull_target - s->rx_pull) <= 0)
		return;
	uint32_t g = (uint32_t)tp_common(c)->mtu;
	if (g > s->rx_pull_target - s->rx_pull)
		g = s->rx_pull_target - s->rx_pull;
	s->rx_pull += g;
	send_pull(c, s, psn);
}

/* processTrimmed: NACKed at once; under the pacer, its pull target counts
 * and the connection asks for a pull (its sender is retransmitting) */
static void on_trimmed(struct conn *c, struct uet_state *s, struct packet *p, bool pacer)
{
	uint32_t psn = p->psn;
	if (tp_rxmap_has(&s->rx, psn)) {
		reply(c, s, p, PKT_ACK, sack_base(s, psn));
		return;
	}
	if (pacer)
		pull_target_in(c, s, p->p0);
	reply(c, s, p, PKT_NACK, 0);
	if (pacer && !s->rx_in_pull)
		request_pull(c, s);
}

/* processRts (pacer host): a sender with no credit asks for a pull */
static void on_rts(struct conn *c, struct uet_state *s, struct packet *p)
{
	pull_target_in(c, s, p->p0);
	if (!s->rx_in_pull)
		request_pull(c, s);
	tp_pkt_free(c, p);
}

static void uet_receiver(struct conn *c, struct packet *p)
{
	struct uet_state *s = tp_priv(c);
	const struct uet_params *pp = tp_params(c);
	bool rccc = pp->cc != UET_NSCC, pacer = rccc && pp->rccc_pacer == UET_PACER_HOST;
	uint32_t psn = p->psn;
	if (p->type == PKT_PROBE) {
		on_rts(c, s, p);
		return;
	}
	if (psn + 1 > s->rx_psn_hi)
		s->rx_psn_hi = psn + 1;
	if (p->flags & PKT_F_TRIM) {
		on_trimmed(c, s, p, pacer);
		return;
	}
	tp_rx_ood(c, psn);
	tp_rx_order(c, &c->rx_order_top, p);
	bool ecn = (p->flags & PKT_F_CE) != 0, ar = (p->flags & PKT_F_ACKREQ) != 0;
	s->rx_pending += p->size;
	if (pacer)
		pull_target_in(c, s, p->p0);
	else if (rccc)
		grant(c, s, p->p0, psn);
	if (tp_rxmap_has(&s->rx, psn)) { /* a duplicate: ACK at once */
		c->dup_bytes += tp_rx_payload(c, p);
		s->rx_pending = 0;
		reply(c, s, p, PKT_ACK, ecn ? psn : sack_base(s, psn));
		return;
	}
	bool force = !s->rx_any;
	s->rx_any = true;
	s->rx_recvd += p->size;
	c->rcvd_bytes += tp_rx_payload(c, p);
	if (ar)
		force = s->rx_ack_request = true;
	uint32_t before = s->rx.rcv_nxt;
	tp_rxmap_mark(&s->rx, psn);
	uint32_t after = tp_rxmap_advance(&s->rx, c->npkts);
	s->rx_ooo = s->rx_ooo + 1 - (after - before);
	if (after != before) {
		tp_rx_upto(c, after);
		if (s->rx_ooo == 0 && s->rx_ack_request) {
			force = true;
			s->rx_ack_request = false;
		}
	}
	if (ecn || force || s->rx_pending >= ((const struct uet_params *)tp_params(c))->ack_bytes) {
		s->rx_pending = 0;
		reply(c, s, p, PKT_ACK, ecn || ar ? psn : sack_base(s, psn));
	} else {
		tp_pkt_free(c, p);
	}
}

static void uet_on_packet(struct conn *c, struct packet *p)
{
	if (tp_to_receiver(p))
		uet_receiver(c, p);
	else
		uet_sender(c, p);
}

/* sendRTS: with no credit, the sender asks its receiver for a pull (pacer
 * host: a control packet carrying the pull target; (choice) it takes no PSN
 * and gets no ACK, where htsim's RTS takes one); clocked on arrivals, no
 * pull would come, so the sender grants itself one mtu. */
static void send_rts(struct conn *c, struct uet_state *s)
{
	if (((const struct uet_params *)tp_params(c))->rccc_pacer != UET_PACER_HOST) {
		s->credit = (int64_t)tp_common(c)->mtu;
		return;
	}
	struct packet *p = tp_pkt_new(c, PKT_PROBE, true);
	p->p0 = pull_target(c, s);
	p->entropy = next_ev(c, s);
	tp_send(c, c->src, p);
}

/* The retransmission timeout: every packet outstanding for rto or more is
 * queued again (rtxTimerExpired, which takes them one at a time); the timer
 * then waits for the oldest one left. */
static void uet_on_timer(struct conn *c)
{
	struct uet_state *s = tp_priv(c);
	if (c->done || c->idle)
		return;
	simtime_t now = tp_now(c), next = SIMTIME_MAX;
	bool fired = false;
	for (uint32_t i = s->snd_una; i < s->snd_nxt; i++) {
		if (!(*st_of(s, i) & PS_OUT))
			continue;
		simtime_t due = *sent_of(s, i) + s->rto;
		if (due > now) {
			if (due < next)
				next = due;
			continue;
		}
		uint16_t size = pkt_size_of(c, i);
		s->in_flight -= size;
		if (s->nscc_on) { /* mark_packet_for_retransmission */
			s->n.cwnd -= size;
			if (s->n.cwnd < s->k->min_cwnd)
				s->n.cwnd = s->k->min_cwnd;
		}
		queue_rtx(s, i, size);
		fired = true;
	}
	if (fired) {
		path_feedback(c, s, 0, UET_PATH_TIMEOUT);
		stop_speculating(s, UINT32_MAX);
		if (s->rccc_on && s->credit <= 0)
			send_rts(c, s);
	}
	tp_timer_set(c, next);
	resume(c, s);
}

static void uet_trace(const struct conn *c, struct tp_trace *t)
{
	const struct uet_state *s = (const struct uet_state *)c->priv;
	t->cwnd = (double)s->n.cwnd;
}

static int uet_check(void *pv, struct mp_err *e)
{
	struct uet_params *p = pv;
	if (p->lb == UET_LB_OBLIVIOUS && (p->paths & (p->paths - 1)))
		return mp_errf(e, MP_EUSER,
			       "paths: expected a power of two with lb oblivious (it permutes "
			       "the paths with a mask), got %llu",
			       (unsigned long long)p->paths);
	return MP_OK;
}

/* Defaults: the UEC htsim's (file and name beside each). */
static const struct opt_desc uet_opts[] = {
	TP_COMMON_OPTS(struct uet_params),
	{ "cc", OPT_ENUM, offsetof(struct uet_params, cc), "nscc", 0, 0,
	  "congestion control: nscc (sender window), rccc (receiver credit) or both "
	  "(main_uec.cpp -sender_cc / -receiver_cc; its default is nscc)",
	  (const char *const[]){ "nscc", "rccc", "nscc+rccc", NULL } },
	{ "lb", OPT_ENUM, offsetof(struct uet_params, lb), "reps", 0, 0,
	  "entropy per packet: reps (recycled from clean ACKs) or oblivious (every path once "
	  "per round; main_uec.cpp -load_balancing_algo)",
	  (const char *const[]){ "reps", "oblivious", NULL } },
	{ "paths", OPT_UINT, offsetof(struct uet_params, paths), "64", 1, 65536,
	  "entropies a connection sprays over (main_uec.cpp -paths, default 64)" },
	{ "network_rtt", OPT_TIME, offsetof(struct uet_params, network_rtt), "0", 0, 1e13,
	  "NSCC's network RTT, which scales its constants and starts its base RTT; 0 = the "
	  "connection's base RTT (htsim: the fabric's largest unloaded RTT)" },
	{ "target_qdelay", OPT_TIME, offsetof(struct uet_params, target_qdelay), "0", 0, 1e13,
	  "NSCC target queueing delay; 0 = 0.75 x network_rtt with switch.trim, network_rtt "
	  "without (uec.cpp initNsccParams; main_uec.cpp -target_q_delay)" },
	{ "qa_gate", OPT_UINT, offsetof(struct uet_params, qa_gate), "3", 0, 30,
	  "quick adapt only when less than maxwnd / 2^qa_gate was delivered (initNsccParams: 3)" },
	{ "gamma", OPT_DOUBLE, offsetof(struct uet_params, gamma), "0.8", 0, 1,
	  "NSCC multiplicative decrease gain (uec.cpp _gamma)" },
	{ "delay_alpha", OPT_DOUBLE, offsetof(struct uet_params, delay_alpha), "0.0125", 1e-6, 1,
	  "EWMA gain of NSCC's average delay (uec.cpp _delay_alpha)" },
	{ "fast_delay", OPT_TIME, offsetof(struct uet_params, fast_delay), "1us", 0, 1e13,
	  "NSCC fast increase while the delay is below this (uec.cpp fast_increase: 1 us)" },
	{ "maxwnd_bdp", OPT_DOUBLE, offsetof(struct uet_params, maxwnd_bdp), "1.5", 0.01, 100,
	  "largest window (and RCCC credit) in BDPs of the network RTT at the NIC rate; the "
	  "window starts there (uec.cpp initNscc: 1.5)" },
	{ "quick_adapt", OPT_BOOL, offsetof(struct uet_params, quick_adapt), "true", 0, 0,
	  "NSCC quick adapt (uec.cpp _disable_quick_adapt: false)" },
	{ "ack_bytes", OPT_SIZE, offsetof(struct uet_params, ack_bytes), "16KB", 1, 1e9,
	  "ACK coalescing: a SACK once this many bytes arrived since the last "
	  "(UecSink::_bytes_unacked_threshold, 16384)" },
	{ "rto", OPT_TIME, offsetof(struct uet_params, rto), "0", 0, 1e13,
	  "retransmission timeout; 0 = 15 us + 6 x a queue at the NIC rate, a queue one BDP "
	  "with switch.trim and five without (main_uec.cpp)" },
	{ "rccc_pacer", OPT_ENUM, offsetof(struct uet_params, rccc_pacer), "host", 0, 0,
	  "RCCC's credit: host (one pull pacer per receiving host, round robin over its "
	  "connections: uec.cpp UecPullPacer) or arrivals (each connection one mtu per "
	  "packet delivered)",
	  (const char *const[]){ "host", "arrivals", NULL } },
	{ "pull_rate", OPT_DOUBLE, offsetof(struct uet_params, pull_rate), "0.99", 0.01, 10,
	  "RCCC pacer: credit per second as a fraction of the host's link rate (main_uec.cpp: "
	  "UecPullPacer(linkspeed, 0.99, ...))" },
	{ "pull_mtus", OPT_UINT, offsetof(struct uet_params, pull_mtus), "4", 1, 64,
	  "RCCC pacer: credit per pull, in payloads of a full packet (uec.cpp "
	  "UecSink::_mtus_per_pull = 4, of mss bytes)" },
	{ "pull_empty", OPT_SIZE, offsetof(struct uet_params, pull_empty), "1024B", 1, 1e6,
	  "RCCC pacer: a pull that grants nothing still waits this many bytes' time "
	  "(uec.cpp UecPullPacer::doNextEvent: 1024 >> UEC_PULL_SHIFT quanta)" },
	{ "reps_buffer", OPT_UINT, offsetof(struct uet_params, reps_buffer), "8", 1, UET_REPS_MAX,
	  "REPS: entropies the recycling buffer holds (buffer_reps.cpp repsBufferSize)" },
	{ "reps_freeze", OPT_BOOL, offsetof(struct uet_params, reps_freeze), "true", 0, 0,
	  "REPS: freeze the buffer after a timeout (only with switch.trim; repsUseFreezing)" },
	{ "reps_exit_freeze", OPT_TIME, offsetof(struct uet_params, reps_exit_freeze), "10ms", 0,
	  1e13, "REPS: a frozen buffer thaws this long after (exit_freeze_after: 10 ms)" },
	OPT_END
};

const struct transport_ops uet_transport_ops = {
	.name = "uet",
	.summary = "Ultra Ethernet transport: REPS or oblivious spraying, NSCC and/or RCCC, "
		   "SACK, NACK of trimmed packets (as the UEC htsim)",
	.opts = uet_opts,
	.params_size = sizeof(struct uet_params),
	.priv_size = sizeof(struct uet_state),
	.trims = true,
	.check = uet_check,
	.open = uet_open,
	.post = uet_post,
	.next_packet = uet_next_packet,
	.on_packet = uet_on_packet,
	.on_timer = uet_on_timer,
	.host_priv_size = sizeof(struct uet_pacer),
	.on_host_timer = uet_host_timer,
	.close = uet_close,
	.trace = uet_trace,
};

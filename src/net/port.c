/* port.c - the packet path: egress queues, transmission, arrival, switching,
 * shared-buffer admission, ECN marking at dequeue, and PFC.
 *
 * Invariants:
 *  - a port transmits one packet at a time: the wire is busy until busy_until;
 *    a port_tx_done event is pending (tx_ev) only when something waits for it;
 *  - sw->buf_used is the sum of the sizes of data and control packets queued
 *    at the switch's ports (PFC frames are MAC-generated and not buffered);
 *  - a down port queues nothing: what is sent to it is lost at once;
 *  - lossless mode (see "shared buffer and PFC" below): the lossless class is
 *    never dropped and the buffer never overrun; fab_assert_lossless checks it
 *    after every run.
 *
 * ECN (RED at dequeue): with q the bytes left in the departing packet's class
 * queue, q <= kmin never marks, q >= kmax always marks, and in between the
 * probability rises linearly from 0 to pmax (as the DCQCN ns-3 model does).
 */
#include "net/port.h"

#include <string.h>

#include "core/err.h"
#include "core/mem.h"
#include "net/fabric.h"
#include "net/host.h"
#include "net/lb.h"
#include "net/node.h"
#include "net/switch.h"

static void port_try_send(struct fabric *f, struct port *pt);
static void wire_push(struct fabric *f, struct port *pt, pq_ent e, simtime_t at);
static void wire_slow(struct fabric *f, struct port *pt, pq_ent e, simtime_t at);

void port_stats_sync(struct port *pt, simtime_t now)
{
	pt->qbytes_integral = pt->qbytes_neg_t + (unsigned __int128)pt->qbytes_total * now;
}

/* qbytes_neg_t: the integral of the queue up to T is the sum over changes
 * of delta x (T - t), that is qbytes_total x T - sum(delta x t); exact in
 * modulo 2^128 arithmetic, as the sum of qbytes_total x dt was. */
static inline void q_change(struct fabric *f, struct port *pt, uint8_t cls, int64_t delta)
{
	pt->qbytes_neg_t -= (unsigned __int128)(__int128)delta * f->q->now;
	pt->q[cls].bytes += (uint64_t)delta;
	pt->qbytes_total += (uint64_t)delta;
	if (pt->qbytes_total > pt->max_qbytes)
		pt->max_qbytes = pt->qbytes_total;
}

/* ---- PFC head-of-line blocking (fab_hol_enable) ---------------------------- */
static inline void hol_wait(struct fabric *f, const struct packet *p)
{
	struct fab_hol *h = f->hol;
	if (p->conn >= h->nconns || p->type != PKT_DATA)
		return;
	if (h->n[p->conn]++ == 0)
		h->since[p->conn] = f->q->now;
}

static void hol_span(struct fab_hol *h, uint32_t conn, simtime_t now)
{
	if (h->nspans == h->cap) {
		h->cap *= 2;
		h->spans = mp_realloc(h->spans, h->cap * sizeof *h->spans);
	}
	h->spans[h->nspans++] =
	    (struct hol_span){ .conn = conn, .from = h->since[conn], .to = now };
}

static inline void hol_done(struct fabric *f, const struct packet *p)
{
	struct fab_hol *h = f->hol;
	if (p->conn >= h->nconns || p->type != PKT_DATA || !h->n[p->conn])
		return;
	if (--h->n[p->conn] == 0) {
		h->total[p->conn] += f->q->now - h->since[p->conn];
		if (h->spans)
			hol_span(h, p->conn, f->q->now);
	}
}

/* Every packet of class c queued at pt starts (or stops) waiting. */
static void hol_walk(struct fabric *f, const struct port *pt, uint8_t c, bool wait)
{
	const struct port_queue *q = &pt->q[c];
	for (uint32_t i = 0; q->first && i <= q->ring.n; i++) {
		const struct packet *p = pq_pkt(i ? pring_at(&q->ring, i - 1) : q->first);
		if (wait)
			hol_wait(f, p);
		else
			hol_done(f, p);
	}
}

void fab_hol_enable(struct fabric *f, uint32_t nconns)
{
	struct fab_hol *h = mp_calloc(1, sizeof *h);
	h->nconns = nconns;
	h->n = mp_calloc(nconns ? nconns : 1, sizeof *h->n);
	h->since = mp_calloc(nconns ? nconns : 1, sizeof *h->since);
	h->total = mp_calloc(nconns ? nconns : 1, sizeof *h->total);
	f->hol = h;
}

void fab_hol_spans(struct fabric *f)
{
	struct fab_hol *h = f->hol;
	h->cap = 64;
	h->spans = mp_malloc(h->cap * sizeof *h->spans);
}

void fab_pin(struct fabric *f, uint32_t conn, uint16_t pin, uint16_t ack_pin)
{
	if (conn >= f->npin) {
		if (!pin && !ack_pin)
			return;
		uint32_t n = conn + 1 > 2 * f->npin ? conn + 1 : 2 * f->npin;
		f->pin = mp_realloc(f->pin, n * sizeof *f->pin);
		memset(f->pin + f->npin, 0, (n - f->npin) * sizeof *f->pin);
		if (f->ack_pin) {
			f->ack_pin = mp_realloc(f->ack_pin, n * sizeof *f->ack_pin);
			memset(f->ack_pin + f->npin, 0, (n - f->npin) * sizeof *f->ack_pin);
		}
		f->npin = n;
	}
	if (ack_pin && !f->ack_pin)
		f->ack_pin = mp_calloc(f->npin, sizeof *f->ack_pin);
	f->pin[conn] = pin;
	if (f->ack_pin)
		f->ack_pin[conn] = ack_pin;
}

simtime_t fab_hol_blocked(const struct fabric *f, uint32_t c)
{
	const struct fab_hol *h = f->hol;
	if (!h || c >= h->nconns)
		return 0;
	return h->total[c] + (h->n[c] ? f->q->now - h->since[c] : 0);
}

/* Is there anything this port could send once the wire frees? */
static inline bool port_has_work(const struct port *pt)
{
	if (pt->qbytes_total)
		return true;
	return pt->nic_ring != NULL;
}

/* ---- A packet's departure ---------------------------------------------------
 * A queue keeps each packet as a pq_ent (net/pring.h): its address, with its
 * size and its ECN state in the bits an address leaves free, taken from the
 * packet when it is queued (it was just read to route it), when the port it
 * will come in on is written into it too. Sending it then reads the port
 * alone: its size times its serialisation, RED marks it on the entry, and the
 * arrival event carries the address and the mark, which the arrival writes
 * into the packet. At 8192 hosts a packet waits in a queue long enough to
 * leave the cache, and reading it at its departure would miss on most hops
 * (bench/notes/2026-11-28-packet-departure-and-equal-work.md). Nothing reads a packet on the wire but its arrival, so where
 * the mark is written changes no result, nor does writing in_port early,
 * since nothing else reads it once the packet is queued. Where the departure
 * still reads the packet (a lossless switch, which releases the bytes of the
 * port it came in on, p->in_port; a load balancer's sw_tx or host_tx hook),
 * the port's tx_reads_pkt bit says so: in_port is written at the departure
 * as before, and the prefetchers ask for the packet. */
_Static_assert(PQ_CE == PKT_F_CE && PQ_ECT == PKT_F_ECT,
	       "an entry's flags and an arrival's mark are the packet's own bits");

static inline pq_ent pq_ent_of(const struct packet *p)
{
	unsigned ect = (p->flags & PKT_F_ECT) & (p->type == PKT_DATA);
	return (uint64_t)(uintptr_t)p | (uint64_t)p->size << 48 | (p->flags & PKT_F_CE) | ect;
}

/* A class's queue: its first packet, then its ring. */
static inline void pq_push(struct port_queue *q, pq_ent e)
{
	if (!q->first)
		q->first = e;
	else
		pring_push(&q->ring, e);
}

static inline pq_ent pq_pop(struct port_queue *q)
{
	pq_ent e = q->first;
	q->first = q->ring.n ? pring_pop(&q->ring) : 0;
	return e;
}

static void port_tx_done(void *obj, uint64_t arg);

/* The argument of a port_tx_done event: the address of the ring slot that
 * holds the packet the port will send after the next one, which taking the
 * next one reads (or, when none waits behind it, that next packet itself if
 * its departure reads it, else 0; the flow at the head of the NIC's round
 * robin, which the pull's prefetcher reads, when the port will pull from
 * it). A hint for the run loop only, which prefetches an event's argument
 * some events ahead (core/evq.c);
 * tx_done_prefetch prefetches the next packet, kept in the port (`first`).
 * The ring slot is a miss nothing else prefetches, the costliest at 8192
 * hosts (bench/notes/2026-11-24-packet-hop-rounds-1-3.md). The handler never reads the hint, and it never orders
 * events, so a stale one (a class that PFC pauses, or an ACK queued ahead
 * meanwhile) costs a useless prefetch, nothing else. */
static inline uint64_t tx_hint(const struct port *pt)
{
	unsigned ready = pt->qmask & ~pt->paused;
	if (!ready)
		return (uint64_t)(uintptr_t)pt->nic_ring;
	const struct port_queue *q = &pt->q[__builtin_ctz(ready)];
	if (!q->ring.n)
		return pt->tx_reads_pkt ? (uint64_t)(uintptr_t)pq_pkt(q->first) : 0;
	return (uint64_t)(uintptr_t)pring_head_slot(&q->ring);
}

/* The port has something to send: start now if the wire is free, else make
 * sure a port_tx_done event will come when it frees. Ports whose queue is
 * empty when they finish a packet schedule no event at all, which saves one
 * event per packet per uncongested hop. */
static inline void port_kick(struct fabric *f, struct port *pt)
{
	if (pt->tx_ev)
		return;
	if (f->q->now >= pt->busy_until) {
		port_try_send(f, pt);
	} else {
		pt->tx_ev = true;
		evq_at(f->q, &pt->evs, pt->busy_until, port_tx_done, pt, tx_hint(pt));
	}
}

static void port_transmit(struct fabric *f, struct port *pt, pq_ent e);
static void switch_depart(struct fabric *f, struct port *pt, pq_ent *e, uint8_t c);
static inline pq_ent host_depart(struct fabric *f, struct port *pt, pq_ent e);
static inline pq_ent port_depart(struct fabric *f, struct port *pt, pq_ent e, uint8_t c);

static void switch_release(struct fabric *f, struct sw *s, const struct packet *p, uint8_t c,
			   uint64_t z);

/* A packet for a port whose link is down is lost at once. */
static void port_lose(struct fabric *f, struct port *pt, struct packet *p)
{
	if (pt->owner->kind == NODE_SWITCH && p->cls != CLS_PAUSE)
		switch_release(f, (struct sw *)pt->owner, p, p->cls, p->size);
	pt->st.drops_link++;
	pkt_free(f, p);
}

static void port_enqueue(struct fabric *f, struct port *pt, struct packet *p)
{
	/* the port it will come in on, written now, while it is in the cache,
	 * when its departure will not read it (wire_push) */
	if (!pt->tx_reads_pkt)
		p->in_port = pt->peer_idx;
	/* fast path: an idle, empty, unpaused, up port sends at once; the packet
	 * never touches the queue ring (same result as queue-then-dequeue) */
	if (!pt->tx_ev && pt->qbytes_total == 0 && f->q->now >= pt->busy_until && pt->up &&
	    !(pt->paused & (1u << p->cls)) && !pt->nic_ring) {
		/* what the departure runs may send on this very port (a PFC
		 * frame its release triggers, or a probe a load balancer's hook
		 * sends): held by tx_ev, as in port_try_send, it queues behind p */
		pt->tx_ev = true;
		pq_ent e = port_depart(f, pt, pq_ent_of(p), p->cls);
		pt->tx_ev = false;
		port_transmit(f, pt, e);
		return;
	}
	if (__builtin_expect(!pt->up, 0)) {
		port_lose(f, pt, p);
		return;
	}
	pq_push(&pt->q[p->cls], pq_ent_of(p));
	pt->qmask |= (uint8_t)(1u << p->cls);
	if (f->hol && (pt->paused & (1u << p->cls)) && pt->owner->kind == NODE_SWITCH)
		hol_wait(f, p);
	q_change(f, pt, p->cls, p->size);
	port_kick(f, pt);
}

/* ---- shared buffer and PFC -------------------------------------------------
 * Lossless mode follows the switch MMU of the HPCC ns-3 model (Li et al., "HPCC:
 * High Precision Congestion Control", SIGCOMM 2019; its switch-mmu.cc) and of
 * ConWeave's (Song et al., "Network Load Balancing with In-network Reordering
 * Support for RDMA", SIGCOMM 2023). The buffer B is split, per switch, into
 *  - headroom: per ingress port, room for the lossless class (CLS_DATA) that
 *    still arrives after the port decides to pause its upstream
 *    (port->hdrm_cap, sized in fabric.c: mmu_size);
 *  - control reserve: per ingress port, cfg.ctrl_reserve bytes for ACK, NACK
 *    and CNP (CLS_CTRL), which PFC never pauses (HPCC reserves 4 KB per port);
 *  - the shared pool, B less all of that (sw->shared_size).
 * A lossless packet goes to the shared pool while its ingress port's share
 * stays at or under XOFF (static cfg.pfc_xoff, or dynamic: pfc_alpha x the free
 * shared pool, HPCC's threshold) and the pool has room; otherwise to the port's
 * headroom, and the port sends PAUSE. Leaving, a packet frees headroom first
 * (as HPCC does), and the port sends RESUME once its headroom is empty and its
 * share is pfc_xon_gap under XOFF (or zero). Control packets use their port's
 * reserve, then the shared pool; other classes (CLS_DATA2) are lossy in the
 * shared pool, with the dynamic threshold of lossy mode.
 * Why the headroom suffices: a port's headroom is empty whenever it has not
 * paused its upstream; from the arrival that sends PAUSE, what can still
 * arrive is what the upstream starts before the PAUSE reaches it, which is at
 * most rate x (both directions' delay) + 3 MTU (the packet that triggered it,
 * the one our port is sending ahead of the PAUSE, the one the upstream is
 * sending when it arrives) + the PAUSE frame itself. At most one PFC frame
 * waits in a port's queue (a newer one rewrites it: port->pfc_pending). */
static uint64_t pfc_xoff(const struct fabric *f, const struct sw *s)
{
	if (f->cfg.pfc_xoff)
		return f->cfg.pfc_xoff;
	return (uint64_t)(f->cfg.pfc_alpha * (double)(s->shared_size - s->shared_used));
}

static void pfc_send(struct fabric *f, struct port *ip, uint8_t cls, bool xon)
{
	if (xon) {
		ip->pause_sent &= (uint8_t) ~(1u << cls);
		ip->st.resume_sent++;
	} else {
		ip->pause_sent |= (uint8_t)(1u << cls);
		ip->st.pause_sent++;
	}
	if (ip->cut && f->cut_pfc)
		f->cut_pfc(f->cut_ctx, ip);
	struct packet *q = ip->pfc_pending;
	if (q && q->p0 == cls) { /* not sent yet: it says the new state instead */
		if (!(q->flags & PKT_F_XON) == !xon)
			return;
		if (xon)
			ip->st.pause_sent--;
		else
			ip->st.resume_sent--;
		q->flags = xon ? PKT_F_XON : 0;
		return;
	}
	struct packet *p = pkt_alloc(f);
	p->type = PKT_PAUSE;
	p->cls = CLS_PAUSE;
	p->size = (uint16_t)f->cfg.ctrl_size;
	p->p0 = cls;
	p->flags = xon ? PKT_F_XON : 0;
	p->conn = UINT32_MAX;
	p->src = p->dst = UINT32_MAX;
	p->entropy = 0;
	p->ts = f->q->now;
	port_enqueue(f, ip, p);
	ip->pfc_pending = ip->q[CLS_PAUSE].first ? p : NULL;
}

static void pfc_on_frame(struct fabric *f, struct port *pt, const struct packet *p)
{
	uint8_t bit = (uint8_t)(1u << p->p0);
	if (p->flags & PKT_F_XON) {
		if (pt->paused & bit) {
			pt->paused &= (uint8_t)~bit;
			pt->st.paused_time += f->q->now - pt->paused_at[p->p0];
			if (f->hol && pt->owner->kind == NODE_SWITCH)
				hol_walk(f, pt, (uint8_t)p->p0, false);
			port_kick(f, pt);
		}
	} else if (!(pt->paused & bit)) {
		pt->paused |= bit;
		pt->paused_at[p->p0] = f->q->now;
		pt->st.pause_rcvd++;
		if (f->hol && pt->owner->kind == NODE_SWITCH)
			hol_walk(f, pt, (uint8_t)p->p0, true);
	}
}

/* Room in the shared pool for `size` more bytes of class c toward `out`, under
 * the dynamic threshold of lossy admission. */
static inline bool shared_fits(const struct fabric *f, const struct sw *s, const struct port *out,
			       uint8_t c, uint64_t size)
{
	uint64_t free_b = s->shared_size - s->shared_used;
	return size <= free_b &&
	       (double)(out->q[c].bytes + size) <= f->cfg.dt_alpha * (double)free_b &&
	       !(f->cfg.queue_limit && out->q[c].bytes + size > f->cfg.queue_limit);
}

/* Lossless admission of p, arriving on `in` for `out`: false = drop (never
 * for the lossless class). */
static bool mmu_admit(struct fabric *f, struct sw *s, struct port *in, const struct port *out,
		      const struct packet *p)
{
	uint8_t c = p->cls;
	uint64_t z = p->size;
	if (c == CLS_DATA) {
		if (in->ingress_bytes[c] + z <= pfc_xoff(f, s) &&
		    s->shared_used + z <= s->shared_size) {
			in->ingress_bytes[c] += z;
			s->shared_used += z;
			return true;
		}
		in->hdrm_used += z;
		if (__builtin_expect(in->hdrm_used > in->hdrm_cap, 0)) /* fab_assert_lossless */
			f->lossless_overflow +=
			    in->hdrm_used - in->hdrm_cap < z ? in->hdrm_used - in->hdrm_cap : z;
		if (!(in->pause_sent & (1u << c)))
			pfc_send(f, in, c, false);
		return true;
	}
	uint64_t need = z; /* of the shared pool */
	if (c == CLS_CTRL) {
		uint64_t used = in->ingress_bytes[c], r = f->cfg.ctrl_reserve;
		need = used + z <= r ? 0 : used >= r ? z : used + z - r;
		if (need && !shared_fits(f, s, out, c, need))
			return false;
		in->ingress_bytes[c] += z;
	} else if (!shared_fits(f, s, out, c, z)) {
		return false;
	}
	s->shared_used += need;
	return true;
}

/* A packet the switch itself sends (PORT_SELF): from the shared pool alone,
 * no ingress port's counters, no headroom, no PFC. */
static bool mmu_admit_self(struct sw *s, const struct packet *p)
{
	if (s->shared_used + p->size > s->shared_size)
		return false;
	s->shared_used += p->size;
	return true;
}

/* A packet of class c and z bytes leaves a switch's buffer (sent or lost):
 * release its bytes, and let PFC resume the port it came in on (only then is
 * the packet read). */
static void switch_release(struct fabric *f, struct sw *s, const struct packet *p, uint8_t c,
			   uint64_t z)
{
	s->buf_used -= z;
	if (f->cfg.mode != BUF_LOSSLESS)
		return;
	if (__builtin_expect(p->in_port == PORT_SELF, 0)) { /* mmu_admit_self */
		s->shared_used -= z;
		return;
	}
	struct port *ip = &s->node.ports[p->in_port];
	if (c == CLS_DATA) {
		uint64_t h = ip->hdrm_used < z ? ip->hdrm_used : z; /* headroom first */
		ip->hdrm_used -= h;
		ip->ingress_bytes[c] -= z - h;
		s->shared_used -= z - h;
		if ((ip->pause_sent & (1u << c)) && ip->hdrm_used == 0 &&
		    (ip->ingress_bytes[c] == 0 ||
		     ip->ingress_bytes[c] + f->cfg.pfc_xon_gap <= pfc_xoff(f, s)))
			pfc_send(f, ip, c, true);
	} else if (c == CLS_CTRL) {
		uint64_t used = ip->ingress_bytes[c], r = f->cfg.ctrl_reserve;
		uint64_t over = used > r ? used - r : 0;
		ip->ingress_bytes[c] = used - z;
		s->shared_used -= over < z ? over : z;
	} else {
		s->shared_used -= z;
	}
}

/* ---- the wire ---------------------------------------------------------------- */
/* Put a packet on the wire, arriving at `at` (never before the packet ahead
 * of it: a link does not reorder, even when its delay has just shrunk). One
 * event per packet in flight: the radix heap (core/evq.h) makes a large number
 * of pending events cheap, and the packet rides in the event's argument. The
 * event's object is the node the packet arrives at, and the packet names the
 * port it comes in on (`in_port`, written when it was queued, or here when
 * the departure reads the packet: "A packet's departure" above), so an
 * arrival never reads the sending port, whose line is out of cache at 8192
 * hosts (bench/notes/2026-11-24-arrival-names-its-node.md). The event is still this port's (its key), so arrivals keep their
 * order. A link that fails takes the packets on its wire with it
 * (port_link_down). */
static void wire_push(struct fabric *f, struct port *pt, pq_ent e, simtime_t at)
{
	if (at < pt->wire_last)
		at = pt->wire_last;
	pt->wire_last = at;
	if (pt->tx_reads_pkt) /* else written when it was queued (port_enqueue) */
		pq_pkt(e)->in_port = pt->peer_idx;
	evq_at(f->q, &pt->evs, at, port_wire_arrive, pt->peer_node, port_wire_arg(e));
}

/* A wire that is lossy (corruption) or cut by a partition (sim/part.c):
 * the packet may be lost, and if not it arrives on this rank (wire_push) or
 * on the rank the link leads to, as a message that carries the packet, its
 * mark and the key its arrival event would have had here, so that it takes
 * the same place in the order of events there. */
static __attribute__((noinline)) void wire_slow(struct fabric *f, struct port *pt, pq_ent e,
						simtime_t at)
{
	struct packet *p = pq_pkt(e);
	if (pt->lossy_link && p->type != PKT_PAUSE && rng_u01(&pt->rng) < pt->loss_rate) {
		pt->st.drops_link++;
		pkt_free(f, p);
		return;
	}
	if (!pt->cut) {
		wire_push(f, pt, e, at);
		return;
	}
	if (at < pt->wire_last)
		at = pt->wire_last;
	pt->wire_last = at;
	p->in_port = pt->peer_idx;
	p->flags |= (uint8_t)(e & PKT_F_CE); /* what port_wire_arrive writes */
	f->cut_send(f->cut_ctx, pt, p, at, evq_key(&pt->evs));
	pkt_free(f, p);
}

#define ROUTE_NONE UINT16_MAX /* no route: the packet is lost */
/* ahead only: the load balancer's state must say (a switch's 65535th port,
 * index 65534, reads as this too: its prefetch is skipped, nothing else) */
#define ROUTE_LB (UINT16_MAX - 1)

/* The egress port toward p's destination at switch s: the host's port at its
 * ToR, the one next hop, the pinned one (fab_pin), or the load balancer's
 * choice. Ahead of time (`ahead`: the run loop's prefetcher, which must change
 * nothing), a choice that reads or writes the scheme's state is not made:
 * ROUTE_LB, with the next-hop set it will read prefetched. */
/* The ToR of p's destination (its rail's), and in *hr the index of that
 * host rail in host_tor and host_port. */
static inline uint32_t dst_tor(const struct fabric *f, const struct packet *p, uint32_t *hr)
{
	*hr = p->dst * f->rails + p->rail;
	return f->host_tor[*hr];
}

static inline uint16_t route_port(struct fabric *f, struct sw *s, const struct packet *p,
				  bool ahead)
{
	uint32_t hr, t = dst_tor(f, p, &hr);
	if (t == s->tor_idx)
		return f->host_port[hr];
	const struct nhset *nh = &s->route[t];
	if (__builtin_expect(nh->n == 0, 0))
		return ROUTE_NONE;
	/* a member whose link has failed stays until the routes learn of it
	 * (cfg.failover_delay): what is sent to it meanwhile is lost */
	const uint16_t *cand = f->nh_ports + nh->off;
	if (nh->n == 1)
		return cand[0];
	uint16_t pin = fab_pin_of(f, p);
	if (__builtin_expect(pin != 0, 0))
		return cand[fab_pin_choice(pin, nh->n)];
	if (ahead && !f->lb->choose_pure) {
		__builtin_prefetch(nh);
		return ROUTE_LB;
	}
	return f->lb->choose(f, s, p, cand, nh->n);
}

/* The switch an arrival at node n will route p at, or NULL: a host, or a
 * PFC frame (it carries no destination host). */
static inline struct sw *routing_switch(const struct node *n, const struct packet *p)
{
	return n->kind != NODE_SWITCH || p->type == PKT_PAUSE ? NULL : (struct sw *)n;
}

/* What forwarding this arrival will touch, in two stages, so that no stage
 * waits on a line the one before it asked for. At a switch, the first stage
 * reads the packet (prefetched with the event) and asks for the route entry
 * the choice of egress port will read, or the ToR's host port; the late
 * stage (wire_arrive_prefetch_late) makes that choice ahead, when the route
 * names it without a load balancer's state (route_port ahead), and asks for
 * the egress port the packet will be queued at. At 8192 hosts the egress
 * port and the route entry read on the way to it are the misses this stage
 * hides (bench/notes/2026-11-24-packet-hop-rounds-4-5.md). At a lossless switch also
 * the counters of the port the packet comes in on, which admission reads
 * (mmu_admit): a line of a random port per hop. At a host: the host, its NIC
 * port and the transport's state. */
static void wire_arrive_prefetch(const void *obj, uint64_t arg)
{
	const struct node *n = obj;
	const struct packet *p = port_wire_packet(arg);
	const struct fabric *f = n->fab;
	if (n->kind == NODE_HOST) {
		/* its NIC port (where the reply or the next data packet
		 * queues) and what the transport's host_rx will read */
		evq_prefetch_mask(&n->ports[p->in_port], PORT_HOT_LINES);
		if (f->host_rx_prefetch)
			f->host_rx_prefetch(f->pf_ctx, p, false);
		return;
	}
	const struct sw *s = routing_switch(n, p);
	if (!s)
		return;
	uint32_t hr, t = dst_tor(f, p, &hr);
	if (t == s->tor_idx)
		__builtin_prefetch(&f->host_port[hr]);
	else
		__builtin_prefetch(&s->route[t]);
	if (f->cfg.mode == BUF_LOSSLESS)
		__builtin_prefetch(&n->ports[p->in_port].ingress_bytes[p->cls]);
}

/* The packet this port will send next, the first of its first ready queue,
 * when its departure reads it (tx_reads_pkt; the ring slot that taking it
 * reads was prefetched with the port: tx_hint), and the node sending it,
 * which the late stage reads. */
static void tx_done_prefetch(const void *obj, uint64_t arg)
{
	(void)arg;
	const struct port *pt = obj;
	unsigned ready = pt->qmask & ~pt->paused;
	if (ready) {
		if (pt->tx_reads_pkt)
			__builtin_prefetch(pq_pkt(pt->q[__builtin_ctz(ready)].first));
		__builtin_prefetch(pt->owner);
	} else if (pt->nic_ring) {
		/* a host's NIC pulls from its round robin: the host (port_tx_done
		 * reads it) and the transport's state of the flow at its head */
		__builtin_prefetch(pt->owner);
		const struct fabric *f = pt->peer_node->fab;
		if (f->nic_pull_prefetch)
			f->nic_pull_prefetch(f->pf_ctx, pt->nic_ring, false);
	}
}

/* The late stages: at a switch, the egress port (above); at a host, what the
 * connection (prefetched by the stages above) points to. */
static void wire_arrive_prefetch_late(const void *obj, uint64_t arg)
{
	const struct node *n = obj;
	const struct packet *p = port_wire_packet(arg);
	if (n->kind == NODE_HOST) {
		const struct fabric *f = n->fab;
		if (f->host_rx_prefetch)
			f->host_rx_prefetch(f->pf_ctx, p, true);
		return;
	}
	struct sw *s = routing_switch(n, p);
	if (!s)
		return;
	uint16_t o = route_port(s->node.fab, s, p, true);
	if (o >= ROUTE_LB)
		return;
	evq_prefetch_mask(&s->node.ports[o], PORT_HOT_LINES); /* as the run loop's */
}

/* The late stages: at a lossless switch, the port the departing packet came
 * in on, whose PFC state and counters (one line) its release updates
 * (switch_release);
 * at a host, what the connection at the head of the NIC's round robin points
 * to. The ingress port's lines at arrival and departure are misses nothing
 * else asks for ahead in RoCEv2's 8192-host runs
 * (bench/notes/2026-11-24-rocev2-8192-hosts.md). */
static void tx_done_prefetch_late(const void *obj, uint64_t arg)
{
	(void)arg;
	const struct port *pt = obj;
	unsigned ready = pt->qmask & ~pt->paused;
	if (ready) {
		const struct node *n = pt->owner;
		const struct packet *p = pq_pkt(pt->q[__builtin_ctz(ready)].first);
		if (n->kind == NODE_SWITCH && n->fab->cfg.mode == BUF_LOSSLESS &&
		    p->cls != CLS_PAUSE && p->in_port != PORT_SELF) {
			const struct port *ip = &n->ports[p->in_port];
			__builtin_prefetch(ip->ingress_bytes); /* line 5 */
		}
	} else if (pt->nic_ring) {
		const struct fabric *f = pt->peer_node->fab;
		if (f->nic_pull_prefetch)
			f->nic_pull_prefetch(f->pf_ctx, pt->nic_ring, true);
	}
}

void port_register_prefetchers(void)
{
	evq_set_prefetch(port_wire_arrive, wire_arrive_prefetch);
	/* an arrival's object is a node: a host is one line, a switch's line 0 */
	evq_set_prefetch_lines(port_wire_arrive, 1);
	evq_set_prefetch(port_tx_done, tx_done_prefetch);
	evq_set_prefetch_lines(port_tx_done, PORT_HOT_LINES);
	evq_set_prefetch_arg(port_wire_arrive);
	evq_set_prefetch_arg(port_tx_done);
	evq_set_prefetch_late(port_wire_arrive, wire_arrive_prefetch_late);
	evq_set_prefetch_late(port_tx_done, tx_done_prefetch_late);
}

void port_wire_arrive(void *obj, uint64_t arg)
{
	struct packet *p = port_wire_packet(arg);
	p->flags |= (uint8_t)(arg & PKT_F_CE);
	node_recv(obj, p->in_port, p);
}

/* The arrival of a packet whose link failed under it (port_link_down): lost,
 * counted at the port that sent it, when it would have arrived. */
static void wire_lost(void *obj, uint64_t arg)
{
	struct node *n = obj;
	struct packet *p = port_wire_packet(arg);
	n->ports[p->in_port].peer->st.drops_link++;
	pkt_free(n->fab, p);
}

void port_wire_lost(void *obj, uint64_t arg)
{
	wire_lost(obj, arg);
}

static bool on_wire_of(const void *ctx, const void *obj, uint64_t arg)
{
	const struct port *in = ctx; /* the port the wire ends at */
	return obj == in->owner && port_wire_packet(arg)->in_port == in->idx;
}

bool port_event_carries_packet(ev_fn fn)
{
	return fn == port_wire_arrive || fn == wire_lost || fn == port_wire_lost;
}

void port_drain(struct fabric *f, struct port *pt)
{
	for (int c = 0; c < NCLS; c++)
		while (pt->q[c].first)
			pkt_free(f, pq_pkt(pq_pop(&pt->q[c])));
	pt->qmask = 0;
	pt->pfc_pending = NULL;
}

void port_link_down(struct fabric *f, struct port *pt)
{
	pt->pfc_pending = NULL;
	for (uint8_t c = 0; c < NCLS; c++)
		while (pt->q[c].first) {
			pq_ent e = pq_pop(&pt->q[c]);
			struct packet *p = pq_pkt(e);
			q_change(f, pt, c, -(int64_t)pq_size(e));
			if (f->hol && (pt->paused & (1u << c)) && pt->owner->kind == NODE_SWITCH)
				hol_done(f, p);
			port_lose(f, pt, p);
		}
	pt->qmask = 0;
	/* and what is on its wire, when it would have arrived (a cut wire's
	 * packets not yet handed to the rank it leads to: that rank's) */
	evq_rehandle(f->q, port_wire_arrive, wire_lost, on_wire_of, pt->peer);
	if (pt->cut)
		f->cut_down(f->cut_ctx, pt);
}

void port_link_up(struct fabric *f, struct port *pt)
{
	/* a RESUME the link lost while down: the peer no longer pauses us */
	for (uint8_t c = 0; c < NCLS; c++) {
		uint8_t bit = (uint8_t)(1u << c);
		if ((pt->paused & bit) && !(pt->peer->pause_sent & bit)) {
			pt->paused &= (uint8_t)~bit;
			pt->st.paused_time += f->q->now - pt->paused_at[c];
			if (f->hol && pt->owner->kind == NODE_SWITCH)
				hol_walk(f, pt, c, false);
		}
	}
	if (port_has_work(pt))
		port_kick(f, pt);
}

/* ---- transmission ----------------------------------------------------------- */
static void port_tx_done(void *obj, uint64_t arg)
{
	(void)arg;
	struct port *pt = obj;
	pt->tx_ev = false;
	port_try_send(pt->owner->fab, pt);
}

/* INT (packet.h): a data packet leaving a switch egress gets this hop's
 * record: now, the bytes the port sent before it, the bytes it leaves
 * queued, the line rate (the HPCC authors' switch-node.cc stamps UDP data
 * at dequeue; IntHeader::PushHop stops at maxHop). */
static void int_stamp(const struct fabric *f, const struct port *pt, struct packet *p)
{
	struct pkt_int *in = pkt_int(f, p);
	if (p->type != PKT_DATA || in->nhop >= PKT_INT_MAX_HOPS)
		return;
	struct pkt_int_hop *h = &in->hop[in->nhop++];
	h->ts = f->q->now;
	h->tx_bytes = pt->tx_bytes;
	h->qlen = pt->qbytes_total;
	h->rate_bps = pt->rate_bps;
}

/* A packet of class c leaves a switch's buffer for the wire: release it, and
 * mark ECN on the queue it leaves behind, in its entry *e (the arrival writes
 * the mark into the packet: "A packet's departure" above). */
static void switch_depart(struct fabric *f, struct port *pt, pq_ent *e, uint8_t c)
{
	struct sw *s = (struct sw *)pt->owner;
	if (f->cfg.mode == BUF_LOSSLESS)
		switch_release(f, s, pq_pkt(*e), c, pq_size(*e));
	else /* what switch_release does of a lossy switch, without the packet */
		s->buf_used -= pq_size(*e);
	if (f->cfg.ecn && (*e & PQ_ECT)) {
		uint64_t q = pt->q[c].bytes;
		bool mark = q >= f->cfg.kmax;
		if (!mark && q > f->cfg.kmin) {
			double prob = f->cfg.pmax * (double)(q - f->cfg.kmin) /
				      (double)(f->cfg.kmax - f->cfg.kmin);
			mark = rng_u01(&pt->rng) < prob;
		}
		/* a port counts the marks it makes: a packet marked upstream
		 * leaves marked and is not counted again, so a run's total
		 * counts each mark once. The draw is made for it all the same,
		 * so a port's random stream does not depend on what happened
		 * upstream. */
		if (mark && !(*e & PQ_CE)) {
			*e |= PQ_CE;
			if (++pt->ecn_marks_lo == 0)
				pt->st.ecn_marks += 256;
		}
	}
	if (f->lb->sw_tx) { /* the hook sees the packet as it leaves, mark included */
		struct packet *p = pq_pkt(*e);
		p->flags |= (uint8_t)(*e & PKT_F_CE);
		f->lb->sw_tx(f, s, pt, p);
		*e = pq_ent_of(p);
	}
	if (__builtin_expect(f->int_off != 0, 0))
		int_stamp(f, pt, pq_pkt(*e));
}

/* A host's packet leaves: the load balancer's hook, if it has one, sees it
 * (and may change it: the entry is read from it again). */
static inline pq_ent host_depart(struct fabric *f, struct port *pt, pq_ent e)
{
	struct packet *p = pq_pkt(e);
	f->lb->host_tx(f, (struct host *)pt->owner, p);
	return pq_ent_of(p);
}

/* A packet of class c leaves this port, from its queue or at once: a switch
 * releases it and may mark it, a host's load balancer sees it; a PFC frame
 * leaves as it is. */
static inline pq_ent port_depart(struct fabric *f, struct port *pt, pq_ent e, uint8_t c)
{
	if (c == CLS_PAUSE)
		return e;
	if (pt->owner->kind == NODE_SWITCH)
		switch_depart(f, pt, &e, c);
	else if (f->lb->host_tx)
		e = host_depart(f, pt, e);
	return e;
}

/* Take the next eligible packet: strict priority over classes not paused by
 * PFC; a host NIC pulls data from its round robin when its queues are empty.
 * 0 when there is none. */
static pq_ent port_dequeue(struct fabric *f, struct port *pt)
{
	unsigned ready = pt->qmask & ~pt->paused;
	if (ready) {
		uint8_t c = (uint8_t)__builtin_ctz(ready); /* strict priority: lowest class */
		pq_ent e = pq_pop(&pt->q[c]);
		if (!pt->q[c].first)
			pt->qmask &= (uint8_t) ~(1u << c);
		q_change(f, pt, c, -(int64_t)pq_size(e));
		if (c == CLS_PAUSE && pt->owner->kind == NODE_SWITCH)
			pt->pfc_pending = NULL;
		return port_depart(f, pt, e, c);
	}
	if (pt->nic_ring && !(pt->paused & (1u << CLS_DATA))) {
		while (pt->nic_ring) {
			struct nic_flow *fl = pt->nic_ring;
			struct packet *p = f->nic_pull(f->cb_ctx, fl);
			if (p) {
				pt->nic_ring = fl->next;   /* round robin: next flow goes next */
				p->in_port = pt->peer_idx; /* as port_enqueue does */
				pq_ent e = pq_ent_of(p);
				return f->lb->host_tx ? host_depart(f, pt, e) : e;
			}
			nic_deactivate(f, fl);
		}
	}
	return 0;
}

/* Serialise the packet of entry e now (the wire is free) and put it on the
 * wire. */
static void port_transmit(struct fabric *f, struct port *pt, pq_ent e)
{
	simtime_t now = f->q->now;
	MP_ASSERT(now >= pt->busy_until); /* one packet at a time */
	uint32_t size = pq_size(e);
	simtime_t ser = time_ser_exact(size, pt->rate_bps, &pt->ser_rem);
	pt->busy_until = now + ser;
	pt->tx_pkts++;
	pt->tx_bytes += size;
	if (port_has_work(pt)) {
		pt->tx_ev = true;
		evq_at(f->q, &pt->evs, now + ser, port_tx_done, pt, tx_hint(pt));
	}
	if (__builtin_expect(pt->lossy_link | pt->cut, 0))
		wire_slow(f, pt, e, now + ser + pt->delay);
	else
		wire_push(f, pt, e, now + ser + pt->delay);
}

/* The wire is free: send the next eligible packet, if any. A NIC's pull runs
 * the transport, which may make a flow of this very port ready (nic_activate)
 * or send a packet from this host (host_send); tx_ev held meanwhile makes
 * either wait for the transmission this call starts (port_kick returns, the
 * enqueue's fast path is closed), so the wire never carries two packets at
 * once. A packet queued that way while nothing was pulled is sent here. */
static void port_try_send(struct fabric *f, struct port *pt)
{
	for (;;) {
		pt->tx_ev = true;
		pq_ent e = port_dequeue(f, pt);
		pt->tx_ev = false;
		if (!e) {
			if (pt->qmask & ~pt->paused)
				continue;
			return;
		}
		if (__builtin_expect(!pt->up, 0)) {
			pt->st.drops_link++;
			pkt_free(f, pq_pkt(e));
			continue;
		}
		port_transmit(f, pt, e);
		return;
	}
}

/* ---- hosts ----------------------------------------------------------------- */
void host_send(struct fabric *f, struct host *h, struct packet *p)
{
	struct port *pt = &h->node.ports[p->rail % h->node.nports];
	if (__builtin_expect(pt->bond_away, 0)) /* dual-ToR: the partner link carries it */
		pt = pt->bond;
	port_enqueue(f, pt, p);
}

void nic_activate(struct fabric *f, struct nic_flow *fl)
{
	if (fl->active)
		return;
	struct port *pt = fl->port;
	if (__builtin_expect(pt->bond_away, 0)) /* dual-ToR: the partner link carries it */
		pt = fl->port = pt->bond;
	fl->active = true;
	if (!pt->nic_ring) {
		fl->next = fl->prev = fl;
		pt->nic_ring = fl;
	} else { /* insert just before the current head: last in round-robin order */
		struct nic_flow *head = pt->nic_ring;
		fl->next = head;
		fl->prev = head->prev;
		head->prev->next = fl;
		head->prev = fl;
	}
	port_kick(f, pt);
}

void nic_deactivate(struct fabric *f, struct nic_flow *fl)
{
	(void)f;
	if (!fl->active)
		return;
	struct port *pt = fl->port;
	fl->active = false;
	if (fl->next == fl) {
		pt->nic_ring = NULL;
	} else {
		fl->prev->next = fl->next;
		fl->next->prev = fl->prev;
		if (pt->nic_ring == fl)
			pt->nic_ring = fl->next;
	}
	fl->next = fl->prev = NULL;
}

void port_bond_move(struct fabric *f, struct port *pt)
{
	struct port *to = pt->bond;
	while (pt->nic_ring) {
		struct nic_flow *fl = pt->nic_ring;
		nic_deactivate(f, fl);
		fl->port = to;
		nic_activate(f, fl);
	}
}

/* ---- switching --------------------------------------------------------------- */

/* Room in lossy switch s for p toward `out`: switch_forward's test, for a
 * trimmed header (a lossless switch does not trim: its data class is never
 * dropped, and mmu_admit stays inlined in its one caller). */
static bool lossy_fits(const struct fabric *f, const struct sw *s, const struct port *out,
		       const struct packet *p)
{
	const struct swcfg *cfg = &f->cfg;
	uint64_t free_b = s->buf_used < cfg->buffer ? cfg->buffer - s->buf_used : 0;
	return !(p->size > free_b ||
		 (double)(out->q[p->cls].bytes + p->size) > cfg->dt_alpha * (double)free_b ||
		 (cfg->queue_limit && out->q[p->cls].bytes + p->size > cfg->queue_limit));
}

/* p found no room in s toward `out`: dropped, or with switch.trim, if it is
 * data, cut to its first trim_size bytes and tried again in the control
 * class, ahead of the data (NDP's trimming; the UEC htsim's
 * compositequeue.cpp keeps trimmed headers in its high-priority queue). The
 * arriving packet is the one trimmed: htsim, half the time, trims a packet
 * already queued instead, against phase effects; mpsim keeps NDP's first
 * rule. The header is no longer ECN-capable (it waits in no data queue).
 * Only overflows come here, with few arguments (the switch and the fabric
 * are the port's, the ingress port the packet's: the caller writes in_port
 * as it would before queueing): the packet path of a switch that has room is the same
 * with trimming on or off. */
static __attribute__((noinline, cold)) void switch_overflow(struct port *out, struct packet *p)
{
	struct sw *s = (struct sw *)out->owner;
	struct fabric *f = s->node.fab;
	const struct swcfg *cfg = &f->cfg;
	if (cfg->trim && cfg->mode == BUF_LOSSY && p->type == PKT_DATA &&
	    !(p->flags & PKT_F_TRIM) && p->size > cfg->trim_size) {
		struct port_trim *t = &f->trim_st[fab_port_index(f, out)];
		t->pkts++;
		t->bytes += p->size - cfg->trim_size;
		p->size = (uint16_t)cfg->trim_size;
		p->flags = (uint8_t)((p->flags & ~PKT_F_ECT) | PKT_F_TRIM);
		p->cls = CLS_CTRL;
		if (lossy_fits(f, s, out, p)) {
			s->buf_used += p->size;
			if (s->buf_used > s->buf_peak)
				s->buf_peak = s->buf_used;
			port_enqueue(f, out, p);
			return;
		}
	}
	out->st.drops_buffer++;
	pkt_free(f, p);
}

static void switch_forward(struct fabric *f, struct sw *s, uint16_t in_idx, struct packet *p)
{
	if (f->lb->sw_rx) {
		f->lb->sw_rx(f, s, in_idx, p);
		if (__builtin_expect(p->flags & PKT_F_SINK, 0)) { /* the scheme's probe ends here */
			pkt_free(f, p);
			return;
		}
	}
	uint16_t o = route_port(f, s, p, false);
	if (__builtin_expect(o == ROUTE_NONE, 0)) {
		f->no_route_drops++;
		pkt_free(f, p);
		return;
	}
	struct port *out = &s->node.ports[o];
	uint8_t c = p->cls;
	const struct swcfg *cfg = &f->cfg;
	if (cfg->mode == BUF_LOSSLESS) {
		bool ok = __builtin_expect(in_idx != PORT_SELF, 1)
			      ? mmu_admit(f, s, &s->node.ports[in_idx], out, p)
			      : mmu_admit_self(s, p);
		if (__builtin_expect(!ok, 0)) {
			/* not the lossless class, or the switch's own packet with
			 * the shared pool full */
			switch_overflow(out, p);
			return;
		}
	} else {
		uint64_t free_b = s->buf_used < cfg->buffer ? cfg->buffer - s->buf_used : 0;
		if (p->size > free_b ||
		    (double)(out->q[c].bytes + p->size) > cfg->dt_alpha * (double)free_b ||
		    (cfg->queue_limit && out->q[c].bytes + p->size > cfg->queue_limit)) {
			p->in_port = in_idx;
			switch_overflow(out, p);
			return;
		}
	}
	s->buf_used += p->size;
	if (s->buf_used > s->buf_peak)
		s->buf_peak = s->buf_used;
	p->in_port = in_idx;
	port_enqueue(f, out, p);
}

void node_recv(struct node *n, uint16_t in_idx, struct packet *p)
{
	struct fabric *f = n->fab;
	if (__builtin_expect(p->type == PKT_PAUSE, 0)) {
		pfc_on_frame(f, &n->ports[in_idx], p);
		pkt_free(f, p);
		return;
	}
	if (n->kind == NODE_SWITCH) {
		switch_forward(f, (struct sw *)n, in_idx, p);
	} else {
		struct host *h = (struct host *)n;
		h->rx_bytes += p->size;
		if (f->lb->host_rx && f->lb->host_rx(f, h, p))
			return; /* the scheme's own packet */
		f->host_rx(f->cb_ctx, h, p);
	}
}

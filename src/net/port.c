/* port.c - the packet path: egress queues, transmission, arrival, switching,
 * shared-buffer admission, ECN marking at dequeue, and PFC.
 *
 * Invariants:
 *  - a port transmits one packet at a time: the wire is busy until busy_until;
 *    a port_tx_done event is pending (tx_ev) only when something waits for it;
 *  - sw->buf_used is the sum of the sizes of data and control packets queued
 *    at the switch's ports (PFC frames are MAC-generated and not buffered);
 *  - in lossless mode, port->ingress_bytes[c] counts bytes that arrived on that
 *    port and are still
 *    queued somewhere in the same switch (the PFC ingress counter);
 *  - in lossless mode a data packet is never dropped for lack of buffer; if the
 *    buffer is overrun (PFC thresholds too high for the headroom) the overrun is
 *    counted in fab->lossless_overflow so that a test can prove it stays zero.
 *
 * ECN (RED at dequeue): with q the bytes left in the departing packet's class
 * queue, q <= kmin never marks, q >= kmax always marks, and in between the
 * probability rises linearly from 0 to pmax (as the DCQCN ns-3 model does).
 */
#include "net/fabric.h"

#include "core/err.h"
#include "core/mem.h"

static void port_try_send(struct fabric *f, struct port *pt);
static void wire_push(struct fabric *f, struct port *pt, struct packet *p, simtime_t at);

void port_stats_sync(struct port *pt, simtime_t now)
{
	pt->qbytes_integral += (unsigned __int128)pt->qbytes_total * (now - pt->q_last_change);
	pt->q_last_change = now;
}

static inline void q_change(struct fabric *f, struct port *pt, uint8_t cls, int64_t delta)
{
	port_stats_sync(pt, f->q->now);
	pt->qbytes[cls] += (uint64_t)delta;
	pt->qbytes_total += (uint64_t)delta;
	if (pt->qbytes_total > pt->max_qbytes)
		pt->max_qbytes = pt->qbytes_total;
}

static void port_tx_done(void *obj, uint64_t arg);

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
		evq_at(f->q, &pt->evs, pt->busy_until, port_tx_done, pt, 0);
	}
}

static void port_transmit(struct fabric *f, struct port *pt, struct packet *p);
static void switch_depart(struct fabric *f, struct port *pt, struct packet *p);

static void port_enqueue(struct fabric *f, struct port *pt, struct packet *p)
{
	/* fast path: an idle, empty, unpaused, up port sends at once; the packet
	 * never touches the queue ring (same result as queue-then-dequeue) */
	if (!pt->tx_ev && pt->qbytes_total == 0 && f->q->now >= pt->busy_until && pt->up &&
	    !(pt->paused & (1u << p->cls)) && !pt->nic_ring) {
		if (pt->owner->kind == NODE_SWITCH && p->type != PKT_PAUSE)
			switch_depart(f, pt, p);
		port_transmit(f, pt, p);
		return;
	}
	pring_push(&pt->q[p->cls], p);
	pt->qmask |= (uint8_t)(1u << p->cls);
	q_change(f, pt, p->cls, p->size);
	port_kick(f, pt);
}

/* ---- PFC ------------------------------------------------------------------ */
static uint64_t pfc_xoff(const struct fabric *f, const struct sw *s)
{
	if (f->cfg.pfc_xoff)
		return f->cfg.pfc_xoff;
	uint64_t free_b = s->buf_used < f->cfg.buffer ? f->cfg.buffer - s->buf_used : 0;
	return (uint64_t)(f->cfg.pfc_alpha * (double)free_b);
}

static void pfc_send(struct fabric *f, struct port *ip, uint8_t cls, bool xon)
{
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
	if (xon) {
		ip->pause_sent &= (uint8_t) ~(1u << cls);
		ip->st.resume_sent++;
	} else {
		ip->pause_sent |= (uint8_t)(1u << cls);
		ip->st.pause_sent++;
	}
	port_enqueue(f, ip, p);
}

static void pfc_on_frame(struct fabric *f, struct port *pt, const struct packet *p)
{
	uint8_t bit = (uint8_t)(1u << p->p0);
	if (p->flags & PKT_F_XON) {
		if (pt->paused & bit) {
			pt->paused &= (uint8_t)~bit;
			pt->st.paused_time += f->q->now - pt->paused_at[p->p0];
			port_kick(f, pt);
		}
	} else if (!(pt->paused & bit)) {
		pt->paused |= bit;
		pt->paused_at[p->p0] = f->q->now;
		pt->st.pause_rcvd++;
	}
}

/* ---- the wire ---------------------------------------------------------------- */
/* Put a packet on the wire, arriving at `at` (never before the packet ahead
 * of it: a link does not reorder, even when its delay has just shrunk). One
 * event per packet in flight: the radix heap (core/evq.h) makes a large number
 * of pending events cheap, and the packet rides in the event's argument. */
static void wire_push(struct fabric *f, struct port *pt, struct packet *p, simtime_t at)
{
	if (at < pt->wire_last)
		at = pt->wire_last;
	pt->wire_last = at;
	evq_at(f->q, &pt->evs, at, port_wire_arrive, pt, (uint64_t)(uintptr_t)p);
}

/* What forwarding this arrival will touch: the route entry of the next switch
 * (or nothing at a host). */
static void wire_arrive_prefetch(const void *obj, uint64_t pkt)
{
	const struct port *pt = obj;
	const struct packet *p = (const struct packet *)(uintptr_t)pkt;
	const struct node *n = pt->peer_node;
	/* PFC frames carry no destination host: nothing to route */
	if (n->kind != NODE_SWITCH || p->type == PKT_PAUSE)
		return;
	const struct sw *s = (const struct sw *)n;
	__builtin_prefetch(&s->route[n->fab->host_tor[p->dst * n->fab->rails + p->rail]]);
}

/* The packet this port will send next, at the head of its first ready queue. */
static void tx_done_prefetch(const void *obj, uint64_t arg)
{
	(void)arg;
	const struct port *pt = obj;
	unsigned ready = pt->qmask & ~pt->paused;
	if (ready) {
		const struct pring *r = &pt->q[__builtin_ctz(ready)];
		__builtin_prefetch(r->v[r->head]);
	}
}

void port_register_prefetchers(void)
{
	evq_set_prefetch(port_wire_arrive, wire_arrive_prefetch);
	evq_set_prefetch(port_tx_done, tx_done_prefetch);
}

void port_wire_arrive(void *obj, uint64_t pkt)
{
	struct port *pt = obj;
	node_recv(pt->peer_node, pt->peer_idx, (struct packet *)(uintptr_t)pkt);
}

void port_drain(struct fabric *f, struct port *pt)
{
	for (int c = 0; c < NCLS; c++)
		while (pt->q[c].n)
			pkt_free(f, pring_pop(&pt->q[c]));
	pt->qmask = 0;
}

/* ---- transmission ----------------------------------------------------------- */
static void port_tx_done(void *obj, uint64_t arg)
{
	(void)arg;
	struct port *pt = obj;
	pt->tx_ev = false;
	port_try_send(pt->owner->fab, pt);
}

/* Is there anything this port could send once the wire frees? */
static inline bool port_has_work(const struct port *pt)
{
	if (pt->qbytes_total)
		return true;
	return pt->nic_ring != NULL;
}

/* A packet leaves a switch's buffer: release it, let PFC resume the port it
 * came in on, and mark ECN on the queue it leaves behind. */
static void switch_depart(struct fabric *f, struct port *pt, struct packet *p)
{
	struct node *n = pt->owner;
	struct sw *s = (struct sw *)n;
	uint8_t c = p->cls;
	s->buf_used -= p->size;
	if (f->cfg.mode == BUF_LOSSLESS) {
		struct port *ip = &n->ports[p->in_port];
		ip->ingress_bytes[c] -= p->size;
		if (ip->pause_sent & (1u << c)) {
			uint64_t xoff = pfc_xoff(f, s);
			if (ip->ingress_bytes[c] == 0 ||
			    ip->ingress_bytes[c] + f->cfg.pfc_xon_gap <= xoff)
				pfc_send(f, ip, c, true);
		}
	}
	if (f->cfg.ecn && (p->flags & PKT_F_ECT) && p->type == PKT_DATA) {
		uint64_t q = pt->qbytes[c];
		if (q >= f->cfg.kmax) {
			p->flags |= PKT_F_CE;
		} else if (q > f->cfg.kmin) {
			double prob = f->cfg.pmax * (double)(q - f->cfg.kmin) /
				      (double)(f->cfg.kmax - f->cfg.kmin);
			if (rng_u01(&pt->rng) < prob)
				p->flags |= PKT_F_CE;
		}
		if (p->flags & PKT_F_CE)
			pt->st.ecn_marks++;
	}
}

/* Take the next eligible packet: strict priority over classes not paused by
 * PFC; a host NIC pulls data from its round robin when its queues are empty. */
static struct packet *port_dequeue(struct fabric *f, struct port *pt)
{
	unsigned ready = pt->qmask & ~pt->paused;
	if (ready) {
		uint8_t c = (uint8_t)__builtin_ctz(ready); /* strict priority: lowest class */
		struct packet *p = pring_pop(&pt->q[c]);
		if (!pt->q[c].n)
			pt->qmask &= (uint8_t) ~(1u << c);
		q_change(f, pt, c, -(int64_t)p->size);
		if (pt->owner->kind == NODE_SWITCH && p->type != PKT_PAUSE)
			switch_depart(f, pt, p);
		return p;
	}
	if (pt->nic_ring && !(pt->paused & (1u << CLS_DATA))) {
		while (pt->nic_ring) {
			struct nic_flow *fl = pt->nic_ring;
			struct packet *p = f->nic_pull(f->cb_ctx, fl);
			if (p) {
				pt->nic_ring = fl->next; /* round robin: next flow goes next */
				return p;
			}
			nic_deactivate(f, fl);
		}
	}
	return NULL;
}

/* Serialise p now (the wire is free) and put it on the wire. */
static void port_transmit(struct fabric *f, struct port *pt, struct packet *p)
{
	simtime_t now = f->q->now;
	simtime_t ser = time_ser_exact(p->size, pt->rate_bps, &pt->ser_rem);
	pt->busy_until = now + ser;
	pt->tx_pkts++;
	pt->tx_bytes += p->size;
	if (port_has_work(pt)) {
		pt->tx_ev = true;
		evq_at(f->q, &pt->evs, now + ser, port_tx_done, pt, 0);
	}
	if (__builtin_expect(pt->lossy_link, 0) && p->type != PKT_PAUSE &&
	    rng_u01(&pt->rng) < pt->loss_rate) {
		pt->st.drops_link++;
		pkt_free(f, p);
	} else {
		wire_push(f, pt, p, now + ser + pt->delay);
	}
}

static void port_try_send(struct fabric *f, struct port *pt)
{
	struct packet *p;
	while ((p = port_dequeue(f, pt)) != NULL) {
		if (__builtin_expect(!pt->up, 0)) {
			pt->st.drops_link++;
			pkt_free(f, p);
			continue;
		}
		port_transmit(f, pt, p);
		return;
	}
}

/* ---- hosts ----------------------------------------------------------------- */
void host_send(struct fabric *f, struct host *h, struct packet *p)
{
	port_enqueue(f, &h->node.ports[p->rail % h->node.nports], p);
}

void nic_activate(struct fabric *f, struct nic_flow *fl)
{
	if (fl->active)
		return;
	struct port *pt = fl->port;
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

/* ---- switching --------------------------------------------------------------- */
static uint16_t route_port(struct fabric *f, struct sw *s, struct packet *p)
{
	uint32_t hr = p->dst * f->rails + p->rail;
	uint32_t t = f->host_tor[hr];
	if (t == s->tor_idx)
		return f->host_port[hr];
	const struct nhset *nh = &s->route[t];
	if (__builtin_expect(nh->n == 0, 0))
		return UINT16_MAX;
	const uint16_t *cand = f->nh_ports + nh->off;
	uint16_t out = nh->n == 1 ? cand[0] : f->lb->choose(f, s, p, cand, nh->n);
	if (__builtin_expect(!s->node.ports[out].up, 0)) {
		/* local repair: choose among the members that are still up */
		uint16_t upc[256];
		unsigned m = 0;
		for (unsigned i = 0; i < nh->n && m < 256; i++)
			if (s->node.ports[cand[i]].up)
				upc[m++] = cand[i];
		if (m == 0)
			return UINT16_MAX;
		out = m == 1 ? upc[0] : f->lb->choose(f, s, p, upc, m);
	}
	return out;
}

static void switch_forward(struct fabric *f, struct sw *s, uint16_t in_idx, struct packet *p)
{
	uint16_t o = route_port(f, s, p);
	if (__builtin_expect(o == UINT16_MAX, 0)) {
		f->no_route_drops++;
		pkt_free(f, p);
		return;
	}
	struct port *out = &s->node.ports[o];
	uint8_t c = p->cls;
	const struct swcfg *cfg = &f->cfg;
	if (cfg->mode == BUF_LOSSLESS && c >= CLS_DATA) {
		if (s->buf_used + p->size > cfg->buffer)
			f->lossless_overflow += p->size;
	} else {
		uint64_t free_b = s->buf_used < cfg->buffer ? cfg->buffer - s->buf_used : 0;
		if (p->size > free_b ||
		    (double)(out->qbytes[c] + p->size) > cfg->dt_alpha * (double)free_b ||
		    (cfg->queue_limit && out->qbytes[c] + p->size > cfg->queue_limit)) {
			out->st.drops_buffer++;
			pkt_free(f, p);
			return;
		}
	}
	s->buf_used += p->size;
	if (s->buf_used > s->buf_peak)
		s->buf_peak = s->buf_used;
	p->in_port = in_idx;
	if (cfg->mode == BUF_LOSSLESS) {
		struct port *in = &s->node.ports[in_idx];
		in->ingress_bytes[c] += p->size;
		if (c >= CLS_DATA && !(in->pause_sent & (1u << c)) &&
		    in->ingress_bytes[c] > pfc_xoff(f, s))
			pfc_send(f, in, c, false);
	}
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
		f->host_rx(f->cb_ctx, h, p);
	}
}

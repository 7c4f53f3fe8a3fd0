/* part.c - one run partitioned over MPI ranks; see part.h.
 *
 * Why the order of events is the same at any number of ranks: an event's
 * key is (its creator's entity id, that creator's own sequence number), and
 * every creator lives on one rank. Ports are entities (nnodes + 1 + their
 * index, from the whole fabric every rank builds), so a port's events (its
 * ends of transmission, its packets' arrivals, local or not) are numbered by
 * its rank alone, in the order one process numbers them; a connection's (its
 * start, its timer) by the rank of its sender; the runner's own (entity 0:
 * time-series samples, link events) are pushed alike on every rank; a
 * message's release has an entity of its own (run.h, sim_rel_key), pushed
 * once, on its sender's rank (a marker's on every rank); the collective
 * layer's drain of completions a key of its own (SIM_PEND_KEY), on each rank
 * that heard some. A part the collective layer posts on a queue pair whose
 * receiver is on another rank crosses as a record (post_send) and is posted
 * there too, before any of its packets can arrive. A packet crossing a
 * cut carries its arrival's key, and the receiving rank pushes a creator's
 * arrivals in sequence order (they come in the order they were sent), as
 * evq_push asks. Packets are not entities (a packet's address orders
 * nothing), and random streams are per port, switch, host and connection.
 *
 * Windows (YAWNS: Nicol, "The cost of conservative synchronization in
 * parallel discrete event simulations", JACM 1993): the window [W0, W1) has
 * W1 = W0 + lookahead, the lookahead being the smallest delay of a cut link
 * (a packet put on a wire at t arrives no earlier than t + delay), the least
 * each will have through the run (an event may lower it). Each rank
 * runs its events below W1; what they send across cuts arrives at W1 or
 * later; the ranks exchange it (MPI_Alltoallv), and the next W0 is the
 * earliest pending event of all ranks (one MPI_Allgather), which skips idle
 * stretches. The lookahead is also at most twice the smallest link delay:
 * a flow's last acknowledgement crosses at least two links after its last
 * byte is delivered, so a window that starts with a flow not yet delivered
 * cannot hold the moment the last flow completes.
 *
 * The last stretch: one process stops right after the event that completes
 * the last flow, and events of the same picosecond after it do not run. The
 * ranks cannot know that event ahead, so once every flow is delivered (the
 * count is reduced with each window) they run in lockstep rounds: each round
 * the ranks agree on the earliest (time, key) of them all, and the rank that
 * holds it runs its events while they come before every other rank's next,
 * up to the one that completes the last flow (the runner's own events, the
 * same on every rank, run alone, everywhere); the round after the last
 * completion stops them all. (A round once ended at every completion: on
 * 65,536 hosts' permutation of 64 KB flows, 99,906 rounds where 34,641 do.) Few events are left then: acknowledgements on their way back.
 *
 * Links that fail during the run (the runner's event, on every rank): the
 * sending port's rank loses what it holds and, for a cut link, the messages
 * it has not handed over yet (cut_down); the receiving rank what is on the
 * wire in its queue (port_link_down's evq_rehandle), counted at the sending
 * port there and added to the owner's at the end.
 *
 * Cutting the fabric (part_scheme): "tors" gives each rank a block of
 * consecutive ToRs with their hosts (in fat trees and leaf-spines, hosts and
 * ToRs are numbered pod by pod), a switch above them to the rank of all its
 * lower neighbours when they share one (a fat tree's aggregation switches stay
 * with their pod), and the others (spines, cores) dealt out in blocks;
 * "round" deals ToRs out one by one (a worse cut, for comparison). With
 * servers of several GPUs, "servers" (place_servers) keeps each server whole.
 * MPSIM_PARTITION chooses; "tors" is the default.
 */
#include "sim/part.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ccl/ccl.h"
#include "core/mem.h"
#include "core/opt.h"
#include "net/fabric.h"
#include "net/lb.h"
#include "net/port.h"
#include "sim/load.h"
#include "sim/ranks.h"
#include "sim/run.h"

#define PART_TAG 16 /* part_gather's messages (the sweep's tags are 1-4) */

struct part_buf {
	unsigned char *v;
	size_t n, cap;
};

static void *buf_put(struct part_buf *b, const void *src, size_t n)
{
	if (!n) /* nothing (a rank without rows): b->v may be NULL */
		return b->v;
	if (b->n + n > b->cap) {
		b->cap = b->n + n > 2 * b->cap ? b->n + n : 2 * b->cap;
		b->v = mp_realloc(b->v, b->cap);
	}
	void *at = b->v + b->n;
	if (src)
		memcpy(at, src, n);
	b->n += n;
	return at;
}

#define PUT(b, x) buf_put((b), &(x), sizeof(x))

/* A packet crossing a cut: this header, then the packet's bytes. Or, with
 * node PART_DEP and nothing after it, a completion at time t that message
 * `key` (a flow id) waited for, to the rank of that message's sender (or to
 * every rank, for a marker). Or, with node PART_POST and a part_post after
 * it, a part of a collective message posted at t on a queue pair whose
 * receiver is on that rank: key = the connection's id << 32 | the tag. Or,
 * with node PART_PFC and nothing after it, port `key`'s pause_sent (t) at
 * the window's end, to the rank of its peer (cut_pfc). */
struct part_msg {
	simtime_t t;  /* its arrival, ps */
	uint64_t key; /* its arrival event's key (the sending port's) */
	uint32_t node;
	uint32_t lost; /* its link went down under it (cut_down) */
};
#define PART_DEP UINT32_MAX
#define PART_POST (UINT32_MAX - 1)
#define PART_PFC (UINT32_MAX - 2)

struct part_post {
	uint64_t bytes, msg_bytes; /* the part's, its message's */
	uint32_t msg, pad;	   /* its message's (flow) id */
};

static size_t msg_step(const struct part *P, const struct part_msg *m)
{
	return sizeof *m + (m->node == PART_DEP || m->node == PART_PFC ? 0
			    : m->node == PART_POST		       ? sizeof(struct part_post)
								       : P->pkt_bytes);
}

/* ---- cutting the fabric ------------------------------------------------- */

/* Switches above the ToRs, level by level: the rank of all their lower
 * neighbours if they share one, else dealt out in blocks (k of n, in switch
 * order, to rank k * R / n). */
static void place_upper(struct fabric *f, uint16_t *own, int R)
{
	uint32_t top = 0;
	for (uint32_t i = 0; i < f->nsws; i++)
		top = f->sws[i]->node.level > top ? f->sws[i]->node.level : top;
	for (uint32_t lv = 2; lv <= top; lv++) {
		uint32_t nspread = 0, k = 0;
		for (int pass = 0; pass < 2; pass++)
			for (uint32_t i = 0; i < f->nsws; i++) {
				struct node *n = &f->sws[i]->node;
				if (n->level != lv || f->sws[i]->tor_idx != UINT32_MAX)
					continue;
				int r = -1;
				for (uint16_t p = 0; p < n->nports; p++) {
					const struct node *o = n->ports[p].peer_node;
					if (o->level >= lv)
						continue;
					r = r == -1 || r == own[o->id] ? own[o->id] : -2;
				}
				if (r >= 0) {
					own[n->id] = (uint16_t)r;
				} else if (pass == 0) {
					nspread++;
				} else {
					own[n->id] =
					    (uint16_t)((uint64_t)k++ * (uint64_t)R / nspread);
				}
			}
	}
}

/* Servers of several GPUs (`gpus` consecutive hosts, ccl/intra.h): a
 * server's transfers share its internal fabric, so its hosts stay on one
 * rank; servers in blocks, each ToR with its first host (a rail-optimized
 * leaf holds the same servers' GPUs on every rail, so blocks of whole leaves
 * cut no host link), a ToR without hosts dealt out in blocks. */
static void place_servers(struct fabric *f, uint16_t *own, int R, uint32_t gpus, bool round)
{
	uint32_t nsrv = f->nhosts / gpus;
	uint8_t *placed = mp_calloc(f->ntors + 1, 1);
	for (uint32_t h = 0; h < f->nhosts; h++) {
		uint32_t k = h / gpus;
		uint16_t r = (uint16_t)(round ? k % (uint32_t)R : (uint64_t)k * (uint64_t)R / nsrv);
		own[f->hosts[h]->node.id] = r;
		for (uint32_t p = 0; p < f->hosts[h]->node.nports && p < f->rails; p++) {
			uint32_t t = f->host_tor[(size_t)h * f->rails + p];
			if (!placed[t]) {
				placed[t] = 1;
				own[f->tors[t]->node.id] = r;
			}
		}
	}
	for (uint32_t t = 0; t < f->ntors; t++)
		if (!placed[t])
			own[f->tors[t]->node.id] = (uint16_t)((uint64_t)t * (uint64_t)R / f->ntors);
	mp_free(placed);
}

static const char *part_scheme(struct fabric *f, uint16_t *own, int R, uint32_t gpus)
{
	const char *env = getenv("MPSIM_PARTITION");
	bool round = env && !strcmp(env, "round");
	if (gpus > 1) {
		place_servers(f, own, R, gpus, round);
		place_upper(f, own, R);
		return round ? "servers_round" : "servers";
	}
	for (uint32_t t = 0; t < f->ntors; t++)
		own[f->tors[t]->node.id] =
		    (uint16_t)(round ? t % (uint32_t)R : (uint64_t)t * (uint64_t)R / f->ntors);
	for (uint32_t h = 0; h < f->nhosts; h++) {
		uint32_t t = f->host_tor[(size_t)h * f->rails];
		own[f->hosts[h]->node.id] = own[f->tors[t]->node.id];
	}
	place_upper(f, own, R);
	return round ? "round" : "tors";
}

/* ---- what the partitioned run does not do yet ------------------------------- */

static int unsupported(struct sim *s, struct mp_err *e)
{
	const struct experiment *x = s->x;
	const char *what = NULL, *key = NULL;
	const struct lb_ops *lb = s->fab.lb;
	if (lb && lb->unpartitioned && (what = lb->unpartitioned(x->lb_params)))
		key = "lb";
	if (!what)
		return MP_OK;
	return exp_errf(e, x, key,
			"%s: not partitioned yet; expected a file run by one process, or a sweep "
			"(mpirun spreads its points over the ranks)",
			what);
}

/* ---- the exchange ------------------------------------------------------------ */

static void cut_send(void *ctx, const struct port *pt, const struct packet *p, simtime_t at,
		     uint64_t key)
{
	struct part *P = ctx;
	uint32_t node = pt->peer_node->id;
	struct part_msg m = { .t = at, .key = key, .node = node };
	struct part_buf *b = &P->out[P->owner[node]];
	PUT(b, m);
	buf_put(b, p, P->pkt_bytes);
	P->cut_pkts++;
}

static bool flow_home(const struct sim *s, uint32_t f, int *rank)
{
	const struct part *P = s->part;
	*rank = P->owner[s->fab.hosts[s->flows.v[f].src]->node.id];
	return *rank == P->rank;
}

/* A message's release runs on the rank of its sender, where its connection
 * starts (a marker's on every rank; host 0's counts it and reports it). */
bool part_flow_mine(const struct sim *s, uint32_t f)
{
	int r;
	return flow_home(s, f, &r);
}

void part_dep_send(struct sim *s, uint32_t f, simtime_t t)
{
	struct part *P = s->part;
	int r;
	flow_home(s, f, &r);
	struct part_msg m = { .t = t, .key = f, .node = PART_DEP };
	PUT(&P->out[r], m);
}

void part_dep_bcast(struct sim *s, uint32_t f, simtime_t t)
{
	struct part *P = s->part;
	struct part_msg m = { .t = t, .key = f, .node = PART_DEP };
	for (int r = 0; r < P->nranks; r++)
		if (r != P->rank)
			PUT(&P->out[r], m);
}

/* The collective layer posted part `tag` of ch on queue pair qp: the
 * receiver's rank learns of it with this window's packets, before the
 * part's first packet can reach it (that crosses a cut, no sooner than the
 * lookahead). */
static void post_send(void *ctx, const struct ccl_chan *ch, uint32_t qp, uint32_t tag)
{
	struct sim *s = ctx;
	struct part *P = s->part;
	const struct conn *c = ch->qp[qp];
	if (part_mine(P, &c->dst->node))
		return;
	const struct ccl_part *pt = &ch->parts[tag];
	struct part_msg m = { .t = s->q.now,
			      .key = (uint64_t)c->id << 32 | tag,
			      .node = PART_POST };
	struct part_post r = { .bytes = pt->bytes,
			       .msg_bytes = pt->msg->bytes,
			       .msg = pt->msg->id };
	struct part_buf *b = &P->out[P->owner[c->dst->node.id]];
	PUT(b, m);
	PUT(b, r);
}

/* A cut port's link went down: the packets it sent this window, on their
 * way in this rank's buffer, are lost on the wire (port_link_down). */
static void cut_down(void *ctx, const struct port *pt)
{
	struct part *P = ctx;
	uint32_t node = pt->peer_node->id;
	struct part_buf *b = &P->out[P->owner[node]];
	for (size_t off = 0; off < b->n;) {
		struct part_msg m;
		struct packet p;
		memcpy(&m, b->v + off, sizeof m);
		size_t step = msg_step(P, &m);
		if (m.node == node) {
			memcpy(&p, b->v + off + sizeof m, sizeof p);
			if (p.in_port == pt->peer_idx) {
				m.lost = 1;
				memcpy(b->v + off, &m, sizeof m);
			}
		}
		off += step;
	}
}

static void cut_pfc(void *ctx, const struct port *pt)
{
	struct part *P = ctx;
	uint32_t i = fab_port_index(P->fab, pt);
	if (!P->pfc_flag[i]) {
		P->pfc_flag[i] = 1;
		P->pfc_dirty[P->npfc_dirty++] = i;
	}
}

/* The window's PFC states of cut ports (cut_pfc), each to its peer's rank,
 * which reads it when their link comes back up: at the end of the window
 * that ends at that moment (part_run), it holds every change before it. */
static void send_pfc(struct sim *s)
{
	struct part *P = s->part;
	for (uint32_t k = 0; k < P->npfc_dirty; k++) {
		uint32_t i = P->pfc_dirty[k];
		const struct port *pt = &s->fab.port_mem[i];
		struct part_msg m = { .t = pt->pause_sent, .key = i, .node = PART_PFC };
		PUT(&P->out[P->owner[pt->peer_node->id]], m);
		P->pfc_flag[i] = 0;
	}
	P->npfc_dirty = 0;
}

static void drop_wire_packet(void *ctx, const struct ev *e)
{
	if (port_event_carries_packet(e->fn))
		pkt_free(ctx, port_wire_packet(e->arg));
}

/* A part posted on a queue pair whose receiver is here: the collective
 * layer and the connection take it as the sender's rank did (ccl_part_mirror,
 * tp_post: the receiving side's state is what the protocol's open and post
 * set up, as in one process), in the shadow: what the post schedules or
 * sends from the sender's NIC, which this rank never runs, goes to a queue
 * whose clock reads the post's time, and is thrown away. */
static void post_arrive(struct sim *s, const struct part_msg *m, const unsigned char *v)
{
	struct part_post r;
	memcpy(&r, v, sizeof r);
	struct evq *real = s->fab.q, *shadow = s->part->shadow;
	shadow->now = m->t;
	s->fab.q = s->w.q = shadow;
	ccl_part_mirror(&s->ccl, s->w.conns[m->key >> 32], (uint32_t)m->key, r.msg, r.msg_bytes,
			r.bytes, m->t);
	s->fab.q = s->w.q = real;
}

/* Send what this window put across cuts and push what came: each source's
 * messages in the order they were sent, so a port's arrivals in the order
 * of their keys. */
static void exchange(struct sim *s)
{
	struct part *P = s->part;
	int R = P->nranks;
	send_pfc(s);
	void **out = mp_malloc((size_t)R * sizeof *out);
	size_t *nout = mp_malloc(2 * (size_t)R * sizeof *nout), *nin = nout + R, total = 0;
	for (int d = 0; d < R; d++) {
		out[d] = P->out[d].v;
		nout[d] = P->out[d].n;
		P->out[d].n = 0;
	}
	unsigned char *in = ranks_exchange(out, nout, nin, &total);
	for (size_t off = 0; off < total;) {
		struct part_msg m;
		memcpy(&m, in + off, sizeof m);
		if (m.node == PART_DEP) { /* checked at setup: t + delay >= this window's end */
			sim_dep_arrive(s, (uint32_t)m.key, m.t);
			off += sizeof m;
			continue;
		}
		if (m.node == PART_PFC) { /* read by port_link_up alone */
			s->fab.port_mem[m.key].pause_sent = (uint8_t)m.t;
			off += sizeof m;
			continue;
		}
		if (m.node == PART_POST) {
			post_arrive(s, &m, in + off + sizeof m);
			off += msg_step(P, &m);
			continue;
		}
		struct packet *p = pkt_alloc(&s->fab);
		memcpy(p, in + off + sizeof m, P->pkt_bytes);
		p->next = NULL;
		evq_push(&s->q, m.t, m.key, m.lost ? port_wire_lost : port_wire_arrive,
			 s->fab.nodes[m.node], (uint64_t)(uintptr_t)p);
		off += msg_step(P, &m);
	}
	mp_free(in);
	mp_free(nout);
	mp_free(out);
	if (P->shadow->n) /* what the posts' copies scheduled: never run */
		evq_drain(P->shadow, drop_wire_packet, &s->fab);
}

/* ---- setup ---------------------------------------------------------------------- */

struct kept {
	struct ev *v;
	size_t n, cap;
};

static void keep_ev(void *ctx, const struct ev *e)
{
	struct kept *k = ctx;
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 64;
		k->v = mp_realloc(k->v, k->cap * sizeof *k->v);
	}
	k->v[k->n++] = *e;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Is the creator of an event of the built sim (its key's entity) this
 * rank's? The runner (0) is every rank's; a port its node's; a connection
 * its sender's. */
static bool creator_mine(const struct sim *s, uint64_t key)
{
	uint32_t id = (uint32_t)(key >> EVQ_SEQ_BITS);
	const struct fabric *f = &s->fab;
	if (id == 0)
		return true;
	if (id >= s->rel_base) { /* a message's release: its sender's; a marker's: all */
		uint32_t fl = id - s->rel_base;
		return flow_is_marker(&s->flows.v[fl]) || part_flow_mine(s, fl);
	}
	if (id >= TP_ENTITY_BASE && id - TP_ENTITY_BASE < s->w.nconns)
		return part_mine(s->part, &s->w.conns[id - TP_ENTITY_BASE]->src->node);
	if (id > f->nnodes && id - f->nnodes - 1 < f->nports)
		return part_mine(s->part, f->port_mem[id - f->nnodes - 1].owner);
	uint32_t k = INTRA_ENTITY_ID(TP_ENTITY_BASE, 0) - id; /* a server's (ccl/intra.h) */
	if (s->ccl.has_intra && id < TP_ENTITY_BASE && k < s->ccl.intra.nsrv)
		return part_mine(s->part, &f->hosts[k * s->ccl.intra.cfg->gpus]->node);
	MP_PANIC("event of entity %u at setup: no rank is known to own it", id);
}

/* The events sim_build scheduled, this rank's alone, pushed again in the
 * order of their keys (each creator's in sequence order, as evq_push asks). */
static void keep_mine(struct sim *s)
{
	struct kept k = { 0 };
	evq_drain(&s->q, keep_ev, &k);
	qsort(k.v, k.n, sizeof *k.v, ev_cmp);
	for (size_t i = 0; i < k.n; i++)
		if (creator_mine(s, k.v[i].key))
			evq_push(&s->q, k.v[i].t, k.v[i].key, k.v[i].fn, k.v[i].obj, k.v[i].arg);
	mp_free(k.v);
}

/* The least delay each port will have (least[i], port_mem's order): its
 * delay now, or a smaller one an event gives its link (`delay`; a
 * `proc_delay` adds to the link's and never goes below 0). */
static simtime_t *least_delays(const struct sim *s)
{
	const struct fabric *f = &s->fab;
	simtime_t *least = mp_malloc((f->nports + 1) * sizeof *least);
	for (uint32_t i = 0; i < f->nports; i++)
		least[i] = f->port_mem[i].delay;
	for (size_t i = 0; i < s->x->nevents; i++) {
		const struct exp_event *ev = &s->x->events[i];
		if (ev->action != LINK_DELAY)
			continue;
		/* checked when they were scheduled (run.c, schedule_events) */
		const struct node *n = *ev->node ? fab_find_node(f, ev->node) : NULL;
		uint32_t one = n ? UINT32_MAX : fab_find_link(f, ev->link);
		for (uint32_t l = 0; l < f->nlinks; l++) {
			const struct fab_link_spec *ls = &f->links[l];
			if (n ? ls->a != n->id && ls->b != n->id : l != one)
				continue;
			uint32_t ends[2] = { fab_port_index(f, &f->nodes[ls->a]->ports[ls->pa]),
					     fab_port_index(f, &f->nodes[ls->b]->ports[ls->pb]) };
			for (int k = 0; k < 2; k++)
				least[ends[k]] = ev->u < least[ends[k]] ? ev->u : least[ends[k]];
		}
	}
	return least;
}

/* The cut links, and the window's width: the smallest delay of a cut link,
 * at most twice the smallest of any link (the last stretch, above), each the
 * least it will be through the run (least_delays). */
static int mark_cut(struct sim *s, struct mp_err *e)
{
	struct part *P = s->part;
	struct fabric *f = &s->fab;
	simtime_t cut_min = SIMTIME_MAX, any_min = SIMTIME_MAX;
	simtime_t *least = least_delays(s);
	for (uint32_t i = 0; i < f->nports; i++) {
		struct port *pt = &f->port_mem[i];
		any_min = least[i] < any_min ? least[i] : any_min;
		bool cut = P->owner[pt->owner->id] != P->owner[pt->peer_node->id];
		if (!cut)
			continue;
		cut_min = least[i] < cut_min ? least[i] : cut_min;
		P->cut_links += P->owner[pt->owner->id] < P->owner[pt->peer_node->id];
		pt->cut = part_mine(P, pt->owner);
	}
	mp_free(least);
	if (any_min == 0)
		return exp_errf(e, s->x, "topology",
				"a link of delay 0, now or after an event: a partitioned run needs "
				"every link to take time (its lookahead)");
	P->lookahead = cut_min < 2 * any_min ? cut_min : 2 * any_min;
	return MP_OK;
}

/* A connection whose receiver is here and whose sender is not: a protocol
 * may keep its receiver's state in what its `open` sets up (RoCEv2's queue
 * pairs), so it is opened here too, in the shadow: whatever that opening
 * schedules or sends goes into a queue of its own, thrown away, or stays in
 * the queues of the sender's NIC, which this rank never runs. */
static void shadow_opens(struct sim *s)
{
	struct evq shadow, *real = s->fab.q;
	evq_init(&shadow);
	s->fab.q = s->w.q = &shadow;
	for (uint32_t i = 0; i < s->w.nconns; i++) {
		struct conn *c = s->w.conns[i];
		/* a queue pair opens at its first post (post_arrive) */
		if (!c->stream && !part_mine(s->part, &c->src->node) &&
		    part_mine(s->part, &c->dst->node))
			c->w->ops->open(c);
	}
	s->fab.q = s->w.q = real;
	evq_drain(&shadow, drop_wire_packet, &s->fab);
	evq_free(&shadow);
}

/* The rank where the completion dependency entry d names is reported
 * (run.c, on_msg): a message's own connection reports a delivery at its
 * receiver, or at its sender when the protocol says so (tx_reports_rx); a
 * message on the collective layer's queue pairs at its receiver. Not for
 * markers (every rank's). */
static int dep_rank(const struct sim *s, uint32_t d)
{
	uint32_t g = FLOW_DEP_ID(d);
	const struct flow_spec *fs = &s->flows.v[g];
	bool tx = d & FLOW_DEP_SENT || (s->fconn[g] && s->w.ops->tx_reports_rx);
	return s->part->owner[s->fab.hosts[tx ? fs->src : fs->dst]->node.id];
}

/* Per marker (mi[f]: its index) and rank A, the least time from a
 * completion reported on A to the marker's release, through the markers it
 * waits for (their delays and its own); SIMTIME_MAX when nothing on A
 * leads to it. Markers in an order where each comes after those it waits
 * for (Kahn's, over the marker-to-marker edges). */
static simtime_t *marker_lags(const struct sim *s, const uint32_t *mi, uint32_t nm)
{
	const struct flow_list *fl = &s->flows;
	int R = s->part->nranks;
	simtime_t *lag = mp_malloc(((size_t)nm * (size_t)R + 1) * sizeof *lag);
	uint32_t *left = mp_calloc(fl->n + 1, sizeof *left), *ready = mp_malloc((nm + 1) * 4);
	uint32_t nr = 0;
	for (uint32_t f = 0; f < fl->n; f++) {
		if (mi[f] == UINT32_MAX)
			continue;
		for (uint32_t k = 0; k < fl->v[f].ndeps; k++)
			left[f] += mi[FLOW_DEP_ID(fl->deps[fl->v[f].dep0 + k])] != UINT32_MAX;
		if (!left[f])
			ready[nr++] = f;
	}
	for (uint32_t i = 0; i < nr; i++) { /* the DAG is checked: every marker comes */
		uint32_t f = ready[i];
		const struct flow_spec *fs = &fl->v[f];
		simtime_t *l = &lag[(size_t)mi[f] * (size_t)R];
		for (int r = 0; r < R; r++)
			l[r] = SIMTIME_MAX;
		for (uint32_t k = 0; k < fs->ndeps; k++) {
			uint32_t d = fl->deps[fs->dep0 + k], g = FLOW_DEP_ID(d);
			if (mi[g] == UINT32_MAX) {
				l[dep_rank(s, d)] = 0;
				continue;
			}
			const simtime_t *lg = &lag[(size_t)mi[g] * (size_t)R];
			for (int r = 0; r < R; r++)
				l[r] = lg[r] < l[r] ? lg[r] : l[r];
		}
		for (int r = 0; r < R; r++)
			if (l[r] != SIMTIME_MAX)
				l[r] += fs->delay;
		for (uint32_t k = s->dep_off[f]; k < s->dep_off[f + 1]; k++) {
			uint32_t g = FLOW_DEP_ID(s->dep_to[k]);
			if (mi[g] != UINT32_MAX && !--left[g])
				ready[nr++] = g;
		}
	}
	mp_free(left);
	mp_free(ready);
	return lag;
}

static int dep_refuse(struct sim *s, struct mp_err *e, uint32_t i, uint32_t at, const char *why)
{
	const struct flow_spec *fs = &s->flows.v[i];
	return exp_errf(e, s->x, s->x->coll && !s->x->wl ? "collective" : "workload",
			"message %u (host %u to %u) waits for a completion at host %u, on "
			"another rank: %s; expected a delay of at least the lookahead (%.3f us) "
			"and all of its dependencies, or a run by one process",
			i, fs->src, fs->dst, at, why, time_to_us(s->part->lookahead));
}

static int marker_refuse(struct sim *s, struct mp_err *e, uint32_t i, uint32_t g, bool some)
{
	const struct flow_spec *fs = &s->flows.v[i];
	bool barrier = s->flows.v[g].job != 0;
	return exp_errf(e, s->x, s->x->coll && !s->x->wl ? "collective" : "workload",
			"message %u (host %u to %u) waits for %s (marker %u) that a completion on "
			"another rank releases: %s, not partitioned yet; expected at least the "
			"lookahead (%.3f us) from that completion to the message's release (%s), "
			"or a run by one process",
			i, fs->src, fs->dst, barrier ? "an iteration barrier" : "a marker", g,
			some ? "released by some of its dependencies" : "sooner than the lookahead",
			time_to_us(s->part->lookahead),
			barrier ? "collective.compute_gap" : "the markers' delays and its own");
}

/* A marker that waits for some of its dependencies, fewer than all, takes
 * the first completions heard: the same on every rank only when they are
 * all reported on one rank (heard there, and elsewhere, in the order they
 * happened) or all markers'. */
static int check_some_markers(struct sim *s, struct mp_err *e, const uint32_t *mi)
{
	const struct flow_list *fl = &s->flows;
	for (uint32_t i = 0; i < fl->n; i++) {
		const struct flow_spec *fs = &fl->v[i];
		if (mi[i] == UINT32_MAX || !fs->need || fs->need >= fs->ndeps)
			continue;
		int r0 = -2;
		for (uint32_t k = 0; k < fs->ndeps; k++) {
			uint32_t d = fl->deps[fs->dep0 + k];
			int r = mi[FLOW_DEP_ID(d)] != UINT32_MAX ? -1 : dep_rank(s, d);
			if (r0 != -2 && r != r0)
				return exp_errf(e, s->x,
						s->x->coll && !s->x->wl ? "collective" : "workload",
						"marker %u waits for %u of its %u dependencies, "
						"reported on several ranks: not partitioned yet; "
						"expected a run by one process",
						i, fs->need, fs->ndeps);
			r0 = r;
		}
	}
	return MP_OK;
}

/* A completion that releases a message whose sender is on another rank
 * reaches it at the end of the window it happened in: the release must come
 * no earlier than that window's end, which `delay` >= the lookahead ensures;
 * through markers (released on every rank), their delays count too. And a
 * message released by `need` of its dependencies, fewer than all, takes the
 * first completions heard: another rank's are heard late. */
static int check_deps(struct sim *s, struct mp_err *e)
{
	const struct flow_list *fl = &s->flows;
	const struct part *P = s->part;
	uint32_t *mi = mp_malloc((fl->n + 1) * sizeof *mi), nm = 0;
	for (uint32_t i = 0; i < fl->n; i++)
		mi[i] = flow_is_marker(&fl->v[i]) && fl->v[i].ndeps ? nm++ : UINT32_MAX;
	simtime_t *lag = marker_lags(s, mi, nm);
	int rc = check_some_markers(s, e, mi);
	for (uint32_t i = 0; i < fl->n && !rc; i++) {
		const struct flow_spec *fs = &fl->v[i];
		if (flow_is_marker(fs))
			continue;
		int home;
		flow_home(s, i, &home);
		bool some = fs->need && fs->need < fs->ndeps;
		for (uint32_t k = 0; k < fs->ndeps && !rc; k++) {
			uint32_t d = fl->deps[fs->dep0 + k], g = FLOW_DEP_ID(d);
			const struct flow_spec *gs = &fl->v[g];
			if (mi[g] == UINT32_MAX) {
				if (flow_is_marker(gs) || dep_rank(s, d) == home)
					continue; /* a marker without dependencies: at its start */
				if (fs->delay >= P->lookahead && !some)
					continue;
				bool tx =
				    d & FLOW_DEP_SENT || (s->fconn[g] && s->w.ops->tx_reports_rx);
				rc = dep_refuse(
				    s, e, i, tx ? gs->src : gs->dst,
				    some ? "released by some of its dependencies, not "
					   "partitioned yet"
					 : "its delay is shorter than the lookahead, not "
					   "partitioned yet");
				continue;
			}
			const simtime_t *l = &lag[(size_t)mi[g] * (size_t)P->nranks];
			for (int r = 0; r < P->nranks && !rc; r++)
				if (r != home && l[r] != SIMTIME_MAX &&
				    (some || l[r] + fs->delay < P->lookahead))
					rc = marker_refuse(s, e, i, g, some);
		}
	}
	mp_free(lag);
	mp_free(mi);
	return rc ? e->status : MP_OK;
}

static int time_cmp(const void *a, const void *b)
{
	simtime_t x = *(const simtime_t *)a, y = *(const simtime_t *)b;
	return x < y ? -1 : x > y;
}

/* Links that come back up on a lossless fabric: port_link_up reads the
 * peer's pause_sent, which on a cut link is another rank's, so the windows
 * end at each such moment and the cut ports' changes cross with the window
 * before (send_pfc). */
static void plan_ups(struct sim *s)
{
	struct part *P = s->part;
	const struct experiment *x = s->x;
	if (x->sw.mode != BUF_LOSSLESS)
		return;
	for (size_t i = 0; i < x->nevents; i++)
		P->nups += x->events[i].action == LINK_UP;
	if (!P->nups)
		return;
	P->ups = mp_malloc(P->nups * sizeof *P->ups);
	for (size_t i = 0, k = 0; i < x->nevents; i++)
		if (x->events[i].action == LINK_UP)
			P->ups[k++] = x->events[i].at;
	qsort(P->ups, P->nups, sizeof *P->ups, time_cmp);
	P->pfc_flag = mp_calloc(s->fab.nports + 1, 1);
	P->pfc_dirty = mp_malloc((s->fab.nports + 1) * sizeof *P->pfc_dirty);
	s->fab.cut_pfc = cut_pfc;
}

int part_setup(struct sim *s, struct mp_err *e)
{
	const char *env = getenv("MPSIM_PARTITION");
	if (env && *env && strcmp(env, "tors") && strcmp(env, "round"))
		return mp_errf(e, MP_EUSER, "MPSIM_PARTITION: expected tors or round, got '%s'",
			       env);
	if (unsupported(s, e))
		return e->status;
	struct part *P = mp_calloc(1, sizeof *P);
	struct fabric *f = &s->fab;
	s->part = P;
	P->rank = ranks_rank();
	P->nranks = ranks_size();
	P->owner = mp_calloc(f->nnodes, sizeof *P->owner);
	P->scheme = part_scheme(f, P->owner, P->nranks, (uint32_t)s->x->server.gpus);
	P->out = mp_calloc((size_t)P->nranks, sizeof *P->out);
	/* a packet, its load balancer's metadata and its INT record (HPCC) */
	P->pkt_bytes = (uint32_t)(sizeof(struct packet) + f->pkt_meta);
	if (f->int_off)
		P->pkt_bytes = (uint32_t)(f->int_off + sizeof(struct pkt_int));
	if (mark_cut(s, e))
		return e->status;
	if (check_deps(s, e))
		return e->status;
	f->cut_send = cut_send;
	f->cut_down = cut_down;
	f->cut_ctx = P;
	P->fab = f;
	plan_ups(s);
	s->ccl.on_post = post_send; /* its ctx is the sim's */
	if (f->hol)		    /* a flow's blocked time: the union of every rank's waits */
		fab_hol_spans(f);
	P->shadow = mp_malloc(sizeof *P->shadow);
	evq_init(P->shadow);
	keep_mine(s);
	shadow_opens(s);
	P->live = mp_malloc((s->w.nconns + 1) * sizeof *P->live);
	for (uint32_t i = 0; i < s->w.nconns; i++) /* queue pairs: nccl_rx counts */
		if (!s->w.conns[i]->stream && part_mine(P, &s->w.conns[i]->dst->node))
			P->live[P->nlive++] = i;
	P->nrecv = P->nlive;
	s->show_progress = false;
	return MP_OK;
}

/* ---- the windows ------------------------------------------------------------ */

/* What the ranks tell each other at a window's end. */
struct part_sync {
	uint64_t next_t; /* earliest pending event, SIMTIME_MAX: none */
	uint64_t next_key;
	uint64_t rx;	  /* flows delivered here */
	uint64_t done;	  /* flows completed here (acknowledged at their sender) */
	uint64_t now;	  /* time of the last event run here */
	uint64_t abort;	  /* a limit reached while running (s->err) */
	uint64_t busy_us; /* CPU time running windows so far, us (--progress) */
};

/* Flows received here and delivered whole (every payload byte at the
 * receiver, whichever side the protocol reports it from: a RoCEv2 flow's
 * sender does), the list of those not yet shortened as they are. */
static uint64_t delivered(struct sim *s)
{
	struct part *P = s->part;
	uint32_t k = 0;
	for (uint32_t i = 0; i < P->nlive; i++) {
		const struct conn *c = s->w.conns[P->live[i]];
		if (c->rcvd_bytes < c->bytes)
			P->live[k++] = P->live[i];
	}
	P->nlive = k;
	return P->nrecv - k;
}

struct part_all {
	struct part_sync min;  /* next_t, next_key: the earliest (time, key) */
	struct part_sync next; /* ... of the ranks that do not hold that one */
	int nmin;	       /* ranks that hold it (all, for the runner's own) */
	int slow;	       /* the rank busiest running its windows so far */
	double slow_busy_s;    /* ... its CPU time in them, s */
	uint64_t rx, done, now, abort;
};

static bool before(simtime_t t, uint64_t key, const struct part_sync *o)
{
	return t < o->next_t || (t == o->next_t && key < o->next_key);
}

static void sync_all(struct sim *s, simtime_t below, struct part_all *a)
{
	struct part *P = s->part;
	struct part_sync me = { .next_t = SIMTIME_MAX,
				.next_key = UINT64_MAX,
				.rx = delivered(s) + s->nmarkers_rel + s->nccl_rx,
				.done = s->nflows_done,
				.now = s->q.now,
				.abort = s->err.status != 0,
				.busy_us = (uint64_t)(P->run_cpu_s * 1e6) };
	simtime_t t;
	uint64_t key;
	if (evq_peek(&s->q, &t, &key) && t < below) {
		me.next_t = t;
		me.next_key = key;
	}
	struct part_sync *v = mp_malloc((size_t)P->nranks * sizeof *v);
	double w0 = sim_wall_now();
	ranks_allgather(&me, v, sizeof me);
	P->wait_s += sim_wall_now() - w0;
	memset(a, 0, sizeof *a);
	a->min.next_t = SIMTIME_MAX;
	a->min.next_key = UINT64_MAX;
	for (int r = 0; r < P->nranks; r++) {
		if (v[r].next_t < a->min.next_t ||
		    (v[r].next_t == a->min.next_t && v[r].next_key < a->min.next_key)) {
			a->min.next_t = v[r].next_t;
			a->min.next_key = v[r].next_key;
		}
		a->rx += v[r].rx;
		a->done += v[r].done;
		a->now = v[r].now > a->now ? v[r].now : a->now;
		a->abort |= v[r].abort;
	}
	for (int r = 0; r < P->nranks; r++)
		if (v[r].busy_us > v[a->slow].busy_us)
			a->slow = r;
	a->slow_busy_s = (double)v[a->slow].busy_us * 1e-6;
	a->next.next_t = SIMTIME_MAX;
	a->next.next_key = UINT64_MAX;
	for (int r = 0; r < P->nranks; r++) {
		if (v[r].next_t == a->min.next_t && v[r].next_key == a->min.next_key)
			a->nmin++;
		else if (before(v[r].next_t, v[r].next_key, &a->next))
			a->next = v[r];
	}
	mp_free(v);
}

/* This rank's CPU time, s (its thread's: under --threads the process holds every rank): a window's cost on a shared machine. */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This rank's events below `end`. */
static void run_window(struct sim *s, simtime_t end)
{
	for (;;) {
		evq_run_n(&s->q, end - 1, 1u << 14);
		s->q.stop = false; /* a count of flows done is the ranks' together */
		if (s->err.status || evq_empty(&s->q) || evq_next_time(&s->q) >= end)
			return;
	}
}

/* A round of the last stretch on the rank that holds the earliest event of
 * all: its events in order while they come before every other rank's next
 * (they are then the next ones of the whole run), up to and including the
 * one that completes the last flow: no other rank runs meanwhile, so the
 * count of all (a->done at the round's start) grows only here. The runner's
 * own events, which every rank holds, run alone, everywhere. */
static void lockstep_run(struct sim *s, simtime_t end, const struct part_all *a)
{
	simtime_t t;
	uint64_t key;
	if (!evq_peek(&s->q, &t, &key) || t != a->min.next_t || key != a->min.next_key)
		return;
	uint64_t left = s->flows.n - a->done; /* completions until the last */
	size_t done = s->nflows_done;
	do {
		evq_run_n(&s->q, t, 1);
		s->q.stop = false;
	} while (a->nmin == 1 && s->nflows_done - done < left && !s->err.status &&
		 evq_peek(&s->q, &t, &key) && t < end && before(t, key, &a->next));
}

/* The last stretch of a window, in rounds: true when the last flow
 * completed (then every rank's clock is its time). */
static bool lockstep(struct sim *s, simtime_t end, struct part_all *a)
{
	for (;;) {
		sync_all(s, end, a);
		if (a->done == s->flows.n || a->abort) {
			s->q.now = a->now;
			return true;
		}
		if (a->min.next_t == SIMTIME_MAX)
			return false;
		lockstep_run(s, end, a);
		s->part->steps++;
	}
}

/* --progress, from rank 0 every 10 s: simulated time, flows done, and the
 * slowest rank (the one the others wait for). */
static void part_progress(struct sim *s, const struct part_all *a, bool final)
{
	struct part *P = s->part;
	double now = sim_wall_now();
	if (!P->progress || P->rank || (!final && now - s->progress_last < 10.0))
		return;
	s->progress_last = now;
	fprintf(stderr,
		"  t=%.1fus  flows %llu/%zu  %llu windows  slowest rank %d: %.1f s of CPU in its "
		"windows of %.1f s\n",
		time_to_us(a->now), (unsigned long long)a->done, s->flows.n,
		(unsigned long long)P->windows, a->slow, a->slow_busy_s, now - s->wall_start);
	fflush(stderr);
}

void part_run(struct sim *s)
{
	struct part *P = s->part;
	const struct experiment *x = s->x;
	simtime_t until = x->gen.stop_time ? x->gen.stop_time : x->gen.time_limit;
	struct part_all a;
	s->wall_start = s->progress_last = sim_wall_now();
	P->progress = s->show_progress; /* rank 0's line, not every rank's */
	s->show_progress = false;
	sync_all(s, SIMTIME_MAX, &a);
	bool stopped = false;
	while (!a.abort && a.min.next_t <= until) {
		simtime_t w0 = a.min.next_t;
		simtime_t end = until - w0 < P->lookahead ? until + 1 : w0 + P->lookahead;
		while (P->next_up < P->nups && P->ups[P->next_up] <= w0)
			P->next_up++;
		if (P->next_up < P->nups && P->ups[P->next_up] < end)
			end = P->ups[P->next_up]; /* plan_ups */
		P->windows++;
		if (!x->gen.stop_time && a.rx == s->flows.n) {
			double t0 = sim_wall_now();
			stopped = lockstep(s, end, &a);
			P->lock_s += sim_wall_now() - t0;
			if (stopped)
				break;
		} else if (a.done == s->flows.n && !x->gen.stop_time) {
			/* a protocol whose receivers do not report deliveries: the
			 * last flow completed inside the last window */
			if (!P->rank)
				fprintf(stderr,
					"mpsim: warning: the last flow completed inside a "
					"window: the results may differ from one process's\n");
			break;
		} else {
			double t0 = sim_wall_now(), c0 = cpu_now();
			run_window(s, end);
			P->run_s += sim_wall_now() - t0;
			P->run_cpu_s += cpu_now() - c0;
		}
		double t1 = sim_wall_now();
		exchange(s);
		P->xchg_s += sim_wall_now() - t1;
		sync_all(s, SIMTIME_MAX, &a);
		part_progress(s, &a, false);
	}
	if (!stopped)
		s->q.now = a.now;
	part_progress(s, &a, true);
	if (getenv("MPSIM_PART_TIMES"))
		fprintf(
		    stderr,
		    "rank %d: %.3f s running windows (%.3f s of CPU), %.3f s exchanging, %.3f s "
		    "agreeing (%.3f s of it in %llu lockstep rounds), %llu events, %llu sent "
		    "across\n",
		    P->rank, P->run_s, P->run_cpu_s, P->xchg_s, P->wait_s, P->lock_s,
		    (unsigned long long)P->steps, (unsigned long long)s->q.processed,
		    (unsigned long long)P->cut_pkts);
	if (x->gen.stop_time && s->q.now < x->gen.stop_time)
		s->q.now = x->gen.stop_time;
}

/* ---- gathering ---------------------------------------------------------------- */

/* A port's counters as the results read them. */
struct part_port {
	uint32_t idx;
	uint8_t paused, ecn_marks_lo, pad[2];
	uint64_t tx_bytes, tx_pkts, max_qbytes, qbytes_total;
	unsigned __int128 qbytes_neg_t;
	struct port_stats st;
	struct port_trim trim; /* switch.trim's counts (a side table of the fabric) */
	uint64_t load[3];      /* its figures for summary.json's load (sim/load.c) */
	simtime_t paused_at[NCLS];
};

/* A connection's sides as the results read them: the sender's figures from
 * the rank of its source, the receiver's from the rank of its destination. */
struct part_conn {
	uint32_t id;
	uint8_t side; /* 1: the sender's, 2: the receiver's */
	bool done, started;
	uint8_t pad;
	simtime_t start, finish, at; /* at: tx_at or rx_at of its flow */
	simtime_t rx_at;	     /* the sender's: rx_at when it reports deliveries */
	uint64_t a, b, c, d;	     /* sent, acked, retx, ts_acked / rcvd, dup, data, reordered */
};

/* A message's times this rank knows: its release and, for a marker (whose
 * completions are its release) or a message on the collective layer's
 * queue pairs, its delivery (the receiver's rank's) and acknowledgement
 * (the sender's); `has` says which (FL_*). */
struct part_flow {
	uint32_t id, has;
	simtime_t rel, rx, tx;
};
#define FL_REL 1u
#define FL_RX 2u
#define FL_TX 4u

struct part_head {
	uint64_t processed, peak, nflows_done, no_route, overflow, nports, nsws, nconns, nrows,
	    cut_pkts, pool_peak, nlost, nflows, nspans, ntrace;
	uint64_t ood[TP_OOD_MAX + 1];
	uint64_t lb[LB_MAX_COUNTERS]; /* the load balancer's counts (lb_ops.counts) */
};

static void pack_ports(struct sim *s, struct part_buf *b, struct part_head *h)
{
	struct fabric *f = &s->fab;
	for (uint32_t i = 0; i < f->nports; i++) {
		const struct port *pt = &f->port_mem[i];
		if (!part_mine(s->part, pt->owner))
			continue;
		struct part_port r = { .idx = i,
				       .paused = pt->paused,
				       .ecn_marks_lo = pt->ecn_marks_lo,
				       .tx_bytes = pt->tx_bytes,
				       .tx_pkts = pt->tx_pkts,
				       .max_qbytes = pt->max_qbytes,
				       .qbytes_total = pt->qbytes_total,
				       .qbytes_neg_t = pt->qbytes_neg_t,
				       .st = pt->st,
				       .trim = fab_port_trim(f, pt) };
		memcpy(r.paused_at, pt->paused_at, sizeof r.paused_at);
		sim_load_port_get(s, i, r.load);
		PUT(b, r);
		h->nports++;
	}
	/* what another rank's port sent that its link lost on the way here
	 * (port_wire_lost counts it at the sending port, which is not ours) */
	for (uint32_t i = 0; i < f->nports; i++) {
		const struct port *pt = &f->port_mem[i];
		if (!part_mine(s->part, pt->owner) && part_mine(s->part, pt->peer_node) &&
		    pt->st.drops_link) {
			uint64_t v[2] = { i, pt->st.drops_link };
			buf_put(b, v, sizeof v);
			h->nlost++;
		}
	}
	for (uint32_t i = 0; i < f->nsws; i++)
		if (part_mine(s->part, &f->sws[i]->node)) {
			uint64_t v[2] = { i, f->sws[i]->buf_peak };
			buf_put(b, v, sizeof v);
			h->nsws++;
		}
}

static void pack_conns(struct sim *s, struct part_buf *b, struct part_head *h)
{
	for (uint32_t i = 0; i < s->w.nconns; i++) {
		const struct conn *c = s->w.conns[i];
		uint32_t fl = c->stream ? 0 : s->conn_flow[c->id]; /* a queue pair's: pack_flows */
		if (part_mine(s->part, &c->src->node)) {
			struct part_conn r = { .id = i,
					       .side = 1,
					       .done = c->done,
					       .started = c->started,
					       .start = c->start,
					       .finish = c->finish,
					       .at = s->tx_at[fl],
					       .rx_at = s->rx_at[fl],
					       .a = c->sent_bytes,
					       .b = c->acked_bytes,
					       .c = c->retx_bytes,
					       .d = c->ts_acked_bytes };
			PUT(b, r);
			h->nconns++;
		}
		if (part_mine(s->part, &c->dst->node)) {
			struct part_conn r = { .id = i,
					       .side = 2,
					       .at = s->rx_at[fl],
					       .a = c->rcvd_bytes,
					       .b = c->dup_bytes,
					       .c = c->rx_data_pkts,
					       .d = c->rx_reordered };
			PUT(b, r);
			h->nconns++;
		}
	}
}

static void pack_flows(struct sim *s, struct part_buf *b, struct part_head *h)
{
	for (uint32_t i = 0; i < s->flows.n; i++) {
		const struct flow_spec *fs = &s->flows.v[i];
		bool mine = part_flow_mine(s, i), rel = s->rel_at[i] != SIMTIME_MAX && mine;
		uint32_t has = rel ? FL_REL : 0;
		if (flow_is_marker(fs))
			has |= rel ? FL_RX | FL_TX : 0;
		else if (s->fchan[i])
			has |= (mine ? FL_TX : 0) |
			       (part_mine(s->part, &s->fab.hosts[fs->dst]->node) ? FL_RX : 0);
		if (!has)
			continue;
		struct part_flow r = { .id = i,
				       .has = has,
				       .rel = s->rel_at[i],
				       .rx = s->rx_at[i],
				       .tx = s->tx_at[i] };
		PUT(b, r);
		h->nflows++;
	}
}

/* This rank's waits behind paused ports (fab_hol_spans), those still open
 * ending at SIMTIME_MAX: rank 0 ends them at its own end, as one process
 * does (fab_hol_blocked). */
static void pack_spans(struct sim *s, struct part_buf *b, struct part_head *h)
{
	const struct fab_hol *hl = s->fab.hol;
	if (!hl)
		return;
	buf_put(b, hl->spans, hl->nspans * sizeof *hl->spans);
	h->nspans = hl->nspans;
	for (uint32_t c = 0; c < hl->nconns; c++)
		if (hl->n[c]) {
			struct hol_span sp = { .conn = c, .from = hl->since[c], .to = SIMTIME_MAX };
			PUT(b, sp);
			h->nspans++;
		}
}

static int span_cmp(const void *a, const void *b)
{
	const struct hol_span *x = a, *y = b;
	if (x->conn != y->conn)
		return x->conn < y->conn ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* Every connection's blocked time, the union of all ranks' spans, into rank
 * 0's fab_hol: what one process counts with one n per connection. */
static void merge_spans(struct sim *s, struct hol_span *v, size_t n)
{
	struct fab_hol *h = s->fab.hol;
	memset(h->n, 0, h->nconns * sizeof *h->n);
	memset(h->total, 0, h->nconns * sizeof *h->total);
	if (n)
		qsort(v, n, sizeof *v, span_cmp);
	for (size_t i = 0; i < n;) {
		uint32_t c = v[i].conn;
		simtime_t from = v[i].from, to = v[i].from, sum = 0;
		for (; i < n && v[i].conn == c; i++) {
			simtime_t end = v[i].to == SIMTIME_MAX ? s->q.now : v[i].to;
			if (v[i].from > to) {
				sum += to - from;
				from = v[i].from;
			}
			to = end > to ? end : to;
		}
		h->total[c] = sum + (to - from);
	}
}

static void unpack_conn(struct sim *s, const struct part_conn *r)
{
	struct conn *c = s->w.conns[r->id];
	/* a flow's: a queue pair (c->stream) has none, and no entry */
	uint32_t fl = c->stream ? 0 : s->conn_flow[c->id];
	if (r->side == 1) {
		c->done = r->done;
		c->started = r->started;
		c->start = r->start;
		c->finish = r->finish;
		if (!c->stream) /* a queue pair's messages: pack_flows */
			s->tx_at[fl] = r->at;
		if (c->w->ops->tx_reports_rx && !c->stream) /* run.c, on_msg */
			s->rx_at[fl] = r->rx_at;
		c->sent_bytes = r->a;
		c->acked_bytes = r->b;
		c->retx_bytes = r->c;
		c->ts_acked_bytes = r->d;
	} else {
		if (!c->w->ops->tx_reports_rx && !c->stream)
			s->rx_at[fl] = r->at;
		c->rcvd_bytes = r->a;
		c->dup_bytes = r->b;
		c->rx_data_pkts = r->c;
		c->rx_reordered = r->d;
	}
}

static void unpack_port(struct sim *s, const struct part_port *r)
{
	struct port *pt = &s->fab.port_mem[r->idx];
	pt->paused = r->paused;
	pt->ecn_marks_lo = r->ecn_marks_lo;
	pt->tx_bytes = r->tx_bytes;
	pt->tx_pkts = r->tx_pkts;
	pt->max_qbytes = r->max_qbytes;
	pt->qbytes_total = r->qbytes_total;
	pt->qbytes_neg_t = r->qbytes_neg_t;
	pt->st = r->st;
	if (s->fab.trim_st)
		s->fab.trim_st[r->idx] = r->trim;
	if (s->load)
		sim_load_port_set(s, r->idx, r->load);
	memcpy(pt->paused_at, r->paused_at, sizeof r->paused_at);
}

/* A rank's collective-layer trace (ccl_trace) after the others': its
 * header line only if none came before. */
static void trace_add(struct part_buf *tr, const char *v, size_t n)
{
	const char *nl = n ? memchr(v, '\n', n) : NULL;
	if (!nl)
		return;
	size_t skip = tr->n ? (size_t)(nl - v) + 1 : 0;
	buf_put(tr, v + skip, n - skip);
}

/* One rank's share (a buffer part_pack made) into rank 0's sim. */

static void unpack(struct sim *s, const unsigned char *v, struct part_buf *rows,
		   struct part_buf *lost, struct part_buf *spans, struct part_buf *trace,
		   struct part_head *sum)
{
	struct part_head h;
	memcpy(&h, v, sizeof h);
	v += sizeof h;
	sum->processed += h.processed;
	sum->peak = h.peak > sum->peak ? h.peak : sum->peak;
	sum->pool_peak += h.pool_peak;
	sum->nflows_done += h.nflows_done;
	sum->no_route += h.no_route;
	sum->overflow += h.overflow;
	sum->cut_pkts += h.cut_pkts;
	for (size_t i = 0; i <= TP_OOD_MAX; i++)
		sum->ood[i] += h.ood[i];
	for (size_t i = 0; i < LB_MAX_COUNTERS; i++)
		sum->lb[i] += h.lb[i];
	for (uint64_t i = 0; i < h.nports; i++, v += sizeof(struct part_port)) {
		struct part_port r;
		memcpy(&r, v, sizeof r);
		unpack_port(s, &r);
	}
	buf_put(lost, v, h.nlost * 2 * sizeof(uint64_t)); /* added once all are in */
	v += h.nlost * 2 * sizeof(uint64_t);
	for (uint64_t i = 0; i < h.nsws; i++, v += 2 * sizeof(uint64_t)) {
		uint64_t w[2];
		memcpy(w, v, sizeof w);
		s->fab.sws[w[0]]->buf_peak = w[1];
	}
	for (uint64_t i = 0; i < h.nconns; i++, v += sizeof(struct part_conn)) {
		struct part_conn r;
		memcpy(&r, v, sizeof r);
		unpack_conn(s, &r);
	}
	for (uint64_t i = 0; i < h.nflows; i++, v += sizeof(struct part_flow)) {
		struct part_flow r;
		memcpy(&r, v, sizeof r);
		if (r.has & FL_REL)
			s->rel_at[r.id] = r.rel;
		if (r.has & FL_RX)
			s->rx_at[r.id] = r.rx;
		if (r.has & FL_TX)
			s->tx_at[r.id] = r.tx;
	}
	buf_put(spans, v, h.nspans * sizeof(struct hol_span));
	v += h.nspans * sizeof(struct hol_span);
	trace_add(trace, (const char *)v, h.ntrace);
	v += h.ntrace;
	buf_put(rows, v, h.nrows * sizeof(struct ts_row));
}

/* This rank's share of the results, in one buffer. */
static void pack(struct sim *s, struct part_buf *b)
{
	struct part_head h = { .processed = s->q.processed,
			       .peak = s->q.peak,
			       .pool_peak = s->pkts.peak,
			       .nflows_done = s->nflows_done,
			       .no_route = s->fab.no_route_drops,
			       .overflow = s->fab.lossless_overflow,
			       .nrows = s->ts->n,
			       .cut_pkts = s->part->cut_pkts };
	memcpy(h.ood, s->w.ood_hist, sizeof h.ood);
	if (s->fab.lb && s->fab.lb->counts)
		s->fab.lb->counts(&s->fab, h.lb);
	buf_put(b, NULL, sizeof h);
	pack_ports(s, b, &h);
	pack_conns(s, b, &h);
	pack_flows(s, b, &h);
	pack_spans(s, b, &h);
	h.ntrace = s->ccl.trace_len;
	buf_put(b, s->ccl.trace, s->ccl.trace_len);
	memcpy(b->v, &h, sizeof h);
	buf_put(b, s->ts->rows, s->ts->n * sizeof(struct ts_row));
}

void part_gather(struct sim *s)
{
	struct part *P = s->part;
	struct part_buf b = { 0 };
	pack(s, &b);
	if (P->rank) {
		ranks_send(0, PART_TAG, b.v, b.n);
		mp_free(b.v);
		return;
	}
	struct part_buf rows = { 0 }, lost = { 0 }, spans = { 0 }, trace = { 0 };
	struct part_head sum = { 0 };
	unpack(s, b.v, &rows, &lost, &spans, &trace, &sum);
	mp_free(b.v);
	for (int r = 1; r < P->nranks; r++) {
		size_t n;
		unsigned char *v = ranks_recv(r, PART_TAG, &n);
		unpack(s, v, &rows, &lost, &spans, &trace, &sum);
		mp_free(v);
	}
	if (trace.n) { /* a string, as ccl_trace keeps it */
		buf_put(&trace, "", 1);
		trace.n--;
	}
	mp_free(s->ccl.trace); /* every rank's rows (ccl_trace_sort orders them) */
	s->ccl.trace = (char *)trace.v;
	s->ccl.trace_len = trace.n;
	s->ccl.trace_cap = trace.cap;
	if (s->fab.hol)
		merge_spans(s, (struct hol_span *)spans.v, spans.n / sizeof(struct hol_span));
	mp_free(spans.v);
	for (size_t off = 0; off + 16 <= lost.n; off += 16) {
		uint64_t w[2];
		memcpy(w, lost.v + off, sizeof w);
		s->fab.port_mem[w[0]].st.drops_link += w[1];
	}
	mp_free(lost.v);
	s->q.processed = sum.processed;
	s->q.peak = sum.peak;
	s->pkts.peak = sum.pool_peak;
	s->nflows_done = sum.nflows_done;
	s->fab.no_route_drops = sum.no_route;
	s->fab.lossless_overflow = sum.overflow;
	memcpy(s->w.ood_hist, sum.ood, sizeof sum.ood);
	memcpy(s->lb_sum, sum.lb, sizeof sum.lb);
	s->lb_summed = true;
	P->cut_pkts_all = sum.cut_pkts;
	sim_ts_combine(s, (struct ts_row *)rows.v, rows.n / sizeof(struct ts_row));
}

void part_free(struct sim *s)
{
	struct part *P = s->part;
	if (!P)
		return;
	for (int r = 0; P->out && r < P->nranks; r++)
		mp_free(P->out[r].v);
	mp_free(P->out);
	mp_free(P->owner);
	mp_free(P->ups);
	mp_free(P->pfc_dirty);
	mp_free(P->pfc_flag);
	mp_free(P->live);
	if (P->shadow)
		evq_free(P->shadow);
	mp_free(P->shadow);
	mp_free(P);
	s->part = NULL;
}

/* hermes.c - Hermes (Zhang, Zhang, Bai, Chen and Chowdhury, "Resilient
 * Datacenter Load Balancing in the Wild", ACM SIGCOMM 2017): path sensing
 * with RTT and ECN at the edge, paths classed good / gray / congested, and
 * timely yet cautious rerouting.
 *
 * Why here: Hermes is an edge scheme. It runs in the end host's network stack
 * (the paper: a shim under TCP, no switch modification) and steers a flow by
 * choosing the path its packets take; the transport above it is unchanged.
 * In mpsim that edge is the NIC's wire, the lb interface's host_tx / host_rx
 * hooks: the sender's Hermes writes the chosen path into the packet's
 * metadata when the packet leaves the NIC, the switches follow that path
 * (choose: the path id read digit by digit, one digit per tier, as a source
 * route or a chosen UDP source port would pin it), and the receiver's Hermes
 * turns what arrives (the ECN mark of each data packet, its send time) into
 * feedback that rides back on the transport's ACKs. Putting it in a transport
 * would tie it to one protocol; putting it in the switches is not Hermes.
 *
 * Sensing (paper section 3.1), per sending host and destination ToR, per path:
 * - RTT: the smallest RTT sample of the last one or two windows of `window`
 *   (the authors' ns-3, snowzjx/ns3-load-balance "TLB": the minimum RTT of an
 *   aging period, T1). Samples come from ACKs (send time of the data packet
 *   echoed, less the time the receiver held it) and from probes;
 * - ECN fraction: ECN-marked bytes / acknowledged bytes over the same window,
 *   counted once at least ecn_min_bytes were acknowledged (authors' ns-3);
 * - active probing: every probe_interval, while a host sends toward a ToR, it
 *   probes `probes` random paths and the best known one (power of two
 *   choices); a probe travels in the data class, is answered by the
 *   destination's Hermes and never reaches a transport (host_rx keeps it).
 * Classes: good when RTT < base + rtt_low and ECN fraction < t_ecn; congested
 * when RTT > base + rtt_high and ECN fraction > t_ecn; gray otherwise, and a
 * path without a recent sample is gray. base is the smallest RTT ever seen
 * toward the ToR. (signals: rtt drops the ECN conditions, as the authors'
 * ns-3 simulations did; the paper uses both.) Failure sensing (timeouts,
 * retransmissions, blackholes) is not modelled: mpsim's fabrics here do not
 * fail silently.
 *
 * Rerouting (section 3.2), at each data packet the host sends:
 * - a new flow, or one idle longer than flowlet_timeout (a gap that cannot
 *   reorder; the authors' ns-3 reroutes there too), takes the good path with
 *   the least local sending rate (a DRE of this host's bytes on the path),
 *   else the gray one with the least, else any at random;
 * - a running flow moves only when its path is congested (timely), and only
 *   if it has sent at least s_bytes on it and sends at less than r_frac of its
 *   NIC's rate (cautious: a fast flow is doing fine, a young one would gain
 *   little), to a notably better path: RTT lower by more than delta_rtt and
 *   ECN fraction lower by more than delta_ecn; good paths first, then gray.
 *   As in the authors' ns-3, a flow tries at most once per 100 us and
 *   then moves with probability reroute_prob (no herds).
 *
 * Defaults. The paper's guidelines where we have them: T_ECN 40%, T_RTT_low
 * 20 us above the base RTT (the low end of its 20-40 us), S 100 KB (low end
 * of 100-800 KB), R 30% of the link rate, a probe interval of 100 us (low end
 * of 100-500 us), two probed paths. T_RTT_high is set in the paper against
 * the base RTT of a 10 Gb/s kernel-TCP fabric; at 100 Gb/s with a base RTT
 * under 10 us we take base + 40 us, the top of the T_RTT_low range, so good <
 * gray < congested stay ordered (ours). The authors' ns-3 for what the paper
 * leaves open: window 100 us, ecn_min_bytes 14000, delta_rtt 1 us, the flow
 * retry gap 100 us, reroute_prob 0.5, flowlet_timeout 500 us; delta_ecn 5%
 * (ours: the authors' code leaves the ECN condition out).
 *
 * A flow is a connection (all of its queue pairs share one path); a path is
 * an index below the product of the fan-outs toward the core.
 */
#include "lb/hermes.h"

#include <string.h>

#include "core/mem.h"
#include "core/rng.h"
#include "lb/lbcommon.h"
#include "net/fabric.h"
#include "net/host.h"
#include "net/lb.h"
#include "net/switch.h"

enum { SIG_RTT_ECN, SIG_RTT };

struct hermes_params {
	simtime_t probe_interval, window;
	simtime_t rtt_low, rtt_high; /* above the base RTT, ps */
	double t_ecn;
	simtime_t delta_rtt;
	double delta_ecn;
	uint64_t s_bytes;
	double r_frac;
	double reroute_prob;
	simtime_t flowlet_timeout;
	uint64_t ecn_min_bytes;
	uint64_t probes;
	simtime_t dre_period;
	double alpha;
	int signals;
};

static const struct opt_desc hermes_opts[] = {
	{ "probe_interval", OPT_TIME, offsetof(struct hermes_params, probe_interval), "100us", 0,
	  1e12, "probe the paths toward each ToR a host sends to this often; 0 = no probes" },
	{ "probes", OPT_UINT, offsetof(struct hermes_params, probes), "2", 0, 64,
	  "random paths probed each interval, besides the best known one" },
	{ "window", OPT_TIME, offsetof(struct hermes_params, window), "100us", 1, 1e12,
	  "a path's RTT is its smallest sample and its ECN fraction the marked share of the "
	  "last one or two windows" },
	{ "rtt_low", OPT_TIME, offsetof(struct hermes_params, rtt_low), "20us", 0, 1e12,
	  "T_RTT_low above the base RTT: a good path is faster" },
	{ "rtt_high", OPT_TIME, offsetof(struct hermes_params, rtt_high), "40us", 0, 1e12,
	  "T_RTT_high above the base RTT: a congested path is slower" },
	{ "t_ecn", OPT_DOUBLE, offsetof(struct hermes_params, t_ecn), "0.4", 0, 1,
	  "T_ECN: ECN-marked fraction of a good (below) or congested (above) path" },
	{ "delta_rtt", OPT_TIME, offsetof(struct hermes_params, delta_rtt), "1us", 0, 1e12,
	  "a notably better path has an RTT lower by more than this" },
	{ "delta_ecn", OPT_DOUBLE, offsetof(struct hermes_params, delta_ecn), "0.05", 0, 1,
	  "... and an ECN fraction lower by more than this (signals: rtt_ecn)" },
	{ "s_bytes", OPT_SIZE, offsetof(struct hermes_params, s_bytes), "100KB", 0, 1e15,
	  "S: a flow reroutes only after sending this much on its path" },
	{ "r_frac", OPT_DOUBLE, offsetof(struct hermes_params, r_frac), "0.3", 0, 100,
	  "R: ... and only while it sends at less than this fraction of its NIC's rate" },
	{ "reroute_prob", OPT_DOUBLE, offsetof(struct hermes_params, reroute_prob), "0.5", 0, 1,
	  "a flow due to move moves with this probability (at most one try per 100us)" },
	{ "flowlet_timeout", OPT_TIME, offsetof(struct hermes_params, flowlet_timeout), "500us", 1,
	  1e13, "a flow idle this long chooses its path afresh, as a new flow" },
	{ "ecn_min_bytes", OPT_SIZE, offsetof(struct hermes_params, ecn_min_bytes), "14000B", 0,
	  1e12, "a path's ECN fraction counts once this many bytes were acknowledged" },
	{ "dre_period", OPT_TIME, offsetof(struct hermes_params, dre_period), "50us", 1, 1e12,
	  "DRE period of the local sending rates (as CONGA's)" },
	{ "alpha", OPT_DOUBLE, offsetof(struct hermes_params, alpha), "0.2", 0.0001, 1,
	  "DRE decay of the local sending rates" },
	{ "signals", OPT_ENUM, offsetof(struct hermes_params, signals), "rtt_ecn", 0, 0,
	  "classify paths by RTT and ECN (the paper) or RTT alone (the authors' simulations)",
	  (const char *const[]){ "rtt_ecn", "rtt", NULL } },
	OPT_END
};

/* What Hermes carries in a packet (a shim header between hosts). */
struct hm_meta {
	simtime_t ts;	   /* data, probe: when it left the sender's NIC; feedback:
			  * that time of the acknowledged data, plus its hold */
	uint32_t fb_bytes; /* feedback: data bytes received since the last */
	uint32_t fb_ce;	   /* ... of them ECN-marked */
	uint16_t path;	   /* HM_PATH: the path switches follow */
	uint16_t fb_path;  /* the path the acknowledged data took */
	uint8_t flags;
};
enum { HM_PATH = 1, HM_FB = 2, HM_PROBE = 4, HM_REPLY = 8 };

struct hm_path {
	simtime_t win;		     /* start of the current window, ps */
	simtime_t rtt_cur, rtt_prev; /* smallest RTT in it and the one before (0: none) */
	uint32_t bytes, ce, pbytes, pce;
	struct dre rate; /* this host's bytes sent on the path */
};

struct hm_row {		   /* one host toward one ToR */
	simtime_t base;	   /* smallest RTT ever seen, ps (0: none) */
	simtime_t last_tx; /* last data sent toward the ToR */
	uint32_t dst_host; /* a host under it (probes go there) */
	uint8_t rail;
	struct hm_path p[]; /* npaths */
};

struct hm_host {
	struct ev_src evs;
	bool probing; /* a probe event is pending */
	struct mp_rng rng;
	struct hm_row **rows; /* per ToR, allocated on first use */
};

struct hm_flow {
	/* sender */
	simtime_t last, try_at; /* last data packet; last reroute try */
	uint64_t sent;		/* bytes sent on the current path */
	struct dre rate;	/* the flow's sending rate */
	uint32_t reroutes;
	uint16_t path;
	bool active;
	/* receiver: what the next ACK feeds back */
	bool r_pend;
	uint16_t r_path;
	simtime_t r_ts, r_rx;
	uint32_t r_bytes, r_ce;
};

struct hermes {
	const struct hermes_params *P;
	struct dre_params dp;
	struct fabric *f;
	uint32_t npaths;
	uint32_t radix[8]; /* per switch level: the path digit's place value */
	struct hm_host *hosts;
	struct hm_flow *flows; /* per connection */
	uint32_t nflows;
};

#define RETRY_GAP (100 * PS_PER_US)

static inline uint32_t tor_of(const struct fabric *f, uint32_t host, uint8_t rail)
{
	return f->host_tor[host * f->rails + rail];
}

static struct hm_flow *flow(struct hermes *c, uint32_t conn)
{
	if (conn >= c->nflows) { /* grows by doubling: rare, then never */
		uint32_t n = c->nflows ? c->nflows : 64;
		while (n <= conn)
			n *= 2;
		c->flows = mp_realloc(c->flows, (size_t)n * sizeof *c->flows);
		memset(c->flows + c->nflows, 0, (size_t)(n - c->nflows) * sizeof *c->flows);
		c->nflows = n;
	}
	return &c->flows[conn];
}

static struct hm_row *row(struct hermes *c, uint32_t h, uint32_t tor)
{
	struct hm_row **r = &c->hosts[h].rows[tor];
	if (!*r) /* first traffic toward this ToR */
		*r = mp_calloc(1, sizeof **r + c->npaths * sizeof(struct hm_path));
	return *r;
}

/* ---- sensing -------------------------------------------------------------- */
static void path_roll(const struct hermes *c, struct hm_path *hp, simtime_t now)
{
	simtime_t w = c->P->window;
	if (now - hp->win < w)
		return;
	bool adjacent = now - hp->win < 2 * w;
	hp->rtt_prev = adjacent ? hp->rtt_cur : 0;
	hp->pbytes = adjacent ? hp->bytes : 0;
	hp->pce = adjacent ? hp->ce : 0;
	hp->rtt_cur = 0;
	hp->bytes = hp->ce = 0;
	hp->win = now;
}

static void path_sample(struct hermes *c, struct hm_row *r, uint32_t path, simtime_t rtt,
			uint32_t bytes, uint32_t ce, simtime_t now)
{
	struct hm_path *hp = &r->p[path];
	path_roll(c, hp, now);
	if (rtt && (!hp->rtt_cur || rtt < hp->rtt_cur))
		hp->rtt_cur = rtt;
	if (rtt && (!r->base || rtt < r->base))
		r->base = rtt;
	hp->bytes += bytes;
	hp->ce += ce;
}

struct hm_view {
	simtime_t rtt; /* 0: no recent sample */
	double ecn;
	int cls; /* enum hermes_class */
};

static struct hm_view judge(struct hermes *c, struct hm_row *r, uint32_t path, simtime_t now)
{
	const struct hermes_params *P = c->P;
	struct hm_path *hp = &r->p[path];
	path_roll(c, hp, now);
	struct hm_view v = { 0, 0, HERMES_GRAY };
	v.rtt = hp->rtt_cur && hp->rtt_prev
		    ? (hp->rtt_cur < hp->rtt_prev ? hp->rtt_cur : hp->rtt_prev)
		    : hp->rtt_cur | hp->rtt_prev;
	uint64_t b = (uint64_t)hp->bytes + hp->pbytes;
	if (b >= P->ecn_min_bytes && b)
		v.ecn = (double)(hp->ce + hp->pce) / (double)b;
	if (!v.rtt)
		return v; /* unexplored: gray */
	bool ecn = P->signals == SIG_RTT_ECN;
	if (v.rtt < r->base + P->rtt_low && (!ecn || v.ecn < P->t_ecn))
		v.cls = HERMES_GOOD;
	else if (v.rtt > r->base + P->rtt_high && (!ecn || v.ecn > P->t_ecn))
		v.cls = HERMES_CONGESTED;
	return v;
}

/* ---- path choice at the sender ------------------------------------------- */
/* The path of class `cls` with the least local sending rate (ties random),
 * among those notably better than `old` when old != NULL; -1 if none. */
static int pick(struct hermes *c, struct hm_host *hs, struct hm_row *r, int cls,
		const struct hm_view *old, uint64_t rate_bps, simtime_t now)
{
	const struct hermes_params *P = c->P;
	double best = 0;
	int pick = -1;
	uint32_t ties = 0;
	for (uint32_t k = 0; k < c->npaths; k++) {
		struct hm_view v = judge(c, r, k, now);
		if (v.cls != cls)
			continue;
		if (old) {
			/* an unexplored path counts as just good */
			simtime_t rtt = v.rtt ? v.rtt : r->base + P->rtt_low;
			if (!(old->rtt > rtt + P->delta_rtt))
				continue;
			if (P->signals == SIG_RTT_ECN && !(old->ecn - v.ecn > P->delta_ecn))
				continue;
		}
		double u = dre_util(&r->p[k].rate, &c->dp, now, rate_bps);
		if (pick < 0 || u < best) {
			best = u;
			pick = (int)k;
			ties = 1;
		} else if (u == best && rng_below(&hs->rng, ++ties) == 0) {
			pick = (int)k; /* reservoir: uniform among equals */
		}
	}
	return pick;
}

static uint16_t choose_new(struct hermes *c, struct hm_host *hs, struct hm_row *r,
			   uint64_t rate_bps, simtime_t now)
{
	int k = pick(c, hs, r, HERMES_GOOD, NULL, rate_bps, now);
	if (k < 0)
		k = pick(c, hs, r, HERMES_GRAY, NULL, rate_bps, now);
	if (k < 0)
		k = (int)rng_below(&hs->rng, c->npaths);
	return (uint16_t)k;
}

static void data_tx(struct hermes *c, struct host *h, struct packet *p, struct hm_meta *m,
		    simtime_t now);
static void ensure_probing(struct hermes *c, struct host *h, simtime_t now);

static void hermes_host_tx(struct fabric *f, struct host *h, struct packet *p)
{
	struct hermes *c = f->lb_priv;
	struct hm_meta *m = pkt_meta(p);
	simtime_t now = f->q->now;
	if (p->type == PKT_DATA) {
		data_tx(c, h, p, m, now);
		return;
	}
	if (m->flags & HM_PROBE) {
		if (!(m->flags & HM_REPLY))
			m->ts = now;
		return;
	}
	if (p->conn >= c->nflows)
		return;
	struct hm_flow *fl = &c->flows[p->conn];
	if (!fl->r_pend) /* the receiver's ACK, NACK or CNP: feed back */
		return;
	m->flags |= HM_FB;
	m->fb_path = fl->r_path;
	m->ts = fl->r_ts + (now - fl->r_rx);
	m->fb_bytes = fl->r_bytes;
	m->fb_ce = fl->r_ce;
	fl->r_pend = false;
	fl->r_bytes = fl->r_ce = 0;
}

static void data_tx(struct hermes *c, struct host *h, struct packet *p, struct hm_meta *m,
		    simtime_t now)
{
	const struct hermes_params *P = c->P;
	struct fabric *f = c->f;
	uint32_t src = tor_of(f, p->src, p->rail), dst = tor_of(f, p->dst, p->rail);
	if (src == dst)
		return;
	struct hm_host *hs = &c->hosts[h->hid];
	struct hm_row *r = row(c, h->hid, dst);
	struct hm_flow *fl = flow(c, p->conn);
	uint64_t line = h->node.ports[p->rail % h->node.nports].rate_bps;
	r->last_tx = now;
	r->dst_host = p->dst;
	r->rail = p->rail;
	if (!fl->active || now - fl->last > P->flowlet_timeout) {
		fl->path = choose_new(c, hs, r, line, now);
		fl->active = true;
		fl->sent = 0;
		fl->try_at = now;
	} else {
		struct hm_view cur = judge(c, r, fl->path, now);
		if (cur.cls == HERMES_CONGESTED && fl->sent >= P->s_bytes &&
		    dre_util(&fl->rate, &c->dp, now, line) < P->r_frac &&
		    now - fl->try_at >= RETRY_GAP) {
			fl->try_at = now;
			if (rng_u01(&hs->rng) < P->reroute_prob) {
				int k = pick(c, hs, r, HERMES_GOOD, &cur, line, now);
				if (k < 0)
					k = pick(c, hs, r, HERMES_GRAY, &cur, line, now);
				if (k >= 0 && (uint16_t)k != fl->path) {
					fl->path = (uint16_t)k;
					fl->sent = 0;
					fl->reroutes++;
				}
			}
		}
	}
	fl->last = now;
	fl->sent += p->size;
	dre_add(&fl->rate, &c->dp, now, p->size);
	dre_add(&r->p[fl->path].rate, &c->dp, now, p->size);
	m->flags |= HM_PATH;
	m->path = fl->path;
	m->ts = now;
	ensure_probing(c, h, now);
}

/* ---- arrivals at a host --------------------------------------------------- */
static bool hermes_host_rx(struct fabric *f, struct host *h, struct packet *p)
{
	struct hermes *c = f->lb_priv;
	struct hm_meta *m = pkt_meta(p);
	simtime_t now = f->q->now;
	if (m->flags & HM_PROBE) {
		if (m->flags & HM_REPLY) { /* our probe is back */
			struct hm_row *r = row(c, h->hid, tor_of(f, p->src, p->rail));
			path_sample(c, r, m->path, now - m->ts, 0, 0, now);
			pkt_free(f, p);
		} else { /* answer it (the reply goes by ECMP) */
			uint32_t s = p->src;
			p->src = p->dst;
			p->dst = s;
			m->flags = HM_PROBE | HM_REPLY;
			host_send(f, h, p);
		}
		return true;
	}
	if (p->type == PKT_DATA && (m->flags & HM_PATH)) {
		struct hm_flow *fl = flow(c, p->conn);
		fl->r_pend = true;
		fl->r_path = m->path;
		fl->r_ts = m->ts;
		fl->r_rx = now;
		fl->r_bytes += p->size;
		fl->r_ce += (p->flags & PKT_F_CE) ? p->size : 0;
	} else if ((m->flags & HM_FB) && p->conn < c->nflows) {
		struct hm_row *r = row(c, h->hid, tor_of(f, p->src, p->rail));
		path_sample(c, r, m->fb_path, now - m->ts, m->fb_bytes, m->fb_ce, now);
	}
	return false;
}

/* ---- probing ----------------------------------------------------------------- */
static void send_probe(struct hermes *c, struct host *h, const struct hm_row *r, uint32_t path)
{
	struct packet *p = pkt_alloc(c->f);
	memset(p, 0, sizeof *p);
	p->type = PKT_PROBE;
	p->cls = CLS_DATA;
	p->size = 64;
	p->src = h->hid;
	p->dst = r->dst_host;
	p->rail = r->rail;
	p->conn = UINT32_MAX;
	struct hm_meta *m = pkt_meta(p);
	m->flags = HM_PATH | HM_PROBE;
	m->path = (uint16_t)path;
	host_send(c->f, h, p);
}

static void probe_ev(void *obj, uint64_t hid)
{
	struct hermes *c = obj;
	struct fabric *f = c->f;
	struct host *h = f->hosts[hid];
	struct hm_host *hs = &c->hosts[hid];
	simtime_t now = f->q->now, T = c->P->probe_interval;
	bool any = false;
	for (uint32_t t = 0; t < f->ntors; t++) {
		struct hm_row *r = hs->rows[t];
		if (!r || now - r->last_tx > 2 * T)
			continue;
		any = true;
		uint32_t best = 0;
		simtime_t brtt = 0;
		for (uint32_t k = 0; k < c->npaths; k++) {
			struct hm_view v = judge(c, r, k, now);
			if (v.rtt && (!brtt || v.rtt < brtt)) {
				brtt = v.rtt;
				best = k;
			}
		}
		send_probe(c, h, r, best);
		for (uint64_t i = 0; i < c->P->probes; i++)
			send_probe(c, h, r, (uint32_t)rng_below(&hs->rng, c->npaths));
	}
	if (any)
		evq_at(f->q, &hs->evs, now + T, probe_ev, c, hid);
	else
		hs->probing = false;
}

static void ensure_probing(struct hermes *c, struct host *h, simtime_t now)
{
	struct hm_host *hs = &c->hosts[h->hid];
	if (hs->probing || !c->P->probe_interval)
		return;
	hs->probing = true;
	evq_at(c->f->q, &hs->evs, now + c->P->probe_interval, probe_ev, c, h->hid);
}

/* ---- switches follow the path ---------------------------------------------- */
static uint16_t hermes_choose(struct fabric *f, struct sw *s, const struct packet *p,
			      const uint16_t *cand, unsigned n)
{
	struct hermes *c = f->lb_priv;
	const struct hm_meta *m = pkt_meta_c(p);
	if (m->flags & HM_PATH) {
		unsigned lvl = s->node.level < 8 ? s->node.level : 7;
		return cand[(m->path / c->radix[lvl]) % n];
	}
	/* ACKs, probe replies: ECMP on the flow */
	uint64_t h = rng_mix64(s->hash_seed ^ ((uint64_t)p->src << 32 | p->dst)) ^
		     rng_mix64((uint64_t)p->conn << 16 | p->entropy);
	return cand[(uint64_t)(((unsigned __int128)rng_mix64(h) * n) >> 64)];
}

/* ---- setup -------------------------------------------------------------------- */
static void hermes_fini(struct fabric *f)
{
	struct hermes *c = f->lb_priv;
	for (uint32_t i = 0; i < f->nhosts; i++) {
		for (uint32_t t = 0; t < f->ntors; t++)
			mp_free(c->hosts[i].rows[t]);
		mp_free(c->hosts[i].rows);
	}
	mp_free(c->hosts);
	mp_free(c->flows);
	mp_free(c);
	f->lb_priv = NULL;
}

static int hermes_init(struct fabric *f, struct mp_err *e)
{
	const struct hermes_params *P = f->lb_params;
	if (P->rtt_low > P->rtt_high)
		return mp_errf(e, MP_EUSER,
			       "lb: rtt_low: %.3f us is above rtt_high (%.3f us), so a path could "
			       "be good and congested at once: expected rtt_low at most rtt_high",
			       time_to_us(P->rtt_low), time_to_us(P->rtt_high));
	if (f->ntors < 2)
		return mp_errf(
		    e, MP_EUSER,
		    "lb: type: hermes steers flows over the paths between ToRs, and this "
		    "fabric has %u ToR (a star is one switch): expected a topology with "
		    "paths to choose (leaf_spine, fat_tree)",
		    f->ntors);
	struct hermes *c = mp_calloc(1, sizeof *c);
	f->lb_priv = c;
	c->P = P;
	c->f = f;
	c->dp = (struct dre_params){ .period = P->dre_period, .alpha = P->alpha };
	/* fan-out toward the core per switch level: the path id's digits */
	uint32_t up[8] = { 0 };
	for (uint32_t i = 0; i < f->nsws; i++) {
		const struct sw *s = f->sws[i];
		unsigned lvl = s->node.level < 8 ? s->node.level : 7;
		for (uint32_t t = 0; t < f->ntors; t++)
			if (s->route[t].n > up[lvl])
				up[lvl] = s->route[t].n;
	}
	uint64_t np = 1;
	for (unsigned l = 0; l < 8; l++) {
		c->radix[l] = (uint32_t)np;
		if (l && up[l] > 1)
			np *= up[l];
	}
	if (np > 4096)
		return mp_errf(e, MP_EUSER,
			       "lb: hermes: expected at most 4096 paths between two ToRs, the "
			       "topology has %llu",
			       (unsigned long long)np);
	c->npaths = (uint32_t)np;
	c->hosts = mp_calloc(f->nhosts, sizeof *c->hosts);
	for (uint32_t i = 0; i < f->nhosts; i++) {
		struct hm_host *hs = &c->hosts[i];
		hs->rows = mp_calloc(f->ntors ? f->ntors : 1, sizeof *hs->rows);
		/* a host creates the events of its own Hermes: entity = node id + 1
		 * (ids 1..nnodes are the nodes', fabric.c) */
		hs->evs.id = f->hosts[i]->node.id + 1;
		rng_init(&hs->rng, f->seed, RNG_HOST, (1ULL << 40) | i);
	}
	return MP_OK;
}

const struct lb_ops hermes_lb_ops = {
	.name = "hermes",
	.summary = "Hermes (SIGCOMM 2017) at the hosts: RTT+ECN path sensing with probes, "
		   "good/gray/congested paths, timely yet cautious rerouting; switches follow "
		   "the path in the packet",
	.opts = hermes_opts,
	.params_size = sizeof(struct hermes_params),
	.pkt_meta_size = sizeof(struct hm_meta),
	.init = hermes_init,
	.fini = hermes_fini,
	.choose = hermes_choose,
	.host_tx = hermes_host_tx,
	.host_rx = hermes_host_rx,
};

/* ---- for tests -------------------------------------------------------------- */
int hermes_flow_path(const struct fabric *f, uint32_t conn)
{
	const struct hermes *c = f->lb_priv;
	return conn < c->nflows && c->flows[conn].active ? c->flows[conn].path : -1;
}

uint32_t hermes_flow_reroutes(const struct fabric *f, uint32_t conn)
{
	const struct hermes *c = f->lb_priv;
	return conn < c->nflows ? c->flows[conn].reroutes : 0;
}

enum hermes_class hermes_path_class(const struct fabric *f, uint32_t h, uint32_t tor, uint32_t path)
{
	struct hermes *c = f->lb_priv;
	struct hm_row *r = c->hosts[h].rows[tor];
	return r ? (enum hermes_class)judge(c, r, path, f->q->now).cls : HERMES_GRAY;
}

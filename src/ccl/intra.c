/* intra.c - the intra-node fabric (see intra.h): per-server fluid transfers
 * sharing GPU ports max-min fairly.
 *
 * Invariants: a server's transfers hold the rates of its last change (start
 * or end of a transfer) since srv->last; exactly one end-of-transfer event
 * per server is current (its generation is srv->gen; older ones do nothing);
 * a transfer's rate is at least 1 bit/s, so it always ends.
 *
 * Defaults: the CAST note's servers (Broadcom, "Congestion-Aware Sprayed
 * Traffic Feature", 2025) carry eight AMD MI300X GPUs, whose seven Infinity
 * Fabric links give each GPU 7 x 64 GB/s = 448 GB/s each way to its peers
 * (AMD's MI300X data sheet: 128 GB/s per link, both directions): 3584 Gb/s.
 * The latency, 1 us, is ours (a copy engine's start-up plus the link; the
 * note gives none).
 */
#include "ccl/intra.h"

#include <string.h>

#include "core/mem.h"

const struct opt_desc intra_opts[] = {
	{ "gpus", OPT_UINT, offsetof(struct intra_cfg, gpus), "1", 1, 65535,
	  "GPUs per server: hosts s*gpus .. s*gpus+gpus-1 form server s and talk over its "
	  "internal fabric, not their NICs; 1 = no intra-node fabric" },
	{ "rate", OPT_RATE, offsetof(struct intra_cfg, rate_bps), "3584Gbps", 1e6, 1e15,
	  "each GPU's port into the server's internal switch, each way (MI300X: 7 Infinity "
	  "Fabric links x 64 GB/s)" },
	{ "latency", OPT_TIME, offsetof(struct intra_cfg, latency), "1us", 0, 1e12,
	  "from a transfer's last byte out to its arrival at the peer GPU" },
	OPT_END,
};

int intra_check(const struct intra_cfg *cfg, uint32_t nhosts, struct mp_err *e)
{
	if (intra_on(cfg) && nhosts % cfg->gpus)
		return mp_errf(e, MP_EUSER,
			       "gpus: expected a divisor of the fabric's %u hosts (each host is a "
			       "GPU; servers take gpus consecutive hosts), got %llu",
			       nhosts, (unsigned long long)cfg->gpus);
	return MP_OK;
}

void intra_init(struct intra *f, struct evq *q, const struct intra_cfg *cfg, uint32_t nhosts,
		uint32_t entity0)
{
	memset(f, 0, sizeof *f);
	f->cfg = cfg;
	f->q = q;
	f->nsrv = (uint32_t)(nhosts / cfg->gpus);
	f->srv = mp_calloc(f->nsrv ? f->nsrv : 1, sizeof *f->srv);
	for (uint32_t k = 0; k < f->nsrv; k++)
		f->srv[k].evs.id = entity0 - k;
	f->cap = mp_malloc(2 * cfg->gpus * sizeof *f->cap);
	f->cnt = mp_malloc(2 * cfg->gpus * sizeof *f->cnt);
}

simtime_t intra_ideal(const struct intra_cfg *cfg, uint64_t bytes)
{
	return time_ser_ps(bytes, cfg->rate_bps) + cfg->latency;
}

/* Every transfer of s moves on to now at its rate. */
static void advance(struct intra_server *s, simtime_t now)
{
	unsigned __int128 dt = now - s->last;
	for (uint32_t i = 0; i < s->n; i++) {
		unsigned __int128 d = dt * s->x[i].rate;
		s->x[i].rem = s->x[i].rem > d ? s->x[i].rem - d : 0;
	}
	s->last = now;
}

/* Max-min shares by progressive filling: the port with the smallest fair share
 * fixes the rate of every transfer through it, which then leaves the others. */
static void shares(struct intra *f, struct intra_server *s)
{
	uint32_t G = (uint32_t)f->cfg->gpus, left = s->n;
	if (s->n > f->frozen_cap) {
		f->frozen_cap = s->n * 2;
		f->frozen = mp_realloc(f->frozen, f->frozen_cap);
	}
	for (uint32_t p = 0; p < 2 * G; p++) {
		f->cap[p] = f->cfg->rate_bps;
		f->cnt[p] = 0;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		f->cnt[s->x[i].src]++;
		f->cnt[G + s->x[i].dst]++;
		f->frozen[i] = 0;
	}
	while (left) {
		uint32_t best = UINT32_MAX;
		uint64_t share = UINT64_MAX;
		for (uint32_t p = 0; p < 2 * G; p++)
			if (f->cnt[p] && f->cap[p] / f->cnt[p] < share) {
				share = f->cap[p] / f->cnt[p];
				best = p;
			}
		MP_ASSERT(best != UINT32_MAX);
		if (share == 0)
			share = 1;
		for (uint32_t i = 0; i < s->n; i++) {
			struct intra_xfer *x = &s->x[i];
			uint32_t a = x->src, b = G + x->dst;
			if (f->frozen[i] || (a != best && b != best))
				continue;
			x->rate = share;
			f->frozen[i] = 1;
			left--;
			f->cap[a] = f->cap[a] > share ? f->cap[a] - share : 0;
			f->cap[b] = f->cap[b] > share ? f->cap[b] - share : 0;
			f->cnt[a]--;
			f->cnt[b]--;
		}
	}
}

static void end_ev(void *obj, uint64_t arg);

/* New shares for server k and the event for the next transfer to end. */
static void reschedule(struct intra *f, uint32_t k)
{
	struct intra_server *s = &f->srv[k];
	s->gen++;
	if (!s->n)
		return;
	shares(f, s);
	simtime_t first = SIMTIME_MAX;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct intra_xfer *x = &s->x[i];
		simtime_t t = (simtime_t)((x->rem + x->rate - 1) / x->rate);
		if (t < first)
			first = t;
	}
	evq_at(f->q, &s->evs, s->last + first, end_ev, f, ((uint64_t)k << 32) | s->gen);
}

static void deliver_ev(void *obj, uint64_t arg)
{
	struct intra *f = obj;
	f->done(f->ctx, (uint32_t)arg);
}

/* The server's first transfers to end have ended: they arrive `latency` later. */
static void end_ev(void *obj, uint64_t arg)
{
	struct intra *f = obj;
	uint32_t k = (uint32_t)(arg >> 32);
	struct intra_server *s = &f->srv[k];
	if ((uint32_t)arg != s->gen)
		return; /* the rates changed since */
	simtime_t now = f->q->now;
	advance(s, now);
	uint32_t j = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		if (s->x[i].rem == 0)
			evq_at(f->q, &s->evs, now + f->cfg->latency, deliver_ev, f, s->x[i].id);
		else
			s->x[j++] = s->x[i];
	}
	s->n = j;
	reschedule(f, k);
}

void intra_send(struct intra *f, uint32_t src, uint32_t dst, uint64_t bytes, uint32_t id)
{
	uint32_t G = (uint32_t)f->cfg->gpus, k = src / G;
	MP_ASSERT(intra_same(f, src, dst) && src != dst && bytes > 0);
	struct intra_server *s = &f->srv[k];
	advance(s, f->q->now);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->x = mp_realloc(s->x, s->cap * sizeof *s->x);
	}
	s->x[s->n++] = (struct intra_xfer){ .id = id,
					    .src = (uint16_t)(src % G),
					    .dst = (uint16_t)(dst % G),
					    .rem = (unsigned __int128)bytes * 8u * PS_PER_S };
	f->bytes += bytes;
	f->msgs++;
	reschedule(f, k);
}

void intra_free(struct intra *f)
{
	for (uint32_t k = 0; k < f->nsrv; k++)
		mp_free(f->srv[k].x);
	mp_free(f->srv);
	mp_free(f->cap);
	mp_free(f->cnt);
	mp_free(f->frozen);
	memset(f, 0, sizeof *f);
}

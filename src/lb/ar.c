/* ar.c - switch adaptive routing, as shipping switches do it (Broadcom
 * Trident/Tomahawk "dynamic load balancing", NVIDIA Spectrum-X adaptive
 * routing): at every switch with a choice, the egress member of the next-hop
 * set whose local state is best, ties broken at random.
 *
 * What is compared (`metric`):
 *  - queue (default): the bytes queued at the egress port, every class
 *    (qbytes_total), read at the instant of the decision. A port paused by
 *    PFC keeps its queue and so looks as long as it is: the scheme sees only
 *    local state, which is exactly what Proteus (Section II-B) says misleads
 *    it under PFC.
 *  - util: the port's recent utilisation from a discounting rate estimator
 *    (lbcommon.h; the DRE of CONGA, Alizadeh et al., SIGCOMM 2014, section
 *    3.2) fed by every byte the port sends. Period and alpha default to the
 *    values the ConWeave ns-3 model of CONGA uses (50 us, 0.2), our choice:
 *    vendors do not publish their port-load averaging constants.
 *
 * Granularity (`mode`):
 *  - packet (default, Spectrum-X style): every packet is placed anew;
 *  - flowlet (Broadcom DLB "flowlet" mode): a flow keeps its port while its
 *    packets come less than `flowlet_gap` apart, and a new flowlet takes the
 *    best port. The gap defaults to 100 us, the flowlet timeout of the
 *    ConWeave ns-3 models of CONGA and LetFlow (DLB's inactivity timer is a
 *    per-deployment setting; no vendor default is published).
 *
 * Ties: every candidate whose metric equals the minimum is equally likely
 * (one draw from the switch's random stream, reservoir style), so equal
 * empty queues spread packets as random spraying would.
 *
 * Tables: a per-switch flowlet table (flowlet mode) and a per-port DRE (util
 * metric) in f->lb_priv; nothing is allocated on the packet path once the
 * flowlet tables have grown to the flows active at once. */
#include <stddef.h>

#include "core/mem.h"
#include "core/rng.h"
#include "lb/lbcommon.h"
#include "net/fabric.h"
#include "net/lb.h"
#include "net/port.h"
#include "net/switch.h"

enum ar_mode { AR_PACKET, AR_FLOWLET };
enum ar_metric { AR_QUEUE, AR_UTIL };

struct ar_params {
	int mode;	       /* enum ar_mode */
	int metric;	       /* enum ar_metric */
	simtime_t flowlet_gap; /* ps */
	simtime_t dre_period;  /* T_dre, ps */
	double dre_alpha;
};

static const char *const ar_modes[] = { "packet", "flowlet", NULL };
static const char *const ar_metrics[] = { "queue", "util", NULL };

static const struct opt_desc ar_opts[] = {
	{ "mode", OPT_ENUM, offsetof(struct ar_params, mode), "packet", 0, 0,
	  "packet: every packet to the best egress; flowlet: a flow keeps its egress until it "
	  "pauses longer than flowlet_gap",
	  ar_modes },
	{ "metric", OPT_ENUM, offsetof(struct ar_params, metric), "queue", 0, 0,
	  "queue: the least bytes queued at the egress now; util: the least recent "
	  "utilisation (DRE)",
	  ar_metrics },
	{ "flowlet_gap", OPT_TIME, offsetof(struct ar_params, flowlet_gap), "100us", 1, 1e13,
	  "flowlet mode: an idle gap longer than this starts a new flowlet" },
	{ "dre_period", OPT_TIME, offsetof(struct ar_params, dre_period), "50us", 1, 1e13,
	  "util metric: the DRE's decay period T_dre" },
	{ "dre_alpha", OPT_DOUBLE, offsetof(struct ar_params, dre_alpha), "0.2", 1e-6, 1,
	  "util metric: the DRE's decay factor per period" },
	OPT_END,
};

struct ar_priv {
	struct flowlet_table *fl; /* per switch (sid), flowlet mode */
	struct dre *dre;	  /* per port (fab_port_index), util metric */
	struct dre_params dp;
};

static int ar_init(struct fabric *f, struct mp_err *e)
{
	(void)e;
	const struct ar_params *pr = f->lb_params;
	struct ar_priv *a = mp_calloc(1, sizeof *a);
	if (pr->mode == AR_FLOWLET) {
		a->fl = mp_calloc(f->nsws, sizeof *a->fl);
		/* an entry idle longer than the gap starts a new flowlet anyway */
		for (uint32_t i = 0; i < f->nsws; i++)
			flowlet_init(&a->fl[i], 64, pr->flowlet_gap);
	}
	if (pr->metric == AR_UTIL) {
		a->dre = mp_calloc(f->nports, sizeof *a->dre);
		a->dp.period = pr->dre_period;
		a->dp.alpha = pr->dre_alpha;
	}
	f->lb_priv = a;
	return MP_OK;
}

static void ar_fini(struct fabric *f)
{
	struct ar_priv *a = f->lb_priv;
	if (a->fl) {
		for (uint32_t i = 0; i < f->nsws; i++)
			flowlet_free(&a->fl[i]);
		mp_free(a->fl);
	}
	mp_free(a->dre);
	mp_free(a);
	f->lb_priv = NULL;
}

/* The best candidate now; ties at random. */
static uint16_t ar_best(struct fabric *f, struct sw *s, const uint16_t *cand, unsigned n)
{
	const struct ar_params *pr = f->lb_params;
	struct ar_priv *a = f->lb_priv;
	simtime_t now = f->q->now;
	uint16_t best = cand[0];
	unsigned ties = 0;
	if (pr->metric == AR_QUEUE) {
		uint64_t bq = UINT64_MAX;
		for (unsigned i = 0; i < n; i++) {
			uint64_t q = s->node.ports[cand[i]].qbytes_total;
			if (q < bq) {
				bq = q;
				best = cand[i];
				ties = 1;
			} else if (q == bq && rng_below(&s->rng, ++ties) == 0) {
				best = cand[i];
			}
		}
	} else {
		double bu = 1e300;
		for (unsigned i = 0; i < n; i++) {
			struct port *pt = &s->node.ports[cand[i]];
			double u =
			    dre_util(&a->dre[fab_port_index(f, pt)], &a->dp, now, pt->rate_bps);
			if (u < bu) {
				bu = u;
				best = cand[i];
				ties = 1;
			} else if (u == bu && rng_below(&s->rng, ++ties) == 0) {
				best = cand[i];
			}
		}
	}
	return best;
}

static uint16_t ar_choose(struct fabric *f, struct sw *s, const struct packet *p,
			  const uint16_t *cand, unsigned n)
{
	const struct ar_params *pr = f->lb_params;
	if (pr->mode == AR_PACKET)
		return ar_best(f, s, cand, n);
	struct ar_priv *a = f->lb_priv;
	simtime_t now = f->q->now;
	struct flowlet *fl = flowlet_get(&a->fl[s->sid], p, now);
	/* a port that left the next-hop set (a failed link) ends the flowlet */
	if (flowlet_expired(fl, now, pr->flowlet_gap) || !lb_nh_has(cand, n, fl->port))
		fl->port = ar_best(f, s, cand, n);
	fl->last = now;
	return fl->port;
}

static void ar_sw_tx(struct fabric *f, struct sw *s, struct port *out, struct packet *p)
{
	(void)s;
	struct ar_priv *a = f->lb_priv;
	if (a->dre)
		dre_add(&a->dre[fab_port_index(f, out)], &a->dp, f->q->now, p->size);
}

const struct lb_ops ar_lb_ops = {
	.name = "ar",
	.summary = "switch adaptive routing: the egress with the least local queue (or recent "
		   "utilisation), per packet or per flowlet, ties random",
	.opts = ar_opts,
	.params_size = sizeof(struct ar_params),
	.init = ar_init,
	.fini = ar_fini,
	.choose = ar_choose,
	.sw_tx = ar_sw_tx,
};

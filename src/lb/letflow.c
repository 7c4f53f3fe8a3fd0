/* letflow.c - LetFlow (Vanini, Pan, Alizadeh, Taheri, Edsall, "Let it flow:
 * resilient asymmetric load balancing with flowlet switching", NSDI 2017):
 * every switch with a choice sends each new flowlet of a flow to a member of
 * the next-hop set picked uniformly at random, and keeps a flowlet on its
 * port; a flow whose packets pause longer than the flowlet timeout starts a
 * new flowlet. Nothing is measured: the flowlets' elasticity (a flowlet on a
 * congested path slows, pauses and moves) balances the load.
 *
 * The timeout defaults to 100 us, the value of the ConWeave ns-3 model of
 * LetFlow (conweave-project/conweave-ns3, letflow-routing.cc), also the
 * example value usually quoted. Our choices where that model differs or is silent: the
 * flowlet table is exact (lbcommon.h; one entry per flow and direction, no
 * hash collisions), and every switch with a choice runs LetFlow (the ns-3
 * model decides at the source ToR only, which in a leaf-spine is the only
 * switch with a choice anyway). */
#include <stddef.h>

#include "core/mem.h"
#include "core/rng.h"
#include "lb/lbcommon.h"
#include "net/fabric.h"
#include "net/lb.h"
#include "net/switch.h"

struct letflow_params {
	simtime_t flowlet_gap; /* ps */
};

static const struct opt_desc letflow_opts[] = {
	{ "flowlet_gap", OPT_TIME, offsetof(struct letflow_params, flowlet_gap), "100us", 1, 1e13,
	  "flowlet timeout: an idle gap longer than this starts a new flowlet on a random path" },
	OPT_END,
};

static int letflow_init(struct fabric *f, struct mp_err *e)
{
	(void)e;
	const struct letflow_params *pr = f->lb_params;
	struct flowlet_table *t = mp_calloc(f->nsws, sizeof *t);
	/* an entry idle longer than the gap starts a new flowlet anyway */
	for (uint32_t i = 0; i < f->nsws; i++)
		flowlet_init(&t[i], 64, pr->flowlet_gap);
	f->lb_priv = t;
	return MP_OK;
}

static void letflow_fini(struct fabric *f)
{
	struct flowlet_table *t = f->lb_priv;
	for (uint32_t i = 0; i < f->nsws; i++)
		flowlet_free(&t[i]);
	mp_free(t);
	f->lb_priv = NULL;
}

static uint16_t letflow_choose(struct fabric *f, struct sw *s, const struct packet *p,
			       const uint16_t *cand, unsigned n)
{
	const struct letflow_params *pr = f->lb_params;
	struct flowlet_table *t = f->lb_priv;
	simtime_t now = f->q->now;
	struct flowlet *fl = flowlet_get(&t[s->sid], p, now);
	/* a port that left the next-hop set (a failed link) ends the flowlet */
	if (flowlet_expired(fl, now, pr->flowlet_gap) || !lb_nh_has(cand, n, fl->port))
		fl->port = cand[rng_below(&s->rng, n)];
	fl->last = now;
	return fl->port;
}

const struct lb_ops letflow_lb_ops = {
	.name = "letflow",
	.summary = "LetFlow: each flowlet (a gap of flowlet_gap ends one) on a random next hop",
	.opts = letflow_opts,
	.params_size = sizeof(struct letflow_params),
	.init = letflow_init,
	.fini = letflow_fini,
	.choose = letflow_choose,
};

/* drill.c - DRILL (Ghorbani, Yang, Godfrey, Ganjali, Firoozshahian, "DRILL:
 * micro load balancing for low-latency data center networks", SIGCOMM 2017):
 * per packet, at every switch with a choice, compare the local egress queues
 * of d ports sampled at random from the next-hop set and of the m ports
 * remembered from the previous decision, send to the shortest, and remember
 * the m shortest of those compared. The paper recommends DRILL(2, 1), the
 * values the ConWeave ns-3 model (conweave-project/conweave-ns3,
 * switch-node.cc) also runs: our defaults.
 *
 * Details the paper leaves open, and what we do:
 *  - samples are distinct (drawn without replacement, as the ConWeave model
 *    draws them from a shuffled next-hop list); d >= n compares every port;
 *  - the queue is the port's bytes queued, every class (ConWeave: the
 *    device queue's total bytes);
 *  - a sample replaces the best so far only when strictly shorter, and the
 *    remembered ports are compared first, so a tie keeps the remembered port
 *    (ConWeave's order); ties among samples fall to the random sample order;
 *  - the memory belongs to the switch (the paper's forwarding engine, one
 *    per switch here: a switch's engines are not modelled), and a remembered
 *    port that is not in this packet's next-hop set is skipped; `memory:
 *    host` keeps one memory per destination host instead, as the ConWeave
 *    model does.
 *
 * The ports a decision compared are kept per switch (drill_compared) so a
 * test can check the choice against them. */
#include <stddef.h>

#include "core/mem.h"
#include "core/rng.h"
#include "lb/drill.h"
#include "lb/lbcommon.h"
#include "net/fabric.h"
#include "net/lb.h"
#include "net/switch.h"

enum drill_memory { MEM_SWITCH, MEM_HOST };

struct drill_params {
	uint64_t d, m;
	int memory; /* enum drill_memory */
};

static const char *const drill_memories[] = { "switch", "host", NULL };

static const struct opt_desc drill_opts[] = {
	{ "d", OPT_UINT, offsetof(struct drill_params, d), "2", 1, DRILL_MAX_D,
	  "random samples of the next-hop set compared per packet" },
	{ "m", OPT_UINT, offsetof(struct drill_params, m), "1", 0, DRILL_MAX_M,
	  "least-loaded ports of the previous decision remembered and compared again" },
	{ "memory", OPT_ENUM, offsetof(struct drill_params, memory), "switch", 0, 0,
	  "switch: one memory per switch (the paper's engine); host: one per destination host "
	  "(the ConWeave ns-3 model)",
	  drill_memories },
	OPT_END,
};

#define NONE UINT16_MAX

struct drill_state {
	uint16_t *mem; /* per key, m ports (NONE: empty), best first */
	uint16_t seen[DRILL_MAX_D + DRILL_MAX_M];
	unsigned nseen;
};

static int drill_init(struct fabric *f, struct mp_err *e)
{
	(void)e;
	const struct drill_params *pr = f->lb_params;
	size_t keys = pr->memory == MEM_HOST ? f->nhosts : 1;
	size_t per = keys * (pr->m ? pr->m : 1);
	uint16_t *all = mp_calloc(f->nsws * per, sizeof *all);
	for (size_t i = 0; i < f->nsws * per; i++)
		all[i] = NONE;
	for (uint32_t i = 0; i < f->nsws; i++) {
		struct drill_state *st = f->sws[i]->lb_state;
		st->mem = all + i * per;
	}
	f->lb_priv = all;
	return MP_OK;
}

static void drill_fini(struct fabric *f)
{
	mp_free(f->lb_priv);
	f->lb_priv = NULL;
}

static uint16_t drill_choose(struct fabric *f, struct sw *s, const struct packet *p,
			     const uint16_t *cand, unsigned n)
{
	const struct drill_params *pr = f->lb_params;
	struct drill_state *st = s->lb_state;
	unsigned m = (unsigned)pr->m, d = (unsigned)pr->d;
	uint16_t *mem = st->mem + (pr->memory == MEM_HOST ? (size_t)p->dst * m : 0);
	st->nseen = 0;
	/* the remembered ports first (still in this next-hop set) */
	for (unsigned i = 0; i < m; i++)
		if (mem[i] != NONE && lb_nh_has(cand, n, mem[i]) &&
		    !lb_nh_has(st->seen, st->nseen, mem[i]))
			st->seen[st->nseen++] = mem[i];
	/* then d distinct samples (all of them when d >= n) in random order:
	 * Floyd's sampling of d indices, then shuffled by the draws themselves */
	unsigned want = d < n ? d : n, got = 0;
	uint16_t smp[DRILL_MAX_D];
	for (unsigned j = n - want; j < n; j++) {
		unsigned t = (unsigned)rng_below(&s->rng, j + 1);
		uint16_t c = cand[t];
		for (unsigned k = 0; k < got; k++)
			if (smp[k] == c) {
				c = cand[j];
				break;
			}
		/* insert at a random place, so that order is random too */
		unsigned at = (unsigned)rng_below(&s->rng, got + 1);
		if (at != got)
			smp[got] = smp[at];
		smp[at] = c;
		got++;
	}
	for (unsigned k = 0; k < got; k++)
		if (!lb_nh_has(st->seen, st->nseen, smp[k]))
			st->seen[st->nseen++] = smp[k];
	/* the shortest queue; strictly shorter replaces, so ties keep the
	 * remembered port, then the earlier sample */
	uint16_t best = st->seen[0];
	uint64_t bq = s->node.ports[best].qbytes_total;
	for (unsigned i = 1; i < st->nseen; i++) {
		uint64_t q = s->node.ports[st->seen[i]].qbytes_total;
		if (q < bq) {
			bq = q;
			best = st->seen[i];
		}
	}
	/* remember the m shortest of those compared, best first */
	if (m) {
		mem[0] = best;
		for (unsigned k = 1; k < m; k++) {
			uint16_t next = NONE;
			uint64_t nq = UINT64_MAX;
			for (unsigned i = 0; i < st->nseen; i++) {
				uint16_t c = st->seen[i];
				uint64_t q = s->node.ports[c].qbytes_total;
				bool taken = false;
				for (unsigned j = 0; j < k; j++)
					taken |= mem[j] == c;
				if (!taken && q < nq) {
					nq = q;
					next = c;
				}
			}
			mem[k] = next;
		}
	}
	return best;
}

const uint16_t *drill_compared(const struct sw *s, unsigned *n)
{
	const struct drill_state *st = s->lb_state;
	*n = st->nseen;
	return st->seen;
}

const struct lb_ops drill_lb_ops = {
	.name = "drill",
	.summary = "DRILL: per packet, the shortest local queue among d random samples and the "
		   "m remembered best (DRILL(2,1))",
	.opts = drill_opts,
	.params_size = sizeof(struct drill_params),
	.state_size = sizeof(struct drill_state),
	.init = drill_init,
	.fini = drill_fini,
	.choose = drill_choose,
};

/* lbcommon.c - flowlet tables and discounting rate estimators; see lbcommon.h. */
#include "lb/lbcommon.h"

#include <math.h>

#include "core/mem.h"
#include "core/rng.h"

void flowlet_init(struct flowlet_table *t, uint32_t entries)
{
	uint32_t n = 16;
	while (n < entries)
		n <<= 1;
	t->v = mp_calloc(n, sizeof *t->v);
	t->mask = n - 1;
	t->used = 0;
}

void flowlet_free(struct flowlet_table *t)
{
	mp_free(t->v);
	t->v = NULL;
}

static struct flowlet *slot(struct flowlet_table *t, uint32_t key)
{
	uint32_t i = (uint32_t)rng_mix64(key) & t->mask;
	while (t->v[i].key && t->v[i].key != key)
		i = (i + 1) & t->mask; /* linear probing */
	return &t->v[i];
}

struct flowlet *flowlet_get(struct flowlet_table *t, const struct packet *p)
{
	uint32_t key = flowlet_key(p);
	struct flowlet *fl = slot(t, key);
	if (fl->key)
		return fl;
	if (2 * (t->used + 1) > t->mask + 1) { /* keep it at most half full */
		struct flowlet *old = t->v;
		uint32_t n = t->mask + 1;
		t->v = mp_calloc(2 * (size_t)n, sizeof *t->v);
		t->mask = 2 * n - 1;
		for (uint32_t i = 0; i < n; i++)
			if (old[i].key)
				*slot(t, old[i].key) = old[i];
		mp_free(old);
		fl = slot(t, key);
	}
	t->used++;
	fl->key = key;
	return fl;
}

void dre_sync(struct dre *d, const struct dre_params *dp, simtime_t now)
{
	if (now < d->epoch + dp->period)
		return;
	uint64_t k = (now - d->epoch) / dp->period;
	d->x *= k > 4096 ? 0.0 : pow(1.0 - dp->alpha, (double)k);
	d->epoch += k * dp->period;
}

double dre_util(struct dre *d, const struct dre_params *dp, simtime_t now, uint64_t rate_bps)
{
	dre_sync(d, dp, now);
	/* tau = T_dre / alpha; bytes a full link sends in tau */
	double full = (double)rate_bps / 8.0 * ((double)dp->period / 1e12) / dp->alpha;
	return full > 0 ? d->x / full : 0.0;
}

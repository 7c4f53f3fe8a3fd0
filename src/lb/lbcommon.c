/* lbcommon.c - flowlet tables and discounting rate estimators; see lbcommon.h. */
#include "lb/lbcommon.h"

#include <math.h>

#include "core/mem.h"
#include "core/rng.h"

void flowlet_init(struct flowlet_table *t, uint32_t entries, simtime_t stale)
{
	uint32_t n = 16;
	while (n < entries)
		n <<= 1;
	t->v = mp_calloc(n, sizeof *t->v);
	t->mask = n - 1;
	t->used = 0;
	t->stale = stale;
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

/* Rebuild with n slots, keeping the entries not idle longer than t->stale. */
static void rehash(struct flowlet_table *t, uint32_t n, simtime_t now)
{
	struct flowlet *old = t->v;
	uint32_t on = t->mask + 1;
	t->v = mp_calloc(n, sizeof *t->v);
	t->mask = n - 1;
	t->used = 0;
	for (uint32_t i = 0; i < on; i++)
		if (old[i].key && (!t->stale || now - old[i].last <= t->stale)) {
			*slot(t, old[i].key) = old[i];
			t->used++;
		}
	mp_free(old);
}

struct flowlet *flowlet_get(struct flowlet_table *t, const struct packet *p, simtime_t now)
{
	uint32_t key = flowlet_key(p);
	struct flowlet *fl = slot(t, key);
	if (fl->key)
		return fl;
	if (2 * (t->used + 1) > t->mask + 1) { /* keep it at most half full */
		uint32_t n = t->mask + 1;
		if (t->stale)
			rehash(t, n, now); /* forget flows long idle first */
		if (4 * (t->used + 1) > n)
			rehash(t, 2 * n, now);
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

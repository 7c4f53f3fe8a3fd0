/* ecmp.c - ECMP: hash the 5-tuple (source host, destination host, UDP source
 * port = the packet's entropy, UDP destination port 4791 as RoCEv2 uses,
 * protocol UDP) with a per-switch seed, so that switches at different tiers do
 * not make correlated choices (hash polarisation), and pick that member of the
 * next-hop set. Multipath transports move their packets between paths by
 * changing the entropy. */
#include "core/rng.h"
#include "net/fabric.h"
#include "net/lb.h"
#include "net/switch.h"

static const struct opt_desc no_opts[] = { OPT_END };

#define ROCE_UDP_DPORT 4791u
#define IPPROTO_UDP_NUM 17u

static uint16_t ecmp_choose(struct fabric *f, struct sw *s, const struct packet *p,
			    const uint16_t *cand, unsigned n)
{
	(void)f;
	uint64_t k = ((uint64_t)p->src << 32) | p->dst;
	uint64_t l = ((uint64_t)p->entropy << 32) | (ROCE_UDP_DPORT << 8) | IPPROTO_UDP_NUM;
	uint64_t h = rng_mix64(k ^ s->hash_seed) ^ rng_mix64(l + s->hash_seed);
	h = rng_mix64(h);
	return cand[(uint64_t)(((unsigned __int128)h * n) >> 64)];
}

const struct lb_ops ecmp_lb_ops = {
	.name = "ecmp",
	.summary = "hash of the 5-tuple (incl. UDP source port entropy) with a per-switch seed",
	.opts = no_opts,
	.params_size = 0,
	.choose = ecmp_choose,
	.choose_pure = true,
};

/* Switch-side random per-packet spraying (the "packet spray" baseline). */
static uint16_t spray_choose(struct fabric *f, struct sw *s, const struct packet *p,
			     const uint16_t *cand, unsigned n)
{
	(void)f;
	(void)p;
	return cand[rng_below(&s->rng, n)];
}

const struct lb_ops spray_lb_ops = {
	.name = "spray",
	.summary = "random next hop per packet at every switch (switch-side packet spraying)",
	.opts = no_opts,
	.params_size = 0,
	.choose = spray_choose,
};

/* Switch-side per-packet round robin: one counter per switch, advanced by
 * every packet that has a choice. At a leaf all remote destinations share the
 * same uplink set, so uplinks are loaded evenly packet by packet. */
struct rr_state {
	uint64_t next;
};

static uint16_t rr_choose(struct fabric *f, struct sw *s, const struct packet *p,
			  const uint16_t *cand, unsigned n)
{
	(void)f;
	(void)p;
	struct rr_state *st = s->lb_state;
	return cand[st->next++ % n];
}

const struct lb_ops rr_lb_ops = {
	.name = "rr",
	.summary = "per-packet round robin over the next-hop set at every switch",
	.opts = no_opts,
	.params_size = 0,
	.state_size = sizeof(struct rr_state),
	.choose = rr_choose,
};

/* Entropy-indexed next hop: member (entropy mod n) of the next-hop set, the
 * same at every switch, so a transport chooses its path exactly, as source
 * routing would. For tests that need two known paths (UDMP Fig. 3): data and
 * its ACK, which echoes the entropy, cross the same spine of a leaf-spine. */
static uint16_t entropy_choose(struct fabric *f, struct sw *s, const struct packet *p,
			       const uint16_t *cand, unsigned n)
{
	(void)f;
	(void)s;
	return cand[p->entropy % n];
}

const struct lb_ops entropy_lb_ops = {
	.name = "entropy",
	.summary = "next hop = entropy mod the next-hop set size (transport-chosen paths)",
	.opts = no_opts,
	.params_size = 0,
	.choose = entropy_choose,
	.choose_pure = true,
};

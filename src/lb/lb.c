/* lb.c - the registry of switch-side load balancers (interface in net/lb.h). */
#include <string.h>

#include "net/lb.h"

extern const struct lb_ops ecmp_lb_ops, spray_lb_ops, rr_lb_ops, entropy_lb_ops, ar_lb_ops,
    drill_lb_ops, letflow_lb_ops, conga_lb_ops, hermes_lb_ops, proteus_lb_ops;

/* The load balancers, in `mpsim list`'s order. */
const struct lb_ops *const lb_registry[] = {
	&ecmp_lb_ops,	 &spray_lb_ops, &rr_lb_ops,	&entropy_lb_ops, &ar_lb_ops, &drill_lb_ops,
	&letflow_lb_ops, &conga_lb_ops, &hermes_lb_ops, &proteus_lb_ops, NULL,
};

const struct lb_ops *lb_find(const char *name)
{
	for (const struct lb_ops *const *o = lb_registry; *o; o++)
		if (strcmp((*o)->name, name) == 0)
			return *o;
	return NULL;
}

size_t lb_pkt_size(const struct lb_ops *lb)
{
	size_t n = sizeof(struct packet) + (lb ? lb->pkt_meta_size : 0);
	return (n + 63) / 64 * 64;
}

/* conga.h - what tests and experiments may read of CONGA's tables (conga.c). */
#ifndef MPSIM_LB_CONGA_H
#define MPSIM_LB_CONGA_H

#include <stdint.h>

#include "net/fabric.h"
#include "net/port.h"

/* The Congestion-To-Leaf metric that ToR src_tor holds for the path to ToR
 * dst_tor through its uplink port `port`, as a new flowlet would see it now
 * (0 once aged); -1 when `port` is not an uplink of that ToR. */
int conga_to_leaf(const struct fabric *f, uint32_t src_tor, uint32_t dst_tor, uint16_t port);
/* Overwrite that entry (as if fed back now): tests steer decisions with it. */
void conga_set_to_leaf(struct fabric *f, uint32_t src_tor, uint32_t dst_tor, uint16_t port,
		       unsigned metric);
/* The local DRE utilisation (unquantised, 1 = line rate) of a switch port. */
double conga_port_util(const struct fabric *f, const struct port *pt);

#endif

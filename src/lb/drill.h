/* drill.h - what tests may see of DRILL (drill.c): the ports a switch's last
 * decision compared, the remembered ones first, then the samples. */
#ifndef MPSIM_LB_DRILL_H
#define MPSIM_LB_DRILL_H

#include "net/switch.h"

#define DRILL_MAX_D 16 /* samples per decision, at most */
#define DRILL_MAX_M 4  /* remembered ports, at most */

/* Valid until the switch's next decision; *n ports. */
const uint16_t *drill_compared(const struct sw *s, unsigned *n);

#endif

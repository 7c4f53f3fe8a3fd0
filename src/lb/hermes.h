/* hermes.h - what tests may read of Hermes's state (hermes.c). */
#ifndef MPSIM_LB_HERMES_H
#define MPSIM_LB_HERMES_H

#include <stdint.h>

#include "net/fabric.h"

enum hermes_class { HERMES_GOOD, HERMES_GRAY, HERMES_CONGESTED };

/* The path connection `conn` sends its data on now (-1: none yet). */
int hermes_flow_path(const struct fabric *f, uint32_t conn);
/* Times connection `conn` was moved to another path while it ran. */
uint32_t hermes_flow_reroutes(const struct fabric *f, uint32_t conn);
/* How host `h` sees path `path` toward ToR `tor` now. */
enum hermes_class hermes_path_class(const struct fabric *f, uint32_t h, uint32_t tor,
				    uint32_t path);

#endif

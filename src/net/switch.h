/* switch.h - a switch: its shared buffer, its routes (a next-hop set per
 * ToR) and its load balancer's state, and the `switch:` section that
 * configures every switch (buffer, ECN, PFC). The buffer and PFC live in
 * net/port.c, the routes in net/fabric.c.
 */
#ifndef MPSIM_NET_SWITCH_H
#define MPSIM_NET_SWITCH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/opt.h"
#include "core/rng.h"
#include "core/time.h"
#include "net/node.h"

/* A switch's next hops toward one ToR: n port indices at fab->nh_ports[off]. */
struct nhset {
	uint32_t off; /* into fab->nh_ports */
	uint16_t n;
};

struct sw {
	struct node node;
	/* hot: with the node, the first cache line */
	uint32_t tor_idx;    /* index among ToRs, or UINT32_MAX */
	uint32_t sid;	     /* switch index */
	uint64_t buf_used;   /* bytes in the shared buffer */
	struct nhset *route; /* per ToR: the next-hop set (n = 0: unreachable) */
	uint64_t hash_seed;  /* per-switch ECMP seed (no polarisation) */
	/* cold */
	uint64_t buf_peak;
	/* lossless: the buffer less every port's headroom and control reserve,
	 * and the bytes of it in use (port.c, "shared buffer and PFC") */
	uint64_t shared_size, shared_used;
	uint64_t hdrm_total; /* headroom reserved over all ports, bytes */
	void *lb_state;	     /* load balancer private state */
	struct mp_rng rng;   /* load balancer randomness */
} __attribute__((aligned(64)));

/* ---- switch configuration (the `switch:` section) ------------------------ */
enum buf_mode { BUF_LOSSY, BUF_LOSSLESS };

struct swcfg {
	uint64_t buffer;      /* shared buffer per switch, bytes */
	double dt_alpha;      /* dynamic threshold: queue <= alpha * free buffer */
	uint64_t queue_limit; /* lossy: static cap per egress queue, bytes; 0 = none */
	int mode;	      /* enum buf_mode */
	bool ecn;	      /* RED/ECN marking at dequeue */
	uint64_t kmin, kmax;  /* bytes */
	double pmax;
	uint64_t pfc_xoff;	  /* static XOFF per ingress port & class, bytes; 0 = dynamic */
	uint64_t pfc_xon_gap;	  /* XON = XOFF - gap, bytes */
	double pfc_alpha;	  /* dynamic XOFF = alpha * free shared buffer */
	uint64_t ctrl_size;	  /* bytes of a PFC frame on the wire */
	uint64_t pfc_headroom;	  /* per ingress port, bytes; 0 = the worst case of its link */
	uint64_t ctrl_reserve;	  /* lossless: per ingress port for control packets, bytes */
	uint64_t mtu;		  /* largest packet on a link, bytes (0 = the transport's) */
	simtime_t failover_delay; /* a link's failure or recovery reaches the routes, ps */
	bool trim;		  /* cut a data packet to its header rather than drop it */
	uint64_t trim_size;	  /* bytes of a trimmed packet on the wire */
};
extern const struct opt_desc swcfg_opts[];

#endif

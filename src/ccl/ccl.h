/* ccl.h - the collective-library layer: long-lived queue pairs between the
 * ranks of a job, and the scheduler that spreads each message over them.
 *
 * A channel joins two ranks of one collective job (one direction): `qps`
 * stream connections (NCCL_IB_QPS_PER_CONNECTION), opened at the channel's
 * first message and kept for the whole run, so every queue pair's congestion
 * state, PSN space and RTT estimates persist from one message to the next.
 * A message posted on a channel (ccl_post) is handed to the channel's
 * scheduler, which turns it into parts on the queue pairs (ccl_part_post):
 * whole messages in turn (`rr`, NCCL's round robin) or one equal sub-chunk
 * per queue pair (`stripe`, NCCL's default split). The message completes at
 * the receiver when every part is delivered and at the sender when every part
 * is acknowledged; the layer reports both to whoever posted it.
 *
 * A scheduler is an ops table with its own options and per-channel state, as
 * a transport is: CAST (weighted stripes from per-QP RTTs, cast.c) and MCC (a
 * window of message chunks in flight) are schedulers. A scheduler may hold a
 * message back (post it later, from part_done) and sees every part's post and
 * completion times, which is all a CCL sees of the network.
 *
 * Two GPUs of one server (the `server:` section, intra.h) talk over the
 * server's intra-node fabric: their channel has no queue pairs, its messages
 * bypass the scheduler, and no NIC carries them (NCCL's P2P transport).
 */
#ifndef MPSIM_CCL_CCL_H
#define MPSIM_CCL_CCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/opt.h"
#include "core/time.h"
#include "ccl/intra.h"
#include "transport/conn.h"
#include "transport/tp_world.h"

/* Options every scheduler has; a scheduler's params struct starts with it. */
struct ccl_common {
	uint64_t qps; /* queue pairs per channel */
};

#define CCL_COMMON_OPTS(type)                                                                   \
	{                                                                                       \
		"qps", OPT_UINT, offsetof(type, common.qps), "1", 1, 256,                       \
		    "queue pairs per connection between two ranks (NCCL_IB_QPS_PER_CONNECTION)" \
	}

struct ccl;
struct ccl_chan;

/* A message of the collective layer. */
struct ccl_msg {
	uint32_t id; /* the poster's name for it (a workload message) */
	uint64_t bytes;
	uint64_t bytes_posted; /* in parts so far: done when all are and every part is */
	simtime_t posted;      /* handed to the layer */
	uint32_t parts, parts_rx, parts_tx;
	struct ccl_msg *next; /* scheduler's queue while held back */
};

/* One part: a message of one queue pair. */
struct ccl_part {
	struct ccl_chan *ch;
	struct ccl_msg *msg;
	uint32_t qp;
	uint32_t sched; /* the scheduler's own note on the part (ccl_part_post's caller) */
	uint64_t bytes;
	simtime_t posted, rx_at;
};

struct ccl_chan {
	struct ccl *ccl;
	uint32_t id, job, src, dst; /* src, dst: hosts */
	struct conn **qp;	    /* common.qps stream connections (none: intra) */
	uint32_t nqp;
	bool intra;	  /* src and dst share a server: the intra-node fabric carries it */
	uint32_t rr_next; /* the next queue pair in turn */
	/* its parts, by tag (the transport's message tag): numbered per
	 * channel, by its sender alone, so a part's tag is the same in a
	 * partitioned run's every rank (the receiver's rank learns the parts
	 * from ccl_part_mirror) */
	struct ccl_part *parts;
	uint32_t nparts, parts_cap;
	_Alignas(max_align_t) unsigned char priv[];
};

struct ccl_sched_ops {
	const char *name;
	const char *summary;
	const struct opt_desc *opts;
	size_t params_size; /* starts with struct ccl_common */
	size_t priv_size;   /* per channel, zeroed */
	int (*check)(void *params, struct mp_err *e);
	/* m was posted on ch: post its parts now (ccl_part_post) or later */
	void (*post)(struct ccl_chan *ch, struct ccl_msg *m);
	/* optional: part pt completed at the receiver (rx) or at the sender */
	void (*part_done)(struct ccl_chan *ch, struct ccl_part *pt, bool rx);
	/* optional: an RTT sample of queue pair qp of ch (an ACK or NACK at the
	 * sender, tp_world_rtt_hook). Called from inside the transport: note it,
	 * post nothing. Only schedulers that have it turn the hook on. */
	void (*rtt)(struct ccl_chan *ch, uint32_t qp, simtime_t rtt);
	/* optional: the scheduler's window of ch as output.traces samples it
	 * (series ccl_window:chN, in the scheduler's own unit), NAN for none */
	double (*window)(struct ccl_chan *ch);
};

/* Every scheduler (NULL-terminated, in `mpsim list`'s order), and the one
 * named `name` (NULL: none). Adding one is one file and one line in the
 * registry (ccl/ccl.c). */
extern const struct ccl_sched_ops *const ccl_registry[];
const struct ccl_sched_ops *ccl_find(const char *name);

struct ccl {
	struct tp_world *w;
	const struct ccl_sched_ops *ops;
	const void *params;
	struct ccl_chan **chans;
	uint32_t nchans;
	/* channel lookup: open addressing on (job, src, dst) */
	uint32_t *slot;
	uint32_t nslots;
	/* per connection id: 1 + the index of the channel whose queue pair it
	 * is (0: not the layer's), and that queue pair */
	uint32_t *conn_chan, *conn_qp;
	uint32_t conn_cap;
	struct ccl_msg *msgs; /* one per workload message, by id */
	uint32_t nmsgs;
	/* the poster's completion callback: message id, at the receiver or not */
	void (*on_done)(void *ctx, uint32_t id, bool rx);
	void *ctx;
	/* optional: part `tag` of ch was posted on its queue pair qp (a
	 * partitioned run tells the receiver's rank: ccl_part_mirror) */
	void (*on_post)(void *ctx, const struct ccl_chan *ch, uint32_t qp, uint32_t tag);
	/* the intra-node fabric (used when its cfg has more than one GPU) */
	struct intra intra;
	bool has_intra;
	/* a scheduler's per-queue-pair trace, CSV text (ccl_trace); NULL = none */
	char *trace;
	size_t trace_len, trace_cap;
};

static inline const struct ccl_common *ccl_common(const struct ccl *l)
{
	return l->params;
}
static inline void *ccl_priv(struct ccl_chan *ch)
{
	return ch->priv;
}
/* A scheduler's queue of held-back messages: m joins at the tail. */
static inline void ccl_msgq_push(struct ccl_msg **head, struct ccl_msg **tail, struct ccl_msg *m)
{
	m->next = NULL;
	if (*tail)
		(*tail)->next = m;
	else
		*head = m;
	*tail = m;
}
static inline simtime_t ccl_now(const struct ccl *l)
{
	return l->w->q->now;
}

/* Set up the layer for `nmsgs` workload messages over world w; `srv` (may be
 * NULL) describes the servers' intra-node fabric (checked: intra_check). */
void ccl_init(struct ccl *l, struct tp_world *w, const struct ccl_sched_ops *ops,
	      const void *params, const struct intra_cfg *srv, uint32_t nmsgs);
/* The channel of (job, src -> dst), made (with its queue pairs, not opened) if new. */
struct ccl_chan *ccl_chan_get(struct ccl *l, uint32_t job, uint32_t src, uint32_t dst);
/* Post workload message `id` of `bytes` on channel ch (now). */
void ccl_post(struct ccl *l, struct ccl_chan *ch, uint32_t id, uint64_t bytes);
/* For schedulers: put `bytes` of m on queue pair qp now; the part's tag
 * (ch->parts[tag] until the next post moves the array). */
uint32_t ccl_part_post(struct ccl_chan *ch, struct ccl_msg *m, uint32_t qp, uint64_t bytes);
/* On the rank of a queue pair's receiver, in a partitioned run: part `tag`
 * of `bytes` of message `id` (of `msg_bytes` in all) was posted at `posted`
 * on connection c by its sender's rank. The receiving side then knows the
 * part (and its message) as the sender's side does, and the queue pair has
 * it posted (tp_post; the caller keeps what that schedules from running).
 * Parts come in the order posted. */
void ccl_part_mirror(struct ccl *l, struct conn *c, uint32_t tag, uint32_t id, uint64_t msg_bytes,
		     uint64_t bytes, simtime_t posted);
/* For schedulers: append printf-formatted text to the layer's trace: a
 * header line, then rows whose first columns are time_us,job,src,dst. */
void ccl_trace(struct ccl *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The trace's rows in the order of those four columns, rows equal in them
 * in the order written: one channel's rows come from its sender alone, so
 * the order is the same whether one process or several ranks wrote them
 * (sim/part.c gathers the ranks' rows, header once). */
void ccl_trace_sort(struct ccl *l);
/* A message of `bytes` alone on channel ch: first byte out to last byte
 * acknowledged (queue pair 0's path), or its intra-node transfer time. */
simtime_t ccl_ideal_fct(const struct ccl *l, const struct ccl_chan *ch, uint64_t bytes);
/* The transport's message completion (tp_world.on_msg) for a stream connection. */
void ccl_on_msg(struct ccl *l, struct conn *c, uint32_t tag, bool rx);
void ccl_free(struct ccl *l);

#endif

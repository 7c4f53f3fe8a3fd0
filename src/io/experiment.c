/* experiment.c - loading and checking an experiment file; see experiment.h. */
#include "io/experiment.h"
#include "io/sweep.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "net/lb.h"
#include "net/switch.h"
#include "transport/transport.h"

const struct opt_desc exp_general_opts[] = {
	{ "name", OPT_STRING, offsetof(struct exp_general, name), "experiment", 0, 0,
	  "a name for the run, copied into summary.json" },
	{ "seed", OPT_UINT, offsetof(struct exp_general, seed), "1", 0, 0,
	  "experiment seed: every random stream derives from it" },
	{ "stop_time", OPT_TIME, offsetof(struct exp_general, stop_time), "0", 0, 1e16,
	  "stop the simulation at this time; 0 = when every flow has completed" },
	{ "time_limit", OPT_TIME, offsetof(struct exp_general, time_limit), "10s", 1, 1e16,
	  "stop even if flows remain (they are reported as not completed); stop_time may "
	  "not be later" },
	OPT_END
};

const struct opt_desc exp_failures_opts[] = {
	{ "random_tier1", OPT_UINT, offsetof(struct exp_failures, random_tier1), "0", 0, 1e9,
	  "leaf-spine (or edge-agg) links down from t=0, chosen with the experiment seed" },
	{ "random_tier2", OPT_UINT, offsetof(struct exp_failures, random_tier2), "0", 0, 1e9,
	  "agg-core links down from t=0, chosen with the experiment seed" },
	{ "tier1_switches", OPT_UINT, offsetof(struct exp_failures, tier1_switches), "0", 0, 1e6,
	  "spread random_tier1 evenly over this many randomly chosen leaf (or edge) "
	  "switches, the same number of uplinks each (the STrack paper: 16 ToRs, 4 or 16 "
	  "links each); 0 = links chosen uniformly over the fabric" },
	{ "links", OPT_STRLIST, offsetof(struct exp_failures, links), "", 0, 0,
	  "named links down from t=0, e.g. [leaf0-spine3, leaf2-spine0#1]" },
	{ "loss_rate", OPT_DOUBLE, offsetof(struct exp_failures, loss_rate), "0", 0, 1,
	  "probability that a packet is corrupted (lost) on any switch-switch link" },
	{ "host_loss_rate", OPT_DOUBLE, offsetof(struct exp_failures, host_loss_rate), "0", 0, 1,
	  "probability that a packet is corrupted (lost) on any host link" },
	OPT_END
};

const struct opt_desc exp_output_opts[] = {
	{ "interval", OPT_TIME, offsetof(struct exp_output, interval), "0", 0, 1e13,
	  "time-series sampling interval; 0 = no time series" },
	{ "queues", OPT_STRLIST, offsetof(struct exp_output, queues), "", 0, 0,
	  "queue depths to sample: max:<group> (host_up, last_hop, tier1_up, tier1_down, "
	  "tier2_up, tier2_down, all, fabric = every switch-to-switch port) or a directed "
	  "link a-b" },
	{ "utilisation", OPT_STRLIST, offsetof(struct exp_output, utilisation), "", 0, 0,
	  "groups (same names) or directed links (leaf0-spine1) whose mean utilisation "
	  "to sample" },
	{ "pauses", OPT_STRLIST, offsetof(struct exp_output, pauses), "", 0, 0,
	  "port groups whose PFC PAUSE frames sent per interval are sampled (e.g. [all])" },
	{ "drops", OPT_STRLIST, offsetof(struct exp_output, drops), "", 0, 0,
	  "port groups whose packet drops (buffer and link) per interval are sampled" },
	{ "flow_throughput", OPT_BOOL, offsetof(struct exp_output, flow_throughput), "false", 0, 0,
	  "sample each flow's goodput (acknowledged bytes per interval)" },
	{ "flow_throughput_max", OPT_UINT, offsetof(struct exp_output, flow_throughput_max), "64",
	  1, 1e6, "only the first this many flows get a throughput series" },
	{ "traces", OPT_BOOL, offsetof(struct exp_output, traces), "false", 0, 0,
	  "per-connection congestion traces every interval: cwnd_bytes (window protocols), "
	  "rate_gbps (the rate of DCQCN, TIMELY, UDMP; data bytes sent per interval for "
	  "window protocols), rtt_us (the latest ACK's RTT sample) and path (entropy of the "
	  "latest data packet), and with a collective scheduler that keeps a window (MCC) each "
	  "channel's (ccl_window, chunks); off costs nothing" },
	{ "traces_max", OPT_UINT, offsetof(struct exp_output, traces_max), "16", 1, 1e6,
	  "only the first this many connections are traced" },
	{ "convergence_band", OPT_DOUBLE, offsetof(struct exp_output, convergence_band), "0.2",
	  0.001, 10,
	  "the convergence metric: every running flow within this fraction of their mean "
	  "throughput" },
	{ "convergence_jain", OPT_DOUBLE, offsetof(struct exp_output, convergence_jain), "0.95",
	  0.001, 1,
	  "the convergence_jain metric: Jain's fairness index of the running flows' "
	  "throughput at or above this" },
	{ "settle_queue", OPT_SIZE, offsetof(struct exp_output, settle_queue), "0", 0, 1e12,
	  "the queue_settle metric: when the first sampled queue stays at or below this; "
	  "0 = off" },
	{ "progress", OPT_BOOL, offsetof(struct exp_output, progress), "true", 0, 0,
	  "show a progress line on stderr when it is a terminal (never in CI)" },
	{ "paused", OPT_STRLIST, offsetof(struct exp_output, paused), "", 0, 0,
	  "port groups or directed links (leaf0-spine1: leaf0's port toward spine1) whose "
	  "fraction of each interval spent paused by PFC is sampled (mean over a group)" },
	{ "ingress", OPT_STRLIST, offsetof(struct exp_output, ingress), "", 0, 0,
	  "directed links a-b whose ingress queue is sampled: the bytes in switch a's buffer "
	  "that came in from b (what a's PFC counts against XOFF, headroom included)" },
	{ "pfc_counters", OPT_BOOL, offsetof(struct exp_output, pfc_counters), "false", 0, 0,
	  "per flow: the time any of its data packets waited behind a switch port paused by "
	  "PFC (blocked_us), whether that exceeds hol_fraction of its FCT (hol), reordered "
	  "and data packets received; columns in flows.csv (empty for a collective's "
	  "messages, which share their queue pairs: those count in the metrics), metrics "
	  "hol_flows, reordered, reorder_ratio" },
	{ "hol_fraction", OPT_DOUBLE, offsetof(struct exp_output, hol_fraction), "0.1", 0, 1,
	  "a flow is HoL-blocked when its blocked time exceeds this fraction of its FCT" },
	{ "fct_from", OPT_TIME, offsetof(struct exp_output, fct_from), "0", 0, 1e18,
	  "FCT statistics (tables, summary, metrics) count only flows that start at or after "
	  "this (a warm-up; flows.csv lists every flow)" },
	{ "fct_until", OPT_TIME, offsetof(struct exp_output, fct_until), "0", 0, 1e18,
	  "... and before this (a cool-down); 0 = no bound" },
	{ "timeline", OPT_BOOL, offsetof(struct exp_output, timeline), "false", 0, 0,
	  "a training workload (chakra, simai): write timeline.json, every rank's compute and "
	  "communication in Chrome's trace-event format (open it in Perfetto)" },
	{ "timeline_events", OPT_UINT, offsetof(struct exp_output, timeline_events), "1000000", 1,
	  1e9,
	  "timeline.json holds at most this many events (those that start first; a warning "
	  "says when it is cut)" },
	OPT_END
};

static const struct opt_desc event_opts[] = {
	{ "at", OPT_TIME, offsetof(struct exp_event, at), NULL, 0, 1e16, "when" },
	{ "link", OPT_STRING, offsetof(struct exp_event, link), "", 0, 0,
	  "the link, named a-b (both directions change)" },
	{ "node", OPT_STRING, offsetof(struct exp_event, node), "", 0, 0,
	  "instead of link: a switch or host; the action applies to each of its links" },
	{ "action", OPT_ENUM, offsetof(struct exp_event, action), NULL, 0, 0,
	  "what happens: down, up, rate, delay (propagation), loss, or proc_delay (extra "
	  "processing per packet at the egress ports: a slow switch)",
	  (const char *const[]){ "down", "up", "rate", "delay", "loss", "proc_delay", NULL } },
	{ "value", OPT_STRING, offsetof(struct exp_event, value), "", 0, 0,
	  "new rate (rate), delay (delay, proc_delay) or loss probability (loss)" },
	{ "one_way", OPT_BOOL, offsetof(struct exp_event, one_way), "false", 0, 0,
	  "action rate on a link a-b only: change a's port toward b and leave b's toward a (a "
	  "slow uplink whose downlink is not)" },
	OPT_END
};

static const char *const top_keys[] = { "name",	  "seed",   "stop_time", "time_limit", "topology",
					"switch", "lb",	    "transport", "workload",   "failures",
					"events", "output", "sweep",	 "paper",      "collective",
					"ccl",	  "server", NULL };

int exp_errf(struct mp_err *e, const struct experiment *x, const char *section, const char *fmt,
	     ...)
{
	char msg[768], key[64] = "", dotted[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* a message "key: rest" about a key of this section points at that key */
	const char *rest = msg;
	size_t k = strspn(msg, "abcdefghijklmnopqrstuvwxyz0123456789_");
	if (k > 0 && k < sizeof key && msg[k] == ':' && msg[k + 1] == ' ') {
		memcpy(key, msg, k);
		key[k] = '\0';
		rest = msg + k + 2;
	}
	const struct cfg_node *sec = x->doc.root ? cfg_get(x->doc.root, section) : NULL;
	const struct cfg_node *kn = sec && sec->kind == CFG_MAP && *key ? cfg_get(sec, key) : NULL;
	int line = kn ? kn->line : sec ? sec->line : -1;
	if (*key)
		snprintf(dotted, sizeof dotted, "%s.%s", section, key);
	else
		snprintf(dotted, sizeof dotted, "%s", section);
	return cfg_errf_line(e, &x->doc, line, dotted, "%s", rest);
}

int exp_reraise(struct mp_err *e, const struct experiment *x, const char *section)
{
	char msg[sizeof e->msg];
	snprintf(msg, sizeof msg, "%s", e->msg);
	mp_err_clear(e);
	return exp_errf(e, x, section, "%s", msg);
}

/* A section with a `type` key naming a scheme from a registry. */
typedef const void *(*find_fn)(const char *name);

static int load_typed(struct experiment *x, const char *section, const char *def_type,
		      const void *const *registry, size_t name_off, size_t opts_off,
		      size_t size_off, const void **ops_out, void **params_out, struct mp_err *e)
{
	const struct cfg_node *sec = cfg_get(x->doc.root, section);
	if (sec && sec->kind != CFG_MAP)
		return cfg_errf_line(e, &x->doc, sec->line, section,
				     "expected a mapping with a 'type' key, got %s",
				     sec->kind == CFG_SEQ ? "a sequence" : "a single value");
	const struct cfg_node *tn = sec ? cfg_get(sec, "type") : NULL;
	const char *type = def_type;
	if (tn) {
		if (tn->kind != CFG_SCALAR)
			return cfg_errf(e, &x->doc, tn, section, "expected a name");
		type = tn->value;
	}
	char known[512] = "", dotted[64];
	const char *names[64];
	size_t nnames = 0;
	const void *ops = NULL;
	for (const void *const *o = registry; *o; o++) {
		const char *nm = *(const char *const *)((const char *)*o + name_off);
		if (strcmp(nm, type ? type : "") == 0)
			ops = *o;
		if (nnames < 63)
			names[nnames++] = nm;
		size_t l = strlen(known);
		snprintf(known + l, sizeof known - l, "%s%s", l ? ", " : "", nm);
	}
	names[nnames] = NULL;
	snprintf(dotted, sizeof dotted, "%s.type", section);
	if (!type) {
		if (sec)
			return cfg_errf_line(e, &x->doc, sec->line, dotted,
					     "required key missing (one of: %s)", known);
		return cfg_errf_line(e, &x->doc, -1, section,
				     "required section missing (it needs a type: one of %s)",
				     known);
	}
	if (!ops) {
		const char *sug = cfg_suggest(type, names);
		if (sug)
			return cfg_errf_line(
			    e, &x->doc, tn->line, dotted,
			    "unknown '%s'; did you mean '%s'? (expected one of: %s)", type, sug,
			    known);
		return cfg_errf_line(e, &x->doc, tn->line, dotted,
				     "unknown '%s'; expected one of: %s", type, known);
	}
	const struct opt_desc *opts =
	    *(const struct opt_desc *const *)((const char *)ops + opts_off);
	size_t size = *(const size_t *)((const char *)ops + size_off);
	void *params = mp_calloc(1, size ? size : 1);
	opt_set_defaults(opts, params);
	*ops_out = ops;
	*params_out = params;
	static const char *const skip[] = { "type", NULL };
	return cfg_apply_table(&x->doc, sec, section, opts, params, skip, e);
}

#define LOAD_TYPED(x, sec, def, reg, type, opsp, parp, e)                                          \
	load_typed(x, sec, def, (const void *const *)(reg), offsetof(type, name),                  \
		   offsetof(type, opts), offsetof(type, params_size), (const void **)(opsp), parp, \
		   e)

static int load_events(struct experiment *x, struct mp_err *e)
{
	const struct cfg_node *ev = cfg_get(x->doc.root, "events");
	if (!ev)
		return MP_OK;
	if (ev->kind != CFG_SEQ)
		return cfg_errf_line(e, &x->doc, ev->line, "events",
				     "expected a sequence of {at, link, action, value} mappings");
	x->events = mp_calloc(ev->n ? ev->n : 1, sizeof *x->events);
	for (size_t i = 0; i < ev->n; i++) {
		const struct cfg_node *m = ev->kids[i];
		struct exp_event *v = &x->events[i];
		char sec[32];
		snprintf(sec, sizeof sec, "events[%zu]", i);
		opt_set_defaults(event_opts, v);
		x->nevents++;
		v->line = m->line;
		if (m->kind != CFG_MAP)
			return cfg_errf_line(e, &x->doc, m->line, sec,
					     "expected a mapping {at, link, action, value}");
		if (cfg_apply_table(&x->doc, m, sec, event_opts, v, NULL, e))
			return e->status;
		if (!*v->link == !*v->node)
			return cfg_errf_line(e, &x->doc, m->line, sec,
					     "expected exactly one of link (a-b) or node");
		if (v->one_way && (!*v->link || v->action != LINK_RATE)) {
			const struct cfg_node *on = cfg_get(m, "one_way");
			char okey[48];
			snprintf(okey, sizeof okey, "%s.one_way", sec);
			return cfg_errf_line(e, &x->doc, on ? on->line : m->line, okey,
					     "expected one_way: true only with a link and action "
					     "rate (got %s %s)",
					     *v->link ? "action" : "a node, action",
					     event_opts[3].choices[v->action]);
		}
		const struct cfg_node *vn = cfg_get(m, "value");
		if (vn && (v->action == LINK_DOWN || v->action == LINK_UP)) {
			char vk[48];
			snprintf(vk, sizeof vk, "%s.value", sec);
			return cfg_errf_line(e, &x->doc, vn->line, vk,
					     "action %s takes no value, got '%s' (rate, delay, "
					     "loss and proc_delay do)",
					     event_opts[3].choices[v->action], v->value);
		}
		int bad = 0;
		switch (v->action) {
		case LINK_RATE:
			bad = opt_parse_rate(v->value, &v->u) || v->u == 0;
			break;
		case LINK_DELAY:
		case LINK_PROC_DELAY:
			bad = opt_parse_time(v->value, &v->u);
			break;
		case LINK_LOSS: {
			char *end;
			v->d = strtod(v->value, &end);
			bad = end == v->value || *end || !(v->d >= 0 && v->d <= 1);
			break;
		}
		default:
			break;
		}
		char vkey[48];
		snprintf(vkey, sizeof vkey, "%s.value", sec);
		if (bad)
			return cfg_errf_line(e, &x->doc, vn ? vn->line : m->line, vkey,
					     "expected %s for action %s, got '%s'",
					     v->action == LINK_RATE   ? "a rate such as 40Gbps"
					     : v->action == LINK_LOSS ? "a probability in [0, 1]"
								      : "a time such as 1ms",
					     event_opts[3].choices[v->action], v->value);
	}
	return MP_OK;
}

/* Every top-level key is a known one. */
static int check_top_keys(struct experiment *x, struct mp_err *e)
{
	const struct cfg_node *root = x->doc.root;
	for (size_t i = 0; i < root->n; i++) {
		const char *k = root->kids[i]->key;
		bool ok = false;
		for (const char *const *t = top_keys; *t; t++)
			ok |= strcmp(*t, k) == 0;
		if (!ok) {
			char known[256] = "";
			for (const char *const *t = top_keys; *t; t++) {
				size_t l = strlen(known);
				snprintf(known + l, sizeof known - l, "%s%s", l ? ", " : "", *t);
			}
			const char *sug = cfg_suggest(k, top_keys);
			if (sug)
				return cfg_errf_line(e, &x->doc, root->kids[i]->line, k,
						     "unknown top-level key; did you mean '%s'? "
						     "(known: %s)",
						     sug, known);
			return cfg_errf_line(e, &x->doc, root->kids[i]->line, k,
					     "unknown top-level key (known: %s)", known);
		}
	}
	return MP_OK;
}

/* The top-level options (name, times...) and how they agree. */
static int load_general(struct experiment *x, struct mp_err *e)
{
	const struct cfg_node *root = x->doc.root;
	static const char *const skip_sections[] = {
		"topology", "switch", "lb",    "transport",  "workload", "failures", "events",
		"output",   "sweep",  "paper", "collective", "ccl",	 "server",   NULL
	};
	opt_set_defaults(exp_general_opts, &x->gen);
	if (cfg_apply_table(&x->doc, root, "", exp_general_opts, &x->gen, skip_sections, e))
		return e->status;
	if (x->gen.stop_time > x->gen.time_limit) {
		/* time_limit stops a run "even if flows remain": a later stop_time
		 * would never be reached, and it used to win silently */
		const struct cfg_node *sn = cfg_get(root, "stop_time");
		char st[32], tl[32];
		opt_format_time(x->gen.stop_time, st, sizeof st);
		opt_format_time(x->gen.time_limit, tl, sizeof tl);
		return cfg_errf_line(e, &x->doc, sn ? sn->line : -1, "stop_time",
				     "%s is after time_limit (%s), which stops every run; expected "
				     "stop_time at most time_limit (lower stop_time or raise "
				     "time_limit)",
				     st, tl);
	}
	const char *nm = x->gen.name;
	if (!*nm || nm[0] == '.' || nm[0] == '-' ||
	    strspn(nm, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		       "0123456789._-") != strlen(nm)) {
		const struct cfg_node *nn = cfg_get(root, "name");
		return cfg_errf_line(e, &x->doc, nn ? nn->line : -1, "name",
				     "expected letters, digits, '.', '_' or '-', not starting "
				     "with '.' or '-' (it names the results folder, and a "
				     "command would read a leading '-' as an option), got '%s'",
				     nm);
	}
	if (strlen(nm) > EXP_NAME_MAX) {
		const struct cfg_node *nn = cfg_get(root, "name");
		return cfg_errf_line(e, &x->doc, nn ? nn->line : -1, "name",
				     "expected at most %d characters (it names the results "
				     "folder; a file system takes 255 with mpsim's temporary "
				     "suffix), got %zu",
				     EXP_NAME_MAX, strlen(nm));
	}
	return MP_OK;
}

/* The topology, switch, lb and transport sections, and how the switch and
 * the transport agree (buffer mode, PFC thresholds, mtu). */
static int load_fabric(struct experiment *x, struct mp_err *e)
{
	const struct cfg_node *root = x->doc.root;
	if (LOAD_TYPED(x, "topology", NULL, topo_registry, struct topo_ops, &x->topo,
		       &x->topo_params, e))
		return e->status;
	if (x->topo->check && x->topo->check(x->topo_params, e))
		return exp_reraise(e, x, "topology");
	opt_set_defaults(swcfg_opts, &x->sw);
	if (cfg_apply_table(&x->doc, cfg_get(root, "switch"), "switch", swcfg_opts, &x->sw, NULL,
			    e))
		return e->status;
	if (x->sw.kmax < x->sw.kmin)
		return exp_errf(e, x, "switch", "kmax: expected kmax >= kmin");
	if (LOAD_TYPED(x, "lb", "ecmp", lb_registry, struct lb_ops, &x->lb, &x->lb_params, e))
		return e->status;
	if (LOAD_TYPED(x, "transport", NULL, transport_registry, struct transport_ops, &x->tp,
		       &x->tp_params, e))
		return e->status;
	const struct tp_common *cm = x->tp_params;
	if (cm->header >= cm->mtu)
		return exp_errf(e, x, "transport", "header: expected fewer bytes than mtu");
	if (x->tp->check && x->tp->check(x->tp_params, e))
		return exp_reraise(e, x, "transport");
	const struct cfg_node *swn = cfg_get(root, "switch");
	if (x->tp->lossless_default && !(swn && cfg_get(swn, "mode")))
		x->sw.mode = BUF_LOSSLESS;
	if (x->sw.mode == BUF_LOSSLESS && x->sw.pfc_xoff && x->sw.pfc_xon_gap > x->sw.pfc_xoff)
		return exp_errf(e, x, "switch",
				"pfc_xon_gap: %llu B is more than pfc_xoff (%llu B), so RESUME "
				"(XOFF - gap) would never be sent: expected at most pfc_xoff",
				(unsigned long long)x->sw.pfc_xon_gap,
				(unsigned long long)x->sw.pfc_xoff);
	if (x->sw.trim && !x->tp->trims)
		return exp_errf(
		    e, x, "switch",
		    "trim: transport %s does not handle trimmed packets (a header "
		    "would count as data delivered); expected trim off, or transport uet",
		    x->tp->name);
	if (x->sw.trim && x->sw.mode == BUF_LOSSLESS)
		return exp_errf(e, x, "switch",
				"trim: expected mode lossy (a lossless switch never drops its data "
				"class, so it has nothing to trim)");
	if (x->sw.trim && x->sw.trim_size >= cm->mtu)
		return exp_errf(e, x, "switch",
				"trim_size: expected fewer bytes than the transport's mtu (%llu B)",
				(unsigned long long)cm->mtu);
	if (!x->sw.mtu) /* the PFC headroom's largest packet */
		x->sw.mtu = cm->mtu;
	else if (x->sw.mtu < cm->mtu)
		return exp_errf(
		    e, x, "switch",
		    "mtu: expected 0 or at least the transport's mtu (%llu B), got %llu B",
		    (unsigned long long)cm->mtu, (unsigned long long)x->sw.mtu);
	return MP_OK;
}

/* A topology built around servers (rail_optimized) gives the server
 * section's gpus; a file may still say 1 (every pair through the NICs), but no
 * other number. */
static int load_server_gpus(struct experiment *x, struct mp_err *e)
{
	if (!x->topo->server_gpus)
		return MP_OK;
	uint64_t g = x->topo->server_gpus(x->topo_params);
	const struct cfg_node *srv = cfg_get(x->doc.root, "server");
	if (!srv || !cfg_get(srv, "gpus"))
		x->server.gpus = g;
	else if (x->server.gpus != g && x->server.gpus != 1)
		return exp_errf(e, x, "server",
				"gpus: expected %llu (topology %s has %llu GPUs per server) or 1 "
				"(no NVLink: every pair through the NICs), got %llu",
				(unsigned long long)g, x->topo->name, (unsigned long long)g,
				(unsigned long long)x->server.gpus);
	return MP_OK;
}

/* The traffic: the workload or collective section, ccl and server. */
static int load_traffic(struct experiment *x, struct mp_err *e)
{
	const struct cfg_node *root = x->doc.root;
	const struct cfg_node *coll = cfg_get(root, "collective");
	if ((!coll || cfg_get(root, "workload")) &&
	    LOAD_TYPED(x, "workload", NULL, workload_registry, struct workload_ops, &x->wl,
		       &x->wl_params, e))
		return e->status;
	if (coll) {
		if (coll->kind != CFG_MAP)
			return cfg_errf_line(
			    e, &x->doc, coll->line, "collective",
			    "expected a mapping {type: allreduce, size: ..., ...}");
		x->coll = mp_calloc(1, sizeof *x->coll);
		opt_set_defaults(coll_opts, x->coll);
		if (cfg_apply_table(&x->doc, coll, "collective", coll_opts, x->coll, NULL, e))
			return e->status;
		if (x->coll->type != COLL_ALLREDUCE && cfg_get(coll, "algorithm"))
			return exp_errf(e, x, "collective",
					"algorithm: only allreduce has algorithms (ring, "
					"double_binary_tree, halving_doubling)");
		if (x->coll->type != COLL_ALLTOALL && x->coll->parallelism)
			return exp_errf(e, x, "collective",
					"parallelism: only alltoall has a parallelism limit");
	}
	if (LOAD_TYPED(x, "ccl", "rr", ccl_registry, struct ccl_sched_ops, &x->ccl, &x->ccl_params,
		       e))
		return e->status;
	if (x->ccl->check && x->ccl->check(x->ccl_params, e))
		return exp_reraise(e, x, "ccl");
	opt_set_defaults(intra_opts, &x->server);
	if (cfg_apply_table(&x->doc, cfg_get(root, "server"), "server", intra_opts, &x->server,
			    NULL, e))
		return e->status;
	if (load_server_gpus(x, e))
		return e->status;
	if (coll && !x->tp->post)
		return exp_errf(e, x, "transport",
				"type: %s does not carry long-lived queue pairs yet, so it cannot "
				"run a collective section",
				x->tp->name);
	return MP_OK;
}

/* The failures and output sections, then the events. */
static int load_output(struct experiment *x, struct mp_err *e)
{
	const struct cfg_node *root = x->doc.root;
	opt_set_defaults(exp_failures_opts, &x->fail);
	if (cfg_apply_table(&x->doc, cfg_get(root, "failures"), "failures", exp_failures_opts,
			    &x->fail, NULL, e))
		return e->status;
	opt_set_defaults(exp_output_opts, &x->out);
	if (cfg_apply_table(&x->doc, cfg_get(root, "output"), "output", exp_output_opts, &x->out,
			    NULL, e))
		return e->status;
	if (x->out.fct_until && x->out.fct_until <= x->out.fct_from)
		return exp_errf(
		    e, x, "output",
		    "fct_until: expected 0 (no bound) or a time after fct_from (%.3f us), "
		    "got %.3f us",
		    time_to_us(x->out.fct_from), time_to_us(x->out.fct_until));
	return load_events(x, e);
}

/* Every section of the file, checked in the order the messages assume. */
static int load_all(struct experiment *x, struct mp_err *e)
{
	if (check_top_keys(x, e) || load_general(x, e) || load_fabric(x, e) || load_traffic(x, e))
		return e->status;
	return load_output(x, e);
}

int exp_load(struct experiment *x, const char *path, char *const *sets, size_t nsets,
	     int64_t seed_override, struct mp_err *e)
{
	return exp_load_point(x, path, sets, nsets, seed_override, NULL, 0, e);
}

int exp_load_point(struct experiment *x, const char *path, char *const *sets, size_t nsets,
		   int64_t seed_override, const struct sweep *sw, size_t point, struct mp_err *e)
{
	memset(x, 0, sizeof *x);
	if (cfg_load_file(path, &x->doc, e))
		return e->status;
	if (sw && sweep_apply_variants(sw, point, &x->doc, e))
		return e->status;
	for (size_t i = 0; i < nsets; i++)
		if (cfg_apply_set(&x->doc, sets[i], e))
			return e->status;
	if (sw && sweep_apply(sw, point, &x->doc, e))
		return e->status;
	if (seed_override >= 0) {
		char buf[64];
		snprintf(buf, sizeof buf, "seed=%lld", (long long)seed_override);
		if (cfg_apply_set(&x->doc, buf, e))
			return e->status;
	}
	return load_all(x, e);
}

int exp_load_string(struct experiment *x, const char *text, const char *name, struct mp_err *e)
{
	memset(x, 0, sizeof *x);
	if (cfg_load_string(text, name, &x->doc, e))
		return e->status;
	return load_all(x, e);
}

static void free_typed(const struct opt_desc *opts, void *params)
{
	if (!params)
		return;
	opt_free(opts, params);
	mp_free(params);
}

void exp_free(struct experiment *x)
{
	opt_free(exp_general_opts, &x->gen);
	if (x->topo)
		free_typed(x->topo->opts, x->topo_params);
	if (x->lb)
		free_typed(x->lb->opts, x->lb_params);
	if (x->tp)
		free_typed(x->tp->opts, x->tp_params);
	if (x->wl)
		free_typed(x->wl->opts, x->wl_params);
	if (x->coll) {
		opt_free(coll_opts, x->coll);
		mp_free(x->coll);
	}
	if (x->ccl)
		free_typed(x->ccl->opts, x->ccl_params);
	opt_free(exp_failures_opts, &x->fail);
	opt_free(exp_output_opts, &x->out);
	for (size_t i = 0; i < x->nevents; i++)
		opt_free(event_opts, &x->events[i]);
	mp_free(x->events);
	cfg_free(&x->doc);
	memset(x, 0, sizeof *x);
}

void exp_workload_name(const struct experiment *x, char *buf, size_t n)
{
	int k = snprintf(buf, n, "%s%s", x->wl ? x->wl->name : "", x->wl && x->coll ? " + " : "");
	if (x->coll && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "collective %s%s%s",
			 coll_type_names[x->coll->type], x->coll->type == COLL_ALLREDUCE ? "/" : "",
			 x->coll->type == COLL_ALLREDUCE ? coll_algo_names[x->coll->algorithm]
							 : "");
}

static void dump_typed(FILE *f, const char *section, const char *type, const struct opt_desc *o,
		       const void *params)
{
	fprintf(f, "%s:\n  type: %s\n", section, type);
	opt_dump_yaml(f, o, params, "  ");
}

void exp_write_effective(FILE *f, const struct experiment *x)
{
	fprintf(f, "# effective configuration: every option, defaults filled in (mpsim %s)\n",
		MPSIM_VERSION);
	opt_dump_yaml(f, exp_general_opts, &x->gen, "");
	dump_typed(f, "topology", x->topo->name, x->topo->opts, x->topo_params);
	fputs("switch:\n", f);
	opt_dump_yaml(f, swcfg_opts, &x->sw, "  ");
	dump_typed(f, "lb", x->lb->name, x->lb->opts, x->lb_params);
	dump_typed(f, "transport", x->tp->name, x->tp->opts, x->tp_params);
	if (x->wl)
		dump_typed(f, "workload", x->wl->name, x->wl->opts, x->wl_params);
	if (x->coll) {
		fputs("collective:\n", f);
		opt_dump_yaml(f, coll_opts, x->coll, "  ");
	}
	dump_typed(f, "ccl", x->ccl->name, x->ccl->opts, x->ccl_params);
	fputs("server:\n", f);
	opt_dump_yaml(f, intra_opts, &x->server, "  ");
	fputs("failures:\n", f);
	opt_dump_yaml(f, exp_failures_opts, &x->fail, "  ");
	if (x->nevents) {
		fputs("events:\n", f);
		for (size_t i = 0; i < x->nevents; i++) {
			char at[64];
			opt_format_value(&event_opts[0], &x->events[i], at, sizeof at);
			const struct exp_event *ev = &x->events[i];
			fprintf(f, "  - {at: %s, %s: ", at, *ev->link ? "link" : "node");
			opt_fput_yaml_string(f, *ev->link ? ev->link : ev->node, true);
			fprintf(f, ", action: %s, value: ", event_opts[3].choices[ev->action]);
			opt_fput_yaml_quoted(f, ev->value);
			fprintf(f, "%s}\n", ev->one_way ? ", one_way: true" : "");
		}
	}
	fputs("output:\n", f);
	opt_dump_yaml(f, exp_output_opts, &x->out, "  ");
}

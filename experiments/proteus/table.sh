#!/usr/bin/env bash
# table.sh RESULTS_DIR... - the tables of README.md from a run of fig5_pfc.yaml
# (per workload and scheme: FCT with PFC on and off, PAUSE frames, HoL-blocked flows,
# reordered packets, the lossy run's drops, the measured load), of pfc_sources.yaml
# (per config: PAUSE frames, HoL-blocked flows, FCT, what PFC costs CONGA, the
# measured load), of fig9_link_speed.yaml (per link speed: each system's FCT and
# PAUSE frames, DRILL over Proteus beside the paper's), of fig12_13.yaml (Fig. 12:
# per system, HoL-blocked flows and reordered packets beside the paper's, PAUSE
# frames, FCT and the measured load) or of fig10_11.yaml: per workload and load, each system's mean and p99 FCT with the
# load its point carried (summary.json's load: the busiest fabric tier against
# what the nominal load implies, the host links against the nominal load), its
# PAUSE frames, HoL-blocked flows and reordered packets; Fig. 11's p99 slowdown
# of flows <= 10 KB and 10-100 KB at the paper's 0.6 load, and on Web Server the
# baselines' over Proteus's; and Proteus against each baseline at Web Search
# 0.8. The paper's numbers are printed beside ours. RESULTS_DIR is a
# finished sweep (sweep.csv) or a partial one (RESULTS_DIR.partial-*: a folder
# per finished point); several are read as one (a sweep run in pieces); a
# point that is not there prints as "-". Data Mining is printed only when one
# of its points is there. The host column gives the load the flows that
# arrived in the window offered (summary.json's load.arrived, else counted
# from flows.csv) beside the nominal one.
#   experiments/proteus/table.sh results/proteus_fig5
#   experiments/proteus/table.sh results/proteus_fig10_11
#   experiments/proteus/table.sh results/proteus_fig12_13
#   experiments/proteus/table.sh results/proteus_pfc_sources
#   experiments/proteus/table.sh results/proteus_fig9
set -euo pipefail
python3 - "${@:?usage: table.sh RESULTS_DIR...}" <<'PY'
import csv, json, os, sys
SYSTEMS = [("ecmp", "ECMP"), ("conga", "CONGA"), ("drill", "DRILL"), ("hermes", "Hermes"),
           ("mprdma", "MP-RDMA"), ("proteus", "Proteus (paper's rules)"),
           ("proteus_delivered", "Proteus, `delivered` (ours)")]
TRAFFIC = [("webserver", "Web Server"), ("cachefollower", "Cache Follower"),
           ("websearch", "Web Search"), ("mining", "Data Mining")]
HOST_LOADS = ["0.15", "0.3", "0.4"]  # the paper's 0.3 / 0.6 / 0.8 on the 2:1 fabric

# finished points: sweep.csv's rows with status ok, else every folder with a summary.json
pts, names = {}, []
for d in sys.argv[1:]:
    if os.path.exists(os.path.join(d, "sweep.csv")):
        # the first column is the point's folder (a sweep key named `point`
        # repeats the name for its value); a failed point has no summary.json
        rows = list(csv.reader(open(os.path.join(d, "sweep.csv"))))
        here = [r[0] for r in rows[1:]]
    else:
        here = os.listdir(d)
    for n in here:
        f = os.path.join(d, n, "summary.json")
        if os.path.exists(f):
            pts[n] = json.load(open(f))
            pts[n]["_dir"] = os.path.join(d, n)
            names.append(n)

def arrived(p):
    ld = p["load"]
    if "arrived" in ld:
        return ld["arrived"]
    a, b = ld["from_us"], ld["until_us"]  # as sim/load.c counts it, every host a source
    rows = csv.DictReader(open(os.path.join(p["_dir"], "flows.csv")))
    bits = sum(8 * int(r["bytes"]) for r in rows if a <= float(r["start_us"]) < b)
    rate = next(l.split(":")[1].strip() for l in open(os.path.join(p["_dir"], "config.yaml"))
                if l.strip().startswith("host_rate:"))
    assert rate.endswith("Gbps"), rate
    return bits / ((b - a) * 1e-6 * p["topology"]["hosts"] * float(rate[:-4]) * 1e9)

def fmt(x, f="%.0f"):
    return "-" if x is None else f % x

def load_cells(p):
    ld = p["load"]
    return ("%.3f / %.3f (%+.0f%%)" % (ld["fabric"], ld["fabric_implied"],
                                       100 * (ld["fabric"] / ld["fabric_implied"] - 1)),
            "%.3f / %.2f (%.3f)" % (ld["host"], ld["nominal"], arrived(p)))

def pct(a, b):
    # a against b, as a change
    return "%+.1f%%" % (100.0 * (a - b) / b) if b else "-"

def share(pfc, num, den):
    return "-" if not pfc.get(den) else "%.2f%%" % (100.0 * pfc.get(num, 0) / pfc[den])

# fig5_pfc.yaml (system x switch.mode x traffic): what PFC costs each scheme
FIG5_SYSTEMS = [s for s in SYSTEMS if s[0] != "mprdma"]
if any("_mode-" in n for n in names):
    print("| workload | scheme | AFCT on / off | p99 on / off | PAUSE frames | HoL-blocked "
          "| reordered | lossy drops / MB resent | fabric load on / implied |")
    print("|---|---|---|---|---:|---:|---:|---|---|")
    for tr, trname in (t for t in TRAFFIC if t[0] in ("webserver", "websearch")):
        for s, sname in FIG5_SYSTEMS:
            on, off = (pts.get("system-%s_mode-%s_traffic-%s" % (s.replace("_", "+"), m, tr))
                       for m in ("lossless", "lossy"))
            if on is None or off is None:
                print("| %s | %s | - | - | - | - | - | - | - |" % (trname, sname))
                continue
            a1, a0 = on["flows"]["fct_us"]["mean"], off["flows"]["fct_us"]["mean"]
            p1, p0 = on["flows"]["fct_us"]["p99"], off["flows"]["fct_us"]["p99"]
            f = "%.1f" if a1 < 100 else "%.0f"
            pf, n0 = on.get("pfc", {}), off["network"]
            print("| %s | %s | %s / %s (%s) | %.0f / %.0f (%s) | %d | %s | %s | %d / %.1f "
                  "| %.3f / %.3f |" % (
                      trname, sname, f % a1, f % a0, pct(a1, a0), p1, p0, pct(p1, p0),
                      on["network"]["pause_frames"], share(pf, "hol_flows", "measured_flows"),
                      share(pf, "reordered", "data_pkts"), n0["drops_buffer"],
                      n0["retx_bytes"] / 1e6, on["load"]["fabric"], on["load"]["fabric_implied"]))
    sys.exit(0)

# fig9_link_speed.yaml (system x gbps): per link speed, each system's mean / p99 FCT and
# PAUSE frames, and the load the paper's Proteus point carried
if any("_gbps-" in n for n in names):
    F9 = [s for s in SYSTEMS if s[0] not in ("hermes", "mprdma")]
    print("| Gb/s | " + " | ".join(n for _, n in F9) + " | PAUSE frames: " +
          "ECMP / CONGA / DRILL / Proteus / `delivered`" +
          " | DRILL / Proteus AFCT, p99 (paper at 10: 1.25, 1.30) | load: host / nominal; fabric / implied |")
    print("|---|" + "---|" * len(F9) + "---|---|---|")
    for g in ("10", "25", "40", "100"):
        ps = [pts.get("system-%s_gbps-%s" % (s.replace("_", "+"), g)) for s, _ in F9]
        if not any(ps):
            continue
        cells = ["-" if p is None else "%.0f / %.0f" % (p["flows"]["fct_us"]["mean"],
                                                          p["flows"]["fct_us"]["p99"]) for p in ps]
        pauses = " / ".join("-" if p is None else str(p["network"]["pause_frames"]) for p in ps)
        d, pr = (ps[[k for k, _ in F9].index(s)] for s in ("drill", "proteus"))
        ratio = "-" if d is None or pr is None else "%.2f, %.2f" % (
            d["flows"]["fct_us"]["mean"] / pr["flows"]["fct_us"]["mean"],
            d["flows"]["fct_us"]["p99"] / pr["flows"]["fct_us"]["p99"])
        ld = "-" if pr is None else "%.3f / %.1f; %.3f / %.3f" % (
            pr["load"]["host"], pr["load"]["nominal"], pr["load"]["fabric"],
            pr["load"]["fabric_implied"])
        print("| %s | %s | %s | %s | %s |" % (g, " | ".join(cells), pauses, ratio, ld))
    sys.exit(0)

# pfc_sources.yaml (one sweep key, point: <config>_<case>, or bound_<workload>_<scheme>)
CONFIGS = ["files", "conweave", "conweave_ecn", "hpcc", "dcqcn_sim", "static_xoff", "no_dcqcn"]
if any(n.startswith("point-") for n in names):
    def pt(name):
        return pts.get("point-" + name.replace("_", "+"))
    def pfc_cells(p, afct=True, p99=False):
        if p is None:
            return "-"
        c = [str(p["network"]["pause_frames"]),
             share(p.get("pfc", {}), "hol_flows", "measured_flows")]
        if afct:
            c.append(fmt(p["flows"]["fct_us"]["mean"]))
        if p99:
            c.append(fmt(p["flows"]["fct_us"]["p99"]))
        return " / ".join(c)
    def lossy(c, l):
        if c is None or l is None:
            return "-"
        a, b = c["flows"]["fct_us"]["mean"], l["flows"]["fct_us"]["mean"]
        return "%s (%s)" % (fmt(b), pct(a, b))
    def ld(p):
        return "-" if p is None else "%.3f / %.3f" % (p["load"]["fabric"], p["load"]["fabric_implied"])
    print("| config | Web Search, ECMP: pauses / HoL / AFCT / p99 | Web Search, CONGA: pauses / "
          "HoL / AFCT | CONGA AFCT lossy (what PFC costs) | Data Mining, CONGA: pauses / HoL "
          "| fabric / implied: Web Search ECMP, CONGA; Data Mining CONGA |")
    print("|---|---|---|---|---|---|")
    for c in CONFIGS:
        e, g, l, m = (pt("%s_%s" % (c, k)) for k in
                      ("websearch_ecmp", "websearch_conga", "websearch_conga_lossy", "mining_conga"))
        if not any((e, g, l, m)):
            continue
        print("| %s | %s | %s | %s | %s | %s; %s; %s |" % (
            c, pfc_cells(e, p99=True), pfc_cells(g), lossy(g, l), pfc_cells(m, afct=False),
            ld(e), ld(g), ld(m)))
    sys.exit(0)

def point(sysname, traffic, host):
    # a point's folder writes a "_" inside a swept value as "+" (system-proteus+delivered_...)
    return pts.get("system-%s_traffic-%s_load-%s" % (sysname.replace("_", "+"), traffic, host))

def paper_load(host):
    return "%g" % (2 * float(host))

# Fig. 12 (Data Mining at the paper's 0.6): the host-0.3 rows are fig10_11.yaml's
# Data Mining points at 0.3 (the same runs), the host-0.6 rows fig12_13.yaml's
FIG12 = {"conga": "35%", "drill": "19%", "hermes": "15%", "mprdma": "11%", "proteus": "0"}
fig12_rows = [(s, n, point(s, "mining", "0.3")) for s, n in SYSTEMS] + \
    [(s, n + ", host load 0.6", pts.get("system-%s+host0.6" % s.replace("_", "+")))
     for s, n in SYSTEMS if s in ("conga", "drill", "hermes", "proteus")]

def uplinks(p):
    # the leaf uplinks over the whole run (ports.csv's tier1_up): how evenly the bytes
    # spread (coefficient of variation of utilisation), mean and deepest queue, ECN marks
    rows = [r for r in csv.DictReader(open(os.path.join(p["_dir"], "ports.csv")))
            if r["group"] == "tier1_up"]
    u = [float(r["utilisation"]) for r in rows]
    mu = sum(u) / len(u)
    cov = (sum((x - mu) ** 2 for x in u) / len(u)) ** 0.5 / mu if mu else float("nan")
    return (cov, sum(float(r["mean_queue_bytes"]) for r in rows) / len(rows),
            max(int(r["max_queue_bytes"]) for r in rows), sum(int(r["ecn_marks"]) for r in rows))

def fig12():
    if not any(p for _, _, p in fig12_rows):
        return
    print("Data Mining at the paper's 0.6 (host 0.3) (Fig. 12a-b), FCT in us:\n")
    print("| system | paper HoL-blocked | ours HoL-blocked | reordered packets | PAUSE frames "
          "| mean FCT | p99 FCT | fabric / implied | host / nominal (arrived) |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    for s, sname, p in fig12_rows:
        paper = FIG12.get(s, "") if "host load" not in sname else ""
        if p is None:
            print("| %s | %s | - | - | - | - | - | - | - |" % (sname, paper))
            continue
        pfc, fct = p.get("pfc", {}), p["flows"]["fct_us"]
        hol = "%s (%d / %d)" % (share(pfc, "hol_flows", "measured_flows"),
                                pfc.get("hol_flows", 0), pfc.get("measured_flows", 0))
        print("| %s | %s | %s | %s | %d | %s | %s | %s | %s |" % (
            sname, paper, hol, share(pfc, "reordered", "data_pkts"),
            p["network"]["pause_frames"], fmt(fct["mean"]), fmt(fct["p99"]), *load_cells(p)))
    print()
    print("The leaf uplinks over the whole run (ports.csv's tier1_up), and Proteus's moves "
          "(summary.json's lb):\n")
    print("| system | utilisation CoV | mean queue, B | deepest queue, B | ECN marks "
          "| flows >= 100 MB, mean Gb/s | Algorithm 1 moves / new flows |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for s, sname, p in fig12_rows:
        if p is None:
            continue
        cov, mq, xq, ecn = uplinks(p)
        big = [r for r in csv.DictReader(open(os.path.join(p["_dir"], "flows.csv")))
               if int(r["bytes"]) >= 100e6 and r["fct_us"] and
               (p["load"]["from_us"] <= float(r["start_us"]) < p["load"]["until_us"])]
        gbps = (sum(8e-3 * int(r["bytes"]) / float(r["fct_us"]) for r in big) / len(big)
                if big else None)
        lb = p.get("lb", {})
        mv = "%d / %d" % (lb["moves"], lb["flows"]) if "moves" in lb else ""
        print("| %s | %.2f | %.0f | %d | %d | %s | %s |" % (sname, cov, mq, xq, ecn,
                                                       fmt(gbps, "%.1f"), mv))
    print()

if not any("_traffic-" in n for n in names):
    fig12()
    sys.exit(0)


traffics = [t for t in TRAFFIC
            if t[0] != "mining" or any(point(s, "mining", h) for s, _ in SYSTEMS for h in HOST_LOADS)]

# Fig. 10: mean and p99 FCT, with each point's measured load
for tr, trname in traffics:
    print("%s (Fig. 10), FCT in us:\n" % trname)
    print("| load (host) | system | mean FCT | p99 FCT | fabric / implied | host / nominal (arrived) "
          "| PAUSE frames | HoL-blocked flows | reordered packets |")
    print("|---|---|---:|---:|---|---|---:|---:|---:|")
    for h in HOST_LOADS:
        for s, sname in SYSTEMS:
            p = point(s, tr, h)
            if p is None:
                print("| %s (%s) | %s | - | - | - | - | - | - | - |" % (paper_load(h), h, sname))
                continue
            fct, pfc = p["flows"]["fct_us"], p.get("pfc", {})
            print("| %s (%s) | %s | %s | %s | %s | %s | %d | %s | %s |" % (
                paper_load(h), h, sname, fmt(fct["mean"]), fmt(fct["p99"]), *load_cells(p),
                p["network"]["pause_frames"], share(pfc, "hol_flows", "measured_flows"),
                share(pfc, "reordered", "data_pkts")))
    print()

# Fig. 11: p99 slowdown of the two smallest size groups (summary.json's by_size)
def slow99(p, bucket):
    by = {} if p is None else {b["bucket"]: b for b in p["flows"]["by_size"]}
    return by[bucket]["slowdown"]["p99"] if bucket in by and by[bucket]["slowdown"]["n"] else None

print("Fig. 11, p99 slowdown of flows <= 10 KB / 10-100 KB at the paper's 0.6 load (host 0.3):\n")
print("| workload | " + " | ".join(n for _, n in SYSTEMS) + " |")
print("|---|" + "---|" * len(SYSTEMS))
for tr, trname in traffics:
    cells = []
    for s, _ in SYSTEMS:
        v = [slow99(point(s, tr, "0.3"), k) for k in ("<=10KB", "10KB-100KB")]
        cells.append("-" if v == [None, None] else "%s / %s" % (fmt(v[0], "%.1f"), fmt(v[1], "%.1f")))
    print("| %s | %s |" % (trname, " | ".join(cells)))
print()

# Fig. 11's claim (section V-B): on Web Server, Proteus's small flows' p99 "up to"
# 1.7x / 2x / 3.3x / 2.8x lower than CONGA's / DRILL's / Hermes's / MP-RDMA's
FIG11 = {"ecmp": None, "conga": 1.7, "drill": 2.0, "hermes": 3.3, "mprdma": 2.8}

def ratio(base, prot, bucket):
    a, b = slow99(prot, bucket), slow99(base, bucket)
    return "-" if a is None or b is None else "%.1fx" % (b / a)

print("Fig. 11, Web Server at 0.6 (host 0.3): baseline's p99 slowdown / Proteus's, "
      "flows <= 10 KB / 10-100 KB:\n")
print("| baseline | paper (up to) | Proteus (paper's rules) | Proteus, `delivered` (ours) |")
print("|---|---|---|---|")
wp, wd = point("proteus", "webserver", "0.3"), point("proteus_delivered", "webserver", "0.3")
for s, sname in SYSTEMS[:5]:
    base = point(s, "webserver", "0.3")
    print("| %s | %s | %s / %s | %s / %s |" % (
        sname, "" if FIG11[s] is None else "%gx" % FIG11[s],
        ratio(base, wp, "<=10KB"), ratio(base, wp, "10KB-100KB"),
        ratio(base, wd, "<=10KB"), ratio(base, wd, "10KB-100KB")))
print()

# Fig. 10's Web Search claim at 0.8: how much lower Proteus's AFCT and p99 FCT are
# than each baseline's, 1 - Proteus / baseline (the paper, section V-B: "up to"
# 35/31/28/22% and 46/42/34/29% against CONGA / DRILL / Hermes / MP-RDMA; the
# testbed's claim against ECMP is 2-3x)
PAPER = {"conga": (35, 46), "drill": (31, 42), "hermes": (28, 34), "mprdma": (22, 29)}

def better(prot, base, key):
    if prot is None or base is None:
        return "-"
    a, b = prot["flows"]["fct_us"][key], base["flows"]["fct_us"][key]
    return "%.0f%% (%.2fx)" % (100 * (1 - a / b), b / a)

print("Web Search at the paper's 0.8 (host 0.4): how much lower Proteus's FCT is than each "
      "baseline's, 1 - Proteus / baseline (baseline / Proteus):\n")
print("| Proteus (paper's rules) better than | paper AFCT | ours AFCT | paper p99 | ours p99 "
      "| Proteus, `delivered` (ours): AFCT / p99 |")
print("|---|---|---|---|---|---|")
prot, deliv = point("proteus", "websearch", "0.4"), point("proteus_delivered", "websearch", "0.4")
for s, sname in SYSTEMS[:5]:
    base = point(s, "websearch", "0.4")
    pa, pp = PAPER.get(s, (None, None))
    label = sname + (" (testbed claim 2-3x)" if s == "ecmp" else "")
    print("| %s | %s | %s | %s | %s | %s / %s |" % (
        label, "" if pa is None else "%d%%" % pa, better(prot, base, "mean"),
        "" if pp is None else "%d%%" % pp, better(prot, base, "p99"),
        better(deliv, base, "mean"), better(deliv, base, "p99")))

fig12()
PY

#!/usr/bin/env bash
# table.sh RESULTS_DIR - the iteration time of every point of a training sweep
# (its simulated time: the trace's last node ends the run), with the bytes its
# leaves sent up to the spines and the largest queue between switches.
#   experiments/training/table.sh results/training_dense_128
set -euo pipefail
python3 - "${1:?usage: table.sh RESULTS_DIR}" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(d, "sweep.csv"))))
print("| fabric | system | iteration (ms) | vs roce1qp | leaf-to-spine (GB) | max fabric queue (KB) | ECN marks | drops |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
it = {}
for r in rows:
    s = json.load(open(os.path.join(d, r["point"], "summary.json")))
    it[(r["fabric"], r["system"])] = (s, r)
for (fab, sysname), (s, r) in it.items():
    base = it.get((fab, "roce1qp"), (s, r))[0]["run"]["sim_time_us"]
    t = s["run"]["sim_time_us"]
    up = s["ports"].get("tier1_up", {}).get("tx_bytes", 0)
    print("| %s | %s | %.3f | %.3f | %.2f | %.0f | %d | %s |" % (
        fab, sysname, t / 1e3, t / base, up / 1e9,
        float(r["max_queue_fabric_MB"] or 0) * 1e3, int(float(r["ecn_marks"] or 0)), r["drops"]))
PY

#!/usr/bin/env bash
# mpsim benchmarks: fixed scenarios, each reporting wall time, events, events
# per second and peak RSS. Not a test: nothing here fails on a slow machine.
#   bench/run.sh [BUILD_DIR] [--quick]
# --quick skips the 16 MB reference run, the 8192-host packet-hop run and the
# packet-hop runs at equal work: 13 s rather than about 70 on the project's
# machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
QUICK=0
[ "${2:-}" = "--quick" ] && QUICK=1
MPSIM=$BUILD/mpsim
OUT=$(mktemp -d)
export MPSIM_NO_PLOTS=1 # figures are not what is timed
trap 'rm -rf "$OUT"' EXIT

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r)"
echo "== mpsim $($MPSIM --version | cut -d' ' -f2), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

echo
echo "== the machine's memory (bench/mem_floor.c): a random line of 128 MB, one dependent load"
echo "   at a time, and loads prefetched well ahead (3 runs)"
for i in 1 2 3; do "$BUILD/bench_mem" 128; done

echo
echo "== engine alone: hold model, 100,000 pending events, 20 M steps (best of 3)"
for i in 1 2 3; do "$BUILD/bench_evq" 100000 20000000; done | sort -t: -k2 | tail -3

run() { # name, file, extra --set options...
	local name=$1 file=$2
	shift 2
	local best="" line
	for i in 1 2; do
		/usr/bin/time -f "%M" -o "$OUT/rss" "$MPSIM" run "$file" --out "$OUT/r" --quiet "$@" >/dev/null
		line=$(python3 - "$OUT/r/summary.json" "$OUT/rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["run"]
rss = int(open(sys.argv[2]).read().split()[-1]) / 1024
print(f'{r["wall_s"]:.2f} s wall, {r["events"]} events, {r["events_per_s"]/1e6:.1f} M events/s, '
      f'{rss:.0f} MB peak RSS, {r["events_peak_pending"]} events pending at most')
PY
)
		if [ -z "$best" ] || [ "$(echo "$line" | cut -d' ' -f1)" \< "$(echo "$best" | cut -d' ' -f1)" ]; then best=$line; fi
	done
	echo "$name: $best"
}

echo
echo "== reference scenario (bench/reference.yaml): k=16 fat tree, 1024 hosts, 400 Gb/s,"
echo "   1 us links, 4000 B packets, permutation, spraying over 256 entropies (best of 2)"
run "2 MB per flow " bench/reference.yaml
if [ $QUICK = 0 ]; then
	run "16 MB per flow" bench/reference.yaml --set workload.size=16MB
fi

hops() { # leaves, runs: ns of the run loop per packet-hop (tx_pkts of every port), best of runs
	# (the 128- and 1024-host runs last 25 and 300 ms, and this machine's phases move a
	# single one by up to 50%: bench/notes/2026-11-27-radix-sort-simultaneous-events.md)
	local leaves=$1 runs=$2 best="" line
	for ((i = 0; i < runs; i++)); do
		/usr/bin/time -f "%M" -o "$OUT/rss" "$MPSIM" run bench/strack_hops.yaml --out "$OUT/h" --quiet \
			--set topology.leaves="$leaves" >/dev/null
		line=$(python3 - "$OUT/h" "$OUT/rss" <<'PY'
import csv, json, sys
r = json.load(open(sys.argv[1] + "/summary.json"))["run"]
hops = sum(int(x["tx_pkts"]) for x in csv.DictReader(open(sys.argv[1] + "/ports.csv")))
rss = int(open(sys.argv[2]).read().split()[-1]) / 1024
print(f'{r["wall_s"] / hops * 1e9:.0f} ns per packet-hop, {r["wall_s"]:.2f} s wall, {hops} packet-hops, '
      f'{r["events"] / hops:.2f} events per hop, {rss:.0f} MB peak RSS')
PY
)
		if [ -z "$best" ] || [ "$(echo "$line" | cut -d' ' -f1)" -lt "$(echo "$best" | cut -d' ' -f1)" ]; then best=$line; fi
	done
	printf '%5d hosts: %s\n' $((leaves * 64)) "$best"
}

echo
echo "== cost per packet-hop by fabric size (bench/strack_hops.yaml): STrack, 1 MB permutation,"
echo "   64 hosts per leaf, 64 spines, 400 Gb/s (best of 7, 5 and 3 runs)"
hops 2 7
hops 16 5
if [ $QUICK = 0 ]; then
	hops 128 3
fi

# The same fabrics at equal work: flows of 64, 8 and 1 MB, so that each size
# runs about as many packet-hops (13-16 M) and as long (2-4 s), in rounds that
# take the three sizes one after the other, so that each round's sizes share
# one phase of the machine (bench/notes/2026-11-28-packet-departure-and-equal-work.md).
equal_work() { # rounds
	local rounds=$1
	for ((i = 0; i < rounds; i++)); do
		for spec in 2:64MB 16:8MB 128:1MB; do
			"$MPSIM" run bench/strack_hops.yaml --out "$OUT/e" --quiet \
				--set topology.leaves="${spec%%:*}" --set workload.size="${spec#*:}" >/dev/null
			python3 - "$OUT/e" "$i" "${spec%%:*}" "${spec#*:}" >>"$OUT/equal" <<'PY'
import csv, json, sys
r = json.load(open(sys.argv[1] + "/summary.json"))["run"]
hops = sum(int(x["tx_pkts"]) for x in csv.DictReader(open(sys.argv[1] + "/ports.csv")))
print(sys.argv[2], int(sys.argv[3]) * 64, sys.argv[4], r["wall_s"] / hops * 1e9, r["events"] / hops, hops)
PY
		done
	done
	python3 - "$OUT/equal" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for rnd, hosts, size, ns, ev, hops in rows:
    by.setdefault(int(hosts), []).append((int(rnd), float(ns), float(ev), int(hops), size))
for hosts in sorted(by):
    v = by[hosts]
    ns = [x[1] for x in v]
    print(f"{hosts:5d} hosts, {v[0][4]} flows: {statistics.median(ns):.0f} ns per packet-hop in the median "
          f"(runs: {', '.join(f'{x:.0f}' for x in ns)}), {v[0][2]:.2f} events per hop, {v[0][3]} packet-hops")
small, large = min(by), max(by)
ratios = [b[1] / a[1] for a, b in zip(by[small], by[large])]
print(f"      {large} against {small} hosts, round by round: {', '.join(f'{x:.2f}x' for x in ratios)}; "
      f"median {statistics.median(ratios):.2f}x")
PY
}

if [ $QUICK = 0 ]; then
	echo
	echo "== cost per packet-hop at equal work (bench/strack_hops.yaml): 64, 8 and 1 MB flows at"
	echo "   128, 1024 and 8192 hosts, 13-16 M packet-hops each, three rounds of the three sizes"
	equal_work 3
fi

echo
echo "== building the STrack fabric: 8192 hosts, 192 switches (examples/strack_8192.yaml)"
/usr/bin/time -f "%e s wall, %M KB peak RSS" "$MPSIM" validate examples/strack_8192.yaml 2>&1 | tr '\n' ' '
echo

echo
echo "== building 64 collectives on 2048 NICs: experiments/collectives/strack_fig21.yaml,"
echo "   every point (3 systems x 5 patterns: DBT, ring, HD AllReduce, AlltoAll P=16, 32) built and checked"
/usr/bin/time -f "%e s wall, %M KB peak RSS" "$MPSIM" validate experiments/collectives/strack_fig21.yaml 2>&1 | tail -1 | tr '\n' ' '
echo

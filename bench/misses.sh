#!/usr/bin/env bash
# Cache misses per packet-hop, counted rather than timed: cachegrind's
# last-level simulation (1 MB, 16 ways, 64-byte lines: this machine's L2) on
# bench/strack_hops.yaml. Deterministic, so it tells a change of layout or of
# what a hop touches apart from the timing noise of a shared machine
# (bench/notes/2026-11-24-where-the-misses-are.md). Cachegrind ignores prefetch instructions: a miss
# counted here is a line a hop needs, whether or not a prefetch hid it.
#   bench/misses.sh [BUILD_DIR] [LEAVES...]   (default: 2 16, i.e. 128 and 1024 hosts;
#                                            128 leaves, 8192 hosts, takes a few minutes)
# BUILD_DIR is best a RelWithDebInfo build (the Release code with line numbers),
# so that the functions below are named.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
shift || true
LEAVES=("$@")
[ ${#LEAVES[@]} -gt 0 ] || LEAVES=(2 16)
command -v valgrind >/dev/null || {
	echo "bench/misses.sh: needs valgrind (scripts/deps.sh --optional)" >&2
	exit 1
}
OUT=$(mktemp -d)
export MPSIM_NO_PLOTS=1
trap 'rm -rf "$OUT"' EXIT

for l in "${LEAVES[@]}"; do
	valgrind --tool=cachegrind --cache-sim=yes --LL=1048576,16,64 \
		--cachegrind-out-file="$OUT/cg.$l" "$BUILD/mpsim" run bench/strack_hops.yaml \
		--out "$OUT/r.$l" --quiet --set topology.leaves="$l" >/dev/null 2>"$OUT/log.$l"
	cg_annotate --show=Ir,DLmr,DLmw --auto=no "$OUT/cg.$l" >"$OUT/ann.$l"
	python3 - "$OUT/r.$l/ports.csv" "$OUT/ann.$l" "$((l * 64))" <<'PY'
import csv, re, sys
hops = sum(int(x["tx_pkts"]) for x in csv.DictReader(open(sys.argv[1])))
num = lambda s: int(s.replace(",", "")) if s else 0
total, funcs = None, []
for line in open(sys.argv[2]):
    # "Ir (pct) DLmr (pct) DLmw (pct) file:function", zeros without a percentage
    m = re.match(r"\s*([\d,]+)\s*(?:\([^)]*\))?\s+([\d,]+)\s*(?:\([^)]*\))?\s+([\d,]+)\s*(?:\([^)]*\))?\s+(.*)$", line)
    if not m:
        continue
    ir, mr, mw, what = num(m[1]), num(m[2]), num(m[3]), m[4].strip()
    if what == "PROGRAM TOTALS":
        total = (ir, mr + mw)
    elif ":" in what:
        funcs.append((mr + mw, what.rsplit("/", 1)[-1]))
print(f"{sys.argv[3]:>5} hosts: {hops} packet-hops, {total[0] / hops:.0f} instructions and "
      f"{total[1] / hops:.2f} last-level misses per hop")
for n, what in sorted(funcs, reverse=True)[:8]:
    print(f"         {n / hops:5.2f}  {what}")
PY
done

#!/usr/bin/env bash
# cli_run.sh MPSIM REPO_ROOT - `mpsim run` end to end, and --help/--version/list.
#
# Runs examples/quickstart.yaml shrunk to 2 leaves x 4 spines (32 hosts) and checks
# the results folder (summary.json keys, flows.csv header and one row per flow,
# timeseries.csv, config.yaml), determinism (same seed: byte-identical files; another
# seed: different flows; config.yaml re-runs to the same flows), the folder rules
# (what mpsim wrote in a results folder is replaced, anything else is refused and
# left untouched), the
# informational commands, and that no progress line is written to a non-terminal.
set -euo pipefail

MPSIM=${1:?usage: cli_run.sh MPSIM REPO_ROOT}
ROOT=${2:?usage: cli_run.sh MPSIM REPO_ROOT}
MPSIM=$(cd "$(dirname "$MPSIM")" && pwd)/$(basename "$MPSIM")
ROOT=$(cd "$ROOT" && pwd)
QS=$ROOT/examples/quickstart.yaml

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"

nfail=0
fail() { # fail WHAT EXPECTED GOT
	printf 'FAIL [%s]\n  expected: %s\n  got:      %s\n' "$1" "$2" "$3" >&2
	nfail=$((nfail + 1))
}
# run_ok WHAT ARGS...: mpsim ARGS must exit 0; stdout in $WHAT.out, stderr in $WHAT.err
run_ok() {
	local what=$1 rc
	shift
	set +e
	"$MPSIM" "$@" >"$what.out" 2>"$what.err"
	rc=$?
	set -e
	if [[ $rc != 0 ]]; then
		fail "$what" "mpsim $* exits 0" "exit $rc: $(head -c 2000 "$what.err")"
		return 1
	fi
}
same() { # same WHAT A B
	cmp -s "$2" "$3" || fail "$1" "$2 and $3 byte-identical" "$(cmp "$2" "$3" 2>&1 | head -1)"
}

SMALL=(--set topology.leaves=2 --set topology.spines=4)
HEADER='id,src,dst,bytes,start_us,finish_us,fct_us,ideal_fct_us,slowdown,retx_bytes,completed,delivered_bytes'

# --- one run and its results folder
if run_ok run1 run "$QS" --out r1 "${SMALL[@]}"; then
	for f in summary.json flows.csv timeseries.csv config.yaml; do
		[[ -s r1/$f ]] || fail results "r1/$f, not empty" "$(ls -la r1)"
	done
	[[ ! -s run1.err ]] || fail run1 "empty stderr (all flows complete; no progress line off a terminal)" "$(cat run1.err)"
	grep -qF 'results in' run1.out || fail run1 "the summary table and 'results in DIR/' on stdout" "$(cat run1.out)"
	for k in '"flows"' '"fct_us"' '"network"' '"run"' '"name": "quickstart"' '"seed": 1'; do
		grep -qF -- "$k" r1/summary.json || fail summary.json "key $k" "$(head -c 600 r1/summary.json)"
	done
	# a JSON document: one object, balanced braces and brackets outside strings
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' r1/summary.json ||
			fail summary.json "valid JSON" "python3 json.load failed"
	else
		b=$(tr -cd '{}[]' <r1/summary.json)
		while [[ $b == *'{}'* || $b == *'[]'* ]]; do b=${b//'{}'/}; b=${b//'[]'/}; done
		[[ -z $b ]] || fail summary.json "balanced braces and brackets" "left over: $b"
	fi
	first=$(head -n 1 r1/flows.csv)
	[[ $first == "$HEADER" ]] || fail flows.csv "header '$HEADER'" "'$first'"
	# 32 hosts, a permutation: 32 flows, ids 0..31, each completed, 2 MB each
	nrows=$(($(wc -l <r1/flows.csv) - 1))
	[[ $nrows == 32 ]] || fail flows.csv "32 rows (one per flow of the 32-host permutation)" "$nrows rows"
	bad_rows=$(awk -F, 'NR > 1 && (NF != 12 || $1 != NR - 2 || $4 != 2000000 || $11 != 1 || $12 != 2000000 || $3 == $2)' r1/flows.csv)
	[[ -z $bad_rows ]] || fail flows.csv "rows 'id(0..),src,dst!=src,2000000,...,1,2000000' with 12 fields" "$bad_rows"
	grep -q '"completed": 32' r1/summary.json || fail summary.json '"completed": 32' "$(grep -o '"completed": [0-9]*' r1/summary.json)"
	tshead=$(head -n 1 r1/timeseries.csv)
	[[ $tshead == time_us,* ]] || fail timeseries.csv "a header starting time_us," "'$tshead'"
	(($(wc -l <r1/timeseries.csv) > 1)) || fail timeseries.csv "samples (interval is 10us)" "$(wc -l <r1/timeseries.csv) lines"
	grep -q '^  leaves: 2$' r1/config.yaml || fail config.yaml "the --set value 'leaves: 2'" "$(grep leaves r1/config.yaml)"
	# no temporary folders next to the result
	if compgen -G 'r1.*' >/dev/null; then fail results "no r1.partial-*/r1.old-* left" "$(ls -d r1.*)"; fi

	# config.yaml is a complete experiment: it validates and re-runs to the same flows
	if run_ok cfg_validate validate r1/config.yaml; then
		grep -qF 'r1/config.yaml: ok (32 hosts' cfg_validate.out ||
			fail cfg_validate "'r1/config.yaml: ok (32 hosts ...'" "$(cat cfg_validate.out)"
	fi
	if run_ok cfg_run run r1/config.yaml --out r_cfg --quiet; then
		same "config.yaml re-run: flows" r1/flows.csv r_cfg/flows.csv
		same "config.yaml re-run: timeseries" r1/timeseries.csv r_cfg/timeseries.csv
		same "config.yaml re-run: config" r1/config.yaml r_cfg/config.yaml
	fi

	# same seed: byte-identical; another seed: different flows
	if run_ok run2 run "$QS" --out r2 "${SMALL[@]}" --quiet; then
		same "same seed: flows" r1/flows.csv r2/flows.csv
		same "same seed: timeseries" r1/timeseries.csv r2/timeseries.csv
	fi
	if run_ok seed2 run "$QS" --out r3 "${SMALL[@]}" --seed 2 --quiet; then
		if cmp -s r1/flows.csv r3/flows.csv; then
			fail "--seed 2" "flows.csv different from seed 1's" "identical"
		fi
		grep -q '^seed: 2$' r3/config.yaml || fail "--seed 2" "'seed: 2' in config.yaml" "$(grep seed r3/config.yaml)"
		grep -q '"seed": 2' r3/summary.json || fail "--seed 2" '"seed": 2 in summary.json' "$(grep -o '"seed": [0-9]*' r3/summary.json)"
	fi

	# re-running into an existing results folder replaces what mpsim wrote
	# there and keeps what it did not (tests/cli_robust.sh has more)
	echo mine >r2/mine.txt
	if run_ok rerun run "$QS" --out r2 "${SMALL[@]}" --seed 2 --quiet; then
		[[ $(cat r2/mine.txt 2>/dev/null) == mine ]] || fail rerun "the user's r2/mine.txt kept" "$(ls -A r2)"
		same "rerun: new flows" r3/flows.csv r2/flows.csv
		if compgen -G 'r2.*' >/dev/null; then fail rerun "no r2.partial-*/r2.old-* left" "$(ls -d r2.*)"; fi
	fi
fi

# --- a folder that is not a results folder is refused and left alone
mkdir mine
echo 'precious' >mine/notes.txt
set +e
"$MPSIM" run "$QS" --out mine "${SMALL[@]}" --quiet >mine_out.txt 2>mine_err.txt
rc=$?
set -e
[[ $rc == 2 ]] || fail "--out mine" "exit 2 (not a results folder)" "exit $rc: $(cat mine_err.txt)"
grep -qF 'mine' mine_err.txt || fail "--out mine" "a message naming the folder" "$(cat mine_err.txt)"
[[ $(cat mine/notes.txt 2>/dev/null) == precious ]] || fail "--out mine" "mine/notes.txt untouched" "$(ls -la mine)"
[[ $(ls -A mine) == notes.txt ]] || fail "--out mine" "only notes.txt in mine/" "$(ls -A mine)"
if compgen -G 'mine.*' >/dev/null; then fail "--out mine" "no mine.partial-* left" "$(ls -d mine.*)"; fi
# (the same for a plain file)
echo 'precious' >afile
set +e
"$MPSIM" run "$QS" --out afile "${SMALL[@]}" --quiet >/dev/null 2>afile.err
rc=$?
set -e
[[ $rc == 2 && $(cat afile) == precious ]] || fail "--out afile" "exit 2, the file untouched" "exit $rc, afile: $(head -c 100 afile)"

# --- no progress line when stderr is not a terminal, even on a run long enough
# (>0.5 s wall) to show one on a terminal; CI unset so that the terminal test is
# the one that decides
set +e
env -u CI "$MPSIM" run "$QS" --out r_long --set workload.size=12MB --quiet >long.out 2>long.err
rc=$?
set -e
[[ $rc == 0 ]] || fail "progress" "the 12MB quickstart run exits 0" "exit $rc"
[[ ! -s long.err ]] || fail "progress" "nothing on stderr when it is not a terminal" "$(head -c 300 long.err | od -c | head -3)"


# --- informational commands
if run_ok version --version; then
	grep -qE '^mpsim [0-9]+\.[0-9]+\.[0-9]+$' version.out || fail --version "'mpsim X.Y.Z'" "$(cat version.out)"
	[[ $(wc -l <version.out) == 1 ]] || fail --version "one line" "$(cat version.out)"
fi
if run_ok help --help; then
	for w in 'mpsim run' 'mpsim validate' 'mpsim list' '--out' '--seed' '--set'; do
		grep -qF -- "$w" help.out || fail --help "'$w' in the usage text" "$(head -20 help.out)"
	done
fi
if run_ok list list; then
	for x in 'topology star' 'topology dumbbell' 'topology leaf_spine' 'topology fat_tree' \
		'transport ref' 'lb ecmp' 'lb spray' 'lb rr' \
		'workload permutation' 'workload incast' 'workload all_to_all' 'workload flows_file' \
		'workload htsim_cm' 'workload poisson'; do
		grep -qx -- "$x" list.out || fail list "a line '$x'" "not found"
	done
	# parameters with their type and default (name, type, default columns)
	for p in 'hosts_per_leaf +uint +16 ' 'spines +uint +16 ' 'k +uint +8 ' 'oversubscription +uint +1 ' \
		'hosts +uint +16 ' 'bottleneck_rate +rate +100Gbps ' 'paths +uint +256 ' 'entropy +fixed\|rr\|random +fixed ' \
		'senders +uint +8 ' 'load +number +0\.5 ' 'cdf +path +required ' 'size +size +2MB ' \
		'buffer +size +32MB ' 'random_tier1 +uint +0 ' 'interval +time +0 '; do
		grep -qE -- "^ +$p" list.out || fail list "a parameter row matching '$p'" "not found"
	done
	for c in topologies transports lbs workloads sections; do
		run_ok "list_$c" list "$c" || continue
		[[ -s list_$c.out ]] || fail "list $c" "some output" "nothing"
	done
	grep -qx 'lb ecmp' list_topologies.out && fail "list topologies" "only topologies" "lb ecmp listed"
	grep -qx 'topology star' list_topologies.out || fail "list topologies" "'topology star'" "$(head -5 list_topologies.out)"
	grep -qx 'workload poisson' list_workloads.out || fail "list workloads" "'workload poisson'" "$(head -5 list_workloads.out)"
fi
set +e
"$MPSIM" list nonsense >ln.out 2>ln.err
rc=$?
set -e
[[ $rc == 2 ]] || fail "list nonsense" "exit 2" "exit $rc"
grep -qF "nonsense" ln.err || fail "list nonsense" "a message naming 'nonsense'" "$(cat ln.err)"
[[ ! -s ln.out ]] || fail "list nonsense" "nothing on stdout" "$(head -3 ln.out)"

# --- an interrupted (killed) run leaves no results folder, complete-looking or not
# (SIGTERM: a background job of a non-interactive shell ignores SIGINT)
"$MPSIM" run "$ROOT/bench/reference.yaml" --out interrupted --quiet \
	--set workload.size=64MB >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
[[ ! -e interrupted ]] || fail interrupted "no results folder after SIGTERM" "$(ls interrupted)"
compgen -G 'interrupted.partial-*' >/dev/null &&
	fail interrupted "no interrupted.partial-* left" "$(ls -d interrupted.partial-*)"

# --- a sweep: every point in its own folder, sweep.csv and paper.csv; a point
# equals the single run with the same values; -j 1 and -j 2 agree
cat >sw.yaml <<EOF
name: sw
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 1MB}
sweep:
  workload.size: [1MB, 500KB]
  transport.window: [40KB, 400KB]
paper:
  source: "a made-up figure"
  values:
    - {metric: max_fct, value: 400us, when: {workload.size: 1MB}, note: "four senders"}
    - {metric: drops, value: 3}
EOF
if run_ok sweep1 run sw.yaml --out sw1 -j 1 && run_ok sweep2 run sw.yaml --out sw2 -j 2; then
	[[ $(grep -c . sw1/sweep.csv) == 5 ]] || fail sweep "sweep.csv: a header and 4 points" "$(cat sw1/sweep.csv)"
	for d in size-1MB_window-40KB size-1MB_window-400KB size-500KB_window-40KB size-500KB_window-400KB; do
		[[ -f sw1/$d/flows.csv ]] || fail sweep "a folder sw1/$d with flows.csv" "$(ls sw1)"
		same "sweep -j1/-j2 $d" sw1/$d/flows.csv sw2/$d/flows.csv
	done
	# every column but the wall time
	rev sw1/sweep.csv | cut -d, -f2- | rev >a.csv
	rev sw2/sweep.csv | cut -d, -f2- | rev >b.csv
	same "sweep.csv -j1/-j2" a.csv b.csv
	# 2 max_fct rows (size 1MB) + 4 drops rows
	[[ $(grep -c . sw1/paper.csv) == 7 ]] || fail sweep "paper.csv: a header and 6 rows" "$(cat sw1/paper.csv)"
	grep -q 'beside the paper: a made-up figure' sweep1.out ||
		fail sweep "the paper table on stdout" "$(cat sweep1.out)"
fi
cat >one.yaml <<EOF
name: one
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref, window: 400KB}
workload: {type: incast, senders: 4, receiver: 0, size: 500KB}
EOF
if run_ok one run one.yaml --out one; then
	same "a sweep point equals the single run" one/flows.csv sw1/size-500KB_window-400KB/flows.csv
fi

# --- variants: whole sections swapped per point, --set applied to every
# variant, a ratio between points in paper.csv
cat >var.yaml <<EOF
name: var
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref, window: 400KB}
workload: {type: incast, senders: 4, receiver: 0, size: 1MB}
sweep:
  system:
    small: {transport.window: 40KB}
    roce: {transport: {type: roce, qps: 1}, switch: {mode: lossless}}
  workload.size: [1MB, 500KB]
paper:
  source: "a made-up ratio"
  values:
    - {metric: max_fct, value: 1.5, when: {system: small}, ratio_of: {system: roce}, note: "r"}
EOF
cat >var_one.yaml <<EOF
name: var_one
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: roce, qps: 1}
switch: {mode: lossless}
workload: {type: incast, senders: 4, receiver: 0, size: 500KB}
EOF
if run_ok var run var.yaml --out var -j 2 --set topology.link_rate=50Gbps &&
	run_ok var_one run var_one.yaml --out var_one --set topology.link_rate=50Gbps; then
	same "a variant point equals the single run" var_one/flows.csv var/system-roce_size-500KB/flows.csv
	grep -q '^  type: roce$' var/system-roce_size-1MB/config.yaml ||
		fail variants "the roce variant's transport section in its config.yaml" "$(cat var/system-roce_size-1MB/config.yaml)"
	grep -q '^  window: 40000B$\|^  window: 40KB$' var/system-small_size-1MB/config.yaml ||
		fail variants "window 40KB in the small variant's config.yaml" "$(grep window var/system-small_size-1MB/config.yaml)"
	# ratio rows: roce's max FCT over small's, per size, computed from sweep.csv
	python3 - var <<'PY' || fail variants "paper.csv ratios equal to sweep.csv's max_fct quotients" "$(cat var/paper.csv)"
import csv, sys
d = sys.argv[1]
fct = {(r["system"], r["workload.size"]): float(r["max_fct_us"]) for r in csv.DictReader(open(d + "/sweep.csv"))}
rows = list(csv.DictReader(open(d + "/paper.csv")))
assert len(rows) == 2, rows
for r in rows:
    size = r["point"].split("size=")[1]
    want = fct[("roce", size)] / fct[("small", size)]
    assert abs(float(r["ours"]) - want) < 1e-3 * want, (r, want)
    assert r["unit"] == "x" and r["metric"] == "max_fct of system=roce", r
    assert r["ratio_of"] == "system" and r["ratio_point"] == "system-roce_size-" + size, r
# p99_tput: the slowest of 4 equal flows, size / max FCT
for r in csv.DictReader(open(d + "/sweep.csv")):
    b = {"1MB": 1e6, "500KB": 5e5}[r["workload.size"]]
    want = b * 8 / float(r["max_fct_us"]) / 1e3
    assert abs(float(r["p99_tput_Gbps"]) - want) < 1e-3 * want, (r["p99_tput_Gbps"], want)
PY
fi

# fat_tree oversubscription: the agg-core bandwidth is 1/R of the edge-agg bandwidth
for o in 1 2 4 8; do
	cat >ft$o.yaml <<EOF
name: ft$o
topology: {type: fat_tree, k: 0, pods: 5, edges_per_pod: 4, aggs_per_pod: 4, hosts_per_edge: 16,
  cores: 16, oversubscription: $o, host_rate: 100Gbps, fabric_rate: 400Gbps}
transport: {type: ref}
workload: {type: incast, senders: 2, receiver: 0, size: 10KB}
EOF
	if run_ok ft$o run ft$o.yaml --out ft$o; then
		got=$(awk -F, '$3 == "tier2_up" { up += $4 } $3 == "tier1_up" { t1 += $4 }
			END { printf "%g", t1 / up }' ft$o/ports.csv)
		[[ $got == "$o" ]] || fail fat_tree_oversub "edge-agg / agg-core bandwidth $o" "$got"
	fi
done

# failures.tier1_switches: 8 uplinks down, 4 on each of 2 leaves; a down link carries nothing
cat >lf.yaml <<EOF
name: lf
topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 8, spines: 8}
transport: {type: ref}
lb: {type: rr}
workload: {type: permutation, size: 200KB}
failures: {random_tier1: 8, tier1_switches: 2}
EOF
if run_ok lf run lf.yaml --out lf; then
	idle=$(awk -F, '$3 == "tier1_up" && $5 == 0 { split($1, a, "-"); n[a[1]]++ }
		END { for (k in n) print n[k] }' lf/ports.csv | sort | tr '\n' ' ')
	[[ $idle == "4 4 " ]] || fail tier1_switches "two leaves with 4 idle uplinks each" "'$idle'"
fi

if ((nfail)); then
	echo "cli_run: $nfail check(s) failed" >&2
	exit 1
fi
echo "cli_run: all checks passed"

#!/usr/bin/env bash
# cli_simai.sh MPSIM REPO_ROOT - SimAI's per-layer workload files (workload
# "simai"), training.csv and timeline.json.
#
# The fabric is cli_chakra.sh's: a star of 2 hosts, 100 Gb/s, 1 us links,
# ref transport (4000 B packets, 64 B ACKs), one 800000 B AllReduce on 2
# ranks = 2 ring steps of T = (100 x 4000 + 100 x 64) x 8 / 100e9
# + 4000 x 8 / 100e9 + 2 us = 34.832 us each (cli_chakra.sh says why).
#
# 1. The hand-checkable case as a SimAI file: TP = 2, one layer whose forward
#    computes 100 us, then an AllReduce on the TP group (blocking), then its
#    input-grad computes 30 us: iteration = 100 + 2 T + 30 us, within 1%, in
#    summary.json's training object and in training.csv; the Chakra trace of
#    the same case (scripts/chakra_trace.py) gives the same iteration time.
# 2. Overlap: DP = 2, two layers. Forward 50 + 50 us; backward layer 1: input
#    grad 100, weight grad 10, its AllReduce (non-blocking) from 210 us; layer
#    0: input grad 80 us (210 .. 290, hiding layer 1's AllReduce, 2 T =
#    69.664 us), weight grad 10, its AllReduce 300 .. 369.664 us, exposed
#    whole. training.csv: layer 1's weight-grad exposed 0, layer 0's 2 T;
#    compute per rank 300 us; iteration 369.664 us. With gnuplot, the bars per
#    layer (plots/training_layers.dat): layer 0 computes 140 us and waits 2 T,
#    layer 1 computes 160 us and hides 2 T; report.html has a Training section.
# 3. timeline.json parses, has per rank its 6 compute and 2 communication
#    events, ending at the iteration's end, none overlapping another of its
#    thread; output.timeline_events cuts it with
#    a warning; a second run writes both files byte for byte the same.
# 4. DATA (SimAI's iterate_data_parallel): forward 50 + 50 us; backward layer
#    1: weight grad 10, its AllReduce from 110 us (hidden behind layer 1's
#    input grad, 110 .. 210), layer 0: weight grad 210 .. 220, its AllReduce
#    to 220 + 2 T; no input grad for layer 0, and the forward collective the
#    file names is not run: iteration 220 + 2 T.
# 5. Groups as SimAI builds them: 4 ranks, TP 1, EP 2 (DP 4): a forward
#    ALLTOALL_EP runs within {0, 1} and {2, 3}, a weight-grad
#    ALLREDUCE_DP_EP within {0, 2} and {1, 3} (flows.csv's pairs: one
#    AlltoAll message each way inside an EP group, a 2-rank ring of 2 steps
#    (one 1 MB chunk each) each way inside a DP_EP group, nothing else).
# 6. Bad files: exit 2, file:line, the field, nothing written.
set -euo pipefail
source "$(dirname "$0")/clilib.sh" "$@"

exp() { # exp FILE [workload lines...]
	local file=$1
	shift
	cat <<EOF
name: sa
topology:
  type: star
  hosts: 2
  link_rate: 100Gbps
  link_delay: 1us
transport:
  type: ref
  window: 4MB
workload:
  type: simai
  file: $file
  chunk: 1MB
EOF
	for l in "$@"; do echo "  $l"; done
}

# near WHAT GOT EXPECTED: within 1%
near() {
	if awk -v g="$2" -v e="$3" 'BEGIN { d = g - e; if (d < 0) d = -d; exit !(d <= 0.01 * e + 1e-9) }'; then
		printf 'ok [%s] %s us, arithmetic %s us\n' "$1" "$2" "$3"
	else
		fail "$1" "$3 us (within 1%)" "$2 us"
	fi
}
json_num() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2" | head -1; }
# csv_at FILE RANK LAYER PHASE COLUMN: the cell of that row
csv_at() {
	awk -F, -v r="$2" -v l="$3" -v p="$4" -v c="$5" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == r && $4 == l && $5 == p { print $col[c]; exit }' "$1"
}

step=$(awk 'BEGIN { printf "%.6f", (100 * 4000 + 100 * 64) * 8 / 100e3 + 4000 * 8 / 100e3 + 2 }')

# 1. compute / AllReduce / compute
cat >one.txt <<'EOF'
HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 2 checkpoints: 0 checkpoint_initiates: 0
1
layer0	-1	100000	ALLREDUCE	800000	30000	NONE	0	0	NONE	0	0
EOF
exp one.txt >x.yaml
run one run x.yaml --out res1
[[ $rc == 0 ]] || fail "one" "a run" "exit $rc: $(cat one.err)"
want=$(awk -v t="$step" 'BEGIN { printf "%.6f", 100 + 2 * t + 30 }')
simai_it=$(json_num iteration_time_us res1/summary.json)
near "simai: iteration (summary.json)" "$simai_it" "$want"
near "simai: rank 1's iteration (training.csv)" "$(csv_at res1/training.csv 1 '(iteration)' total end_us)" "$want"
near "simai: rank 0's compute (training.csv)" "$(csv_at res1/training.csv 0 '(iteration)' total compute_us)" 130
near "simai: the AllReduce, exposed (training.csv)" \
	"$(csv_at res1/training.csv 0 layer0 forward exposed_comm_us)" "$(awk -v t="$step" 'BEGIN { print 2 * t }')"
grep -q "training: iteration" one.out || fail "one" "the summary's training line" "$(cat one.out)"

# the same file laid out as SimAI's example/microAllReduce.txt is: runs of
# spaces, a blank at the end of a line, no newline after the last
printf '%s\n1\nlayer0     -1 100000  ALLREDUCE   800000      30000       NONE 0        0      NONE   0      0 ' \
	"$(head -1 one.txt)" >spaced.txt
exp spaced.txt >x2.yaml
run spaced run x2.yaml --out res1s
[[ $(json_num iteration_time_us res1s/summary.json) == "$simai_it" ]] &&
	echo "ok [simai: SimAI's own layout] $simai_it us" ||
	fail "simai: SimAI's own layout" "$simai_it us" "$(json_num iteration_time_us res1s/summary.json) us $(cat spaced.err)"

# the same case as a Chakra trace: the same iteration time
python3 "$ROOT/scripts/chakra_trace.py" t allreduce --ranks 2 --size 800000 --compute1 100 --skew 0 --compute2 30
sed -e 's/type: simai/type: chakra/' -e 's/file: one.txt/trace: t/' x.yaml >ck.yaml
run ck run ck.yaml --out res2
[[ $rc == 0 ]] || fail "chakra" "a run" "exit $rc: $(cat ck.err)"
ck_it=$(json_num iteration_time_us res2/summary.json)
near "chakra: iteration (summary.json)" "$ck_it" "$want"
[[ $ck_it == "$simai_it" ]] || fail "simai = chakra" "the same iteration time" "simai $simai_it, chakra $ck_it"

# 2. a weight-grad AllReduce hidden behind the next layer's compute
cat >two.txt <<'EOF'
HYBRID_TRANSFORMER model_parallel_NPU_group: 1 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 2 checkpoints: 0 checkpoint_initiates: 0
2
layer0	-1	50000	NONE	0	80000	NONE	0	10000	ALLREDUCE	800000	0
layer1	-1	50000	NONE	0	100000	NONE	0	10000	ALLREDUCE	800000	0
EOF
exp two.txt >x.yaml
run two run x.yaml --out res3 --set output.timeline=true
[[ $rc == 0 ]] || fail "two" "a run" "exit $rc: $(cat two.err)"
near "overlap: iteration" "$(json_num iteration_time_us res3/summary.json)" \
	"$(awk -v t="$step" 'BEGIN { printf "%.6f", 300 + 2 * t }')"
near "overlap: compute of rank 1" "$(csv_at res3/training.csv 1 '(iteration)' total compute_us)" 300
got=$(csv_at res3/training.csv 0 layer1 weight_grad exposed_comm_us)
[[ $got == 0.000000 ]] && echo "ok [overlap: layer 1's AllReduce hidden] exposed $got us" ||
	fail "overlap: layer 1's AllReduce hidden" "exposed 0.000000" "$got"
near "overlap: layer 1's AllReduce" "$(csv_at res3/training.csv 0 layer1 weight_grad comm_us)" \
	"$(awk -v t="$step" 'BEGIN { print 2 * t }')"
near "overlap: layer 0's AllReduce exposed" "$(csv_at res3/training.csv 0 layer0 weight_grad exposed_comm_us)" \
	"$(awk -v t="$step" 'BEGIN { print 2 * t }')"

# the bars per layer (plots/training_layers.dat, when gnuplot draws):
# layer 0 computes 140 us and waits 2 T, layer 1 computes 160 us and hides 2 T
if command -v gnuplot >/dev/null; then
	run plot plot res3 # the tests run without plots at the end of a run (MPSIM_NO_PLOTS)
	dat=res3/plots/training_layers.dat
	t2=$(awk -v t="$step" 'BEGIN { print 2 * t }')
	near "bars: layer 0 computes" "$(awk '$1 == "\"0_layer0\"" { print $2 }' $dat)" 140
	near "bars: layer 0 waits" "$(awk '$1 == "\"0_layer0\"" { print $3 }' $dat)" "$t2"
	near "bars: layer 1 computes" "$(awk '$1 == "\"1_layer1\"" { print $2 }' $dat)" 160
	near "bars: layer 1 hides" "$(awk '$1 == "\"1_layer1\"" { print $4 }' $dat)" "$t2"
	grep -q "<h3>Training</h3>" res3/report.html || fail "report.html" "a Training section" "none"
fi


# 3. timeline.json
check_timeline() { # check_timeline FILE COMPUTE COMM END_US
	python3 - "$@" <<'EOF'
import json, sys
path, ncomp, ncomm, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
ev = [e for e in json.load(open(path))["traceEvents"] if e["ph"] == "X"]
for pid in (0, 1):
    mine = [e for e in ev if e["pid"] == pid]
    comp = sum(e["cat"] == "compute" for e in mine)
    comm = sum(e["cat"] == "communication" for e in mine)
    last = max(e["ts"] + e["dur"] for e in mine)
    if (comp, comm) != (ncomp, ncomm) or abs(last - end) > 0.01 * end:
        sys.exit("rank %d: %d compute, %d communication events ending at %.3f us" % (pid, comp, comm, last))
lanes = {}
for e in ev:
    lanes.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
for k, v in lanes.items():  # a thread's events must not overlap (Perfetto nests them)
    v.sort()
    for a, b in zip(v, v[1:]):
        if b[0] < a[1] - 1e-6:
            sys.exit("rank %d thread %d: an event at %.3f us overlaps one ending at %.3f us" % (k[0], k[1], b[0], a[1]))
print("ok [timeline.json] per rank %d compute and %d communication events, ending at %.3f us" % (ncomp, ncomm, last))
EOF
}
check_timeline res3/timeline.json 6 2 "$(awk -v t="$step" 'BEGIN { print 300 + 2 * t }')" ||
	fail "timeline.json" "6 compute and 2 communication events per rank" "see above"
run cut run x.yaml --out res4 --set output.timeline=true --set output.timeline_events=4
n=$(python3 -c 'import json,sys; print(sum(e["ph"] == "X" for e in json.load(open(sys.argv[1]))["traceEvents"]))' res4/timeline.json)
[[ $n -le 4 && $n -ge 1 ]] || fail "timeline cut" "1 to 4 events" "$n"
grep -q "timeline.json holds the first $n of 16 events" cut.err &&
	echo "ok [timeline cut] $n events and a warning" || fail "timeline cut" "a warning" "$(cat cut.err)"
[[ ! -e res1/timeline.json ]] || fail "timeline" "none unless asked" "res1/timeline.json"

# the same run again: training.csv and timeline.json byte for byte
run again run x.yaml --out res3b --set output.timeline=true
cmp -s res3/training.csv res3b/training.csv && cmp -s res3/timeline.json res3b/timeline.json &&
	echo "ok [deterministic] training.csv and timeline.json identical" ||
	fail "deterministic" "identical training.csv and timeline.json" "they differ"

# 4. DATA
cat >data.txt <<'EOF2'
DATA
2
layer0	-1	50000	ALLREDUCE	800000	80000	NONE	0	10000	ALLREDUCE	800000	0
layer1	-1	50000	NONE	0	100000	NONE	0	10000	ALLREDUCE	800000	0
EOF2
exp data.txt >x.yaml
run data run x.yaml --out res6
[[ $rc == 0 ]] || fail "DATA" "a run" "exit $rc: $(cat data.err)"
near "DATA: iteration" "$(json_num iteration_time_us res6/summary.json)" \
	"$(awk -v t="$step" 'BEGIN { printf "%.6f", 220 + 2 * t }')"

# 5. EP and DP_EP groups
cat >ep.txt <<'EOF2'
HYBRID_TRANSFORMER model_parallel_NPU_group: 1 ep: 2 pp: 1 all_gpus: 4
1
moe	-1	1000	ALLTOALL_EP	400000	1000	NONE	0	1000	ALLREDUCE_DP_EP	400000	0
EOF2
exp ep.txt | sed 's/hosts: 2/hosts: 4/' >x.yaml
run ep run x.yaml --out res5
[[ $rc == 0 ]] || fail "groups" "a run" "exit $rc: $(cat ep.err)"
pairs=$(awk -F, 'NR > 1 { print $2 "-" $3 }' res5/flows.csv | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
want="0-1:1 0-2:2 1-0:1 1-3:2 2-0:2 2-3:1 3-1:2 3-2:1 "
[[ $pairs == "$want" ]] && echo "ok [groups] $pairs" || fail "groups: EP {0,1} {2,3}, DP_EP {0,2} {1,3}" "$want" "$pairs"

# 6. bad files: bad NAME TEXT... with the file's lines on stdin
bad() {
	local c=$1
	shift
	cat >bad.txt
	exp bad.txt >b.yaml
	rm -rf resb
	refused "$c" 2 "bad.txt:" run b.yaml --out resb
	for f in "$@"; do
		grep -qF -- "$f" "$c.err" || fail "$c" "a message containing '$f'" "$(cat "$c.err")"
	done
	[[ ! -e resb ]] || fail "$c" "no results folder" "resb"
	[[ $(wc -l <"$c.err") == 1 ]] || fail "$c" "one line on stderr" "$(cat "$c.err")"
	printf 'ok [%s] %s\n' "$c" "$(cat "$c.err")"
}
H='HYBRID_TRANSFORMER model_parallel_NPU_group: 2 all_gpus: 2'
L='layer0	-1	100	ALLREDUCE	800	30	NONE	0	0	NONE	0	0'
printf 'HYBRID_DLRM all_gpus: 2\n1\n%s\n' "$L" | bad "policy" "bad.txt:1" "parallelism policy" "HYBRID_DLRM"
printf '%s sp: 2\n1\n%s\n' "$H" "$L" | bad "unknown key" "bad.txt:1" "header" "'sp:'"
printf '%s checkpoints: 1 0\n1\n%s\n' "$H" "$L" | bad "checkpoints" "bad.txt:1" "checkpoints:" "recomputation"
printf 'HYBRID_TRANSFORMER model_parallel_NPU_group: 2 all_gpus: 4\n1\n%s\n' "$L" |
	bad "more gpus than hosts" "bad.txt:1" "all_gpus" "'4'"
printf 'HYBRID_TRANSFORMER model_parallel_NPU_group: 3 all_gpus: 2\n1\n%s\n' "$L" |
	bad "TP not dividing" "bad.txt:1" "model_parallel_NPU_group" "TP 3"
printf '%s\n2\n%s\n' "$H" "$L" | bad "too few layers" "bad.txt:4" "2 layer lines"
printf '%s\n1\n%s\n%s\n' "$H" "$L" "$L" | bad "too many layers" "bad.txt:4" "the end of the file"
printf '%s\n1\nlayer0 -1 100 ALLREDUCE_TP 800 30 NONE 0 0 NONE 0 0\n' "$H" |
	bad "comm type" "bad.txt:3" "forward comm type" "'ALLREDUCE_TP'"
printf '%s\n1\nlayer0 -1 100 ALLREDUCE 800 30 NONE 0 0 NONE 0\n' "$H" |
	bad "missing field" "bad.txt:3" "update time" "12 fields"
printf '%s\n1\nlayer0 -1 1.5 ALLREDUCE 800 30 NONE 0 0 NONE 0 0\n' "$H" |
	bad "not a number" "bad.txt:3" "forward compute time" "'1.5'"
printf '%s\nmany\n%s\n' "$H" "$L" | bad "layer count" "bad.txt:2" "layer count"

finish

#!/usr/bin/env bash
# cli_chakra.sh MPSIM REPO_ROOT - Chakra execution traces (workload "chakra").
#
# Traces are written by scripts/chakra_trace.py (Python's standard library
# only: it encodes the varint-framed protobuf by hand from Chakra's schema).
#
# 1. The hand-checkable case: 2 ranks on a star of 2 hosts (100 Gb/s, 1 us
#    links, ref transport with a window that never binds, 4000 B packets, no
#    headers, 64 B ACKs), each rank: compute, one AllReduce of S = 800000 B,
#    compute. Ring AllReduce on 2 ranks is 2 steps; in each, each rank sends
#    S/2 = 400000 B = P = 100 packets to the other, the second step once the
#    first one's data has arrived. A step's last byte arrives after its
#    uplink has carried the P packets and the ACKs of the P packets coming
#    the other way (at most P x 64 B: the arithmetic counts them all, an
#    upper bound), plus the last packet's time at the switch, plus two link
#    delays: T = (P x 4000 + P x 64) x 8 / 100e9 + 4000 x 8 / 100e9 + 2 us
#    = 34.832 us. The AllReduce starts when the slower rank reaches it
#    (rank 1 computes 20 us longer), so
#    iteration = max(compute1) + 2 T + compute2 = 120 + 69.664 + 30 us,
#    checked within 1% against summary.json's sim_time_us (the run ends with
#    the last compute). compute_scale 0.5 halves both computes.
# 2. A send/receive pair of 800000 B (200 packets one way, no ACKs against
#    it): 100 + (200 x 4000 x 8 / 100e9 + 0.32 us + 2 us) + 30 us.
# 3. An exchange: each rank sends 800000 B to the other, then receives (its
#    receive waits for its own send, as in the ring schedules of Chakra's
#    MSCCL-IR converter, whose GlobalMetadata form the files take): the sends
#    start together, each link carries 200 packets one way and up to 200 ACKs
#    the other, and a receive waits for its own send to complete, which is
#    when the last ACK is back (two hops of 64 B and two link delays after the
#    last byte arrived): 100 + ((200 x 4000 + 200 x 64) x 8 / 100e9 + 0.32 us
#    + 2 us) + (2 x 64 x 8 / 100e9 + 2 us) + 30 us.
# 4. The allreduce trace gzipped (t.<rank>.et.gz): the same iteration; a
#    truncated gzip stream is refused.
# 5. Bad traces: exit 2, one line on stderr naming the trace file and the
#    node (where one is at fault), no results folder.
set -euo pipefail
source "$(dirname "$0")/clilib.sh" "$@"
GEN="python3 $ROOT/scripts/chakra_trace.py"

exp() { # exp HOSTS [workload lines...]
	local hosts=$1
	shift
	cat <<EOF
name: ck
topology:
  type: star
  hosts: $hosts
  link_rate: 100Gbps
  link_delay: 1us
transport:
  type: ref
  window: 4MB
workload:
  type: chakra
  trace: t
  chunk: 1MB
EOF
	for l in "$@"; do echo "  $l"; done
}

# check CASE EXPECTED_US: run x.yaml, compare sim_time_us within 1%
check() {
	rm -rf res
	if ! "$MPSIM" run x.yaml --out res >out.txt 2>err.txt; then
		fail "$1" "a run" "exit $?: $(cat err.txt)"
		return
	fi
	local got
	got=$(sed -n 's/.*"sim_time_us": \([0-9.]*\).*/\1/p' res/summary.json)
	if ! awk -v g="$got" -v e="$2" 'BEGIN { d = g - e; if (d < 0) d = -d; exit !(d <= 0.01 * e) }'; then
		fail "$1" "iteration $2 us (within 1%)" "$got us"
	else
		printf 'ok [%s] %s us, arithmetic %s us\n' "$1" "$got" "$2"
	fi
}

step=$(awk 'BEGIN { printf "%.6f", (100 * 4000 + 100 * 64) * 8 / 100e3 + 4000 * 8 / 100e3 + 2 }')

rm -f t.*.et
$GEN t allreduce --ranks 2 --size 800000 --compute1 100 --skew 20 --compute2 30
exp 2 >x.yaml
check "allreduce" "$(awk -v t="$step" 'BEGIN { printf "%.6f", 120 + 2 * t + 30 }')"
# rank 0 waits 20 us for rank 1 to reach the AllReduce: rank 1 is the slowest
slow=$(sed -n 's/.*"slowest_rank": \([0-9]*\).*/\1/p' res/summary.json)
wait0=$(awk -F, '$1 == 0 && $4 == "allreduce_grad" { print $9 }' res/training.csv)
[[ $slow == 1 && $wait0 == 20.000000 ]] && echo "ok [allreduce: rank 0 waits 20 us for rank 1, the slowest]" ||
	fail "allreduce: the straggler" "slowest rank 1, rank 0's peer_wait_us 20.000000" "slowest $slow, peer wait $wait0"
exp 2 "compute_scale: 0.5" >x.yaml
check "allreduce, compute_scale 0.5" "$(awk -v t="$step" 'BEGIN { printf "%.6f", 60 + 2 * t + 15 }')"
# the same trace over a group named in pg_name, as a real trace names it
rm -f t.*.et
$GEN t unknown-group --size 800000 --compute1 100 --skew 20 --compute2 30
exp 2 'groups: ["tp9=0-1"]' >x.yaml
check "allreduce on group tp9" "$(awk -v t="$step" 'BEGIN { printf "%.6f", 120 + 2 * t + 30 }')"

rm -f t.*.et
$GEN t sendrecv --size 800000 --compute1 100 --compute2 30
exp 2 >x.yaml
check "send/receive" "$(awk 'BEGIN { printf "%.6f", 100 + 200 * 4000 * 8 / 100e3 + 0.32 + 2 + 30 }')"

rm -f t.*.et
$GEN t exchange --size 800000 --compute1 100 --compute2 30
exp 2 >x.yaml
check "exchange (eager sends)" "$(awk 'BEGIN { printf "%.6f", 100 + (200 * 4000 + 200 * 64) * 8 / 100e3 + 0.32 + 2 + 2 * 64 * 8 / 100e3 + 2 + 30 }')"

rm -f t.*.et t.*.et.gz
$GEN t allreduce --ranks 2 --size 800000 --compute1 100 --skew 20 --compute2 30
gzip t.0.et t.1.et
exp 2 >x.yaml
check "gzipped" "$(awk -v t="$step" 'BEGIN { printf "%.6f", 120 + 2 * t + 30 }')"
head -c 60 t.0.et.gz >t0 && mv t0 t.0.et.gz
rm -rf res
if "$MPSIM" run x.yaml --out res >out.txt 2>err.txt; then
	fail "truncated gzip" "exit 2" "exit 0"
elif grep -q "t.0.et.gz: expected a gzipped Chakra trace that inflates to its end, found a truncated gzip stream" err.txt && [[ ! -e res ]]; then
	echo "ok [truncated gzip] $(cat err.txt)"
else
	fail "truncated gzip" "exit 2 naming t.0.et.gz" "$(cat err.txt)"
fi
rm -f t.*.et.gz

# An attribute mpsim does not read runs once named in workload.ignore.
rm -f t.*.et
$GEN t unknown-attr
exp 2 'ignore: [mystery]' >x.yaml
check "ignored attribute" "$(awk -v t="$step" 'BEGIN { printf "%.6f", 100 + 2 * t + 30 }')"

# bad CASE HOSTS FRAGMENT...: generate CASE, run on HOSTS hosts, expect refusal
bad() {
	local c=$1 hosts=$2 gen=$3
	shift 3
	rm -f t.*.et
	# shellcheck disable=SC2086
	$GEN t $gen
	exp "$hosts" >x.yaml
	rm -rf res
	local rc=0
	"$MPSIM" run x.yaml --out res >out.txt 2>err.txt || rc=$?
	local msg
	msg=$(cat err.txt)
	[[ $rc == 2 ]] || fail "$c" "exit 2" "exit $rc: $msg"
	[[ ! -s out.txt ]] || fail "$c" "nothing on stdout" "$(cat out.txt)"
	[[ $(wc -l <err.txt) == 1 ]] || fail "$c" "one line on stderr" "$msg"
	compgen -G "res*" >/dev/null && fail "$c" "no results folder" "$(ls -d res*)"
	for f in "$@"; do
		[[ $msg == *"$f"* ]] || fail "$c" "a message containing '$f'" "$msg"
	done
	printf 'ok [%s] %s\n' "$c" "$msg"
}

bad "cycle" 2 cycle "t.0.et: node 2 ('allreduce_grad')" "cycle" "node 1"
bad "missing peer" 2 missing-peer "t.0.et: node 2 ('send')" "no matching receive" "t.1.et"
bad "unknown group" 2 unknown-group "t.0.et: node 2" "pg_name 'tp9'" "workload.groups"
bad "unknown node type" 2 unknown-type "t.0.et: node 4 ('load')" "MEM_LOAD_NODE" "workload.ignore"
bad "unknown attribute" 2 unknown-attr "t.0.et: node 2" "'mystery'" "workload.ignore"
bad "wrong schema version" 2 wrong-schema "t.1.et" "version '1.0.0'"
bad "not a trace" 2 not-protobuf "t.1.et" "expected a Chakra execution trace"
bad "truncated" 2 truncated "t.1.et: truncated" "after node 2"
bad "more ranks than hosts" 2 "allreduce --ranks 3" "t.2.et exists" "more ranks than the 2"
bad "fewer ranks than hosts" 3 "allreduce --ranks 2" "t.2.et: cannot read"

finish

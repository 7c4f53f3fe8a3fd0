#!/usr/bin/env bash
# cli_training.sh MPSIM REPO_ROOT - a training trace's groups on a rail-optimized
# fabric, placed as NCCL places them.
#
# scripts/training_trace.py writes a dense model's iteration (TP 2, PP 2, DP 2:
# 8 ranks, Megatron's order, rank = tp + 2 x (dp + 2 x pp)) for 4 servers of 2
# GPUs (rail_optimized, one leaf per rail). Its tensor-parallel groups are the
# two GPUs of one server, so their AllReduces cross NVLink alone; its data- and
# pipeline-parallel groups take GPU k of two servers, one rail, under one leaf.
#  1. The run completes, and not a byte crosses a spine (ports.csv): every
#     group stays in its server or on its rail.
#  2. With server.gpus 1 (no NVLink) the TP AllReduces go through the NICs,
#     and a server's two GPUs being on two rails, over the spines: at least
#     their bytes (8 AllReduces a rank of 512 x 512 x 2 B, a 2-rank ring
#     sending all of it once per rank: 8 ranks x 8 x 524288 B) on the spines.
#  3. With leaves of one server each (servers_per_leaf 1), a rail's GPUs sit on
#     four leaves: the DP and PP groups' bytes cross the spines.
set -euo pipefail
source "$(dirname "$0")/clilib.sh" "$@"

python3 "$ROOT/scripts/training_trace.py" dense tr --tp 2 --pp 2 --dp 2 --layers 2 \
	--hidden 512 --seq 512 --micro-batches 2 >/dev/null
{
	cat <<'EOF'
name: tr
topology: {type: rail_optimized, servers: 4, gpus: 2}
transport: {type: roce}
switch: {mode: lossless}
workload:
  type: chakra
  trace: tr/t
EOF
	sed 's/^/  /' tr/groups.txt
} >x.yaml

# bytes X.csv PATTERN: tx bytes of the ports whose name matches PATTERN
bytes() { awk -F, -v p="$2" 'NR > 1 && $1 ~ p { s += $5 } END { print s + 0 }' "$1"; }

run one run x.yaml --out r1
[[ $rc == 0 ]] || fail "run" "exit 0" "exit $rc: $(cat one.err)"
spine=$(bytes r1/ports.csv spine)
leaf=$(bytes r1/ports.csv '^leaf')
[[ $spine == 0 ]] || fail "groups on rails" "no byte on a spine" "$spine B"
((leaf > 0)) || fail "groups on rails" "DP and PP bytes on the leaves" "$leaf B"

run two run x.yaml --out r2 --set server.gpus=1
[[ $rc == 0 ]] || fail "no NVLink" "exit 0" "exit $rc: $(cat two.err)"
spine2=$(bytes r2/ports.csv spine)
((spine2 >= 64 * 524288)) ||
	fail "no NVLink" "at least $((64 * 524288)) B (the TP AllReduces) on the spines" "$spine2 B"

run three run x.yaml --out r3 --set topology.servers_per_leaf=1
[[ $rc == 0 ]] || fail "a leaf a server" "exit 0" "exit $rc: $(cat three.err)"
spine3=$(bytes r3/ports.csv spine)
((spine3 > 0)) || fail "a leaf a server" "DP and PP bytes over the spines" "$spine3 B"
printf 'ok: spines %s B, leaves %s B; without NVLink spines %s B; a leaf a server: spines %s B\n' \
	"$spine" "$leaf" "$spine2" "$spine3"
finish

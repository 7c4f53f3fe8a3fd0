#!/usr/bin/env bash
# prefetch_kept.sh MPSIM BUILD_TYPE - the run loop's software pipeline is in
# the binary.
#
# GCC 12 takes a helper whose only statements are prefetches for a const
# function and deletes the calls to it, without a warning
# (bench/notes/2026-11-24-packet-hop-rounds-4-5.md). Each prefetcher the packet
# path registers must hold prefetch instructions: at least one, and at least
# three in the two that prefetch a connection (its common lines, the
# direction's own lines of the connection and of the protocol's state: three
# ranges). Skipped (77) in an unoptimised
# build (helpers not inlined), where objdump is missing, or where the
# machine's prefetch instruction is not known here.
set -euo pipefail

MPSIM=${1:?usage: prefetch_kept.sh MPSIM BUILD_TYPE}
case "${2:-Release}" in
Debug | "") echo "an unoptimised build keeps its helpers apart: skipped"; exit 77 ;;
esac
command -v objdump >/dev/null || { echo "objdump not found: skipped"; exit 77; }
case "$(uname -m)" in
x86_64) insn='prefetch' ;;
aarch64) insn='prfm' ;;
*) echo "no prefetch instruction known for $(uname -m): skipped"; exit 77 ;;
esac

dis=$(mktemp)
trap 'rm -f "$dis"' EXIT
objdump -d --no-show-raw-insn "$MPSIM" >"$dis"

nfail=0
for want in evq_run_n:1 wire_arrive_prefetch:1 wire_arrive_prefetch_late:1 tx_done_prefetch:1 \
	strack_prefetch:1 rocev2_prefetch:1 host_rx_prefetch:3 nic_pull_prefetch:3 timer_prefetch:3 \
	timer_prefetch_late:1; do
	fn=${want%:*} min=${want#*:}
	n=$(awk -v f="<$fn>:" '$2 == f { on = 1; next } on && /^$/ { exit } on' "$dis" |
		grep -cE "^ *[0-9a-f]+:[[:space:]]+$insn" || true)
	if [ "$n" -lt "$min" ]; then
		echo "FAIL: $fn holds $n $insn instructions, expected at least $min" \
			"(the compiler deleted prefetches)" >&2
		nfail=$((nfail + 1))
	else
		echo "ok: $fn, $n"
	fi
done
exit $((nfail > 0))

#!/usr/bin/env bash
# The valgrind flavour: every unit/integration test executable, and one full
# run of the command on a small experiment, under memcheck. Any error or leak
# fails. Pools are bypassed in this build (MPSIM_POOL_DEBUG), so every packet
# is its own allocation and valgrind sees its whole life.
#   scripts/valgrind.sh BUILD_DIR
set -euo pipefail
B=${1:?usage: valgrind.sh BUILD_DIR}
cd "$(dirname "$0")/.."
VG=(valgrind --quiet --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible)
fail=0
for t in "$B"/test_*; do
	[ -x "$t" ] || continue
	if (cd "$B" && "${VG[@]}" "./$(basename "$t")" >/tmp/mpsim_vg.log 2>&1); then
		echo "valgrind ok   $(basename "$t")"
	else
		echo "valgrind FAIL $(basename "$t")"; tail -30 /tmp/mpsim_vg.log; fail=1
	fi
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if "${VG[@]}" "$B/mpsim" run examples/quickstart.yaml --out "$out/r" --quiet \
	--set topology.leaves=2 --set workload.size=256KB >/tmp/mpsim_vg.log 2>&1; then
	echo "valgrind ok   mpsim run examples/quickstart.yaml (shrunk)"
else
	echo "valgrind FAIL mpsim run"; tail -30 /tmp/mpsim_vg.log; fail=1
fi
[ $fail = 0 ] && echo "valgrind: 0 errors, 0 leaks"
exit $fail

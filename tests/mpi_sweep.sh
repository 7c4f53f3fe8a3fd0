#!/usr/bin/env bash
# mpi_sweep.sh MPSIM MPIEXEC - a sweep over MPI ranks (`mpirun -n 3 mpsim run`)
# gives the results of `-j 2`, and resumes; registered when CMake found MPI.
# mpi_sweep.sh MPSIM --without-mpi - a build without MPI refuses to run as one
# of several ranks (the launcher's environment says so), exit 2.
#
# With MPI: a six-point sweep (three sizes x two incast fan-ins on a star)
# under three ranks, one point at a time each. sweep.csv equals the -j 2 one
# but for its wall_s column, and every point folder holds the same files with
# the same flows.csv, ports.csv, timeseries.csv and config.yaml; each point
# ran once (one progress line each), on more than one rank; no rank's scratch
# folder is left. --resume after deleting one point runs that point alone. A
# point killed on its rank is reported as -j reports it (stderr names the
# point, the signal and the rank; sweep.csv's status), the others are kept,
# and every rank exits with the sweep's status 3.
set -euo pipefail

MPSIM=${1:?usage: mpi_sweep.sh MPSIM MPIEXEC|--without-mpi}
MPIEXEC=${2:?usage: mpi_sweep.sh MPSIM MPIEXEC|--without-mpi}
MPSIM=$(cd "$(dirname "$MPSIM")" && pwd)/$(basename "$MPSIM")

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
export TMPDIR=$T/scratch MPSIM_NO_PLOTS=1
mkdir "$TMPDIR"

nfail=0
fail() { # fail WHAT EXPECTED GOT
	printf 'FAIL [%s]\n  expected: %s\n  got:      %s\n' "$1" "$2" "$3" >&2
	nfail=$((nfail + 1))
}

cat >sw.yaml <<'YAML'
name: sw
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 100KB}
output: {interval: 5us}
sweep:
  workload.size: [100KB, 400KB, 2MB]
  workload.senders: [2, 4]
YAML

if [[ $MPIEXEC == --without-mpi ]]; then
	set +e
	OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=0 "$MPSIM" run sw.yaml --out r >out 2>err
	rc=$?
	set -e
	[[ $rc == 2 ]] || fail "without MPI" "exit 2" "exit $rc"
	grep -qF 'started by an MPI launcher as one of several ranks (OMPI_COMM_WORLD_SIZE=3), but this mpsim was built without MPI' err ||
		fail "without MPI" "the sentence naming the launcher's variable" "$(cat err)"
	[[ ! -e r && ! -s out ]] || fail "without MPI" "nothing run, nothing written" "$(ls; cat out)"
	if ((nfail)); then
		echo "mpi_sweep: $nfail check(s) failed" >&2
		exit 1
	fi
	echo "mpi_sweep (without MPI): all checks passed"
	exit 0
fi

# Open MPI on one machine, in a container, maybe as root: shared memory only
# (no network), more ranks than cores, and its warnings about both silenced.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_hwloc_base_binding_policy=none
# Under `make asan`: Open MPI leaves its own allocations at MPI_Finalize, in
# components it has unloaded (LeakSanitizer cannot name them to suppress them),
# so the ranks run without leak checks; ASan's other checks stay on, and
# test_pack.c checks the folder transfer for leaks.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
mpi() { # mpi WHAT ARGS...: mpirun -n 3 mpsim ARGS; status in $rc
	local what=$1
	shift
	set +e
	"$MPIEXEC" -n 3 "$MPSIM" "$@" >"$what.out" 2>"$what.err"
	rc=$?
	set -e
}

set +e
"$MPSIM" run sw.yaml -j 2 --out j2 >j2.out 2>j2.err
rc=$?
set -e
[[ $rc == 0 ]] || fail "-j 2" "exit 0" "exit $rc: $(cat j2.err)"

mpi m3 run sw.yaml --out m3
[[ $rc == 0 ]] || fail "mpirun -n 3" "exit 0" "exit $rc: $(cat m3.err)"
grep -qF 'sw: 6 points over 3 MPI ranks, 1 at a time on each' m3.out ||
	fail "mpirun -n 3" "the sweep's first line names the ranks" "$(head -2 m3.out)"
nolast() { sed 's/,[^,]*$//' "$1"; } # sweep.csv without wall_s
[[ -s m3/sweep.csv ]] && diff <(nolast j2/sweep.csv) <(nolast m3/sweep.csv) >/dev/null ||
	fail "sweep.csv" "the -j 2 one but for wall_s" "$(diff <(nolast j2/sweep.csv) <(nolast m3/sweep.csv) 2>&1 | head -5)"
[[ $(cat j2/.mpsim-files 2>/dev/null | sort) == $(cat m3/.mpsim-files 2>/dev/null | sort) ]] ||
	fail "folder" "the same entries as the -j 2 one" "$(ls -A m3 2>&1)"
npoints=0
for d in j2/*/; do
	p=$(basename "$d")
	npoints=$((npoints + 1))
	[[ $(ls -A "j2/$p") == $(ls -A "m3/$p" 2>&1) ]] ||
		fail "$p" "the files of the -j 2 point: $(ls -A "j2/$p" | tr '\n' ' ')" "$(ls -A "m3/$p" 2>&1 | tr '\n' ' ')"
	for f in flows.csv ports.csv timeseries.csv config.yaml; do
		cmp -s "j2/$p/$f" "m3/$p/$f" || fail "$p/$f" "byte-identical to -j 2" "$(cmp "j2/$p/$f" "m3/$p/$f" 2>&1)"
	done
done
[[ $npoints == 6 ]] || fail "-j 2" "6 point folders" "$npoints"
lines=$(grep -c '^  \[[0-9]/6\] .*: done' m3.out || true)
[[ $lines == 6 && $(grep '^  \[' m3.out | sed 's/:.*//; s/.*\] //' | sort -u | wc -l) == 6 ]] ||
	fail "each point once" "six progress lines, one per point" "$(grep '^  \[' m3.out)"
ranks=$(grep -o 'rank [0-9]*)$' m3.out | sort -u | wc -l)
((ranks >= 2)) || fail "spread" "points run on at least two of the three ranks" "$(grep '^  \[' m3.out)"
if compgen -G "$TMPDIR/mpsim-rank*" >/dev/null || compgen -G 'm3.partial-*' >/dev/null; then
	fail "scratch" "no rank's scratch folder and no m3.partial-* left" "$(ls -A "$TMPDIR" .)"
fi

# --resume: a deleted point runs again, alone, to the same bytes
rm -rf m3/size-400KB_senders-4
mpi resume run sw.yaml --out m3 --resume
[[ $rc == 0 ]] || fail "--resume" "exit 0" "exit $rc: $(cat resume.err)"
grep -qF '(5 kept from the earlier run)' resume.out || fail "--resume" "5 points kept" "$(head -2 resume.out)"
[[ $(grep -c '^  \[' resume.out) == 1 ]] && grep -q '^  \[6/6\] size=400KB senders=4: done' resume.out ||
	fail "--resume" "one point run: size=400KB senders=4" "$(grep '^  \[' resume.out)"
cmp -s j2/size-400KB_senders-4/flows.csv m3/size-400KB_senders-4/flows.csv ||
	fail "--resume" "the rerun point's flows.csv as -j 2 wrote it" "differs or missing"
diff <(nolast j2/sweep.csv) <(nolast m3/sweep.csv) >/dev/null || fail "--resume" "sweep.csv as before" "differs"

# a point killed on its rank: the long one goes to a rank that asks while
# rank 0 runs the first; it is killed once the first completed
cat >kill.yaml <<'YAML'
name: kill
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 100KB}
sweep:
  workload.size: [200MB, 40GB]
YAML
set +e
"$MPIEXEC" -n 3 "$MPSIM" run kill.yaml --out k >kill.out 2>kill.err &
mp=$!
for _ in $(seq 300); do
	grep -q '^  \[1/2\]' kill.out && break
	sleep 0.1
done
for r in $(pgrep -P $mp); do # the ranks, then their point processes
	for c in $(pgrep -P "$r"); do kill -KILL "$c"; done
done
wait $mp
rc=$?
set -e
[[ $rc == 3 ]] || fail "a point killed" "exit 3 (every rank returns the sweep's status)" "exit $rc: $(cat kill.err)"
grep -qE '^mpsim: point size=40GB failed: killed by signal 9 \(Killed\) \(rank [0-2]\)$' kill.err ||
	fail "a point killed" "the point, its signal and its rank on stderr" "$(cat kill.err)"
grep -q '^size-40GB,40GB,.*"failed: killed by signal 9 (Killed)",' k/sweep.csv ||
	fail "a point killed" "its sweep.csv row says so" "$(cat k/sweep.csv 2>&1)"
[[ -s k/size-200MB/flows.csv && ! -e k/size-40GB ]] ||
	fail "a point killed" "the completed point kept, none for the killed one" "$(ls -A k 2>&1)"

# The README's line for root and small machines, as it is written there, with
# none of the variables above that allow root and oversubscription.
README=$(cd "$(dirname "$0")/.." && pwd)/README.md
line=$(grep -oE 'mpirun --allow-run-as-root [^#]*EXPERIMENT\.yaml' "$README" | head -1 || true)
if [[ -z $line ]]; then
	fail "README" "a mpirun line that runs as root on a small machine" "none"
else
	read -ra argv <<<"$line"
	for i in "${!argv[@]}"; do
		case ${argv[$i]} in
		mpirun) argv[$i]=$MPIEXEC ;;
		build/mpsim) argv[$i]=$MPSIM ;;
		EXPERIMENT.yaml) argv[$i]=sw.yaml ;;
		esac
	done
	set +e
	env -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM -u OMPI_MCA_rmaps_base_oversubscribe \
		"${argv[@]}" --out readme >readme.out 2>readme.err
	rc=$?
	set -e
	[[ $rc == 0 && -s readme/sweep.csv ]] ||
		fail "README: $line" "exit 0 and the sweep written" "exit $rc: $(head -3 readme.err)"
fi

if ((nfail)); then
	echo "mpi_sweep: $nfail check(s) failed" >&2
	exit 1
fi
echo "mpi_sweep: all checks passed"

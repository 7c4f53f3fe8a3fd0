#!/usr/bin/env bash
# cli_resdir.sh MPSIM REPO_ROOT - a results folder holds exactly one run.
#
# What mpsim wrote there before is replaced as a whole and nothing is left
# beside it: a rerun with --no-plots keeps no plots/ of the run before (nor
# does its report.html show them); a sweep run twice leaves no NAME.old-PID
# and says nothing false; the user's own files move into the new folder, a
# point folder's too, and only a file that cannot move keeps the old folder,
# with a message that names it. A sweep whose parent was killed (SIGKILL)
# leaves NAME.partial-PID: --resume adopts its completed points and removes
# it, a plain rerun removes it, a partial folder of a live process (or of
# another machine, or one that is not mpsim's) is never touched. --resume
# keeps a point only while its files are the bytes it wrote: a damaged
# flows.csv or summary.json runs again.
set -euo pipefail

MPSIM=${1:?usage: cli_resdir.sh MPSIM REPO_ROOT}
ROOT=${2:?usage: cli_resdir.sh MPSIM REPO_ROOT}
MPSIM=$(cd "$(dirname "$MPSIM")" && pwd)/$(basename "$MPSIM")
ROOT=$(cd "$ROOT" && pwd)

T=$(mktemp -d)
spid=""
trap '[[ -n $spid ]] && kill "$spid" 2>/dev/null; rm -rf "$T"' EXIT
cd "$T"
export MPSIM_NO_PLOTS=1 # the plots of a run before are made by hand: drawing costs seconds

nfail=0
fail() { # fail WHAT EXPECTED GOT
	printf 'FAIL [%s]\n  expected: %s\n  got:      %s\n' "$1" "$2" "$3" >&2
	nfail=$((nfail + 1))
}
# run WHAT ARGS...: mpsim ARGS; status in $rc, stdout in WHAT.out, stderr in WHAT.err
run() {
	local what=$1
	shift
	set +e
	"$MPSIM" "$@" >"$what.out" 2>"$what.err"
	rc=$?
	set -e
}
# fake_plots DIR: plots/ as mpsim draws them (figures.tsv and a PNG), named stalefig
fake_plots() {
	mkdir -p "$1/plots"
	echo stalefig >"$1/plots/figures.tsv"
	printf '\x89PNG\r\n' >"$1/plots/stalefig.png"
}
# partial_marker DIR PID START [HOST]: the marker mpsim writes in its temporary
# folder (process id and start time, this machine and its boot)
boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -)
partial_marker() {
	printf 'mpsim-partial %s %s %s %s\n' "$2" "$3" "${4:-$(hostname)}" "$boot" >"$1/.mpsim-partial"
}
# a pid that no process has now
dead_pid() {
	local p
	true &
	p=$!
	wait $p
	echo $p
}

# --- row 3: a rerun with --no-plots keeps no plots of the run before --------------------
run q1 run "$ROOT/examples/quickstart.yaml" --out q --quiet
[[ $rc == 0 ]] || fail "quickstart" "exit 0" "exit $rc: $(cat q1.err)"
fake_plots q
run q2 run "$ROOT/examples/quickstart.yaml" --out q --quiet --no-plots --set workload.size=1MB
[[ $rc == 0 ]] || fail "rerun --no-plots" "exit 0" "exit $rc: $(cat q2.err)"
[[ ! -e q/plots ]] || fail "rerun --no-plots" "no plots/ of the run before" "$(ls -A q/plots)"
! grep -q stalefig q/report.html || fail "rerun --no-plots" "report.html without the run before's figure" "stalefig in it"
if compgen -G 'q.*' >/dev/null; then fail "rerun --no-plots" "nothing beside q" "$(ls -d q.*)"; fi
grep -q '^plots$' q/.mpsim-files && grep -q '^report.html$' q/.mpsim-files ||
	fail "manifest" "plots and report.html listed as mpsim's" "$(cat q/.mpsim-files)"

# --- row 5: a sweep run twice leaves nothing beside it, says nothing false --------------
cat >sw.yaml <<'EOF'
name: sw
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 100KB}
sweep:
  workload.size: [100KB, 200KB, 300KB, 400KB]
EOF
run s1 run sw.yaml -j 2 --out s --quiet
[[ $rc == 0 ]] || fail "sweep" "exit 0" "exit $rc: $(cat s1.err)"
fake_plots s
fake_plots s/size-100KB
echo mine >s/notes.txt
echo mine >s/size-200KB/mynote.txt
run s2 run sw.yaml -j 2 --out s --quiet
[[ $rc == 0 ]] || fail "sweep rerun" "exit 0" "exit $rc: $(cat s2.err)"
if compgen -G 's.*' >/dev/null; then fail "sweep rerun" "nothing beside s" "$(ls -d s.*)"; fi
[[ ! -s s2.err ]] || fail "sweep rerun" "nothing on stderr" "$(cat s2.err)"
[[ ! -e s/plots && ! -e s/size-100KB/plots ]] || fail "sweep rerun" "no plots of the run before" "$(ls -d s/plots s/*/plots 2>&1)"
[[ $(cat s/notes.txt 2>/dev/null) == mine ]] || fail "sweep rerun" "the user's notes.txt moved" "$(ls -A s)"
[[ $(cat s/size-200KB/mynote.txt 2>/dev/null) == mine ]] ||
	fail "sweep rerun" "the user's note in a point folder moved" "$(ls -A s/size-200KB)"
# a user's file in a point the new sweep does not have: kept, and said so truly
sed 's/400KB\]/500KB]/' sw.yaml >sw5.yaml
echo mine >s/size-400KB/mynote.txt
run s3 run sw5.yaml -j 2 --out s --quiet
[[ $rc == 0 ]] || fail "sweep, a point gone" "exit 0" "exit $rc: $(cat s3.err)"
old=$(compgen -G 's.old-*' || true)
[[ -n $old && $(cat "$old/size-400KB/mynote.txt" 2>/dev/null) == mine ]] ||
	fail "sweep, a point gone" "s.old-PID with the user's size-400KB/mynote.txt" "$(ls -d s.* 2>&1)"
[[ -n $old && $(find "$old" -type f | wc -l) == 1 ]] ||
	fail "sweep, a point gone" "nothing but the user's file in $old" "$(find "$old" 2>&1)"
grep -qF "size-400KB/mynote.txt" s3.err || fail "sweep, a point gone" "stderr names the file kept" "$(cat s3.err)"
[[ ! -e s/size-400KB && -d s/size-500KB ]] || fail "sweep, a point gone" "the new points only" "$(ls -A s)"
rm -rf s.old-*

# --- row 11: --resume reruns a point whose files are damaged ----------------------------
run s4 run sw.yaml -j 2 --out s --quiet
cp s/size-200KB/flows.csv flows200.csv
cp s/size-100KB/flows.csv flows100.csv
sed -i '$d' s/size-200KB/flows.csv                   # a row lost
sed -i '0,/[0-8]/s//9/' s/size-300KB/summary.json # a figure changed
rm s/size-400KB/flows.csv                            # a file gone
run r1 run sw.yaml -j 2 --out s --resume
[[ $rc == 0 ]] || fail "--resume, damaged" "exit 0" "exit $rc: $(cat r1.err)"
grep -qF '(1 kept from the earlier run)' r1.out || fail "--resume, damaged" "1 point kept" "$(head -3 r1.out)"
[[ $(grep -c '^  \[' r1.out) == 3 ]] || fail "--resume, damaged" "the three damaged points run" "$(grep '^  \[' r1.out)"
cmp -s flows200.csv s/size-200KB/flows.csv || fail "--resume, damaged" "size-200KB/flows.csv whole again" "differs"
cmp -s flows100.csv s/size-100KB/flows.csv || fail "--resume, damaged" "the intact point kept" "differs"
[[ -s s/size-400KB/flows.csv ]] || fail "--resume, damaged" "size-400KB/flows.csv again" "$(ls -A s/size-400KB)"
run r2 run sw.yaml -j 2 --out s --resume --quiet
[[ $rc == 0 && $(grep -c '^  \[' r2.out) == 0 ]] || fail "--resume, intact" "every point kept" "exit $rc: $(cat r2.out r2.err)"

# --- row 6: a sweep whose parent was killed ---------------------------------------------
# the 100KB point completes; the others (50 GB each: minutes) are running when the
# parent is killed, so exactly one point is complete in the partial folder
cat >kill.yaml <<'EOF'
name: kill
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 100KB}
sweep:
  workload.size: [100KB, 50GB, 51GB, 52GB]
EOF
# the same sweep whose three long points are short (the 100KB point is the same experiment)
sed 's/50GB, 51GB, 52GB/10KB, 20KB, 30KB/' kill.yaml >short.yaml
set +e
"$MPSIM" run kill.yaml -j 2 --out k >kill.out 2>kill.err &
pid=$!
set -e
for i in $(seq 600); do # at most a minute
	grep -q '^  \[1/4\] size=100KB: done' kill.out 2>/dev/null && break
	sleep 0.1
done
grep -q '^  \[1/4\] size=100KB: done' kill.out || fail "killed parent" "the 100KB point done" "$(cat kill.out kill.err)"
kids=$(pgrep -P $pid | tr '\n' ' ' || true)
exec 3>&2 2>/dev/null # bash's word that its job was killed
kill -KILL $pid
wait $pid || true
exec 2>&3 3>&-
for k in $kids; do # the points die with their parent (PR_SET_PDEATHSIG)
	for i in $(seq 200); do kill -0 "$k" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$k" 2>/dev/null && { fail "killed parent" "point $k ends with its parent" "runs on"; kill -KILL "$k"; }
done
[[ -d k.partial-$pid && -f k.partial-$pid/size-100KB/.mpsim-point ]] ||
	fail "killed parent" "k.partial-$pid with the completed point" "$(ls -A . k.partial-$pid 2>&1)"
cp k.partial-$pid/size-100KB/flows.csv kflows100.csv 2>/dev/null || true
# a partial folder of a live process, one of a dead process that is not mpsim's,
# one of another machine, one whose process id another process took since: the
# first three are untouched, the last is stale
sleep 300 &
spid=$!
start=$(sed 's/.*) //' /proc/$spid/stat | cut -d' ' -f20)
mkdir k.partial-$spid && cp -r k.partial-$pid/size-100KB k.partial-$spid/ && partial_marker k.partial-$spid $spid "$start"
dpid=$(dead_pid)
mkdir k.partial-$dpid && echo mine >k.partial-$dpid/mine.txt
mkdir k.partial-1 && partial_marker k.partial-1 1 99999999999999 # pid 1 lives, started at another time
opid=$(dead_pid) # a process of another machine (a shared file system)
mkdir k.partial-$opid && partial_marker k.partial-$opid $opid 0 elsewhere.example
run k2 run short.yaml -j 2 --out k --resume
[[ $rc == 0 ]] || fail "--resume, killed parent" "exit 0" "exit $rc: $(cat k2.err)"
grep -qF '(1 kept from the earlier run)' k2.out || fail "--resume, killed parent" "the completed point kept" "$(head -3 k2.out)"
[[ $(grep -c '^  \[' k2.out) == 3 ]] || fail "--resume, killed parent" "three points run" "$(grep '^  \[' k2.out)"
cmp -s kflows100.csv k/size-100KB/flows.csv || fail "--resume, killed parent" "the adopted point's flows.csv" "differs"
[[ ! -e k.partial-$pid && ! -e k.partial-1 ]] || fail "--resume, killed parent" "the stale partial folders removed" "$(ls -d k.*)"
[[ -f k.partial-$spid/size-100KB/flows.csv && -f k.partial-$spid/.mpsim-partial ]] ||
	fail "--resume, killed parent" "a live process's partial folder untouched" "$(ls -A k.partial-$spid 2>&1)"
[[ -f k.partial-$opid/.mpsim-partial ]] ||
	fail "--resume, killed parent" "another machine's partial folder untouched" "$(ls -d k.*)"
[[ $(cat k.partial-$dpid/mine.txt 2>/dev/null) == mine ]] ||
	fail "--resume, killed parent" "a folder that is not mpsim's untouched" "$(ls -A k.partial-$dpid 2>&1)"
[[ $(grep -c '"ok"' k/sweep.csv) == 4 ]] || fail "--resume, killed parent" "four ok rows" "$(cat k/sweep.csv)"
# a plain rerun removes a stale partial folder too
dpid=$(dead_pid)
cp -r k k.partial-$dpid && partial_marker k.partial-$dpid $dpid 0
run k3 run short.yaml -j 2 --out k --quiet
[[ $rc == 0 && ! -e k.partial-$dpid ]] || fail "rerun" "the stale partial folder removed" "exit $rc: $(ls -d k.*)"
[[ -d k.partial-$spid ]] || fail "rerun" "a live process's partial folder untouched" "$(ls -d k.*)"

if ((nfail)); then
	echo "$nfail failure(s)" >&2
	exit 1
fi
echo "cli_resdir: all passed"

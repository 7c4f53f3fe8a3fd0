#!/usr/bin/env bash
# cli_robust.sh MPSIM REPO_ROOT - never lose work, never crash on a legal input.
#
# Results folders: a trailing slash, a symbolic link, a rerun next to the
# user's own files (mpsim removes only what it wrote), an unwritable place and
# a name too long found before the first event (nothing on stdout: no run).
# Sweeps: a point killed by a signal leaves the others in place and its reason
# in sweep.csv, --resume reruns only it; --only runs the points picked and
# --resume adds others; variant names that share a folder and
# values that are equal are refused; SIGHUP stops the children and keeps what
# completed; a closed stdout does not kill the sweep. Legal values that would
# abort or exhaust the machine are sentences with exit status 2: 2^32 packets
# in a flow, a 1 ps time-series interval, fabrics and workloads too large for
# the memory (MPSIM_MEM_LIMIT fixes what fits), a buffer smaller than a packet,
# a loss rate of 1. Two inputs that could grow quadratically run within a bound
# 10x above what they take.
set -euo pipefail
source "$(dirname "$0")/clilib.sh" "$@"

# wait_child PID: the pid of PID's first child, once there is one
wait_child() {
	local k c=""
	for k in $(seq 200); do
		c=$(pgrep -P "$1" | head -1 || true)
		[[ -n $c ]] && break
		sleep 0.05
	done
	echo "$c"
}

cat >small.yaml <<'EOF'
name: small
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 100KB}
EOF

# --- results folders ---------------------------------------------------------------
run slash run small.yaml --out res/x/ --quiet
[[ $rc == 0 && -s res/x/flows.csv ]] || fail "--out res/x/" "exit 0 and res/x/flows.csv" "exit $rc: $(cat slash.err); $(ls -A res/x 2>&1)"
if compgen -G 'res/x.*' >/dev/null || compgen -G 'res/x/*.partial*' >/dev/null; then
	fail "--out res/x/" "no temporary folder left" "$(ls -A res res/x)"
fi

# a symbolic link: its target is replaced, the user's files there stay, the link stays
mkdir -p res/real/myfolder
run link0 run small.yaml --out res/real2 --quiet
echo mine >res/real2/mine.txt
mkdir res/real2/myplots
echo p >res/real2/myplots/a.txt
ln -s real2 res/link
run link run small.yaml --out res/link --quiet
[[ $rc == 0 ]] || fail "--out link" "exit 0" "exit $rc: $(cat link.err)"
[[ -L res/link && $(readlink res/link) == real2 ]] || fail "--out link" "res/link still a link to real2" "$(ls -la res)"
[[ $(cat res/real2/mine.txt 2>/dev/null) == mine && -f res/real2/myplots/a.txt ]] ||
	fail "--out link" "the user's mine.txt and myplots/ kept in the target" "$(ls -A res/real2)"
[[ -s res/real2/flows.csv ]] || fail "--out link" "new results in the target" "$(ls -A res/real2)"
if compgen -G 'res/*.old-*' >/dev/null || compgen -G 'res/*.partial-*' >/dev/null; then
	fail "--out link" "no .old-*/.partial-* left" "$(ls -A res)"
fi

# a rerun removes what mpsim wrote before (collectives.csv of a collective run)
# and keeps what it did not
cat >coll.yaml <<'EOF'
name: coll
topology: {type: leaf_spine, hosts_per_leaf: 2, leaves: 2, spines: 2}
transport: {type: strack}
collective: {type: allreduce, algorithm: ring, size: 64KB, ranks: 4, placement: packed, chunk: 16KB}
EOF
run rr1 run coll.yaml --out res/rr --quiet
echo notes >res/rr/notes.txt
run rr2 run small.yaml --out res/rr --quiet
[[ $rc == 0 ]] || fail rerun "exit 0" "exit $rc: $(cat rr2.err)"
[[ ! -e res/rr/collectives.csv ]] || fail rerun "the earlier run's collectives.csv removed" "still there"
[[ $(cat res/rr/notes.txt 2>/dev/null) == notes ]] || fail rerun "the user's notes.txt kept" "$(ls -A res/rr)"
grep -q '^name: small$' res/rr/config.yaml || fail rerun "the new config.yaml" "$(head -3 res/rr/config.yaml)"

# an unwritable place and a name too long: found before the first event
echo x >afile
refused unwritable 4 "afile/sub" run small.yaml --out afile/sub --set workload.size=200MB
[[ ! -e afile/sub ]] || fail unwritable "nothing created" "$(ls -la afile*)"
if [[ $(id -u) != 0 ]]; then
	mkdir ro && chmod 555 ro
	refused readonly 4 "ro/x" run small.yaml --out ro/x --set workload.size=200MB
	chmod 755 ro
fi
long=$(printf 'n%.0s' $(seq 230))
sed "s/^name: small/name: $long/" small.yaml >long.yaml
refused long_name 2 "long.yaml:1: name: expected at most 200 characters" run long.yaml
refused long_out 2 "expected a name of at most 200 characters" run small.yaml --out "res/$long"

# --- sweeps ------------------------------------------------------------------------
cat >sw.yaml <<'EOF'
name: sw
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 100KB}
sweep:
  workload.size: [1GB, 100KB, 200KB]
EOF
# the first point (1 GB, about a second) is killed; the other two complete
set +e
"$MPSIM" run sw.yaml -j 1 --out res/sw --quiet >sw.out 2>sw.err &
pid=$!
child=$(wait_child $pid)
[[ -n $child ]] && kill -KILL "$child"
wait $pid
rc=$?
set -e
[[ $rc == 3 ]] || fail "sweep, a point killed" "exit 3" "exit $rc: $(cat sw.err)"
grep -qF 'point size=1GB failed: killed by signal 9' sw.err ||
	fail "sweep, a point killed" "the point and its signal on stderr (--quiet)" "$(cat sw.err)"
for d in size-100KB size-200KB; do
	[[ -s res/sw/$d/flows.csv ]] || fail "sweep, a point killed" "completed point $d kept" "$(ls -A res/sw 2>&1)"
done
[[ ! -e res/sw/size-1GB ]] || fail "sweep, a point killed" "no folder for the killed point" "$(ls -A res/sw/size-1GB)"
grep -q '^size-1GB,1GB,.*"failed: killed by signal 9 (Killed)",' res/sw/sweep.csv ||
	fail "sweep, a point killed" "its row in sweep.csv with status 'failed: killed by signal 9 (Killed)'" "$(cat res/sw/sweep.csv 2>&1)"
grep -q '^size-100KB,100KB,4,.*"ok",' res/sw/sweep.csv ||
	fail "sweep, a point killed" "the 100KB row complete and ok" "$(cat res/sw/sweep.csv 2>&1)"
cp res/sw/size-100KB/flows.csv kept100.csv
# --resume: only the failed point runs
run resume run sw.yaml -j 1 --out res/sw --resume
[[ $rc == 0 ]] || fail "--resume" "exit 0" "exit $rc: $(cat resume.err)"
grep -qF '(2 kept from the earlier run)' resume.out || fail "--resume" "2 points kept" "$(head -3 resume.out)"
[[ $(grep -c '^  \[' resume.out) == 1 ]] || fail "--resume" "one point run" "$(grep '^  \[' resume.out)"
[[ $(grep -c '"ok"' res/sw/sweep.csv) == 3 ]] || fail "--resume" "three ok rows" "$(cat res/sw/sweep.csv)"
cmp -s kept100.csv res/sw/size-100KB/flows.csv || fail "--resume" "the kept point untouched" "differs"
[[ -s res/sw/size-1GB/flows.csv ]] || fail "--resume" "the failed point's folder" "$(ls -A res/sw)"
# a changed file reruns the points it changes
run resume2 run sw.yaml -j 1 --out res/sw --resume --set workload.senders=3 --quiet
[[ $rc == 0 && $(awk -F, 'NR > 1 { print $3 }' res/sw/sweep.csv | sort -u) == 3 ]] ||
	fail "--resume, changed" "every point rerun with 3 flows" "exit $rc; $(cut -d, -f1-3 res/sw/sweep.csv)"

# --only: the points picked run, the others are marked and absent; --resume
# with another pick adds to the folder, keeping what it has
cat >only.yaml <<'EOF'
name: only
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 100KB}
sweep:
  workload.size: [100KB, 200KB, 300KB]
  workload.senders: [2, 4]
EOF
run only run only.yaml -j 1 --out res/only --only size=200KB --only size=300KB --only workload.senders=4
[[ $rc == 0 ]] || fail "--only" "exit 0" "exit $rc: $(cat only.err)"
[[ $(ls res/only | grep -c '^size-') == 2 && -s res/only/size-200KB_senders-4/flows.csv &&
	-s res/only/size-300KB_senders-4/flows.csv ]] ||
	fail "--only" "the two picked points, nothing else" "$(ls res/only)"
[[ $(grep -c '"not run: not picked by --only"' res/only/sweep.csv) == 4 ]] ||
	fail "--only" "4 rows marked not picked in sweep.csv" "$(cat res/only/sweep.csv)"
grep -qF '4 of 6 points were not picked by --only' only.out || fail "--only" "the points left out said" "$(tail -3 only.out)"
cp res/only/size-200KB_senders-4/flows.csv kept200.csv
run only2 run only.yaml -j 1 --out res/only --only senders=2 --only size=100KB --resume
[[ $rc == 0 ]] || fail "--only --resume" "exit 0" "exit $rc: $(cat only2.err)"
grep -qF '(2 kept from the earlier run); --only: 1 of them left to run' only2.out ||
	fail "--only --resume" "2 kept, 1 to run" "$(head -2 only2.out)"
[[ $(ls res/only | grep -c '^size-') == 3 && -s res/only/size-100KB_senders-2/flows.csv ]] ||
	fail "--only --resume" "the kept two and the new one" "$(ls res/only)"
cmp -s kept200.csv res/only/size-200KB_senders-4/flows.csv || fail "--only --resume" "the kept point untouched" "differs"
# a key or value the sweep lacks, a file without a sweep: exit 2, nothing written
for bad in size=400KB sizes=100KB size; do
	run onlybad run only.yaml --out res/onlybad --only "$bad"
	[[ $rc == 2 && ! -e res/onlybad && ! -s onlybad.out ]] || fail "--only $bad" "exit 2, nothing written" "exit $rc: $(ls res)"
done
grep -qF -- "--only size: expected KEY=VALUE with KEY one of the swept keys of only.yaml: workload.size (line 6), workload.senders (line 7)" onlybad.err ||
	fail "--only size" "the swept keys and their lines" "$(cat onlybad.err)"
run onlybad run only.yaml --out res/onlybad --only size=400KB
grep -qF -- "--only size=400KB: only.yaml:6: workload.size has no value '400KB' (its values: 100KB, 200KB, 300KB)" onlybad.err ||
	fail "--only size=400KB" "file:line, the key and its values" "$(cat onlybad.err)"
run onlysingle run small.yaml --out res/onlysingle --only size=100KB
[[ $rc == 2 && ! -e res/onlysingle ]] && grep -qF "small.yaml has no sweep" onlysingle.err ||
	fail "--only without a sweep" "exit 2, a sentence" "exit $rc: $(cat onlysingle.err)"

# variant names that share a folder, values that are equal
cat >col.yaml <<'EOF'
name: col
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 100KB}
sweep:
  system:
    "a b": {transport.window: 40KB}
    "a+b": {transport.window: 80KB}
EOF
refused collision 2 "col.yaml:8: sweep.system: variants 'a b' and 'a+b' give both points the folder name 'system-a+b'" validate col.yaml
cat >eq.yaml <<'EOF'
name: eq
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 100KB}
sweep:
  transport.window: [64KiB, 65536B, 32KiB]
EOF
refused equal 2 "eq.yaml:6: sweep.transport.window: values '64KiB' and '65536B' make the same experiment" run eq.yaml

# SIGHUP: the children stop with the sweep, what completed is kept, no .partial
cat >hup.yaml <<'EOF'
name: hup
topology: {type: star, hosts: 5, link_rate: 100Gbps}
transport: {type: ref}
workload: {type: incast, senders: 4, receiver: 0, size: 100KB}
sweep:
  workload.size: [100KB, 3GB, 4GB]
EOF
set +e
"$MPSIM" run hup.yaml -j 2 --out res/hup --quiet >hup.out 2>hup.err &
pid=$!
wait_child $pid >/dev/null
for k in $(seq 100); do # until the 100KB point is done and the 4GB one runs
	[[ -d res/hup.partial-$pid/size-100KB && $(pgrep -P $pid | wc -l) == 2 ]] && break
	sleep 0.05
done
kids=$(pgrep -P $pid | tr '\n' ' ')
kill -HUP $pid
wait $pid
rc=$?
set -e
[[ $rc == 129 ]] || fail SIGHUP "exit 129" "exit $rc: $(cat hup.err)"
sleep 0.2
for k in $kids; do
	if kill -0 "$k" 2>/dev/null; then
		fail SIGHUP "no point left running" "pid $k runs on"
		kill -KILL "$k"
	fi
done
if compgen -G 'res/hup.partial-*' >/dev/null; then fail SIGHUP "no .partial folder" "$(ls -d res/hup.*)"; fi
[[ -s res/hup/size-100KB/flows.csv ]] || fail SIGHUP "the completed point kept" "$(ls -A res/hup 2>&1)"
grep -q '^size-4GB,.*"not run: the sweep was interrupted by signal 1 (Hangup)",' res/hup/sweep.csv ||
	fail SIGHUP "sweep.csv says the others were interrupted" "$(cat res/hup/sweep.csv 2>&1)"

# a closed stdout (| head) does not take the sweep down
sed 's/3GB, 4GB/10KB, 20KB/' hup.yaml >pipe.yaml
set +e
"$MPSIM" run pipe.yaml -j 1 --out res/pipe 2>pipe.err | head -1 >/dev/null
set -e
[[ -s res/pipe/sweep.csv ]] || fail "| head -1" "the sweep completes (sweep.csv)" "$(ls -A res 2>&1); $(cat pipe.err)"

# --- legal values that crashed or exhausted the machine ----------------------------
cat >pk.yaml <<'EOF'
name: pk
topology: {type: star, hosts: 5}
transport: {type: ref, mtu: 256B}
workload: {type: incast, senders: 4, receiver: 0, size: 2TB}
EOF
refused "2^32 packets" 2 "a connection carries at most 4294967294 packets" validate pk.yaml
refused interval 2 "output.interval: 1ps over time_limit (10s) is up to 1e+13 samples" \
	validate small.yaml --set output.interval=1ps --set output.queues=max:last_hop
export MPSIM_MEM_LIMIT=1GiB
cat >ls.yaml <<'EOF'
name: ls
topology: {type: leaf_spine, hosts_per_leaf: 1, leaves: 65535, spines: 65534}
transport: {type: ref}
workload: {type: permutation, size: 10KB}
EOF
refused leaf_spine 2 "ls.yaml:2: topology: 65535 hosts, 131069 switches, 4294836225 links" validate ls.yaml
grep -qF '1.0 GB fit' leaf_spine.err || fail leaf_spine "what fits (MPSIM_MEM_LIMIT=1GiB less a 64 MiB margin: 1.0 GB)" "$(cat leaf_spine.err)"
cat >a2a.yaml <<'EOF'
name: a2a
topology: {type: star, hosts: 65535}
transport: {type: ref}
workload: {type: all_to_all, size: 10KB}
EOF
refused all_to_all 2 "workload.hosts: 4294770690 flows need about" validate a2a.yaml
cat >poi.yaml <<EOF
name: poi
topology: {type: leaf_spine, hosts_per_leaf: 16, leaves: 8, spines: 4}
transport: {type: ref}
workload: {type: poisson, load: 1, duration: 1000000s, cdf: $ROOT/data/workloads/websearch.txt}
EOF
refused poisson 2 "workload.duration: " validate poi.yaml
unset MPSIM_MEM_LIMIT
refused buffer 2 "switch.buffer: 1000 B cannot hold one 4000 B packet" validate small.yaml --set switch.buffer=1000B
refused loss 2 "failures.loss_rate: 1 loses every packet" validate small.yaml --set failures.loss_rate=1
refused host_loss 2 "failures.host_loss_rate: 1 loses every packet" validate small.yaml --set failures.host_loss_rate=1

# --- inputs that could grow quadratically: bounded 10x above what they take -----------------------
# all_to_all on 600 hosts: 0.6 M flows starting at once (about 3 s)
sed 's/hosts: 65535/hosts: 600/' a2a.yaml >a600.yaml
set +e
timeout 40 "$MPSIM" validate a600.yaml >a600.out 2>a600.err
rc=$?
set -e
[[ $rc == 0 ]] || fail "all_to_all 600 hosts" "validate within 40 s" "exit $rc (124 = timeout)"
# 80,000 keys in one mapping, one of them twice (0.3 s)
{
	echo 'name: keys'
	echo 'topology:'
	echo '  type: star'
	for i in $(seq 80000); do echo "  k$i: 1"; done
	echo '  k7: 2'
} >keys.yaml
set +e
timeout 10 "$MPSIM" validate keys.yaml >keys.out 2>keys.err
rc=$?
set -e
[[ $rc == 2 ]] && grep -qF 'keys.yaml:80004: topology.k7: duplicate key (first at line 10)' keys.err ||
	fail "80,000 keys" "exit 2 within 10 s naming the duplicate" "exit $rc (124 = timeout): $(cat keys.err)"

finish

#!/usr/bin/env bash
# mpi_part.sh MPSIM MPIEXEC - one run partitioned over MPI ranks (`mpirun -n N
# mpsim run FILE`, a file without a sweep) writes the bytes one process writes;
# registered when CMake found MPI. The ranks run oversubscribed on however
# many cores there are, as tests/mpi_sweep.sh's do. With --threads for
# MPIEXEC, the same checks partition the run over threads of one process
# (`mpsim run FILE --threads N`; registered in every build).
#
# A k=4 fat tree (16 hosts, 4 pods of 2 ToRs and 2 aggregation switches, 4
# cores) at 1, 2 and 4 ranks: flows.csv, ports.csv and timeseries.csv
# byte-identical (cmp) for
#  - STrack on a permutation, with every kind of time series (group queues,
#    utilisation, drops, pauses, paused share, a named link's queue, per-flow
#    goodput and traces);
#  - RoCEv2 (DCQCN) on a lossless fabric, a 15-to-1 incast whose PFC pauses
#    reach the cores: at 2 ranks pod 0 and core 2 are on different ranks,
#    so the pauses agg0_1 sends core2 cross the cut; with pfc_counters, each
#    flow's HoL-blocked time the union of its waits at ports of several
#    ranks (a sum of each rank's would differ);
#  - that incast with links going down and coming back up while PFC
#    pauses (a cut one among them), each port coming up reading its peer's
#    PFC state as one process does;
#  - STrack on a message DAG (a workload file of dependent messages):
#    chains on one rank, completions that release a message whose sender is
#    on another rank (delivered: f waits for a, 0->5, and sends from 12;
#    acknowledged: i and j wait for a:sent at host 0 and send from 10, at
#    the same picosecond, a tie of two releases), a `start` later than the
#    release, a one-shot trigger (need 1) whose completions are all local;
#  - the same DAG over RoCEv2 (whose plain flows' deliveries are reported at
#    the sender, on the acknowledgement: the completion is the sender's
#    rank's), every dependency 1 us, without the one-shot trigger;
#  - the STrack run with two links down from the start (one of them cut at
#    2 ranks), every fabric link corrupting packets at random (each port's
#    own random stream, on its rank), and a cut link (agg0_1-core2 at 2
#    ranks) failing under its packets and coming back, another failing, a
#    third slowed down; a cut link's delay lowered to 400 ns at 5 us and
#    raised again (the lookahead is the least delay a cut link will have:
#    0.4 us), every link of agg3_0 given 600 ns, core1's egress a processing
#    delay;
#  - UET with NSCC and RCCC on a 15-to-1 incast into 60 KB queues: the
#    receiver's pull pacer (state and events of host 0), its PULLs, and the
#    drops, timeouts and RTSs of the first round trip, and trimming (the
#    ports' trim counts, a side table of the fabric, gathered with them).
#  - collectives on the collective layer's queue pairs (a part posted on a
#    queue pair whose receiver is on another rank is posted there too, with
#    the window's packets): a ring AllReduce over STrack on 16 randomly
#    placed ranks, 2 queue pairs per peer striped; an AlltoAll over RoCEv2
#    on a lossless fabric, 4 messages in flight per rank, whole messages in
#    turn on 2 queue pairs; two jobs of double-binary-tree AllReduces over
#    STrack with MCC's window of chunks, a warm-up and 3 measured
#    iterations, 2 us of compute between them (the barrier, a marker,
#    released on every rank), MCC's window sampled per channel
#    (collectives.csv compared too), and the same with MCC's qp_trace.csv
#    (each channel's rows from its sender's rank, gathered).
#  - each load balancer with state on a permutation: AR (per flowlet, by
#    utilisation), DRILL, LetFlow, CONGA (its feedback in the metadata of
#    packets that cross), Hermes (host state, probes on a host's timer),
#    Proteus over RoCEv2 on a lossless fabric (pauses, in_order: local), and
#    HPCC over CONGA (an INT record after the scheme's metadata).
#  - servers of 4 GPUs (the intra-node fabric, whose transfers share a
#    server's ports max-min, so a server's GPUs stay on one rank: scheme
#    "servers"): an AlltoAll over STrack on a leaf-spine of 6 hosts per leaf,
#    so servers straddle leaves; at 4 ranks servers 0-5 go to ranks 0, 0, 1,
#    2, 2, 3 and the links of hosts 8-11 (leaf 1, rank 0) and 20-23 (leaf 3,
#    rank 2) are cut, 8 host links and 4 leaf-spine ones (by ToRs, server 1
#    would be split and the files differ); a ring AllReduce on a
#    rail-optimized cluster of 8 servers, whole leaves per rank.
# The cut, by hand (scheme "tors": ToRs in blocks with their hosts and their
# pod's aggregation switches, cores dealt out in blocks): at 2 ranks pods 0-1
# and cores 0-1 on rank 0, each core reaches the other two pods: 4 x 2 = 8
# cut links; at 4 ranks a pod and a core each: 4 x 3 = 12.
# What is not partitioned yet (a completion releasing a message on another
# rank sooner than the lookahead, directly or through an iteration barrier;
# Proteus's in_order: delivered) is refused
# before the run (exit 2), said once.
set -euo pipefail

MPSIM=${1:?usage: mpi_part.sh MPSIM MPIEXEC}
MPIEXEC=${2:?usage: mpi_part.sh MPSIM MPIEXEC}
MPSIM=$(cd "$(dirname "$MPSIM")" && pwd)/$(basename "$MPSIM")
DATA=$(cd "$(dirname "${BASH_SOURCE[0]}")/../data/workloads" && pwd)

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
export TMPDIR=$T MPSIM_NO_PLOTS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_hwloc_base_binding_policy=none
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 # as mpi_sweep.sh says

over=mpi
[[ $MPIEXEC == --threads ]] && over=threads
nfail=0
fail() { # fail WHAT EXPECTED GOT
	printf 'FAIL [%s]\n  expected: %s\n  got:      %s\n' "$1" "$2" "$3" >&2
	nfail=$((nfail + 1))
}
# launch N FILE ARGS...: mpsim run FILE over N ranks, MPI's or threads
launch() {
	local n=$1 file=$2
	shift 2
	if [[ $MPIEXEC == --threads ]]; then
		"$MPSIM" run "$file" --threads "$n" "$@"
	else
		"$MPIEXEC" -n "$n" "$MPSIM" run "$file" "$@"
	fi
}
# ranks N FILE OUT: the run over N ranks (1: one process, no launcher)
ranks() {
	local n=$1 file=$2 out=$3
	set +e
	if [[ $n == 1 ]]; then
		"$MPSIM" run "$file" --out "$out" --quiet >"$out.out" 2>"$out.err"
	else
		launch "$n" "$file" --out "$out" --quiet >"$out.out" 2>"$out.err"
	fi
	rc=$?
	set -e
	[[ $rc == 0 ]] || fail "$out" "exit 0" "exit $rc: $(head -c 600 "$out.err")"
}
# json FILE EXPR: a value of summary.json
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

cat >strack.yaml <<'YAML'
name: strack
seed: 3
topology: {type: fat_tree, k: 4, host_rate: 100Gbps, fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}
switch: {buffer: 4MB}
transport: {type: strack}
workload: {type: permutation, size: 400KB}
output:
  interval: 2us
  queues: [max:tier2_up, max:last_hop, edge0_0-agg0_0]
  utilisation: [tier1_up, all]
  drops: [all]
  pauses: [all]
  paused: [all]
  flow_throughput: true
  traces: true
YAML
cat >roce.yaml <<'YAML'
name: roce
seed: 7
topology: {type: fat_tree, k: 4, host_rate: 100Gbps, fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}
switch: {buffer: 1MB, mode: lossless}
transport: {type: roce}
workload: {type: incast, senders: 15, receiver: 0, size: 200KB}
output:
  interval: 5us
  queues: [max:all]
  pauses: [all, tier2_up, tier2_down]
  paused: [fabric]
  pfc_counters: true
YAML
# a lossless fabric's links going down and coming back up under PFC: a port
# coming up reads its peer's PFC state (a RESUME lost while the link was
# down), on a cut link another rank's (windows end at the moment, and the
# cut ports' pause_sent crosses with the window before: without it the
# upstream resumes into a full buffer). agg0_1 still pauses core2 at 23 us.
sed 's/^name: roce/name: up/' roce.yaml >up.yaml
cat >>up.yaml <<'YAML'
events:
  - {at: 20us, link: agg0_1-core2, action: down}
  - {at: 23us, link: agg0_1-core2, action: up}
  - {at: 30us, link: agg0_0-core0, action: down}
  - {at: 60us, link: agg0_0-core0, action: up}
  - {at: 25us, node: core3, action: down}
  - {at: 70us, node: core3, action: up}
YAML
# a message DAG: at 2 ranks hosts 0-7 are rank 0's, 8-15 rank 1's; at 4,
# hosts 4r to 4r+3 rank r's. Cross-rank dependencies wait at least the
# lookahead (1 us).
cat >dag.csv <<'CSV'
id,src,dst,bytes,deps,delay,start,need
a,0,5,200KB,,,,
b,5,9,200KB,a,,,
c,9,14,200KB,b,,,
d,14,2,200KB,c,,,
e,3,12,100KB,,,,
f,12,7,100KB,e a,3us,,
g,7,0,100KB,f,,,
h,10,15,50KB,d g,2us,,
i,10,4,150KB,a:sent,1us,,
j,10,6,150KB,a:sent,1us,,
k,6,11,80KB,i j,,20us,
l,11,13,80KB,k e:sent,1us,,
m,12,1,60KB,e f:sent,,,1
CSV
cat >dag.yaml <<'YAML'
name: dag
seed: 2
topology: {type: fat_tree, k: 4, host_rate: 100Gbps, fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}
transport: {type: strack}
workload: {type: dag, file: dag.csv}
output: {interval: 2us, queues: [max:all], flow_throughput: true}
YAML
awk -F, 'BEGIN { OFS = "," } NR > 1 && $5 != "" && $6 == "" { $6 = "1us" } !/^m,/' dag.csv >dagr.csv
sed 's/^name: dag/name: dagr/; s/dag\.csv/dagr.csv/; s/type: strack/type: roce/' dag.yaml >dagr.yaml
# links down from the start, corrupting links (random drops per port), and
# links that fail, recover and slow down during the run
sed 's/^name: strack/name: fail/' strack.yaml >fail.yaml
cat >>fail.yaml <<'YAML'
failures: {links: [agg0_0-core0, edge2_1-agg2_0], loss_rate: 0.001}
events:
  - {at: 8us, link: agg0_1-core2, action: down}
  - {at: 9us, link: edge1_0-agg1_1, action: down}
  - {at: 20us, link: agg0_1-core2, action: up}
  - {at: 12us, link: agg2_0-core0, action: rate, value: 25Gbps}
  - {at: 5us, link: agg1_1-core3, action: delay, value: 400ns}
  - {at: 15us, link: agg1_1-core3, action: delay, value: 3us}
  - {at: 6us, node: agg3_0, action: delay, value: 600ns}
  - {at: 10us, node: core1, action: proc_delay, value: 700ns}
YAML
# collectives
cat >ring.yaml <<'YAML'
name: ring
seed: 5
topology: {type: fat_tree, k: 4, host_rate: 100Gbps, fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}
transport: {type: strack}
collective: {type: allreduce, algorithm: ring, size: 1MB, ranks: 16, placement: random, chunk: 64KB}
ccl: {type: stripe, qps: 2}
output: {interval: 5us, queues: [max:all], utilisation: [all], flow_throughput: true}
YAML
cat >a2a.yaml <<'YAML'
name: a2a
seed: 9
topology: {type: fat_tree, k: 4, host_rate: 100Gbps, fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}
switch: {buffer: 1MB, mode: lossless}
transport: {type: roce}
collective: {type: alltoall, size: 480KB, ranks: 16, placement: packed, parallelism: 4}
ccl: {type: rr, qps: 2}
output: {interval: 5us, queues: [max:all], pauses: [all], flow_throughput: true}
YAML
cat >iter.yaml <<'YAML'
name: iter
seed: 4
topology: {type: fat_tree, k: 4, host_rate: 100Gbps, fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}
transport: {type: strack}
collective: {type: allreduce, algorithm: double_binary_tree, size: 512KB, ranks: 8, jobs: 2, placement: random, chunk: 64KB, iterations: 3, warmup: 1, compute_gap: 2us}
ccl: {type: mcc, qps: 2}
output: {interval: 5us, queues: [max:all], traces: true}
YAML

cat >uet.yaml <<'YAML'
name: uet
seed: 5
topology: {type: fat_tree, k: 4, host_rate: 100Gbps, fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}
switch: {buffer: 4MB, queue_limit: 60KB, trim: true}
transport: {type: uet, cc: nscc+rccc}
workload: {type: incast, senders: 15, receiver: 0, size: 200KB}
output: {interval: 5us, queues: [max:all]}
YAML

# load balancers: every scheme's state is one switch's or one host's, on its
# rank (flowlet tables, DREs, DRILL's memory, CONGA's leaf tables, Hermes's
# paths and probe timer, Proteus's pair tables), and what a scheme tells
# another switch or host rides in the packet's metadata across the cut. A
# permutation over STrack, flowlets short enough (2 us) to move.
lbcase() { # lbcase NAME LB
	sed "s/^name: strack/name: $1/; /^output:/,\$d" strack.yaml >"$1.yaml"
	printf 'lb: %s\noutput: {interval: 2us, queues: [max:all], utilisation: [all], flow_throughput: true}\n' "$2" >>"$1.yaml"
}
# AR per flowlet by recent utilisation (per-switch flowlet tables, per-port DREs)
lbcase ar '{type: ar, mode: flowlet, metric: util, flowlet_gap: 2us}'
lbcase drill '{type: drill}'
lbcase letflow '{type: letflow, flowlet_gap: 2us}'
# CONGA: the metrics the destination leaf feeds back ride on ACKs across the cut
lbcase conga '{type: conga, flowlet_timeout: 2us}'
# Hermes: probes every 4 us from each sending host, answered by the receiver's
lbcase hermes '{type: hermes, probe_interval: 4us, window: 8us, rtt_low: 2us, rtt_high: 4us, s_bytes: 20KB, flowlet_timeout: 4us}'
sed 's/^name: hermes/name: hermes0/; s/probe_interval: 4us/probe_interval: 0us/' hermes.yaml >hermes0.yaml
lbcase ecmp '{type: ecmp}'
# Proteus over RoCEv2 on a lossless fabric: PFC pauses (Algorithm 2 at a
# paused egress), source-routed paths and probes, the flow table's local
# in-order hold
sed 's/^name: roce/name: proteus/; s/type: incast, senders: 15, receiver: 0/type: permutation/' roce.yaml >proteus.yaml
printf 'lb: {type: proteus, in_order: local}\n' >>proteus.yaml
# HPCC over CONGA: its INT record, after CONGA's metadata, crosses the cut too
sed 's/^name: conga/name: hpcc/; s/type: strack/type: hpcc/' conga.yaml >hpcc.yaml
# Poisson arrivals (Web Search) and the load summary.json measures over the
# statistics window: each port's snapshots gathered from the rank owning it
cat >poisson.yaml <<YAML
name: poisson
seed: 9
topology: {type: fat_tree, k: 4, host_rate: 100Gbps, fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}
switch: {buffer: 4MB}
transport: {type: strack}
workload: {type: poisson, cdf: $DATA/websearch.txt, load: 0.5, duration: 300us}
output: {fct_from: 50us, fct_until: 250us, interval: 10us, utilisation: [tier1_up]}
YAML

for x in strack roce up dag dagr fail uet ring a2a iter ar drill letflow conga hermes proteus hpcc poisson; do
	for n in 1 2 4; do ranks "$n" "$x.yaml" "$x$n"; done
	for n in 2 4; do
		for f in flows.csv ports.csv timeseries.csv collectives.csv; do
			[[ $f != collectives.csv || -e ${x}1/$f ]] || continue
			cmp -s "${x}1/$f" "$x$n/$f" ||
				fail "$x at $n ranks: $f" "byte-identical to one process" "$(cmp "${x}1/$f" "$x$n/$f" 2>&1)"
		done
		got=$(json "$x$n/summary.json" 'd["partition"]["ranks"], d["partition"]["over"], d["partition"]["scheme"], d["partition"]["cut_links"], d["run"]["ranks"]' 2>&1)
		want="$n $over tors $((n == 2 ? 8 : 12)) $n"
		[[ $got == "$want" ]] ||
			fail "$x at $n ranks: summary.json" "ranks, scheme, cut links: $want" "$got"
		got=$(json "$x$n/summary.json" 'd["partition"]["cut_packets"] > 0 and d["partition"]["lockstep_rounds"] > 0' 2>&1)
		[[ $got == True ]] || fail "$x at $n ranks: summary.json" "packets crossed the cut, and a last stretch in lockstep" "$got"
	done
	[[ $(json "${x}1/summary.json" '"partition" in d, d["run"]["ranks"]' 2>&1) == "False 1" ]] ||
		fail "$x in one process: summary.json" "ranks 1, no partition object" "$(head -c 300 "${x}1/summary.json")"
done
# servers of several GPUs
cat >srvl.yaml <<'YAML'
name: srvl
seed: 11
topology: {type: leaf_spine, hosts_per_leaf: 6, leaves: 4, spines: 2, host_rate: 100Gbps, fabric_rate: 100Gbps, host_delay: 1us, fabric_delay: 1us}
server: {gpus: 4, rate: 200Gbps}
transport: {type: strack}
collective: {type: alltoall, size: 256KB, ranks: 24}
ccl: {type: stripe, qps: 2}
output: {interval: 5us, queues: [max:all], utilisation: [all]}
YAML
cat >srvr.yaml <<'YAML'
name: srvr
seed: 11
topology: {type: rail_optimized, servers: 8, gpus: 4, servers_per_leaf: 2, spines: 2, host_rate: 100Gbps, fabric_rate: 100Gbps}
transport: {type: strack}
collective: {type: allreduce, algorithm: ring, size: 2MB, ranks: 32, chunk: 64KB}
ccl: {type: stripe, qps: 2}
output: {interval: 5us, queues: [max:all], utilisation: [all]}
YAML
for x in srvl srvr; do
	for n in 1 2 4; do ranks "$n" "$x.yaml" "$x$n"; done
	for n in 2 4; do
		for f in flows.csv ports.csv timeseries.csv collectives.csv; do
			cmp -s "${x}1/$f" "$x$n/$f" ||
				fail "$x at $n ranks: $f" "byte-identical to one process" "$(cmp "${x}1/$f" "$x$n/$f" 2>&1)"
		done
	done
	got=$(awk -F, 'NR > 1 && int($2 / 4) == int($3 / 4) { n++ } END { print n + 0 }' "${x}1/flows.csv")
	[[ $got -gt 0 ]] || fail "$x: messages inside a server" "some (the intra-node fabric)" "$got"
done
got=$(json srvl2/summary.json 'd["partition"]["scheme"], d["partition"]["cut_links"]' 2>&1)
[[ $got == "servers 4" ]] || fail "srvl at 2 ranks: the cut" "servers 4" "$got"
got=$(json srvl4/summary.json 'd["partition"]["scheme"], d["partition"]["cut_links"]' 2>&1)
[[ $got == "servers 12" ]] || fail "srvl at 4 ranks: the cut" "servers 12 (8 host links, 4 leaf-spine)" "$got"
got=$(json srvr4/summary.json 'd["partition"]["cut_links"]' 2>&1)
[[ $got == 24 ]] || fail "srvr at 4 ranks: the cut" "24 leaf-spine links, no host link" "$got"
# the load over the window: the same figures at every rank count
want=$(json poisson1/summary.json 'd["load"]' 2>&1)
[[ $want == *"'fabric_tier': 'tier1_up'"* ]] || fail "poisson: summary.json load" "a window's load, tier1_up the busiest" "$want"
for n in 2 4; do
	got=$(json poisson$n/summary.json 'd["load"]' 2>&1)
	[[ $got == "$want" ]] || fail "poisson at $n ranks: summary.json load" "$want" "$got"
done
d=$(json uet1/summary.json 'd["network"]["trimmed"]' 2>&1)
[[ $d =~ ^[1-9][0-9]*$ ]] || fail "uet: trimmed packets" "trimmed > 0" "$d"
# the lookahead: the least delay a cut link will have (agg1_1-core3's 400 ns)
d=$(json fail2/summary.json 'd["partition"]["lookahead_us"]' 2>&1)
[[ $d == 0.4 ]] || fail "fail: the lookahead" "0.4 (us, after a delay event)" "$d"
d=$(json fail1/summary.json 'd["network"]["drops_link"]' 2>&1)
[[ $d =~ ^[1-9][0-9]*$ ]] || fail "fail: corrupted packets" "drops_link > 0" "$d"
# what the cut link lost when it failed, both ways (counted at the sending port)
p=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "drops_link") c = i }
	$1 == "agg0_1-core2" || $1 == "core2-agg0_1" { printf "%s ", ($c > 0) }' fail2/ports.csv)
[[ $p == "1 1 " ]] || fail "fail: the cut link's losses" "drops_link > 0 at both ends of agg0_1-core2" "${p:-no rows}"
# the pauses that cross the cut at 2 ranks: agg0_1 (pod 0, rank 0) to core2 (rank 1)
p=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "pause_sent") c = i }
	$1 == "agg0_1-core2" { print $c }' roce2/ports.csv)
[[ ${p:-0} -gt 0 ]] || fail "roce: pauses across the cut" "agg0_1-core2 pause_sent > 0" "${p:-no row}"
# flows blocked behind those pauses (flows.csv's blocked_us, hol)
p=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "hol") c = i } NR > 1 { n += $c } END { print n + 0 }' roce1/flows.csv)
[[ $p -ge 10 ]] || fail "roce: HoL-blocked flows" "at least 10 of 15 (pfc_counters)" "$p"

# each scheme acted (its one-process run is not ECMP's), and Hermes's probes,
# which cross the cut, changed what its hosts chose
ranks 1 ecmp.yaml ecmp1
ranks 1 hermes0.yaml hermes01
for x in ar drill letflow conga hermes; do
	cmp -s ecmp1/flows.csv "${x}1/flows.csv" && fail "$x: the scheme acted" "flows.csv unlike ECMP's" "the same"
done
cmp -s hermes01/flows.csv hermes1/flows.csv && fail "hermes: probes" "flows.csv unlike the run without probes" "the same"
d=$(json proteus1/summary.json 'd["network"]["pause_frames"]' 2>&1)
[[ $d =~ ^[1-9][0-9]*$ ]] || fail "proteus: PFC pauses" "pause_frames > 0" "$d"
# its counts of decisions (summary.json's lb), each switch's on its rank,
# summed: the same at every rank count, and Algorithm 2 acted
want=$(json proteus1/summary.json 'd["lb"]' 2>&1)
for n in 2 4; do
	got=$(json "proteus$n/summary.json" 'd["lb"]' 2>&1)
	[[ $got == "$want" ]] || fail "proteus at $n ranks: summary.json's lb" "$want" "$got"
done
d=$(json proteus1/summary.json 'd["lb"]["moves"] > 0 and d["lb"]["waits"] + d["lb"]["reroutes"] > 0 and d["lb"]["probes"] > 0' 2>&1)
[[ $d == True ]] || fail "proteus: counts" "moves, Algorithm 2's waits or reroutes, and probes" "$want"

# Proteus's in_order: delivered, whose destination edge writes the source
# edge's flow table at once
sed 's/in_order: local/in_order: delivered/; s/^name: proteus/name: prdel/' proteus.yaml >prdel.yaml
set +e
launch 2 prdel.yaml --out prdel --quiet >prdel.out 2>prdel.err
rc=$?
set -e
[[ $rc == 2 && ! -e prdel/flows.csv ]] || fail "proteus in_order delivered at 2 ranks" "exit 2, nothing written" "exit $rc: $(head -c 300 prdel.err)"
grep -qF "prdel.yaml:13: lb.in_order: Proteus's delivered (a destination edge tells the source edge the instant a packet arrives" prdel.err ||
	fail "proteus in_order delivered at 2 ranks" "a sentence naming file:line and lb.in_order" "$(head -c 400 prdel.err)"

# the DAG's releases, by hand: i and j 1 us after a is acknowledged at host
# 0 (rank 0 at 4 ranks; they send from host 10, rank 2)
got=$(awk -F, 'NR > 1 && ($1 == 0 || $1 == 8 || $1 == 9) { printf "%s ", $5 }' dag4/flows.csv)
a_ack=$(awk -F, 'NR == 2 { print $6 }' dag4/flows.csv)
want=$(python3 -c "import sys; a = float(sys.argv[1]); print('0.000000 %.6f %.6f ' % (a + 1, a + 1))" "$a_ack")
[[ $got == "$want" ]] || fail "dag at 4 ranks: i and j released 1 us after a is acknowledged" "$want" "$got"
# the iteration barrier at 4 ranks: every iteration after the first starts
# 2 us after the last byte of the one before (its job's, on any rank)
got=$(awk -F, 'NR > 1 { if ($1 == j && $5 - f > 0) printf "%.6f ", $5 - f; j = $1; f = $6 }' iter4/collectives.csv)
[[ $got == "2.000000 2.000000 2.000000 2.000000 " ]] ||
	fail "iter at 4 ranks: the barrier" "each iteration 2 us after the previous one's last byte" "$got"
# MCC's qp_trace.csv: each rank's rows (a channel's from its sender's rank)
# gathered, in the order of time, job, src, dst as one process writes them
sed 's/^name: iter/name: itertr/; s/type: mcc, qps: 2}/type: mcc, qps: 2, trace: true}/' iter.yaml >itertr.yaml
for n in 1 2 4; do ranks "$n" itertr.yaml "itertr$n"; done
for n in 2 4; do
	for f in flows.csv collectives.csv qp_trace.csv; do
		cmp -s "itertr1/$f" "itertr$n/$f" ||
			fail "itertr at $n ranks: $f" "byte-identical to one process" "$(cmp "itertr1/$f" "itertr$n/$f" 2>&1)"
	done
done
got=$(awk -F, 'NR > 1 { s[$3] = 1 } END { print length(s) }' itertr1/qp_trace.csv)
[[ $got -ge 8 ]] || fail "itertr: qp_trace.csv" "rows from the senders of every rank (8 or more)" "$got"
# refused: an iteration barrier shorter than the lookahead (the next
# iteration's first messages on one rank wait for the last byte on another),
# and a ring whose next hop waits for the acknowledgement at the sender
sed 's/^name: iter/name: iter0/; s/compute_gap: 2us/compute_gap: 500ns/' iter.yaml >iter0.yaml
sed 's/^name: ring/name: ringack/; s/chunk: 64KB}/chunk: 64KB, trigger: ack}/' ring.yaml >ringack.yaml
for x in iter0 ringack; do
	set +e
	launch 2 $x.yaml --out $x --quiet >$x.out 2>$x.err
	rc=$?
	set -e
	[[ $rc == 2 ]] || fail "$x at 2 ranks" "exit 2" "exit $rc: $(head -c 300 $x.err)"
	[[ $(grep -c 'not partitioned yet' $x.err) == 1 ]] || fail "$x at 2 ranks" "a sentence, said once" "$(head -c 400 $x.err)"
	[[ ! -e $x/flows.csv ]] || fail "$x at 2 ranks" "nothing written" "$(ls $x)"
done
grep -qF "iter0.yaml:5: collective: message" iter0.err && grep -qF "an iteration barrier" iter0.err ||
	fail "iter0 at 2 ranks" "a sentence naming file:line and the barrier" "$(head -c 400 iter0.err)"
grep -qF "ringack.yaml:5: collective: message" ringack.err ||
	fail "ringack at 2 ranks" "a sentence naming file:line and the message" "$(head -c 400 ringack.err)"
# a completion releasing a message on another rank sooner than the lookahead
sed 's/^f,12,7,100KB,e a,3us,,/f,12,7,100KB,e a,,,/' dag.csv >dag0.csv
sed 's/dag\.csv/dag0.csv/' dag.yaml >dag0.yaml
set +e
launch 2 dag0.yaml --out dag0 --quiet >dag0.out 2>dag0.err
rc=$?
set -e
[[ $rc == 2 ]] || fail "a DAG edge shorter than the lookahead at 2 ranks" "exit 2" "exit $rc: $(head -c 300 dag0.err)"
grep -qF "dag0.yaml:5: workload: message 5 (host 12 to 7) waits for a completion at host 5, on another rank: its delay is shorter than the lookahead" dag0.err ||
	fail "a DAG edge shorter than the lookahead at 2 ranks" "a sentence naming file:line, the message and the host" "$(head -c 400 dag0.err)"
[[ ! -e dag0/flows.csv ]] || fail "a DAG edge shorter than the lookahead" "nothing written" "$(ls dag0)"

if [[ $over == threads ]]; then
	# --threads partitions one run: a sweep is refused, and so is 0
	printf 'sweep:\n  workload.size: [100KB, 200KB]\n' | cat strack.yaml - >sw.yaml
	for c in "sw.yaml --threads 2|has a sweep; --threads partitions one run" \
		"strack.yaml --threads 0|expected a number of partitions from 1 to 256, got '0'"; do
		set +e
		# shellcheck disable=SC2086 # the file and its options
		"$MPSIM" run ${c%%|*} --out th --quiet >th.out 2>th.err
		rc=$?
		set -e
		[[ $rc == 2 && ! -e th ]] && grep -qF "${c#*|}" th.err ||
			fail "mpsim run ${c%%|*}" "exit 2, nothing written, a sentence: ${c#*|}" "exit $rc: $(head -c 300 th.err)"
	done
fi

if ((nfail)); then
	echo "mpi_part: $nfail check(s) failed" >&2
	exit 1
fi
echo "mpi_part: all checks passed ($over)"

#!/usr/bin/env bash
# cli_bad_input.sh MPSIM REPO_ROOT - malformed experiment files and command lines.
#
# Every case is run twice, as `mpsim run FILE --out DIR` and `mpsim validate FILE`
# (plus the case's extra arguments), and must:
#   - exit with status 2 exactly (bad input),
#   - print nothing on stdout and exactly one line on stderr, starting "mpsim",
#   - name the file, as FILE:LINE: when the problem sits on a line of it,
#   - contain each expected fragment (the dotted key and what was expected),
#   - leave neither DIR nor DIR.partial-* behind.
#
# `strict` checks hold messages to their better form (the line of the key
# itself, a hint about tabs...). They fail by default; MPSIM_CLI_STRICT=0
# turns them into reports while a message is being reworked.
set -euo pipefail
source "$(dirname "$0")/clilib.sh" "$@"

STRICT=${MPSIM_CLI_STRICT:-1}

nknown=0
# strict CASE CONDITION-HOLDS(0/1) EXPECTED GOT: a known-poor message
strict() {
	if [[ $2 == 1 ]]; then return 0; fi
	if [[ $STRICT == 1 ]]; then
		fail "$1 (strict)" "$3" "$4"
	else
		printf 'KNOWN POOR MESSAGE [%s]\n  wanted: %s\n  got:    %s\n' "$1" "$3" "$4"
		nknown=$((nknown + 1))
	fi
}

# A small valid experiment (4 hosts); line numbers below refer to this layout:
#  1 name  2 topology  3 type  4 hosts_per_leaf  5 leaves  6 spines  7 transport
#  8 type  9 workload  10 type  11 size
base() {
	cat <<'EOF'
name: t
topology:
  type: leaf_spine
  hosts_per_leaf: 2
  leaves: 2
  spines: 2
transport:
  type: ref
workload:
  type: permutation
  size: 10KB
EOF
}

# run_both CASE FILE [ARGS...]: sets rc_run, out_run, err_run, rc_val, out_val, err_val
run_both() {
	local c=$1 f=$2
	shift 2
	rm -rf "out_$c" "out_$c".partial-*
	set +e
	"$MPSIM" run "$f" --out "out_$c" "$@" >run.out 2>run.err
	rc_run=$?
	"$MPSIM" validate "$f" "$@" >val.out 2>val.err
	rc_val=$?
	set -e
	out_run=$(cat run.out) err_run=$(cat run.err)
	out_val=$(cat val.out) err_val=$(cat val.err)
}

# bad CASE FILE LOCATION ARGS... -- FRAGMENT...
#   LOCATION: an extended regex for "FILE:LINE:" that the message must contain;
#   "@NAME" when the problem has no line (the message must still name file NAME);
#   "none" when the problem is on the command line, not in the file.
bad() {
	local c=$1 f=$2 loc=$3
	shift 3
	local args=()
	while [[ $# -gt 0 && $1 != -- ]]; do args+=("$1"); shift; done
	[[ $# -gt 0 ]] && shift
	run_both "$c" "$f" ${args[@]+"${args[@]}"}
	local mode msg out rc
	for mode in run validate; do
		if [[ $mode == run ]]; then rc=$rc_run msg=$err_run out=$out_run
		else rc=$rc_val msg=$err_val out=$out_val; fi
		local tag="$c/$mode"
		[[ $rc == 2 ]] || fail "$tag" "exit status 2" "exit status $rc, stderr: $msg"
		[[ -z $out ]] || fail "$tag" "nothing on stdout" "stdout: $out"
		local nl
		nl=$(printf '%s\n' "$msg" | grep -c . || true)
		[[ $nl == 1 ]] || fail "$tag" "exactly one line on stderr" "$nl lines: $msg"
		[[ $msg == mpsim* ]] || fail "$tag" "a message starting with 'mpsim'" "$msg"
		case $loc in
		none) ;;
		@*) grep -qF -- "${loc#@}" <<<"$msg" ||
			fail "$tag" "the file name '${loc#@}' in the message" "$msg" ;;
		*) grep -qE -- "(^|[ '/])$loc" <<<"$msg" ||
			fail "$tag" "a location matching '$loc' (file:line:)" "$msg" ;;
		esac
		local frag
		for frag in "$@"; do
			grep -qF -- "$frag" <<<"$msg" || fail "$tag" "fragment '$frag'" "$msg"
		done
	done
	[[ ! -e out_$c ]] || fail "$c/run" "no results folder out_$c" "$(ls -la "out_$c")"
	if compgen -G "out_$c.partial-*" >/dev/null; then
		fail "$c/run" "no out_$c.partial-* left behind" "$(ls -d "out_$c".partial-*)"
	fi
	rm -rf "out_$c" "out_$c".partial-*
}

# --- control: the base experiment is fine, so each case below fails for its own reason
base >ok.yaml
run_both ok ok.yaml
[[ $rc_val == 0 && $out_val == "ok.yaml: ok ("* ]] ||
	fail ok "validate ok.yaml: exit 0 and 'ok.yaml: ok (...)'" "exit $rc_val: $out_val $err_val"
[[ $rc_run == 0 && -f out_ok/summary.json ]] ||
	fail ok "run ok.yaml: exit 0 and out_ok/summary.json" "exit $rc_run: $err_run"
rm -rf out_ok

# --- unknown keys and sections
base | sed 's/hosts_per_leaf: 2/hosts_per_lef: 2/' >unknown_key.yaml
bad unknown_key unknown_key.yaml 'unknown_key\.yaml:4:' -- \
	"topology.hosts_per_lef" "unknown key" "did you mean 'hosts_per_leaf'"

{ base; printf 'bogus:\n  a: 1\n'; } >unknown_section.yaml
bad unknown_section unknown_section.yaml 'unknown_section\.yaml:12:' -- \
	"bogus" "unknown top-level key" "topology, switch"
strict unknown_section "$(grep -qF 'bogus: bogus:' <<<"$err_val" && echo 0 || echo 1)" \
	"the key named once: 'unknown_section.yaml:12: bogus: unknown top-level key ...'" "$err_val"

base | sed 's/^topology:/topolgy:/' >section_typo.yaml
bad section_typo section_typo.yaml 'section_typo\.yaml:2:' -- "topolgy" "unknown top-level key"
strict section_typo "$(grep -qF "did you mean 'topology'" <<<"$err_val" && echo 1 || echo 0)" \
	"a suggestion: did you mean 'topology'?" "$err_val"

# --- wrong types and units
base | sed 's/leaves: 2/leaves: {a: 1}/' >map_for_number.yaml
bad map_for_number map_for_number.yaml 'map_for_number\.yaml:5:' -- \
	"topology.leaves" "expected" "got a mapping"

base | sed 's/leaves: 2/leaves: many/' >text_for_number.yaml
bad text_for_number text_for_number.yaml 'text_for_number\.yaml:5:' -- \
	"topology.leaves" "expected a non-negative integer" "'many'"

base | sed 's/spines: 2/spines: 2\n  host_rate: -100Gbps/' >negative_rate.yaml
bad negative_rate negative_rate.yaml 'negative_rate\.yaml:7:' -- \
	"topology.host_rate" "expected a non-negative rate" "-100Gbps"

base | sed 's/spines: 2/spines: 2\n  host_rate: fast/' >rate_word.yaml
bad rate_word rate_word.yaml 'rate_word\.yaml:7:' -- \
	"topology.host_rate" "expected a rate such as" "Gbps" "'fast'"

base | sed 's/spines: 2/spines: 2\n  host_delay: 5/' >time_no_unit.yaml
bad time_no_unit time_no_unit.yaml 'time_no_unit\.yaml:7:' -- \
	"topology.host_delay" "with a unit" "'5'"

# --- run lengths: time_limit stops every run, so a later stop_time is refused
base | sed 's/^name: t/name: t\nstop_time: 2s\ntime_limit: 10ms/' >stop_after_limit.yaml
bad stop_after_limit stop_after_limit.yaml 'stop_after_limit\.yaml:2:' -- \
	"stop_time" "2s is after time_limit (10ms)" "expected stop_time at most time_limit"
bad stop_after_limit_set ok.yaml none --set stop_time=20s -- \
	"--set stop_time" "after time_limit (10s)"

# legal values that would make a run meaningless: flows that start when the run
# has ended ("did not complete by 0.0 us"), a threshold below one packet
base | sed 's/size: 10KB/size: 10KB\n  start: 10000s/' >late_start.yaml
bad late_start late_start.yaml 'late_start\.yaml:12:' -- \
	"workload.start" "starts at 10000s" "time_limit 10s" "expected a start before time_limit"
bad late_start_stop ok.yaml none --set stop_time=1ms --set workload.start=1ms -- \
	"--set workload.start" "stop_time 1ms"
{ base; printf 'switch:\n  dt_alpha: 0.0001\n'; } >dt_alpha.yaml
bad dt_alpha dt_alpha.yaml 'dt_alpha\.yaml:13:' -- \
	"switch.dt_alpha" "less than one 4000 B packet" "every packet would be dropped" \
	"expected at least 0.000125"

# --- the time series' memory: a run that ends with its flows is estimated to well
# past its ideal end, not all of time_limit (the 180 us quickstart was refused
# under 64 MiB); one that outgrows it (here a host link that goes down, so the
# flows never end) stops with status 2 and writes nothing
out=$(MPSIM_MEM_LIMIT=64MiB "$MPSIM" validate "$ROOT/examples/quickstart.yaml" 2>&1) ||
	fail ts_quickstart "the quickstart validates under MPSIM_MEM_LIMIT=64MiB" "$out"
{ base; printf 'events:\n  - {at: 1us, link: h0-leaf0, action: down}\noutput:\n  interval: 10us\n  queues: [max:all, max:host_up, max:last_hop]\n'; } >ts_grows.yaml
set +e
MPSIM_MEM_LIMIT=65MiB "$MPSIM" run ts_grows.yaml --out out_ts_grows >run.out 2>run.err
rc=$?
set -e
msg=$(cat run.err)
[[ $rc == 2 && $(grep -c . run.err) == 1 && ! -s run.out ]] ||
	fail ts_grows "exit 2, one line on stderr, nothing on stdout" "exit $rc: $msg $(cat run.out)"
for frag in 'ts_grows.yaml:15: output.interval' "outgrew the memory" "the run was stopped" \
	"expected a longer interval"; do
	grep -qF -- "$frag" <<<"$msg" || fail ts_grows "fragment '$frag'" "$msg"
done
if compgen -G "out_ts_grows*" >/dev/null; then
	fail ts_grows "no out_ts_grows* left behind" "$(ls -d out_ts_grows*)"
fi
{ base; printf 'stop_time: 1s\noutput:\n  interval: 10ns\n  queues: [max:all]\n'; } >ts_stop.yaml
MPSIM_MEM_LIMIT=65MiB bad ts_stop ts_stop.yaml 'ts_stop\.yaml:14:' -- "output.interval" \
	"over stop_time (1s)" "or a shorter stop_time"

# --- nonsense that used to pass silently
{ base; printf 'failures:\n  links: [leaf0-spine1, leaf1-spine0, spine1-leaf0]\n'; } >dup_links.yaml
bad dup_links dup_links.yaml 'dup_links\.yaml:13:' -- \
	"failures.links" "'spine1-leaf0' (item 3) is the link 'leaf0-spine1' (item 1)" "each link once"
{ base; printf 'events:\n  - {at: 10us, link: leaf0-spine1, action: down,\n     value: 10Gbps}\n'; } >down_value.yaml
bad down_value down_value.yaml 'down_value\.yaml:14:' -- \
	"events[0].value" "action down takes no value" "'10Gbps'"
{ base; printf 'sweep:\n  system:\n    a: {transport.window: 4KB}\n    b: {transport.window: 8KB}\npaper:\n  source: x\n  values:\n    - {metric: max_fct, value: 2, when: {system: a},\n       ratio_of: {system: a}}\n'; } >ratio_self.yaml
bad ratio_self ratio_self.yaml 'ratio_self\.yaml:20:' -- \
	"paper.values.ratio_of" "by itself" "differs from when's"
{ base; printf 'switch:\n  mode: lossless\n  pfc_xoff: 20KB\n  pfc_xon_gap: 30KB\n'; } >xon_gap.yaml
bad xon_gap xon_gap.yaml 'xon_gap\.yaml:15:' -- \
	"switch.pfc_xon_gap" "30000 B is more than pfc_xoff (20000 B)" "expected at most pfc_xoff"

# trimming hands a header to the receiver: a transport that cannot tell one
# from data would count it delivered
{ base; printf 'switch:\n  trim: on\n'; } >trim_ref.yaml
bad trim_ref trim_ref.yaml 'trim_ref\.yaml:[0-9]+:' -- \
	"switch.trim" "transport ref does not handle trimmed packets" "transport uet"
{ base | sed 's/type: ref/type: uet/'; printf 'switch:\n  mode: lossless\n  trim: on\n'; } >trim_lossless.yaml
bad trim_lossless trim_lossless.yaml 'trim_lossless\.yaml:[0-9]+:' -- \
	"switch.trim" "expected mode lossy" "nothing to trim"
{ base; printf 'lb:\n  type: hermes\n  rtt_low: 50us\n  rtt_high: 40us\n'; } >hermes_rtt.yaml
bad hermes_rtt hermes_rtt.yaml 'hermes_rtt\.yaml:14:' -- \
	"lb.rtt_low" "50.000 us is above rtt_high (40.000 us)" "expected rtt_low at most rtt_high"
printf 'name: t\ntopology:\n  type: star\n  hosts: 4\nlb:\n  type: hermes\ntransport:\n  type: ref\nworkload:\n  type: permutation\n' >hermes_star.yaml
bad hermes_star hermes_star.yaml 'hermes_star\.yaml:6:' -- \
	"lb.type" "hermes" "1 ToR" "expected a topology with paths to choose"
# CONGA beyond two tiers is defined (lb/conga.c: a tag names the source leaf's
# uplink, later choices hash it): a fat tree runs
printf 'name: t\ntopology:\n  type: fat_tree\n  k: 4\nlb:\n  type: conga\ntransport:\n  type: ref\nworkload:\n  type: permutation\n  size: 10KB\n' >conga_fat.yaml
out=$("$MPSIM" validate conga_fat.yaml 2>&1) || fail conga_fat "conga on a fat tree validates" "$out"
base | sed 's/^name: t/name: -t/' >dash_name.yaml
bad dash_name dash_name.yaml 'dash_name\.yaml:1:' -- "name" "not starting with '.' or '-'" "'-t'"
{ base; printf 'sweep:\n  system:\n    -a: {transport.window: 4KB}\n'; } >dash_variant.yaml
bad dash_variant dash_variant.yaml 'dash_variant\.yaml:14:' -- \
	"sweep.system.-a" "does not start with '-'"
bad out_newline ok.yaml none --out "$(printf 'x\ny')" -- "--out" "without control characters" "0x0a"
[[ ! -e $(printf 'x\ny') ]] || fail out_newline "no folder x<newline>y" "$(ls)"
# a UTF-8 byte-order mark (some editors write one) is read as nothing, in the
# experiment file and in the files it names
printf 'src,dst,bytes,start\n0,1,10KB,0\n' >bom.csv
{ printf '\xef\xbb\xbf'; base | sed 's/type: permutation/type: flows_file\n  file: bom.csv/; /size: 10KB/d'; } >bom.yaml
sed -i '1s/^/\xef\xbb\xbf/' bom.csv
out=$("$MPSIM" validate bom.yaml 2>&1) && [[ $out == *"1 flows"* ]] ||
	fail bom "a file and a flows file that start with a UTF-8 BOM validate" "$out"

# --- fabrics that cannot be built
printf 'name: t\ntopology:\n  type: star\n  hosts: 0\ntransport:\n  type: ref\nworkload:\n  type: permutation\n' >star_zero.yaml
bad star_zero star_zero.yaml 'star_zero\.yaml:4:' -- "topology.hosts" "expected" "got 0"

base | sed 's/hosts_per_leaf: 2/hosts_per_leaf: 0/' >leaf_zero.yaml
bad leaf_zero leaf_zero.yaml 'leaf_zero\.yaml:4:' -- "topology.hosts_per_leaf" "expected" "got 0"

cat >fat_cores.yaml <<'EOF'
name: t
topology:
  type: fat_tree
  k: 0
  pods: 2
  edges_per_pod: 2
  aggs_per_pod: 2
  hosts_per_edge: 2
  cores: 3
  oversubscription: 3
transport:
  type: ref
workload:
  type: permutation
EOF
bad fat_cores fat_cores.yaml 'fat_cores\.yaml:[0-9]+:' -- \
	"topology.cores" "expected a multiple of aggs_per_pod (2)" "got 3"
# any oversubscription builds (fewer cores, slower core links): checked below
for o in 1 2 3 8; do
	sed "s/oversubscription: 3/oversubscription: $o/; s/cores: 3/cores: 4/" fat_cores.yaml >fat_ok.yaml
	"$MPSIM" validate fat_ok.yaml >/dev/null 2>&1 ||
		fail fat_ok "oversubscription $o validates" "$("$MPSIM" validate fat_ok.yaml 2>&1)"
done

base | sed 's/spines: 2/spines: 2\n  uplinks_per_leaf: 3/' >uplinks.yaml
bad uplinks uplinks.yaml 'uplinks\.yaml:[0-9]+:' -- \
	"topology.uplinks_per_leaf" "expected a multiple of spines" "got 3"
strict uplinks "$(grep -qF 'uplinks.yaml:7:' <<<"$err_val" && echo 1 || echo 0)" \
	"the line of the uplinks_per_leaf key (uplinks.yaml:7:)" "$err_val"

# a lossless buffer that cannot hold every port's PFC headroom: refused, saying
# what it needs (a leaf: 4 ports of 37064 B headroom and 4000 B control reserve)
{ base; printf 'switch:\n  mode: lossless\n  buffer: 100KB\n'; } >small_buffer.yaml
bad small_buffer small_buffer.yaml 'small_buffer\.yaml:14:' -- \
	"switch.buffer" "expected more than 164256 B in lossless mode" "got 100000 B" "headroom"
base | sed 's/type: ref/type: ref\n  mtu: 2000B/' >small_mtu.yaml
printf 'switch:\n  mtu: 1500B\n' >>small_mtu.yaml
bad small_mtu small_mtu.yaml 'small_mtu\.yaml:14:' -- \
	"switch.mtu" "at least the transport's mtu (2000 B)" "got 1500 B"

# --- unknown scheme names: the message lists the known ones
base | sed 's/type: ref/type: tcp/' >bad_transport.yaml
bad bad_transport bad_transport.yaml 'bad_transport\.yaml:8:' -- \
	"transport.type" "unknown 'tcp'" "expected one of: ref"
strict bad_transport "$(grep -qF 'type: type:' <<<"$err_val" && echo 0 || echo 1)" \
	"'transport.type: unknown ...' without a repeated 'type:'" "$err_val"
base | sed 's/type: leaf_spine/type: torus/' >bad_topology.yaml
bad bad_topology bad_topology.yaml 'bad_topology\.yaml:3:' -- \
	"topology.type" "unknown 'torus'" "star, dumbbell, leaf_spine, fat_tree"
base | sed 's/type: permutation/type: ring/' >bad_workload.yaml
bad bad_workload bad_workload.yaml 'bad_workload\.yaml:10:' -- \
	"workload.type" "unknown 'ring'" "permutation, incast, all_to_all, flows_file, htsim_cm, poisson, dag"
{ base; printf 'lb:\n  type: hula\n'; } >bad_lb.yaml
bad bad_lb bad_lb.yaml 'bad_lb\.yaml:13:' -- "lb.type" "unknown 'hula'" "ecmp, spray, rr"

# --- CDF files for the poisson workload
base | sed 's/type: permutation/type: poisson\n  cdf: no_such.txt/; /size: 10KB/d' >cdf_missing.yaml
bad cdf_missing cdf_missing.yaml 'cdf_missing\.yaml:11:' -- \
	"workload.cdf" "no_such.txt" "No such file"

printf '100 0\n1000 0.5\n500 0.7\n10000 1\n' >bad_sizes.txt
base | sed 's/type: permutation/type: poisson\n  cdf: bad_sizes.txt/; /size: 10KB/d' >cdf_sizes.yaml
bad cdf_sizes cdf_sizes.yaml 'cdf_sizes\.yaml:[0-9]+:' -- "bad_sizes.txt:3" "non-decreasing" "'500'"
strict cdf_sizes "$(grep -qF 'workload.cdf' <<<"$err_val" && grep -qF 'cdf_sizes.yaml:11:' <<<"$err_val" && echo 1 || echo 0)" \
	"'cdf_sizes.yaml:11: workload.cdf: bad_sizes.txt:3: expected sizes in non-decreasing order ...'" "$err_val"

printf '100 0\n1000 0.5\n5000 0.3\n10000 1\n' >bad_probs.txt
base | sed 's/type: permutation/type: poisson\n  cdf: bad_probs.txt/; /size: 10KB/d' >cdf_probs.yaml
bad cdf_probs cdf_probs.yaml 'cdf_probs\.yaml:[0-9]+:' -- "bad_probs.txt:3" "non-decreasing" "'0.3'"

# the same workload with a good table builds (so the two cases above fail on the table)
printf '100 0\n1000 0.5\n5000 0.7\n10000 1\n' >good.txt
base | sed 's/type: permutation/type: poisson\n  cdf: good.txt\n  duration: 10us/; /size: 10KB/d' >cdf_good.yaml
"$MPSIM" validate cdf_good.yaml >/dev/null 2>&1 ||
	fail cdf_good "a poisson workload with a good CDF validates" "$("$MPSIM" validate cdf_good.yaml 2>&1)"

# --- message DAG files and htsim triggers: the message names the file's own line
printf 'id,src,dst,bytes,deps\na,0,1,10KB,\nb,1,2,10KB,a zz\n' >dangling.csv
base | sed 's/type: permutation/type: dag\n  file: dangling.csv/; /size: 10KB/d' >dag_dangling.yaml
bad dag_dangling dag_dangling.yaml 'dangling\.csv:3:' -- \
	"workload" "deps: expected ids of messages in the file" "'zz'" "no message has that id"
printf '[{"id": 1, "src": 0, "dst": 1, "bytes": 10, "deps": [2]},\n {"id": 2, "src": 1, "dst": 2, "bytes": 10, "deps": [1]}]\n' >ring.json
base | sed 's/type: permutation/type: dag\n  file: ring.json/; /size: 10KB/d' >dag_cycle.yaml
bad dag_cycle dag_cycle.yaml 'ring\.json:1:' -- \
	"expected no cycle" "message '1' waits for '2', which waits for '1'"
printf 'Nodes 4\nConnections 2\nTriggers 1\n0->1 start 0 size 10\n1->2 trigger 1 size 10\ntrigger id 1 oneshot\n' >lonely.cm
base | sed 's/type: permutation/type: htsim_cm\n  file: lonely.cm/; /size: 10KB/d' >cm_trigger.yaml
bad cm_trigger cm_trigger.yaml 'lonely\.cm:5:' -- \
	"trigger 1 (line 6) starts this connection" "no completion can activate it"
# htsim's own all-reduce matrix (triggers) and a good DAG validate
cp "$ROOT/tests/data/htsim_allreduce_4n.cm" .
base | sed 's/type: permutation/type: htsim_cm\n  file: htsim_allreduce_4n.cm/; /size: 10KB/d' >cm_ok.yaml
out=$("$MPSIM" validate cm_ok.yaml 2>&1) && [[ $out == *"28 flows"* ]] ||
	fail cm_ok "htsim_allreduce_4n.cm validates with 28 flows" "$out"
printf 'id,src,dst,bytes,deps\na,0,1,10KB,\nb,1,2,10KB,a\n' >good.csv
base | sed 's/type: permutation/type: dag\n  file: good.csv/; /size: 10KB/d' >dag_ok.yaml
out=$("$MPSIM" validate dag_ok.yaml 2>&1) && [[ $out == *"2 flows"* ]] ||
	fail dag_ok "a good DAG file validates with 2 flows" "$out"

# --- broken YAML
{ base; printf 'output:\n  queues: [1, 2\n'; } >truncated.yaml
bad truncated truncated.yaml 'truncated\.yaml:1[34]:' -- "YAML syntax error" "flow sequence" "line 13"

# (the file names avoid the word "tab", which the messages are checked for)
base | sed 's/^  leaves: 2/\tleaves: 2/' >mixed_indent.yaml
bad mixed_indent mixed_indent.yaml 'mixed_indent\.yaml:5:' -- "YAML syntax error" "tab character"

printf 'name: t\ntopology:\n\ttype: star\ntransport:\n  type: ref\nworkload:\n  type: permutation\n' >hard_indent.yaml
bad hard_indent hard_indent.yaml 'hard_indent\.yaml:3:' -- "YAML syntax error"
strict hard_indent "$(grep -qi 'tab' <<<"$err_val" && echo 1 || echo 0)" \
	"a message that names the tab (e.g. 'tabs cannot indent YAML; use spaces')" "$err_val"

printf 'name: t\ntopology:\n  type: leaf_spine\n  leaves: 2\n spines: 2\ntransport:\n  type: ref\n' >indent.yaml
bad indent indent.yaml 'indent\.yaml:5:' -- "YAML syntax error"

: >empty.yaml
bad empty empty.yaml @empty.yaml -- "topology" "required section missing" "leaf_spine"
printf '# nothing but a comment\n' >comment_only.yaml
bad comment_only comment_only.yaml @comment_only.yaml -- "topology" "required section missing"

# --- problems that depend on the fabric: located at the section
base | sed 's/type: permutation/type: incast\n  senders: 4/' >incast.yaml
bad incast incast.yaml 'incast\.yaml:(9|11):' -- "workload.senders" "expected" "got 4"

{ base; printf 'failures:\n  links: [leaf0-spine7]\n'; } >failed_link.yaml
bad failed_link failed_link.yaml 'failed_link\.yaml:(12|13):' -- \
	"failures.links" "no link named 'leaf0-spine7'"
{ base; printf 'failures:\n  links: [leaf0-spine1]\n'; } >failed_link_ok.yaml
"$MPSIM" validate failed_link_ok.yaml >/dev/null 2>&1 ||
	fail failed_link_ok "an existing link validates" "$("$MPSIM" validate failed_link_ok.yaml 2>&1)"

{ base; printf 'failures:\n  random_tier1: 3\n  tier1_switches: 2\n'; } >tier1_switches.yaml
bad tier1_switches tier1_switches.yaml 'tier1_switches\.yaml:(12|13|14):' -- \
	"failures" "tier1_switches" "divides random_tier1 (3)" "got 2"

{ base; printf 'events:\n  - {at: 10us, link: leaf0-spine9, action: down}\n'; } >event_link.yaml
bad event_link event_link.yaml 'event_link\.yaml:13:' -- "events[0].link" "no link named 'leaf0-spine9'"

# --- sweeps and paper numbers: each point is checked before anything runs
{ base; printf 'sweep:\n  workload.size: [10KB, 2XB]\n'; } >sweep_value.yaml
bad sweep_value sweep_value.yaml 'sweep_value\.yaml:13:' -- "workload.size" "2XB"
{ base; printf 'sweep:\n  topology.leaves: [2, 0]\n'; } >sweep_point.yaml
bad sweep_point sweep_point.yaml 'sweep_point\.yaml:13:' -- "topology.leaves"
{ base; printf 'sweep:\n  size: [10KB]\n'; } >sweep_key.yaml
bad sweep_key sweep_key.yaml 'sweep_key\.yaml:13:' -- "sweep.size" "dotted key"
{ base; printf 'sweep:\n  workload.size: [10KB, 20KB]\n'; } >sweep_ok.yaml
bad sweep_set sweep_ok.yaml 'sweep_ok\.yaml:13:' --set workload.size=4KB -- \
	"sweep.workload.size" "swept" "--set workload.size=4KB"
# the sweep and the paper's numbers are read from the file only: a --set into them
# would change nothing, so it is refused (with a sweep, and without one)
bad set_sweep sweep_ok.yaml none --set sweep.workload.size=4KB -- \
	"--set sweep.workload.size" "read from the file only"
bad set_paper ok.yaml none --set paper.source=x -- "--set paper.source" "edit the file"
{ base; printf 'paper:\n  source: x\n  values:\n    - {metric: max_fc, value: 1ms}\n'; } >paper_metric.yaml
bad paper_metric paper_metric.yaml 'paper_metric\.yaml:15:' -- "paper.values.metric" "max_fct"
{ base; printf 'paper:\n  source: x\n  values:\n    - {metric: max_fct, value: 12}\n'; } >paper_unit.yaml
bad paper_unit paper_unit.yaml 'paper_unit\.yaml:15:' -- "paper.values.value" "a time such as"
{ cat sweep_ok.yaml; printf 'paper:\n  source: x\n  values:\n    - {metric: max_fct, value: 1ms, when: {workload.size: 30KB}}\n'; } >paper_when.yaml
bad paper_when paper_when.yaml 'paper_when\.yaml:17:' -- "paper.values.when.workload.size" "'30KB'"
# variants: a variant that is not a mapping; a bad value inside a variant's section
{ base; printf 'sweep:\n  system:\n    a: {transport.window: 4KB}\n    b: 3\n'; } >variant_kind.yaml
bad variant_kind variant_kind.yaml 'variant_kind\.yaml:15:' -- "sweep.system.b" "expected a mapping"
{ base; printf 'sweep:\n  system:\n    a: {transport.window: 4KB}\n    b: {transport: {type: ref, window: 4XB}}\n'; } >variant_value.yaml
bad variant_value variant_value.yaml 'variant_value\.yaml:15:' -- "transport.window" "4XB"
{ base; printf 'sweep:\n  system:\n    a: {transport: {type: ref, windw: 4KB}}\n'; } >variant_key.yaml
bad variant_key variant_key.yaml 'variant_key\.yaml:14:' -- "transport.windw" "unknown key"
{ base; printf 'sweep:\n  system:\n    a: {transport.window: 4KB}\n    b: {transport.window: 8KB}\npaper:\n  source: x\n  values:\n    - {metric: max_fct, value: 2us, when: {system: a}, ratio_of: {system: b}}\n'; } >ratio_value.yaml
bad ratio_value ratio_value.yaml 'ratio_value\.yaml:19:' -- "paper.values.value" "a ratio"
{ base; printf 'sweep:\n  system:\n    a: {transport.window: 4KB}\n    b: {transport.window: 8KB}\npaper:\n  source: x\n  values:\n    - {metric: max_fct, value: 2, ratio_of: {system: c}}\n'; } >ratio_of.yaml
bad ratio_of ratio_of.yaml 'ratio_of\.yaml:19:' -- "paper.values.ratio_of.system" "'c'"
bad jobs_zero sweep_ok.yaml none --jobs 0 -- "--jobs" "expected a number"

# --- a collective cut into more messages than fit: refused from its parameters,
# before the generator allocates its per-chunk arrays (it allocated first, and
# under a ulimit the allocation failed as "a bug in mpsim", status 3)
{ base | sed '/^workload:/,$d'; printf 'collective:\n  type: allreduce\n  size: 1GB\n  chunk: 1B\n'; } >tiny_chunk.yaml
bad tiny_chunk tiny_chunk.yaml 'tiny_chunk\.yaml:9:' -- "collective: more than" "chunk 1B cuts size 1GB over 4 ranks" \
	"messages" "expected a larger chunk or less data"
export MPSIM_MEM_LIMIT=200MB
bad tiny_chunk_mem tiny_chunk.yaml none --set collective.chunk=2KB -- \
	"collective: more than" "chunk 2KB cuts size 1GB" "GB of memory" "expected a larger chunk"
unset MPSIM_MEM_LIMIT
for a in double_binary_tree halving_doubling; do
	bad "tiny_chunk_$a" tiny_chunk.yaml 'tiny_chunk\.yaml:9:' --set "collective.algorithm=$a" -- \
		"collective: more than" "expected a larger chunk"
done
# under an address-space limit too (not under ASan, which reserves terabytes)
if ! ldd "$MPSIM" 2>/dev/null | grep -q libasan; then
	out=$( (ulimit -v 8000000 && "$MPSIM" validate tiny_chunk.yaml) 2>&1) && rc=0 || rc=$?
	[[ $rc == 2 && $out == *"expected a larger chunk"* ]] ||
		fail tiny_chunk_ulimit "exit 2 and 'expected a larger chunk' under ulimit -v" "exit $rc: $out"
fi

# --- the intra-node fabric and the CAST scheduler
{ base; printf 'server:\n  gpus: 3\n'; } >server_gpus.yaml
bad server_gpus server_gpus.yaml 'server_gpus\.yaml:13:' -- "server.gpus" "a divisor of the fabric's 4 hosts"
{ base; printf 'ccl:\n  type: cast\n  reset_interval: 500us\n'; } >cast_reset.yaml
bad cast_reset cast_reset.yaml 'cast_reset\.yaml:14:' -- "ccl.reset_interval" "at least 1ms"
{ base; printf 'ccl:\n  type: cast\n  qps: 40\n'; } >cast_qps.yaml
bad cast_qps cast_qps.yaml 'cast_qps\.yaml:14:' -- "ccl.qps" "at most 32"

# --- the rail-optimized GPU cluster
rail() { # rail EXTRA-TOPOLOGY-LINE
	printf 'name: t\ntopology:\n  type: rail_optimized\n  servers: 4\n  gpus: 2\n%s\n' "$1"
	printf 'transport:\n  type: ref\nworkload:\n  type: permutation\n  size: 10KB\n'
}
rail '  servers_per_leaf: 3' >rail_spl.yaml
bad rail_spl rail_spl.yaml 'rail_spl\.yaml:6:' -- "topology.servers_per_leaf" "a divisor of servers (4)"
rail '  oversubscription: 3' >rail_over.yaml
bad rail_over rail_over.yaml 'rail_over\.yaml:6:' -- "topology.oversubscription" "a whole number of uplinks"
{ rail '  planes: 1'; printf 'server:\n  gpus: 4\n'; } >rail_gpus.yaml
bad rail_gpus rail_gpus.yaml 'rail_gpus\.yaml:13:' -- "server.gpus" "expected 2 (topology rail_optimized"

# --- the command line
bad set_value ok.yaml none --set topology.leaves=abc -- \
	"--set topology.leaves" "expected a non-negative integer" "'abc'"
# a list where the key takes one value: refused (it crashed with a double free)
bad set_list ok.yaml none --set 'workload.size=[1MB, 2MB]' -- \
	"--set workload.size" "got a sequence of 2" "takes one size" "sweep:"
bad set_no_equals ok.yaml none --set topology.leaves -- "--set" "topology.leaves" "expected key=value"
bad set_unknown ok.yaml none --set topology.leafs=3 -- "--set topology.leafs" "did you mean 'leaves'"
bad seed_negative ok.yaml none --seed -1 -- "--seed" "non-negative integer" "'-1'"
bad seed_text ok.yaml none --seed abc -- "--seed" "non-negative integer" "'abc'"
bad unknown_option ok.yaml none --frobnicate -- "unknown option '--frobnicate'"
bad missing_file no_such.yaml @no_such.yaml -- "cannot open" "No such file"

if ((nknown)); then
	echo "$nknown known-poor message(s) reported above (MPSIM_CLI_STRICT=1 makes them fail)"
fi
finish

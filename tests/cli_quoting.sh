#!/usr/bin/env bash
# cli_quoting.sh MPSIM REPO_ROOT - an experiment file, and a results folder, are data.
#
# Every text a user chooses that reaches an output (a sweep's variant name and
# its key, a paper: section's source and notes, a side file's name, a --set
# value) is fed backquotes, $(...), single and double quotes, HTML, a comma,
# gnuplot's markup and a newline. The run draws its plots (gnuplot, when
# installed), so the gnuplot script is executed: no command may run (no
# canary file appears anywhere), sweep.csv and paper.csv keep one field count
# per row (RFC 4180 quoting) and say the names back whole, summary.json
# parses, and report.html and the experiments' index hold the escaped text,
# never a raw <script>. Then `mpsim plot` on a hand-made hostile results
# folder (as a shared one could be): nothing runs, nothing is written outside
# its plots/, and its report escapes what it shows.
set -euo pipefail

MPSIM=${1:?usage: cli_quoting.sh MPSIM REPO_ROOT}
ROOT=${2:?usage: cli_quoting.sh MPSIM REPO_ROOT}
MPSIM=$(cd "$(dirname "$MPSIM")" && pwd)/$(basename "$MPSIM")
ROOT=$(cd "$ROOT" && pwd)

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
# ctest turns plots off for the command-line tests but cli_plots (tests/tests.cmake);
# this one must draw, since the gnuplot script is what could run a command: a
# run of 8 hosts and two points keeps it to a few seconds
unset MPSIM_NO_PLOTS

nfail=0
fail() { # fail WHAT EXPECTED GOT
	printf 'FAIL [%s]\n  expected: %s\n  got:      %s\n' "$1" "$2" "$3" >&2
	nfail=$((nfail + 1))
}
canaries() { # canaries WHAT: no CANARY_* file anywhere below $T (then none left)
	local found
	found=$(find "$T" -name 'CANARY_q*' 2>/dev/null | head -5 || true)
	[[ -z $found ]] || fail "$1" "no command run (no canary file)" "$found"
	find "$T" -name 'CANARY_q*' -delete 2>/dev/null || true # each check on its own
}
# csv_fields FILE: the distinct field counts of FILE's records, RFC 4180
# (quoted fields may hold commas, doubled quotes and newlines); awk, so that
# it needs nothing beyond a Debian base system
csv_fields() {
	awk 'BEGIN { RS = "\001" } {
		n = 1; q = 0
		for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (c == "\"") q = !q
			else if (c == "," && !q) n++
			else if (c == "\n" && !q) { seen[n] = 1; n = 1 }
		}
		for (k in seen) printf "%s ", k
	}' "$1"
}
json_ok() { # json_ok FILE
	if command -v python3 >/dev/null 2>&1; then
		python3 -m json.tool "$1" >/dev/null
	elif command -v jq >/dev/null 2>&1; then
		jq . "$1" >/dev/null
	fi
}
have_gnuplot=false
command -v gnuplot >/dev/null && have_gnuplot=true

# The hostile text, once as YAML (a double-quoted scalar: \" a quote, \n a
# newline) and once as it reads after parsing.
Y='a`touch CANARY_q1`$(touch CANARY_q2)'"'"'s \"q\" <script>alert(1)</script>, x&y @z ^_{}~\nline2'
K='k`touch CANARY_q3`<i>\"'"'"','

sed -e 's/^name: .*/name: quoting/' -e 's/hosts_per_leaf: 16/hosts_per_leaf: 4/' \
	-e 's/leaves: 8/leaves: 2/' -e 's/size: 2MB/size: 64KB/' \
	"$ROOT/examples/quickstart.yaml" >q.yaml
cat >>q.yaml <<EOF
sweep:
  "$K":
    "$Y": {transport: {type: ref, entropy: fixed}}
    b: {transport: {type: ref, entropy: rr}}
paper:
  source: "src \`touch CANARY_q4\` \$(touch CANARY_q5) <script>alert(2)</script> ' \" , \nline2"
  values:
    - {metric: max_fct, value: 10ms, when: {"$K": b}, note: "n \`touch CANARY_q6\` \$(touch CANARY_q7) <script>alert(3)</script> ' \" , \nline2"}
    - {metric: max_fct, value: 1.5, when: {"$K": b}, ratio_of: {"$K": "$Y"}, note: "r \`touch CANARY_q8\`"}
EOF
mkdir exp && cp q.yaml exp/
set +e
"$MPSIM" run q.yaml --out res/quoting -q >run.out 2>run.err
rc=$?
set -e
[[ $rc == 0 ]] || fail "hostile sweep" "exit 0" "exit $rc: $(head -c 600 run.err)"
canaries "hostile sweep"
if $have_gnuplot; then
	[[ -s res/quoting/plots/plot.gp && -s res/quoting/plots/sweep_max_fct.png ]] ||
		fail "hostile sweep" "plots drawn (plot.gp, sweep_max_fct.png)" "$(ls res/quoting/plots 2>&1)"
	grep -q '`' res/quoting/plots/plot.gp || fail "plot.gp" "the names in it" "no backquote"
	# the ratio's keys come from paper.csv's ratio_of and ratio_point, whole
	grep -q '^ratio_0	' res/quoting/plots/figures.tsv ||
		fail "hostile sweep" "the ratio's figure (ratio_0)" "$(cut -f1 res/quoting/plots/figures.tsv | tr '\n' ' ')"
fi
for f in sweep.csv paper.csv; do
	n=$(csv_fields "res/quoting/$f")
	[[ $n =~ ^[0-9]+\ $ ]] || fail "$f" "one field count per record" "counts: $n"
done
grep -qF '"a`touch CANARY_q1`$(touch CANARY_q2)'"'"'s ""q"" <script>alert(1)</script>, x&y @z ^_{}~' \
	res/quoting/sweep.csv || fail sweep.csv "the variant name whole, quoted" "$(head -c 600 res/quoting/sweep.csv)"
grep -qF 'n `touch CANARY_q6` $(touch CANARY_q7) <script>alert(3)</script> '"'"' "" , ' \
	res/quoting/paper.csv || fail paper.csv "the note whole, quoted" "$(cat res/quoting/paper.csv)"
for j in res/quoting/*/summary.json; do
	json_ok "$j" || fail "$j" "valid JSON" "$(head -c 300 "$j")"
done
for h in res/quoting/report.html res/quoting/*/report.html; do
	if grep -qi '<script' "$h"; then
		fail "$h" "no raw <script>" "$(grep -i '<script' "$h" | head -c 300)"
	fi
done
grep -qF '&lt;script&gt;alert(3)&lt;/script&gt; &#39; &quot;' res/quoting/report.html ||
	fail report.html "the note escaped" "$(grep -F 'alert(3)' res/quoting/report.html | head -c 300)"
# the experiments' index: the paper's source
"$MPSIM" index exp res >index.out 2>&1 || fail index "exit 0" "$(cat index.out)"
grep -qi '<script' res/index.html && fail index.html "no raw <script>" "$(grep -i '<script' res/index.html)"
grep -qF '&lt;script&gt;alert(2)' res/index.html || fail index.html "the source escaped" "$(head -c 600 res/index.html)"
canaries "index"

# A side file whose name is hostile: config.yaml quotes it (it parses again)
# and report.html escapes it.
F='fl`touch CANARY_q9`$(touch CANARY_q10)'"'"'"<b>,x.csv'
printf 'src,dst,bytes,start\n0,5,64KB,0\n3,1,64KB,1us\n' >"$F"
sed -e 's/^name: .*/name: sidefile/' -e 's/hosts_per_leaf: 16/hosts_per_leaf: 4/' \
	-e 's/leaves: 8/leaves: 2/' -e '/^workload:/,/^$/d' "$ROOT/examples/quickstart.yaml" >s.yaml
printf 'workload:\n  type: flows_file\n  file: %s\n' "'${F//\'/\'\'}'" >>s.yaml
set +e
"$MPSIM" run s.yaml --out side -q >side.out 2>side.err
rc=$?
set -e
[[ $rc == 0 ]] || fail "side file" "exit 0" "exit $rc: $(head -c 600 side.err)"
canaries "side file"
if [[ -f side/config.yaml ]]; then
	MPSIM_NO_PLOTS=1 "$MPSIM" validate side/config.yaml >/dev/null 2>side2.err ||
		fail "side file" "config.yaml validates again" "$(cat side2.err)"
	grep -qi '<b>' side/report.html && fail "side file" "the name escaped in report.html" "a raw <b>"
	json_ok side/summary.json || fail "side file" "valid summary.json" "$(head -c 300 side/summary.json)"
fi

# --set: a hostile value is refused as a sentence or taken as data, never run
set +e
MPSIM_NO_PLOTS=1 "$MPSIM" validate q.yaml --set 'name=x`touch CANARY_q11`' >set.out 2>set.err
rc=$?
set -e
[[ $rc == 2 ]] || fail "--set" "exit 2 (a name is letters, digits, . _ -)" "exit $rc"
canaries "--set"

# A shared results folder, made by hand: `mpsim plot` draws it as data.
mkdir -p h/p1
cp res/quoting/sweep.csv h/
{
	echo 'point,metric,unit,paper,ours,ours_over_paper,note'
	echo '"k=b","max_fct",us,1,2,2,"x`touch CANARY_q12`"'
	echo '"k=b","max_fct of k=a`touch CANARY_q13`'"'"'",x,1,2,2,"<script>alert(4)</script>"'
} >h/paper.csv
printf 'id,bytes,fct_us,slowdown,completed\n0,1000,10,1,1\n1,2000,20,1.5,1\n' >h/p1/flows.csv
{
	echo 'time_us,series,value'
	for t in 1 2 3; do
		echo "$t,../../x\`touch CANARY_q14\`'\$(touch CANARY_q15):a'b\"c<script>,$t"
		echo "$t,\"queue_bytes:p\"\"q'\`touch CANARY_q16\`
r\",$t"
	done
} >h/p1/timeseries.csv
echo '{"name": "<script>alert(5)</script>", "transport": "<i>t</i>"}' >h/p1/summary.json
set +e
"$MPSIM" plot h >plot.out 2>plot.err
rc=$?
set -e
canaries "mpsim plot on a hand-made folder"
if $have_gnuplot; then
	[[ $rc == 0 ]] || fail "mpsim plot" "exit 0" "exit $rc: $(head -c 600 plot.err)"
	[[ -s h/p1/plots/plot.gp ]] || fail "mpsim plot" "the point's plots" "$(ls h/p1 2>&1)"
	stray=$(find "$T" -name 'x`*' | head -3)
	[[ -z $stray ]] || fail "mpsim plot" "no file named from the folder's text" "$stray"
	for hh in h/report.html h/p1/report.html; do
		grep -qi '<script' "$hh" && fail "$hh" "no raw <script>" "$(grep -i '<script' "$hh" | head -c 300)"
	done
	grep -qF '&lt;script&gt;alert(5)' h/p1/report.html || fail "h/p1/report.html" "the name escaped" "none"
else
	echo "SKIP (mpsim plot): gnuplot is not installed"
fi

if ((nfail)); then
	echo "cli_quoting: $nfail check(s) failed" >&2
	exit 1
fi
echo "cli_quoting: all checks passed"

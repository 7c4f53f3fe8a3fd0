#!/usr/bin/env bash
# cli_plots.sh MPSIM REPO_ROOT - plots and report.html of results folders.
#
# The quick example and experiment files are run; each results folder (and each
# sweep point's) must hold plots/figures.tsv naming at least one figure, a PNG
# and an SVG per figure, and report.html whose structure holds: every image it
# inlines names a PNG that exists, every table has as many rows as its
# data-rows says, the paper table as many rows as paper.csv, and every paper
# value of paper.csv appears in it. `mpsim plot` without gnuplot on PATH names
# the package to install and exits 2.
set -euo pipefail
source "$(dirname "$0")/clilib.sh" "$@"

# check_report DIR: report.html's images and tables against the folder
check_report() {
	local d=$1 r=$1/report.html
	[ -s "$r" ] || { fail "$d" "report.html" "none"; return; }
	grep -q '^<!DOCTYPE html>' "$r" || fail "$r" "an HTML page" "$(head -c 80 "$r")"
	local f
	for f in $(grep -o 'data-file="[^"]*"' "$r" | cut -d'"' -f2); do
		[ -s "$d/$f" ] || fail "$r" "inlined $f exists" "missing"
	done
	# every table: its <tr> rows, less the header, equal data-rows
	local bad
	bad=$(awk '/<table/ { match($0, /data-rows="[0-9]+"/); want = substr($0, RSTART + 11, RLENGTH - 12); n = -1; in_t = 1 }
		in_t && /^<tr>/ { n++ }
		/<\/table>/ && in_t { if (n != want) print want " rows declared, " n " found"; in_t = 0 }' "$r")
	[ -z "$bad" ] || fail "$r tables" "rows as declared" "$bad"
	# every link within the page lands on a section of it (a sweep without a
	# paper section once linked #paper)
	local a
	for a in $(grep -o 'href="#[^"]*"' "$r" | cut -d'#' -f2 | tr -d '"' | sort -u); do
		grep -q "id=\"$a\"" "$r" || fail "$r links" "a section id=\"$a\"" "none"
	done
	if [ -f "$d/paper.csv" ]; then
		local want got
		want=$(($(wc -l <"$d/paper.csv") - 1))
		got=$(grep -o '<table class="paper" data-rows="[0-9]*"' "$r" | grep -o '[0-9]*"$' | tr -d '"')
		[ "$got" = "$want" ] || fail "$r paper table" "$want rows (paper.csv)" "${got:-none}"
		# every paper value, in its row, to the four digits the table shows
		local paper_tab v shown i=0
		paper_tab=$(awk '/<table class="paper"/ { p = 1 } p && /^<tr><td>/ { print } /<\/table>/ { p = 0 }' "$r")
		while IFS= read -r line; do
			i=$((i + 1))
			v=$(printf '%s\n' "$line" | sed 's/"[^"]*"//g' | cut -d, -f4)
			shown=$(sed -n "${i}p" <<<"$paper_tab" | sed 's/<td class="n">/\n@/g' | grep '^@' | sed -n 1p | sed 's/^@//; s/<.*//')
			awk -v a="$v" -v b="$shown" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a;
				exit !(b != "" && d <= 1e-3 * m + 1e-9) }' ||
				fail "$r paper value" "$v shown in row $i" "'$shown'"
		done < <(tail -n +2 "$d/paper.csv")
	fi
}

# check_plots DIR: figures.tsv names figures, each a PNG and an SVG
check_plots() {
	local d=$1 n=0 name
	[ -s "$d/plots/figures.tsv" ] || { fail "$d" "plots/figures.tsv with figures" "none"; return; }
	while IFS=$'\t' read -r name _; do
		n=$((n + 1))
		[ -s "$d/plots/$name.png" ] || fail "$d/plots" "$name.png" "missing"
		[ -s "$d/plots/$name.svg" ] || fail "$d/plots" "$name.svg" "missing"
	done <"$d/plots/figures.tsv"
	[ "$n" -gt 0 ] || fail "$d/plots" "at least one figure" "0"
}

if command -v gnuplot >/dev/null; then
	# the quick files (under a few seconds each); the others take minutes
	for f in examples/quickstart.yaml examples/incast_lossless.yaml \
		experiments/udmp/collision.yaml experiments/udmp/incast3.yaml \
		experiments/strack/incast_32to1_strack.yaml; do
		out=$T/$(basename "$f" .yaml)
		if ! "$MPSIM" run "$ROOT/$f" --out "$out" -q -j 2 >"$T/log" 2>&1; then
			fail "$f" "runs" "$(tail -3 "$T/log")"
			continue
		fi
		check_plots "$out"
		check_report "$out"
		if [ -f "$out/sweep.csv" ]; then
			for p in "$out"/*/; do
				[ -f "$p/summary.json" ] || continue
				check_plots "$p"
				check_report "$p"
			done
		fi
	done
	# a sweep with a paper section and ratio entries: its ratio figure is drawn
	s=$T/incast3
	grep -q '^ratio_\|^sweep_' "$s/plots/figures.tsv" ||
		fail "incast3 sweep figures" "sweep_* figures" "$(cut -f1 "$s/plots/figures.tsv" | tr '\n' ' ')"
	# ratio figures are drawn from paper.csv's ratio_of and ratio_point, so a
	# variant name with a comma draws too; a folder written before those
	# columns draws its ratios from the metric's label, the same figures but
	# for such a name
	sed -e 's/^name: .*/name: ratios/' -e 's/hosts_per_leaf: 16/hosts_per_leaf: 4/' \
		-e 's/leaves: 8/leaves: 2/' "$ROOT/examples/quickstart.yaml" >"$T/ratios.yaml"
	cat >>"$T/ratios.yaml" <<'EOF2'
sweep:
  system: {"spray, rr": {transport.entropy: rr}, ecmp: {transport.entropy: fixed}}
  workload.size: [64KB, 256KB]
paper:
  source: "made up, for the figures"
  values:
    - {metric: max_fct, value: 1.5, when: {system: ecmp}, ratio_of: {system: "spray, rr"}}
    - {metric: mean_fct, value: 3, when: {workload.size: 64KB}, ratio_of: {workload.size: 256KB}}
EOF2
	r=$T/ratios
	if "$MPSIM" run "$T/ratios.yaml" --out "$r" -q -j 2 >"$T/log" 2>&1; then
		head -1 "$r/paper.csv" | grep -q ',note,ratio_of,ratio_point$' ||
			fail "paper.csv" "ratio_of and ratio_point last" "$(head -1 "$r/paper.csv")"
		grep -q '^"system=ecmp size=64KB","max_fct of system=spray, rr",.*,"system","system-spray++rr_size-64KB"$' \
			"$r/paper.csv" || fail "paper.csv" "a ratio's keys and other point" "$(cat "$r/paper.csv")"
		figs=$(cut -f1 "$r/plots/figures.tsv" | grep '^ratio_' | tr '\n' ' ')
		[ "$figs" = "ratio_0 ratio_1 " ] || fail "ratio figures" "ratio_0 ratio_1" "$figs"
		mkdir "$T/old" && cp "$r/sweep.csv" "$T/old/"
		awk -F, '{ sub(/,[^,]*,[^,]*$/, "") } { print }' "$r/paper.csv" >"$T/old/paper.csv"
		"$MPSIM" plot "$T/old" >"$T/log" 2>&1 || fail "mpsim plot (old paper.csv)" "exit 0" "$(cat "$T/log")"
		figs=$(cut -f1 "$T/old/plots/figures.tsv" | grep '^ratio_' | tr '\n' ' ')
		[ "$figs" = "ratio_1 " ] || fail "ratio figures (old paper.csv)" "ratio_1 alone" "$figs"
		cmp -s "$r/plots/ratio_1.dat" "$T/old/plots/ratio_1.dat" ||
			fail "ratio_1.dat (old paper.csv)" "the same data" "$(diff "$r/plots/ratio_1.dat" "$T/old/plots/ratio_1.dat" | head -5)"
		# a sweep run in part (--only): the line with no ratio keeps its block
		# (gnuplot's index skips a block of comments alone, and ecmp's
		# line would be drawn from nothing) and is left out of the plot
		"$MPSIM" run "$T/ratios.yaml" --out "$T/ronly" -q -j 2 --only system=ecmp >"$T/log" 2>&1 ||
			fail "ratio sweep, --only" "runs" "$(tail -3 "$T/log")"
		n=$(gnuplot -e "set print '-'; stats '$T/ronly/plots/ratio_1.dat' index 1 using 1:2 nooutput; print STATS_records" 2>/dev/null || true)
		[ "$n" = 1 ] || fail "ratio_1.dat, --only" "ecmp's ratio at gnuplot's index 1" "$n: $(cat "$T/ronly/plots/ratio_1.dat")"
		grep -q "'ratio_1.dat' index 1 using" "$T/ronly/plots/plot.gp" && ! grep -q "'ratio_1.dat' index 0 using" "$T/ronly/plots/plot.gp" ||
			fail "ratio_1, --only" "ecmp's line alone drawn" "$(grep ratio_1.dat "$T/ronly/plots/plot.gp")"
	else
		fail "ratio sweep" "runs" "$(tail -3 "$T/log")"
	fi
	# the time series of the collision experiment are drawn (its result is there)
	grep -q '^ts_goodput_gbps' "$T/collision/system-udmp/plots/figures.tsv" ||
		fail "collision plots" "ts_goodput_gbps" "$(cut -f1 "$T/collision/system-udmp/plots/figures.tsv" | tr '\n' ' ')"
	# an incomplete flow (collision stops on purpose): finish, FCT and slowdown
	# empty, never 0; delivered_bytes says how far it got
	bad=$(awk -F, 'NR > 1 && $11 == 0 && ($6 != "" || $7 != "" || $9 != "" || $12 <= 0)' \
		"$T/collision/system-udmp/flows.csv")
	n0=$(awk -F, 'NR > 1 && $11 == 0' "$T/collision/system-udmp/flows.csv" | wc -l)
	[ "$n0" -gt 0 ] && [ -z "$bad" ] ||
		fail "incomplete flows in flows.csv" "empty finish/FCT/slowdown, delivered_bytes > 0" "$n0 incomplete; $bad"
	# a single run's paper values are marked on its time series (the STrack
	# incast's 95 us to settle, on the queue figure)
	grep -q "^set label 'paper queue_settle 95 us" "$T/incast_32to1_strack/plots/plot.gp" ||
		fail "paper marks on ts_queue_bytes" "a label for queue_settle" "none"
	# a sweep of collectives: one CCT CDF per algorithm, a line per transport,
	# each line every job of its point
	cat >"$T/cct.yaml" <<'EOF2'
name: cct_sweep
seed: 1
topology: {type: leaf_spine, hosts_per_leaf: 4, leaves: 4, spines: 2, host_rate: 100Gbps, fabric_rate: 100Gbps}
transport: {type: strack}
collective: {type: allreduce, algorithm: ring, size: 256KB, ranks: 4, jobs: 4, placement: random}
sweep:
  transport.type: [strack, roce]
  collective.algorithm: [ring, halving_doubling]
EOF2
	if "$MPSIM" run "$T/cct.yaml" --out "$T/cct" -q -j 2 >"$T/log" 2>&1; then
		figs=$(cut -f1 "$T/cct/plots/figures.tsv" | grep -c '^sweep_cct_cdf_')
		[ "$figs" = 2 ] || fail "collective sweep" "2 sweep_cct_cdf figures" "$figs"
		lines=$(grep -c '^# .*fraction of 4 jobs' "$T/cct/plots/sweep_cct_cdf_0.dat")
		rows=$(grep -c '^[0-9]' "$T/cct/plots/sweep_cct_cdf_0.dat")
		[ "$lines" = 2 ] && [ "$rows" = 8 ] ||
			fail "sweep_cct_cdf_0.dat" "2 lines of 4 jobs" "$lines lines, $rows rows"
	else
		fail "collective sweep" "runs" "$(tail -3 "$T/log")"
	fi
	# redrawing a folder gives the same figure list
	cp "$T/quickstart/plots/figures.tsv" "$T/figs.before"
	"$MPSIM" plot "$T/quickstart" >/dev/null
	cmp -s "$T/figs.before" "$T/quickstart/plots/figures.tsv" ||
		fail "mpsim plot again" "the same figures" "$(cat "$T/quickstart/plots/figures.tsv")"
else
	echo "SKIP: gnuplot is not installed (scripts/deps.sh installs gnuplot-nox)"
	MPSIM_NO_PLOTS=1 "$MPSIM" run "$ROOT/examples/quickstart.yaml" --out "$T/quickstart" -q
fi

# the README's sweep snippets validate when pasted at the end of the quickstart file
for k in 1 2; do
	{
		cat "$ROOT/examples/quickstart.yaml"
		awk -v k=$k '/^A file may sweep parameters/ { on = 1 }
			on && /^```yaml/ { n++; inb = (n == k); next }
			inb && /^```/ { exit }
			inb { print }' "$ROOT/README.md"
	} >"$T/snippet$k.yaml"
	grep -q '^sweep:' "$T/snippet$k.yaml" || fail "README snippet $k" "a sweep: block" "none"
	MPSIM_NO_PLOTS=1 "$MPSIM" validate "$T/snippet$k.yaml" >"$T/log" 2>&1 ||
		fail "README snippet $k in quickstart.yaml" "validates" "$(cat "$T/log")"
done

# the experiments' index: one row per experiment file, each table as declared
"$MPSIM" index "$ROOT/experiments" "$T/idx" >/dev/null || fail "mpsim index" "exit 0" "exit $?"
nexp=$(find "$ROOT/experiments" -name '*.yaml' | wc -l)
rows=$(grep -o 'class="experiments" data-rows="[0-9]*"' "$T/idx/index.html" | grep -o '[0-9]*' | awk '{ s += $1 } END { print s + 0 }')
[ "$rows" = "$nexp" ] || fail "index.html" "$nexp experiment rows" "$rows"
bad=$(awk '/<table/ { match($0, /data-rows="[0-9]+"/); want = substr($0, RSTART + 11, RLENGTH - 12); n = -1; t = 1 }
	t && /^<tr>/ { n++ } /<\/table>/ && t { if (n != want) print want " declared, " n " found"; t = 0 }' "$T/idx/index.html")
[ -z "$bad" ] || fail "index.html tables" "rows as declared" "$bad"

# --progress: a plain line per sweep point, naming it, even without a terminal
MPSIM_NO_PLOTS=1 "$MPSIM" run "$ROOT/experiments/udmp/incast3.yaml" --out "$T/prog" -q -j 2 \
	--progress 2>"$T/prog.err" >/dev/null || fail "--progress run" "exit 0" "$(tail -2 "$T/prog.err")"
for pt in "pattern=b system=udmp" "pattern=c system=mprdma"; do
	grep -q "^  $pt: t=.*flows 3/3" "$T/prog.err" ||
		fail "--progress" "a line '$pt: t=... flows 3/3'" "$(cat "$T/prog.err")"
done
grep -q $'\r' "$T/prog.err" && fail "--progress" "plain lines, no carriage return" "a \\r"

# without gnuplot: mpsim plot names the package, exit 2
set +e
msg=$(env PATH=/nonexistent "$MPSIM" plot "$T/quickstart" 2>&1)
rc=$?
set -e
[ "$rc" = 2 ] || fail "plot without gnuplot" "exit 2" "exit $rc"
grep -q "gnuplot-nox" <<<"$msg" || fail "plot without gnuplot" "names gnuplot-nox" "$msg"
# a folder that is not a results folder: exit 2, a sentence
set +e
msg=$("$MPSIM" plot "$T" 2>&1)
rc=$?
set -e
[ "$rc" = 2 ] || fail "plot on a non-results folder" "exit 2" "exit $rc: $msg"

finish

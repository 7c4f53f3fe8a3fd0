#!/usr/bin/env bash
# Copies two figures of each experiment's latest results into
# experiments/plots/<name>/, the PNGs each paper folder's README
# (experiments/<folder>/README.md) shows beside its tables: a comparison with the paper first (ratio_*, then sweep_* with the
# paper's marks), else a queue over time, else the first figure; for a sweep
# without a paper section, the first time series of its first two points.
# experiments/plots/<name>/figures.txt, where it exists, names the figures
# instead (a line each: FIG of the sweep, or POINT FIG of one point). Each copy
# also rewrites the links of the experiment's "Plots of `DIR/FILE.yaml`" line in
# experiments/DIR/README.md to the figures just copied (an experiment whose
# section has no such line keeps its hand-written links, and is named).
#   scripts/experiment_plots.sh [RESULTS_DIR [NAME...]]
#                                (default results; NAME: only these experiments,
#                                by their `name:`)
#   scripts/experiment_plots.sh --check          every experiment has figures
#                                                linked, every link resolves
# Run the experiments first (mpsim run FILE, with gnuplot installed, or
# mpsim plot results/NAME afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
# the README that shows experiment REL (DIR/FILE.yaml): its folder's
doc() { echo "experiments/${1%%/*}/README.md"; }

# --check: what a reader of the folders' READMEs relies on, checked without
# running anything (a test calls this)
if [ "${1:-}" = --check ]; then
	bad=0
	for f in experiments/*/*.yaml; do
		name=$(awk '$1 == "name:" { print $2; exit }' "$f")
		DOC=$(doc "${f#experiments/}")
		if ! grep -q "(\.\./plots/$name/[^)]*\.png)" "$DOC" 2>/dev/null; then
			echo "$DOC: no figure of ${f#experiments/} (../plots/$name/)" >&2
			bad=1
		fi
	done
	for DOC in experiments/*/README.md; do
		while read -r link; do
			if [ ! -f "$(dirname "$DOC")/$link" ]; then
				echo "$DOC: link to a missing file: $link" >&2
				bad=1
			fi
		done < <(grep -o '](\.\./plots/[^)]*)' "$DOC" | sed 's/^](//; s/)$//' | sort -u)
	done
	exit $bad
fi

RES=${1:-results}
shift $(($# > 0 ? 1 : 0))
ONLY=" $* "
# links NAME REL FIG...: the "Plots of" line of experiment REL, its links
# rewritten (whatever the line says before its links stays)
links() {
	local name=$1 rel=$2 head tail="" fig DOC
	shift 2
	DOC=$(doc "$rel")
	head="Plots of \`$rel\` (\`mpsim run experiments/$rel\`; all of them in \`results/$name/report.html\`):"
	for fig in "$@"; do
		tail+=" [![$fig](../plots/$name/$fig.png)](../plots/$name/$fig.png)"
	done
	if grep -q "^Plots of \`$rel\` " "$DOC"; then
		awk -v key="Plots of \`$rel\` " -v head="$head" -v tail="$tail" '
			index($0, key) == 1 {
				i = index($0, "): [![")
				print (i ? substr($0, 1, i + 1) : head) tail
				next
			}
			{ print }' "$DOC" >"$DOC.tmp"
		mv "$DOC.tmp" "$DOC"
	else
		echo "$DOC: no 'Plots of \`$rel\`' line; its links were left as they are" >&2
	fi
}

for f in experiments/*/*.yaml; do
	name=$(awk '$1 == "name:" { print $2; exit }' "$f")
	[ "$ONLY" = "  " ] || [[ $ONLY == *" $name "* ]] || continue
	figs=$RES/$name/plots/figures.tsv
	if [ ! -s "$figs" ]; then
		echo "$f: no plots in $RES/$name (not run yet?)" >&2
		continue
	fi
	mkdir -p "experiments/plots/$name"
	rm -f "experiments/plots/$name"/*.png
	# figures chosen by hand: experiments/plots/NAME/figures.txt, a line per
	# figure, "FIG" of the sweep's own plots or "POINT FIG" of a point's
	pick=experiments/plots/$name/figures.txt
	if [ -f "$pick" ]; then
		got=()
		while read -r a b; do
			[ -n "$a" ] && [ "${a:0:1}" != "#" ] || continue
			if [ -n "$b" ]; then
				cp "$RES/$name/$a/plots/$b.png" "experiments/plots/$name/${a}_$b.png"
				got+=("${a}_$b")
			else
				cp "$RES/$name/plots/$a.png" "experiments/plots/$name/"
				got+=("$a")
			fi
		done <"$pick"
		links "$name" "${f#experiments/}" "${got[@]}"
		echo "$name: ${got[*]}"
		continue
	fi
	# a sweep without a paper section is a time-series figure (UDMP Fig. 1, 4):
	# the first time series of its first two points, side by side
	if [ -f "$RES/$name/sweep.csv" ] && [ ! -f "$RES/$name/paper.csv" ]; then
		got=()
		for p in "$RES/$name"/*/; do
			[ ${#got[@]} -lt 2 ] || break
			figs_p=$(cut -f1 "$p/plots/figures.tsv" 2>/dev/null || true)
			fig=$(grep -m1 '^ts_goodput' <<<"$figs_p" || grep -m1 '^ts_' <<<"$figs_p" || true)
			[ -n "$fig" ] || continue
			pt=$(basename "$p")
			cp "$p/plots/$fig.png" "experiments/plots/$name/${pt}_$fig.png"
			got+=("${pt}_$fig")
		done
		if [ ${#got[@]} -gt 0 ]; then
			links "$name" "${f#experiments/}" "${got[@]}"
			echo "$name: ${got[*]}"
			continue
		fi
	fi
	picked=()
	order=(ratio_ sweep_ ts_queue ts_ '')
	# without the paper's marks, the papers' usual axes: max FCT and slowdown;
	# with only ratios in paper.csv, the max FCT beside the ratio
	if [ ! -f "$RES/$name/paper.csv" ]; then
		order=(sweep_max_fct sweep_max_slowdown sweep_ ts_queue ts_ '')
	elif ! tail -n +2 "$RES/$name/paper.csv" | sed 's/^"[^"]*",//' | grep -qv '^"[^"]* of '; then
		order=(ratio_ sweep_max_fct sweep_ ts_queue ts_ '')
	fi
	for pre in "${order[@]}"; do
		while IFS=$'\t' read -r fig _; do
			[ ${#picked[@]} -lt 2 ] || break
			[[ $fig == "$pre"* ]] || continue
			[[ " ${picked[*]:-} " == *" $fig "* ]] && continue
			picked+=("$fig")
		done <"$figs"
	done
	for fig in "${picked[@]}"; do
		cp "$RES/$name/plots/$fig.png" "experiments/plots/$name/"
	done
	links "$name" "${f#experiments/}" "${picked[@]}"
	echo "$name: ${picked[*]}"
done

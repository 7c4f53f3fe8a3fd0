#!/usr/bin/env bash
# paths.sh POINT_DIR... - the note's Fig. 11 view: bandwidth per network path
# (each ToR-to-spine link, averaged over the run, from ports.csv) for each
# point folder given: mean, min, max and coefficient of variation over the
# leaf-to-spine links, and the same for spine-to-leaf.
set -euo pipefail
printf '| point | up mean (Gb/s) | up min | up max | up CoV | down mean | down min | down max | down CoV |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for d in "$@"; do
	awk -F, -v name="$(basename "$d")" '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$col["group"] == "tier1_up" || $col["group"] == "tier1_down" {
		g = $col["group"]; v = $col["utilisation"] * $col["rate_gbps"]
		n[g]++; s[g] += v; q[g] += v * v
		if (!(g in lo) || v < lo[g]) lo[g] = v
		if (!(g in hi) || v > hi[g]) hi[g] = v
	}
	END {
		printf "| %s", name
		split("tier1_up tier1_down", gs, " ")
		for (k = 1; k <= 2; k++) {
			g = gs[k]; m = s[g] / n[g]; sd = sqrt(q[g] / n[g] - m * m)
			printf " | %.0f | %.0f | %.0f | %.2f", m, lo[g], hi[g], (m > 0 ? sd / m : 0)
		}
		printf " |\n"
	}' "$d/ports.csv"
done

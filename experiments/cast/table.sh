#!/usr/bin/env bash
# table.sh RESULTS_DIR - the bus bandwidth of a CAST sweep (sweep.csv of
# allreduce.yaml and the like) as a markdown table: one row per size, the four
# modes in Gb/s, and CAST's gain over the same mode without it.
set -euo pipefail
csv=${1:?usage: table.sh RESULTS_DIR}/sweep.csv
awk -F, '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
	m = $col["mode"]; s = (("collective.size" in col) ? $col["collective.size"] : "-")
	if (!(s in seen)) { seen[s] = 1; order[++n] = s }
	bw[s, m] = $col["busbw_mean_Gbps"]
}
END {
	print "| size | split-no-cast | split-cast | gain | rr-no-cast | rr-cast | gain |"
	print "|---|---|---|---|---|---|---|"
	for (k = 1; k <= n; k++) {
		s = order[k]
		a = bw[s, "split-no-cast"]; b = bw[s, "split-cast"]
		c = bw[s, "rr-no-cast"]; d = bw[s, "rr-cast"]
		printf "| %s | %.0f | %.0f | %+.1f%% | %.0f | %.0f | %+.1f%% |\n", s, a, b,
		       (a > 0 ? 100 * (b / a - 1) : 0), c, d, (c > 0 ? 100 * (d / c - 1) : 0)
	}
}' "$csv"

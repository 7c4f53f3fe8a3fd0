#!/usr/bin/env bash
# pernic.sh POINT_DIR [BIN_US] - per-NIC throughput over time of a collective
# run whose `output.utilisation` lists every host's uplink (pernic.yaml): for
# each job, its iterations' bus bandwidth, then over the job's run (start to
# its last iteration's end) the share of NIC samples under 60% of line rate,
# the longest stretch any one NIC spends under 60%, how long the mean of the
# job's NICs is under 60% (in all, and the longest stretch), and per BIN_US
# (default 100) the mean and the lowest NIC's utilisation, in %. Utilisation
# is what the NIC's link carries, data and ACKs, against its line rate.
set -euo pipefail
d=$1
bin=${2:-100}
awk -F, -v bin="$bin" '
FNR == 1 { f++; for (i = 1; i <= NF; i++) col[f, $i] = i; next }
f == 1 { job[$col[1, "src"]] = $col[1, "job"]; next }   # flows.csv: a job hosts
f == 2 {                                               # collectives.csv
	j = $col[2, "job"]; jobs[j] = 1; if (j + 0 > nj) nj = j + 0
	it[j] = it[j] sprintf(" %.0f", $col[2, "busbw_gbps"])
	if ($col[2, "finish_us"] > end[j]) end[j] = $col[2, "finish_us"]
	next
}
$2 ~ /^utilisation:h[0-9]+-/ {                         # timeseries.csv
	h = $2; sub(/^utilisation:h/, "", h); sub(/-.*/, "", h)
	t = $1 + 0; u[h, t] = $3; if (!(t in seen)) { seen[t] = 1; ts[nt++] = t }
}
END {
	dt = ts[1] - ts[0]
	for (j = 0; j <= nj; j++) {
		if (!(j in jobs)) continue
		nn = 0; for (h in job) if (job[h] == j) nic[nn++] = h
		ns = below = 0; delete run; best = jlong = jall = jrun = 0
		line = ""; bsum = bcnt = 0; bend = bin; delete bmin
		for (k = 0; k < nt; k++) {
			t = ts[k]; if (t < dt || t > end[j]) continue
			m = 0
			for (i = 0; i < nn; i++) {
				v = u[nic[i], t]; m += v; ns++
				if (v < 0.6) { below++; run[i]++; if (run[i] > best) best = run[i] } else run[i] = 0
				bn[i] += v
			}
			m /= nn
			if (m < 0.6) { jall++; jrun++; if (jrun > jlong) jlong = jrun } else jrun = 0
			bsum += m; bcnt++
			if (t >= bend || k == nt - 1 || ts[k + 1] > end[j]) {
				lo = 1e9; for (i = 0; i < nn; i++) { if (bn[i] / bcnt < lo) lo = bn[i] / bcnt; bn[i] = 0 }
				line = line sprintf(" %.0f:%.0f/%.0f", bend, 100 * bsum / bcnt, 100 * lo)
				bsum = bcnt = 0; bend += bin
			}
		}
		printf "job %s: %d NICs, iterations (Gb/s)%s, end %.0f us; NIC samples under 60%%: %.1f%%, " \
		       "longest NIC stretch %.0f us; job mean under 60%% for %.0f us (longest %.0f us)\n",
		       j, nn, it[j], end[j], 100 * below / ns, best * dt, jall * dt, jlong * dt
		printf "  per %s us (end: mean/lowest NIC %%):%s\n", bin, line
	}
}' "$d/flows.csv" "$d/collectives.csv" "$d/timeseries.csv"

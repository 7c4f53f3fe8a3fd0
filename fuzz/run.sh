#!/usr/bin/env bash
# fuzz/run.sh [BUILD_DIR] - the value fuzzer (fuzz/values.c) under libFuzzer, at
# the lowest CPU priority, for FUZZ_TIME seconds in all (default 600), with
# FUZZ_JOBS worker processes (default 1). Seeds: fuzz/corpus/. What it grows
# and finds goes to FUZZ_WORK (default fuzz/work/, not committed): corpus/,
# findings/ (crash-*, timeout-*, oom-*: inputs to replay with
# `BUILD_DIR/fuzz_values FILE` or `build/fuzz_replay FILE`) and log.txt.
# Each case has 20 s of wall time and 3 GB of RSS (ASan included); mpsim's own
# memory plan is capped lower (fuzz/values.c), so an oversized experiment must
# be refused by its estimate.
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(cd "${1:-build-fuzz}" && pwd)
T=${FUZZ_TIME:-600}
W=$(mkdir -p "${FUZZ_WORK:-fuzz/work}" && cd "${FUZZ_WORK:-fuzz/work}" && pwd)
mkdir -p "$W/corpus" "$W/findings"
cd fuzz/corpus # seeds carry their side files (#@file); a case runs in $TMPDIR
nice -n 19 "$B/fuzz_values" -fork="${FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 \
	-ignore_ooms=1 -timeout=20 -rss_limit_mb=3072 -max_len=16384 -max_total_time="$T" \
	-artifact_prefix="$W/findings/" -print_final_stats=1 "$W/corpus" . 2>&1 | tee "$W/log.txt"

#!/usr/bin/env bash
# The live-events benchmark of BENCHMARKS.md (issue target: 2,000 open streams while actions run
# at a steady 1,000/s, each event delivered within 50 ms p99 of its commit, state reads and
# actions within 10% of their figures with no streams open, the memory per open stream stated).
# Builds release, then bench/events.py starts FlowStack on a fresh SQLite file, runs wrk on reads
# and actions with no stream open, opens the streams (the server's RSS before and after), runs
# wrk again with them open, drives actions at the steady rate on the streamed sessions and
# times each event, closes the streams, runs wrk a third time, and prints the summary table.
# Usage: bench/events.sh [seconds per phase] [rounds of wrk] [streams] [actions per second]   (needs the Debian package wrk)
#   FLOWSTACK_BIN=PATH uses that binary instead of building release
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
seconds=${1:-10}
rounds=${2:-1}
streams=${3:-2000}
rate=${4:-1000}
if [ -n "${FLOWSTACK_BIN:-}" ]; then
    command -v wrk >/dev/null || { echo "bench: install wrk (apt-get install -y wrk)" >&2; exit 2; }
    flowstack=$FLOWSTACK_BIN
else
    flowstack=$(release_flowstack)
fi
exec python3 bench/events.py "$flowstack" "$seconds" --rounds "$rounds" --streams "$streams" --rate "$rate"

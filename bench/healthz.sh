#!/usr/bin/env bash
# Builds release, starts flowstack on a fresh database, and runs wrk against /healthz and a 404.
# Usage: bench/healthz.sh [seconds]   (needs the Debian package wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
seconds=${1:-10}
bin=$(release_flowstack)
work=$(mktemp -d)
"$bin" serve --port 0 --db "$work/bench.sqlite" >"$work/out.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
port=$(listening_port "$work/out.log")
echo "== GET /healthz (one SQLite read per request)"
wrk -t2 -c64 -d"${seconds}s" --latency "http://127.0.0.1:$port/healthz"
echo "== GET /v1/nope (404 problem, no database)"
wrk -t2 -c64 -d"${seconds}s" --latency "http://127.0.0.1:$port/v1/nope"

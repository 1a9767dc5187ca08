#!/usr/bin/env bash
# The benchmark harness of BENCHMARKS.md: builds release (FlowStack and the Hummingbird 2 peer
# in bench/peer), starts FlowStack on a fresh database with 500 onboarded users' sessions, and
# runs wrk -t2 -c64 against each route, alternating with the peer's hello world, then prints
# requests/s, p50, p99, non-2xx and the ratio to the peer.
# Usage: bench/run.sh [seconds per run] [rounds]   (needs the Debian package wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
seconds=${1:-10}
rounds=${2:-2}
flowstack=$(release_flowstack)
(cd bench/peer && swift build -c release >/dev/null)
peer="$(cd bench/peer && swift build -c release --show-bin-path)/HelloPeer"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

"$flowstack" serve --port 0 --db "$work/bench.sqlite" --log-level warning >"$work/server.log" 2>&1 &
pids+=($!)
port=$(listening_port "$work/server.log")
peer_port=$((port + 1))
"$peer" "$peer_port" >"$work/peer.log" 2>&1 &
pids+=($!)
python3 bench/make_sessions.py "$port" 500 >"$work/sessions.txt"
export SESSIONS="$work/sessions.txt"

# run NAME URL [SCRIPT]: one wrk run; prints "NAME req/s p50 p99 non2xx"
run() {
    local name=$1 url=$2 script=${3:-}
    local out
    if [ -n "$script" ]; then out=$(wrk -t2 -c64 -d"${seconds}s" --latency -s "$script" "$url"); else out=$(wrk -t2 -c64 -d"${seconds}s" --latency "$url"); fi
    local rps p50 p99 non2xx
    rps=$(printf '%s\n' "$out" | awk '/Requests\/sec/ {print $2}')
    p50=$(printf '%s\n' "$out" | awk '$1 == "50%" {print $2}')
    p99=$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')
    non2xx=$(printf '%s\n' "$out" | awk '/Non-2xx/ {print $5}')
    printf '%-22s %10s req/s   p50 %-9s p99 %-9s non-2xx %s\n' "$name" "$rps" "$p50" "$p99" "${non2xx:-0}"
    echo "$rps" >"$work/last"
}

printf 'wrk -t2 -c64 -d%ss, %s rounds, FlowStack and the peer alternately\n' "$seconds" "$rounds"
for round in $(seq "$rounds"); do
    echo "-- round $round"
    run "peer hello world" "http://127.0.0.1:$peer_port/"; peer_rps=$(cat "$work/last")
    run "actions (durable)" "http://127.0.0.1:$port" bench/actions.lua; actions=$(cat "$work/last")
    run "peer hello world" "http://127.0.0.1:$peer_port/"; peer_rps2=$(cat "$work/last")
    run "state reads" "http://127.0.0.1:$port" bench/reads.lua; reads=$(cat "$work/last")
    run "session creation" "http://127.0.0.1:$port" bench/create.lua; creates=$(cat "$work/last")
    run "/healthz" "http://127.0.0.1:$port/healthz"; health=$(cat "$work/last")
    peer_mean=$(python3 -c "print(($peer_rps + $peer_rps2) / 2)")
    python3 - "$peer_mean" "$actions" "$reads" "$creates" "$health" <<'PY'
import sys
peer, actions, reads, creates, health = map(float, sys.argv[1:])
print(f"ratios to the peer ({peer:.0f} req/s): actions {actions / peer:.2f}x (target 1.0x), "
      f"reads {reads / peer:.2f}x (target 1.5x), creation {creates / peer:.2f}x, /healthz {health / peer:.2f}x")
PY
done

#!/usr/bin/env bash
# The Swift client's taps over a slow network (BENCHMARKS.md, "The Swift client"): starts
# FlowStack (release) on a fresh SQLite file behind bench/delay_proxy.py, which adds DELAY ms each
# way (50 by default: a 100 ms round trip), and runs `flowstack-tap bench` through the proxy:
# TAPS taps of random walks of the sample app with the local engine, with server predictions
# only, and with neither; then with the local engine while a second device acts on the session.
# Usage: bench/client.sh [taps] [delay ms]
#   FLOWSTACK_BIN=PATH, TAP_BIN=PATH use those binaries instead of building release
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
taps=${1:-1000}
delay=${2:-50}
if [ -z "${FLOWSTACK_BIN:-}" ] || [ -z "${TAP_BIN:-}" ]; then
    swift build -c release --product flowstack >/dev/null
    swift build -c release --product flowstack-tap >/dev/null
fi
flowstack=${FLOWSTACK_BIN:-$(swift build -c release --show-bin-path)/flowstack}
tap=${TAP_BIN:-$(swift build -c release --show-bin-path)/flowstack-tap}
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT
"$flowstack" serve --port 0 --db "$work/db.sqlite" --log-level warning >"$work/server.log" 2>&1 &
pids+=($!)
port=$(listening_port "$work/server.log")
[ -n "$port" ] || { echo "bench: flowstack did not start" >&2; cat "$work/server.log" >&2; exit 1; }
python3 bench/delay_proxy.py 0 "$port" "$delay" >"$work/proxy.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q "listening on" "$work/proxy.log" && break; sleep 0.1; done
proxy=$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$work/proxy.log")
[ -n "$proxy" ] || { echo "bench: the proxy did not start" >&2; exit 1; }
rtt=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$proxy/healthz")
echo "FlowStack behind a proxy adding ${delay} ms each way (/healthz through it: ${rtt} s); $taps taps a run"
for mode in engine predictions none; do
    "$tap" bench --server "http://127.0.0.1:$proxy" --taps "$taps" --mode "$mode"
done
"$tap" bench --server "http://127.0.0.1:$proxy" --taps "$taps" --mode engine --second-device

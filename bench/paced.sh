#!/usr/bin/env bash
# Where a paced action's tail is: durable actions at one offered rate (bench/run.sh's paced run:
# BENCH_PACED_RATE, 3,200 a second over wrk's 64 connections unless set), on a fresh SQLite file
# with 500 onboarded users' sessions. Each round prints wrk's p50, p90 and p99 (the client's
# time: the queue before the server reads the request included) beside the server's own time
# for the actions route, read from `flowstack_http_request_duration_seconds` before and after
# the round: the share of actions at or under each bound. When wrk's p99 is well above the
# bound under which the server's own time puts 99% of actions, the tail is the queue that
# bursts of the connections make on the cores, not the action's own work.
# KEYED=1 keys every action, as the clients do.
# Usage: bench/paced.sh FLOWSTACK_BIN [rounds] [seconds per round]   (needs the Debian package wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
[ $# -ge 1 ] || { echo "usage: bench/paced.sh FLOWSTACK_BIN [rounds] [seconds per round]" >&2; exit 2; }
bin=$1
rounds=${2:-3}
seconds=${3:-10}
rate=${BENCH_PACED_RATE:-3200}
command -v wrk >/dev/null || { echo "bench: install wrk (apt-get install -y wrk)" >&2; exit 2; }
work=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
admin=paced-bench-admin-token-0123456789abcdef
FLOWSTACK_ADMIN_TOKEN=$admin "$bin" serve --port 0 --db "$work/db.sqlite" --log-level warning >"$work/server.log" 2>&1 &
pid=$!
port=$(listening_port "$work/server.log")
[ -n "$port" ] || { echo "bench: flowstack did not start" >&2; cat "$work/server.log" >&2; exit 1; }
python3 bench/make_sessions.py "$port" 500 >"$work/sessions.txt"
metrics() { curl -fs "http://127.0.0.1:$port/metrics" -H "Authorization: Bearer $admin" >"$1"; }
echo "paced at $rate actions/s (wrk -t2 -c64 -d${seconds}s, PACE_MS=$((64000 / rate))), KEYED=${KEYED:-0}"
for round in $(seq "$rounds"); do
    metrics "$work/before.txt"
    KEYED=${KEYED:-0} PACE_MS=$((64000 / rate)) SESSIONS="$work/sessions.txt" \
        wrk -t2 -c64 -d"${seconds}s" --latency -s bench/actions.lua "http://127.0.0.1:$port/" >"$work/wrk.txt"
    metrics "$work/after.txt"
    python3 - "$round" "$work/wrk.txt" "$work/before.txt" "$work/after.txt" <<'PY'
import re, sys
round_, wrk, before, after = sys.argv[1:]
text = open(wrk).read()
latency = {p: re.search(rf"^\s*{p}%\s+(\S+)", text, re.M) for p in ("50", "90", "99")}
rps = re.search(r"Requests/sec:\s+(\S+)", text)
def buckets(path):
    found = {}
    for line in open(path):
        m = re.match(r'flowstack_http_request_duration_seconds_bucket\{route="/v1/sessions/\{id\}/actions",le="([^"]+)"\} (\d+)', line)
        if m:
            found[m.group(1)] = int(m.group(2))
    return found
a, b = buckets(before), buckets(after)
total = b.get("+Inf", 0) - a.get("+Inf", 0)
client = " ".join(f"p{p} {m.group(1) if m else '?'}" for p, m in latency.items())
print(f"round {round_}: {rps.group(1) if rps else '?'} actions/s; wrk {client}")
if total:
    shares = [f"<= {float(k) * 1000:g} ms {100 * (b[k] - a.get(k, 0)) / total:.2f}%" for k in ("0.00025", "0.0005", "0.001", "0.0025", "0.005")]
    print(f"  the server's own time ({total} actions): " + ", ".join(shares))
PY
done

#!/usr/bin/env bash
# What predictions cost (BENCHMARKS.md, "Predictions"): the server's CPU time per answer and the
# answer's size, for actions and state reads, plain and with ?predict=true. Builds release, starts
# FlowStack on a fresh SQLite file with 500 sessions of new users on onboarding.first, and runs
# wrk -t2 -c64 in turns: actions plain, actions predicted, reads plain, reads predicted (the
# actions walk each session between onboarding.first and onboarding.second: bench/onboarding.lua).
# The CPU time is the server's utime + stime (/proc/PID/stat) over each run, divided by the
# requests wrk counted; it does not include wrk, which shares the machine.
# Usage: bench/predictions.sh [seconds per run] [rounds]      (needs the Debian package wrk)
#   FLOWSTACK_BIN=PATH uses that binary instead of building release
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
seconds=${1:-10}
rounds=${2:-2}
flowstack=${FLOWSTACK_BIN:-$(release_flowstack)}
work=$(mktemp -d)
"$flowstack" serve --port 0 --db "$work/bench.sqlite" --log-level warning >"$work/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
port=$(listening_port "$work/server.log")
[ -n "$port" ] || { echo "bench: flowstack did not start" >&2; cat "$work/server.log" >&2; exit 1; }
base="http://127.0.0.1:$port"
python3 bench/make_sessions.py "$port" 500 --onboarding >"$work/sessions.txt"
export SESSIONS="$work/sessions.txt" THREADS=2

cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
# run NAME SCRIPT QUERY: one wrk run; prints requests/s, p99, non-2xx and server CPU per request
run() {
    local name=$1 script=$2 query=$3 before after out
    python3 bench/make_sessions.py "$port" --rewind <"$work/sessions.txt"
    before=$(cpu_ticks)
    out=$(QUERY="$query" wrk -t2 -c64 -d"${seconds}s" --latency -s "$script" "$base")
    after=$(cpu_ticks)
    python3 - "$name" "$before" "$after" "$hz" <<PY
import re, sys
name, before, after, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
out = """$out"""
requests = int(re.search(r"(\d+) requests in", out).group(1))
rps = re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)
p99 = re.search(r"\s99%\s+(\S+)", out).group(1)
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
cpu_us = (after - before) / hz * 1e6 / requests
print(f"{name:<26} {float(rps):>10.0f} req/s   p99 {p99:<9} non-2xx {non2xx.group(1) if non2xx else 0:<6} server CPU {cpu_us:6.1f} us/request")
PY
}

# The size of each answer, on one session at onboarding.second (five predictions) and at
# onboarding.first (one).
read -r sid token < <(head -1 "$work/sessions.txt")
auth="Authorization: Bearer $token"
size() { curl -s -o /dev/null -w '%{size_download}' "$@"; }
plain_first=$(size "$base/v1/sessions/$sid" -H "$auth")
predicted_first=$(size "$base/v1/sessions/$sid?predict=true" -H "$auth")
curl -s "$base/v1/sessions/$sid/actions" -H "$auth" -d '{"type":"onboarding.showSecond"}' >/dev/null
plain_second=$(size "$base/v1/sessions/$sid" -H "$auth")
predicted_second=$(size "$base/v1/sessions/$sid?predict=true" -H "$auth")
curl -s "$base/v1/sessions/$sid/actions" -H "$auth" -d '{"type":"onboarding.returnToFirst"}' >/dev/null
echo "answer size: onboarding.first $plain_first bytes, $predicted_first with predictions (1);" \
     "onboarding.second $plain_second bytes, $predicted_second with predictions (5)"

printf 'wrk -t2 -c64 -d%ss, %s rounds, 500 sessions walking onboarding.first <-> onboarding.second\n' "$seconds" "$rounds"
for round in $(seq "$rounds"); do
    echo "-- round $round"
    run "actions" bench/onboarding.lua ""
    run "actions ?predict=true" bench/onboarding.lua "?predict=true"
    run "state reads" bench/reads.lua ""
    run "state reads ?predict=true" bench/reads.lua "?predict=true"
done

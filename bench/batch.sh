#!/usr/bin/env bash
# The batch benchmark of BENCHMARKS.md (issue 21: the cost of a batch of 20 offline taps).
# Builds release, starts FlowStack on a fresh database (SQLite, or BENCH_DB=postgresql: a
# throwaway PostgreSQL, scripts/pgserver.py) with 500 onboarded users' sessions, then each round
# runs, in turn: wrk -t2 -c64 posting single actions (bench/actions.lua), without and with an
# Idempotency-Key each (KEYED=1: its key stored, as each batch item's is); wrk -t2 -c64 posting
# batches of 20 taps (bench/batch.lua, each session with at most one batch in flight); and
# wrk -t1 -c1 posting keyed single actions, then batches, one after another (the latency of
# each with nothing else running).
# Around each run it reads the server's CPU time (/proc/PID/stat, user + system), so each line
# says what a request and what a tap cost the server, beside wrk's requests/s, p50 and p99.
# Usage: bench/batch.sh [seconds per run] [rounds]   (needs the Debian package wrk)
#   FLOWSTACK_BIN=PATH uses that binary instead of building release; BATCH=N taps per batch (20)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
seconds=${1:-10}
rounds=${2:-2}
store=${BENCH_DB:-sqlite}
export BATCH=${BATCH:-20}
if [ -n "${FLOWSTACK_BIN:-}" ]; then
    command -v wrk >/dev/null || { echo "bench: install wrk (apt-get install -y wrk)" >&2; exit 2; }
    flowstack=$FLOWSTACK_BIN
else
    flowstack=$(release_flowstack)
fi
work=$(mktemp -d)
pid="" pg_dir=""
trap '[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
      [ -z "$pg_dir" ] || python3 scripts/pgserver.py stop --dir "$pg_dir"; rm -rf "$work"' EXIT
case $store in
    sqlite) db="$work/bench.sqlite" ;;
    postgresql | postgres)
        pg_env=$(python3 scripts/pgserver.py start) || { echo "bench: PostgreSQL did not start" >&2; exit 1; }
        eval "$pg_env"
        db=$URL pg_dir=$DIR ;;
    *) echo "usage: BENCH_DB=sqlite|postgresql bench/batch.sh [seconds per run] [rounds]" >&2; exit 2 ;;
esac
"$flowstack" serve --port 0 --db "$db" --log-level warning >"$work/server.log" 2>&1 &
pid=$!
port=$(listening_port "$work/server.log")
[ -n "$port" ] || { echo "bench: flowstack did not start" >&2; cat "$work/server.log" >&2; exit 1; }
python3 bench/make_sessions.py "$port" 500 >"$work/sessions.txt"
base="http://127.0.0.1:$port"

# The server's CPU time so far, in clock ticks (utime + stime: fields 14 and 15 of /proc/PID/stat).
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat"; }
ticks_per_second=$(getconf CLK_TCK)

# with_versions: "ID TOKEN VERSION" for each session, read now, so no batch is made on a stale version
with_versions() {
    python3 - "$port" "$work/sessions.txt" >"$work/sessions-versions.txt" <<'PY'
import http.client, json, sys
connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
for line in open(sys.argv[2]):
    sid, token = line.split()
    connection.request("GET", f"/v1/sessions/{sid}", headers={"Authorization": f"Bearer {token}"})
    print(sid, token, json.loads(connection.getresponse().read())["version"])
PY
}

# run NAME THREADS CONNECTIONS SCRIPT TAPS_PER_REQUEST: one wrk run and its line of figures
run() {
    local name=$1 threads=$2 connections=$3 script=$4 taps=$5
    local before after out
    if [ "$script" = bench/batch.lua ]; then
        with_versions
        export SESSIONS="$work/sessions-versions.txt"
    else
        export SESSIONS="$work/sessions.txt"
    fi
    before=$(cpu_ticks)
    out=$(THREADS=$threads wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency -s "$script" "$base")
    after=$(cpu_ticks)
    printf '%s\n' "$out" | grep '^batch:' || true
    printf '%s\n' "$out" >"$work/wrk.out"
    python3 - "$name" "$taps" "$((after - before))" "$ticks_per_second" "$work/wrk.out" <<'PY'
import re, sys
name, taps, ticks, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
text = open(sys.argv[5]).read()
requests = int(re.search(r"(\d+) requests in", text).group(1))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p50 = re.search(r"^\s+50%\s+(\S+)", text, re.M).group(1)
p99 = re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1)
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
cpu_us = ticks / hz * 1e6 / max(requests, 1)
print(f"{name:<30} {rps:>9.0f} req/s {rps * taps:>9.0f} taps/s   p50 {p50:<9} p99 {p99:<9} "
      f"server CPU {cpu_us:>7.0f} us/request {cpu_us / taps:>6.1f} us/tap   non-2xx {non2xx.group(1) if non2xx else 0}")
PY
}

printf 'FlowStack on %s, 500 onboarded sessions, %ss per run, %s rounds, batches of %s taps\n' "$store" "$seconds" "$rounds" "$BATCH"
for round in $(seq "$rounds"); do
    echo "-- round $round"
    run "single actions (-t2 -c64)" 2 64 bench/actions.lua 1
    KEYED=1 run "single, with keys (-t2 -c64)" 2 64 bench/actions.lua 1
    run "batches of $BATCH (-t2 -c64)" 2 64 bench/batch.lua "$BATCH"
    KEYED=1 run "single, with keys (-t1 -c1)" 1 1 bench/actions.lua 1
    run "batches of $BATCH (-t1 -c1)" 1 1 bench/batch.lua "$BATCH"
done

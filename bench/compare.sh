#!/usr/bin/env bash
# Two builds side by side (BENCHMARKS.md): durable actions (bench/actions.lua) and state reads
# (bench/reads.lua) with wrk -t2 -c64, against build A and build B in turns, each on a fresh
# SQLite file with 500 onboarded users' sessions; prints requests/s, p99 and the server's CPU
# time per request (utime + stime from /proc/PID/stat over the run), and that time split by the
# server's threads (/proc/PID/task: the HTTP threads, the writer, the checkpointer), then the
# B/A ratios and each build's split.
# With `postgresql` each build gets a database of its own on one throwaway PostgreSQL
# (scripts/pgserver.py) instead of a SQLite file.
# WORKLOADS="actions reads connect" adds `connect`: GET /v1/nope (a 404 from the router) on a new
# connection per request (wrk's "Connection: close"), what accepting a connection costs.
# WORKLOADS="create" runs session creation (bench/create.lua: a new user's session per request).
# B_PAGE_SIZE=N (SQLite) makes B's database file with pages of N bytes before B starts on it
# (SQLite's default is 4,096), so one binary can be compared with itself on another page size.
# B_SQL="..." (SQLite) is run on B's database file once B has started and migrated it, before its
# sessions are made: one binary compared with itself on another schema, such as without an index
# (B_SQL="DROP INDEX actions_snapshots", what the log's index of snapshots costs a commit; what
# needs the index then walks or scans, so only the writes are measured fairly).
# SERVE_ARGS="..." is added to both servers' `serve` (SERVE_ARGS="--cache-sessions 50": most reads
# and actions of the 500 sessions miss the cache and read their session from the database).
# GZIP=1 has every request say Accept-Encoding: gzip, as browsers and URLSession do; the sample
# app's state (973 bytes at home) is under the default --gzip-min-bytes of 1,024, so add
# SERVE_ARGS="--gzip-min-bytes 512" to have its answers compressed, as a larger app's are.
# SESSIONS=N makes N sessions instead of 500: with KEYED=1, 500 sessions take some 160 keys each
# per 8-second round and grow each session's filter of used keys (UsedKeys) and its stored
# answers; SESSIONS=20000 keeps each under 60 keys for five rounds.
# Usage: bench/compare.sh A_BIN B_BIN [seconds per run] [rounds] [sqlite|postgresql]   (needs the Debian package wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
[ $# -ge 2 ] || { echo "usage: bench/compare.sh A_BIN B_BIN [seconds] [rounds] [sqlite|postgresql]" >&2; exit 2; }
bins=("$1" "$2")
seconds=${3:-10}
rounds=${4:-3}
store=${5:-sqlite}
workloads=${WORKLOADS:-actions reads}
command -v wrk >/dev/null || { echo "bench: install wrk (apt-get install -y wrk)" >&2; exit 2; }
work=$(mktemp -d)
pids=()
pg_dir=""
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null
      [ -z "$pg_dir" ] || python3 scripts/pgserver.py stop --dir "$pg_dir"; rm -rf "$work"' EXIT
dbs=("$work/db0.sqlite" "$work/db1.sqlite")
if [ "$store" = postgresql ]; then
    pg_env=$(python3 scripts/pgserver.py start) || { echo "bench: PostgreSQL did not start" >&2; exit 1; }
    eval "$pg_env"
    pg_dir=$DIR
    dbs[0]=$URL
    dbs[1]=$(python3 scripts/pgserver.py add-role --dir "$pg_dir" --role build_b --password build_b | sed -n 's/^URL=//p')
fi
if [ -n "${B_SQL:-}" ] && [ "$store" != sqlite ]; then
    echo "bench: B_SQL runs on a SQLite file; it has no meaning with $store" >&2; exit 2
fi
if [ -n "${B_PAGE_SIZE:-}" ] && [ "$store" = sqlite ]; then
    sqlite3 "${dbs[1]}" "PRAGMA page_size = $B_PAGE_SIZE; CREATE TABLE page_size_set (x); DROP TABLE page_size_set;"
fi
for i in 0 1; do
    # shellcheck disable=SC2086 # SERVE_ARGS is words
    "${bins[$i]}" serve --port 0 --db "${dbs[$i]}" --log-level warning ${SERVE_ARGS:-} >"$work/server$i.log" 2>&1 &
    pids+=($!)
    port=$(listening_port "$work/server$i.log")
    [ -n "$port" ] || { echo "bench: ${bins[$i]} did not start" >&2; cat "$work/server$i.log" >&2; exit 1; }
    echo "$port" >"$work/port$i"
    if [ "$i" = 1 ] && [ -n "${B_SQL:-}" ]; then sqlite3 -cmd ".timeout 5000" "${dbs[1]}" "$B_SQL"; fi
    python3 bench/make_sessions.py "$port" "${SESSIONS:-500}" >"$work/sessions$i.txt"
done
hz=$(getconf CLK_TCK)
# threads PID: "name:ticks" of each of the server's threads by name (utime + stime, summed over
# threads of one name: the HTTP threads, the writer, the checkpointer, ...), on one line
threads() {
    for task in /proc/"$1"/task/*; do
        printf '%s %s\n' "$(tr ' ' _ <"$task/comm")" "$(awk '{print $14 + $15}' "$task/stat")"
    done 2>/dev/null | awk '{t[$1] += $2} END {for (n in t) printf "%s:%d ", n, t[n]}'
}
# run I NAME SCRIPT: one wrk run on build I; appends "I NAME rps p99 cpu_us thread:cpu_us..." to $work/results
run() {
    local i=$1 name=$2 script=$3 port pid before after out threads_before threads_after
    port=$(cat "$work/port$i") pid=${pids[$i]}
    threads_before=$(threads "$pid")
    before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    if [ "$script" = connect ]; then
        out=$(wrk -t2 -c64 -d"${seconds}s" --latency -H "Connection: close" "http://127.0.0.1:$port/v1/nope")
    else
        out=$(SESSIONS="$work/sessions$i.txt" wrk -t2 -c64 -d"${seconds}s" --latency -s "$script" "http://127.0.0.1:$port")
    fi
    after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    threads_after=$(threads "$pid")
    OUT="$out" BEFORE="$threads_before" AFTER="$threads_after" python3 - "$i" "$name" "$before" "$after" "$hz" <<'PY' | tee -a "$work/results"
import os, re, sys
i, name, before, after, hz = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
out = os.environ["OUT"]
requests = int(re.search(r"(\d+) requests in", out).group(1))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
p99 = re.search(r"\s99%\s+(\S+)", out).group(1)
ticks = lambda text: {n: int(t) for n, t in (f.rsplit(":", 1) for f in text.split())}
start, end = ticks(os.environ["BEFORE"]), ticks(os.environ["AFTER"])
# Each kind of thread's CPU per request, busiest first; threads under 0.1 us are left out.
split = sorted(((n, (end[n] - start.get(n, 0)) / hz * 1e6 / requests) for n in end), key=lambda x: -x[1])
threads = " ".join(f"{n}:{us:.1f}" for n, us in split if us >= 0.1)
print(f"{'AB'[int(i)]} {name} {rps:.0f} {p99} {(after - before) / hz * 1e6 / requests:.1f} {threads}")
PY
}
echo "A: ${bins[0]}"
echo "B: ${bins[1]}"
echo "wrk -t2 -c64 -d${seconds}s, $rounds rounds, on $store; build name req/s p99 server-CPU-us/request thread:CPU-us/request..." 
for round in $(seq "$rounds"); do
    echo "-- round $round"
    order=(0 1); [ $((round % 2)) -eq 0 ] && order=(1 0)
    for workload in $workloads; do
        case $workload in
            actions) script=bench/actions.lua ;;
            reads) script=bench/reads.lua ;;
            connect) script=connect ;;
            create) script=bench/create.lua ;;
            *) echo "bench: unknown workload $workload" >&2; exit 2 ;;
        esac
        for i in "${order[@]}"; do run "$i" "$workload" "$script"; done
    done
done
python3 - "$work/results" <<'PY'
import sys
from statistics import mean
rows = [line.split() for line in open(sys.argv[1])]
for name in dict.fromkeys(r[1] for r in rows):
    a = [r for r in rows if r[0] == "A" and r[1] == name]
    b = [r for r in rows if r[0] == "B" and r[1] == name]
    rps = mean(float(r[2]) for r in b) / mean(float(r[2]) for r in a)
    cpu = mean(float(r[4]) for r in b) / mean(float(r[4]) for r in a)
    print(f"{name}: B/A requests/s {rps:.2f}x, server CPU per request {cpu:.2f}x "
          f"(A {mean(float(r[4]) for r in a):.1f} us, B {mean(float(r[4]) for r in b):.1f} us)")
    # Where the CPU went, by kind of thread: libmicrohttpd's HTTP threads (MHD-worker), the
    # writer (fs-commit), the checkpointer (fs-checkpoint), and so on.
    for build, runs in (("A", a), ("B", b)):
        split = {}
        for r in runs:
            for field in r[5:]:
                thread, us = field.rsplit(":", 1)
                split.setdefault(thread, []).append(float(us))
        print(f"  {build} per request by thread: " + ", ".join(
            f"{thread} {sum(v) / len(runs):.1f} us" for thread, v in sorted(split.items(), key=lambda x: -sum(x[1]))))
PY

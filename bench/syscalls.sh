#!/usr/bin/env bash
# What the kernel does for a durable action: system calls by name, context switches and CPU
# migrations per action, counted by `perf stat` on the server's process while wrk (-t2 -c64,
# bench/actions.lua) sends keyed actions at full load to a fresh SQLite file with 500 onboarded
# users' sessions, after 2 s of warm-up. Actions are the answers counted by the
# `flowstack_http_requests_total` series of the actions route over the same window, so wrk's own
# start and end are not counted (read at the start and the end of perf's own window, by the
# command it times). KEYED=0 sends actions without an Idempotency-Key.
# Needs root (tracepoints), perf (Debian linux-perf) and wrk.
# Usage: bench/syscalls.sh FLOWSTACK_BIN [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
[ $# -ge 1 ] || { echo "usage: bench/syscalls.sh FLOWSTACK_BIN [seconds]" >&2; exit 2; }
for tool in perf wrk; do
    command -v "$tool" >/dev/null || { echo "bench: install $tool (apt-get install -y linux-perf wrk)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "bench: syscall tracepoints need root" >&2; exit 2; }
bin=$1
seconds=${2:-4}
work=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
"$bin" serve --port 0 --db "$work/db.sqlite" --log-level warning >"$work/server.log" 2>&1 &
pid=$!
port=$(listening_port "$work/server.log")
[ -n "$port" ] || { echo "bench: flowstack did not start" >&2; cat "$work/server.log" >&2; exit 1; }
python3 bench/make_sessions.py "$port" 500 >"$work/sessions.txt"
# Answers of the actions route so far, from the server's metrics (every status), into $1.
answered() {
    curl -fsS "http://127.0.0.1:$port/metrics" |
        awk '/^flowstack_http_requests_total\{.*route="\/v1\/sessions\/\{id\}\/actions"/ {sum += $NF} END {printf "%d", sum}' >"$1"
}
export -f answered
export port
calls=(futex epoll_wait epoll_ctl read write recvfrom sendmsg sendto writev pread64 pwrite64 fdatasync fsync fcntl)
events="context-switches,cpu-migrations,task-clock"
for call in "${calls[@]}"; do events="$events,syscalls:sys_enter_$call"; done
KEYED=${KEYED:-1} SESSIONS="$work/sessions.txt" \
    wrk -t2 -c64 -d"$((seconds + 4))s" -s bench/actions.lua "http://127.0.0.1:$port/" >"$work/wrk.txt" 2>&1 &
wrk=$!
sleep 2
perf stat -x, -e "$events" -p "$pid" -o "$work/stat.csv" -- \
    bash -c "answered '$work/before'; sleep $seconds; answered '$work/after'"
wait "$wrk"
actions=$(( $(cat "$work/after") - $(cat "$work/before") ))
[ "$actions" -gt 0 ] || { echo "bench: no action was answered" >&2; cat "$work/wrk.txt" >&2; exit 1; }
echo "$actions actions in ${seconds} s ($((actions / seconds))/s, KEYED=${KEYED:-1}); per action:"
# perf stat -x, lines: value,unit,event,...
awk -F, -v n="$actions" '
    $3 == "task-clock" { printf "  %-22s %8.1f µs\n", "CPU (task-clock)", $1 * 1000 / n; next }
    $1 ~ /^[0-9.]+$/ { name = $3; sub(/^syscalls:sys_enter_/, "", name); printf "  %-22s %8.2f\n", name, $1 / n }
' "$work/stat.csv"

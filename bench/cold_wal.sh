#!/usr/bin/env bash
# A burst of durable actions after one that grew the WAL, when the host has dropped the `-wal`
# file's pages from its page cache in the pause between them (as a container's memory limit or
# a host's proactive reclaim does; here `posix_fadvise(DONTNEED)` drops them). On a fresh SQLite
# file with 500 onboarded sessions: keyed actions for FIRST seconds (wrk -t2 -c64; at full load
# the `-wal` file grows to its 256 MiB), a pause of 3 s, the pages dropped (EVICT=0 keeps them),
# then SECOND seconds more. Prints the second burst's actions a second and latency, the read
# requests the writer thread (`fs-commit`) issued during it and their bytes (`perf record -e
# block:block_rq_issue`, reads of any size: a frame rewritten over a dropped block reads the
# block first, 4 KiB each), and the `-wal` file's size before the second burst (0 once the
# checkpointer truncated it), the truncations of the `-wal` file during the second burst
# (`syscalls:sys_enter_ftruncate`), and its size a second after the second burst.
# PAUSE sets the pause (seconds, 3 unless set); PACE_MS paces the second burst (see
# bench/actions.lua: 64 connections, each waiting PACE_MS before each request), for a moderate
# load: `PAUSE=0 EVICT=0 PACE_MS=32 bench/cold_wal.sh BIN 30 20` follows a full burst (never
# paced) with 2,000 actions a second, under which the checkpointer keeps up and must not
# truncate.
# Usage: bench/cold_wal.sh FLOWSTACK_BIN [first seconds] [second seconds]
# (needs wrk, and perf allowed to trace the block layer: root, or kernel.perf_event_paranoid=-1)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
[ $# -ge 1 ] || { echo "usage: bench/cold_wal.sh FLOWSTACK_BIN [first seconds] [second seconds]" >&2; exit 2; }
bin=$1
first=${2:-30}
second=${3:-15}
for tool in wrk perf; do
    command -v $tool >/dev/null || { echo "bench: install $tool (apt-get install -y wrk linux-perf)" >&2; exit 2; }
done
perf record -q -e block:block_rq_issue -e syscalls:sys_enter_ftruncate -o /dev/null -- true >/dev/null 2>"${TMPDIR:-/tmp}/cold_wal.perf" || {
    echo "bench: perf cannot trace block:block_rq_issue here (run as root, or set kernel.perf_event_paranoid=-1):" >&2
    cat "${TMPDIR:-/tmp}/cold_wal.perf" >&2
    exit 2
}
work=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
"$bin" serve --port 0 --db "$work/db.sqlite" --log-level warning >"$work/server.log" 2>&1 &
pid=$!
port=$(listening_port "$work/server.log")
[ -n "$port" ] || { echo "bench: flowstack did not start" >&2; cat "$work/server.log" >&2; exit 1; }
python3 bench/make_sessions.py "$port" 500 >"$work/sessions.txt"
PACE_MS= KEYED=1 SESSIONS="$work/sessions.txt" wrk -t2 -c64 -d"${first}s" -s bench/actions.lua "http://127.0.0.1:$port/" >/dev/null
sleep "${PAUSE:-3}"
wal_bytes=$(stat -c %s "$work/db.sqlite-wal")
if [ "${EVICT:-1}" = 1 ]; then
    python3 - "$work/db.sqlite-wal" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)
PY
fi
KEYED=1 SESSIONS="$work/sessions.txt" wrk -t2 -c64 -d"${second}s" --latency -s bench/actions.lua \
    "http://127.0.0.1:$port/" >"$work/wrk.txt" &
wrk_pid=$!
perf record -q -e block:block_rq_issue -e syscalls:sys_enter_ftruncate -p "$pid" -o "$work/blocks.data" -- sleep $((second - 1)) >/dev/null 2>"$work/perf.txt" \
    || { echo "bench: perf record failed:" >&2; cat "$work/perf.txt" >&2; exit 1; }
wait "$wrk_pid"
# Each line: comm, device, rwbs (R… for a read), bytes, …
reads=$(perf script -i "$work/blocks.data" -F comm,trace 2>/dev/null | awk '$1 == "fs-commit" && $3 ~ /^R/ { n++; bytes += $4 }
    END { printf "%d (%d KiB)", n, bytes / 1024 }')
# A checkpoint that copied the whole WAL also sets the database file's size with ftruncate; the
# -wal file's truncation is the one to 0 bytes.
truncations=$(perf script -i "$work/blocks.data" -F event,trace 2>/dev/null | grep -c 'sys_enter_ftruncate.*length: 0x0*$' || true)
sleep 1
wal_after=$(stat -c %s "$work/db.sqlite-wal")
python3 - "$work/wrk.txt" "$wal_bytes" "$reads" "${EVICT:-1}" "$truncations" "$wal_after" "${PACE_MS:-}" <<'PY'
import re, sys
text, wal, reads, evict, truncations, after, pace = open(sys.argv[1]).read(), *sys.argv[2:]
field = lambda pattern: (re.search(pattern, text, re.M) or [None, "?"])[1]
rate, p50, p99 = field(r"Requests/sec:\s+(\S+)"), field(r"^\s*50%\s+(\S+)"), field(r"^\s*99%\s+(\S+)")
slowest = field(r"^\s*Latency\s+\S+\s+\S+\s+(\S+)")
failed = field(r"Non-2xx or 3xx responses:\s+(\d+)") if "Non-2xx" in text else "0"
state = "dropped" if evict == "1" else "kept"
paced = f" (paced, {pace} ms a connection)" if pace else ""
print(f"-wal file before the second burst {int(wal):,} bytes, pages {state}; second burst{paced}: {rate} actions/s, "
      f"p50 {p50}, p99 {p99}, max {slowest}, non-2xx {failed}; the writer's read requests {reads}; "
      f"truncations during it {truncations}; -wal file a second after it {int(after):,} bytes")
PY

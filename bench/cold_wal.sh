#!/usr/bin/env bash
# A burst of durable actions after one that grew the WAL, when the host has dropped the `-wal`
# file's pages from its page cache in the pause between them (as a container's memory limit or
# a host's proactive reclaim does; here `posix_fadvise(DONTNEED)` drops them). On a fresh SQLite
# file with 500 onboarded sessions: keyed actions for FIRST seconds (wrk -t2 -c64; at full load
# the `-wal` file grows to its 256 MiB), a pause of 3 s, the pages dropped (EVICT=0 keeps them),
# then SECOND seconds more. Prints the second burst's actions a second and latency, the
# 4 KiB reads the writer thread (`fs-commit`) issued during it (`perf record -e
# block:block_rq_issue`: a frame rewritten over a dropped block reads the block first), and the
# `-wal` file's size before the second burst (0 once the checkpointer truncated it).
# Usage: bench/cold_wal.sh FLOWSTACK_BIN [first seconds] [second seconds]   (needs wrk, perf)
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
work=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
"$bin" serve --port 0 --db "$work/db.sqlite" --log-level warning >"$work/server.log" 2>&1 &
pid=$!
port=$(listening_port "$work/server.log")
[ -n "$port" ] || { echo "bench: flowstack did not start" >&2; cat "$work/server.log" >&2; exit 1; }
python3 bench/make_sessions.py "$port" 500 >"$work/sessions.txt"
KEYED=1 SESSIONS="$work/sessions.txt" wrk -t2 -c64 -d"${first}s" -s bench/actions.lua "http://127.0.0.1:$port/" >/dev/null
sleep 3
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
perf record -q -e block:block_rq_issue -p "$pid" -o "$work/blocks.data" -- sleep $((second - 1)) >/dev/null 2>&1
wait "$wrk_pid"
reads=$(perf script -i "$work/blocks.data" -F comm,trace 2>/dev/null | awk '$1 == "fs-commit" && $3 ~ /^R/' | wc -l)
python3 - "$work/wrk.txt" "$wal_bytes" "$reads" "${EVICT:-1}" <<'PY'
import re, sys
text, wal, reads, evict = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
field = lambda pattern: (re.search(pattern, text, re.M) or [None, "?"])[1]
rate, p50, p99 = field(r"Requests/sec:\s+(\S+)"), field(r"^\s*50%\s+(\S+)"), field(r"^\s*99%\s+(\S+)")
failed = field(r"Non-2xx or 3xx responses:\s+(\d+)") if "Non-2xx" in text else "0"
state = "dropped" if evict == "1" else "kept"
print(f"-wal file before the second burst {int(wal):,} bytes, pages {state}; second burst: {rate} actions/s, "
      f"p50 {p50}, p99 {p99}, non-2xx {failed}; the writer's block reads {reads}")
PY

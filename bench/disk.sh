#!/usr/bin/env bash
# How much database one action adds: builds release, starts flowstack on a fresh database with
# 500 onboarded users' sessions, posts home.selectTab actions with wrk (bench/actions.lua) for
# the given seconds, stops the server (which checkpoints the WAL into the file), and divides the
# file's growth by the number of actions logged meanwhile.
# Usage: bench/disk.sh [seconds]   (needs the Debian package wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
seconds=${1:-10}
bin=$(release_flowstack)
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
db="$work/disk.sqlite"

serve() {
    "$bin" serve --port 0 --db "$db" --log-level warning >"$work/server.log" 2>&1 &
    pid=$!
    port=$(listening_port "$work/server.log")
}
stop() { kill -TERM "$pid"; wait "$pid" || true; }
# counts: "ACTIONS BYTES" with the WAL checkpointed into the file
counts() {
    python3 - "$db" <<'PY'
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
actions = db.execute("SELECT COUNT(*) FROM actions").fetchone()[0]
pages, size = db.execute("PRAGMA page_count").fetchone()[0], db.execute("PRAGMA page_size").fetchone()[0]
free = db.execute("PRAGMA freelist_count").fetchone()[0]
print(actions, (pages - free) * size)
PY
}

serve
python3 bench/make_sessions.py "$port" 500 >"$work/sessions.txt"
stop
read -r actions0 bytes0 < <(counts)
serve
SESSIONS="$work/sessions.txt" wrk -t2 -c64 -d"${seconds}s" -s bench/actions.lua "http://127.0.0.1:$port" | grep 'Requests/sec'
stop
read -r actions1 bytes1 < <(counts)
python3 -c "
a, b = $actions1 - $actions0, $bytes1 - $bytes0
print(f'{a} actions logged; database grew by {b / 1e6:.1f} MB in pages in use: {b / a:.0f} bytes per action')"

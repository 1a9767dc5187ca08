#!/usr/bin/env bash
# Instructions per durable action under load, by thread: runs flowstack under callgrind on a
# fresh SQLite file with 100 onboarded sessions, drives it with wrk (bench/actions.lua, one wrk
# thread, CONNECTIONS connections for SECONDS), and prints the inclusive instructions per action
# of the writer thread (GroupCommit.run), of the store's batch write within it, and of the HTTP
# threads' access handler. Unlike bench/encode_server.py (one connection, so every batch holds
# one action), the writer's batches here hold several, as under real load: what a batch pays
# once is shared. KEYED=1 (the default here) keys every action, as the clients do; KEYED=0 not.
# WORKLOAD=create counts session creations instead (bench/create.lua, each for a new user, after
# 5 s of them uncounted): all instructions, the store's insert and the read of the user, per creation.
# Valgrind 3.19 cannot read a Swift 6.3 release build's DWARF 5: give it a copy without it,
# `objcopy --strip-debug .build/release/flowstack /tmp/flowstack` (the symbols stay).
# CALLGRIND_OUT=FILE keeps the dump there, for callgrind_annotate.
# Usage: bench/callgrind_load.sh STRIPPED_FLOWSTACK [connections] [seconds]   (needs valgrind, wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
[ $# -ge 1 ] || { echo "usage: bench/callgrind_load.sh STRIPPED_FLOWSTACK [connections] [seconds]" >&2; exit 2; }
bin=$1
connections=${2:-16}
seconds=${3:-15}
work=$(mktemp -d)
vpid=""
trap '[ -z "$vpid" ] || kill "$vpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$bin" serve --port 0 --db "$work/db.sqlite" \
    --log-level warning >"$work/server.log" 2>&1 &
vpid=$!
port=""
for _ in $(seq 120); do port=$(listening_port "$work/server.log" 2>/dev/null || true); [ -n "$port" ] && break; sleep 1; done
[ -n "$port" ] || { echo "bench: the server did not start under callgrind" >&2; cat "$work/server.log" >&2; exit 1; }
python3 bench/make_sessions.py "$port" 100 >"$work/sessions.txt"
workload=${WORKLOAD:-actions}
if [ "$workload" = create ]; then
    wrk -t1 -c"$connections" -d5s -s bench/create.lua "http://127.0.0.1:$port/" >/dev/null 2>&1
    callgrind_control --zero "$vpid" >/dev/null
    wrk -t1 -c"$connections" -d"${seconds}s" -s bench/create.lua "http://127.0.0.1:$port/" >"$work/wrk.txt" 2>&1
else
    callgrind_control --zero "$vpid" >/dev/null
    KEYED=${KEYED:-1} SESSIONS="$work/sessions.txt" wrk -t1 -c"$connections" -d"${seconds}s" -s bench/actions.lua \
        "http://127.0.0.1:$port/" >"$work/wrk.txt" 2>&1
fi
callgrind_control --dump "$vpid" >/dev/null
actions=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$work/wrk.txt")
kill "$vpid"; wait "$vpid" 2>/dev/null || true; vpid=""
dump=$(ls "$work"/cg.out.* | head -1)
[ -z "${CALLGRIND_OUT:-}" ] || cp "$dump" "$CALLGRIND_OUT"
callgrind_annotate --inclusive=yes --threshold=100 "$dump" >"$work/annotated.txt" 2>/dev/null
python3 - "$work/annotated.txt" "$actions" "$connections" "$workload" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
actions, connections, workload = int(sys.argv[2]), sys.argv[3], sys.argv[4]
def cost(symbol):
    found = [int(m.group(1).replace(",", "")) for line in lines if symbol in line
             for m in [re.match(r"\s*([\d,]+)", line)] if m]
    return max(found, default=0)
if workload == "create":
    print(f"{actions} creations over {connections} connections under callgrind; instructions per creation (inclusive):")
    for name, symbol in [("all threads", "PROGRAM TOTALS"), ("the store's insert", "SessionRecordB0AacDP6insert_9exposures"),
                         ("reading the user (all creations)", "10UserStatesC4held_5store")]:
        print(f"  {name:36} {cost(symbol) / actions:>9,.0f}")
    sys.exit(0)
print(f"{actions} actions over {connections} connections under callgrind; instructions per action (inclusive):")
for name, symbol in [("the writer thread", "11GroupCommitC3run"), ("  its store's batch writes", "11SQLiteStoreAAC5write_2to"),
                     ("the HTTP threads (access handler)", "10HTTPServerAAC6access10connection")]:
    print(f"  {name:36} {cost(symbol) / actions:>9,.0f}")
PY

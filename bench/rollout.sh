#!/usr/bin/env bash
# An action's latency with and without a rollout in progress (guardrail counting on): starts
# FlowStack on a fresh SQLite file, in `with` mode stores a rollout of the live versions at 50 %
# straight into the database (the monitor reads it within a second), makes 300 onboarded
# sessions (in the rollout, half per side, in `with` mode), and runs wrk on home.selectTab.
# Usage: bench/rollout.sh PATH/TO/flowstack with|without
set -e
bin=$1; mode=$2
work=$(mktemp -d)
"$bin" serve --port 0 --db "$work/b.sqlite" --log-level warning > "$work/log" 2>&1 &
pid=$!
for i in $(seq 1 100); do port=$(grep -o 'listening on http://[^ ]*' "$work/log" | grep -o '[0-9]*$' || true); [ -n "$port" ] && break; sleep 0.2; done
if [ "$mode" = with ]; then
python3 - "$work/b.sqlite" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO rollouts (release_id, state, percentage, plan, flows, started_at, updated_at) VALUES (1, 'rolling-out', 50, '{\"percentage\":50}', '{\"home\":1}', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z')")
c.commit()
PY
sleep 2
fi
python3 bench/make_sessions.py "$port" 300 > "$work/sessions.txt"
SESSIONS="$work/sessions.txt" wrk -t2 -c16 -d10s --latency -s bench/actions.lua "http://127.0.0.1:$port" | grep -E "Requests/sec|50%|99%"
if [ "$mode" = with ]; then python3 -c "
import sqlite3,sys; c=sqlite3.connect('$work/b.sqlite'); print('rollout_sessions', c.execute('select arm, count(*) from rollout_sessions group by arm').fetchall())"; fi
kill $pid; wait $pid 2>/dev/null || true
rm -rf "$work"

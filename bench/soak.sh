#!/usr/bin/env bash
# Time-compressed soak: `serve --retention 5s --session-idle 5s` on a SQLite file under steady
# wrk load (bench/soak.lua: sessions created and acted on, then left to expire) for many
# retention periods. Every interval it runs wrk for that long and samples the database file,
# its -wal, the server's RSS, the rows stored, the interval's action p99 (wrk --latency), and
# what retention removed meanwhile (/metrics): compaction ran in the intervals marked `*`.
# After the first periods, disk, WAL and RSS should stay flat and p99 not move with compaction.
# Usage: bench/soak.sh [seconds [interval [binary]]]   (default 240 s, 5 s, release build)
#   RETENTION=5s IDLE=5s CONNECTIONS=4 KEYED=1 [KEYS=random] soak.sh ...   (needs the Debian package wrk;
#   KEYED=1: every action carries an Idempotency-Key, as every tap of the clients does, in time
#   order unless KEYS=random)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
seconds=${1:-240}
interval=${2:-5}
bin=${3:-}
[ -n "$bin" ] || bin=$(release_flowstack)
command -v wrk >/dev/null || { echo "bench: install wrk (apt-get install -y wrk)" >&2; exit 2; }
retention=${RETENTION:-5s}
idle=${IDLE:-5s}
connections=${CONNECTIONS:-4}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
db="$work/soak.sqlite"

"$bin" serve --port 0 --db "$db" --retention "$retention" --session-idle "$idle" >"$work/server.log" 2>&1 &
pid=$!
port=$(listening_port "$work/server.log")
[ -n "$port" ] || { cat "$work/server.log" >&2; exit 1; }

# The users, onboarded once: their sessions start at home, where home.selectTab always applies.
python3 - "$port" <<'PY'
import http.client, json, sys
connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
def post(path, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token: headers["Authorization"] = "Bearer " + token
    connection.request("POST", path, json.dumps(body), headers)
    response = connection.getresponse()
    return json.loads(response.read())
for user in range(50):
    session = post("/v1/sessions", {"userId": f"soak-{user}"})["session"]
    for action in ("onboarding.showSecond", "onboarding.completed"):
        post(f"/v1/sessions/{session['id']}/actions", {"type": action}, session["token"])
PY

# metric NAME: its value on /metrics now
metric() { python3 -c "
import sys, urllib.request
for line in urllib.request.urlopen('http://127.0.0.1:$port/metrics').read().decode().splitlines():
    if line.startswith('$1 '): print(line.split()[1]); break
else: print(0)"; }
# rows: "ACTIONS SESSIONS KEYS" stored now (a reader beside the server, WAL mode)
rows() { python3 -c "
import sqlite3; db = sqlite3.connect('file:$db?mode=ro', uri=True)
print(*(db.execute(f'SELECT COUNT(*) FROM {t}').fetchone()[0] for t in ('actions', 'sessions', 'idempotency_keys')))"; }
size_mb() { [ -f "$1" ] && python3 -c "import os; print(f'{os.path.getsize(\"$1\") / 1e6:.1f}')" || echo 0.0; }
rss_mb() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status"; }
# p99 in ms from wrk --latency's "99%" line
p99_ms() { awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms/, "", v) } else if (v ~ /s$/) { sub(/s/, "", v); v *= 1000 } printf "%.2f", v }'; }

echo "soak: $seconds s, interval $interval s, --retention $retention --session-idle $idle, wrk -t1 -c$connections, $bin"
printf '%5s %8s %8s %8s %8s %8s %9s %9s %8s %8s %8s  %s\n' t req/s p99ms dbMB walMB rssMB actions sessions keys removedA removedS compaction
removed_actions=$(metric flowstack_retention_actions_removed_total)
removed_sessions=$(metric flowstack_retention_sessions_removed_total)
started=$(date +%s)
while [ $(( $(date +%s) - started )) -lt "$seconds" ]; do
    out=$(wrk -t1 -c"$connections" -d"${interval}s" --latency -s bench/soak.lua "http://127.0.0.1:$port")
    rps=$(awk '/Requests\/sec/ { printf "%.0f", $2 }' <<<"$out")
    p99=$(p99_ms <<<"$out")
    now_actions=$(metric flowstack_retention_actions_removed_total)
    now_sessions=$(metric flowstack_retention_sessions_removed_total)
    da=$(( now_actions - removed_actions )); ds=$(( now_sessions - removed_sessions ))
    removed_actions=$now_actions; removed_sessions=$now_sessions
    read -r stored_actions stored_sessions stored_keys < <(rows)
    mark=""; [ $(( da + ds )) -gt 0 ] && mark="*"
    printf '%5d %8s %8s %8s %8s %8s %9s %9s %8s %8s %8s  %s\n' $(( $(date +%s) - started )) "$rps" "$p99" \
        "$(size_mb "$db")" "$(size_mb "$db-wal")" "$(rss_mb)" "$stored_actions" "$stored_sessions" "$stored_keys" "$da" "$ds" "$mark"
done
echo "retention runs: $(metric flowstack_retention_runs_total), failed: $(metric flowstack_retention_failed_runs_total), last run: $(metric flowstack_retention_last_run_seconds) s; expired refusals: $(metric flowstack_retention_sessions_expired_total)"
grep -c '"retention run"\|retention run' "$work/server.log" | sed 's/^/retention log lines: /' || true

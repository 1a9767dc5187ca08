#!/usr/bin/env bash
# Replay of many recorded sessions (BENCHMARKS.md, "Replay (issue 24)" and issue 35's "no slower"):
# fills a fresh SQLite database with N recorded sessions through BIN's API (bench/replay_sessions.py:
# a quarter stop on onboarding.second, the rest reach home and select a tab), stores two drafts of
# onboarding (v2 starts at its second screen, v3 completes only from its first), then asks
# POST /v1/replays with `sample` N for own versions, v2 and v3, ROUNDS times, and prints each
# answer's durationMs, the server's CPU for it (utime + stime from /proc) and its totals.
# Usage: bench/replay.sh BIN [N [ROUNDS]]   (default 100000 sessions, 2 rounds; filling 100,000
#   takes about 2 minutes and 1.4 GB in a temporary folder, removed after)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
bin=$(realpath "$1")
count=${2:-100000}
rounds=${3:-2}
work=$(mktemp -d)
token=replay-bench-admin-token-0123456789abcdef
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
FLOWSTACK_ADMIN_TOKEN=$token "$bin" serve --db "$work/db.sqlite" --port 0 > "$work/serve.log" 2>&1 &
pid=$!
port=$(listening_port "$work/serve.log")
[ -n "$port" ] || { echo "replay: the server did not start" >&2; cat "$work/serve.log" >&2; exit 1; }
auth="Authorization: Bearer $token"

# The first 3,000 users, then the rest after a gap of ids (as issue 24's run), by three workers:
# each part rounded up to a multiple of three (100,000 asked makes 100,002, as that run did).
first=$((count < 3000 ? count : 3000))
python3 bench/replay_sessions.py "$port" $(((first + 2) / 3 * 3)) 3
[ "$count" -le 3000 ] || python3 bench/replay_sessions.py "$port" $(((count - first + 2) / 3 * 3)) 3 10000
curl -sf -X PUT "localhost:$port/v1/flows/onboarding" -H "$auth" -o /dev/null -d '{"name":"onboarding","kind":"stacked","initial":["onboarding.second"],"on":{"onboarding.completed":[{"from":"onboarding.second","do":[{"bubble":{}}]}]}}'
curl -sf -X PUT "localhost:$port/v1/flows/onboarding" -H "$auth" -o /dev/null -d '{"name":"onboarding","kind":"stacked","initial":["onboarding.first"],"on":{"onboarding.showSecond":[{"from":"onboarding.first","do":[{"push":"onboarding.second"}]}],"onboarding.completed":[{"from":"onboarding.first","do":[{"bubble":{}}]}]}}'

ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
echo "replay: $count sessions, $rounds rounds, $bin"
for round in $(seq "$rounds"); do
    for flows in '{}' '{"onboarding":2}' '{"onboarding":3}'; do
        before=$(cpu)
        answer=$(curl -sf "localhost:$port/v1/replays" -H "$auth" -d "{\"flows\":$flows,\"sample\":$count}")
        after=$(cpu)
        python3 - "$round" "$flows" "$answer" "$before" "$after" "$ticks" <<'PY'
import json, sys
round_, flows, answer, before, after, ticks = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
totals = answer["totals"]
shown = ", ".join(f"{key} {value}" for key, value in totals.items() if key != "sessions" and value)
print(f"round {round_}  flows {flows:18s} wall {answer['durationMs'] / 1000:6.2f} s  cpu {(after - before) / ticks:6.2f} s  "
      f"{totals['sessions']} sessions: {shown}")
PY
    done
done

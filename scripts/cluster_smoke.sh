#!/usr/bin/env bash
# The curl sessions of the README and docs/ (scripts/readme.py --session) against scripts/cluster.sh
# (three nodes behind HAProxy on one PostgreSQL), run as written with only the port changed,
# compared with their "# →" lines.
# Usage: scripts/cluster_smoke.sh FLOWSTACK_BINARY. Prints "cluster-smoke: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: scripts/cluster_smoke.sh FLOWSTACK_BINARY}
work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
FLOWSTACK_BIN=$bin CLUSTER_PORT=$port scripts/cluster.sh >"$work/out" 2>"$work/err" &
cluster=$!
# cluster.sh keeps its logs after it stops (in the folder it printed): a passing run removes them.
trap 'kill -TERM $cluster 2>/dev/null; wait $cluster 2>/dev/null
      [ "${failed:-1}" -eq 0 ] && rm -rf "$(sed -n "s#.*config \(/tmp/flowstack-cluster-[^/]*\)/haproxy.cfg#\1#p" "$work/out")"
      rm -rf "$work"' EXIT
passed=0 failed=0
for _ in $(seq 120); do grep -q "admin token" "$work/out" && break; sleep 0.5; done
if grep -q "admin token" "$work/out"; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "cluster-smoke: FAILED the cluster did not start" >&2; tail -20 "$work/err" >&2
fi
python3 scripts/readme.py --session >"$work/session.sh"
sed -n 's/^# → //p' "$work/session.sh" >"$work/session.expected"
sed -i "s#localhost:8080#127.0.0.1:$port#g" "$work/session.sh"
ADMIN=$(sed -n 's/.*admin token *\([0-9a-f]*\)$/\1/p' "$work/out") bash "$work/session.sh" >"$work/session.out" 2>&1
if diff -u "$work/session.expected" "$work/session.out"; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "cluster-smoke: FAILED the curl sessions of the README and docs against the cluster" >&2
fi
# `scripts/cluster.sh restart 2 FOLDER`: node2 stops and comes back on its port, healthy, its log
# kept (appended); then Ctrl-C (SIGTERM) keeps the logs, PostgreSQL's included, in the folder.
folder=$(sed -n 's#.*config \(/tmp/flowstack-cluster-[^/]*\)/haproxy.cfg#\1#p' "$work/out")
node2=$(sed -n 's#.*node2 http://127.0.0.1:\([0-9]*\).*#\1#p' "$work/out")
if [ -n "$folder" ] && [ -n "$node2" ] && scripts/cluster.sh restart 2 "$folder" 2>>"$work/err" \
    && grep -q "restarted at" "$folder/node2.log" && curl -fs "http://127.0.0.1:$node2/healthz" >/dev/null; then
    passed=$((passed + 1))
else
    failed=$((failed + 1)); echo "cluster-smoke: FAILED scripts/cluster.sh restart 2 (folder '$folder', port '$node2')" >&2
fi
kill -TERM $cluster 2>/dev/null; wait $cluster 2>/dev/null
if [ -n "$folder" ] && [ -s "$folder/node1.log" ] && [ -f "$folder/haproxy.log" ] && [ -f "$folder/postgresql-primary.log" ]; then
    passed=$((passed + 1))
else
    failed=$((failed + 1)); echo "cluster-smoke: FAILED the logs are not kept in '$folder' after the cluster stopped" >&2
fi
echo "cluster-smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# The README's curl session against scripts/cluster.sh (three nodes behind HAProxy on one
# PostgreSQL), run as written with only the port changed, compared with its "# →" lines.
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
sed -n '/<!-- readme-session:begin -->/,/<!-- readme-session:end -->/p' README.md \
    | grep -v '^<!-- readme-session' | grep -v '^```' >"$work/session.sh"
sed -n 's/^# → //p' "$work/session.sh" >"$work/session.expected"
sed -i "s#localhost:8080#127.0.0.1:$port#g" "$work/session.sh"
ADMIN=$(sed -n 's/.*admin token *\([0-9a-f]*\)$/\1/p' "$work/out") bash "$work/session.sh" >"$work/session.out" 2>&1
if diff -u "$work/session.expected" "$work/session.out"; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "cluster-smoke: FAILED the README's curl session against the cluster" >&2
fi
echo "cluster-smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

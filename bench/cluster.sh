#!/usr/bin/env bash
# One node against three behind HAProxy, on PostgreSQL with a synchronous standby (the same
# scripts/cluster.sh setup both times, so only the node count differs): 500 onboarded
# sessions, then wrk -t2 -c64 durable actions and state reads through HAProxy, each store of
# nodes in turn, `rounds` times. Everything runs on this machine's cores.
# Usage: bench/cluster.sh [seconds per run] [rounds]   (FLOWSTACK_BIN=PATH skips the release build;
#        NODE_ARGS='--node-url off' gives every node these arguments)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
seconds=${1:-10}
rounds=${2:-1}
flowstack=${FLOWSTACK_BIN:-$(release_flowstack)}
work=$(mktemp -d)
cluster=""
stop_cluster() { [ -z "$cluster" ] || { kill -TERM "$cluster" 2>/dev/null; wait "$cluster" 2>/dev/null || true; cluster=""; }; }
trap 'stop_cluster; rm -rf "$work"' EXIT

wrk_run() { # NAME URL SCRIPT: one wrk run through HAProxy
    local out
    out=$(SESSIONS="$work/sessions.txt" wrk -t2 -c64 -d"${seconds}s" --latency -s "$3" "$2")
    printf '%-28s %10s req/s   p50 %-9s p99 %-9s non-2xx %s\n' "$1" \
        "$(printf '%s\n' "$out" | awk '/Requests\/sec/ {print $2}')" \
        "$(printf '%s\n' "$out" | awk '$1 == "50%" {print $2}')" \
        "$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')" \
        "$(printf '%s\n' "$out" | awk '/Non-2xx/ {print $5}')"
}

printf 'wrk -t2 -c64 -d%ss through HAProxy, PostgreSQL primary + synchronous standby, %s rounds\n' "$seconds" "$rounds"
for round in $(seq "$rounds"); do
    for nodes in 1 3; do
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        # NODE_ARGS: every node's extra arguments (such as '--node-url off', to compare).
        read -ra args <<<"${NODE_ARGS:+-- $NODE_ARGS}"
        FLOWSTACK_BIN=$flowstack CLUSTER_NODES=$nodes CLUSTER_PORT=$port scripts/cluster.sh "${args[@]}" >"$work/out" 2>"$work/err" &
        cluster=$!
        for _ in $(seq 120); do grep -q "admin token" "$work/out" && break; sleep 0.5; done
        grep -q "admin token" "$work/out" || { echo "bench: the cluster did not start" >&2; tail "$work/err" >&2; exit 1; }
        python3 bench/make_sessions.py "$port" 500 >"$work/sessions.txt"
        wrk_run "[$nodes node(s)] actions (durable)" "http://127.0.0.1:$port" bench/actions.lua
        wrk_run "[$nodes node(s)] state reads" "http://127.0.0.1:$port" bench/reads.lua
        stop_cluster
    done
done

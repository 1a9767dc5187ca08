#!/usr/bin/env bash
# Session creation on a shared PostgreSQL, and what it costs the database: for each build given,
# a fresh throwaway PostgreSQL (scripts/pgserver.py), one `flowstack serve` on it (no
# --single-node: a node on a database other nodes may change, which reads the definitions'
# fingerprint before each creation), a 2-second warm-up, then wrk -t2 -c16 bench/create.lua for
# `seconds`. Prints creations a second, and the CPU a creation took in PostgreSQL's processes
# (utime + stime of every process of its user, over the run) and in flowstack's. Builds run in
# turns, `rounds` times. SERVE_ARGS is added to `serve` (SERVE_ARGS=--single-node: without the
# fingerprint's reads, the floor). FLOW_VERSIONS=N stores N more flow versions (1,500 characters
# each, by SQL, once the server has migrated the database), as a team's history grows.
# WORKLOAD=ofrep measures OFREP evaluations of one flag instead (bench/ofrep.lua, with a client
# key made through the admin API), which also read the fingerprint on a shared database. Each
# line also gives the node's PostgreSQL round trips a request (`flowstack_db_round_trips_total`).
# WORKLOAD=keyed creates sessions with a client key (made through the admin API) in
# `X-API-Key`, as apps do.
# Usage: bench/pg_create.sh [seconds] [rounds] BIN [BIN...]   (needs the Debian package wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { echo "usage: bench/pg_create.sh SECONDS ROUNDS BIN [BIN...]" >&2; exit 2; }
seconds=$1
rounds=$2
shift 2
command -v wrk >/dev/null || { echo "bench: install wrk (apt-get install -y wrk)" >&2; exit 2; }
hz=$(getconf CLK_TCK)
work=""
server=""
cleanup() {
    [ -z "$server" ] || { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; server=""; }
    [ -z "$work" ] || { python3 scripts/pgserver.py stop --dir "$work/pg" >/dev/null 2>&1 || true; rm -rf "$work"; work=""; }
}
trap cleanup EXIT

# CPU ticks of PostgreSQL's processes: those of the user its server runs as (`postgres` when
# this runs as root, this user otherwise).
pg_ticks() {
    local owner total=0 pid
    owner=$(stat -c %U "$work/pg/primary")
    for pid in $(pgrep -u "$owner" -x postgres); do
        total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
}

workload=${WORKLOAD:-create}
case "$workload" in
    create) script=bench/create.lua; what=creation ;;
    keyed) script=bench/create.lua; what=creation ;;
    ofrep) script=bench/ofrep.lua; what=evaluation ;;
    *) echo "bench: WORKLOAD is create, keyed or ofrep" >&2; exit 2 ;;
esac
trips() { curl -s "http://127.0.0.1:$port/metrics" | awk '$1 == "flowstack_db_round_trips_total" {print $2}'; }

printf 'wrk -t2 -c16 -d%ss %s, a fresh PostgreSQL per run, %s rounds, %s more flow versions\n' "$seconds" "$script" "$rounds" "${FLOW_VERSIONS:-0}"
for round in $(seq "$rounds"); do
    for bin in "$@"; do
        work=$(mktemp -d)
        chmod o+x "$work"  # the postgres user reaches its directory inside
        eval "$(python3 scripts/pgserver.py start --dir "$work/pg")"
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        read -ra extra <<<"${SERVE_ARGS:-}"
        FLOWSTACK_ADMIN_TOKEN=bench-admin-token-0000000000000000000000 \
            "$bin" serve --port "$port" --db "$URL" "${extra[@]}" >"$work/serve.log" 2>&1 &
        server=$!
        for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
        if [ "${FLOW_VERSIONS:-0}" -gt 0 ]; then
            "$BINDIR/psql" -q "$URL" -c "INSERT INTO flow_versions (name, version, definition, created_at)
                SELECT 'history-' || (g % 50), g, repeat('x', 1500), '2026-01-01T00:00:00.000Z'
                FROM generate_series(1, $FLOW_VERSIONS) AS g" -c "ANALYZE flow_versions"
        fi
        if [ "$workload" != create ]; then
            KEY=$(curl -sf -X POST "http://127.0.0.1:$port/v1/client-keys" -H 'Content-Type: application/json' \
                -H 'Authorization: Bearer bench-admin-token-0000000000000000000000' -d '{"name":"bench"}' |
                python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])')
            export KEY
        fi
        # The key goes to the keyed creations as the script's argument (ofrep.lua reads KEY).
        script_args=()
        [ "$workload" = keyed ] && script_args=(-- "$KEY")
        wrk -t2 -c16 -d2s -s "$script" "http://127.0.0.1:$port" "${script_args[@]}" >/dev/null
        pg0=$(pg_ticks)
        fs0=$(awk '{print $14 + $15}' "/proc/$server/stat")
        rt0=$(trips)
        out=$(wrk -t2 -c16 -d"${seconds}s" --latency -s "$script" "http://127.0.0.1:$port" "${script_args[@]}")
        pg1=$(pg_ticks)
        fs1=$(awk '{print $14 + $15}' "/proc/$server/stat")
        rt1=$(trips)
        count=$(printf '%s\n' "$out" | awk '/requests in/ {print $1}')
        p99=$(printf '%s\n' "$out" | awk '$1 == "99%" {print $2}')
        non2xx=$(printf '%s\n' "$out" | awk '/Non-2xx/ {print $5}')
        python3 -c "
n = $count
print(f'round $round  {\"$bin\"}: {n / $seconds:6.0f} ${what}s/s  p99 $p99  PostgreSQL CPU {($pg1 - $pg0) / $hz / n * 1e6:6.1f} us  '
      f'flowstack CPU {($fs1 - $fs0) / $hz / n * 1e6:6.1f} us a $what  {($rt1 - $rt0) / n:.3f} round trips a $what  non-2xx ${non2xx:-0}')"
        cleanup
    done
done

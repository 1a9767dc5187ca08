#!/usr/bin/env bash
# Several FlowStack nodes on one PostgreSQL, on this machine, for trying it out: a throwaway
# PostgreSQL primary with two standbys, any one of which confirms each commit
# (scripts/pgserver.py --standbys 2), three `flowstack serve` nodes on it, and HAProxy in front
# (a copy of deploy/haproxy.cfg with loopback addresses). Prints the URL to use, the admin token
# and where the logs are; Ctrl-C (or SIGTERM) stops everything and removes the databases, and
# keeps the logs (the nodes', HAProxy's and PostgreSQL's) in the folder it printed.
#
#   scripts/cluster.sh                  # builds flowstack (swift build) unless FLOWSTACK_BIN is set
#   FLOWSTACK_BIN=path/to/flowstack scripts/cluster.sh
#   scripts/cluster.sh -- --durability full      # arguments after -- go to every node's `serve`
#   scripts/cluster.sh restart 2        # (another terminal) restarts node2 of the running cluster
#
# Environment: FLOWSTACK_BIN (a built binary), CLUSTER_PORT (HAProxy's port; default: 8080
# when it is free, else any free one), FLOWSTACK_ADMIN_TOKEN (default: a random one, printed),
# CLUSTER_NODES (default 3). Installs haproxy (and, through pgserver.py, postgresql) with
# apt-get when missing. Every wait is bounded; a start that fails stops what it started.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
nodes=${CLUSTER_NODES:-3}

say() { printf 'cluster: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# `scripts/cluster.sh restart N [WORK]`: asks the running cluster (the newest one, or the one
# whose folder is WORK) to restart node N with the same command line, and waits until it has.
if [ "${1:-}" = "restart" ]; then
    n=${2:?usage: scripts/cluster.sh restart NODE_NUMBER [CLUSTER_FOLDER]}
    dir=${3:-$(ls -dt /tmp/flowstack-cluster-*/ 2>/dev/null | while read -r d; do
        [ -f "$d/cluster.pid" ] && kill -0 "$(cat "$d/cluster.pid")" 2>/dev/null && { echo "${d%/}"; break; }; done)}
    [ -n "$dir" ] && [ -f "$dir/cluster.pid" ] || die "no running cluster found (give its folder: scripts/cluster.sh restart N FOLDER)"
    [ -f "$dir/node$n.cmd" ] || die "the cluster in $dir has no node$n"
    : >"$dir/restart-node$n"
    for _ in $(seq 600); do [ -f "$dir/restart-node$n" ] || { say "node$n restarted (log: $dir/node$n.log)"; exit 0; }; sleep 0.1; done
    die "node$n did not restart within 60 s; see $dir/node$n.log"
fi
node_args=()
if [ "${1:-}" = "--" ]; then shift; node_args=("$@"); elif [ $# -gt 0 ]; then
    die "unknown argument $1 (node arguments go after --: scripts/cluster.sh -- --durability full)"
fi

if [ -n "${FLOWSTACK_BIN:-}" ]; then
    bin=$FLOWSTACK_BIN
else
    say "building flowstack (swift build --product flowstack; set FLOWSTACK_BIN to skip)"
    swift build --product flowstack >&2 || die "swift build failed"
    bin="$(swift build --show-bin-path)/flowstack"
fi
[ -x "$bin" ] || die "no flowstack binary at $bin"
command -v python3 >/dev/null || die "python3 is needed (apt-get install -y python3)"
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
    say "installing haproxy with apt-get"
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq haproxy >/dev/null \
        || die "could not install haproxy"
fi
haproxy_bin=$(command -v haproxy || echo /usr/sbin/haproxy)

work=$(mktemp -d /tmp/flowstack-cluster-XXXXXX)
chmod 755 "$work"
echo $$ >"$work/cluster.pid"
pg_dir=""
pids=()
stopping=""
cleanup() {
    [ -n "$stopping" ] && return
    stopping=1
    trap '' INT TERM HUP
    say "stopping"
    for pid in "${pids[@]}"; do [ "$pid" -gt 0 ] && kill -TERM "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do
        [ "$pid" -gt 0 ] || continue
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    if [ -n "$pg_dir" ]; then
        for log in "$pg_dir"/*.log; do [ -f "$log" ] && cp "$log" "$work/postgresql-$(basename "$log")"; done
        python3 scripts/pgserver.py stop --dir "$pg_dir" >&2
    fi
    rm -f "$work/cluster.pid" "$work"/restart-node*
    say "stopped; removed the databases; the logs are kept in $work (node*.log, haproxy.log, postgresql-*.log)"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# Free TCP ports on 127.0.0.1, as many as asked, below the ephemeral range (harness.server.free_ports says why).
free_ports() {
    python3 -B -c 'import sys
sys.path.insert(0, sys.argv[2])
from harness.server import free_ports
print(" ".join(str(port) for port in free_ports(int(sys.argv[1]))))' "$1" "$repo/scripts"
}
port_free() { python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1])))' "$1" 2>/dev/null; }

# --- PostgreSQL: primary and two standbys, ANY 1 of which confirms each commit (prints DIR=,
# URL=, PORT=, BINDIR=, STANDBY_URL=, STANDBY_PORTS=)
say "starting PostgreSQL (primary and two synchronous standbys, ANY 1)"
# (in a folder of pgserver.py's own making: the postgres user must reach it, $work is private)
pg_env=$(python3 scripts/pgserver.py start --standbys 2) || die "PostgreSQL did not start"
eval "$pg_env"
pg_dir=$DIR
# Every host; libpq takes the one that accepts writes, so the nodes follow a promotion.
hosts="127.0.0.1:$PORT"
for standby_port in $STANDBY_PORTS; do hosts+=",127.0.0.1:$standby_port"; done
db="postgresql://postgres@$hosts/flowstack?target_session_attrs=read-write"

# --- the nodes
admin=${FLOWSTACK_ADMIN_TOKEN:-$(python3 -c 'import secrets; print(secrets.token_hex(32))')}
read -r -a node_ports <<<"$(free_ports "$nodes")"
# Node i's command line, kept in $work/node$i.cmd (for `scripts/cluster.sh restart i`).
start_node() {
    local i=$1 port=${node_ports[$(($1 - 1))]}
    FLOWSTACK_ADMIN_TOKEN=$admin "$bin" serve --host 127.0.0.1 --port "$port" --db "$db" --node-url "http://127.0.0.1:$port" ${node_args[@]+"${node_args[@]}"} \
        >>"$work/node$i.log" 2>&1 &
    pids[$((i - 1))]=$!
    printf '%q ' "$bin" serve --host 127.0.0.1 --port "$port" --db "$db" --node-url "http://127.0.0.1:$port" ${node_args[@]+"${node_args[@]}"} >"$work/node$i.cmd"
}
wait_healthy() {
    local i=$1 port=${node_ports[$(($1 - 1))]}
    for _ in $(seq 300); do
        curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
        kill -0 "${pids[$((i - 1))]}" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
for i in $(seq 1 "$nodes"); do start_node "$i"; done
for i in $(seq 1 "$nodes"); do
    wait_healthy "$i" || { tail -20 "$work/node$i.log" >&2; die "node$i did not become healthy on port ${node_ports[$((i - 1))]}"; }
done

# --- HAProxy: deploy/haproxy.cfg with the marked lines rewritten (listening address, stats
# address, the server list), everything else as an operator would run it
if [ -n "${CLUSTER_PORT:-}" ]; then
    lb_port=$CLUSTER_PORT
elif port_free 8080; then
    lb_port=8080
else
    lb_port=$(free_ports 1)
fi
stats_port=$(free_ports 1)
servers=""
for i in $(seq 1 "$nodes"); do servers+="    server node$i 127.0.0.1:${node_ports[$((i - 1))]}"$'\n'; done
awk -v lb="$lb_port" -v stats="$stats_port" -v servers="$servers" '
    $0 ~ /^[ \t]*# @servers-begin[ \t]*$/ { print; printf "%s", servers; skip = 1; next }
    $0 ~ /^[ \t]*# @servers-end[ \t]*$/   { skip = 0 }
    skip { next }
    $1 == "bind" && /# @bind/       { print "    bind 127.0.0.1:" lb; next }
    $1 == "bind" && /# @stats-bind/ { print "    bind 127.0.0.1:" stats; next }
    { print }' deploy/haproxy.cfg >"$work/haproxy.cfg"
"$haproxy_bin" -c -q -f "$work/haproxy.cfg" || die "haproxy refuses $work/haproxy.cfg"
"$haproxy_bin" -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
pids+=($!)
ok=""
for _ in $(seq 100); do
    up=$(curl -fs "http://127.0.0.1:$stats_port/;csv" 2>/dev/null | awk -F, '$1 == "flowstack_nodes" && $2 ~ /^node/ && $18 ~ /^UP/' | wc -l)
    [ "$up" -eq "$nodes" ] && { ok=1; break; }
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.1
done
[ -n "$ok" ] || { tail -20 "$work/haproxy.log" >&2; die "HAProxy does not see the $nodes nodes UP"; }

cat <<EOF
FlowStack cluster: $nodes nodes on PostgreSQL (primary :$PORT, standbys :${STANDBY_PORTS// /, :}, ANY 1 synchronous), HAProxy in front.
  URL          http://127.0.0.1:$lb_port/        (the playground; the API under /v1)
  admin token  $admin
  nodes        $(for i in $(seq 1 "$nodes"); do printf 'node%s http://127.0.0.1:%s  ' "$i" "${node_ports[$((i - 1))]}"; done)
  HAProxy      stats http://127.0.0.1:$stats_port/   config $work/haproxy.cfg
  database     $db
  logs         $work/node*.log, $work/haproxy.log, $pg_dir/*.log (kept in $work after Ctrl-C)
Try: curl -s http://127.0.0.1:$lb_port/v1/sessions -d '{"userId":"ada"}'   (answers name the node in X-FlowStack-Node)
Restart a node: scripts/cluster.sh restart 2      (same command line; see $work/node2.cmd)
Failover: python3 scripts/pgserver.py kill9 --dir $pg_dir; python3 scripts/pgserver.py promote --dir $pg_dir
  then bring the old primary back only as a standby of the new one (never 'restart' it):
          python3 scripts/pgserver.py rejoin --dir $pg_dir          (docs/operations.md: After a failover)
Ctrl-C stops everything (the logs stay in $work).
EOF

# Wait until interrupted; a node or HAProxy that exits is said, the others keep running; a node
# asked for by `scripts/cluster.sh restart N` is stopped (SIGTERM) and started again.
while :; do
    for i in $(seq 1 "$nodes"); do
        [ -f "$work/restart-node$i" ] || continue
        pid=${pids[$((i - 1))]}
        if [ "$pid" != 0 ]; then
            kill -TERM "$pid" 2>/dev/null
            for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
        fi
        say "restarting node$i"
        echo "--- cluster.sh: restarted at $(date -u +%FT%TZ)" >>"$work/node$i.log"
        start_node "$i"
        wait_healthy "$i" || say "node$i is not healthy after its restart; see $work/node$i.log"
        rm -f "$work/restart-node$i"
    done
    for index in "${!pids[@]}"; do
        pid=${pids[$index]}
        if [ "$pid" != 0 ] && ! kill -0 "$pid" 2>/dev/null; then
            name="node$((index + 1))"; [ "$index" -eq "$nodes" ] && name=haproxy
            say "$name (pid $pid) exited; see $work/$name.log"
            pids[$index]=0
        fi
    done
    sleep 1 &
    wait $! 2>/dev/null
done

#!/usr/bin/env bash
# Which objects a durable action retains and releases, by type: uprobes (perf probe) on Swift's
# `swift_retain` and `swift_release` read each call's object and its type's metadata, and one
# on libmicrohttpd's `MHD_queue_response` counts the answers, for SECONDS while wrk (-t2 -c64,
# bench/actions.lua) sends keyed actions at full load to a fresh SQLite file with 500 onboarded
# users' sessions. Each type's metadata is named by the running server's own
# `swift_getTypeName` (through gdb, at the end). Per action it prints the calls of each type,
# and how many objects of it were seen: a type with one object (a dictionary of the catalog, the
# server itself) is one cache line every thread's atomic operations share.
# Each probe costs a few microseconds, so the load falls a long way under it; the counts per
# action do not depend on the rate. `swift_retain_n`/`swift_release_n` (a few an action) are
# not counted. KEYED=0 sends actions without an Idempotency-Key.
# Needs root (uprobes), perf (Debian linux-perf), gdb and wrk; x86-64 (the probes read %di).
# Usage: bench/retains.sh FLOWSTACK_BIN [seconds] [types shown]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
[ $# -ge 1 ] || { echo "usage: bench/retains.sh FLOWSTACK_BIN [seconds] [types shown]" >&2; exit 2; }
for tool in perf wrk gdb; do
    command -v "$tool" >/dev/null || { echo "bench: install $tool (apt-get install -y linux-perf wrk gdb)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "bench: uprobes need root (perf probe)" >&2; exit 2; }
[ "$(uname -m)" = x86_64 ] || { echo "bench: the probes are written for x86-64, not $(uname -m)" >&2; exit 2; }
bin=$1
seconds=${2:-1}
shown=${3:-25}
work=$(mktemp -d)
pid=""
group="fsretains$$"
cleanup() {
    set +e  # every step runs, whatever failed before: the probes must not stay installed
    [ -z "$pid" ] || kill "$pid" 2>/dev/null
    wait 2>/dev/null
    perf probe -q -d "$group:*" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
core=$(ldd "$bin" | awk '/libswiftCore/ {print $3}')
mhd=$(ldd "$bin" | awk '/libmicrohttpd/ {print $3}')
[ -n "$core" ] && [ -n "$mhd" ] || { echo "bench: $bin is not linked with libswiftCore and libmicrohttpd" >&2; exit 1; }
for f in swift_retain swift_release; do
    perf probe -q -x "$core" -a "$group:${f#swift_}=$f obj=%di:u64 isa=+0(%di):u64"
done
perf probe -q -x "$mhd" -a "$group:answer=MHD_queue_response"

"$bin" serve --port 0 --db "$work/db.sqlite" --log-level warning >"$work/server.log" 2>&1 &
pid=$!
port=$(listening_port "$work/server.log")
[ -n "$port" ] || { echo "bench: flowstack did not start" >&2; cat "$work/server.log" >&2; exit 1; }
python3 bench/make_sessions.py "$port" 500 >"$work/sessions.txt"
KEYED=${KEYED:-1} SESSIONS="$work/sessions.txt" \
    wrk -t2 -c64 -d"$((seconds + 4))s" -s bench/actions.lua "http://127.0.0.1:$port/" >"$work/wrk.txt" 2>&1 &
wrk=$!
sleep 2
perf record -q -e "$group:retain" -e "$group:release" -e "$group:answer" -p "$pid" -o "$work/perf.data" -- sleep "$seconds" 2>/dev/null
wait "$wrk"
perf script -i "$work/perf.data" -F event,trace 2>/dev/null | python3 -c '
import collections, re, sys
calls, objects, answers, untyped = collections.Counter(), collections.defaultdict(set), 0, 0
for line in sys.stdin:
    if ":answer:" in line:
        answers += 1
        continue
    m = re.search(r":(retain|release): .*obj=(\d+) isa=(\d+)", line)
    if not m:
        continue
    kind, obj, isa = m.group(1), int(m.group(2)), int(m.group(3))
    if obj == 0:
        continue  # a nil reference: the runtime returns at once
    if isa == 0:
        untyped += 1  # not a heap object (a bridged value with tag bits): nothing to read
        continue
    calls[(kind, isa)] += 1
    objects[isa].add(obj)
with open(sys.argv[1], "w") as out:
    out.write(f"{answers} {untyped}\n")
    for isa in objects:
        retained, released = calls[("retain", isa)], calls[("release", isa)]
        out.write(f"{isa} {retained} {released} {len(objects[isa])}\n")
' "$work/counts.txt"
read -r answers untyped <"$work/counts.txt"
[ "$answers" -gt 0 ] || { echo "bench: no action was answered under the probes" >&2; exit 1; }
# Names of the metadata, from the server itself: most generic types' metadata are made at run time.
tail -n +2 "$work/counts.txt" | sort -k2,2nr -k3,3nr | head -n "$shown" >"$work/top.txt"
gdb_args=()
while read -r isa _; do
    gdb_args+=(-ex "printf \"$isa %s\\n\", (char *)swift_getTypeName($isa, 1)")
done <"$work/top.txt"
gdb -p "$pid" -batch -nx "${gdb_args[@]}" 2>/dev/null | awk '/^[0-9]+ / {print}' >"$work/names.txt" || true
python3 - "$work/counts.txt" "$work/top.txt" "$work/names.txt" "$answers" "$untyped" "$seconds" <<'PY'
import sys
counts, top, names, answers, untyped, seconds = sys.argv[1:7]
answers, untyped = int(answers), int(untyped)
named = {}
for line in open(names):
    isa, _, name = line.rstrip("\n").partition(" ")
    named[int(isa)] = name
rows = [tuple(int(x) for x in line.split()) for line in open(counts).read().splitlines()[1:]]
retains = sum(r[1] for r in rows)
releases = sum(r[2] for r in rows)
# The empty collections' singletons are immortal: the runtime takes its slow path for them
# and writes nothing, so no cache line moves between threads.
immortal = [r for r in rows if named.get(r[0], "").startswith(("Swift.__Empty", "Swift._swiftEmpty"))]
shown = {int(line.split()[0]) for line in open(top)}
few = [r for r in rows if r[0] in shown and r[3] <= 4 and r not in immortal]
print(f"{answers} actions answered under the probes in {seconds} s; per action:")
print(f"  retains {retains / answers:.0f}, releases {releases / answers:.0f} of heap objects, "
      f"{untyped / answers:.0f} calls more on values that are not (small strings, tagged values: they return at once)")
print(f"  on the empty collections' singletons (immortal, nothing written): "
      f"{sum(r[1] + r[2] for r in immortal) / answers:.0f} calls")
print(f"  on types with at most 4 objects in the window, shared by every request, among those shown: "
      f"{sum(r[1] + r[2] for r in few) / answers:.0f} calls, {len(few)} types")
print(f"{'retains':>8} {'releases':>8} {'objects':>8}  type")
for line in open(top):
    isa, r, rl, n = (int(x) for x in line.split())
    print(f"{r / answers:8.1f} {rl / answers:8.1f} {n:8d}  {named.get(isa, hex(isa))}")
PY

#!/usr/bin/env bash
# Where a durable action's wall-clock time goes, stage by stage, under wrk: uprobes (perf probe)
# on the access handler, libmicrohttpd's suspend, resume and queue of each connection, and the
# SQLite store's batch write, on a fresh SQLite file with 500 onboarded users' sessions. Per
# action it prints percentiles of:
#   the handler          the request's first access-handler call to the suspension (parse,
#                        judge, apply, encode, submit)
#   waiting to be written the suspension to the start of the batch that writes it (the writer
#                        busy with the batch before, or being woken)
#   the batch's write    that batch's SQLite transaction
#   completing           the batch's end to this action's resume (the batch's completions run
#                        in order on the writer thread)
#   answering            the resume to the answer queued on the connection (the HTTP thread
#                        finishing what it was doing when the resume came)
# and the batches' sizes, and each thread's CPU an action (perf stat). Paced (the default:
# PACE_MS=20 over 64 connections, bench/run.sh's paced rate), or at full load with `full`.
# KEYED=0 sends actions without an Idempotency-Key (keyed by default, as the clients send).
# wrk's figures and the CPU come from a first run without the probes; the stages from a second,
# recorded, run: each probe costs a few microseconds, so the stages read longer than without
# them. Compare runs of this script with each other, not with wrk's latencies of bench/run.sh.
# Needs root (uprobes), perf (Debian linux-perf), objcopy (binutils) and wrk.
# Usage: bench/stages.sh FLOWSTACK_BIN [PACE_MS|full] [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
[ $# -ge 1 ] || { echo "usage: bench/stages.sh FLOWSTACK_BIN [PACE_MS|full] [seconds]" >&2; exit 2; }
for tool in perf wrk objcopy; do
    command -v "$tool" >/dev/null || { echo "bench: install $tool (apt-get install -y linux-perf wrk binutils)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "bench: uprobes need root (perf probe)" >&2; exit 2; }
# The probes read arguments from x86-64's argument registers (%di, %si).
[ "$(uname -m)" = x86_64 ] || { echo "bench: the probes are written for x86-64, not $(uname -m)" >&2; exit 2; }
pace=${2:-20}
seconds=${3:-6}
[ "$pace" = full ] && pace=""
work=$(mktemp -d)
pid=""
group="fsstages$$"
cleanup() {
    set +e  # every step runs, whatever failed before: the probes must not stay installed
    [ -z "$pid" ] || kill "$pid" 2>/dev/null
    wait 2>/dev/null
    perf probe -q -d "$group:*" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
# STAGES_KEEP=DIR keeps the run's files there (the probes' events, wrk's output, the CPU figures).
[ -z "${STAGES_KEEP:-}" ] || trap 'cp -r "$work" "$STAGES_KEEP" || true; cleanup' EXIT
# A copy without DWARF (its symbols stay), which perf probe reads quickly whatever the DWARF version.
bin="$work/flowstack"
objcopy --strip-debug "$1" "$bin"
mhd=$(ldd "$bin" | awk '/libmicrohttpd/ {print $3}')
[ -n "$mhd" ] || { echo "bench: $1 is not linked with libmicrohttpd" >&2; exit 1; }
symbol() {  # the one symbol of the binary that matches $1
    local found
    found=$(nm "$bin" | awk -v pattern="$1" '$3 ~ pattern {print $3}' | head -1)
    [ -n "$found" ] || { echo "bench: no symbol matches $1 in $bin" >&2; exit 1; }
    echo "$found"
}
# `[$]`, not `\$`: awks differ in what a backslash before `$` in -v means.
access=$(symbol '^[$]s10HTTPServer13accessHandler.*To$')
write=$(symbol '^[$]s11SQLiteStoreAAC5write_2to8versions14keepsEveryHead.*CSbtFZ$')
perf probe -q -x "$bin" -a "$group:access=$access conn=%si:u64"
perf probe -q -x "$bin" -a "$group:write=$write"
perf probe -q -x "$bin" -a "$group:written=$write%return"
for f in MHD_suspend_connection MHD_resume_connection MHD_queue_response; do
    perf probe -q -x "$mhd" -a "$group:${f#MHD_}=$f conn=%di:u64"
done

"$bin" serve --port 0 --db "$work/db.sqlite" --log-level warning >"$work/server.log" 2>&1 &
pid=$!
port=$(listening_port "$work/server.log")
[ -n "$port" ] || { echo "bench: flowstack did not start" >&2; cat "$work/server.log" >&2; exit 1; }
python3 bench/make_sessions.py "$port" 500 >"$work/sessions.txt"
run_wrk() {
    KEYED=${KEYED:-1} PACE_MS=$pace SESSIONS="$work/sessions.txt" \
        wrk -t2 -c64 -d"${seconds}s" --latency -s bench/actions.lua "http://127.0.0.1:$port/" >"$1"
}
# First without the probes: wrk's figures and each thread's CPU an action.
perf stat --per-thread -e task-clock -p "$pid" -o "$work/cpu.txt" -- sleep "$((seconds + 1))" &
stat=$!
sleep 0.5
run_wrk "$work/wrk.txt"
wait "$stat"
# Then the same load again with the probes recorded, for the stages.
perf record -q -o "$work/probes.data" -e "$group:*" -p "$pid" -- sleep "$((seconds + 1))" >/dev/null 2>&1 &
record=$!
sleep 0.5
run_wrk "$work/wrk-probed.txt"
wait "$record"
perf script -i "$work/probes.data" -F tid,time,event,trace >"$work/events.txt" 2>/dev/null
load="full load"; [ -z "$pace" ] || load="paced at PACE_MS=$pace"
echo "durable actions, $load, wrk -t2 -c64 -d${seconds}s, KEYED=${KEYED:-1}:" \
     "$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt") a second, wrk's p50 $(awk '$1 == "50%" {print $2}' "$work/wrk.txt")," \
     "p99 $(awk '$1 == "99%" {print $2}' "$work/wrk.txt")"
python3 - "$work/events.txt" "$work/cpu.txt" "$work/wrk.txt" <<'PY'
import bisect, collections, re, sys
events_path, cpu_path, wrk_path = sys.argv[1:]
pattern = re.compile(r"\s*(\d+)\s+([\d.]+):\s+\S+:(\w+):\s+\([^)]*\)(?:\s+conn=(\d+))?")
events = [(int(m[1]), float(m[2]), m[3], m[4]) for line in open(events_path) if (m := pattern.match(line))]
starts, ends = [], []
open_write = {}
for thread, time, event, _ in events:
    if event == "write":
        open_write[thread] = time
    elif event.startswith("written") and thread in open_write:
        starts.append(open_write.pop(thread)); ends.append(time)
stages = collections.defaultdict(list)
request = {}  # connection -> times of the request in progress
resumed_by_batch = collections.Counter()  # batch -> the resumes that followed it (its actions)
for _, time, event, connection in events:
    if event == "access":
        if connection not in request or "queued" in request[connection]:
            request[connection] = {"start": time}
    elif event in ("suspend_connection", "resume_connection"):
        if event == "resume_connection" and (batch := bisect.bisect_right(ends, time) - 1) >= 0:
            resumed_by_batch[batch] += 1
        if connection in request:
            request[connection][event] = time
    elif event == "queue_response" and connection in request and "queued" not in request[connection]:
        r = request[connection]
        r["queued"] = time
        if "suspend_connection" not in r or "resume_connection" not in r:
            continue  # answered without a commit (a refusal, a replay)
        suspended, resumed = r["suspend_connection"], r["resume_connection"]
        batch = bisect.bisect_right(ends, resumed) - 1  # the last batch written before the resume
        if batch < 0 or starts[batch] < suspended:
            continue  # the batch began before this action was queued: not its batch
        stages["the handler"].append(suspended - r["start"])
        stages["waiting to be written"].append(starts[batch] - suspended)
        stages["the batch's write"].append(ends[batch] - starts[batch])
        stages["completing"].append(resumed - ends[batch])
        stages["answering"].append(time - resumed)
        stages["in the server"].append(time - r["start"])
def percentile(values, share):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * share))] * 1e6
count = len(stages["in the server"])
print(f"{count} actions followed from their first access-handler call to their answer; microseconds:")
print(f"  {'stage':24} {'p50':>7} {'p90':>7} {'p99':>7} {'mean':>7}")
for name, values in stages.items():
    mean = sum(values) / len(values) * 1e6
    print(f"  {name:24} {percentile(values, .5):7.0f} {percentile(values, .9):7.0f} {percentile(values, .99):7.0f} {mean:7.0f}")
sizes = list(resumed_by_batch.values())
if sizes:
    written = sum(sizes)
    def share(low, high):
        return sum(n for n in sizes if low <= n <= high) * 100 / written
    print(f"  {len(sizes)} batches written, {written / len(sizes):.1f} actions each on average (resumes after each);"
          f" actions in batches of 1: {share(1, 1):.0f}%, 2-4: {share(2, 4):.0f}%, 5-16: {share(5, 16):.0f}%,"
          f" more: {share(17, 1 << 30):.0f}%")
actions = int(re.search(r"(\d+) requests in", open(wrk_path).read())[1])
cpu = collections.Counter()
for line in open(cpu_path):
    if m := re.match(r"\s*(\S+?)-\d+\s+([\d,.]+)\s+msec task-clock", line):
        name = "HTTP threads" if m[1].startswith("MHD-worker") else m[1]
        cpu[name] += float(m[2].replace(",", ""))
print("  CPU an action, by thread (perf stat): " +
      ", ".join(f"{name} {ms * 1000 / actions:.1f} µs" for name, ms in cpu.most_common() if ms * 1000 / actions >= 0.1))
PY

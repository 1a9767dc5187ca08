#!/usr/bin/env python3
"""What the slowest taps in the playground are (issue 36, part 3), from Chromium's own tracing.

Usage: tap_trace.py PATH/TO/flowstack [TAPS] [--rounds N] [--top PERCENT] [--sched] [--keep DIR]

Drives the page as bench/tap_latency.py does (the sample app at home, 300 ms each way, TAPS presses
of the tab bar a round, 210 by default) with Chromium's tracing on over the DevTools protocol
(devtools.timeline, v8, disabled-by-default-v8.gc, disabled-by-default-v8.compile,
blink.user_timing, toplevel). Each tap is marked from outside the page's code: the page's
`tapTimes.push` (called once the stack is in the DOM) is wrapped to put a `performance.mark` into
the trace and to note the JavaScript heap's growth since the press (Chromium runs with
--enable-precise-memory-info). A tap's span is then the press's `click` dispatch to that mark, on
the renderer's main thread, and what ran inside it is counted: garbage collection (V8's and
Blink's), style and layout (forced inside the handler), compilation and tier-up (V8's compile
events and budget interrupts), any other task's call, and the time the thread was not on a CPU
(the span's wall time less its thread time, from the trace's `tts`).

With --sched (root, `perf` installed), `perf record -e sched:sched_switch -a` runs beside each
round on the same clock (CLOCK_MONOTONIC): each time the main thread left the CPU inside a span is
then known, whether it was preempted (runnable, state R) or slept (blocked), and what ran on the
cores meanwhile (this browser's threads by name, this server, other processes, idle).

Prints, per round, the taps summary and the slowest TOP % of taps (3 by default) with what each
contained, and at the end how many of all the slow taps had each cause as their largest part.
`--keep DIR` keeps each round's trace (and perf data) there. Loopback only.
"""
import argparse
import bisect
import collections
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from tap_latency import open_playground, press_tabs, rank, summary  # noqa: E402
from harness.devtools import Chromium  # noqa: E402
from harness.server import FlowStackProcess  # noqa: E402

CATEGORIES = ["devtools.timeline", "v8", "disabled-by-default-v8.gc", "disabled-by-default-v8.compile",
              "blink.user_timing", "toplevel"]

# Wraps the page's record of each tap (`app.tapTimes.push(drawMs)`, right after the stack is drawn):
# a mark in the trace and the heap's growth since the press's capture-phase click.
HOOK = """(() => {
  const app = window.FlowStackPlayground;
  const records = window.__tapTrace = [];
  if (!window.__tapTraceHooked) {
    window.__tapTraceHooked = true;
    window.addEventListener('click', () => { window.__tapTraceHeap = performance.memory.usedJSHeapSize; }, true);
  }
  const times = app.tapTimes = [];
  times.push = function (ms) {
    const heap = performance.memory.usedJSHeapSize - window.__tapTraceHeap;
    performance.mark('tap-drawn');
    records.push({ms, heap});
    return Array.prototype.push.call(this, ms);
  };
  return true;
})()"""

STYLE = {"UpdateLayoutTree", "Layout", "RecalculateStyles", "HitTest", "PrePaint", "Paint"}


def is_gc(name):
    return "GC" in name or "Scavenge" in name or name.startswith("BlinkGC") or name.startswith("CppGC")


def is_jit(name):
    return any(word in name for word in ("Compile", "Maglev", "Turbofan", "Optimize", "Deoptimize", "BytecodeBudget",
                                         "ParseFunction", "FlushInstructionCache", "Baseline", "StackGuard", "HandleInterrupts"))


def merged(intervals):
    total, end = 0, -1
    for start, stop in sorted(intervals):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def read_switches(path):
    """(time µs, cpu, tgid, prev tid, prev state, next tid, next comm) of each sched_switch in perf's data."""
    text = subprocess.run(["perf", "script", "-i", path, "-F", "pid,tid,cpu,time,event,trace"],
                          capture_output=True, text=True, check=True).stdout
    pattern = re.compile(r"\s*(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+): sched:sched_switch: prev_comm=.*? prev_pid=(\d+) "
                         r"prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)")
    switches, tgid = [], {}
    for line in text.splitlines():
        found = pattern.match(line)
        if found:
            pid, tid, cpu, at, prev, state, comm, nxt = found.groups()
            tgid[int(tid)] = int(pid)
            switches.append((round(float(at) * 1e6), int(cpu), int(prev), state, int(nxt), comm))
    return switches, tgid


def process_tree(root):
    children = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as file:
                    children[int(file.read().rsplit(")", 1)[1].split()[1])].append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo += children.get(pid, [])
    return found


def analyse(events, records, sched=None):
    """One row per tap: its span on the main thread and what it held."""
    marks = [e for e in events if e.get("name") == "tap-drawn" and e.get("cat") == "blink.user_timing"]
    pid, tid = marks[0]["pid"], marks[0]["tid"]
    main = sorted((e for e in events if e.get("pid") == pid and e.get("tid") == tid and e.get("ph") == "X"),
                  key=lambda e: e["ts"])
    clicks = [e for e in main if e["name"] == "EventDispatch" and e.get("args", {}).get("data", {}).get("type") == "click"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    gaps = []
    if sched:
        switches, tgid, groups = sched
        out = None
        for at, cpu, prev, state, nxt, _ in switches:
            if prev == tid and out is None:
                out = (at, state)
            elif nxt == tid and out is not None:
                gaps.append((out[0], at, out[1]))
                out = None
    rows = []
    starts = [e["ts"] for e in main]
    for mark, record in zip(marks, records):
        click = next(c for c in reversed(clicks) if c["ts"] <= mark["ts"] <= c["ts"] + c["dur"])
        start, end = click["ts"], mark["ts"]
        inside = [e for e in main[bisect.bisect_left(starts, start):bisect.bisect_left(starts, end)] if e is not click]
        row = {"ms": record["ms"], "heap": record["heap"], "wall": (end - start) / 1000,
               "cpu": (mark["tts"] - click["tts"]) / 1000 if "tts" in mark and "tts" in click else None}
        for kind, test in (("gc", is_gc), ("style", lambda n: n in STYLE), ("jit", is_jit)):
            chosen = [e for e in inside if test(e["name"])]
            row[kind] = merged([(e["ts"], min(end, e["ts"] + e["dur"])) for e in chosen]) / 1000
            row[kind + "Cpu"] = merged([(e["ts"], e["ts"] + min(e.get("tdur", e["dur"]), end - e["ts"])) for e in chosen]) / 1000
            row[kind + "Names"] = sorted({e["name"] for e in chosen})
        # Calls into the page's JavaScript other than the press's own listener (the hook's
        # capture listener, a script of no URL, is left out).
        calls = [e["args"].get("data", {}) for e in inside if e["name"] == "FunctionCall"]
        row["tasks"] = sorted({e["name"] for e in inside if e["name"] in ("TimerFire", "FireAnimationFrame", "RunMicrotasks")}
                              | {f"{c.get('functionName') or '(anonymous)'} {c.get('url', '').rsplit('/', 1)[-1]}:{c.get('lineNumber')}"
                                 for c in calls if c.get("url") and c.get("functionName") != "pressPhone"})
        row["off"] = row["wall"] - row["cpu"] if row["cpu"] is not None else None
        if sched:
            switches, tgid, groups = sched
            row["preempted"] = row["blocked"] = 0.0
            ran = collections.Counter()
            for out_at, in_at, state in gaps:
                low, high = max(start, out_at), min(end, in_at)
                if low >= high:
                    continue
                row["preempted" if state.startswith("R") else "blocked"] += (high - low) / 1000
                running = {}
                for at, cpu, prev, _, nxt, comm in switches:
                    if at <= low:
                        running[cpu] = (nxt, comm, at)
                    elif at < high:
                        if cpu in running:
                            ran[who(running[cpu], tgid, groups, names)] += at - max(low, running[cpu][2])
                        running[cpu] = (nxt, comm, at)
                    else:
                        break
                for cpu, occupant in running.items():
                    ran[who(occupant, tgid, groups, names)] += high - max(low, occupant[2])
            row["ran"] = ran
        rows.append(row)
    gcs = [e for e in main if e["name"] in ("MinorGC", "MajorGC")]
    in_taps = []
    for mark, row in zip(marks, rows):
        click = next(c for c in reversed(clicks) if c["ts"] <= mark["ts"])
        in_taps += [(e["name"], e["dur"] / 1000) for e in gcs if click["ts"] <= e["ts"] < mark["ts"]]
    return rows, {"gcs": [(e["name"], e["dur"] / 1000, e.get("args", {}).get("type")) for e in gcs], "gcsInTaps": in_taps}


def who(occupant, tgid, groups, names):
    tid, comm, _ = occupant
    if tid == 0 or comm.startswith("swapper"):
        return "idle"
    pid = tgid.get(tid)
    if pid in groups["browser"]:
        return "chromium " + names.get(tid, comm)
    if pid in groups["server"]:
        return "flowstack (this server)"
    if pid in groups["harness"]:
        return "this script"
    return "other processes"


def cause(row, typical_cpu):
    """The largest part of what made this tap slow: time off the CPU, or what its extra CPU time went to."""
    extra = max(0.0, (row["cpu"] or 0) - typical_cpu - row["gcCpu"] - row["jitCpu"] - row["styleCpu"])
    parts = {"off the CPU (scheduler)": row["off"] or 0, "garbage collection": row["gcCpu"], "forced style/layout": row["styleCpu"],
             "compilation/tier-up": row["jitCpu"], "more of its own JavaScript": extra}
    return max(parts, key=parts.get)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("taps", type=int, nargs="?", default=210)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--top", type=float, default=3.0, help="the slowest PERCENT of each round's taps are looked at")
    parser.add_argument("--sched", action="store_true", help="record the scheduler's switches with perf too")
    parser.add_argument("--keep")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="flowstack-tap-trace-")
    server = FlowStackProcess(os.path.abspath(args.binary), work)
    browser = Chromium(work, viewport=(1440, 1000), extra_args=["--enable-precise-memory-info"])
    causes, slow_all, allocation, gc_counts = collections.Counter(), [], [], []
    try:
        server.start()
        browser.start()
        page = open_playground(browser, server.port)
        for round_ in range(args.rounds):
            page.js(HOOK)
            perf = None
            perf_file = os.path.join(args.keep or work, f"round{round_ + 1}.perf")
            if args.sched:
                perf = subprocess.Popen(["perf", "record", "-q", "-e", "sched:sched_switch", "-a", "-k", "CLOCK_MONOTONIC",
                                         "-o", perf_file], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1)  # perf opens its buffers on every CPU before it records
            browser.trace_start(CATEGORIES)
            press_tabs(page, args.taps)
            events = browser.trace_stop()
            sched = None
            if perf:
                perf.send_signal(signal.SIGINT)
                perf.wait(timeout=60)
                switches, tgid = read_switches(perf_file)
                groups = {"browser": process_tree(browser.process.pid), "server": process_tree(server.process.pid),
                          "harness": {os.getpid()}}
                sched = (switches, tgid, groups)
            records = page.js("window.__tapTrace")
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                with open(os.path.join(args.keep, f"round{round_ + 1}.json"), "w") as file:
                    json.dump({"traceEvents": events, "taps": records}, file)
            rows, gc = analyse(events, records, sched)
            with open("/proc/loadavg") as file:
                load = file.read().split()[0]
            print(f"round {round_ + 1}: {summary([r['ms'] for r in rows])}; load average {load}", flush=True)
            cpus = sorted(r["cpu"] for r in rows if r["cpu"] is not None)
            typical = rank(cpus, 50) if cpus else 0.0
            heaps = sorted(r["heap"] for r in rows if r["heap"] > 0)
            allocation += heaps
            gc_counts.append((len(gc["gcs"]), len(gc["gcsInTaps"])))
            print(f"  span (click to drawn) in the trace: median wall {rank(sorted(r['wall'] for r in rows), 50):.2f} ms, "
                  f"thread time {typical:.2f} ms; heap grown inside a tap: median {rank(heaps, 50) / 1024:.1f} KiB; "
                  f"{len(gc['gcs'])} GCs on the main thread in the round ({', '.join(f'{n} {d:.2f} ms' for n, d, _ in gc['gcs'])}), "
                  f"{len(gc['gcsInTaps'])} inside a tap", flush=True)
            count = math.ceil(len(rows) * args.top / 100)
            for row in sorted(rows, key=lambda r: (-r["ms"], -r["wall"]))[:count]:
                reason = cause(row, typical)
                causes[reason] += 1
                slow_all.append((row, reason))
                line = (f"  {row['ms']:.1f} ms (span {row['wall']:.2f}, thread {row['cpu']:.2f}, off the CPU {row['off']:.2f}; "
                        f"GC {row['gc']:.2f} {','.join(row['gcNames'][:2])}; style/layout {row['style']:.2f}; "
                        f"compile {row['jit']:.2f} (thread {row['jitCpu']:.2f}); heap +{row['heap'] / 1024:.1f} KiB")
                if row["tasks"]:
                    line += f"; other calls {row['tasks']}"
                if sched:
                    line += (f"; preempted {row['preempted']:.2f}, blocked {row['blocked']:.2f}, ran meanwhile: "
                             + ", ".join(f"{k} {v / 1000:.2f}" for k, v in row["ran"].most_common(4)))
                print(line + f") -> {reason}", flush=True)
        print(f"slowest {args.top:g} % of {args.rounds} rounds: {len(slow_all)} taps; largest part: "
              + ", ".join(f"{k} {v}" for k, v in causes.most_common()))
        for reason in causes:
            chosen = [r for r, c in slow_all if c == reason]
            part = {"off the CPU (scheduler)": "off", "garbage collection": "gcCpu", "forced style/layout": "styleCpu",
                    "compilation/tier-up": "jitCpu"}.get(reason)
            if part:
                values = sorted(r[part] for r in chosen)
                print(f"  {reason}: {values[0]:.2f}-{values[-1]:.2f} ms of the tap (median {rank(values, 50):.2f})")
        print(f"  slow taps containing: GC {sum(1 for r, _ in slow_all if r['gc'] > 0)}, style/layout "
              f"{sum(1 for r, _ in slow_all if r['style'] > 0)}, compile events {sum(1 for r, _ in slow_all if r['jit'] > 0)}, "
              f"more than 0.5 ms off the CPU {sum(1 for r, _ in slow_all if (r['off'] or 0) > 0.5)}, other tasks' calls "
              f"{sum(1 for r, _ in slow_all if r['tasks'])}")
        if allocation:
            allocation.sort()
            print(f"heap grown inside a tap (taps with no GC in them): median {rank(allocation, 50) / 1024:.1f} KiB, "
                  f"p90 {rank(allocation, 90) / 1024:.1f} KiB; GCs per round {[g for g, _ in gc_counts]}, inside a tap {[t for _, t in gc_counts]}")
    finally:
        browser.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The live-events benchmark (issue target: 2,000 open streams while actions run at a steady
1,000/s, each event delivered within 50 ms p99 of its commit, state reads and actions within 10%
of their figures with no streams open, and the memory per open stream stated).

Usage: bench/events.py FLOWSTACK_BINARY [seconds per phase] [--streams N] [--rate R] [--rounds K]
       (bench/events.sh builds release and runs this; it is the command of BENCHMARKS.md)

Starts `flowstack serve` on a fresh SQLite file (a free port, --max-connections-per-ip 8192),
makes 500 onboarded sessions for wrk (bench/make_sessions.py) and N/2 fresh sessions for the
streams, then, `seconds` per phase:
  1. actions at a steady R/s on the stream sessions, no stream open: the answer times and the
     server's CPU per action without events, to compare with 3;
  2. opens N streams, two per stream session (a phone and a web view), from one asyncio process
     (`--role streams`), and reads the server's VmRSS before and after: memory per open stream;
  3. actions at a steady R/s on the stream sessions from a second process (`--role actions`:
     paced, 32 keep-alive connections, each session's onboarding.showSecond / returnToFirst in
     turn, one session's actions never overlapping), logging per action the time it was sent
     (time.monotonic(), one clock for every process on Linux) and the version it answers; the
     streams process logs when each (stream, version) arrived. Delivery latency = arrival −
     send: an upper bound of commit → delivery (it includes the commit itself and the Python
     clients' own delays on the same two cores). Every stream must get every version in order
     and end at its session's last one; a skipped version is counted.
     Then the streams are closed (the server's open-streams gauge must reach 0);
  4. wrk -t2 -c64 on state reads and on actions (bench/reads.lua, bench/actions.lua), no stream open;
  5. the N streams opened again, idle (wrk's sessions are others), the same wrk runs, the streams
     closed, and the wrk runs with none open again; K times with --rounds K. The ratio is the
     mean with streams over the mean without (none, open, none: a steady drift cancels out).
Prints a table and the verdict of each target. Standard library only.
"""
import argparse
import asyncio
import http.client
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time

HOST = "127.0.0.1"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from harness.server import FlowStackProcess  # noqa: E402
LATENCY_TARGET_MS = 50.0
RATIO_TARGET = 0.90  # "within 10%"


# ---------------------------------------------------------------------------------------------
# Small helpers

def raise_open_file_limit(wanted):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def percentile(sorted_values, fraction):
    """The value below which `fraction` of `sorted_values` lie (nearest rank); nan when empty."""
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, int(round(fraction * len(sorted_values) + 0.5)) - 1))
    return sorted_values[rank]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+) kB", status.read()).group(1))


def cpu_seconds(pid):
    """User + system CPU time of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metrics(port):
    """The server's /metrics as {name: value} for the unlabelled series."""
    connection = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
    finally:
        connection.close()
    values = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and not line.startswith("#") and "{" not in parts[0]:
            try:
                values[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return values


def read_sessions(path):
    with open(path) as file:
        return [tuple(line.split()[:2]) for line in file if line.strip()]


async def read_http_response(reader):
    """Status, headers (lower-case names) and body of one Content-Length answer."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers, body


VERSION = re.compile(rb'"version":(\d+)')


# ---------------------------------------------------------------------------------------------
# --role streams: N Server-Sent Events streams in one asyncio process

class StreamClient(asyncio.Protocol):
    """One event stream: sends the GET, decodes the chunked body and the events in it, and
    records (version, arrival time) of each state event as its bytes arrive."""

    def __init__(self, index, session_id, token, opened):
        self.index, self.session_id, self.token = index, session_id, token
        self.opened = opened  # a future set at the first state event (or the failure)
        self.transport = None
        self.buffer = bytearray()
        self.events = bytearray()
        self.in_body = False
        self.status = None
        self.records = []  # (version, arrival)
        self.order_errors = 0  # a version not above the one before
        self.mismatched = 0  # an event whose data is not the version its id says
        self.comments = 0
        self.deleted = False
        self.ended = False  # the chunked terminator arrived
        self.lost_at = None  # when the connection closed, if it did
        self.error = None

    def connection_made(self, transport):
        self.transport = transport
        transport.write(f"GET /v1/sessions/{self.session_id}/events HTTP/1.1\r\nHost: {HOST}\r\n"
                        f"Authorization: Bearer {self.token}\r\nAccept: text/event-stream\r\n\r\n".encode())

    def data_received(self, data):
        now = time.monotonic()
        self.buffer += data
        if not self.in_body:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end]).decode("latin-1").lower()
            del self.buffer[:end + 4]
            self.status = int(head.split()[1])
            if self.status != 200 or "transfer-encoding: chunked" not in head or "text/event-stream" not in head:
                self.fail(f"answered {self.status}: {head[:200]!r}")
                return
            self.in_body = True
        while not self.ended:
            line_end = self.buffer.find(b"\r\n")
            if line_end < 0:
                return
            size = int(bytes(self.buffer[:line_end]).split(b";")[0], 16)
            if size == 0:
                self.ended = True
                return
            if len(self.buffer) < line_end + 2 + size + 2:
                return
            self.events += self.buffer[line_end + 2:line_end + 2 + size]
            del self.buffer[:line_end + 2 + size + 2]
            self.parse_events(now)

    def parse_events(self, now):
        while True:
            end = self.events.find(b"\n\n")
            if end < 0:
                return
            block = bytes(self.events[:end])
            del self.events[:end + 2]
            fields = {}
            for line in block.split(b"\n"):
                if line.startswith(b":"):
                    continue
                name, _, value = line.partition(b":")
                fields[name] = value[1:] if value.startswith(b" ") else value
            if not fields:
                self.comments += 1
                continue
            kind = fields.get(b"event", b"message")
            if kind == b"deleted":
                self.deleted = True
            elif kind == b"state":
                version = int(fields[b"id"])
                found = VERSION.search(fields.get(b"data", b"")[:400])
                if not found or int(found.group(1)) != version:
                    self.mismatched += 1
                if self.records and version <= self.records[-1][0]:
                    self.order_errors += 1
                self.records.append((version, now))
                if not self.opened.done():
                    self.opened.set_result(None)

    def fail(self, why):
        self.error = self.error or why
        if not self.opened.done():
            self.opened.set_result(None)
        if self.transport:
            self.transport.close()

    def connection_lost(self, exc):
        self.lost_at = time.monotonic()
        if not self.opened.done():
            self.error = self.error or f"closed before the first event ({exc!r})"
            self.opened.set_result(None)


async def streams_role(args):
    loop = asyncio.get_running_loop()
    sessions = read_sessions(args.sessions)
    clients = []
    gate = asyncio.Semaphore(200)  # connections being set up at once

    async def open_one(index, session_id, token):
        async with gate:
            opened = loop.create_future()
            client = StreamClient(index, session_id, token, opened)
            clients.append(client)
            try:
                await loop.create_connection(lambda: client, HOST, args.port)
            except OSError as error:
                client.fail(f"connect: {error!r}")
            await asyncio.wait_for(opened, 30)

    started = time.monotonic()
    await asyncio.gather(*(open_one(index, session_id, token)
                           for index, (session_id, token) in enumerate(
                               (s for s in sessions for _ in range(args.per_session)))))
    failed = [client for client in clients if client.error]
    print(json.dumps({"ready": len(clients) - len(failed), "failed": len(failed), "seconds": time.monotonic() - started,
                      "first_error": failed[0].error if failed else None}), flush=True)
    # Hold the streams until told to stop (a line or the end of stdin).
    await loop.run_in_executor(None, sys.stdin.readline)
    stopped = time.monotonic()
    lost = sum(1 for client in clients if client.lost_at is not None)
    for client in clients:
        if client.transport:
            client.transport.close()
    with open(args.log, "w") as log:
        for client in clients:
            json.dump({"stream": client.index, "session": client.session_id, "error": client.error,
                       "orderErrors": client.order_errors, "mismatched": client.mismatched, "comments": client.comments,
                       "deleted": client.deleted, "ended": client.ended, "lostBeforeStop": client.lost_at is not None
                       and client.lost_at < stopped, "records": client.records}, log)
            log.write("\n")
    print(json.dumps({"done": True, "lostBeforeStop": lost}), flush=True)


# ---------------------------------------------------------------------------------------------
# --role actions: a steady rate of actions over the stream sessions

async def actions_role(args):
    sessions = read_sessions(args.sessions)
    total = int(args.rate * args.duration)
    locks = [asyncio.Lock() for _ in sessions]
    log = []  # (index, session, version, status, scheduled, sent, answered)
    state = {"next": 0}

    async def connect():
        return await asyncio.open_connection(HOST, args.port)

    async def current_version(reader, writer, session_id, token):
        writer.write((f"GET /v1/sessions/{session_id} HTTP/1.1\r\nHost: {HOST}\r\n"
                      f"Authorization: Bearer {token}\r\n\r\n").encode())
        _, _, document = await read_http_response(reader)
        found = VERSION.search(document[:400])
        return int(found.group(1)) if found else 0

    # Where each session is now (an even version is at onboarding.first, an odd one at .second).
    reader, writer = await connect()
    versions = [await current_version(reader, writer, session_id, token) for session_id, token in sessions]
    writer.close()
    start = time.monotonic() + 0.2

    async def worker():
        reader, writer = await connect()
        while True:
            index = state["next"]
            if index >= total:
                break
            state["next"] += 1
            due = start + index / args.rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            number = index % len(sessions)
            session_id, token = sessions[number]
            async with locks[number]:  # a session's actions one after another, as one client's taps
                action = "onboarding.showSecond" if versions[number] % 2 == 0 else "onboarding.returnToFirst"
                body = json.dumps({"type": action}).encode()
                request = (f"POST /v1/sessions/{session_id}/actions HTTP/1.1\r\nHost: {HOST}\r\n"
                           f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                           f"Content-Length: {len(body)}\r\n\r\n").encode() + body
                for attempt in range(2):
                    sent = time.monotonic()
                    try:
                        writer.write(request)
                        status, headers, answer = await read_http_response(reader)
                        break
                    except (OSError, asyncio.IncompleteReadError):
                        writer.close()
                        reader, writer = await connect()
                        status, headers, answer = 0, {}, b""
                answered = time.monotonic()
                found = VERSION.search(answer[:400])
                version = int(found.group(1)) if found and status == 200 else -1
                if version >= 0:
                    versions[number] = version
                elif status:  # out of step (should not happen): read the session's version again
                    versions[number] = await current_version(reader, writer, session_id, token)
                if headers.get("connection", "").lower() == "close":
                    writer.close()
                    reader, writer = await connect()
                log.append((index, session_id, version, status, due, sent, answered))
        writer.close()

    await asyncio.gather(*(worker() for _ in range(args.connections)))
    with open(args.log, "w") as file:
        json.dump(log, file)
    print(json.dumps({"done": True, "actions": len(log)}), flush=True)


# ---------------------------------------------------------------------------------------------
# The orchestration: server, sessions, wrk, the two roles, the figures

def start_server(binary, work):
    """`flowstack serve` on a free port (harness.server), what it prints kept in `work`."""
    server = FlowStackProcess(binary, work, admin_token=f"events-bench-{os.getpid()}-" + "0" * 32,
                              db=os.path.join(work, "events.sqlite"), extra_args=["--max-connections-per-ip", "8192"],
                              keep_stdout=True)
    try:
        server.start()
    except RuntimeError as error:
        raise SystemExit(f"events: flowstack did not start: {error}")
    return server


def create_stream_sessions(port, count, path):
    """`count` fresh sessions (users who have not onboarded), "ID TOKEN" lines in `path`."""
    made = [None] * count

    def create(start, stop):
        connection = http.client.HTTPConnection(HOST, port, timeout=30)
        for index in range(start, stop):
            connection.request("POST", "/v1/sessions", json.dumps({"userId": f"events-{index}"}),
                               {"Content-Type": "application/json"})
            response = connection.getresponse()
            document = json.loads(response.read())
            if response.status != 201 or document["state"]["version"] != 0:
                raise SystemExit(f"events: session creation answered {response.status}")
            made[index] = (document["session"]["id"], document["session"]["token"])
        connection.close()

    threads = [threading.Thread(target=create, args=(i * count // 4, (i + 1) * count // 4)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with open(path, "w") as file:
        for session_id, token in made:
            file.write(f"{session_id} {token}\n")


def ms(text):
    """wrk's latency (850.00us, 12.34ms, 1.02s) in milliseconds."""
    for unit, scale in (("us", 0.001), ("ms", 1.0), ("s", 1000.0), ("m", 60000.0)):
        if text.endswith(unit):
            return float(text[:-len(unit)]) * scale
    return float("nan")


def wrk(port, script, seconds, sessions):
    out = subprocess.run(["wrk", "-t2", "-c64", f"-d{seconds}s", "--latency", "-s", script, f"http://{HOST}:{port}"],
                         capture_output=True, text=True, env=dict(os.environ, SESSIONS=sessions), check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {"rps": rps, "p99": p99, "non2xx": int(non2xx.group(1)) if non2xx else 0}


def wrk_pair(label, port, seconds, sessions):
    reads = wrk(port, os.path.join(HERE, "reads.lua"), seconds, sessions)
    actions = wrk(port, os.path.join(HERE, "actions.lua"), seconds, sessions)
    for name, run in (("state reads", reads), ("actions", actions)):
        print(f"  {label:<22} {name:<12} {run['rps']:>10,.0f} req/s   p99 {run['p99']:7.2f} ms   non-2xx {run['non2xx']}",
              flush=True)
    return reads, actions


def role_process(role, port, sessions, log, extra=()):
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), "--role", role, "--port", str(port),
                             "--sessions", sessions, "--log", log, *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def wait_for_open_gauge(port, wanted, timeout):
    """Seconds until flowstack_event_streams_open reads `wanted`, or None after `timeout`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if metrics(port).get("flowstack_event_streams_open") == wanted:
            return time.monotonic() - started
        time.sleep(0.2)
    return None


def analyse(action_log, stream_log):
    """Delivery latencies and the count of events expected, received and skipped."""
    sent = {}  # (session, version) -> send time
    last_version = {}
    for _, session, version, status, _, send, _ in action_log:
        if status == 200 and version >= 0:
            sent[(session, version)] = send
            last_version[session] = max(last_version.get(session, 0), version)
    latencies, expected, received, at_last, problems = [], 0, 0, 0, []
    streams = [json.loads(line) for line in open(stream_log)]
    for stream in streams:
        records = stream["records"]
        if stream["error"]:
            problems.append(f"stream {stream['stream']}: {stream['error']}")
            continue
        first = records[0][0] if records else 0
        final = last_version.get(stream["session"], first)
        expected += final - first
        versions = {version for version, _ in records if version > first}
        received += len(versions)
        if records and records[-1][0] == final:
            at_last += 1
        for version, arrival in records:
            if (stream["session"], version) in sent:
                latencies.append((arrival - sent[(stream["session"], version)]) * 1000)
        for key, what in (("orderErrors", "versions out of order"), ("mismatched", "data not of its id's version")):
            if stream[key]:
                problems.append(f"stream {stream['stream']}: {stream[key]} {what}")
        if stream["lostBeforeStop"]:
            problems.append(f"stream {stream['stream']}: closed by the server during the run")
    latencies.sort()
    return {"latencies": latencies, "expected": expected, "received": received, "skipped": expected - received,
            "streams": len(streams), "atLast": at_last, "problems": problems}


def open_streams(port, sessions, log):
    """Starts the streams process; returns it and its ready report once every stream has its first event."""
    process = role_process("streams", port, sessions, log)
    ready = json.loads(process.stdout.readline())
    if ready["failed"]:
        raise SystemExit(f"events: {ready['failed']} streams did not open, first: {ready['first_error']}")
    return process, ready


def close_streams(process, port):
    """Stops the streams process (it writes its log) and waits for the server to count no stream
    open; returns the seconds that took, or None."""
    process.stdin.write("stop\n")
    process.stdin.flush()
    process.wait(timeout=120)
    return wait_for_open_gauge(port, 0, 40)


def action_phase(server, sessions, log, rate, seconds, connections):
    """Actions at `rate`/s for `seconds` from the actions process; returns its log, the server's CPU
    seconds over the phase, its peak RSS, and the events the server queued meanwhile."""
    sent_before = metrics(server.port).get("flowstack_events_sent_total", 0)
    cpu_before = cpu_seconds(server.pid)
    peak = [rss_kib(server.pid)]
    stop = threading.Event()

    def sample():
        while not stop.wait(0.25):
            peak[0] = max(peak[0], rss_kib(server.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    process = role_process("actions", server.port, sessions, log,
                           ["--rate", str(rate), "--connections", str(connections), "--duration", str(seconds)])
    process.wait()
    time.sleep(1)  # the last events in flight
    stop.set()
    sampler.join()
    cpu = cpu_seconds(server.pid) - cpu_before
    queued = metrics(server.port).get("flowstack_events_sent_total", 0) - sent_before
    if process.returncode != 0:
        raise SystemExit("events: the actions process failed")
    return {"log": json.load(open(log)), "cpu": cpu, "peak": peak[0], "queued": queued}


def action_figures(phase):
    """Rate achieved, 200s, answer times (ms) and lag behind the schedule (ms) of an action phase."""
    log = phase["log"]
    sends = sorted(entry[5] for entry in log)
    span = (sends[-1] - sends[0]) if len(sends) > 1 else float("nan")
    return {"count": len(log), "rate": (len(log) - 1) / span, "span": span,
            "ok": sum(1 for entry in log if entry[3] == 200),
            "answer": sorted((entry[6] - entry[5]) * 1000 for entry in log),
            "lag": sorted((entry[5] - entry[4]) * 1000 for entry in log),
            "cpu_us": phase["cpu"] / max(1, len(log)) * 1e6}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", nargs="?")
    parser.add_argument("seconds", nargs="?", type=int, default=10, help="seconds per phase")
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=1000.0, help="actions per second on the streamed sessions")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of wrk with streams open / none open")
    parser.add_argument("--connections", type=int, default=32, help="keep-alive connections of the action client")
    parser.add_argument("--role", choices=["streams", "actions"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--sessions", help=argparse.SUPPRESS)
    parser.add_argument("--log", help=argparse.SUPPRESS)
    parser.add_argument("--per-session", type=int, default=2, help=argparse.SUPPRESS)
    parser.add_argument("--duration", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "streams":
        raise_open_file_limit(len(read_sessions(args.sessions)) * args.per_session + 256)
        return asyncio.run(streams_role(args))
    if args.role == "actions":
        return asyncio.run(actions_role(args))
    if not args.binary:
        parser.error("FLOWSTACK_BINARY is needed")

    seconds, stream_count, rate = args.seconds, args.streams, args.rate
    per_session = 2
    raise_open_file_limit(stream_count + 4096)  # the server inherits it (it raises its own too)
    work = tempfile.mkdtemp(prefix="flowstack-events-")
    server = start_server(os.path.abspath(args.binary), work)
    port = server.port
    children = []
    try:
        wrk_sessions = os.path.join(work, "wrk-sessions.txt")
        with open(wrk_sessions, "w") as file:
            subprocess.run([sys.executable, os.path.join(HERE, "make_sessions.py"), str(port), "500"], stdout=file, check=True)
        stream_sessions = os.path.join(work, "stream-sessions.txt")
        create_stream_sessions(port, stream_count // per_session, stream_sessions)
        print(f"events: flowstack on port {port} (pid {server.pid}), {stream_count} streams on {stream_count // per_session} "
              f"sessions, actions at {rate:.0f}/s for {seconds}s on those, wrk -t2 -c64 -d{seconds}s on 500 other sessions, "
              f"{args.rounds} round(s)", flush=True)
        none_runs, open_runs = [], []

        # The action phases come first, on a fresh database: after wrk's actions the server spends
        # seconds of CPU checkpointing the WAL they left, which would count in their CPU figures.
        print(f"-- 1. no stream open: actions at {rate:.0f}/s on the stream sessions (a baseline for phase 3)", flush=True)
        baseline = action_figures(action_phase(server, stream_sessions, os.path.join(work, "actions-none.log"),
                                               rate, seconds, args.connections))
        print(f"  {baseline['rate']:,.0f}/s, answer p50 {percentile(baseline['answer'], 0.5):.2f} ms, "
              f"p99 {percentile(baseline['answer'], 0.99):.2f} ms; server CPU {baseline['cpu_us']:.0f} us per action", flush=True)

        print(f"-- 2. opening {stream_count} streams", flush=True)
        time.sleep(1)
        rss_before = rss_kib(server.pid)
        streams, ready = open_streams(port, stream_sessions, os.path.join(work, "streams.log"))
        children.append(streams)
        time.sleep(1)
        rss_open = rss_kib(server.pid)
        gauge = metrics(port).get("flowstack_event_streams_open")
        per_stream = (rss_open - rss_before) * 1024 / stream_count
        print(f"  {ready['ready']} streams open in {ready['seconds']:.2f}s (gauge {gauge:.0f}); server RSS {rss_before:,} KiB "
              f"-> {rss_open:,} KiB: {per_stream:,.0f} bytes per open stream", flush=True)

        print(f"-- 3. {stream_count} streams open: actions at {rate:.0f}/s on their sessions", flush=True)
        phase = action_phase(server, stream_sessions, os.path.join(work, "actions.log"), rate, seconds, args.connections)
        driven = action_figures(phase)
        closed_after = close_streams(streams, port)
        rss_closed = rss_kib(server.pid)
        result = analyse(phase["log"], os.path.join(work, "streams.log"))
        print(f"  {driven['rate']:,.0f}/s, {result['received']:,} of {result['expected']:,} events; server CPU "
              f"{driven['cpu_us']:.0f} us per action; streams closed, "
              + (f"gauge at 0 after {closed_after:.1f}s" if closed_after is not None else "gauge NOT at 0 after 40 s"), flush=True)

        # wrk: none open, then open, then none again (per round), so that a steady drift of the
        # machine (or of the database, which grows with every action run) cancels out.
        print("-- 4. wrk, no stream open", flush=True)
        none_runs.append(wrk_pair("no streams", port, seconds, wrk_sessions))
        for round_number in range(1, args.rounds + 1):
            print(f"-- 5.{round_number} wrk, {stream_count} idle streams open (other sessions), then none", flush=True)
            more, _ = open_streams(port, stream_sessions, os.path.join(work, f"streams-{round_number}.log"))
            children.append(more)
            open_runs.append(wrk_pair("streams open", port, seconds, wrk_sessions))
            close_streams(more, port)
            none_runs.append(wrk_pair("no streams", port, seconds, wrk_sessions))

        lat = result["latencies"]
        p50, p99, worst = percentile(lat, 0.50), percentile(lat, 0.99), (lat[-1] if lat else float("nan"))
        mean = lambda runs, which: sum(run[which]["rps"] for run in runs) / len(runs)
        worst_p99 = lambda runs, which: max(run[which]["p99"] for run in runs)
        reads_ratio = mean(open_runs, 0) / mean(none_runs, 0)
        actions_ratio = mean(open_runs, 1) / mean(none_runs, 1)
        each = lambda runs, which: " / ".join(f"{run[which]['rps']:,.0f}" for run in runs)

        print("\n== summary", flush=True)
        print(f"actions with {stream_count} streams: {driven['count']:,} sent in {driven['span']:.2f}s = {driven['rate']:,.0f}/s "
              f"(target {rate:.0f}/s), {driven['ok']:,} answered 200; answer p50 {percentile(driven['answer'], 0.5):.2f} ms, "
              f"p99 {percentile(driven['answer'], 0.99):.2f} ms, max {driven['answer'][-1]:.2f} ms; sent behind schedule "
              f"p99 {percentile(driven['lag'], 0.99):.2f} ms")
        print(f"  the same with no stream open: {baseline['rate']:,.0f}/s, answer p50 {percentile(baseline['answer'], 0.5):.2f} ms, "
              f"p99 {percentile(baseline['answer'], 0.99):.2f} ms, max {baseline['answer'][-1]:.2f} ms")
        print(f"events: expected {result['expected']:,}, received {result['received']:,}, skipped {result['skipped']:,}; "
              f"server queued {phase['queued']:,.0f}; streams ending at their session's last version "
              f"{result['atLast']:,}/{result['streams']:,}")
        print(f"delivery (arrival - action sent), {len(lat):,} events: p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {worst:.2f} ms")
        print(f"server CPU per action at {rate:.0f}/s: {baseline['cpu_us']:.0f} us with no stream, {driven['cpu_us']:.0f} us "
              f"with {per_session} streams on its session")
        print(f"memory: RSS {rss_before:,} KiB with no stream, {rss_open:,} KiB with {stream_count} open "
              f"({per_stream:,.0f} bytes per open stream), peak {phase['peak']:,} KiB during the action phase, "
              f"{rss_closed:,} KiB after closing"
              + (f" (the open gauge at 0 {closed_after:.1f}s after the clients closed)" if closed_after is not None
                 else " (the open gauge not at 0 40 s after the clients closed)"))
        for problem in result["problems"][:10]:
            print(f"problem: {problem}")
        print()
        print(f"| wrk -t2 -c64 -d{seconds}s | no stream open (each run) | {stream_count} idle streams open (each run) | ratio of the means |")
        print("| --- | --- | --- | --- |")
        for which, name in ((0, "state reads"), (1, "actions")):
            print(f"| {name} | {each(none_runs, which)} req/s, worst p99 {worst_p99(none_runs, which):.2f} ms | "
                  f"{each(open_runs, which)} req/s, worst p99 {worst_p99(open_runs, which):.2f} ms | "
                  f"{(reads_ratio, actions_ratio)[which]:.2f}x |")
        print()
        verdict = lambda met: "met" if met else "MISSED"
        print("| target | measured | verdict |")
        print("| --- | --- | --- |")
        print(f"| {stream_count} open streams | {ready['ready']} opened, {len(result['problems'])} problems | "
              f"{verdict(ready['ready'] == stream_count and not result['problems'])} |")
        print(f"| actions at a steady {rate:.0f}/s | {driven['rate']:,.0f}/s, {driven['ok']:,} of {driven['count']:,} answered 200 | "
              f"{verdict(driven['rate'] >= 0.98 * rate and driven['ok'] == driven['count'])} |")
        print(f"| each event within {LATENCY_TARGET_MS:.0f} ms p99 of its commit | p99 {p99:.2f} ms (p50 {p50:.2f}, max {worst:.2f}); "
              f"{result['received']:,} of {result['expected']:,} events | "
              f"{verdict(p99 <= LATENCY_TARGET_MS and result['skipped'] == 0)} |")
        print(f"| state reads within 10% | {reads_ratio:.2f}x | {verdict(reads_ratio >= RATIO_TARGET)} |")
        print(f"| actions within 10% | {actions_ratio:.2f}x | {verdict(actions_ratio >= RATIO_TARGET)} |")
        print(f"| memory per open stream (stated) | {per_stream:,.0f} bytes | - |")
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
        status = server.stop()
        if status not in (0, None):
            print(f"events: the server exited with status {status}; its log: {server.stderr_path()}")
        else:
            subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())

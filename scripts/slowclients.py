#!/usr/bin/env python3
"""Checks that slow and idle clients cannot starve a flowstack server.

Usage: scripts/slowclients.py PATH/TO/flowstack

Starts the server on 127.0.0.1 (a free port, a temporary database, --connection-timeout 2), then:
  (a) opens 1,000 idle TCP connections (half send nothing, half half a request line) and checks
      that a new client still gets /healthz answered within 1 second, several times, and that
      the server closes the idle connections itself once the timeout has passed;
  (b) sends the headers of an upload with Content-Length 100 and 10 bytes of its body, then
      stalls, and checks the server closes the connection between 1.5 and 5 seconds later;
  (c) opens 50 event streams on one session from clients that never read (a 4 KiB receive
      buffer each), and posts 1,000 actions on that session, whose state documents carry a
      60,000-byte flag value, so the streams' socket buffers fill and the server has to hold,
      replace or drop what it cannot send. Checks that the server's RSS stays within RSS_BOUND
      (20.5 MiB; see there why) of what it was before, that the server closes those streams
      itself within the connection timeout of the last action, and that meanwhile a normal
      client gets its actions answered, /healthz answered and its own stream's events, each
      within a second.
Then the server must still answer and stop with status 0. Prints each failure, then
`slowclients: N passed, M failed`; exits 1 when anything failed. Standard library only.
"""
import http.client
import json
import re
import resource
import selectors
import shutil
import socket
import sys
import tempfile
import threading
import time

from harness.server import FlowStackProcess, Tally, binary_argument

HOST = "127.0.0.1"
IDLE_CONNECTIONS = 1000
CONNECTION_TIMEOUT = 2  # seconds, passed to the server as --connection-timeout
HEALTHZ_WITHIN = 1.0  # seconds a new client may wait for /healthz while the idle ones are open
HEALTHZ_PROBES = 5
CLOSE_WINDOW = (1.5, 5.0)  # seconds after its last byte within which the server must close a stalled connection
STALLED_STREAMS = 50  # event streams whose client never reads, all on one session
STALLED_ACTIONS = 1000  # actions posted on that session while they are open
STALLED_RCVBUF = 4096  # SO_RCVBUF asked for by each of those clients (the kernel doubles it)
PAYLOAD_BYTES = 60_000  # a flag value that every state document of that session carries (strings: 64 KiB at most)
STREAM_QUEUE_LIMIT = 256 * 1024  # SessionEvents.queueLimit: bytes queued for one stream at most
# What the server may grow by while the stalled streams are open: 50 x 256 KiB + 8 MiB = 20.5 MiB.
# Whatever happens, a stream's queue is cut off past STREAM_QUEUE_LIMIT, so 50 streams hold 12.5
# MiB at the very worst; 8 MiB more for their connections (libmicrohttpd's 16 KiB each) and the
# allocator's slack. By design they hold far less (the event being sent and the newest one, an
# unsent state being replaced by a newer): measured +3.6 MiB. A server that kept every unsent
# state would hold each of the 1,000 versions (~60 KB; one copy, shared by the session's
# streams) less what the kernel's socket buffers took (about 3 MB per stream on loopback):
# measured +58.5 MiB with ResponseStream.write ignoring `replacingQueued` and the queue limit.
RSS_BOUND = STALLED_STREAMS * STREAM_QUEUE_LIMIT + 8 * 1024 * 1024
EVENT_WITHIN = 1.0  # seconds a normal client may wait for an answer, or for its own stream's event


def raise_open_file_limit(wanted):
    """Raises the soft limit on open files to `wanted` (within the hard limit); returns the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def healthz(port):
    """Seconds a new client waits for /healthz, or a sentence saying what went wrong."""
    started = time.monotonic()
    try:
        with socket.create_connection((HOST, port), timeout=HEALTHZ_WITHIN * 3) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = b""
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                answer += chunk
    except OSError as error:
        return f"no answer ({error!r}) after {time.monotonic() - started:.2f}s"
    elapsed = time.monotonic() - started
    if not answer.startswith(b"HTTP/1.1 200") or b'"status":"ok"' not in answer:
        return f"answered {answer[:120]!r}"
    return elapsed


def wait_for_closes(sockets, deadline):
    """Waits until the server has closed every socket or `deadline` passes; returns, for each
    socket closed, the time it was seen closed, and the number of bytes the server sent on them."""
    closed = {}
    received = 0
    with selectors.DefaultSelector() as selector:  # epoll: select() stops at 1024 descriptors
        for sock in sockets:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        while len(closed) < len(sockets) and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=max(0.0, min(0.2, deadline - time.monotonic()))):
                sock = key.fileobj
                try:
                    data = sock.recv(4096)
                except (ConnectionResetError, BrokenPipeError):
                    data = b""
                except BlockingIOError:
                    continue
                if data:
                    received += len(data)
                    continue
                closed[sock] = time.monotonic()
                selector.unregister(sock)
    return closed, received


def idle_connections(port, tally, opened):
    """(a): 1,000 idle connections, and a new client still answered within a second."""
    started = time.monotonic()
    refused = []
    for index in range(IDLE_CONNECTIONS):
        try:
            sock = socket.create_connection((HOST, port), timeout=5)
        except OSError as error:
            refused.append(repr(error))
            continue
        opened.append(sock)
        if index % 2:
            sock.sendall(b"GET /heal")  # half a request line, never finished
    open_seconds = time.monotonic() - started
    tally.check(f"{IDLE_CONNECTIONS} idle connections open",
                None if not refused else f"{len(refused)} could not connect, first: {refused[0]}")
    print(f"slowclients: {len(opened)} idle connections opened in {open_seconds:.2f}s", flush=True)
    for probe in range(1, HEALTHZ_PROBES + 1):
        result = healthz(port)
        failure = result if isinstance(result, str) else (
            None if result <= HEALTHZ_WITHIN else f"answered after {result:.2f}s, over {HEALTHZ_WITHIN}s")
        tally.check(f"/healthz probe {probe} with {len(opened)} idle connections open", failure)
    # The probes must have run while the idle connections were held, not after the timeout freed them.
    tally.check("the probes ran before the connection timeout",
                None if time.monotonic() - started < CONNECTION_TIMEOUT else "the check was too slow to mean anything")
    closed, received = wait_for_closes(opened, deadline=started + CLOSE_WINDOW[1] + open_seconds)
    times = sorted(seen - started for seen in closed.values())
    tally.check("the server closes every idle connection by its timeout",
                None if len(closed) == len(opened) else f"{len(opened) - len(closed)} of {len(opened)} still open "
                                                        f"{CLOSE_WINDOW[1]:.0f}s after they were opened")
    if times:
        tally.check("no idle connection is closed before the timeout",
                    None if times[0] >= CLOSE_WINDOW[0] else f"the first closed after {times[0]:.2f}s")
        print(f"slowclients: idle connections closed between {times[0]:.2f}s and {times[-1]:.2f}s", flush=True)
    tally.check("the server sends nothing on idle connections", None if received == 0 else f"{received} bytes came back")
    for sock in opened:
        sock.close()
    opened.clear()


def stalled_upload(port, tally, opened):
    """(b): headers with Content-Length 100 and 10 bytes of body, then nothing."""
    sock = socket.create_connection((HOST, port), timeout=5)
    opened.append(sock)
    sock.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100\r\n\r\n" + b'{"userId":')
    stalled_at = time.monotonic()
    closed, received = wait_for_closes([sock], deadline=stalled_at + CLOSE_WINDOW[1] + 1)
    if not closed:
        tally.check("a stalled upload is closed by the connection timeout",
                    f"still open {CLOSE_WINDOW[1] + 1:.0f}s after its last byte")
    else:
        after = closed[sock] - stalled_at
        low, high = CLOSE_WINDOW
        tally.check("a stalled upload is closed by the connection timeout",
                    None if low <= after <= high else f"closed after {after:.2f}s, expected {low} to {high}s")
        print(f"slowclients: the stalled upload was closed after {after:.2f}s", flush=True)
    tally.check("the server answers nothing to a stalled upload", None if received == 0 else f"{received} bytes came back")
    sock.close()
    opened.clear()


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+) kB", status.read()).group(1)) * 1024


class Client:
    """A keep-alive HTTP client of the server's JSON routes (one per thread)."""

    def __init__(self, port, token=None):
        self.port, self.token = port, token
        self.connection = http.client.HTTPConnection(HOST, port, timeout=10)

    def call(self, method, path, document=None, token=None):
        """(status, parsed JSON or raw bytes, seconds)."""
        headers = {"Content-Type": "application/json"}
        if token or self.token:
            headers["Authorization"] = "Bearer " + (token or self.token)
        started = time.monotonic()
        for attempt in (1, 2):
            try:
                self.connection.request(method, path, None if document is None else json.dumps(document), headers)
                response = self.connection.getresponse()
                body = response.read()
                break
            except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                # The server closed the kept-alive connection (its timeout is 2 s here) before
                # this request reached it: once more on a new one.
                self.connection.close()
                if attempt == 2:
                    raise
            except (OSError, http.client.HTTPException):
                self.connection.close()
                raise
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = body
        return response.status, parsed, time.monotonic() - started

    def close(self):
        self.connection.close()


class Session:
    """A session of the sample app walked back and forth (onboarding.showSecond, returnToFirst)."""

    def __init__(self, port, user, attributes=None):
        self.client = Client(port)
        status, created, _ = self.client.call("POST", "/v1/sessions", {"userId": user, "attributes": attributes or {}})
        if status != 201:
            raise RuntimeError(f"session creation answered {status}: {created!r}")
        self.id, self.token = created["session"]["id"], created["session"]["token"]
        self.client.token = self.token
        self.version = created["state"]["version"]
        self.document_bytes = len(json.dumps(created["state"]))

    def step(self):
        """Posts the next action; returns (status, version, seconds)."""
        kind = "onboarding.showSecond" if self.version % 2 == 0 else "onboarding.returnToFirst"
        status, state, seconds = self.client.call("POST", f"/v1/sessions/{self.id}/actions", {"type": kind})
        if status == 200:
            self.version = state["version"]
        return status, self.version, seconds


class EventReader(threading.Thread):
    """A stream client that reads: decodes the chunked body and notes when each version arrived."""

    def __init__(self, port, session):
        super().__init__(daemon=True)
        self.sock = socket.create_connection((HOST, port), timeout=30)
        self.sock.sendall(f"GET /v1/sessions/{session.id}/events HTTP/1.1\r\nHost: {HOST}\r\n"
                          f"Authorization: Bearer {session.token}\r\n\r\n".encode())
        self.arrivals = {}  # version -> time.monotonic() when its event was decoded
        self.status = None
        self.out_of_order = 0
        self.ended = None  # why the stream ended, once it has
        self.changed = threading.Condition()

    def run(self):
        buffer, events, in_body = bytearray(), bytearray(), False
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    self.finish("the server closed the stream")
                    return
                buffer += data
                if not in_body:
                    end = buffer.find(b"\r\n\r\n")
                    if end < 0:
                        continue
                    self.status = int(buffer[:end].split()[1])
                    del buffer[:end + 4]
                    in_body = True
                    if self.status != 200:
                        self.finish(f"answered {self.status}")
                        return
                while True:
                    line_end = buffer.find(b"\r\n")
                    if line_end < 0:
                        break
                    size = int(bytes(buffer[:line_end]).split(b";")[0], 16)
                    if size == 0:
                        self.finish("the stream ended")
                        return
                    if len(buffer) < line_end + 4 + size:
                        break
                    events += buffer[line_end + 2:line_end + 2 + size]
                    del buffer[:line_end + 4 + size]
                while (end := events.find(b"\n\n")) >= 0:
                    found = re.match(rb"id: (\d+)\nevent: state\n", events[:end])
                    del events[:end + 2]
                    if found:
                        self.arrived(int(found.group(1)))
        except OSError as error:
            self.finish(repr(error))

    def arrived(self, version):
        with self.changed:
            if self.arrivals and version <= max(self.arrivals):
                self.out_of_order += 1
            self.arrivals[version] = time.monotonic()
            self.changed.notify_all()

    def finish(self, why):
        with self.changed:
            self.ended = why
            self.changed.notify_all()

    def wait_for(self, version, timeout):
        """The time `version` arrived, or None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while version not in self.arrivals and self.ended is None and time.monotonic() < deadline:
                self.changed.wait(max(0.0, deadline - time.monotonic()))
            return self.arrivals.get(version)

    def close(self):
        self.sock.close()


def open_streams_gauge(port):
    status, text, _ = Client(port).call("GET", "/metrics")
    found = re.search(rb"^flowstack_event_streams_open (\d+)", text if isinstance(text, bytes) else b"", re.M)
    return int(found.group(1)) if found else None


def stalled_streams(server, tally, opened):
    """(c): event streams whose clients never read, on a session whose states are large."""
    port, pid = server.port, server.process.pid
    admin = Client(port, server.admin_token)
    status, answer, _ = admin.call("PUT", "/v1/flags/slow-payload", {
        "variants": {"big": "x" * PAYLOAD_BYTES, "small": ""}, "defaultVariant": "small",
        "rules": [{"when": {"attribute": "cohort", "is": "stalled"}, "variant": "big"}]})
    admin.close()
    tally.check("a flag with a 60,000-byte value is stored", None if status in (200, 201) else f"answered {status}", repr(answer)[:300])
    stalled = Session(port, "slow-stalled", {"cohort": "stalled"})
    normal = Session(port, "slow-normal")
    tally.check("the stalled session's state carries the flag's value",
                None if stalled.document_bytes > PAYLOAD_BYTES else f"its state is {stalled.document_bytes} bytes")
    for _ in range(10):  # warm up the paths the run takes, so that RSS measures what it holds
        stalled.step()
        normal.step()
    reader = EventReader(port, normal)
    reader.start()
    tally.check("a normal client's stream opens with the current state",
                None if reader.wait_for(normal.version, 5) else f"no event of version {normal.version}: {reader.ended}")
    time.sleep(0.5)
    before = rss_bytes(pid)

    clients = []
    for _ in range(STALLED_STREAMS):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, STALLED_RCVBUF)
        sock.settimeout(5)
        sock.connect((HOST, port))
        sock.sendall(f"GET /v1/sessions/{stalled.id}/events HTTP/1.1\r\nHost: {HOST}\r\n"
                     f"Authorization: Bearer {stalled.token}\r\n\r\n".encode())
        clients.append(sock)
        opened.append(sock)
    time.sleep(0.3)
    gauge = open_streams_gauge(port)
    tally.check(f"{STALLED_STREAMS} stalled streams and the normal one are open",
                None if gauge == STALLED_STREAMS + 1 else f"the open-streams gauge reads {gauge}")

    # The server's RSS, sampled while the actions go in and until the stalled streams are closed.
    peak = [before]
    sampling = threading.Event()

    def sample():
        while not sampling.wait(0.02):
            try:
                peak[0] = max(peak[0], rss_bytes(pid))
            except (OSError, AttributeError):
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # The normal client meanwhile: an action on its own session, that version's event on its own
    # stream, and /healthz, over and over until the stalled streams are gone (at least 5 times).
    pushing = threading.Event()
    pushing.set()
    probes = []  # (action status, action seconds, event seconds or None, healthz result)

    def probe():
        while pushing.is_set() or len(probes) < 5:
            sent = time.monotonic()
            try:
                status, version, seconds = normal.step()
            except OSError as error:
                probes.append((repr(error), None, None, None))
                continue
            arrived = reader.wait_for(version, EVENT_WITHIN * 3)
            probes.append((status, seconds, None if arrived is None else arrived - sent, healthz(port)))
            time.sleep(0.05)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    failures = []
    push_started = time.monotonic()
    for _ in range(STALLED_ACTIONS):
        try:
            status, _, _ = stalled.step()
        except OSError as error:
            status = repr(error)
        if status != 200:
            failures.append(status)
    last_action = time.monotonic()
    tally.check(f"{STALLED_ACTIONS} actions answered on the stalled streams' session",
                None if not failures else f"{len(failures)} were not: {failures[:3]}")
    print(f"slowclients: {STALLED_ACTIONS} actions of ~{stalled.document_bytes // 1024} KiB states pushed to "
          f"{STALLED_STREAMS} stalled streams in {last_action - push_started:.2f}s", flush=True)

    # The stalled streams must go: closed by the server once the connection timeout passes.
    deadline = last_action + CONNECTION_TIMEOUT + 3
    gauge = None
    while time.monotonic() < deadline:
        gauge = open_streams_gauge(port)
        if gauge == 1:
            break
        time.sleep(0.1)
    gone_after = time.monotonic() - last_action
    pushing.clear()
    prober.join(timeout=30)
    sampling.set()
    sampler.join()
    growth = peak[0] - before
    tally.check(f"the server's RSS stays within {RSS_BOUND // (1024 * 1024)} MiB of its start while the streams stall",
                None if growth <= RSS_BOUND else f"it grew by {growth / 1048576:.1f} MiB "
                                                  f"({before / 1048576:.1f} -> {peak[0] / 1048576:.1f} MiB)")
    print(f"slowclients: server RSS {before / 1048576:.1f} MiB before the stalled streams, peak "
          f"{peak[0] / 1048576:.1f} MiB (+{growth / 1048576:.1f} MiB, bound {RSS_BOUND / 1048576:.1f})", flush=True)
    tally.check("the server closes the stalled streams by the connection timeout",
                None if gauge == 1 else f"the open-streams gauge reads {gauge} {gone_after:.1f}s after the last action")
    if gauge == 1:
        print(f"slowclients: the stalled streams were closed by {gone_after:.2f}s after the last action", flush=True)
    # What they were sent ends: once read, each comes to its end (or a reset) within a few seconds.
    closed, _ = wait_for_closes(clients, deadline=time.monotonic() + 5)
    tally.check("each stalled client finds its stream closed once it reads",
                None if len(closed) == len(clients) else f"{len(clients) - len(closed)} of {len(clients)} still open")
    for sock in clients:
        sock.close()
    opened.clear()

    # The normal client was served all along.
    slow = [p for p in probes if p[0] != 200 or p[1] is None or p[1] > EVENT_WITHIN]
    tally.check(f"the normal client's actions answered within {EVENT_WITHIN:.0f}s ({len(probes)} while stalled)",
                None if probes and not slow else f"{len(slow)} of {len(probes)} were not: {slow[:3]}")
    late = [p for p in probes if p[0] == 200 and (p[2] is None or p[2] > EVENT_WITHIN)]
    tally.check(f"the normal client's own stream gets each of its versions within {EVENT_WITHIN:.0f}s",
                None if probes and not late else f"{len(late)} of {len(probes)} did not: {late[:3]}")
    unhealthy = [p[3] for p in probes if p[0] == 200 and not (isinstance(p[3], float) and p[3] <= HEALTHZ_WITHIN)]
    tally.check(f"/healthz answered within {HEALTHZ_WITHIN:.0f}s while the streams stall",
                None if not unhealthy else f"{len(unhealthy)} probes were not: {unhealthy[:3]}")
    if probes:
        worst = max((p[2] for p in probes if p[2] is not None), default=float("nan"))
        print(f"slowclients: the normal client's events came within {worst * 1000:.1f} ms at worst", flush=True)
    status, version, _ = normal.step()
    tally.check("the normal stream still gets events after the stalled ones are gone",
                None if status == 200 and reader.wait_for(version, EVENT_WITHIN) else f"no event of version {version}: {reader.ended}")
    tally.check("the normal stream's versions come in order", None if reader.out_of_order == 0 else f"{reader.out_of_order} out of order")
    reader.close()
    normal.client.close()
    stalled.client.close()


def main():
    binary = binary_argument("slowclients.py")
    work = tempfile.mkdtemp(prefix="flowstack-slowclients-")
    server = FlowStackProcess(binary, work, extra_args=["--connection-timeout", str(CONNECTION_TIMEOUT)])
    tally = Tally()
    opened = []
    started = time.monotonic()
    try:
        limit = raise_open_file_limit(IDLE_CONNECTIONS + 64)
        tally.check("the open-file limit allows the idle connections",
                    None if limit == resource.RLIM_INFINITY or limit >= IDLE_CONNECTIONS + 64 else f"it is {limit}")
        server.start()
        idle_connections(server.port, tally, opened)
        stalled_upload(server.port, tally, opened)
        stalled_streams(server, tally, opened)
        result = healthz(server.port)
        tally.check("/healthz answers afterwards", result if isinstance(result, str) else None)
        status = server.stop()
        tally.check("SIGTERM stops the server with status 0", None if status == 0 else f"status {status}")
    except Exception as error:  # a failure of the harness itself still counts, and still cleans up
        tally.check("the run completed", f"{type(error).__name__}: {error}")
    finally:
        for sock in opened:
            sock.close()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return tally.report("slowclients", started)


if __name__ == "__main__":
    sys.exit(main())

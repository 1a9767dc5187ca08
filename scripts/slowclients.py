#!/usr/bin/env python3
"""Checks that slow and idle clients cannot starve a flowstack server.

Usage: scripts/slowclients.py PATH/TO/flowstack

Starts the server on 127.0.0.1 (a free port, a temporary database, --connection-timeout 2), then:
  (a) opens 1,000 idle TCP connections (half send nothing, half half a request line) and checks
      that a new client still gets /healthz answered within 1 second, several times, and that
      the server closes the idle connections itself once the timeout has passed;
  (b) sends the headers of an upload with Content-Length 100 and 10 bytes of its body, then
      stalls, and checks the server closes the connection between 1.5 and 5 seconds later.
Then the server must still answer and stop with status 0. Prints each failure, then
`slowclients: N passed, M failed`; exits 1 when anything failed. Standard library only.
"""
import os
import resource
import selectors
import shutil
import socket
import sys
import tempfile
import time

from check_harness import FlowStackProcess, Tally, exit_on_sigterm

HOST = "127.0.0.1"
IDLE_CONNECTIONS = 1000
CONNECTION_TIMEOUT = 2  # seconds, passed to the server as --connection-timeout
HEALTHZ_WITHIN = 1.0  # seconds a new client may wait for /healthz while the idle ones are open
HEALTHZ_PROBES = 5
CLOSE_WINDOW = (1.5, 5.0)  # seconds after its last byte within which the server must close a stalled connection


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


def main():
    if len(sys.argv) != 2:
        print("usage: slowclients.py PATH/TO/flowstack", file=sys.stderr)
        return 2
    exit_on_sigterm()
    binary = os.path.abspath(sys.argv[1])
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
    print(f"slowclients: finished in {time.monotonic() - started:.1f}s", flush=True)
    print(f"slowclients: {tally.passed} passed, {tally.failed} failed", flush=True)
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A server stopped while it is busy stops cleanly, every time.

Usage: scripts/stopping.py PATH/TO/flowstack

Each of ROUNDS rounds starts the server (4 HTTP threads, a temporary database), loads it from
LOAD_THREADS threads (half on kept connections, half on a new connection per request, all GET
/healthz), sends SIGTERM at a random moment 0.2-0.6 s into the load, and checks:
  - the server exits with status 0 within 15 s, and its stderr has no "Fatal error" (libmicrohttpd's
    abort message);
  - every answer that came during the round was a 200, or a 503 of the stop (never a 500);
  - the load was real: each round answered at least MIN_ANSWERS requests.

The server runs with scripts/harness/native/slow_listen_del.c preloaded (built here with the
toolchain's C compiler). It makes libmicrohttpd's race between quiescing and its worker threads
(MHD_quiesce_daemon, 0.9.75 daemon.c:5531) nearly certain to be lost: the build that let
libmicrohttpd accept by itself and quiesced it to stop aborted in 20 of 20 rounds here with it
("Fatal error in GNU libmicrohttpd daemon.c:5531: Failed to remove listen FD from epoll set."),
and in 0 of 100 stops under wrk load without it; the abort failed one CI run (a test server of
FlowServerTests on PostgreSQL, 8 worker threads). The server now accepts on a thread of its own
(Sources/HTTPServer/Listener.swift), so the preload has nothing left to slow down.

Prints each failure, then `stopping: N passed, M failed`; exits 1 when anything failed. About 30 s.
Standard library only.
"""
import http.client
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.server import FlowStackProcess, Tally, binary_argument  # noqa: E402

ROUNDS = 20
LOAD_THREADS = 6
MIN_ANSWERS = 20
PRELOAD_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness", "native", "slow_listen_del.c")


def build_preload(work):
    """The race-widening library, built with clang (the Swift toolchain's) or cc."""
    compiler = shutil.which("clang") or shutil.which("cc")
    if compiler is None:
        raise SystemExit("stopping: no C compiler (clang or cc) to build the preload with")
    library = os.path.join(work, "slow_listen_del.so")
    subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", library, PRELOAD_SOURCE, "-ldl"], check=True)
    return library


class Load:
    """Threads that ask /healthz until stopped, counting the statuses that came back."""

    def __init__(self, port):
        self.port = port
        self.stopped = threading.Event()
        self.lock = threading.Lock()
        self.statuses = {}
        self.threads = [threading.Thread(target=self.run, args=(index % 2 == 0,), daemon=True)
                        for index in range(LOAD_THREADS)]

    def start(self):
        for thread in self.threads:
            thread.start()

    def stop(self):
        self.stopped.set()
        for thread in self.threads:
            thread.join(timeout=10)

    def count(self, status):
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1

    def run(self, keep):
        connection = None
        while not self.stopped.is_set():
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                connection.request("GET", "/healthz", headers={} if keep else {"Connection": "close"})
                response = connection.getresponse()
                response.read()
                self.count(response.status)
                if not keep or response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = None
            except OSError:
                # Refused or cut while the server stops: not an answer, and allowed.
                if connection is not None:
                    connection.close()
                connection = None
                time.sleep(0.005)
        if connection is not None:
            connection.close()


def main():
    binary = binary_argument("scripts/stopping.py")
    started = time.monotonic()
    tally = Tally()
    work = tempfile.mkdtemp(prefix="flowstack-stopping-")
    try:
        preload = build_preload(work)
        for round_number in range(1, ROUNDS + 1):
            server = FlowStackProcess(binary, os.path.join(work, f"round-{round_number}"),
                                      extra_args=["--threads", "4", "--shutdown-grace", "2"],
                                      extra_env={"LD_PRELOAD": preload})
            os.makedirs(server.work)
            server.start()
            server.wait_healthy()
            load = Load(server.port)
            load.start()
            time.sleep(random.uniform(0.2, 0.6))
            status = server.stop(timeout=15)
            load.stop()
            name = f"round {round_number}"
            stderr = server.stderr_text()
            fatal = [line for line in stderr.splitlines() if "Fatal error" in line]
            tally.check(f"{name}: stops with status 0",
                        None if status == 0 and not fatal else f"status {status!r}", "; ".join(fatal)[:300])
            unexpected = {code: n for code, n in load.statuses.items() if code not in (200, 503)}
            tally.check(f"{name}: every answer a 200 or the stop's 503",
                        None if not unexpected else f"other statuses {unexpected}")
            answered = sum(load.statuses.values())
            tally.check(f"{name}: the load was real",
                        None if answered >= MIN_ANSWERS else f"only {answered} answers before the stop")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tally.report("stopping", started)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Start-up time with many stored sessions: builds a database holding N sessions (one real
session made by flowstack, copied N times with new ids, with their users and an action each),
then starts `flowstack serve` on it several times and measures the wall time from exec to the
first 200 from /healthz.
Usage: bench/startup.py FLOWSTACK_BINARY [N] [RUNS]"""
import http.client
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time


def start(binary, path):
    began = time.perf_counter()
    server = subprocess.Popen([binary, "serve", "--port", "0", "--db", path, "--log-level", "warning"],
                              stdout=subprocess.PIPE, text=True)
    port = None
    while port is None:
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", server.stdout.readline())
        if match:
            port = int(match.group(1))
    while True:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return server, port, time.perf_counter() - began
        except OSError:
            time.sleep(0.005)


def main():
    binary = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    path = os.path.join(tempfile.mkdtemp(), "startup.sqlite")
    server, port, _ = start(binary, path)
    connection = http.client.HTTPConnection("127.0.0.1", port)
    connection.request("POST", "/v1/sessions", json.dumps({"userId": "seed"}), {"Content-Type": "application/json"})
    created = json.loads(connection.getresponse().read())
    token = created["session"]["token"]
    connection.request("POST", f"/v1/sessions/{created['session']['id']}/actions", json.dumps({"type": "onboarding.showSecond"}),
                       {"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    connection.getresponse().read()
    server.terminate()
    server.wait()

    database = sqlite3.connect(path)
    database.execute("PRAGMA synchronous = OFF")
    with database:
        database.execute(f"""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count - 1})
            INSERT INTO sessions SELECT 's_copy' || i, 'user-' || i, token_hash, version, tree, context, flags,
                experiments, flow_versions, last_transition, handled_by, created_at, updated_at
            FROM n, sessions WHERE sessions.user_id = 'seed'""")
        database.execute("""INSERT INTO users SELECT user_id, '{}', created_at, updated_at FROM sessions WHERE user_id != 'seed'""")
        database.execute("""INSERT INTO actions (session_id, version, type, source, params, interactive, handled_by,
                transition, created_at, tree)
            SELECT s.id, 1, a.type, a.source, a.params, a.interactive, a.handled_by,
                a.transition, a.created_at, a.tree FROM sessions s, actions a WHERE s.user_id != 'seed' AND a.version = 1""")
    with open("scripts/relink_log.sql") as relink:
        database.executescript(relink.read())
    total = database.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    database.close()
    size = os.path.getsize(path) / 1e6

    times = []
    for _ in range(runs):
        server, port, elapsed = start(binary, path)
        times.append(elapsed)
        server.terminate()
        server.wait()
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    print(f"{total} sessions stored ({size:.0f} MB); exec to first 200 from /healthz over {runs} runs: "
          f"median {statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()

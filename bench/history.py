#!/usr/bin/env python3
"""Does an action cost more on a session with a long history? Makes 2×N onboarded sessions,
gives the first N a history of H earlier actions (written into the database while the server
is stopped), restarts the server, and runs wrk (bench/actions.lua) against the long-history
sessions and the fresh ones alternately.
Usage: bench/history.py FLOWSTACK_BINARY [N] [H] [seconds] [rounds]"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from harness.server import FlowStackProcess  # noqa: E402


def serve(binary, work, path):
    server = FlowStackProcess(binary, work, db=path)
    server.start()
    return server, server.port


def wrk(port, sessions, seconds):
    out = subprocess.run(["wrk", "-t2", "-c64", f"-d{seconds}s", "--latency", "-s", "bench/actions.lua", f"http://127.0.0.1:{port}"],
                         env={**os.environ, "SESSIONS": sessions}, capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+(\S+)", out).group(1)
    return rps, p99


def main():
    binary = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    history = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000
    seconds = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    work = tempfile.mkdtemp()
    path = f"{work}/history.sqlite"
    server, port = serve(binary, work, path)
    lines = subprocess.run([sys.executable, "bench/make_sessions.py", str(port), str(2 * count)], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    server.stop()
    old, fresh = lines[:count], lines[count:]
    database = sqlite3.connect(path)
    with database:
        for line in old:
            sid = line.split()[0]
            database.execute(f"""
                WITH RECURSIVE n(v) AS (SELECT 3 UNION ALL SELECT v + 1 FROM n WHERE v < {history + 2})
                INSERT INTO actions (session_id, version, type, source, params, interactive, handled_by, transition,
                    created_at, tree)
                SELECT session_id, v, 'home.selectTab', NULL, '{{"index":0}}', 0, 'home', transition, created_at, tree
                FROM n, actions WHERE session_id = ? AND version = 2""", (sid,))
    with open("scripts/relink_log.sql") as relink:
        database.executescript(relink.read())
    database.close()
    for name, group in (("old", old), ("fresh", fresh)):
        with open(f"{work}/{name}.txt", "w") as file:
            file.write("\n".join(group) + "\n")
    server, port = serve(binary, work, path)
    try:
        for round in range(rounds):
            long_rps, long_p99 = wrk(port, f"{work}/old.txt", seconds)
            fresh_rps, fresh_p99 = wrk(port, f"{work}/fresh.txt", seconds)
            print(f"round {round + 1}: {count} sessions with {history} earlier actions: {long_rps:.0f} req/s (p99 {long_p99}); "
                  f"{count} fresh: {fresh_rps:.0f} req/s (p99 {fresh_p99}); ratio {long_rps / fresh_rps:.2f}")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

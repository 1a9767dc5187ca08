#!/usr/bin/env python3
"""Crash consistency: loads the server with concurrent actions on many sessions, kills it with
SIGKILL mid-load, restarts it, and checks that every acknowledged action is there (version and
action log); three rounds, then PRAGMA integrity_check. Bounded: about 10 s.
With FLOWSTACK_TEST_DB_KIND=postgresql the database is a throwaway PostgreSQL (scripts/pgserver.py,
removed after), and the final integrity check becomes: every acknowledged action is in its
session's whole action log (read page by page through the API) with contiguous versions 1..n,
the same seen in the `actions` table with psql, and pg_amcheck finds the tables and indexes sound.
Usage: scripts/crash.py FLOWSTACK_BINARY [--durability normal|full]
Prints "crash: N passed, M failed"; exits 1 on a failure."""
import http.client
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.server import FlowStackProcess, database_kind  # noqa: E402

SESSIONS = 24
WORKERS = 8
LOAD_SECONDS = 2.0


def request(connection, method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection.request(method, path, None if body is None else json.dumps(body), headers)
    response = connection.getresponse()
    return response.status, response.read()


def check_postgresql(pg, connection, sessions, acknowledged, check):
    """On PostgreSQL, instead of PRAGMA integrity_check: each session's whole log, through the
    API and in the database, holds versions 1..n with n at least what was acknowledged."""
    short, gaps = [], []
    for sid, token in sessions:
        versions, after = [], 0
        while True:
            status, body = request(connection, "GET", f"/v1/sessions/{sid}/actions?after={after}&limit=1000", token=token)
            page = json.loads(body) if status == 200 else {"actions": [], "next": None}
            versions += [entry["version"] for entry in page["actions"]]
            if page.get("next") is None or not page["actions"]:
                break
            after = page["next"]
        if versions != list(range(1, len(versions) + 1)):
            gaps.append((sid, len(versions)))
        if len(versions) < acknowledged[sid]:
            short.append((sid, acknowledged[sid], len(versions)))
    check("every acknowledged action is in its whole action log (API)", not short, str(short[:3]))
    check("every whole action log is contiguous 1..n (API)", not gaps, str(gaps[:3]))
    try:
        rows = pg.sql("SELECT session_id, count(*), min(version), max(version) FROM actions GROUP BY session_id")
    except Exception as error:
        check("the actions table can be read with psql", False, str(error))
        return
    in_table = {}
    for line in rows.splitlines():
        sid, count, low, high = line.split("|")
        in_table[sid] = (int(count), int(low), int(high))
    wrong = []
    for sid, _ in sessions:
        count, low, high = in_table.get(sid, (0, 1, 0))
        if not (count == high and low == 1 and high >= acknowledged[sid]):
            wrong.append((sid, acknowledged[sid], (count, low, high)))
    check("the actions table holds versions 1..n per session, n at least what was acknowledged (psql)", not wrong, str(wrong[:3]))


def main():
    binary = sys.argv[1]
    durability = sys.argv[sys.argv.index("--durability") + 1] if "--durability" in sys.argv else "normal"
    work = tempfile.mkdtemp()
    path = os.path.join(work, "crash.sqlite")
    pg = None
    passed = failed = 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"crash: FAILED {name} {detail}")

    server = None
    try:
        if database_kind() == "postgresql":
            from harness.postgres import PostgresServer
            pg = PostgresServer().start()
            path = pg.url
        server = FlowStackProcess(binary, work, db=path, extra_args=["--durability", durability])
        server.start()
        port = server.port
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        sessions = []
        for index in range(SESSIONS):
            status, body = request(connection, "POST", "/v1/sessions", {"userId": f"crash-{index}"})
            created = json.loads(body)
            sessions.append((created["session"]["id"], created["session"]["token"]))
        acknowledged = {sid: 0 for sid, _ in sessions}
        lock = threading.Lock()

        for round in range(1, 4):
            stop = threading.Event()

            def worker(number):
                own = sessions[number::WORKERS]
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                step = 0
                while not stop.is_set():
                    sid, token = own[step % len(own)]
                    step += 1
                    body = {"type": "onboarding.showSecond"} if step % 2 else {"type": "back"}
                    try:
                        status, answer = request(conn, "POST", f"/v1/sessions/{sid}/actions", body, token)
                    except (OSError, http.client.HTTPException):
                        return  # the server is gone: this action was never acknowledged
                    if status == 200:
                        version = json.loads(answer)["version"]
                        with lock:
                            acknowledged[sid] = max(acknowledged[sid], version)

            threads = [threading.Thread(target=worker, args=(n,)) for n in range(WORKERS)]
            for thread in threads:
                thread.start()
            time.sleep(LOAD_SECONDS)
            server.kill9()   # mid-load: requests are in flight
            stop.set()
            for thread in threads:
                thread.join()

            server.start()
            port = server.port
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            lost = []
            gaps = []
            total = 0
            for sid, token in sessions:
                status, body = request(connection, "GET", f"/v1/sessions/{sid}", token=token)
                version = json.loads(body)["version"] if status == 200 else -1
                total += acknowledged[sid]
                if version < acknowledged[sid]:
                    lost.append((sid, acknowledged[sid], version))
                status, body = request(connection, "GET", f"/v1/sessions/{sid}/actions?limit=1000&after={max(0, version - 1000)}", token=token)
                versions = [entry["version"] for entry in json.loads(body)["actions"]] if status == 200 else []
                if versions != list(range(max(1, version - 999), version + 1)):
                    gaps.append(sid)
            check(f"round {round}: every acknowledged action survived SIGKILL ({total} acknowledged in all)", not lost, str(lost[:3]))
            check(f"round {round}: each action log is complete up to its version", not gaps, str(gaps[:3]))
            check(f"round {round}: load reached the server", total > 0)

        if pg is not None:
            check_postgresql(pg, connection, sessions, acknowledged, check)
        server.stop()
        if pg is None:
            database = sqlite3.connect(path)
            check("PRAGMA integrity_check is ok", database.execute("PRAGMA integrity_check").fetchone()[0] == "ok")
            database.close()
        else:
            problem = pg.amcheck()
            check("pg_amcheck finds the tables and indexes sound", problem is None, str(problem))
    finally:
        if server is not None:
            server.stop()
        if pg is not None:
            pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"crash: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How many bytes of database and of WAL one action costs (issue 35: the log keeps actions).

Starts BINARY (`flowstack`) on a fresh database, makes N sessions of onboarded users (each
through onboarding: two actions), stops it, and counts the database; starts it again and posts M
`home.selectTab` actions to every session from 8 threads; then counts again.

SQLite: during the actions a read transaction is held open on the file, so no checkpoint can
move the WAL back to its start: the WAL's growth is every frame written, divided by the actions
(WAL bytes per action). Then the server stops, `PRAGMA wal_checkpoint(TRUNCATE)` moves the WAL
into the file, and the growth of the pages in use, divided by the actions, is the database's
bytes per action.

PostgreSQL (`--db postgresql`, a throwaway server of scripts/harness): the growth of
`pg_total_relation_size` over every table of the schema after a plain VACUUM, and of
`pg_current_wal_lsn()`, each divided by the actions.

With --keyed every action carries an Idempotency-Key, as the clients send every tap: a UUIDv7,
as theirs are (`uuid7`: keys that sort by time), stored with it (its request's hash and version;
the answer's body is not stored since migration 19, a replay makes it again from the log).

Usage: bench/logbytes.py BINARY [--sessions N] [--actions M] [--db sqlite|postgresql] [--page-size N] [--keyed]
Prints one line: `KIND: A actions, D database bytes per action, W WAL bytes per action`.
"""
import argparse
import http.client
import json
import os
import sqlite3
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from harness.server import FlowStackProcess  # noqa: E402
from harness.web import post_json  # noqa: E402


def make_sessions(port, count):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    sessions = []
    for index in range(count):
        created = post_json(connection, "/v1/sessions", {"userId": f"bytes-{index}", "attributes": {"country": "US"}})
        sid, token = created["session"]["id"], created["session"]["token"]
        post_json(connection, f"/v1/sessions/{sid}/actions", {"type": "onboarding.showSecond"}, token)
        post_json(connection, f"/v1/sessions/{sid}/actions", {"type": "onboarding.completed"}, token)
        sessions.append((sid, token))
    return sessions


def uuid7():
    """A UUIDv7 (RFC 9562), as the clients make a tap's key: the Unix time in milliseconds, the
    version, 74 random bits and the variant, lowercase."""
    bits = (time.time_ns() // 1_000_000) << 80 | 0x7 << 76 | int.from_bytes(os.urandom(10), "big") & ((1 << 76) - 1)
    bits = bits & ~(0x3 << 62) | 0x2 << 62
    text = f"{bits:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def act(port, sessions, actions, threads=8, keyed=False):
    """Posts `actions` tab switches to each session, the sessions split between threads (each
    with a key of its own when `keyed`); returns how many were applied."""
    applied = [0] * threads

    def run(part):
        connection = http.client.HTTPConnection("127.0.0.1", port)
        mine = sessions[part::threads]
        for step in range(actions):
            for sid, token in mine:
                post_json(connection, f"/v1/sessions/{sid}/actions",
                          {"type": "home.selectTab", "params": {"index": (step + 1) % 2}}, token,
                          key=uuid7() if keyed else None)
                applied[part] += 1

    workers = [threading.Thread(target=run, args=(part,)) for part in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(applied)


def sqlite_pages(path):
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages, size = db.execute("PRAGMA page_count").fetchone()[0], db.execute("PRAGMA page_size").fetchone()[0]
    free = db.execute("PRAGMA freelist_count").fetchone()[0]
    db.close()
    return (pages - free) * size


def measure_sqlite(binary, work, count, actions, page_size=None, keyed=False):
    server = FlowStackProcess(binary, work)
    if page_size:
        # The file made with pages of that size before the server's migrations write it.
        made = sqlite3.connect(server.db, isolation_level=None)
        made.execute(f"PRAGMA page_size = {int(page_size)}")
        made.execute("CREATE TABLE page_size_set (x)")
        made.execute("DROP TABLE page_size_set")
        made.close()
    server.start()
    sessions = make_sessions(server.port, count)
    server.stop()
    before = sqlite_pages(server.db)
    server.start()
    # A reader holding its snapshot keeps every checkpoint short of the WAL's end, so the WAL
    # is never started over and grows by every frame the actions write.
    reader = sqlite3.connect(server.db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM sessions").fetchone()
    wal = server.db + "-wal"
    wal_before = os.path.getsize(wal) if os.path.exists(wal) else 0
    applied = act(server.port, sessions, actions, keyed=keyed)
    wal_after = os.path.getsize(wal)
    reader.execute("COMMIT")
    reader.close()
    server.stop()
    after = sqlite_pages(server.db)
    return applied, (after - before) / applied, (wal_after - wal_before) / applied


def measure_postgresql(binary, work, count, actions, page_size=None, keyed=False):
    from harness.postgres import PostgresServer
    with PostgresServer() as pg:  # its own directory, open to the postgres user
        server = FlowStackProcess(binary, work, db=pg.url)
        server.start()
        sessions = make_sessions(server.port, count)

        def sizes():
            pg.sql("VACUUM")
            total = pg.sql("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                           "WHERE c.relkind = 'r' AND n.nspname = current_schema()")
            lsn = pg.sql("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")
            return int(float(total)), int(float(lsn))

        before, lsn_before = sizes()
        applied = act(server.port, sessions, actions, keyed=keyed)
        after, lsn_after = sizes()
        server.stop()
        return applied, (after - before) / applied, (lsn_after - lsn_before) / applied


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--actions", type=int, default=100, help="actions per session")
    parser.add_argument("--db", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--page-size", type=int, help="SQLite: make the database file with pages of this size first")
    parser.add_argument("--keyed", action="store_true", help="every action with an Idempotency-Key of its own")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        measure = measure_sqlite if options.db == "sqlite" else measure_postgresql
        applied, database, wal = measure(os.path.abspath(options.binary), work, options.sessions, options.actions,
                                        options.page_size, options.keyed)
    print(f"{options.db}: {applied} {'keyed ' if options.keyed else ''}actions, {database:.0f} database bytes per action, {wal:.0f} WAL bytes per action")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Resident memory per cached session: starts flowstack (release) on a fresh database with a
cache large enough for every session, creates N sessions over HTTP from several threads, and
prints the server's RSS before and after, and the difference per session. With GZIP_READ=1
(the server then compresses answers from 512 bytes, so the sample's state is compressed) each
session is then read once with Accept-Encoding: gzip, as a browser or URLSession would, and
the RSS again says what the compressed state kept with each session costs.
Usage: [GZIP_READ=1] bench/memory.py FLOWSTACK_BINARY [N]"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+) kB", status.read()).group(1))


def main():
    binary, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    gzip_read = os.environ.get("GZIP_READ") == "1"
    work = tempfile.mkdtemp()
    server = subprocess.Popen([binary, "serve", "--port", "0", "--db", f"{work}/m.sqlite", "--log-level", "warning",
                               "--cache-sessions", str(count * 2)] + (["--gzip-min-bytes", "512"] if gzip_read else []),
                              stdout=subprocess.PIPE, text=True)
    port = None
    while port is None:
        line = server.stdout.readline()
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if match:
            port = int(match.group(1))
    sessions = []  # (id, token) of each session created, for GZIP_READ
    try:
        def create(start, stop):
            connection = http.client.HTTPConnection("127.0.0.1", port)
            for index in range(start, stop):
                connection.request("POST", "/v1/sessions", json.dumps({"userId": f"m-{index}", "attributes": {"country": "US"}}),
                                   {"Content-Type": "application/json"})
                response = connection.getresponse()
                body = response.read()
                assert response.status == 201, response.status
                if gzip_read:
                    session = json.loads(body)["session"]
                    sessions.append((session["id"], session["token"]))

        def read(part):
            connection = http.client.HTTPConnection("127.0.0.1", port)
            for sid, token in part:
                connection.request("GET", f"/v1/sessions/{sid}", headers={"Authorization": f"Bearer {token}", "Accept-Encoding": "gzip"})
                response = connection.getresponse()
                response.read()
                assert response.status == 200 and response.getheader("Content-Encoding") == "gzip", response.status
        create(0, 100)  # warm up: code paths, allocator arenas, statement caches
        time.sleep(0.5)
        before = rss_kib(server.pid)
        threads = [threading.Thread(target=create, args=(100 + i * (count // 4), 100 + (i + 1) * (count // 4))) for i in range(4)]
        started = time.time()
        for thread in threads: thread.start()
        for thread in threads: thread.join()
        elapsed = time.time() - started
        time.sleep(1)
        after = rss_kib(server.pid)
        created = 4 * (count // 4)
        print(f"{created} sessions created in {elapsed:.1f} s; RSS {before} KiB before, {after} KiB after: "
              f"{(after - before) * 1024 / created:.0f} bytes per cached session")
        if gzip_read:
            readers = [threading.Thread(target=read, args=(sessions[i::4],)) for i in range(4)]
            for thread in readers: thread.start()
            for thread in readers: thread.join()
            time.sleep(1)
            read_after = rss_kib(server.pid)
            print(f"each of the {len(sessions)} sessions read once with Accept-Encoding: gzip: RSS {read_after} KiB, "
                  f"{(read_after - after) * 1024 / len(sessions):.0f} bytes more per session")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()

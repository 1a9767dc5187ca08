#!/usr/bin/env python3
"""What replaying an Idempotency-Key costs, by how far its version is from the session's newest
(BENCHMARKS.md, issue 35: a keyed action stores its key, not its answer).

Starts BINARY (`flowstack`) on a fresh SQLite file, posts TAPS keyed actions to one session (into
and out of the second onboarding screen), then replays the key of each version in VERSIONS
REPEAT times over one kept connection, checking that each replay is byte for byte the first
answer, and prints the mean round trip of a replay per version. A key of the newest version is
answered from memory; an older one is made again from the log, from the nearest kept tree (every
`LogSnapshots.interval` = 64 versions), so its cost grows with its distance past that snapshot.
A build from before migration 19 answers every replay from the stored body.

Usage: bench/replays.py BINARY [--taps N] [--repeat N] [--versions 128,127,65,64,63,1]
"""
import argparse
import http.client
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from harness.server import FlowStackProcess  # noqa: E402
from harness.web import post_json  # noqa: E402


def post(connection, path, body, headers):
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **headers})
    response = connection.getresponse()
    return response.status, response.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--taps", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--versions", default="128,127,65,64,63,1")
    options = parser.parse_args()
    versions = [int(v) for v in options.versions.split(",")]
    if any(v < 1 or v > options.taps for v in versions):
        sys.exit(f"versions must be within 1...{options.taps}")
    with tempfile.TemporaryDirectory() as work:
        server = FlowStackProcess(options.binary, work)
        server.start()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            created = post_json(connection, "/v1/sessions", {"userId": "replayer"})
            path = f"/v1/sessions/{created['session']['id']}/actions"
            auth = {"Authorization": "Bearer " + created["session"]["token"]}
            taps = []
            for index in range(1, options.taps + 1):
                body = {"type": "onboarding.showSecond"} if index % 2 else {"type": "back"}
                status, first = post(connection, path, body, {**auth, "Idempotency-Key": f"tap-{index}"})
                if status != 200:
                    sys.exit(f"tap {index}: {status} {first[:200]!r}")
                taps.append((f"tap-{index}", body, first))
            for version in versions:
                key, body, first = taps[version - 1]
                started = time.perf_counter()
                for _ in range(options.repeat):
                    status, answer = post(connection, path, body, {**auth, "Idempotency-Key": key})
                    if status != 200 or answer != first:
                        sys.exit(f"the replay of {key} is not its first answer: {status} {answer[:200]!r}")
                mean = (time.perf_counter() - started) / options.repeat * 1e6
                print(f"version {version:>4} of {options.taps}: {mean:7.0f} us a replay (round trip, one connection)")
        finally:
            server.stop()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What clients see through HAProxy while one node is paused (SIGSTOP): a measurement, not a CI
check (issue 23). Three nodes on a throwaway PostgreSQL behind HAProxy run with CONFIG (default
deploy/haproxy.cfg, rewritten to loopback addresses as scripts/cluster.sh does); CLIENTS threads
create sessions (spread round robin) for SECONDS s; node2 is paused from PAUSE_AT to RESUME_AT.

Usage: scripts/haproxy_pause.py PATH/TO/flowstack [CONFIG]

Prints the answers by status, how many took over 2 s, the slowest, and when the last request
still reached the paused node after the pause. Standard library only.
"""
import collections
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.server import FlowStackProcess  # noqa: E402
from harness.haproxy import HAProxy  # noqa: E402
from harness.postgres import PostgresServer  # noqa: E402

CLIENTS = 8
SECONDS = 20.0
PAUSE_AT, RESUME_AT = 3.0, 16.0
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    binary = os.path.abspath(sys.argv[1])
    config_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(REPO, "deploy", "haproxy.cfg")
    work = tempfile.mkdtemp(prefix="flowstack-pause-")
    nodes, haproxy = [], None
    with PostgresServer() as pg:
        try:
            for index in range(3):
                node = FlowStackProcess(binary, work, db=pg.url, admin_token="a" * 64)
                node.starts = index * 10  # logs of their own
                node.start()
                node.wait_healthy()
                nodes.append(node)
            haproxy = HAProxy(work, [(f"node{i + 1}", node.port) for i, node in enumerate(nodes)], template=config_path)
            haproxy.wait_all_up([f"node{i + 1}" for i in range(len(nodes))], timeout=10)
            lb_port = haproxy.port
            results, lock, stop = [], threading.Lock(), threading.Event()
            began = time.monotonic()

            def client():
                while not stop.is_set():
                    started = time.monotonic()
                    request = urllib.request.Request(f"http://127.0.0.1:{lb_port}/v1/sessions", data=b'{"userId":"p"}',
                                                     method="POST", headers={"Content-Type": "application/json"})
                    node = None
                    try:
                        with urllib.request.urlopen(request, timeout=30) as response:
                            response.read()
                            status, node = response.status, response.headers.get("X-FlowStack-Node")
                    except urllib.error.HTTPError as error:
                        status, node = error.code, error.headers.get("X-FlowStack-Node")
                    except OSError:
                        status = "closed"
                    with lock:
                        results.append((started - began, time.monotonic() - started, status, node))

            threads = [threading.Thread(target=client, daemon=True) for _ in range(CLIENTS)]
            for thread in threads:
                thread.start()
            time.sleep(PAUSE_AT)
            paused = time.monotonic() - began
            os.kill(nodes[1].process.pid, signal.SIGSTOP)
            time.sleep(RESUME_AT - PAUSE_AT)
            os.kill(nodes[1].process.pid, signal.SIGCONT)
            time.sleep(SECONDS - RESUME_AT)
            stop.set()
            for thread in threads:
                thread.join(timeout=40)
            statuses = collections.Counter(str(status) for _, _, status, _ in results)
            slow = [r for r in results if r[1] > 2.0]
            to_paused = [start for start, _, _, node in results if node == "node2" and paused <= start < RESUME_AT]
            failed_to_paused = [start for start, _, status, _ in results if status not in (200, 201) and paused <= start < RESUME_AT]
            print(f"config {config_path}: {len(results)} requests, by status {dict(statuses)}")
            print(f"  over 2 s: {len(slow)}; slowest {max(r[1] for r in results):.1f} s; "
                  f"failed answers sent during the pause: {len(failed_to_paused)}")
            if failed_to_paused:
                print(f"  last failed request sent {max(failed_to_paused) - paused:.2f} s after the pause")
            print(f"  requests answered by node2 sent during the pause: {len(to_paused)}")
        finally:
            if haproxy:
                haproxy.stop()
            for node in nodes:
                try:
                    os.kill(node.process.pid, signal.SIGCONT)
                except (OSError, AttributeError):
                    pass
                node.stop()
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

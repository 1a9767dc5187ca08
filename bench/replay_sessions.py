#!/usr/bin/env python3
"""Fills a running FlowStack with N recorded sessions for a replay benchmark (BENCHMARKS.md,
"Replay (issue 24)"): each new user's session gets one batch of actions, onboarding.showSecond,
then for three users in four onboarding.completed and home.selectTab {index: 1}; the fourth
stops on onboarding.second. W worker processes, user ids from OFFSET.

Usage: replay_sessions.py PORT N W [OFFSET]
"""
import http.client
import os
import sys
from multiprocessing import Process

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from harness.web import post_json  # noqa: E402


def worker(port, start, count):
    connection = http.client.HTTPConnection("127.0.0.1", port)

    def post(path, body, token=None):
        return post_json(connection, path, body, token)

    for index in range(start, start + count):
        created = post("/v1/sessions", {"userId": f"rp-{index}"})
        sid, token = created["session"]["id"], created["session"]["token"]
        actions = [{"type": "onboarding.showSecond"}]
        if index % 4:
            actions += [{"type": "onboarding.completed"}, {"type": "home.selectTab", "params": {"index": 1}}]
        post(f"/v1/sessions/{sid}/actions/batch",
             {"actions": [{"key": f"k{n}", "version": n, "action": action} for n, action in enumerate(actions)]}, token)


def main():
    port, count, workers = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    offset = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    share = count // workers
    processes = [Process(target=worker, args=(port, offset + k * share, share)) for k in range(workers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join()


if __name__ == "__main__":
    main()

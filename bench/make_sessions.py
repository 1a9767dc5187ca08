#!/usr/bin/env python3
"""Creates N sessions of onboarded users on a running FlowStack and prints "ID TOKEN" lines.

Each user goes through onboarding first (showSecond, completed), so the sessions sit at home,
where home.selectTab applies every time. With --history K, each session also gets K earlier
actions (tab switches) before the benchmark.
Usage: make_sessions.py PORT N [--history K] > sessions.txt
"""
import http.client
import json
import sys


def main():
    port, count = int(sys.argv[1]), int(sys.argv[2])
    history = int(sys.argv[sys.argv.index("--history") + 1]) if "--history" in sys.argv else 0
    connection = http.client.HTTPConnection("127.0.0.1", port)

    def post(path, body, token=None):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        connection.request("POST", path, json.dumps(body), headers)
        response = connection.getresponse()
        data = response.read()
        if response.status >= 300:
            raise SystemExit(f"{path}: {response.status} {data[:200]!r}")
        return json.loads(data)

    for index in range(count):
        created = post("/v1/sessions", {"userId": f"bench-{index}", "attributes": {"country": "US"}})
        sid, token = created["session"]["id"], created["session"]["token"]
        if created["state"]["top"]["feature"] != "home.first":
            post(f"/v1/sessions/{sid}/actions", {"type": "onboarding.showSecond"}, token)
            post(f"/v1/sessions/{sid}/actions", {"type": "onboarding.completed"}, token)
        for step in range(history):
            post(f"/v1/sessions/{sid}/actions", {"type": "home.selectTab", "params": {"index": (step + 1) % 2}}, token)
        print(sid, token)


if __name__ == "__main__":
    main()

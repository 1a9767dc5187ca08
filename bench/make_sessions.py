#!/usr/bin/env python3
"""Creates N sessions of onboarded users on a running FlowStack and prints "ID TOKEN" lines.

Each user goes through onboarding first (showSecond, completed), so the sessions sit at home,
where home.selectTab applies every time. With --history K, each session also gets K earlier
actions (tab switches) before the benchmark. With --onboarding, the users are new and their
sessions stay on onboarding.first (bench/onboarding.lua walks them between the two screens).
Usage: make_sessions.py PORT N [--history K] [--onboarding] > sessions.txt
       make_sessions.py PORT --rewind < sessions.txt   (sessions on onboarding.second go back to the first)
"""
import http.client
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from harness.web import post_json  # noqa: E402


def rewind(port):
    """Puts every session of stdin that is on onboarding.second back on onboarding.first: a wrk
    run of bench/onboarding.lua ends with posts cut short, so some sessions are a step ahead."""
    connection = http.client.HTTPConnection("127.0.0.1", port)
    for line in sys.stdin:
        sid, token = line.split()
        headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
        connection.request("GET", f"/v1/sessions/{sid}", headers=headers)
        state = json.loads(connection.getresponse().read())
        if state["top"]["feature"] == "onboarding.second":
            connection.request("POST", f"/v1/sessions/{sid}/actions", json.dumps({"type": "onboarding.returnToFirst"}), headers)
            connection.getresponse().read()


def main():
    if "--rewind" in sys.argv:
        return rewind(int(sys.argv[1]))
    port, count = int(sys.argv[1]), int(sys.argv[2])
    history = int(sys.argv[sys.argv.index("--history") + 1]) if "--history" in sys.argv else 0
    onboarding = "--onboarding" in sys.argv
    connection = http.client.HTTPConnection("127.0.0.1", port)

    def post(path, body, token=None):
        return post_json(connection, path, body, token)

    for index in range(count):
        user = f"bench-new-{index}" if onboarding else f"bench-{index}"
        created = post("/v1/sessions", {"userId": user, "attributes": {"country": "US"}})
        sid, token = created["session"]["id"], created["session"]["token"]
        if created["state"]["top"]["feature"] != "home.first" and not onboarding:
            post(f"/v1/sessions/{sid}/actions", {"type": "onboarding.showSecond"}, token)
            post(f"/v1/sessions/{sid}/actions", {"type": "onboarding.completed"}, token)
        for step in range(history):
            post(f"/v1/sessions/{sid}/actions", {"type": "home.selectTab", "params": {"index": (step + 1) % 2}}, token)
        print(sid, token)


if __name__ == "__main__":
    main()

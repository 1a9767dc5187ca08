#!/usr/bin/env python3
"""Where a durable action's instructions go in the server: runs flowstack (release) under
callgrind on a fresh SQLite database, drives SESSIONS sessions of the sample app through a fixed
cycle of actions over HTTP, stops it, and prints the inclusive user-space instructions per
action of each stage (parse the body, apply, state document with its transition, stored tree,
the store's commit of a batch), read from callgrind_annotate.
Usage: bench/encode_server.py FLOWSTACK_BINARY [SESSIONS] [ACTIONS_PER_SESSION]

Valgrind 3.19 cannot read the DWARF 5 of a Swift 6.3 release build: profile a copy without it,
`objcopy --strip-debug .build/release/flowstack /tmp/flowstack` (the symbols stay)."""
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

# A stage, and the symbols (mangled Swift names, or parts of them) whose largest inclusive cost is its cost.
STAGES = [
    ("parse the body", ["4JSON10JSONParserV5parse"]),
    ("apply (engine)", ["10FlowEngineAAO5apply_2to7catalog7context6limits"]),
    # After issue 35 one call makes both; before it, SessionState.encode made the transition
    # and LiveSession.cachedStateDocument the document (also called once per session created).
    ("state document and transition", ["13EncodingCacheV8document7version4tree10transition", "12SessionStateV6encode"]),
    # storageBytes is inlined into its caller in a release build; writeStorage is the whole of it.
    ("stored tree", ["10FlowEngine0A4TreeV12writeStorage4into"]),
    ("commit (SQLite, per batch)", ["11SQLiteStoreAAC5write_2to"]),
    ("the whole turn (applyLocked)", ["14SessionServiceC11applyLocked"]),
]


def main():
    binary = sys.argv[1]
    sessions = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    per_session = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    work = tempfile.mkdtemp()
    out = os.path.join(work, "callgrind.out")
    server = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "serve", "--port", "0",
                               "--db", f"{work}/e.sqlite", "--log-level", "warning"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = None
    while port is None:
        line = server.stdout.readline()
        if not line:
            sys.exit("the server stopped before it listened")
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if match:
            port = int(match.group(1))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def post(path, body, token=None):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        connection.request("POST", path, json.dumps(body), headers)
        response = connection.getresponse()
        data = response.read()
        assert response.status in (200, 201), (response.status, data)
        return json.loads(data)

    # Onboarding, then a tab switch, the modal and back, and so on: every action of the sample app.
    cycle = [("home.selectTab", {"index": 1}), ("home.presentModal", {"content": "Grüße"}), ("modal.dismiss", {}),
             ("home.selectTab", {"index": 0})]
    actions = 0
    for index in range(sessions):
        created = post("/v1/sessions", {"userId": f"enc-{index}", "attributes": {"country": "US"}})
        sid, token, state = created["session"]["id"], created["session"]["token"], created["state"]
        steps = [("onboarding.showSecond", {}), ("onboarding.completed", {})]
        steps += [cycle[step % len(cycle)] for step in range(per_session - len(steps))]
        for kind, params in steps:
            state = post(f"/v1/sessions/{sid}/actions", {"type": kind, "from": state["top"]["id"], "params": params}, token)
            actions += 1
    connection.close()
    server.send_signal(signal.SIGTERM)
    server.wait()
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                               capture_output=True, text=True).stdout
    print(f"{actions} actions over {sessions} sessions; instructions per action (inclusive, callgrind)")
    for name, symbols in STAGES:
        total = 0
        for symbol in symbols:
            costs = [int(m.group(1).replace(",", "")) for line in annotated.splitlines() if symbol in line
                     for m in [re.match(r"\s*([\d,]+)", line)] if m]
            total += max(costs, default=0)
        print(f"  {name:<32}{total / actions:>10,.0f}")


if __name__ == "__main__":
    main()

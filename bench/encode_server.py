#!/usr/bin/env python3
"""Where a durable action's instructions go in the server: runs flowstack (release) under
callgrind on a fresh SQLite database, creates SESSIONS sessions of the sample app, drives each
through a fixed cycle of ACTIONS_PER_SESSION actions over HTTP, then reads each session's state
READS_PER_SESSION times, and prints the inclusive user-space instructions per action of each
stage (parse the body, apply, state document with its transition, stored tree, the store's
commit of a batch, the turn, all of the HTTP thread's access handler, the writer thread), and per
state read of the HTTP thread's access handler, read from callgrind_annotate. Each phase (start
and creation, actions, reads) is dumped apart (`callgrind_control --dump`), so no figure
carries another phase's work.
With KEYED=1 every action carries an Idempotency-Key, as the Swift and JavaScript clients send
on every tap (its key is stored with the entry).
Usage: bench/encode_server.py FLOWSTACK_BINARY [SESSIONS] [ACTIONS_PER_SESSION] [READS_PER_SESSION]

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

# libmicrohttpd's access handler: everything the HTTP thread does for a request.
ACCESS = "10HTTPServerAAC6access10connection"

# A stage, and the symbols (mangled Swift names, or parts of them) whose largest inclusive cost is its cost.
STAGES = [
    ("parse the body", ["4JSON10JSONParserV5parse"]),
    ("apply (engine)", ["10FlowEngineAAO5apply_2to7catalog7context6limits"]),
    # LiveSession.advance encodes the transition, then the document (since the twenty-fifth
    # session of issue 35; before it EncodingCache.document made both in one pass).
    ("state document and transition", ["11LiveSessionV7advance2by", "13EncodingCacheV8document7version4tree10transition"]),
    # storageBytes is inlined into its caller in a release build; writeStorage is the whole of it.
    ("stored tree", ["10FlowEngine0A4TreeV12writeStorage4into"]),
    ("commit (SQLite, per batch)", ["11SQLiteStoreAAC5write_2to"]),
    ("the whole turn (applyLocked)", ["14SessionServiceC11applyLocked"]),
    ("the HTTP thread (access handler)", [ACCESS]),
    # The writer thread's loop: the commit and the completions it runs for each action.
    ("the writer thread", ["11GroupCommitC3run"]),
]

# The stage of a state read.
READ_STAGE = ("a state read, the HTTP thread", [ACCESS])


def stage_costs(path, stages):
    """The inclusive instructions of each stage in one callgrind dump."""
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                               capture_output=True, text=True).stdout
    costs = []
    for name, symbols in stages:
        total = 0
        for symbol in symbols:
            found = [int(m.group(1).replace(",", "")) for line in annotated.splitlines() if symbol in line
                     for m in [re.match(r"\s*([\d,]+)", line)] if m]
            total += max(found, default=0)
        costs.append((name, total))
    return costs


def main():
    binary = sys.argv[1]
    sessions = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    per_session = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    reads_per_session = int(sys.argv[4]) if len(sys.argv) > 4 else 20
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

    keyed = os.environ.get("KEYED") == "1"
    keys = 0

    def post(path, body, token=None):
        nonlocal keys
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
            if keyed:
                keys += 1
                headers["Idempotency-Key"] = f"enc-{keys}"
        connection.request("POST", path, json.dumps(body), headers)
        response = connection.getresponse()
        data = response.read()
        assert response.status in (200, 201), (response.status, data)
        return json.loads(data)

    # Onboarding, then a tab switch, the modal and back, and so on: every action of the sample app.
    cycle = [("home.selectTab", {"index": 1}), ("home.presentModal", {"content": "Grüße"}), ("modal.dismiss", {}),
             ("home.selectTab", {"index": 0})]
    def dump():
        # Writes what was counted since the last dump to out.N and starts counting again.
        subprocess.run(["callgrind_control", "--dump", str(server.pid)], check=True, capture_output=True)

    created = []
    for index in range(sessions):
        answer = post("/v1/sessions", {"userId": f"enc-{index}", "attributes": {"country": "US"}})
        created.append((answer["session"]["id"], answer["session"]["token"], answer["state"]))
    dump()  # out.1: the start and the sessions' creation
    actions = 0
    for sid, token, state in created:
        steps = [("onboarding.showSecond", {}), ("onboarding.completed", {})]
        steps += [cycle[step % len(cycle)] for step in range(per_session - len(steps))]
        for kind, params in steps:
            state = post(f"/v1/sessions/{sid}/actions", {"type": kind, "from": state["top"]["id"], "params": params}, token)
            actions += 1
    dump()  # out.2: the actions
    reads = 0
    for sid, token, _ in created:
        for _ in range(reads_per_session):
            connection.request("GET", f"/v1/sessions/{sid}", headers={"Authorization": "Bearer " + token})
            response = connection.getresponse()
            response.read()
            assert response.status == 200, response.status
            reads += 1
    dump()  # out.3: the reads
    connection.close()
    server.send_signal(signal.SIGTERM)
    server.wait()
    print(f"{actions} {'keyed ' if keyed else ''}actions over {sessions} sessions; instructions per action (inclusive, callgrind)")
    for name, total in stage_costs(out + ".2", STAGES):
        print(f"  {name:<36}{total / actions:>10,.0f}")
    if reads:
        print(f"{reads} state reads; instructions per read (inclusive, callgrind)")
        for name, total in stage_costs(out + ".3", [READ_STAGE]):
            print(f"  {name:<36}{total / reads:>10,.0f}")


if __name__ == "__main__":
    main()

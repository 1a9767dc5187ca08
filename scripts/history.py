#!/usr/bin/env python3
"""The history checker of issue 14: three FlowStack nodes behind HAProxy on one PostgreSQL
(primary + synchronous standby), concurrent clients, faults, and a check of everything that was
answered against what the database ended up holding. In the spirit of Jepsen: record a history
of operations with their outcome and their real-time interval, then check properties of it.

Usage: scripts/history.py PATH/TO/flowstack

The parts live in scripts/harness/history/: cluster (what it starts), workload (the clients'
operations), faults, and checker (pure functions over the recorded history, unit-tested by
scripts/harness/tests/test_history_checker.py). This file runs them in order.

What it starts (all on 127.0.0.1, free ports, removed at the end):
  - PostgreSQL, a primary and a synchronous standby (harness.postgres, scripts/pgserver.py);
  - per node, two small TCP proxies (one to the primary, one to the standby), so that the checker
    can cut one node off the database; they run in a child process (harness.tcpproxy);
  - three nodes, `flowstack serve --db 'postgresql://postgres@127.0.0.1:P1,127.0.0.1:P2/flowstack
    ?target_session_attrs=read-write'` where P1 and P2 are that node's proxies;
  - HAProxy with a copy of deploy/haproxy.cfg (only the addresses rewritten);
  - at the end, a separate single-node FlowStack on SQLite, to replay the logs.

What it does: SESSIONS sessions, each for a new user, walked by WALKERS threads for
LOAD_SECONDS, through HAProxy. Every action carries a unique Idempotency-Key. Every request is
an operation in the history, with time.monotonic() when it was sent and when its answer came,
and an outcome: ok (200), failed (a definitive refusal: 409, 412, 422, ...) or unknown (a 5xx or
a lost connection: the action may or may not have been applied). An unknown action is retried,
with the same key and the same body, next turn, through HAProxy or straight to a random node,
until an answer is definitive; a retry that is refused leaves the action unknown (its earlier
attempt may have been applied, or be applied later: a commit held in a cut network).
Meanwhile the fault thread injects, on a fixed schedule:
  - kill-node: kill -9 of a node under load, restarted on the same port 2 s later;
  - pause-node: SIGSTOP of a node for PAUSE_SECONDS, past its session leases (the other nodes
    take its sessions over meanwhile), then SIGCONT: it must answer no read from memory and
    commit nothing under the leases it held (the read and log checks below find it);
  - bypass: for a few seconds a set of sessions is sent straight to two nodes, bypassing
    HAProxy (action on A, read on B, action on B, read on A, ...), and a racer thread posts
    actions on the same sessions through the other node at the same time;
  - isolate-node: a node's proxies stop forwarding (connections held open, nothing passes, as a
    network partition) for ISOLATE_SECONDS, then forward again (what was held is delivered); a
    prober checks the node answers 503 meanwhile and comes back by itself;
  - failover: kill -9 of the PostgreSQL primary, then the standby is promoted; the nodes must
    follow through their multi-host URL, without a restart.

At the end it stops the faults, lets the walkers settle their unknown actions (same key), and
reads every session's whole action log (GET /v1/sessions/{id}/actions, ?after=&limit= pages)
and state through a node other than the one that last acknowledged a write on it. Then it
replays every log, in order, on a fresh session of a fresh user on the SQLite node, and checks
these properties (each is one check over all sessions; a failure says how many sessions and
operations break it, with examples):
  versions        every log's versions are exactly 1..n, and the state read at the end is at n
  acknowledged    every acknowledged action is in the log at the version its 200 answered, with
                  the same type and params
  applied-once    no operation applied twice: the log's entries that no 200 acknowledged are
                  matched, by type and params, one each, to operations whose outcome stayed
                  unknown; so a log holds at least `acknowledged` and at most `acknowledged +
                  unknown` actions (a key replayed on another node must not apply again)
  real-time-order an action acknowledged before another one was sent has the lower version
  read-your-writes every read (GET state, on any node) answered a version >= every version
                  acknowledged, on any node, before the read was sent
  replay          the log replayed through the engine (the SQLite node) gives, at every version,
                  the state the cluster answered: each 200 to an action and each read equals the
                  replay at its version (root tree and screens), and so does the final state
  user-state      a user who completed onboarding through one node starts at home in a session
                  created on another node (guarantee 4; checked on up to USER_CHECKS users)
and these fault checks: a node cut off from the database answers 503 (never 200 to an action)
within ISOLATED_SLOWEST s and serves again within REJOIN_WITHIN s after the cut ends; after each
kill -9 and after the failover, actions are acknowledged again within RECOVER_WITHIN s; no node
answered 500; no node died unless killed; the whole run completed in time. Last, once the
history is checked (it changes the flows), guarantee 5: a flow version PUT through node1 can be
pinned by an experiment PUT through node3 1 s later; sessions made on every node 1 s after that
are in the experiment, and one pinned to the new version runs it on another node; the report
through node2 counts the sessions of every node.

It prints the counts (operations, acknowledged, failed, unknown, unknown that landed, faults by
kind), one line per check, then `history: N passed, M failed`, and exits 1 on any failure.
Bounded: about 90 s on two cores with a debug build (LOAD_SECONDS of load; a watchdog stops
it at HARD_LIMIT s).

Environment:
  HISTORY_SECONDS=60       load time (the fault schedule is spread over it)
  HISTORY_SESSIONS=120, HISTORY_WALKERS=12, HISTORY_SEED=N (default: random, printed)
  HISTORY_NODE_ARGS='--cache-sessions 1000000'  extra `flowstack serve` arguments for the nodes
  HISTORY_BREAK=...        deliberately broken variants, to see the checker fail (comma-separated):
    async-standby       the failover goes to a standby that was asynchronous and lagging (it is
                        frozen for 2 s before the primary dies): acknowledged actions are lost
    retry-without-key   walkers retry an unknown action with a new Idempotency-Key (a client
                        bug): an action that had landed is applied a second time
    no-bypass           no bypass fault (a weaker checker: shows what the bypass step catches)
  HISTORY_MIXED=1          the last node runs without --node-url (no leases) beside the owners,
                           as while a rolling restart turns leases on
  HISTORY_KEEP=1           keep the work directory (node logs, haproxy.cfg, history.json)
Standard library only; installs haproxy (and, through harness.postgres, postgresql) with apt-get
when missing.
"""
import collections
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time

from harness.history.checker import PROPERTIES, Checks, check_faults, check_replay, check_session, property_results
from harness.history.cluster import Cluster
from harness.history.faults import Faults
from harness.history.settings import (BREAK, HARD_LIMIT, KNOWN_BREAKS, LOAD_SECONDS, NODES, SESSIONS, SETTLE_SECONDS,
                                      STARTED, UNKNOWN_STATUSES, USER_CHECKS, WALKERS, REQUEST_TIMEOUT, log)
from harness.history.workload import (Racer, Session, Shared, Targets, Walker, check_definitions, create_session,
                                      read_back, replay)
from harness.server import FlowStackProcess
from harness.web import Http


def in_threads(work, sessions, timeout, threads=6):
    """work(session, http) for every session, spread over `threads` threads (each with its own
    connections); waits at most `timeout` s for each thread."""
    def run(part):
        local = Http()
        for session in part:
            work(session, local)
        local.close()
    pool = [threading.Thread(target=run, args=(sessions[i::threads],), daemon=True) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=timeout)


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print("usage: history.py PATH/TO/flowstack", file=sys.stderr)
        return 2
    unknown_breaks = BREAK - KNOWN_BREAKS
    if unknown_breaks:
        print(f"history: HISTORY_BREAK: unknown {sorted(unknown_breaks)}; known: {sorted(KNOWN_BREAKS)}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    watchdog = threading.Timer(HARD_LIMIT, lambda: (log(f"watchdog: the run passed {HARD_LIMIT:.0f}s; stopping"),
                                                    os.kill(os.getpid(), signal.SIGTERM)))
    watchdog.daemon = True
    watchdog.start()

    binary = os.path.abspath(sys.argv[1])
    seed = int(os.environ.get("HISTORY_SEED") or random.randrange(1 << 30))
    rng = random.Random(seed)
    node_args = os.environ.get("HISTORY_NODE_ARGS", "").split()
    log(f"seed {seed}; {SESSIONS} sessions, {WALKERS} walkers, {LOAD_SECONDS:.0f}s of load"
        + (f"; node arguments {node_args}" if node_args else "")
        + (f"; BROKEN VARIANT: {', '.join(sorted(BREAK))}" if BREAK else ""))
    work = tempfile.mkdtemp(prefix="flowstack-history-")
    cluster = Cluster(binary, work, node_args)
    replayer = None
    results = []     # (name, failure or None, details)
    completed_run = False
    try:
        cluster.start()
        targets = Targets(cluster.haproxy, cluster.nodes)
        http_ = Http()
        sessions = []
        for index in range(SESSIONS):
            created, headers = create_session(http_, cluster.haproxy.port, f"user-{index}")
            sessions.append(Session(index, created["session"]["id"], created["session"]["token"], f"user-{index}",
                                    Targets.served_by("lb", headers), created["state"]))
        probe_sessions = []
        for node in cluster.nodes:  # the probers' sessions, at home already, outside the history
            created, _ = create_session(http_, node.port, f"probe-{node.index}")
            probe = Session(-1, created["session"]["id"], created["session"]["token"], f"probe-{node.index}", node.index,
                            created["state"])
            for type_ in ("onboarding.showSecond", "onboarding.completed"):
                http_.request(node.port, "POST", f"/v1/sessions/{probe.sid}/actions", json.dumps({"type": type_}),
                              {"Authorization": f"Bearer {probe.token}", "Content-Type": "application/json"})
            probe_sessions.append(probe)
        log(f"{len(sessions)} sessions created through HAProxy")

        shared = Shared()
        walkers = [Walker(n, sessions[n::WALKERS], targets, shared, rng.randrange(1 << 30)) for n in range(WALKERS)]
        racer = Racer({s.sid: s for s in sessions}, targets, shared, rng.randrange(1 << 30))
        cluster.load_started = time.monotonic()
        faults = Faults(cluster, shared, sessions, probe_sessions, rng)
        for thread in walkers + [racer, faults]:
            thread.start()
        last_report = time.monotonic()
        while time.monotonic() < cluster.load_started + LOAD_SECONDS:
            time.sleep(0.2)
            if time.monotonic() - last_report >= 10:
                last_report = time.monotonic()
                ops = [op for w in walkers for op in list(w.operations)]
                log(f"load: {len(ops)} operations, {sum(1 for op in ops if op.outcome == 'ok')} ok, "
                    f"{sum(1 for op in ops if op.outcome == 'unknown')} unknown so far; haproxy sees {cluster.haproxy.states()}")
        log("load over: stopping the faults, settling unknown actions (retried with their key)")
        shared.stop.set()
        faults.done.wait(timeout=40)
        for thread in walkers + [racer]:
            thread.join(timeout=SETTLE_SECONDS + REQUEST_TIMEOUT + 5)
        hung = [t.name for t in walkers + [racer, faults] if t.is_alive()]
        load_ended = time.monotonic()

        # --- the cluster after the faults
        for node in cluster.nodes:
            if not node.alive():
                results.append((f"{node.name} is alive at the end", f"it exited with status {node.process.returncode}",
                                node.log_tail()))
                node.start()
        for node in cluster.nodes:
            node.wait_healthy()
        all_up = cluster.haproxy.wait_all_up([n.name for n in cluster.nodes], timeout=15)

        operations = [op for thread in walkers + [racer] for op in thread.operations]
        by_session = collections.defaultdict(list)
        for op in operations:
            by_session[op.sid].append(op)

        # --- read every session back through a node other than its last writer
        reader_targets = {}
        for session in sessions:
            writes = [op for op in by_session[session.sid] if op.kind == "action" and op.outcome == "ok" and op.served_by is not None]
            last_writer = max(writes, key=lambda op: op.version).served_by if writes else session.created_by
            others = [i for i in range(NODES) if i != last_writer]
            reader_targets[session.sid] = others[session.index % len(others)]
        logs, finals = {}, {}
        errors = []

        def read_one(session, local):
            try:
                logs[session.sid], finals[session.sid] = read_back(targets, session, reader_targets[session.sid], local)
            except Exception as error:  # noqa: BLE001
                errors.append(f"{session.sid}: {type(error).__name__}: {error}")
        in_threads(read_one, sessions, timeout=60)
        log(f"read back {len(logs)} logs ({sum(len(v) for v in logs.values())} entries) through another node than the last writer")

        # --- shared user state: onboarded through one node, a new session on another starts at home
        user_checks = []
        for session in sessions:
            done = [op for op in by_session[session.sid] if op.outcome == "ok" and op.type == "onboarding.completed"
                    and op.served_by is not None]
            if done and len(user_checks) < USER_CHECKS:
                onboarder = done[0].served_by
                node = session.created_by if session.created_by not in (None, onboarder) else (onboarder + 1 + session.index % 2) % NODES
                created, _ = create_session(http_, cluster.nodes[node].port, session.user)
                user_checks.append((session, onboarder, node, (created["state"].get("top") or {}).get("feature")))

        # --- replay the logs on a single-node FlowStack on SQLite
        replay_dir = os.path.join(work, "replay")
        os.makedirs(replay_dir)
        replayer = FlowStackProcess(binary, replay_dir)
        replayer.start()
        replays = {}

        def replay_one(session, local):
            if session.sid in logs:
                try:
                    replays[session.sid] = replay(replayer.port, session, logs[session.sid], local)
                except Exception as error:  # noqa: BLE001
                    replays[session.sid] = ({}, f"the replay broke: {type(error).__name__}: {error}")
        in_threads(replay_one, sessions, timeout=90)
        log(f"replayed {len(replays)} logs on a single SQLite node")

        # --- the checks
        checks = Checks()
        checks.declare(*PROPERTIES)
        totals = collections.Counter()
        for session in sessions:
            if session.sid not in logs:
                continue
            counts = check_session(session, by_session[session.sid], logs[session.sid], finals[session.sid], checks, STARTED)
            totals.update(counts)
            states, problem = replays.get(session.sid, ({}, "not replayed"))
            check_replay(session, by_session[session.sid], finals[session.sid], states, problem, checks)
        for session, onboarder, node, feature in user_checks:
            if feature != "home.first":
                checks.fail("user-state", session.sid, f"{session.user} completed onboarding through node{onboarder + 1}; "
                                                       f"a new session on node{node + 1} starts at {feature}")

        # --- the counts
        actions = [op for op in operations if op.kind == "action"]
        reads = [op for op in operations if op.kind == "read"]
        attempts = [a for op in operations for a in op.attempts]
        statuses = collections.Counter(str(a[2]) for a in attempts)
        retried = [op for op in actions if len(op.attempts) > 1]
        elsewhere = sum(1 for op in retried if len({a[3] for a in op.attempts}) > 1)
        fault_kinds = collections.Counter(f["kind"] for f in faults.faults)
        log(f"load ran {load_ended - cluster.load_started:.1f}s")
        print(f"history: operations: {len(operations)} ({len(actions)} actions, {len(reads)} reads; {len(attempts)} requests); "
              f"{len(sessions)} sessions", flush=True)
        had_unknown = [op for op in actions if any(a[2] is None or a[2] in UNKNOWN_STATUSES for a in op.attempts)]
        print(f"history: actions: {sum(1 for op in actions if op.outcome == 'ok')} acknowledged, "
              f"{sum(1 for op in actions if op.outcome == 'failed')} refused (definitive), "
              f"{sum(1 for op in actions if op.outcome == 'unknown')} unknown at the end", flush=True)
        print(f"history: unknown outcomes: {len(had_unknown)} actions had an answer that was not definitive "
              f"(5xx or a lost connection); retried with the same key ({elsewhere} of them on another target than the "
              f"first): {sum(1 for op in had_unknown if op.replayed)} turned out applied already (answered by a replay of "
              f"the stored answer), {sum(1 for op in had_unknown if op.outcome == 'ok' and not op.replayed)} were applied "
              f"by the retry, {sum(1 for op in had_unknown if op.refused_after_unknown)} were refused on retry, "
              f"{sum(1 for op in had_unknown if op.outcome == 'unknown')} stayed unknown, of which {totals['landed']} "
              f"are in the logs", flush=True)
        print(f"history: reads: {sum(1 for op in reads if op.outcome == 'ok')} ok, {sum(1 for op in reads if op.outcome != 'ok')} "
              f"failed; final reads {len(finals)}; user-state checks {len(user_checks)}", flush=True)
        print(f"history: answers by status: {dict(sorted(statuses.items()))}", flush=True)
        print(f"history: faults injected: {dict(fault_kinds)}" + (f" (fault thread: {faults.errors})" if faults.errors else ""),
              flush=True)
        if os.environ.get("HISTORY_KEEP") == "1":
            with open(os.path.join(work, "history.json"), "w") as file:
                json.dump({"seed": seed, "faults": [{k: v for k, v in f.items() if k != "answers"} for f in faults.faults],
                           "operations": [{"sid": op.sid, "kind": op.kind, "client": op.client, "type": op.type,
                                           "params": op.params, "from": op.source, "key": op.key, "outcome": op.outcome,
                                           "version": op.version, "served_by": op.served_by, "replayed": op.replayed,
                                           "invoked": op.invoked, "completed": op.completed,
                                           "attempts": op.attempts} for op in operations],
                           "logs": logs}, file)

        # --- the fault checks
        fault_results, notes = check_faults(faults.faults, [op.completed for op in actions if op.outcome == "ok"], load_ended)
        for note in notes:
            log(note)
        results += fault_results
        five_hundreds = [(op, a) for op in operations for a in op.attempts if a[2] == 500]
        results.append(("no node answered 500", None if not five_hundreds else f"{len(five_hundreds)} answers were 500",
                        "; ".join(f"{op.kind} {op.type or ''} on {op.sid}" for op, _ in five_hundreds[:3])))
        unexpected = [n.name for n in cluster.nodes if n.starts != n.killed + 1]
        results.append(("no node died unless killed", None if not unexpected else f"{unexpected} did"))
        results.append(("HAProxy sees every node UP at the end", None if all_up else str(cluster.haproxy.states())))
        thread_errors = [e for t in walkers + [racer, faults] for e in t.errors] + errors + hung
        results.append(("the clients, the fault thread and the read-back ran without errors",
                        None if not thread_errors else f"{len(thread_errors)} errors", "; ".join(thread_errors[:4])))
        results.append(("every session was read back and replayed",
                        None if len(logs) == len(sessions) and len(replays) == len(sessions)
                        else f"{len(logs)} read, {len(replays)} replayed of {len(sessions)}"))

        # --- definitions (guarantee 5), once the history is checked: it changes the flows
        # (new connections: a kept one to a node killed and restarted meanwhile is a broken pipe)
        results += check_definitions(cluster, Http())

        # --- the properties
        print("history: properties (each over all sessions):", flush=True)
        results += property_results(checks)
        completed_run = True
    except SystemExit:
        results.append(("the run completed", "it was stopped (SIGTERM or the watchdog)"))
        raise
    except Exception as error:  # a failure of the harness itself still counts, and still cleans up
        import traceback
        traceback.print_exc()
        results.append(("the run completed", f"{type(error).__name__}: {error}"))
    finally:
        if replayer is not None:
            replayer.stop()
        cluster.stop()
        keep = os.environ.get("HISTORY_KEEP") == "1"
        if keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        watchdog.cancel()
        passed = sum(1 for _, failure, *_ in results if failure is None)
        failed = len(results) - passed
        for name, failure, *details in results:
            if failure is None:
                print(f"PASS {name}", flush=True)
            else:
                print(f"FAIL {name}: {failure}" + (f"\n     {details[0]}" if details and details[0] else ""), flush=True)
        log(f"finished in {time.monotonic() - STARTED:.1f}s" + ("" if completed_run else " (incomplete)"))
        print(f"history: {passed} passed, {failed} failed", flush=True)
    return 1 if failed or not completed_run else 0


if __name__ == "__main__":
    sys.exit(main())

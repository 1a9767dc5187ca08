#!/usr/bin/env python3
"""The failover test (issue 23): what happens to FlowStack nodes around a PostgreSQL failover.

Usage: scripts/failover.py PATH/TO/flowstack [split-brain|stuck-commit|quorum ...]

Three scenarios, each on its own throwaway PostgreSQL (scripts/pgserver.py), each node on the
multi-host URL scripts/cluster.sh uses (`…@primary,standby,…/flowstack?target_session_attrs=read-write`):

  split-brain   primary + 2 standbys (ANY 1). Actions on a session, kill -9 of the primary, promote
                (the nodes follow), more actions. Then the tools must not lead to a split brain:
                `pgserver.py restart` refuses the demoted primary and names `rejoin`; a plain
                start of it comes up read-only (standby.signal). Then the old primary is started
                writable anyway (what the tools did before): the running node must refuse its
                database (/healthz 503 naming the two writable hosts, reads 503, never the
                pre-failover state), and a node started now must not become healthy nor serve
                the stale state. After `rejoin` the node serves the newest state again and a
                replayed Idempotency-Key gets its stored answer.
  stuck-commit  primary + 1 synchronous standby, which is killed: commits cannot finish, and
                /healthz must say so (503, "Commits do not finish") within STUCK_WITHIN s, then
                200 again once the standby is back.
  quorum        primary + 2 standbys (ANY 1), one killed: actions keep being acknowledged, each
                within 2.5 s, and /healthz stays 200.

Prints each failure, then `failover: N passed, M failed`; exits 1 when anything failed.
Standard library only. About a minute.
"""
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.server import FlowStackProcess, Tally, exit_on_sigterm, wait_for  # noqa: E402
from harness.web import call  # noqa: E402
from harness.postgres import PostgresServer, PgServerError  # noqa: E402

REFUSE_WITHIN = 8.0    # s for a running node to refuse a split brain (periodic check: 2 s)
STUCK_WITHIN = 8.0     # s for /healthz to report stuck commits
RECOVER_WITHIN = 15.0  # s for a node to be healthy again after the fix
SCRIPTS = os.path.dirname(os.path.abspath(__file__))


def multi_host_url(pg):
    hosts = ",".join(f"127.0.0.1:{node.port}" for node in pg.nodes)
    return f"postgresql://postgres@{hosts}/flowstack?target_session_attrs=read-write"


class Session:
    def __init__(self, port):
        status, body = call(port, "POST", "/v1/sessions", {"userId": f"failover-{time.monotonic_ns()}"})
        if status != 201 and status != 200:
            raise RuntimeError(f"POST /v1/sessions: {status} {body}")
        self.id, self.token = body["session"]["id"], body["session"]["token"]
        self.headers = {"Authorization": f"Bearer {self.token}"}
        self.sent = {}  # Idempotency-Key -> the action posted with it

    def act(self, port, key):
        """Posts the next action of a walk (onboarding, then tabs) with Idempotency-Key `key`."""
        if key in self.sent:
            return self.post(port, self.sent[key], key)
        status, state = self.state(port)
        if status != 200:
            return status, state
        feature = (state.get("top") or {}).get("feature", "")
        if feature == "onboarding.first":
            action = {"type": "onboarding.showSecond"}
        elif feature.startswith("onboarding"):
            action = {"type": "onboarding.completed"}
        else:
            action = {"type": "home.selectTab", "params": {"index": 1 if feature == "home.first" else 0}}
        self.sent.setdefault(key, action)
        return self.post(port, self.sent[key], key)

    def replay(self, port, key):
        """The action first posted with `key`, posted again with it (a client's retry)."""
        return self.post(port, self.sent[key], key)

    def post(self, port, action, key, timeout=10):
        return call(port, "POST", f"/v1/sessions/{self.id}/actions", action,
                    dict(self.headers, **{"Idempotency-Key": key}), timeout=timeout)

    def state(self, port):
        return call(port, "GET", f"/v1/sessions/{self.id}", headers=self.headers)


def version_of(answer):
    status, body = answer
    return body.get("version") if status == 200 and isinstance(body, dict) else None


def healthz(port):
    return call(port, "GET", "/healthz", timeout=5)


def start_node(binary, work, db, name):
    node = FlowStackProcess(binary, os.path.join(work, name), db=db)
    os.makedirs(node.work, exist_ok=True)
    node.start(timeout=40)
    return node


def split_brain(binary, work, tally):
    with PostgresServer(standbys=2) as pg:
        db = multi_host_url(pg)
        node = start_node(binary, work, db, "node1")
        try:
            session = Session(node.port)
            first = session.act(node.port, "k1")
            tally.check("an action before the failover is acknowledged", None if first[0] == 200 else f"status {first[0]}", first[1])
            pg.kill9()
            pg.promote_standby()
            second = wait_for(lambda: (lambda answer: answer if answer[0] == 200 else None)(session.act(node.port, "k2")),
                              RECOVER_WITHIN, pause=0.5)
            tally.check("after the kill -9 and the promote, the node acknowledges actions on the new primary",
                        None if second else "no 200 within the wait")
            newest = version_of(session.state(node.port))

            result = subprocess.run([sys.executable, os.path.join(SCRIPTS, "pgserver.py"), "restart", "--dir", pg.directory],
                                    capture_output=True, text=True, timeout=60)
            tally.check("`pgserver.py restart` refuses the demoted primary and names `rejoin`",
                        None if result.returncode != 0 and "rejoin" in result.stderr and not pg.primary.running()
                        else f"status {result.returncode}", result.stderr.strip())

            # What the tools did before: the old primary back writable, first in the URL (the
            # standby.signal promote put there removed, as a start with the old tools had none).
            os.unlink(os.path.join(pg.primary.data, "standby.signal"))
            pg.primary.restart_after_crash()
            recovery = pg.primary.sql("SELECT pg_is_in_recovery()", database="postgres").strip()
            stale_version = pg.primary.sql(f"SELECT max(version) FROM actions WHERE session_id = '{session.id}'").strip()
            tally.check("(set-up) the old primary runs writable next to the new one, at the pre-failover version",
                        None if recovery == "f" and stale_version != str(newest) else "not so", (recovery, stale_version, newest))

            # Until the guard has looked at every host (periodically, or when a connection reaches
            # the former primary), a check can fail as a plain "does not answer" 503: also no
            # stale answer, but the reason must follow within the wait.
            answers = []
            refused = wait_for(lambda: (lambda answer: answers.append(answer) or
                                        (answer if answer[0] == 503 and "accept writes" in json.dumps(answer[1]) else None))(
                                            healthz(node.port)), REFUSE_WITHIN)
            tally.check(f"the running node's /healthz is 503 naming the split brain within {REFUSE_WITHIN:.0f} s",
                        None if refused else "not refused", answers[-3:])
            if len(answers) > 1:
                print(f"failover: (before the reason, /healthz answered {[answer[0] for answer in answers[:-1]]})", flush=True)
            reads = [session.state(node.port) for _ in range(5)]
            stale = [answer for answer in reads if answer[0] == 200 and version_of(answer) != newest]
            served = [answer for answer in reads if answer[0] == 200]
            tally.check("the running node serves no read of the pre-failover database", None if not stale else "stale read", stale)
            tally.check("the running node refuses reads that need the database (503)",
                        None if not served or all(version_of(a) == newest for a in served) else "served", served)
            replay = session.replay(node.port, "k1")
            tally.check("a replay of an applied key is not refused as a conflict (503 while refusing)",
                        None if replay[0] in (200, 503) else f"status {replay[0]}", replay)

            # A node started now: it must not become healthy on the old primary (first in the URL).
            second_node = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", "0", "--db", db,
                                            "--log-level", "warning"],
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            try:
                port, output, deadline = None, b"", time.monotonic() + 8
                while time.monotonic() < deadline and not port:
                    ready, _, _ = select.select([second_node.stdout], [], [], 0.2)
                    if ready:
                        chunk = os.read(second_node.stdout.fileno(), 65536)
                        if not chunk:
                            break
                        output += chunk
                        found = re.search(rb"listening on http://127\.0\.0\.1:(\d+)", output)
                        port = int(found.group(1)) if found else None
                if port:
                    answer = wait_for(lambda: (lambda a: a if a[0] == 503 else None)(healthz(port)), REFUSE_WITHIN)
                    reads = session.state(port)
                    tally.check("a node started during the split brain answers /healthz 503 with the reason",
                                None if answer and "accept writes" in json.dumps(answer[1]) else "not refused", answer)
                    tally.check("a node started during the split brain serves no stale read",
                                None if reads[0] != 200 or version_of(reads) == newest else "stale",
                                (newest, reads[0], version_of(reads)))
                    print(f"failover: (the node started during the split brain listened: /healthz {answer and answer[0]}, "
                          f"a read {reads[0]} at version {version_of(reads)})", flush=True)
                else:
                    time.sleep(0.5)
                    text = output.decode("utf-8", "replace")
                    tally.check("a node started during the split brain refuses its database, saying why",
                                None if "accept writes" in text else "no reason given", text[-800:])
            finally:
                second_node.kill()
                second_node.wait(timeout=10)
                second_node.stdout.close()

            # The fix an operator makes (docs/operations.md, "After a failover"): stop it, rejoin as a standby.
            pg.primary.stop()
            # (And what the fence does: with the standby.signal promote wrote, a plain start of
            # the demoted primary, `pg_ctl start`, comes up read-only.)
            pg._write_as_server(os.path.join(pg.primary.data, "standby.signal"), "")
            pg.primary.restart_after_crash()
            recovery = pg.primary.sql("SELECT pg_is_in_recovery()", database="postgres").strip()
            tally.check("the demoted primary started by hand comes up read-only (standby.signal)",
                        None if recovery == "t" else f"pg_is_in_recovery() = {recovery}")
            pg.rejoin()
            healthy = wait_for(lambda: healthz(node.port)[0] == 200, RECOVER_WITHIN)
            tally.check("after `rejoin`, the running node is healthy again", None if healthy else "still 503", healthz(node.port))
            after = session.state(node.port)
            tally.check("after `rejoin`, the node serves the newest state", None if version_of(after) == newest else "stale",
                        (newest, after))
            replay = session.replay(node.port, "k2")
            tally.check("after `rejoin`, a replayed Idempotency-Key gets its stored answer",
                        None if replay[0] == 200 and version_of(replay) == version_of(second) else f"status {replay[0]}",
                        (second, replay))
        finally:
            status = node.stop()
            tally.check("node1 stops with status 0", None if status == 0 else f"status {status}", node.stderr_text()[-500:])


def stuck_commit(binary, work, tally):
    with PostgresServer(standby=True) as pg:
        node = start_node(binary, work, multi_host_url(pg), "node-stuck")
        try:
            session = Session(node.port)
            tally.check("(set-up) an action is acknowledged", None if session.act(node.port, "s1")[0] == 200 else "no")
            pg.kill9(node="standby")
            started = time.monotonic()
            answer = session.act(node.port, "s2")
            tally.check("an action while the synchronous standby is down is not acknowledged",
                        None if answer[0] == 503 else f"status {answer[0]}", answer)
            stuck = wait_for(lambda: (lambda a: a if a[0] == 503 and "Commits do not finish" in json.dumps(a[1]) else None)(
                healthz(node.port)), STUCK_WITHIN)
            statuses = [healthz(node.port)[0] for _ in range(10)]
            tally.check("… and keeps reporting them", None if statuses == [503] * 10 else "not always 503", statuses)
            tally.check(f"/healthz reports the stuck commits (503) within {STUCK_WITHIN:.0f} s",
                        None if stuck and "Commits do not finish" in json.dumps(stuck[1]) else "still 200", stuck)
            print(f"failover: stuck commits reported {time.monotonic() - started:.1f} s after the standby's kill",
                  flush=True)
            pg.restart(node="standby")
            healthy = wait_for(lambda: healthz(node.port)[0] == 200, RECOVER_WITHIN)
            tally.check("/healthz is 200 again once the standby is back", None if healthy else "still 503", healthz(node.port))
            again = wait_for(lambda: (lambda a: a if a[0] == 200 else None)(session.replay(node.port, "s2")), RECOVER_WITHIN)
            tally.check("the action retried with its key is acknowledged once the standby is back", None if again else "no")
        finally:
            node.stop()


def quorum(binary, work, tally):
    with PostgresServer(standbys=2) as pg:
        node = start_node(binary, work, multi_host_url(pg), "node-quorum")
        try:
            session = Session(node.port)
            pg.kill9(node="standby2")
            slowest, statuses = 0.0, []
            for index in range(10):
                started = time.monotonic()
                answer = session.act(node.port, f"q{index}")
                slowest = max(slowest, time.monotonic() - started)
                statuses.append(answer[0])
            tally.check("with one of two standbys (ANY 1) down, every action is acknowledged",
                        None if statuses == [200] * 10 else "not all 200", statuses)
            tally.check("… each within 2.5 s", None if slowest < 2.5 else f"slowest {slowest:.2f} s")
            tally.check("… and /healthz stays 200", None if healthz(node.port)[0] == 200 else "not 200", healthz(node.port))
        finally:
            node.stop()


SCENARIOS = {"split-brain": split_brain, "stuck-commit": stuck_commit, "quorum": quorum}


def main():
    if len(sys.argv) < 2:
        raise SystemExit(f"usage: {sys.argv[0]} PATH/TO/flowstack [{'|'.join(SCENARIOS)} ...]")
    exit_on_sigterm()
    binary = os.path.abspath(sys.argv[1])
    chosen = sys.argv[2:] or list(SCENARIOS)
    tally = Tally()
    work = tempfile.mkdtemp(prefix="flowstack-failover-")
    try:
        for name in chosen:
            print(f"failover: {name}", flush=True)
            try:
                SCENARIOS[name](binary, work, tally)
            except (PgServerError, RuntimeError, KeyError, TypeError) as error:
                tally.check(f"{name} ran to the end", f"{type(error).__name__}: {error}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tally.report("failover")


if __name__ == "__main__":
    sys.exit(main())

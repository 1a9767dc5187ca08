#!/usr/bin/env python3
"""The database-restart test (issue 13): FlowStack on a throwaway PostgreSQL, under load, loses
its database to kill -9 and gets it back, and must ride it out by itself.

Usage: scripts/dbrestart.py PATH/TO/flowstack

Starts PostgreSQL (scripts/pgserver.py) and `flowstack serve` on it, makes SESSIONS sessions and
runs WALKERS threads that walk the sample app on them (each thread owns its sessions; every
action carries a unique Idempotency-Key; an answer that is not definitive, a 503 or a lost
connection, is retried with the same key, so an action whose commit outcome was unknown is
replayed, never applied twice). Three rounds, each under load: (1) SIGKILL the PostgreSQL
postmaster alone (its backends notice and exit), (2) SIGKILL the postmaster and its backends at
once; each time it stays down for DOWN_SECONDS, then starts again on the same directory and
port; (3) SIGSTOP it and its backends for DOWN_SECONDS (a hung server, or a network partition:
connections are accepted by the kernel, nothing answers), then SIGCONT. Checks:
  - while it is down, every action and /healthz is answered 503 application/problem+json with
    Retry-After, none slower than SLOWEST s (the issue says 2 s);
  - after the restart, FlowStack answers /healthz 200 and acknowledges actions again within
    RECOVER_WITHIN s, without being restarted;
  - at the end, every session's action log (GET /v1/sessions/{id}/actions) holds every
    acknowledged version with the same action type, versions are contiguous 1..n, nothing
    was applied that was not acknowledged (but a last action whose answer never came), the
    state's version is the log's last, and no retried action was refused; an action
    acknowledged on a retry (its commit outcome was unknown) shows in a read right after;
  - the FlowStack process never died; it stops with status 0 on SIGTERM; pg_amcheck is clean.
Bounded: about 30 s. Prints each failure, then `dbrestart: N passed, M failed`; exits 1 when
anything failed. Standard library only.
"""
import http.client
import json
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.server import FlowStackProcess, Tally, binary_argument  # noqa: E402
from harness.postgres import PostgresServer  # noqa: E402
from harness.web import read_action_log  # noqa: E402

HOST = "127.0.0.1"
SESSIONS = 32
WALKERS = 8
LOAD_SECONDS = 1.5       # load before each kill, and again after recovery
DOWN_SECONDS = 3.0       # how long the database stays down
GRACE = 0.5              # after the kill, answers may still be 200 for this long (backends finishing a commit)
SLOWEST = 2.5            # seconds any answer may take while the database is down (the issue: 2 s)
RECOVER_WITHIN = 10.0    # seconds after the restart for /healthz 200 and acknowledged actions
REQUEST_TIMEOUT = 10.0
STARTED = time.monotonic()
RETRY_PAUSE = 0.1        # between retries of a 503 (the walkers keep the server busy on purpose)


class Clock:
    """Marks of the outage, in time.monotonic(): set by the main thread, read by the checks."""

    def __init__(self):
        self.kill = None
        self.restart_began = None
        self.restart_done = None


def next_action(state, step):
    """The sample app's walk: what to post given the state's top screen (see scripts/crash.py)."""
    feature = (state.get("top") or {}).get("feature", "")
    if feature == "onboarding.first":
        return {"type": "onboarding.showSecond"}
    if feature == "onboarding.second":
        return {"type": "onboarding.completed"} if step % 3 == 2 else {"type": "onboarding.returnToFirst"}
    if feature == "onboarding.faceScan":
        return {"type": "onboarding.faceScanVerified"}
    if feature in ("home.first", "home.second"):
        if step % 5 == 4:
            return {"type": "home.presentModal", "params": {"content": f"m{step}"}}
        return {"type": "home.selectTab", "params": {"index": 1 if feature == "home.first" else 0}}
    if feature == "modal":
        return {"type": "modal.dismiss"}
    return {"type": "back"}


class Walker(threading.Thread):
    """Walks its sessions one action at a time, round robin; records every request it sends
    (start, end, what came back) and every acknowledged action per session."""

    def __init__(self, number, port, sessions, stop):
        super().__init__(daemon=True)
        self.number, self.port, self.sessions, self.stop = number, port, sessions, stop
        self.requests = []      # (started, ended, status or None, content type, retry-after, error)
        self.acknowledged = {}  # session id -> [(version, type, key)]
        self.refused = []       # (session id, key, status, body, requests before): a retried action that was refused
        self.pending = {}       # session id -> (body, key) not yet answered definitively
        self.stale_reads = []   # (session id, key, version acknowledged, version read, requests before)
        self.history = {}       # session id -> [(seconds since start, key, type, status, version, top feature)]
        self.connection = None

    def post(self, sid, token, body, key):
        if self.connection is None:
            self.connection = http.client.HTTPConnection(HOST, self.port, timeout=REQUEST_TIMEOUT)
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}", "Idempotency-Key": key}
        started = time.monotonic()
        try:
            self.connection.request("POST", f"/v1/sessions/{sid}/actions", json.dumps(body), headers)
            response = self.connection.getresponse()
            data = response.read()
            ended = time.monotonic()
            self.requests.append((started, ended, response.status, response.getheader("Content-Type"),
                                  response.getheader("Retry-After"), None))
            if response.getheader("Connection", "").lower() == "close":
                self.connection.close()
                self.connection = None
            return response.status, data
        except (OSError, http.client.HTTPException) as error:
            self.requests.append((started, time.monotonic(), None, None, None, f"{type(error).__name__}: {error}"))
            self.connection.close()
            self.connection = None
            return None, b""

    def run(self):
        states = {sid: state for sid, _, state in self.sessions}
        steps = {sid: 0 for sid, _, _ in self.sessions}
        counter = 0
        while not self.stop.is_set():
            for sid, token, _ in self.sessions:
                if self.stop.is_set():
                    break
                if sid not in self.pending:
                    counter += 1
                    steps[sid] += 1
                    self.pending[sid] = (next_action(states[sid], steps[sid]), f"dbr-{self.number}-{counter}")
                body, key = self.pending[sid]
                status, data = self.post(sid, token, body, key)
                try:
                    answer = json.loads(data) if status == 200 else {}
                except ValueError:
                    answer = {}
                self.history.setdefault(sid, []).append(
                    (round(self.requests[-1][1] - STARTED, 3), key, body["type"], status, answer.get("version"),
                     (answer.get("top") or {}).get("feature"), round(self.requests[-1][1] - self.requests[-1][0], 3)))
                if status == 200:
                    state = json.loads(data)
                    states[sid] = state
                    self.acknowledged.setdefault(sid, []).append((state["version"], body["type"], key))
                    del self.pending[sid]
                    if len(self.history[sid]) > 1 and self.history[sid][-2][1] == key:
                        # acknowledged on a retry: a read must now show at least that version
                        read = self.get_state(sid, token)
                        if read is None or read.get("version", -1) < state["version"]:
                            self.stale_reads.append((sid, key, state["version"], read and read.get("version"),
                                                     list(self.history[sid][-4:])))
                elif status is None or status == 503 or status >= 500:
                    time.sleep(RETRY_PAUSE)  # not definitive: the same action, the same key, next turn
                else:
                    # a retry must be replayed or applied, never refused: note it, then read where
                    # the session really is and go on from there
                    self.refused.append((sid, key, status, data[:300], list(self.history[sid][-8:])))
                    del self.pending[sid]
                    state = self.get_state(sid, token)
                    if state is not None:
                        states[sid] = state

    def get_state(self, sid, token):
        try:
            connection = http.client.HTTPConnection(HOST, self.port, timeout=REQUEST_TIMEOUT)
            connection.request("GET", f"/v1/sessions/{sid}", headers={"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            data = response.read()
            connection.close()
            return json.loads(data) if response.status == 200 else None
        except (OSError, http.client.HTTPException, ValueError):
            return None


class Prober(threading.Thread):
    """GET /healthz every 100 ms on a fresh connection; records (started, ended, status, type, retry-after)."""

    def __init__(self, port, stop):
        super().__init__(daemon=True)
        self.port, self.stop = port, stop
        self.answers = []

    def run(self):
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                connection = http.client.HTTPConnection(HOST, self.port, timeout=REQUEST_TIMEOUT)
                connection.request("GET", "/healthz")
                response = connection.getresponse()
                response.read()
                connection.close()
                self.answers.append((started, time.monotonic(), response.status, response.getheader("Content-Type"),
                                     response.getheader("Retry-After")))
            except (OSError, http.client.HTTPException) as error:
                self.answers.append((started, time.monotonic(), None, None, f"{type(error).__name__}: {error}"))
            self.stop.wait(0.1)


def request_json(port, method, path, body=None, token=None):
    connection = http.client.HTTPConnection(HOST, port, timeout=REQUEST_TIMEOUT)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection.request(method, path, None if body is None else json.dumps(body), headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def retry_after_ok(value):
    return value is not None and value.strip().isdigit()


def read_log(port, sid, token):
    """Every entry of the session's action log, following `next` page by page."""
    return read_action_log(lambda path: request_json(port, "GET", path, token=token), sid)


def main():
    binary = binary_argument("dbrestart.py")
    work = tempfile.mkdtemp(prefix="flowstack-dbrestart-")
    tally = Tally()
    began = time.monotonic()
    pg = PostgresServer()
    server = None
    walkers, prober, stop = [], None, threading.Event()
    try:
        pg.start()
        server = FlowStackProcess(binary, work, db=pg.url, keep_stdout=True)
        server.start()
        port = server.port
        made = []
        for index in range(SESSIONS):
            status, data = request_json(port, "POST", "/v1/sessions", {"userId": f"dbr-{index}"})
            if status != 201:
                raise RuntimeError(f"POST /v1/sessions answered {status}: {data[:200]!r}")
            created = json.loads(data)
            made.append((created["session"]["id"], created["session"]["token"], created["state"]))
        walkers = [Walker(n, port, made[n::WALKERS], stop) for n in range(WALKERS)]
        prober = Prober(port, stop)
        for thread in walkers + [prober]:
            thread.start()

        def acknowledged_count():
            return sum(len(entries) for walker in walkers for entries in list(walker.acknowledged.values()))

        clocks = []
        rounds = [(1, "the postmaster killed", lambda: pg.kill9(group=False), pg.restart),
                  (2, "the postmaster and its backends killed", lambda: pg.kill9(group=True), pg.restart),
                  (3, "SIGSTOP of the server and its backends", pg.freeze, pg.thaw)]
        for round_number, what, take_down, bring_back in rounds:
            clock = Clock()
            clocks.append(clock)
            before = acknowledged_count()
            time.sleep(LOAD_SECONDS)
            tally.check(f"round {round_number}: actions were acknowledged before the outage",
                        None if acknowledged_count() > before else "none")
            clock.kill = time.monotonic()
            take_down()
            time.sleep(DOWN_SECONDS)
            tally.check(f"round {round_number}: FlowStack runs while the database is down",
                        None if server.alive() else "it exited", server.stderr_text()[-1500:])
            clock.restart_began = time.monotonic()
            bring_back()
            clock.restart_done = time.monotonic()
            # recovery: /healthz 200 and new acknowledgements, by itself
            deadline = clock.restart_done + RECOVER_WITHIN
            healthy_at = acked_at = None
            acked_before = acknowledged_count()
            while time.monotonic() < deadline and (healthy_at is None or acked_at is None):
                if healthy_at is None and any(a[0] >= clock.restart_done and a[2] == 200 for a in list(prober.answers)):
                    healthy_at = time.monotonic()
                if acked_at is None and acknowledged_count() > acked_before:
                    acked_at = time.monotonic()
                time.sleep(0.05)
            tally.check(f"round {round_number}: /healthz is 200 again within {RECOVER_WITHIN:.0f}s of the restart",
                        None if healthy_at else "it was not")
            tally.check(f"round {round_number}: actions are acknowledged again within {RECOVER_WITHIN:.0f}s of the restart",
                        None if acked_at else "none was")
            if healthy_at and acked_at:
                print(f"dbrestart: round {round_number} ({what}): back after "
                      f"{max(healthy_at, acked_at) - clock.restart_done:.2f}s", flush=True)
            time.sleep(LOAD_SECONDS)

        stop.set()
        for thread in walkers + [prober]:
            thread.join(timeout=REQUEST_TIMEOUT + 5)
        tally.check("the walkers and the prober finished", None if not any(t.is_alive() for t in walkers + [prober]) else "one hangs")

        # --- what was answered while the database was down
        for number, clock in enumerate(clocks, start=1):
            def down(started, ended):
                return started >= clock.kill + GRACE and ended <= clock.restart_began
            during = [r for w in walkers for r in w.requests if r[0] >= clock.kill and r[0] < clock.restart_began]
            strict = [r for r in during if down(r[0], r[1])]
            slow = [r for r in during if r[1] - r[0] > SLOWEST]
            tally.check(f"round {number}: no action took over {SLOWEST}s while the database was down ({len(during)} sent)",
                        None if not slow else f"{len(slow)} did", f"slowest {max(r[1] - r[0] for r in slow):.2f}s" if slow else "")
            wrong = [r for r in strict if not (r[2] == 503 and (r[3] or "").startswith("application/problem+json") and retry_after_ok(r[4]))]
            tally.check(f"round {number}: actions were answered 503 problem+json with Retry-After while it was down ({len(strict)} checked)",
                        None if strict and not wrong else ("none was sent" if not strict else f"{len(wrong)} were not"),
                        "; ".join(f"status={r[2]} type={r[3]} retry-after={r[4]} error={r[5]}" for r in wrong[:5]))
            probes = [a for a in prober.answers if a[0] >= clock.kill + GRACE and a[1] <= clock.restart_began]
            bad = [a for a in probes if not (a[2] == 503 and (a[3] or "").startswith("application/problem+json") and retry_after_ok(a[4]))]
            tally.check(f"round {number}: /healthz answered 503 problem+json with Retry-After while it was down ({len(probes)} probes)",
                        None if probes and not bad else ("no probe" if not probes else f"{len(bad)} were not"),
                        "; ".join(f"status={a[2]} type={a[3]} retry-after={a[4]}" for a in bad[:5]))
            slow = [a for a in prober.answers if a[0] >= clock.kill and a[0] < clock.restart_began and a[1] - a[0] > SLOWEST]
            tally.check(f"round {number}: no /healthz took over {SLOWEST}s while the database was down",
                        None if not slow else f"{len(slow)} did")
            if during:
                print(f"dbrestart: round {number}: while down, {len(during)} actions sent, "
                      f"{sum(1 for r in during if r[2] == 503)} answered 503, slowest {max(r[1] - r[0] for r in during):.3f}s; "
                      f"{len(probes)} /healthz probes", flush=True)
            lost = [r for w in walkers for r in w.requests if r[0] >= clock.kill and r[0] < clock.restart_began and r[2] is None]
            tally.check(f"round {number}: no connection was dropped without an answer while the database was down",
                        None if not lost else f"{len(lost)} were", "; ".join(r[5] for r in lost[:3]))

        refused = [(w, r) for w in walkers for r in w.refused]
        tally.check("no action retried with its Idempotency-Key was refused",
                    None if not refused else f"{len(refused)} were",
                    "\n     ".join(f"{sid} key {key}: {status} {body!r}\n     its last requests (t, key, type, status, version, top, seconds): "
                                   + "\n       ".join(map(str, before))
                                   for w, (sid, key, status, body, before) in refused[:2]))
        stale = [r for w in walkers for r in w.stale_reads]
        tally.check("a read after an action acknowledged on a retry shows it",
                    None if not stale else f"{len(stale)} did not",
                    "\n     ".join(f"{sid} key {key}: acknowledged version {acked}, read {read}; before: {before}"
                                   for sid, key, acked, read, before in stale[:3]))
        for number, clock in enumerate(clocks, start=1):
            print(f"dbrestart: round {number}: down at t={clock.kill - STARTED:.3f}, back at t={clock.restart_began - STARTED:.3f}", flush=True)

        # --- nothing acknowledged is lost; nothing was applied twice
        tally.check("FlowStack never died", None if server.alive() else "it exited", server.stderr_text()[-1500:])
        missing, gaps, extra, stale = [], [], [], []
        total = 0
        for walker in walkers:
            for sid, token, _ in walker.sessions:
                acked = walker.acknowledged.get(sid, [])
                total += len(acked)
                log = read_log(port, sid, token)
                versions = [entry["version"] for entry in log]
                if versions != list(range(1, len(log) + 1)):
                    gaps.append((sid, versions[:5], len(versions)))
                by_version = {entry["version"]: entry["type"] for entry in log}
                for version, kind, key in acked:
                    if by_version.get(version) != kind:
                        missing.append((sid, version, kind, by_version.get(version)))
                acked_versions = {version for version, _, _ in acked}
                unacked = [v for v in versions if v not in acked_versions]
                # only the last entry may lack an acknowledgement, and only if its answer never came
                if unacked and (unacked != [versions[-1]] or sid not in walker.pending):
                    extra.append((sid, unacked[:5]))
                status, data = request_json(port, "GET", f"/v1/sessions/{sid}", token=token)
                version = json.loads(data).get("version") if status == 200 else None
                if version != (versions[-1] if versions else 0):
                    stale.append((sid, status, version, versions[-1] if versions else 0))
        print(f"dbrestart: {total} actions acknowledged on {SESSIONS} sessions by {WALKERS} walkers", flush=True)
        tally.check("every acknowledged action is in its session's log, with the same version and type",
                    None if not missing else f"{len(missing)} are not", str(missing[:5]))
        tally.check("every action log is contiguous 1..n", None if not gaps else f"{len(gaps)} are not", str(gaps[:3]))
        tally.check("the logs hold no action that was not acknowledged (but a last one left unanswered)",
                    None if not extra else f"{len(extra)} sessions do", str(extra[:3]))
        tally.check("every session's version is its log's last", None if not stale else f"{len(stale)} are not", str(stale[:3]))
        fatal = [line for line in (server.stdout_text() + server.stderr_text()).splitlines() if "fatal error" in line.lower()]
        tally.check("the server logged no fatal error", None if not fatal else f"{len(fatal)} lines", "\n".join(fatal[:3]))
        status = server.stop()
        tally.check("SIGTERM stops the server with status 0", None if status == 0 else f"status {status}", server.stderr_text()[-1000:])
        tally.check("pg_amcheck finds the database sound", pg.amcheck())
    except Exception as error:  # a failure of the harness itself still counts, and still cleans up
        tally.check("the run completed", f"{type(error).__name__}: {error}",
                    server.stderr_text()[-1500:] if server else "")
    finally:
        stop.set()
        if server is not None:
            server.stop()
        try:
            pg.stop()
        except Exception as error:
            print(f"dbrestart: stopping PostgreSQL: {error}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
    return tally.report("dbrestart", began)


if __name__ == "__main__":
    sys.exit(main())

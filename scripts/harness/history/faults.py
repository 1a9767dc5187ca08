"""The history check's faults: kill -9 of a node, a node paused (SIGSTOP) past its session leases,
HAProxy bypassed (two nodes on one session at once), a node cut off the database (its TCP proxies
stop forwarding), and the failover of PostgreSQL. Each is recorded (kind, start, end and what its check needs) for
harness.history.checker.check_faults.
"""
import json
import secrets
import signal
import threading
import time

from harness.web import Http

from .settings import BREAK, BYPASS_SESSIONS, ISOLATE_SECONDS, LOAD_SECONDS, NODES, PAUSE_SECONDS, REJOIN_WITHIN, log


class Prober(threading.Thread):
    """Straight to one node, every 150 ms: GET /healthz and an action on a session of its own.
    Records (kind, invoked, completed, status)."""

    def __init__(self, node, session, stop):
        super().__init__(daemon=True, name=f"prober-{node.name}")
        self.node, self.session, self.stop = node, session, stop
        self.answers = []
        self.http = Http()
        self.counter = 0

    def run(self):
        while not self.stop.is_set():
            for kind in ("healthz", "action"):
                invoked = time.monotonic()
                if kind == "healthz":
                    status, _, _ = self.http.request(self.node.port, "GET", "/healthz", timeout=5)
                else:
                    self.counter += 1
                    status, _, _ = self.http.request(
                        self.node.port, "POST", f"/v1/sessions/{self.session.sid}/actions",
                        json.dumps({"type": "home.selectTab", "params": {"index": self.counter % 2}}),
                        {"Authorization": f"Bearer {self.session.token}", "Content-Type": "application/json",
                         "Idempotency-Key": f"probe-{self.node.index}-{self.counter}-{secrets.token_hex(3)}"}, timeout=5)
                self.answers.append((kind, invoked, time.monotonic(), status))
            self.stop.wait(0.15)
        self.http.close()


class Faults(threading.Thread):
    """Injects the faults on a schedule spread over the load time; records each one."""

    def __init__(self, cluster, shared, sessions, probe_sessions, rng):
        super().__init__(daemon=True, name="faults")
        self.cluster, self.shared, self.sessions, self.probe_sessions, self.rng = cluster, shared, sessions, probe_sessions, rng
        self.done = threading.Event()
        self.faults = []        # dicts: kind, start, end, and what each kind needs for its checks
        self.errors = []

    def schedule(self):
        """(fraction of the load time, kind, argument). Every kind twice (the failover once:
        after it there is no standby left), interleaved so that faults overlap with recoveries."""
        plan = [(0.06, "bypass", 0), (0.12, "kill-node", 0), (0.18, "pause-node", 1), (0.25, "isolate-node", 1),
                (0.36, "bypass", 1), (0.48, "failover", None), (0.55, "pause-node", 2), (0.62, "kill-node", 2),
                (0.72, "isolate-node", 0), (0.80, "bypass", 2)]
        if "no-bypass" in BREAK:
            plan = [step for step in plan if step[1] != "bypass"]
        return plan

    def run(self):
        try:
            for fraction, kind, argument in self.schedule():
                at = self.cluster.load_started + fraction * LOAD_SECONDS
                while time.monotonic() < at and not self.shared.stop.is_set():
                    time.sleep(0.05)
                if self.shared.stop.is_set():
                    break
                getattr(self, kind.replace("-", "_"))(argument)
        except Exception as error:  # noqa: BLE001
            self.errors.append(f"{type(error).__name__}: {error}")
            log(f"fault thread: {type(error).__name__}: {error}")
        finally:
            self.shared.bypass.clear()
            self.done.set()

    def record(self, kind, start, **details):
        fault = {"kind": kind, "start": start, "end": time.monotonic(), **details}
        self.faults.append(fault)
        return fault

    def bypass(self, number):
        node_a, node_b = self.rng.sample(range(NODES), 2)
        chosen = self.rng.sample(self.sessions, BYPASS_SESSIONS)
        start = time.monotonic()
        for session in chosen:
            self.shared.bypass[session.sid] = (node_a, node_b)
        log(f"fault: bypass HAProxy for {len(chosen)} sessions, straight to node{node_a + 1} and node{node_b + 1}")
        self.shared.stop.wait(min(8.0, 0.1 * LOAD_SECONDS))
        for session in chosen:
            self.shared.bypass.pop(session.sid, None)
        self.record("bypass", start, nodes=(node_a, node_b), sessions=len(chosen))

    def kill_node(self, index):
        node = self.cluster.nodes[index]
        start = time.monotonic()
        log(f"fault: kill -9 {node.name}")
        node.kill9()
        self.shared.stop.wait(2.0)
        node.start()
        node.wait_healthy()
        log(f"fault: {node.name} restarted ({time.monotonic() - start:.1f}s after the kill)")
        self.record("kill-node", start, node=index, restarted=time.monotonic())

    def pause_node(self, index):
        """SIGSTOP for PAUSE_SECONDS, past the node's leases: meanwhile the other nodes take its
        sessions over; once it runs again it must not answer a read from memory nor commit under
        the leases it held (the history's read and log checks find it if it does)."""
        node = self.cluster.nodes[index]
        start = time.monotonic()
        log(f"fault: SIGSTOP {node.name} for {PAUSE_SECONDS:.1f}s (past its session leases)")
        node.process.send_signal(signal.SIGSTOP)
        try:
            time.sleep(PAUSE_SECONDS)  # the whole time, even when the load ends meanwhile
        finally:
            node.process.send_signal(signal.SIGCONT)
        log(f"fault: {node.name} runs again")
        self.record("pause-node", start, node=index, resumed=time.monotonic())

    def isolate_node(self, index):
        node = self.cluster.nodes[index]
        stop = threading.Event()
        prober = Prober(node, self.probe_sessions[index], stop)
        prober.start()
        time.sleep(0.3)
        start = time.monotonic()
        log(f"fault: cut {node.name} off the database for {ISOLATE_SECONDS:.0f}s")
        self.cluster.proxies.cut(index)
        time.sleep(ISOLATE_SECONDS)  # the whole time, even when the load ends meanwhile
        healed = time.monotonic()
        self.cluster.proxies.heal(index)
        # the prober goes on until the node serves again, or REJOIN_WITHIN
        deadline = healed + REJOIN_WITHIN
        while time.monotonic() < deadline:
            after = [a for a in list(prober.answers) if a[1] >= healed]
            if any(a[0] == "healthz" and a[3] == 200 for a in after) and any(a[0] == "action" and a[3] == 200 for a in after):
                break
            time.sleep(0.1)
        stop.set()
        prober.join(timeout=15)
        rejoined = next((a[2] for a in prober.answers if a[0] == "action" and a[3] == 200 and a[1] >= healed), None)
        log(f"fault: {node.name} reconnected; serving again "
            + (f"{rejoined - healed:.1f}s after the cut ended" if rejoined else "NOT within the limit"))
        self.record("isolate-node", start, node=index, healed=healed, answers=prober.answers, rejoined=rejoined)

    def failover(self, _):
        pg = self.cluster.pg
        start = time.monotonic()
        if "async-standby" in BREAK:
            # the broken variant: the standby is not synchronous, and lags (frozen) when the primary dies
            pg.sql("ALTER SYSTEM SET synchronous_standby_names = ''", database="postgres")
            pg.sql("SELECT pg_reload_conf()", database="postgres")
            time.sleep(0.3)
            pg.freeze(node="standby")
            log("fault (broken variant): the standby is asynchronous and frozen for 2 s before the primary dies")
            time.sleep(2.0)
        log("fault: kill -9 the PostgreSQL primary")
        pg.kill9(group=True)
        if "async-standby" in BREAK:
            pg.thaw(node="standby")
        self.shared.stop.wait(1.0)
        pg.promote_standby()
        promoted = time.monotonic()
        log(f"fault: standby promoted ({promoted - start:.1f}s after the kill)")
        self.record("failover", start, promoted=promoted)

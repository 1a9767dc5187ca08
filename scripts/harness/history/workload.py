"""The history check's workload: what the clients do, and how each request becomes an operation of
the history (harness.history.checker reads them).

  Session, Operation   a walked session, and one client operation (an action with its
                       Idempotency-Key and every attempt of it, or a read)
  perform()            one attempt of an operation, recorded: ok (200), failed (a definitive
                       refusal) or unknown (a 5xx or a lost connection)
  Walker, Racer        the client threads (the sample app's walk; racing actions in bypass windows)
  create_session(), read_back(), replay()   setting up, reading every log back, replaying it
  check_definitions()  guarantee 5 after the history, through the nodes
"""
import collections
import json
import random
import secrets
import threading
import time

from harness.web import Http, as_json, read_action_log

from .settings import BREAK, FROM_SHARE, LOG_PAGE, NODES, READ_SHARE, REQUEST_TIMEOUT, SETTLE_SECONDS, UNKNOWN_STATUSES


class Session:
    def __init__(self, index, sid, token, user, created_by, state):
        self.index, self.sid, self.token, self.user, self.created_by = index, sid, token, user, created_by
        self.top = (state.get("top") or {})  # what its walker last saw on top
        self.pending = None      # an operation whose outcome is unknown, to retry
        self.refresh = False     # read before the next action (the last one was refused)
        self.ops = 0             # operations sent in bypass windows, for their pattern


class Operation:
    """One client operation: an action (one Idempotency-Key normally; attempts retried with it)
    or a read. Attempts are (invoked, completed, status, target, served_by, key)."""
    __slots__ = ("sid", "kind", "client", "type", "params", "source", "body", "key", "invoked", "completed",
                 "outcome", "status", "version", "root", "screens", "served_by", "attempts", "replayed",
                 "refused_after_unknown")

    def __init__(self, sid, kind, client, type_=None, params=None, source=None, key=None):
        self.sid, self.kind, self.client = sid, kind, client
        self.type, self.params, self.source, self.key = type_, params, source, key
        body = {"type": type_} if kind == "action" else None
        if body is not None:
            if params:
                body["params"] = params
            if source:
                body["from"] = source
        self.body = json.dumps(body) if body is not None else None
        self.invoked = self.completed = None
        self.outcome = None      # ok | failed | unknown
        self.status = self.version = self.root = self.screens = self.served_by = None
        self.attempts = []
        self.replayed = False
        self.refused_after_unknown = False


class Targets:
    """Where requests go: HAProxy, or a node straight."""

    def __init__(self, haproxy, nodes):
        self.haproxy, self.nodes = haproxy, nodes

    def port(self, target):
        return self.haproxy.port if target == "lb" else self.nodes[target].port

    @staticmethod
    def served_by(target, headers):
        if target != "lb":
            return target
        name = headers.get("x-flowstack-node", "")
        return int(name[4:]) - 1 if name.startswith("node") and name[4:].isdigit() else None


def perform(http_, targets, session, operation, target):
    """Sends one attempt of `operation` to `target`; records it. Returns the decoded answer or None."""
    headers = {"Authorization": f"Bearer {session.token}"}
    if operation.kind == "action":
        headers["Content-Type"] = "application/json"
        key = operation.key
        if "retry-without-key" in BREAK and operation.attempts:
            key = f"{operation.key}-r{len(operation.attempts)}"  # the broken client: a new key per retry
        headers["Idempotency-Key"] = key
        method, path, body = "POST", f"/v1/sessions/{session.sid}/actions", operation.body
    else:
        key = None
        method, path, body = "GET", f"/v1/sessions/{session.sid}", None
    invoked = time.monotonic()
    if operation.invoked is None:
        operation.invoked = invoked
    status, answer_headers, data = http_.request(targets.port(target), method, path, body, headers)
    completed = time.monotonic()
    served_by = Targets.served_by(target, answer_headers)
    operation.attempts.append((invoked, completed, status, target, served_by, key))
    operation.status = status
    answer = as_json(data) if status == 200 else None
    if status == 200 and isinstance(answer, dict) and isinstance(answer.get("version"), int):
        operation.outcome = "ok"
        operation.completed = completed
        operation.version = answer["version"]
        operation.root = answer.get("root")
        operation.screens = answer.get("screens")
        operation.served_by = served_by
        operation.replayed = answer_headers.get("idempotent-replayed") == "true"
        return answer
    if operation.kind == "read":
        operation.outcome = "failed"
        operation.completed = completed
    elif status is None or status in UNKNOWN_STATUSES or status == 200:
        operation.outcome = "unknown"
    elif operation.outcome == "unknown":
        # A refusal of a retry says this attempt was not applied; an earlier attempt whose
        # outcome was unknown may still have been (or may still be, a commit held in the
        # network): the operation stays unknown, and is not retried again.
        operation.completed = completed
        operation.refused_after_unknown = True
    else:
        operation.outcome = "failed"   # refused: definitive, not applied
        operation.completed = completed
    return None


def next_action(top, rng):
    """What a user would tap next on the sample app, given the screen on top."""
    feature = top.get("feature", "")
    if feature == "onboarding.first":
        return "onboarding.showSecond", None
    if feature == "onboarding.second":
        roll = rng.random()
        return ("onboarding.completed", None) if roll < 0.45 else (("onboarding.returnToFirst", None) if roll < 0.85 else ("back", None))
    if feature == "onboarding.faceScan":
        return "onboarding.faceScanVerified", None
    if feature in ("home.first", "home.second"):
        roll = rng.random()
        if roll < 0.55:
            return "home.selectTab", {"index": rng.randrange(2)}
        if roll < 0.9:
            return "home.presentModal", {"content": f"m{rng.randrange(1000)}"}
        return "back", None
    if feature == "modal":
        return ("modal.dismiss", None) if rng.random() < 0.85 else ("back", None)
    return "back", None


class Client(threading.Thread):
    """A client thread: its connections, its random numbers, the operations it recorded."""

    def __init__(self, name, targets, shared, seed):
        super().__init__(daemon=True, name=name)
        self.targets, self.shared = targets, shared
        self.rng = random.Random(seed)
        self.http = Http(REQUEST_TIMEOUT)
        self.operations = []
        self.counter = 0
        self.errors = []


class Walker(Client):
    """Walks its sessions, one operation at a time, round robin."""

    def __init__(self, number, sessions, targets, shared, seed):
        super().__init__(f"walker-{number}", targets, shared, seed)
        self.number, self.sessions = number, sessions

    def run(self):
        try:
            while not self.shared.stop.is_set():
                for session in self.sessions:
                    if self.shared.stop.is_set():
                        break
                    self.step(session)
            # settling: only the unknown actions, retried with their key, until each is decided
            deadline = time.monotonic() + SETTLE_SECONDS
            while time.monotonic() < deadline and any(s.pending for s in self.sessions):
                for session in self.sessions:
                    if session.pending:
                        self.retry(session, "lb")
                if any(s.pending for s in self.sessions):
                    time.sleep(0.2)
        except Exception as error:  # noqa: BLE001 (reported as a failed check)
            self.errors.append(f"{type(error).__name__}: {error}")
        finally:
            self.http.close()

    def target(self, session):
        """HAProxy; or, while the session is in a bypass window, node A or B straight, in the
        pattern action on A, read on B, action on B, read on A (each read follows an action
        applied by the other node: a node that serves its cached copy answers a stale read)."""
        pair = self.shared.bypass.get(session.sid)
        if pair is None:
            return "lb"
        target = pair[0] if (session.ops % 4) in (0, 3) else pair[1]
        session.ops += 1
        return target

    def retry(self, session, target):
        operation = session.pending
        answer = perform(self.http, self.targets, session, operation, target)
        if operation.outcome == "unknown" and not operation.refused_after_unknown:
            return
        session.pending = None
        if answer is not None:
            session.top = answer.get("top") or {}
        else:
            session.refresh = True

    def step(self, session):
        if session.pending is not None:
            # the same key and body; half the time on a node picked at random, not HAProxy's
            target = "lb" if self.rng.random() < 0.5 else self.rng.randrange(NODES)
            if session.sid in self.shared.bypass:
                target = self.target(session)
            self.retry(session, target)
            if session.pending is not None:
                time.sleep(0.05)
            return
        if session.sid in self.shared.bypass:
            read = session.ops % 2 == 1   # the pattern: action, read, action, read (see target())
        else:
            read = session.refresh or self.rng.random() < READ_SHARE
        if read:
            operation = Operation(session.sid, "read", self.name)
            self.operations.append(operation)
            answer = perform(self.http, self.targets, session, operation, self.target(session))
            if answer is not None:
                session.top = answer.get("top") or {}
                session.refresh = False
            return
        type_, params = next_action(session.top, self.rng)
        source = session.top.get("id") if self.rng.random() < FROM_SHARE else None
        self.counter += 1
        key = f"h{self.number}-{self.counter}-{secrets.token_hex(4)}"
        operation = Operation(session.sid, "action", self.name, type_, params, source, key)
        self.operations.append(operation)
        answer = perform(self.http, self.targets, session, operation, self.target(session))
        if operation.outcome == "unknown":
            session.pending = operation
        elif answer is not None:
            session.top = answer.get("top") or {}
        else:
            session.refresh = True   # refused (409 stale `from`, 422 not handled there): read, then go on


class Racer(Client):
    """While a bypass window is open, posts actions on its sessions through the node the walker
    is not using right then, so two nodes apply actions on one session at the same moment."""

    def __init__(self, sessions_by_id, targets, shared, seed):
        super().__init__("racer", targets, shared, seed)
        self.sessions_by_id = sessions_by_id

    def run(self):
        try:
            while not self.shared.stop.is_set():
                pairs = list(self.shared.bypass.items())
                if not pairs:
                    self.shared.stop.wait(0.1)
                    continue
                sid, (node_a, node_b) = self.rng.choice(pairs)
                session = self.sessions_by_id[sid]
                type_, params = self.rng.choice([("home.selectTab", {"index": 0}), ("home.selectTab", {"index": 1}),
                                                 ("home.presentModal", {"content": "race"}), ("modal.dismiss", None),
                                                 ("back", None), ("onboarding.showSecond", None)])
                self.counter += 1
                operation = Operation(sid, "action", self.name, type_, params, None, f"race-{self.counter}-{secrets.token_hex(4)}")
                self.operations.append(operation)
                for attempt in range(6):  # an unknown is retried with its key, a few times
                    perform(self.http, self.targets, session, operation, self.rng.choice((node_a, node_b)))
                    if operation.outcome != "unknown" or operation.refused_after_unknown or self.shared.stop.is_set():
                        break
                    time.sleep(0.1)
                time.sleep(0.02)
        except Exception as error:  # noqa: BLE001
            self.errors.append(f"{type(error).__name__}: {error}")
        finally:
            self.http.close()


class Shared:
    def __init__(self):
        self.stop = threading.Event()
        self.bypass = {}   # sid -> (node A, node B) while a bypass window is open


def create_session(http_, port, user, attributes=None):
    body = {"userId": user}
    if attributes:
        body["attributes"] = attributes
    for _ in range(20):
        status, headers, data = http_.request(port, "POST", "/v1/sessions", json.dumps(body), {"Content-Type": "application/json"})
        if status == 201:
            created = json.loads(data)
            return created, headers
        time.sleep(0.2)
    raise RuntimeError(f"POST /v1/sessions for {user} answered {status}: {data[:300]!r}")


def read_back(targets, session, node, http_):
    """The session's whole log (pages of LOG_PAGE) and its state, from `node`, straight.
    Returns (log entries, read Operation)."""
    headers = {"Authorization": f"Bearer {session.token}"}
    port = targets.port(node)

    def fetch(path):  # a page, tried up to 20 times (a node may be busy catching up)
        status = data = None
        for _attempt in range(20):
            status, _, data = http_.request(port, "GET", path, None, headers)
            if status == 200:
                break
            time.sleep(0.25)
        return status, data
    entries = read_action_log(fetch, session.sid, LOG_PAGE, f" on node{node + 1}")
    read = Operation(session.sid, "read", "final")
    for _attempt in range(20):
        perform(http_, targets, session, read, node)
        if read.outcome == "ok":
            break
        time.sleep(0.25)
    return entries, read


def replay(port, session, entries, http_):
    """Posts the log's actions in order on a fresh session of a fresh user of the SQLite node.
    Returns ({version: (root, screens)}, problem or None)."""
    created, _ = create_session(http_, port, f"replay-{session.index}")
    sid, token = created["session"]["id"], created["session"]["token"]
    states = {0: (created["state"].get("root"), created["state"].get("screens"))}
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    for entry in entries:
        body = {"type": entry["type"]}
        if entry.get("params"):
            body["params"] = entry["params"]
        if entry.get("from"):
            body["from"] = entry["from"]
        if entry.get("interactive"):
            body["interactive"] = True
        status, _, data = http_.request(port, "POST", f"/v1/sessions/{sid}/actions", json.dumps(body), headers)
        answer = as_json(data) if status == 200 else None
        if answer is None or answer.get("version") != entry["version"]:
            return states, (f"version {entry['version']} ({entry['type']}) does not replay: the engine answered "
                            f"{status} {str(data)[:200]}")
        states[entry["version"]] = (answer.get("root"), answer.get("screens"))
    return states, None


def check_definitions(cluster, http_):
    """Guarantee 5, after the history: a definition changed through one node is used by every
    node 1 s after the change is acknowledged, and the experiment report counts the sessions of
    every node. Returns [(check name, failure or None, details)]."""
    results = []
    admin = {"Authorization": f"Bearer {cluster.admin_token}", "Content-Type": "application/json"}
    first, second, third = cluster.nodes[0], cluster.nodes[1], cluster.nodes[2 % NODES]
    flow = {"name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
            "on": {"onboarding.completed": [{"from": "onboarding.first",
                                             "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": True}}]}]}}
    status, _, data = http_.request(first.port, "PUT", "/v1/flows/onboarding", json.dumps(flow), admin)
    version = (as_json(data) or {}).get("version") if status in (200, 201) else None
    name = f"definitions: a flow version PUT through {first.name} is pinned by an experiment PUT through {third.name} 1 s later"
    if not version:
        return [(name, f"the flow PUT answered {status}", str(data)[:300])]
    time.sleep(1.0)
    experiment = {"variants": [{"key": "control", "weight": 0.5},
                               {"key": "short", "weight": 0.5, "flows": {"onboarding": version}}]}
    status, _, data = http_.request(third.port, "PUT", "/v1/experiments/history-check", json.dumps(experiment), admin)
    results.append((name, None if status in (200, 201) else f"the experiment PUT answered {status}", str(data)[:300]))
    if status not in (200, 201):
        return results
    time.sleep(1.0)
    missing, wrong, assigned = [], [], collections.Counter()
    for i in range(4 * NODES):
        node = cluster.nodes[i % NODES]
        created, _ = create_session(http_, node.port, f"definitions-{i}")
        variant = (created["state"].get("experiments") or {}).get("history-check")
        if variant is None:
            missing.append(node.name)
            continue
        assigned[variant] += 1
        if variant == "short":  # runs the one-screen onboarding, on any node
            sid, token = created["session"]["id"], created["session"]["token"]
            other = cluster.nodes[(i + 1) % NODES]
            status, _, data = http_.request(other.port, "POST", f"/v1/sessions/{sid}/actions",
                                            json.dumps({"type": "onboarding.completed"}),
                                            {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
            top = ((as_json(data) or {}).get("top") or {}).get("feature") if status == 200 else status
            if top != "home.first":
                wrong.append(f"{sid} (made on {node.name}, acted on {other.name}): {top}")
    results.append((f"definitions: sessions made on every node 1 s after the experiment PUT are in it ({4 * NODES} made)",
                    None if not missing else f"{len(missing)} are not", f"made on {collections.Counter(missing)}"))
    results.append(("definitions: a session pinned to the new flow version runs it on another node",
                    None if not wrong else f"{len(wrong)} do not", "; ".join(wrong[:3])))
    status, _, data = http_.request(second.port, "GET", "/v1/experiments/history-check/report", None, admin)
    report = as_json(data) if status == 200 else None
    counted = sum(v.get("sessions", 0) for v in (report or {}).get("variants", []))
    results.append((f"definitions: the experiment report through {second.name} counts the sessions of every node",
                    None if counted == sum(assigned.values()) else f"it counts {counted} of {sum(assigned.values())}",
                    str(data)[:300]))
    return results

#!/usr/bin/env python3
"""The history checker of issue 14: three FlowStack nodes behind HAProxy on one PostgreSQL
(primary + synchronous standby), concurrent clients, faults, and a check of everything that was
answered against what the database ended up holding. In the spirit of Jepsen: record a history
of operations with their outcome and their real-time interval, then check properties of it.

Usage: scripts/history.py PATH/TO/flowstack

What it starts (all on 127.0.0.1, free ports, removed at the end):
  - PostgreSQL, a primary and a synchronous standby (scripts/pgserver.py);
  - per node, two small TCP proxies (one to the primary, one to the standby), so that the checker
    can cut one node off the database; they run in a child process of this script;
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
  HISTORY_KEEP=1           keep the work directory (node logs, haproxy.cfg, history.json)
Standard library only; installs haproxy (and, through pgserver.py, postgresql) with apt-get
when missing.
"""
import asyncio
import collections
import ctypes
import http.client
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REPO = os.path.dirname(HERE)
HAPROXY_TEMPLATE = os.path.join(REPO, "deploy", "haproxy.cfg")

HOST = "127.0.0.1"
NODES = 3
LOAD_SECONDS = float(os.environ.get("HISTORY_SECONDS", "60"))
SESSIONS = int(os.environ.get("HISTORY_SESSIONS", "120"))
WALKERS = int(os.environ.get("HISTORY_WALKERS", "12"))
BREAK = {word.strip() for word in os.environ.get("HISTORY_BREAK", "").split(",") if word.strip()}
KNOWN_BREAKS = {"async-standby", "retry-without-key", "no-bypass"}
REQUEST_TIMEOUT = 10.0       # a client gives up on an answer after this long (then: unknown)
READ_SHARE = 0.3             # of the walkers' operations, the share that are reads
FROM_SHARE = 0.25            # of the actions, the share that name the screen they come from
BYPASS_SESSIONS = 12         # sessions sent straight to two nodes in each bypass window
ISOLATE_SECONDS = 4.0        # how long a node is cut off from the database
ISOLATED_SLOWEST = 2.5       # seconds an answer of a cut-off node may take (the issue: 503 within 2 s)
ISOLATED_GRACE = 2.5         # after the cut, answers may still be 200 for this long (commits finishing)
REJOIN_WITHIN = 10.0         # seconds after the cut ends for the node to serve again
RECOVER_WITHIN = 20.0        # seconds after a fault for the cluster to acknowledge actions again
SETTLE_SECONDS = 10.0        # at the end, time to settle unknown actions (retried with their key)
LOG_PAGE = 25                # ?limit= when reading the logs back (small: paging is exercised)
USER_CHECKS = 60             # onboarded users checked for shared user state
HARD_LIMIT = 175.0           # the watchdog's limit for the whole run, in seconds
STARTED = time.monotonic()
UNKNOWN_STATUSES = {500, 502, 503, 504}  # for an action: may or may not have been applied

PR_SET_PDEATHSIG = 1


def log(message):
    print(f"history: [{time.monotonic() - STARTED:6.1f}s] {message}", flush=True)


def die_with_parent():
    """In a child before exec: SIGKILL when this script's process goes away."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class Spawner:
    """Starts every child process from one thread that lives as long as the run: the children
    die with their parent (PR_SET_PDEATHSIG), and Linux means the parent *thread*; a node
    restarted from the fault thread would otherwise be killed when that thread ends."""

    def __init__(self):
        import concurrent.futures
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="spawner")

    def popen(self, *args, **kwargs):
        return self.executor.submit(subprocess.Popen, *args, preexec_fn=die_with_parent, **kwargs).result(timeout=30)

    def close(self):
        self.executor.shutdown(wait=False)


SPAWNER = Spawner()


def free_ports(count):
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((HOST, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def apt_install(package, binary):
    """Installs a Debian package with apt-get (through sudo when not root) when `binary` is missing."""
    if shutil.which(binary):
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    log(f"installing {package} with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (sudo + ["apt-get", "update", "-qq"], sudo + ["apt-get", "install", "-y", "-qq", package]):
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True, timeout=600)
    if not shutil.which(binary) and not os.path.exists(f"/usr/sbin/{binary}"):
        raise RuntimeError(f"{package} was installed but there is no {binary}")


# =============================================================================================
# TCP proxies between the nodes and PostgreSQL (run in a child process: `history.py --proxies
# SPEC`, so that their forwarding does not compete with the walkers for this process's GIL).
#
# SPEC is JSON: [[group, listen_port, upstream_port], ...]; a group is a node. Commands on stdin,
# one a line, each answered `ok` on stdout: `cut GROUP` (stop forwarding: connections stay open,
# what they send is held; new connections are accepted and held), `heal GROUP` (forward again:
# what was held on open connections is delivered; connections accepted during the cut are
# closed, their client gave up long ago). An upstream that refuses (a dead primary) closes the
# client's connection at once, so libpq tries the next host.

def proxy_main(spec):
    async def main():
        groups = {}
        for group, _, _ in spec:
            groups.setdefault(group, asyncio.Event()).set()

        async def pump(reader, writer, gate, other):
            try:
                while True:
                    data = await reader.read(65536)
                    await gate.wait()
                    if not data:
                        break
                    writer.write(data)
                    await writer.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                for stream in (writer, other):
                    try:
                        stream.close()
                    except OSError:
                        pass

        class Listener:
            """One listening port. While its upstream refuses connections (a dead server), it
            stops listening, so that connecting to it is refused too, as to the dead server itself
            (libpq then tries its next host; a connection accepted and closed would instead be a
            fatal error for that attempt), and listens again once the upstream accepts."""

            def __init__(self, group, listen, upstream):
                self.group, self.listen, self.upstream = group, listen, upstream
                self.server = None

            async def open(self):
                while self.server is None:
                    try:
                        self.server = await asyncio.start_server(self.handle, HOST, self.listen, reuse_address=True)
                    except OSError:
                        await asyncio.sleep(0.1)

            async def watch_upstream(self):
                while True:
                    await asyncio.sleep(0.2)
                    try:
                        _, writer = await asyncio.wait_for(asyncio.open_connection(HOST, self.upstream), 1.0)
                        writer.close()
                        await self.open()
                        return
                    except (OSError, asyncio.TimeoutError):
                        continue

            async def handle(self, client_reader, client_writer):
                gate = groups[self.group]
                if not gate.is_set():
                    await gate.wait()        # accepted during a cut: its client gave up long ago
                    client_writer.close()
                    return
                try:
                    up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(HOST, self.upstream), 2.0)
                except (OSError, asyncio.TimeoutError):
                    client_writer.close()
                    if self.server is not None:
                        self.server.close()  # stop listening; the connections already made stay
                        self.server = None
                        asyncio.ensure_future(self.watch_upstream())
                    return
                await asyncio.gather(pump(client_reader, up_writer, gate, client_writer),
                                     pump(up_reader, client_writer, gate, up_writer))

        listeners = [Listener(group, listen, upstream) for group, listen, upstream in spec]
        for listener in listeners:
            await listener.open()
        print("ready", flush=True)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                return  # the checker is gone
            words = line.decode().split()
            if len(words) == 2 and words[0] == "cut":
                groups[int(words[1])].clear()
            elif len(words) == 2 and words[0] == "heal":
                groups[int(words[1])].set()
            print("ok", flush=True)

    asyncio.run(main())


class Proxies:
    """The proxy process: per node, a port to the primary and a port to the standby."""

    def __init__(self, primary_port, standby_port):
        ports = free_ports(2 * NODES)
        self.ports = {node: (ports[2 * node], ports[2 * node + 1]) for node in range(NODES)}
        spec = [[node, self.ports[node][0], primary_port] for node in range(NODES)]
        spec += [[node, self.ports[node][1], standby_port] for node in range(NODES)]
        self.process = SPAWNER.popen([sys.executable, os.path.abspath(__file__), "--proxies", json.dumps(spec)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lock = threading.Lock()
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError("the TCP proxies did not start")

    def url(self, node):
        to_primary, to_standby = self.ports[node]
        return (f"postgresql://postgres@{HOST}:{to_primary},{HOST}:{to_standby}/flowstack"
                f"?target_session_attrs=read-write")

    def command(self, line):
        with self.lock:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
            if self.process.stdout.readline().strip() != "ok":
                raise RuntimeError(f"the TCP proxies did not take `{line}`")

    def cut(self, node):
        self.command(f"cut {node}")

    def heal(self, node):
        self.command(f"heal {node}")

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=5)


# =============================================================================================
# The cluster's processes.

class Node:
    """`flowstack serve` on a fixed port (so HAProxy finds it again after a restart)."""

    def __init__(self, index, binary, port, db, admin_token, work, extra_args):
        self.index, self.binary, self.port, self.db = index, binary, port, db
        self.admin_token, self.work, self.extra_args = admin_token, work, extra_args
        self.name = f"node{index + 1}"
        self.process = None
        self.starts = 0
        self.killed = 0

    def start(self):
        self.starts += 1
        out = open(os.path.join(self.work, f"{self.name}-{self.starts}.log"), "wb")
        self.process = SPAWNER.popen(
            [self.binary, "serve", "--host", HOST, "--port", str(self.port), "--db", self.db,
             "--log-level", "warning", *self.extra_args],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env=dict(os.environ, FLOWSTACK_ADMIN_TOKEN=self.admin_token))
        out.close()

    def wait_healthy(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {self.process.returncode}: {self.log_tail()}")
            if http_status(self.port, "/healthz") == 200:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not answer /healthz 200 within {timeout:.0f}s: {self.log_tail()}")

    def kill9(self):
        self.killed += 1
        self.process.kill()
        self.process.wait(timeout=10)

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)

    def log_tail(self, characters=1500):
        try:
            with open(os.path.join(self.work, f"{self.name}-{self.starts}.log"), errors="replace") as file:
                return file.read()[-characters:]
        except OSError:
            return ""


def haproxy_config(template, bind_port, stats_port, servers):
    """deploy/haproxy.cfg with its marked lines rewritten: the listening address, the stats
    page's, and the server list (name, port) on loopback. Everything else is the operator's file."""
    out, skipping = [], False
    for line in template.splitlines():
        words = line.split()
        if line.strip() == "# @servers-begin":
            out.append(line)
            out += [f"    server {name} {HOST}:{port}" for name, port in servers]
            skipping = True
            continue
        if line.strip() == "# @servers-end":
            skipping = False
        if skipping:
            continue
        if words[:1] == ["bind"] and "# @bind" in line:
            line = f"    bind {HOST}:{bind_port}"
        elif words[:1] == ["bind"] and "# @stats-bind" in line:
            line = f"    bind {HOST}:{stats_port}"
        out.append(line)
    return "\n".join(out) + "\n"


class HAProxy:
    def __init__(self, work, nodes):
        apt_install("haproxy", "haproxy")
        self.port, self.stats_port = free_ports(2)
        with open(HAPROXY_TEMPLATE) as file:
            template = file.read()
        self.config = os.path.join(work, "haproxy.cfg")
        with open(self.config, "w") as file:
            file.write(haproxy_config(template, self.port, self.stats_port, [(n.name, n.port) for n in nodes]))
        binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
        check = subprocess.run([binary, "-c", "-f", self.config], capture_output=True, text=True, timeout=30)
        if check.returncode != 0:
            raise RuntimeError(f"haproxy -c refuses the generated config: {check.stdout}{check.stderr}")
        self.log = open(os.path.join(work, "haproxy.log"), "wb")
        self.process = SPAWNER.popen([binary, "-f", self.config, "-db"], stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT)

    def states(self):
        """{server name: 'UP' | 'DOWN' | ...} from the stats page's CSV."""
        try:
            connection = http.client.HTTPConnection(HOST, self.stats_port, timeout=2)
            connection.request("GET", "/;csv")
            text = connection.getresponse().read().decode()
            connection.close()
        except (OSError, http.client.HTTPException):
            return {}
        states = {}
        for row in text.splitlines():
            fields = row.split(",")
            if len(fields) > 17 and fields[0] == "flowstack_nodes" and fields[1] not in ("FRONTEND", "BACKEND"):
                states[fields[1]] = fields[17].split()[0] if fields[17] else ""
        return states

    def wait_all_up(self, names, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.flush()
                with open(self.log.name, errors="replace") as file:
                    raise RuntimeError(f"haproxy exited with status {self.process.returncode}: {file.read()[-1500:]}")
            states = self.states()
            if all(states.get(name) == "UP" for name in names):
                return True
            time.sleep(0.1)
        return False

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.log.close()


def http_status(port, path, timeout=2.0):
    try:
        connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
        connection.request("GET", path)
        status = connection.getresponse().status
        connection.close()
        return status
    except (OSError, http.client.HTTPException):
        return None


# =============================================================================================
# HTTP, one thread's persistent connections.

class Http:
    def __init__(self):
        self.connections = {}

    def request(self, port, method, path, body=None, headers=None, timeout=REQUEST_TIMEOUT):
        """(status or None, headers with lower-case names, body bytes or the error's text)."""
        connection = self.connections.pop(port, None) or http.client.HTTPConnection(HOST, port, timeout=timeout)
        try:
            connection.request(method, path, body, headers or {})
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            return None, {}, f"{type(error).__name__}: {error}"
        if (response.getheader("Connection") or "").lower() == "close":
            connection.close()
        else:
            self.connections[port] = connection
        return response.status, {name.lower(): value for name, value in response.getheaders()}, data

    def close(self):
        for connection in self.connections.values():
            connection.close()
        self.connections.clear()


def as_json(data):
    try:
        return json.loads(data)
    except (ValueError, TypeError):
        return None


# =============================================================================================
# The history: operations, and what the walkers believe about their sessions.

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


class Walker(threading.Thread):
    """Walks its sessions, one operation at a time, round robin."""

    def __init__(self, number, sessions, targets, shared, seed):
        super().__init__(daemon=True, name=f"walker-{number}")
        self.number, self.sessions, self.targets, self.shared = number, sessions, targets, shared
        self.rng = random.Random(seed)
        self.http = Http()
        self.operations = []
        self.counter = 0
        self.errors = []

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


class Racer(threading.Thread):
    """While a bypass window is open, posts actions on its sessions through the node the walker
    is not using right then, so two nodes apply actions on one session at the same moment."""

    def __init__(self, sessions_by_id, targets, shared, seed):
        super().__init__(daemon=True, name="racer")
        self.sessions_by_id, self.targets, self.shared = sessions_by_id, targets, shared
        self.rng = random.Random(seed)
        self.http = Http()
        self.operations = []
        self.counter = 0
        self.errors = []

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


# =============================================================================================
# Faults.

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
        plan = [(0.06, "bypass", 0), (0.12, "kill-node", 0), (0.25, "isolate-node", 1), (0.36, "bypass", 1),
                (0.48, "failover", None), (0.62, "kill-node", 2), (0.72, "isolate-node", 0), (0.80, "bypass", 2)]
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


# =============================================================================================
# The cluster.

class Cluster:
    def __init__(self, binary, work, node_args):
        self.binary, self.work, self.node_args = binary, work, node_args
        self.pg = self.proxies = self.haproxy = None
        self.nodes = []
        self.admin_token = secrets.token_hex(32)
        self.load_started = None

    def start(self):
        from pgserver import PostgresServer
        self.pg = PostgresServer(standby=True)
        self.pg.start()
        log(f"PostgreSQL primary on port {self.pg.primary.port}, synchronous standby on {self.pg.standby.port}")
        self.proxies = Proxies(self.pg.primary.port, self.pg.standby.port)
        ports = free_ports(NODES)
        self.nodes = [Node(i, self.binary, ports[i], self.proxies.url(i), self.admin_token, self.work, self.node_args)
                      for i in range(NODES)]
        for node in self.nodes:  # at the same moment: one migrates, the others wait for its lock
            node.start()
        for node in self.nodes:
            node.wait_healthy()
        log("nodes: " + ", ".join(f"{n.name} on {n.port} (db via proxies {self.proxies.ports[n.index]})" for n in self.nodes))
        self.haproxy = HAProxy(self.work, self.nodes)
        if not self.haproxy.wait_all_up([n.name for n in self.nodes]):
            raise RuntimeError(f"HAProxy does not see the nodes UP: {self.haproxy.states()}")
        log(f"HAProxy on {self.haproxy.port} (stats on {self.haproxy.stats_port})")

    def stop(self):
        for step in [lambda: self.haproxy and self.haproxy.stop()] + [node.stop for node in self.nodes] + \
                    [lambda: self.proxies and self.proxies.stop(), lambda: self.pg and self.pg.stop()]:
            try:
                step()
            except Exception as error:  # noqa: BLE001 (stop the rest anyway)
                log(f"stopping: {type(error).__name__}: {error}")


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


# =============================================================================================
# Reading back, replaying, checking.

def read_back(targets, session, node, http_):
    """The session's whole log (pages of LOG_PAGE) and its state, from `node`, straight.
    Returns (log entries, read Operation)."""
    headers = {"Authorization": f"Bearer {session.token}"}
    entries, after = [], 0
    port = targets.port(node)
    for _ in range(10000):
        status = None
        for _attempt in range(20):
            status, _, data = http_.request(port, "GET", f"/v1/sessions/{session.sid}/actions?after={after}&limit={LOG_PAGE}",
                                            None, headers)
            if status == 200:
                break
            time.sleep(0.25)
        if status != 200:
            raise RuntimeError(f"GET /v1/sessions/{session.sid}/actions on node{node + 1} answered {status}: {data[:200]!r}")
        page = json.loads(data)
        entries += page["actions"]
        if page.get("next") is None or not page["actions"]:
            break
        after = page["next"]
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


def same_params(a, b):
    return (a or {}) == (b or {})


class Checks:
    """Per property: the sessions that break it and examples of how."""

    def __init__(self):
        self.violations = collections.OrderedDict()
        self.examples = collections.defaultdict(list)
        self.counts = collections.Counter()

    def declare(self, *names):
        for name in names:
            self.violations.setdefault(name, set())

    def fail(self, name, sid, example):
        self.violations.setdefault(name, set()).add(sid)
        self.counts[name] += 1
        if len(self.examples[name]) < 4:
            self.examples[name].append(example)


def check_session(session, operations, entries, final_read, checks):
    """The properties of one session's history against its log. `operations` are all of its
    operations (every client), `entries` its log, `final_read` the read at the end."""
    sid = session.sid
    versions = [entry["version"] for entry in entries]
    n = len(entries)
    if versions != list(range(1, n + 1)):
        checks.fail("versions", sid, f"{sid}: log versions {versions[:12]}{'...' if n > 12 else ''} are not 1..{n}")
    if final_read.outcome == "ok" and final_read.version != (versions[-1] if versions else 0):
        checks.fail("versions", sid, f"{sid}: the state read at the end (node{final_read.served_by + 1}) is at version "
                                     f"{final_read.version}, the log's last is {versions[-1] if versions else 0}")
    by_version = {entry["version"]: entry for entry in entries}
    actions = [op for op in operations if op.kind == "action"]
    acked = [op for op in actions if op.outcome == "ok"]
    unknown = [op for op in actions if op.outcome == "unknown"]
    failed = [op for op in actions if op.outcome == "failed"]

    # acknowledged: at the version its 200 answered, the same type and params
    for op in acked:
        entry = by_version.get(op.version)
        if entry is None or entry["type"] != op.type or not same_params(entry.get("params"), op.params):
            found = f"{entry['type']} {entry.get('params')}" if entry else "nothing"
            checks.fail("acknowledged", sid, f"{sid}: {op.type} {op.params or ''} (key {op.key}) acknowledged at version "
                                             f"{op.version} by node{(op.served_by or 0) + 1}; the log has {found} there")

    duplicates = collections.Counter(op.version for op in acked)
    for version, count in duplicates.items():
        if count > 1:  # one of them is not the log's (a lost write, its version given again)
            ops = [op for op in acked if op.version == version]
            checks.fail("acknowledged", sid, f"{sid}: {count} different operations acknowledged at version {version}: "
                                             + ", ".join(f"{op.type} key {op.key}" for op in ops))

    # applied-once: log entries that no 200 explains, more than the operations whose outcome
    # stayed unknown can explain (one each, same type and params)
    acked_versions = {op.version for op in acked}
    unexplained = [entry for entry in entries if entry["version"] not in acked_versions]
    candidates = collections.Counter((op.type, json.dumps(op.params or {}, sort_keys=True)) for op in unknown)
    surplus = []
    landed = 0
    for entry in unexplained:
        signature = (entry["type"], json.dumps(entry.get("params") or {}, sort_keys=True))
        if candidates[signature] > 0:
            candidates[signature] -= 1
            landed += 1
        else:
            surplus.append(entry)
    if surplus:
        checks.fail("applied-once", sid, f"{sid}: {len(surplus)} log entries that no acknowledgement or unknown operation "
                                         f"explains, e.g. version {surplus[0]['version']} {surplus[0]['type']} "
                                         f"{surplus[0].get('params') or ''}; {len(acked)} acknowledged, {len(unknown)} unknown, "
                                         f"{len(failed)} refused, {n} in the log")

    # real-time order: acknowledged before another was sent -> lower version
    by_completion = sorted(acked, key=lambda op: op.completed)
    for later in acked:
        for earlier in by_completion:
            if earlier.completed >= later.invoked:
                break
            if earlier is not later and earlier.version >= later.version:
                checks.fail("real-time-order", sid, f"{sid}: {earlier.type} acknowledged at version {earlier.version} "
                                                    f"(t={earlier.completed - STARTED:.3f}) before {later.type} was sent "
                                                    f"(t={later.invoked - STARTED:.3f}), which got version {later.version}")
                break

    # read-your-writes: every read >= every version acknowledged before it was sent
    reads = [op for op in operations if op.kind == "read" and op.outcome == "ok"] + \
        ([final_read] if final_read.outcome == "ok" else [])
    ack_times = sorted((op.completed, op.version, op) for op in acked)
    for read in reads:
        sent = read.attempts[-1][0]
        best = None
        for completed, version, op in ack_times:
            if completed >= sent:
                break
            if best is None or version > best[1]:
                best = (completed, version, op)
        if best is not None and read.version < best[1]:
            op = best[2]
            checks.fail("read-your-writes", sid,
                        f"{sid}: read on node{(read.served_by or 0) + 1} at t={sent - STARTED:.3f} answered version "
                        f"{read.version}, but version {best[1]} ({op.type}) was acknowledged by node{(op.served_by or 0) + 1} "
                        f"{sent - best[0]:.3f}s before it was sent{' (the final read)' if read is final_read else ''}")
    return {"acked": len(acked), "unknown": len(unknown), "failed": len(failed), "landed": landed, "log": n,
            "reads": len(reads)}


def check_replay(session, operations, final_read, states, problem, checks):
    sid = session.sid
    if problem:
        checks.fail("replay", sid, f"{sid}: {problem}")
    compared = [op for op in operations if op.outcome == "ok"] + ([final_read] if final_read.outcome == "ok" else [])
    for op in compared:
        replayed = states.get(op.version)
        if replayed is None:
            if not problem:
                checks.fail("replay", sid, f"{sid}: {op.kind} answered version {op.version}, which the log does not reach")
            continue
        root, screens = replayed
        if op.root != root or op.screens != screens:
            what = "the final state" if op is final_read else (f"the answer to {op.type}" if op.kind == "action" else "a read")
            mine = [s.get("feature") for s in (op.screens or [])]
            theirs = [s.get("feature") for s in (screens or [])]
            checks.fail("replay", sid, f"{sid}: {what} at version {op.version} (node{(op.served_by or 0) + 1}) differs from "
                                       f"the replay: screens {mine} vs replayed {theirs}"
                                       + ("" if mine != theirs else " (same screens, different tree)"))


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


# =============================================================================================

def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--proxies":
        proxy_main(json.loads(sys.argv[2]))
        return 0
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

        def read_all(part):
            local = Http()
            for session in part:
                try:
                    logs[session.sid], finals[session.sid] = read_back(targets, session, reader_targets[session.sid], local)
                except Exception as error:  # noqa: BLE001
                    errors.append(f"{session.sid}: {type(error).__name__}: {error}")
            local.close()
        readers = [threading.Thread(target=read_all, args=(sessions[i::6],), daemon=True) for i in range(6)]
        for thread in readers:
            thread.start()
        for thread in readers:
            thread.join(timeout=60)
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
        from check_harness import FlowStackProcess
        replay_dir = os.path.join(work, "replay")
        os.makedirs(replay_dir)
        replayer = FlowStackProcess(binary, replay_dir)
        replayer.start()
        replays = {}

        def replay_all(part):
            local = Http()
            for session in part:
                if session.sid in logs:
                    try:
                        replays[session.sid] = replay(replayer.port, session, logs[session.sid], local)
                    except Exception as error:  # noqa: BLE001
                        replays[session.sid] = ({}, f"the replay broke: {type(error).__name__}: {error}")
            local.close()
        replay_threads = [threading.Thread(target=replay_all, args=(sessions[i::6],), daemon=True) for i in range(6)]
        for thread in replay_threads:
            thread.start()
        for thread in replay_threads:
            thread.join(timeout=90)
        log(f"replayed {len(replays)} logs on a single SQLite node")

        # --- the checks
        checks = Checks()
        checks.declare("versions", "acknowledged", "applied-once", "real-time-order", "read-your-writes", "replay", "user-state")
        totals = collections.Counter()
        for session in sessions:
            if session.sid not in logs:
                continue
            counts = check_session(session, by_session[session.sid], logs[session.sid], finals[session.sid], checks)
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
        for fault in faults.faults:
            if fault["kind"] == "isolate-node":
                name = f"node{fault['node'] + 1}"
                cut, healed = fault["start"], fault["healed"]
                during = [a for a in fault["answers"] if a[1] >= cut + ISOLATED_GRACE and a[2] <= healed]
                wrong = [a for a in during if a[3] != 503]
                slow = [a for a in fault["answers"] if cut <= a[1] <= healed and a[2] - a[1] > ISOLATED_SLOWEST]
                results.append((f"{name} cut off the database answers 503 ({len(during)} probes after {ISOLATED_GRACE}s)",
                                None if during and not wrong else (f"{len(wrong)} answers were not 503" if during else "no probe"),
                                "; ".join(f"{k} at +{s - cut:.2f}s: {st}" for k, s, e, st in wrong[:6])))
                results.append((f"{name} cut off the database answers within {ISOLATED_SLOWEST}s",
                                None if not slow else f"{len(slow)} took longer",
                                "; ".join(f"{k} at +{s - cut:.2f}s took {e - s:.2f}s ({st})" for k, s, e, st in slow[:6])))
                results.append((f"{name} serves again within {REJOIN_WITHIN:.0f}s after the cut ends",
                                None if fault["rejoined"] else "it did not"))
        ok_times = sorted(op.completed for op in actions if op.outcome == "ok")
        for fault in faults.faults:
            if fault["kind"] in ("kill-node", "failover"):
                since = fault.get("promoted") or fault.get("restarted")
                later = next((t for t in ok_times if t > since), None)
                what = "the promotion" if fault["kind"] == "failover" else f"node{fault['node'] + 1}'s restart"
                if later is None and since + RECOVER_WITHIN > load_ended:
                    log(f"not checked: acknowledgements after {what} (the load ended {load_ended - since:.1f}s after it)")
                    continue
                results.append((f"actions are acknowledged within {RECOVER_WITHIN:.0f}s of {what}",
                                None if later is not None and later - since <= RECOVER_WITHIN else "they were not",
                                f"first after {later - since:.2f}s" if later else ""))
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
        results += check_definitions(cluster, http_)

        # --- the properties
        print("history: properties (each over all sessions):", flush=True)
        explain = {
            "versions": "log versions are 1..n and the final state is at n",
            "acknowledged": "every acknowledged action is in the log at its version",
            "applied-once": "nothing applied twice (log <= acknowledged + unknown, matched one to one)",
            "real-time-order": "acknowledged before sent -> lower version",
            "read-your-writes": "every read >= every version acknowledged before it was sent",
            "replay": "every answer and the final state equal the log replayed through the engine",
            "user-state": "onboarded through one node -> a session on another node starts at home",
        }
        for name, broken in checks.violations.items():
            failure = None if not broken else f"{checks.counts[name]} violations on {len(broken)} sessions"
            results.append((f"{name}: {explain[name]}", failure, "\n     ".join(checks.examples[name])))
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

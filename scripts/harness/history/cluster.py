"""The history check's cluster: PostgreSQL (a primary and a synchronous standby, harness.postgres),
per node two TCP proxies to it (harness.tcpproxy, so a node can be cut off the database), three
`flowstack serve` nodes on fixed ports with a multi-host URL through their proxies, and HAProxy
(harness.haproxy) in front.
"""
import concurrent.futures
import os
import secrets
import subprocess
import time

from harness.haproxy import HAProxy
from harness.postgres import PostgresServer
from harness.server import die_with_parent, free_ports, stop_process
from harness.tcpproxy import TcpProxies
from harness.web import status_of

from .settings import HOST, MIXED, NODES, log


class Spawner:
    """Starts every child process from one thread that lives as long as the run: the children
    die with their parent (PR_SET_PDEATHSIG), and Linux means the parent *thread*; a node
    restarted from the fault thread would otherwise be killed when that thread ends."""

    def __init__(self):
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="spawner")

    def popen(self, *args, **kwargs):
        return self.executor.submit(subprocess.Popen, *args, preexec_fn=die_with_parent, **kwargs).result(timeout=30)

    def close(self):
        self.executor.shutdown(wait=False)


SPAWNER = Spawner()


class Proxies:
    """Per node, a proxy port to the primary and one to the standby; `cut(node)` cuts both."""

    def __init__(self, primary_port, standby_port):
        ports = free_ports(2 * NODES)
        self.ports = {node: (ports[2 * node], ports[2 * node + 1]) for node in range(NODES)}
        spec = [[node, self.ports[node][0], primary_port] for node in range(NODES)]
        spec += [[node, self.ports[node][1], standby_port] for node in range(NODES)]
        self.proxies = TcpProxies(spec, popen=SPAWNER.popen)

    def url(self, node):
        to_primary, to_standby = self.ports[node]
        return (f"postgresql://postgres@{HOST}:{to_primary},{HOST}:{to_standby}/flowstack"
                f"?target_session_attrs=read-write")

    def cut(self, node):
        self.proxies.cut(node)

    def heal(self, node):
        self.proxies.heal(node)

    def stop(self):
        self.proxies.stop()


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
             *([] if MIXED and self.index == NODES - 1 else ["--node-url", f"http://{HOST}:{self.port}"]),
             "--log-level", "warning", *self.extra_args],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env=dict(os.environ, FLOWSTACK_ADMIN_TOKEN=self.admin_token))
        out.close()

    def wait_healthy(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {self.process.returncode}: {self.log_tail()}")
            if status_of(self.port, "/healthz") == 200:
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
        if self.process is not None:
            stop_process(self.process, timeout=10)

    def log_tail(self, characters=1500):
        try:
            with open(os.path.join(self.work, f"{self.name}-{self.starts}.log"), errors="replace") as file:
                return file.read()[-characters:]
        except OSError:
            return ""


class Cluster:
    def __init__(self, binary, work, node_args):
        self.binary, self.work, self.node_args = binary, work, node_args
        self.pg = self.proxies = self.haproxy = None
        self.nodes = []
        self.admin_token = secrets.token_hex(32)
        self.load_started = None

    def start(self):
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
        self.haproxy = HAProxy(self.work, [(n.name, n.port) for n in self.nodes], popen=SPAWNER.popen, log=log)
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

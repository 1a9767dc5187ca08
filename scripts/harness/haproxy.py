"""HAProxy in front of FlowStack nodes, with the operator's own deploy/haproxy.cfg (only its marked
addresses rewritten to loopback), as scripts/cluster.sh runs it.

    proxy = HAProxy(work, [("node1", 8081), ("node2", 8082)])   # installs haproxy when missing
    proxy.wait_all_up(["node1", "node2"]); proxy.port; proxy.states(); proxy.stop()

Standard library only.
"""
import http.client
import os
import shutil
import subprocess
import time

from .server import apt_install, die_with_parent, free_ports, stop_process

HOST = "127.0.0.1"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPLATE = os.path.join(REPO, "deploy", "haproxy.cfg")


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
    """`haproxy -f WORK/haproxy.cfg -db` on free ports (`port`, `stats_port`), its log in WORK.
    `servers` are (name, port); `popen` starts the process (default: subprocess.Popen, dying
    with this process)."""

    def __init__(self, work, servers, template=TEMPLATE, popen=None, log=None):
        apt_install("haproxy", "haproxy", log)
        self.port, self.stats_port = free_ports(2)
        with open(template) as file:
            text = file.read()
        self.config = os.path.join(work, "haproxy.cfg")
        with open(self.config, "w") as file:
            file.write(haproxy_config(text, self.port, self.stats_port, servers))
        binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
        check = subprocess.run([binary, "-c", "-f", self.config], capture_output=True, text=True, timeout=30)
        if check.returncode != 0:
            raise RuntimeError(f"haproxy -c refuses the generated config: {check.stdout}{check.stderr}")
        self.log = open(os.path.join(work, "haproxy.log"), "wb")
        popen = popen or (lambda *args, **kwargs: subprocess.Popen(*args, preexec_fn=die_with_parent, **kwargs))
        self.process = popen([binary, "-f", self.config, "-db"], stdin=subprocess.DEVNULL,
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
        stop_process(self.process, timeout=5)
        self.log.close()

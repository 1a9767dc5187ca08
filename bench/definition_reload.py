#!/usr/bin/env python3
"""What a definition change made through one node costs the others, as a team's history grows.

For each build given: a fresh throwaway PostgreSQL (scripts/pgserver.py), VERSIONS more stored
flow versions (copies of the sample app's own flows, stored by SQL once the server has migrated
the database: a history of real definitions), and two nodes on it (no --single-node), which are
left to take the stored versions in until neither has used CPU for a second. Then,
CHANGES times: a flag is changed through node A (or, with --change flow, a new version of the
`home` flow is stored through it, not made live), a session is created through node B at once
(its node finds the fingerprint moved and reads the definitions again before it answers), and a
second one right after (nothing to read). Prints the medians and maxima of both creations'
times, the CPU both nodes used per change (their pollers read the definitions again too), and
how many times each node read them again per change (`flowstack_definition_reloads_total`: one
each is the least, node A's own write included). With --ofrep-load, wrk sends OFREP evaluations to
node B all the while (-t1 -c8, a client key made through node A), as flag clients poll: their
shared reads of the revision overlap the poller's and the creations', which is where a read that
began before a change can end after one that began after it.
Builds run in turns, ROUNDS times.
Usage: bench/definition_reload.py [--versions 5000] [--changes 40] [--rounds 1] [--change flag|flow] [--ofrep-load]
       BIN [BIN...]
"""
import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "bench-admin-token-0000000000000000000000"
HZ = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def exchange(port, method, path, body=None, headers=None):
    """One request on a connection of its own: (status, body, seconds it took)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    started = time.perf_counter()
    connection.request(method, path, body, headers or {})
    response = connection.getresponse()
    answer = response.read()
    elapsed = time.perf_counter() - started
    connection.close()
    return response.status, answer, elapsed


def request(port, method, path, body=None, headers=None):
    """The seconds a request took; exits unless it succeeded."""
    status, _, elapsed = exchange(port, method, path, body, headers)
    if status >= 300:
        sys.exit(f"bench: {method} {path} answered {status}")
    return elapsed


def reloads(port):
    """The node's flowstack_definition_reloads_total."""
    text = exchange(port, "GET", "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})[1].decode()
    return next(int(float(line.split()[1])) for line in text.splitlines() if line.startswith("flowstack_definition_reloads_total "))


def wait_healthy(port, process):
    for _ in range(200):
        if process.poll() is not None:
            sys.exit(f"bench: the node on port {port} exited")
        try:
            request(port, "GET", "/healthz")
            return
        except (OSError, SystemExit):
            time.sleep(0.1)
    sys.exit(f"bench: the node on port {port} did not start")


def run(binary, versions, changes, change, ofrep_load):
    work = tempfile.mkdtemp()
    os.chmod(work, 0o755)  # the postgres user reaches its directory inside
    started = subprocess.run([sys.executable, "scripts/pgserver.py", "start", "--dir", f"{work}/pg"],
                             cwd=ROOT, check=True, capture_output=True, text=True).stdout
    env = dict(line.split("=", 1) for line in started.splitlines() if "=" in line)
    url = env["URL"].strip("'\"")
    psql = os.path.join(env["BINDIR"].strip("'\""), "psql")
    nodes = []
    load = None
    try:
        ports = [free_port(), free_port()]
        for port in ports:
            log = open(f"{work}/node{port}.log", "w")
            nodes.append(subprocess.Popen([binary, "serve", "--port", str(port), "--db", url,
                                           "--node-url", f"http://127.0.0.1:{port}"],
                                          env={**os.environ, "FLOWSTACK_ADMIN_TOKEN": TOKEN}, stdout=log, stderr=log))
            wait_healthy(port, nodes[-1])
        if versions > 0:
            subprocess.run([psql, "-q", url, "-c", f"""
                INSERT INTO flow_versions (name, version, definition, created_at)
                SELECT f.name, f.version + g, f.definition, f.created_at
                FROM flow_versions f, generate_series(1, ceil({versions} / 8.0)::int) AS g WHERE f.version = 1""",
                            "-c", "ANALYZE flow_versions"], check=True)
        # Both pollers take the new versions in (at 50,000, seconds of parsing): wait until
        # neither node has used CPU for a second, so that the changes are measured alone.
        idle_since, last = time.monotonic(), sum(ticks(node.pid) for node in nodes)
        for _ in range(240):
            time.sleep(0.25)
            now = sum(ticks(node.pid) for node in nodes)
            if now - last > 2:
                idle_since, last = time.monotonic(), now
            elif time.monotonic() - idle_since >= 1:
                break
        stored = subprocess.run([psql, "-Atq", url, "-c", "SELECT count(*) FROM flow_versions"],
                                check=True, capture_output=True, text=True).stdout.strip()
        admin = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        after_change, again = [], []
        if ofrep_load:
            key = json.loads(exchange(ports[0], "POST", "/v1/client-keys", json.dumps({"name": "bench"}), admin)[1])["key"]
            load = subprocess.Popen(["wrk", "-t1", "-c8", f"-d{changes + 60}s", "-s", "bench/ofrep.lua",
                                     f"http://127.0.0.1:{ports[1]}"], cwd=ROOT, env={**os.environ, "KEY": key},
                                    stdout=subprocess.DEVNULL)
            time.sleep(1)
        reloads_before = [reloads(port) for port in ports]
        before = sum(ticks(node.pid) for node in nodes)
        with open(os.path.join(ROOT, "flows", "home.json")) as f:
            home = f.read()
        for i in range(changes):
            if change == "flow":
                request(ports[0], "PUT", "/v1/flows/home", home, admin)
            else:
                flag = {"variants": {"on": True, "off": False}, "defaultVariant": "on" if i % 2 else "off"}
                request(ports[0], "PUT", "/v1/flags/paywall", json.dumps(flag), admin)
            after_change.append(request(ports[1], "POST", "/v1/sessions", json.dumps({"userId": f"a{i}"})))
            again.append(request(ports[1], "POST", "/v1/sessions", json.dumps({"userId": f"b{i}"})))
            time.sleep(0.3)  # past a poll: each change is read once by each node
        cpu = (sum(ticks(node.pid) for node in nodes) - before) / HZ
        read_again = [reloads(port) - seen for port, seen in zip(ports, reloads_before)]
        return stored, after_change, again, cpu, read_again
    finally:
        if load is not None:
            load.kill()
            load.wait()
        for node in nodes:
            node.kill()
            node.wait()
        subprocess.run([sys.executable, "scripts/pgserver.py", "stop", "--dir", f"{work}/pg"],
                       cwd=ROOT, capture_output=True)
        subprocess.run(["rm", "-rf", work])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--versions", type=int, default=5000)
    parser.add_argument("--changes", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--change", choices=["flag", "flow"], default="flag")
    parser.add_argument("--ofrep-load", action="store_true")
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    what = "flag changes" if args.change == "flag" else "new versions of a flow"
    print(f"{args.changes} {what} through node A, each followed by two creations through node B; "
          f"{args.versions} more flow versions stored" + ("; OFREP evaluations sent to node B throughout" if args.ofrep_load else ""))
    for round_ in range(1, args.rounds + 1):
        for binary in args.binaries:
            stored, after_change, again, cpu, read_again = run(os.path.abspath(binary), args.versions, args.changes, args.change,
                                                               args.ofrep_load)
            ms = lambda values, f: f(values) * 1000  # noqa: E731
            print(f"round {round_}  {binary}: {stored} flow versions stored; creation after a change "
                  f"median {ms(after_change, statistics.median):7.1f} ms, max {ms(after_change, max):7.1f} ms; "
                  f"the next one median {ms(again, statistics.median):5.1f} ms; "
                  f"both nodes' CPU {cpu / args.changes * 1000:6.1f} ms a change; definitions read again a change: "
                  f"node A {read_again[0] / args.changes:.2f}, node B {read_again[1] / args.changes:.2f}")


if __name__ == "__main__":
    main()

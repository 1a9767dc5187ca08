"""The FlowStack server process of the Python checks, the tally of their checks, and small
process helpers (free ports, apt-get, bounded waits).

    with tempfile.TemporaryDirectory() as work:
        server = FlowStackProcess(binary, work, extra_args=["--connection-timeout", "2"])
        try:
            server.start()            # serve on 127.0.0.1, a free port, a database in `work`
            ... server.port ...
        finally:
            server.stop()             # SIGTERM, then SIGKILL; returns the exit status

On PostgreSQL (`FLOWSTACK_TEST_DB_KIND=postgresql`, see `database_kind()`), pass `db=` the URL
of a throwaway server from harness.postgres (scripts/pgserver.py); by default the database is a SQLite file in `work`.
`keep_stdout=True` keeps reading what the server prints after its port line (into
stdout-N.log in `work`, see `stdout_text()`), so a chatty server never blocks on a full pipe.

`Tally` counts checks and prints each failure as it happens. The process dies with the script
even when the script is killed (PR_SET_PDEATHSIG), and `exit_on_sigterm()` turns a SIGTERM of
the script into an exception, so `finally` blocks run.
Standard library only.
"""
import ctypes
import os
import random
import re
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

PR_SET_PDEATHSIG = 1


def die_with_parent():
    """Runs in the child before exec (`preexec_fn=`): a SIGKILL when the script's process goes
    away (on Linux, the *thread* that started it: see harness.history.cluster.Spawner)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the script's own cleanup still stops the server


_die_with_parent = die_with_parent


_handed_out = set()


def _ephemeral_low():
    """The first port of the kernel's ephemeral range (32768 when it cannot be read)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as file:
            low = int(file.read().split()[0])
        return low if low > 2048 else 32768
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(count, host="127.0.0.1"):
    """`count` distinct TCP ports on `host` that nothing listens on (held open together while
    chosen), for servers that must know their port before they start. They are taken below the
    kernel's ephemeral range: a port bound to 0 and released can go to the next outgoing
    connection (a node's connection to PostgreSQL) before the server binds it, which failed a CI
    run with "Address already in use". A port is never handed out twice by one process."""
    low = _ephemeral_low()
    first, last = max(1024, low - 12000), max(1025, low) - 1
    sockets = []
    ports = []
    try:
        for _ in range(200 * count):
            if len(ports) == count:
                break
            port = random.randint(first, last)
            if port in _handed_out or port in ports:
                continue
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError:
                sock.close()
                continue
            sockets.append(sock)
            ports.append(port)
        if len(ports) < count:
            raise RuntimeError(f"no {count} free ports in {first}..{last}")
        _handed_out.update(ports)
        return ports
    finally:
        for sock in sockets:
            sock.close()


def free_port(host="127.0.0.1"):
    return free_ports(1, host)[0]


def wait_for(predicate, seconds, pause=0.2):
    """The first truthy value of predicate() within `seconds`, else the last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(pause)


def apt_install(package, binary, log=None):
    """Installs a Debian package with apt-get (through sudo when not root) when `binary` is missing."""
    if shutil.which(binary) or os.path.exists(f"/usr/sbin/{binary}"):
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    (log or (lambda message: print(message, file=sys.stderr, flush=True)))(f"installing {package} with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (sudo + ["apt-get", "update", "-qq"], sudo + ["apt-get", "install", "-y", "-qq", package]):
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True, timeout=600)
    if not shutil.which(binary) and not os.path.exists(f"/usr/sbin/{binary}"):
        raise RuntimeError(f"{package} was installed but there is no {binary}")


def database_kind():
    """Which store the end-to-end scripts run on: FLOWSTACK_TEST_DB_KIND, `sqlite` (the
    default) or `postgresql` (a throwaway server from harness.postgres)."""
    kind = os.environ.get("FLOWSTACK_TEST_DB_KIND") or "sqlite"
    if kind not in ("sqlite", "postgresql"):
        raise SystemExit(f"FLOWSTACK_TEST_DB_KIND={kind}: expected sqlite or postgresql")
    return kind


def exit_on_sigterm():
    """A SIGTERM of the script raises SystemExit, so its cleanup runs."""
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))


def binary_argument(script):
    """The start of a check's main(): the one argument, PATH/TO/flowstack, made absolute (else
    the usage on stderr and exit status 2), and exit_on_sigterm()."""
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(f"usage: {script} PATH/TO/flowstack", file=sys.stderr)
        raise SystemExit(2)
    exit_on_sigterm()
    return os.path.abspath(sys.argv[1])


def stop_process(process, timeout=10):
    """SIGTERM, then SIGKILL when it has not ended within `timeout` s. True when SIGTERM was enough
    (or it had ended already)."""
    if process.poll() is not None:
        return True
    process.terminate()
    try:
        process.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)
        return False


def _read_text(path):
    try:
        with open(path, "rb") as file:
            return file.read().decode("utf-8", "replace")
    except OSError:
        return ""


class FlowStackProcess:
    """`flowstack serve` on 127.0.0.1 and a free port, its database and stderr logs in `work`."""

    def __init__(self, binary, work, admin_token=None, extra_args=(), db=None, keep_stdout=False, extra_env=None):
        self.binary, self.work = binary, work
        self.extra_env = dict(extra_env or {})
        self.admin_token = admin_token or secrets.token_hex(32)
        self.extra_args = list(extra_args)
        self.db = db or os.path.join(work, "db.sqlite")
        self.keep_stdout = keep_stdout
        self.process = None
        self.port = None
        self.starts = 0
        self._stderr = None
        self._drain = None

    def start(self, timeout=30):
        """Starts the server and waits (at most `timeout` s) for the line that gives its port."""
        self.starts += 1
        env = dict(os.environ, FLOWSTACK_ADMIN_TOKEN=self.admin_token, **self.extra_env)
        self._stderr = open(self.stderr_path(), "wb")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--host", "127.0.0.1", "--port", "0", "--db", self.db, "--log-level", "warning"]
            + self.extra_args,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr, env=env, preexec_fn=die_with_parent)
        deadline = time.monotonic() + timeout
        seen = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 0.2)
            if ready:
                line = self.process.stdout.readline()
                if not line:
                    break
                seen += line
                found = re.search(rb"listening on http://127\.0\.0\.1:(\d+)", line)
                if found:
                    self.port = int(found.group(1))
                    if self.keep_stdout:
                        self._drain = threading.Thread(target=self._copy_stdout, args=(self.process.stdout, seen), daemon=True)
                        self._drain.start()
                    return
            elif self.process.poll() is not None:
                break
        raise RuntimeError(f"the server did not start: {seen!r} {self.stderr_text()[-500:]!r}")

    def wait_healthy(self, timeout=30):
        """Waits (at most `timeout` s) for GET /healthz to answer 200: the store is reachable.
        Raises RuntimeError with the end of its stderr when it does not, or when it exits."""
        from .web import status_of
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                break
            if status_of(self.port, "/healthz") == 200:
                return
            time.sleep(0.1)
        raise RuntimeError(f"/healthz did not answer 200 within {timeout}s: {self.stderr_text()[-500:]!r}")

    def _copy_stdout(self, stream, seen):
        with open(self.stdout_path(), "wb") as file:
            file.write(seen)
            file.flush()
            for line in iter(stream.readline, b""):
                file.write(line)
                file.flush()

    def stdout_path(self):
        return os.path.join(self.work, f"stdout-{self.starts}.log")

    def stdout_text(self):
        """What the server printed on stdout (with keep_stdout=True), the newest start's."""
        return _read_text(self.stdout_path())

    def alive(self):
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self):
        return self.process.pid if self.process is not None else None

    def kill9(self):
        """SIGKILL (a crash: requests may be in flight); `start()` starts it again."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.stop()

    def stop(self, timeout=15):
        """SIGTERM, then SIGKILL after `timeout` s. Returns the exit status, a sentence when it
        had to be killed, or None when no server was running."""
        if self.process is None:
            return None
        process, self.process = self.process, None
        try:
            if process.poll() is not None:
                return process.returncode
            process.send_signal(signal.SIGTERM)
            try:
                return process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
                return f"killed: SIGTERM did not stop it within {timeout}s"
        finally:
            if self._drain is not None:
                self._drain.join(timeout=5)  # it ends at the pipe's end of file
                self._drain = None
            process.stdout.close()
            self._stderr.close()

    def stderr_path(self):
        return os.path.join(self.work, f"stderr-{self.starts}.log")

    def stderr_text(self):
        return _read_text(self.stderr_path())


class Tally:
    """Passed and failed checks; a failure is printed at once, with what came back."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, failure, details=""):
        """Counts a check: `failure` is None when it passed, else a sentence saying why not."""
        if failure is None:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {name}: {failure}" + (f"\n     got: {details}" if details else ""), flush=True)

    def report(self, name, started=None):
        """The closing lines of a script (`NAME: finished in …s`, `NAME: P passed, F failed`);
        returns its exit status: 1 when a check failed, else 0."""
        if started is not None:
            print(f"{name}: finished in {time.monotonic() - started:.1f}s", flush=True)
        print(f"{name}: {self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0

"""A throwaway PostgreSQL for the tests and benchmarks: initdb into a fresh directory, listen on
127.0.0.1 only on a free port, trust authentication, a database `flowstack`; optionally one
synchronous standby, or several of which any one must confirm each commit
(`synchronous_standby_names = 'ANY 1 (…)'`), made with pg_basebackup -R. fsync and
synchronous_commit stay on: the tests that use it check durability.

After a failover (promote), the old primary is *demoted*: `restart` refuses to start it (it
would accept writes next to the new primary: a split brain), a `standby.signal` put in its data
directory keeps even a plain `pg_ctl start` read-only, and `rejoin` makes it a standby of the
new primary (a fresh base backup from it).

As a module:

    from harness.postgres import PostgresServer
    with PostgresServer(standby=True) as pg:   # start(); stop() on leaving, even on an error
        pg.url            # postgresql://postgres@127.0.0.1:PORT/flowstack
        pg.standby_url    # the (first) standby's, or None
        pg.standbys       # the standby Nodes ("standby", "standby2", …; standbys=N for N)
        pg.kill9()        # SIGKILL the postmaster (a crash of the database server)
        pg.restart()      # start it again on the same directory and port (crash recovery)
        pg.freeze(); pg.thaw()   # SIGSTOP / SIGCONT it and its backends (a hung server)
        pg.promote_standby()   # the most advanced standby; the others follow it
        pg.rejoin()       # the demoted old primary, as a standby of the new one
        pg.sql("SELECT 1")
        pg.amcheck()      # None, or what pg_amcheck found wrong

As a command (leaves it running; the lines printed are shell assignments, for `eval`):

    python3 scripts/pgserver.py start [--standby | --standbys N] [--dir D]
        # prints DIR=, URL=, PORT=, BINDIR=, STANDBY_URL= (the first standby's), STANDBY_PORTS=
    python3 scripts/pgserver.py stop --dir D                  # fast shutdown, then removes D
    python3 scripts/pgserver.py kill9 [--group]|restart|promote|rejoin|status --dir D [--node NAME]
    python3 scripts/pgserver.py add-role --dir D --role R --password P   # URL= of R's own database

The binaries come from /usr/lib/postgresql/*/bin (Debian's packages); when there are none, the
Debian package `postgresql` is installed with apt-get (through sudo when not root). initdb and
postgres refuse to run as root: as root, they run as the `postgres` user (made by the package),
and the directory is handed to it. Every wait is bounded (30 s at most); a start that fails
stops what it started, removes its directory and raises PgServerError with the server's log.
Standard library only.
"""
import argparse
import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from .server import free_ports

READY_TIMEOUT = 30.0  # seconds any start, stop or promote may take
DATABASE = "flowstack"
SUPERUSER = "postgres"
STATE_FILE = "pgserver.json"

# What each throwaway server runs with. Durability is the point of the tests that use it:
# fsync, synchronous_commit and full_page_writes keep their defaults (on), said out loud so a
# later edit does not turn them off by accident. The rest keeps it small.
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "unix_socket_directories": "''",  # TCP only: nothing in /var/run/postgresql, no path limits
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "shared_buffers": "'32MB'",
    "max_connections": "100",
    "max_wal_senders": "4",
    "wal_level": "replica",
    "hot_standby": "on",
    "wal_retrieve_retry_interval": "'200ms'",  # a standby reconnects to a restarted primary at once
    "logging_collector": "off",
    "log_min_messages": "warning",
    "log_line_prefix": "'%m [%p] '",
    "password_encryption": "'scram-sha-256'",
}


class PgServerError(RuntimeError):
    pass


# ---------------------------------------------------------------------------------------------
# Finding (or installing) the binaries, and running them as the right user.

def find_bindir(install=True):
    """The newest /usr/lib/postgresql/N/bin with initdb; installs Debian's postgresql when none."""
    def found():
        candidates = [path for path in glob.glob("/usr/lib/postgresql/*/bin") if os.path.exists(os.path.join(path, "initdb"))]
        candidates.sort(key=lambda path: int(path.split("/")[-2]) if path.split("/")[-2].isdigit() else 0)
        if candidates:
            return candidates[-1]
        pg_config = shutil.which("pg_config")
        if pg_config:
            bindir = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True).stdout.strip()
            if os.path.exists(os.path.join(bindir, "initdb")):
                return bindir
        return None
    bindir = found()
    if bindir is None and install:
        install_postgres()
        bindir = found()
    if bindir is None:
        raise PgServerError("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install -y postgresql")
    return bindir


def install_postgres():
    """apt-get install postgresql (Debian), through sudo when not root."""
    if not shutil.which("apt-get"):
        raise PgServerError("PostgreSQL is not installed and there is no apt-get to install it")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    print("pgserver: installing postgresql with apt-get", file=sys.stderr, flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for command in (sudo + ["apt-get", "update", "-qq"], sudo + ["apt-get", "install", "-y", "-qq", "postgresql"]):
        result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            raise PgServerError(f"{' '.join(command)} failed: {result.stderr.strip()[-1000:]}")


def server_user():
    """The user initdb and postgres run as: `postgres` when this is root, else this user (None)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SUPERUSER)
    except KeyError:
        raise PgServerError("running as root, but there is no `postgres` user to run PostgreSQL as "
                            "(Debian's postgresql package makes it)") from None
    return SUPERUSER


def clean_env():
    """This environment without the PG* variables that would point libpq or pg_ctl elsewhere."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PG")}
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    env["PGCONNECT_TIMEOUT"] = "3"
    return env


def process_alive(pid):
    """Whether `pid` is a live process (a zombie, killed but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def postmaster_alive(pid):
    """Whether `pid` is a live PostgreSQL process (not a zombie, not a reused pid)."""
    if not process_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"postgres" in cmdline.read()
    except OSError:
        return True


def adopt_orphans():
    """Makes this process the reaper of its orphaned descendants (Linux PR_SET_CHILD_SUBREAPER):
    the postmaster pg_ctl leaves behind becomes our child, so after kill9() we reap it at once
    instead of waiting for init (which some containers' init does slowly, or never)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def reap(pid):
    """Collects `pid`'s exit status if it is our (adopted) child; harmless otherwise."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def pid_exists(pid):
    """Whether anything, a zombie included, still holds `pid`."""
    reap(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def children(pid):
    """The pids of the live processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


# ---------------------------------------------------------------------------------------------
# One PostgreSQL instance: a data directory, a port, a log file.

class Node:
    def __init__(self, bindir, user, directory, name, port):
        self.bindir, self.user, self.name, self.port = bindir, user, name, port
        self.data = os.path.join(directory, name)
        self.log = os.path.join(directory, f"{name}.log")
        self.pid = None  # the postmaster's, read from postmaster.pid once started
        self.orphans = []  # the children of a postmaster killed by kill9(), until they are gone

    def url(self, database=DATABASE, user=SUPERUSER, password=None):
        credentials = user if password is None else f"{user}:{password}"
        return f"postgresql://{credentials}@127.0.0.1:{self.port}/{database}"

    def run(self, program, *args, timeout=60, check=True, as_server=True):
        """Runs a PostgreSQL program (as the server's user when `as_server`), returns the result."""
        command = [os.path.join(self.bindir, program), *args]
        try:
            result = subprocess.run(command, env=clean_env(), cwd=os.path.dirname(self.data), stdin=subprocess.DEVNULL,
                                    capture_output=True, text=True, timeout=timeout,
                                    user=self.user if as_server else None, group=self.user if as_server else None,
                                    extra_groups=[] if (as_server and self.user) else None)
        except subprocess.TimeoutExpired:
            raise PgServerError(f"{program} {' '.join(args)} did not finish within {timeout}s") from None
        if check and result.returncode != 0:
            raise PgServerError(f"{program} {' '.join(args)} failed ({result.returncode}): "
                                f"{(result.stderr or result.stdout).strip()[-1500:]}{self.log_tail()}")
        return result

    def log_tail(self, characters=1500):
        try:
            with open(self.log, errors="replace") as file:
                text = file.read()
        except OSError:
            return ""
        return f"\n--- {self.log} (end):\n{text[-characters:]}" if text.strip() else ""

    def configure(self, extra=None):
        settings = dict(SETTINGS, port=str(self.port), **(extra or {}))
        with open(os.path.join(self.data, "postgresql.conf"), "a") as conf:
            conf.write("\n# pgserver.py: a throwaway server for tests (fsync stays on)\n")
            for key, value in settings.items():
                conf.write(f"{key} = {value}\n")

    def start(self):
        """pg_ctl start, then waits until it accepts connections (bounded)."""
        self.run("pg_ctl", "start", "-D", self.data, "-l", self.log, "-w", "-t", str(int(READY_TIMEOUT)),
                 "-o", f"-p {self.port}", timeout=READY_TIMEOUT + 10)
        self.pid = self.read_pid()
        self.wait_ready()

    def read_pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as file:
                return int(file.readline().strip())
        except (OSError, ValueError):
            return None

    def wait_ready(self, timeout=READY_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            result = self.run("pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-d", "postgres",
                              "-U", SUPERUSER, "-t", "2", check=False, timeout=10, as_server=False)
            if result.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise PgServerError(f"{self.name} on port {self.port} did not accept connections within {timeout:.0f}s"
                                    f"{self.log_tail()}")
            if self.pid and not process_alive(self.pid):
                raise PgServerError(f"{self.name} (pid {self.pid}) exited while starting{self.log_tail()}")
            time.sleep(0.1)

    def running(self):
        pid = self.pid or self.read_pid()
        return bool(pid) and postmaster_alive(pid)

    def stop(self):
        """Fast shutdown (bounded); SIGKILL of the postmaster and its backends when that fails."""
        pid = self.pid or self.read_pid()
        if pid and postmaster_alive(pid):
            self.signal_all(signal.SIGCONT)  # a frozen server cannot shut down
            result = self.run("pg_ctl", "stop", "-D", self.data, "-m", "fast", "-w", "-t", str(int(READY_TIMEOUT)),
                              check=False, timeout=READY_TIMEOUT + 10)
            if result.returncode != 0:
                self.kill9(group=True)
        self.wait_gone([*self.orphans, *([pid] if pid else [])], kill_after=5.0)
        if pid:
            reap(pid)
        self.orphans = []
        self.pid = None

    def kill9(self, group=False):
        """SIGKILL the postmaster; with `group`, its backends and helpers too, at once (else they
        notice its death and exit by themselves, as after an OOM kill of the postmaster alone).
        Returns the postmaster's pid."""
        pid = self.pid or self.read_pid()
        if not pid or not postmaster_alive(pid):
            raise PgServerError(f"{self.name} is not running (no live postmaster for {self.data})")
        # PostgreSQL puts each child in a session of its own, so a process-group kill would miss
        # them: hold the postmaster still, list its children, then kill.
        os.kill(pid, signal.SIGSTOP)
        self.orphans = children(pid)
        os.kill(pid, signal.SIGKILL)
        if group:
            for child in self.orphans:
                try:
                    os.kill(child, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 5
        while process_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        reap(pid)
        return pid

    def signal_all(self, number):
        """Sends `number` to the postmaster and each of its children."""
        pid = self.pid or self.read_pid()
        if not pid or not postmaster_alive(pid):
            return False
        if number == signal.SIGSTOP:
            os.kill(pid, number)  # first, so it forks nothing more
        for child in children(pid):
            try:
                os.kill(child, number)
            except ProcessLookupError:
                pass
        if number != signal.SIGSTOP:
            os.kill(pid, number)
        return True

    @staticmethod
    def wait_gone(pids, kill_after):
        """Waits for `pids` to exit; SIGKILLs those left after `kill_after` s, then waits 5 s more."""
        deadline = time.monotonic() + kill_after
        while any(process_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in pids if process_alive(pid)]
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while any(process_alive(pid) for pid in left) and time.monotonic() < deadline:
            time.sleep(0.05)

    def restart_after_crash(self):
        """Starts again on the same directory and port after kill9 (PostgreSQL runs crash recovery)."""
        old = self.pid or self.read_pid()
        if old and postmaster_alive(old):
            raise PgServerError(f"{self.name} (pid {old}) is still running: kill9() or stop() it first")
        # A new postmaster refuses to start while backends of the old one still hold its shared
        # memory; they exit on their own within moments of the postmaster's death.
        self.wait_gone(self.orphans, kill_after=10.0)
        self.orphans = []
        if old:
            # The killed postmaster was pg_ctl's orphan: until init reaps it, it is a zombie, and
            # a zombie's pid in postmaster.pid reads as "another server is running". Wait for the
            # reaping; where init never reaps, the lock file is stale (the postmaster and its
            # children are dead): remove it, as PostgreSQL would.
            deadline = time.monotonic() + 10
            while pid_exists(old) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_exists(old) and self.read_pid() == old:
                try:
                    os.unlink(os.path.join(self.data, "postmaster.pid"))
                except FileNotFoundError:
                    pass
        self.pid = None
        self.start()

    def sql(self, query, database=DATABASE, user=SUPERUSER, timeout=30):
        """Runs SQL with psql (as a client, over TCP) and returns its unaligned, tuples-only output."""
        psql = os.path.join(self.bindir, "psql")
        if not os.path.exists(psql):
            psql = shutil.which("psql") or psql
        result = subprocess.run([psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port),
                                 "-U", user, "-d", database, "-c", query],
                                env=clean_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise PgServerError(f"psql on {self.name}: {result.stderr.strip()[-1500:]}")
        return result.stdout


# ---------------------------------------------------------------------------------------------

class PostgresServer:
    """A throwaway PostgreSQL (and optionally its synchronous standbys) in `directory` (a fresh
    temporary one by default; when given, it must be empty or absent). stop() removes it.

    `standby=True` is one synchronous standby (every commit waits for it: while it is down, no
    commit finishes); `standbys=N` is N standbys of which any one must confirm a commit
    (`ANY 1 (standby, standby2, …)`), so one standby's loss does not stop the writes."""

    def __init__(self, directory=None, standby=False, database=DATABASE, install=True, standbys=None):
        self.requested_directory = directory
        self.standby_count = standbys if standbys is not None else (1 if standby else 0)
        self.with_standby = self.standby_count > 0
        self.database = database
        self.install = install
        self.directory = None
        self.primary = None
        self.standbys = []
        self.promoted = False
        self.current = "primary"  # the name of the node that takes writes
        self.demoted = []  # former primaries that must not start writable again

    # -- what callers read

    @property
    def standby(self):
        """The first standby (named "standby"), or None."""
        return self.standbys[0] if self.standbys else None

    @property
    def nodes(self):
        return [node for node in (self.primary, *self.standbys) if node]

    def node(self, name):
        for node in self.nodes:
            if node.name == name:
                return node
        raise PgServerError(f"no node named {name!r} (there are: {', '.join(n.name for n in self.nodes)})")

    @property
    def writer(self):
        """The node that takes writes now (the primary, or the standby promoted last)."""
        return self.node(self.current)

    @property
    def url(self):
        return self.primary.url(self.database) if self.primary else None

    @property
    def standby_url(self):
        return self.standby.url(self.database) if self.standby else None

    @property
    def port(self):
        return self.primary.port if self.primary else None

    def sql(self, query, database=None, node="primary"):
        return self.node(node).sql(query, database or self.database)

    # -- life cycle

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        adopt_orphans()
        bindir = find_bindir(install=self.install)
        user = server_user()
        self._make_directory(user)
        try:
            ports = free_ports(1 + max(1, self.standby_count))
            self.primary = Node(bindir, user, self.directory, "primary", ports[0])
            self.primary.run("initdb", "-D", self.primary.data, "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                             "--locale=C", timeout=120)
            self.primary.configure({"cluster_name": "'primary'"})
            self.primary.start()
            self.primary.sql(f'CREATE DATABASE "{self.database}"', database="postgres")
            for index in range(self.standby_count):
                name = "standby" if index == 0 else f"standby{index + 1}"
                self.standbys.append(self._base_backup(name, ports[1 + index], source=self.primary))
                self.standbys[-1].start()
            if self.standbys:
                self._require_standbys()
            self._save_state()
        except BaseException:
            self._discard()
            raise
        return self

    def _make_directory(self, user):
        if self.requested_directory:
            directory = os.path.abspath(self.requested_directory)
            if os.path.exists(directory) and os.listdir(directory):
                raise PgServerError(f"{directory} exists and is not empty")
            os.makedirs(directory, exist_ok=True)
        else:
            directory = tempfile.mkdtemp(prefix="flowstack-pg-")
        self.directory = directory
        if user:
            entry = pwd.getpwnam(user)
            os.chown(directory, entry.pw_uid, entry.pw_gid)
            os.chmod(directory, 0o700)
            probe = subprocess.run(["test", "-w", directory, "-a", "-x", directory], user=user, group=user, extra_groups=[])
            if probe.returncode != 0:
                shutil.rmtree(directory, ignore_errors=True)
                self.directory = None
                raise PgServerError(f"the `{user}` user cannot reach {directory}: a folder above it is not "
                                    f"open to other users (chmod o+x it, or pick another --dir)")

    def _base_backup(self, name, port, source):
        """A new standby `name` of `source`: pg_basebackup -R into DIR/name (not started). Its
        WAL receiver reports `name` (cluster_name), the name synchronous_standby_names lists."""
        node = Node(source.bindir, source.user, self.directory, name, port)
        node.run("pg_basebackup", "-D", node.data, "-h", "127.0.0.1", "-p", str(source.port),
                 "-U", SUPERUSER, "-X", "stream", "-c", "fast", "-R", timeout=120)
        node.configure({"cluster_name": f"'{name}'"})
        return node

    def _followers(self):
        """The standbys of the current writer (every node but it and the demoted ones)."""
        return [node for node in self.nodes if node.name != self.current and node.name not in self.demoted]

    def _require_standbys(self):
        """Makes the writer wait for its standbys on every commit: the one standby ('*'), or any
        one of several (`ANY 1 (…)`: a standby may be lost without stopping the writes; the
        price is that a failover must go to the standby that has the newest WAL, which
        promote_standby() picks). Waits until every one of them streams synchronously."""
        followers = self._followers()
        if not followers:
            names = ""
        elif self.standby_count <= 1 and len(followers) == 1:
            names = "*"
        else:
            names = "ANY 1 (" + ", ".join(f'"{node.name}"' for node in followers) + ")"
        writer = self.writer
        writer.sql(f"ALTER SYSTEM SET synchronous_standby_names = '{names}'", database="postgres")
        writer.sql("SELECT pg_reload_conf()", database="postgres")
        if followers:
            self._wait_synchronous([node.name for node in followers if node.running()])

    def _wait_synchronous(self, names=None):
        """Waits until the standbys `names` (default: every running follower) stream to the
        writer as synchronous (or quorum) standbys."""
        if names is None:
            names = [node.name for node in self._followers() if node.running()]
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            rows = self.writer.sql("SELECT application_name, sync_state FROM pg_stat_replication", database="postgres")
            states = dict(line.split("|", 1) for line in rows.split() if "|" in line)
            if all(states.get(name) in ("sync", "quorum") for name in names):
                return
            if time.monotonic() > deadline:
                tails = "".join(self.node(name).log_tail() for name in names)
                raise PgServerError(f"the standbys {names} did not become synchronous within {READY_TIMEOUT:.0f}s "
                                    f"(replication: {states}){tails}")
            time.sleep(0.1)

    def kill9(self, group=False, node="primary"):
        """SIGKILL the primary's postmaster (`group=True`: and all its backends at once). Returns its pid."""
        pid = self.node(node).kill9(group=group)
        self._save_state()
        return pid

    def freeze(self, node="primary"):
        """SIGSTOP the server and its backends: it still accepts TCP connections (the kernel
        does) but answers nothing, as a hung server or a network partition. thaw() resumes it."""
        if not self.node(node).signal_all(signal.SIGSTOP):
            raise PgServerError(f"{node} is not running")

    def thaw(self, node="primary"):
        if not self.node(node).signal_all(signal.SIGCONT):
            raise PgServerError(f"{node} is not running")

    def restart(self, node="primary"):
        """Starts a node again on the same directory and port, after kill9 (or stop_node).
        Refuses a demoted former primary (see rejoin()). With standbys, a restarted writer
        waits until they stream synchronously again: until then every commit on it waits."""
        if node in self.demoted:
            raise PgServerError(
                f"{node} was the primary before the failover to {self.current}: started as it is, it would "
                f"accept writes next to {self.current} (a split brain: clients would read its stale data "
                f"and write to it). Make it a standby of {self.current} instead: "
                f"python3 scripts/pgserver.py rejoin --dir {self.directory} --node {node}")
        self.node(node).restart_after_crash()
        if node == self.current and self._followers():
            self._wait_synchronous()
        self._save_state()

    def stop_node(self, node="primary"):
        """Fast shutdown of one node, keeping its directory (restart() starts it again)."""
        self.node(node).stop()

    def promote_standby(self, node=None):
        """Promotes a standby to the writer (pg_ctl promote) and waits until it takes writes: the
        one named, else the running standby that has received the most WAL (with `ANY 1`, only
        one standby may hold the newest commits). The old writer is demoted (restart() refuses
        it, rejoin() makes it a standby); the other standbys follow the new writer. Stop or
        kill9 the old writer first for a failover: a running one keeps taking writes."""
        candidates = [n for n in self._followers() if n.running()]
        if node is not None:
            candidates = [self.node(node)]
        if not candidates:
            raise PgServerError("there is no running standby to promote (start with standby=True or standbys=N)")
        if len(candidates) > 1:
            def received(n):
                text = n.sql("SELECT pg_wal_lsn_diff(COALESCE(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), '0/0')",
                             database="postgres").strip()
                return float(text or 0)
            candidates.sort(key=received, reverse=True)
        chosen = candidates[0]
        old = self.writer
        chosen.run("pg_ctl", "promote", "-D", chosen.data, "-w", "-t", str(int(READY_TIMEOUT)),
                   timeout=READY_TIMEOUT + 10)
        deadline = time.monotonic() + READY_TIMEOUT
        while chosen.sql("SELECT pg_is_in_recovery()", database="postgres").strip() != "f":
            if time.monotonic() > deadline:
                raise PgServerError(f"{chosen.name} did not leave recovery within {READY_TIMEOUT:.0f}s{chosen.log_tail()}")
            time.sleep(0.1)
        self.promoted = True
        self.current = chosen.name
        if old.name not in self.demoted:
            self.demoted.append(old.name)
        self._fence(old, chosen)
        self._save_state()
        # The other standbys follow the new writer (a timeline switch: recovery_target_timeline
        # is 'latest' by default); it waits for any one of them.
        for follower in self._followers():
            self._point_at(follower, chosen)
        if self.standby_count > 1:
            self._require_standbys()
        else:
            # One standby, now the writer: no standby left to wait for.
            chosen.sql("ALTER SYSTEM SET synchronous_standby_names = ''", database="postgres")
            chosen.sql("SELECT pg_reload_conf()", database="postgres")
        self._save_state()
        return chosen

    def _fence(self, old, new):
        """Keeps a demoted primary from starting writable even by hand (`pg_ctl start`): with a
        standby.signal and the new writer as its primary, it starts read-only (and follows the
        new writer if its WAL did not diverge). A marker file says why."""
        if not os.path.isdir(old.data):
            return
        self._write_as_server(os.path.join(old.data, "standby.signal"), "")
        self._write_as_server(os.path.join(old.data, "flowstack-demoted"),
                              f"demoted by pgserver.py at {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}: "
                              f"{new.name} (port {new.port}) was promoted. Rejoin as a standby: "
                              f"python3 scripts/pgserver.py rejoin --dir {self.directory} --node {old.name}\n")
        with open(os.path.join(old.data, "postgresql.conf"), "a") as conf:
            conf.write(f"\n# pgserver.py: demoted; {new.name} is the primary\n"
                       f"primary_conninfo = 'host=127.0.0.1 port={new.port} user={SUPERUSER} application_name={old.name}'\n")

    def _write_as_server(self, path, text):
        with open(path, "w") as file:
            file.write(text)
        if self.primary.user:
            entry = pwd.getpwnam(self.primary.user)
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def _point_at(self, follower, writer):
        follower.sql(f"ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port={writer.port} user={SUPERUSER} "
                     f"application_name={follower.name}'", database="postgres")
        follower.sql("SELECT pg_reload_conf()", database="postgres")

    def rejoin(self, node=None):
        """Brings a demoted former primary back as a standby of the current writer: stops it if
        it runs, replaces its data directory with a fresh base backup of the writer (its own
        commits that never reached the writer are discarded: none was acknowledged, as the
        writer was a synchronous standby), starts it and adds it to the synchronous standbys."""
        if node is None:
            if not self.demoted:
                raise PgServerError("no node to rejoin: nothing was demoted (no promote since the start)")
            node = self.demoted[0]
        if node not in self.demoted:
            raise PgServerError(f"{node} is not a demoted primary (demoted: {self.demoted or 'none'})")
        old = self.node(node)
        old.stop()
        shutil.rmtree(old.data, ignore_errors=True)
        writer = self.writer
        fresh = self._base_backup(old.name, old.port, source=writer)
        index = self.nodes.index(old)
        if old is self.primary:
            self.primary = fresh
        else:
            self.standbys[index - 1] = fresh
        fresh.start()
        self.demoted.remove(node)
        self.standby_count = max(self.standby_count, len(self._followers()))
        self._require_standbys()
        self._save_state()
        return fresh

    def add_password_role(self, role, password, database=None):
        """A login role that must give `password` over TCP (scram-sha-256 for it alone; every
        other role keeps trust), owning a fresh database of its own (default: ROLE). Returns
        that database's URL with the password in it."""
        database = database or role
        self.primary.sql(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'", database="postgres")
        self.primary.sql(f'CREATE DATABASE "{database}" OWNER "{role}"', database="postgres")
        hba = os.path.join(self.primary.data, "pg_hba.conf")
        with open(hba) as file:
            rules = file.read()
        with open(hba, "w") as file:  # first match wins: this line before the trust lines
            file.write(f"host all {role} 127.0.0.1/32 scram-sha-256\nhost all {role} ::1/128 scram-sha-256\n" + rules)
        self.primary.sql("SELECT pg_reload_conf()", database="postgres")
        time.sleep(0.2)  # the postmaster rereads pg_hba.conf on SIGHUP, asynchronously
        return self.primary.url(database, user=role, password=password)

    def amcheck(self, database=None):
        """pg_amcheck over every table and index of the database (heap, and each B-tree against
        its heap): PostgreSQL's counterpart of SQLite's PRAGMA integrity_check. Installs the
        amcheck extension into the database (a throwaway one) when missing. Returns None when
        all is well, else what pg_amcheck said."""
        result = self.primary.run("pg_amcheck", "--install-missing", "--heapallindexed", "--rootdescend",
                                  "-h", "127.0.0.1", "-p", str(self.primary.port), "-U", SUPERUSER,
                                  "-d", database or self.database, check=False, timeout=120, as_server=False)
        return None if result.returncode == 0 else (result.stdout + result.stderr).strip()[-2000:] or f"status {result.returncode}"


    def stop(self):
        """Fast shutdown of every node, then removes the directory."""
        self._discard()

    def _discard(self):
        errors = []
        for node in (*reversed(self.standbys), self.primary):
            if node:
                try:
                    node.stop()
                except Exception as error:  # still remove the directory
                    errors.append(str(error))
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = None
        self.primary = None
        self.standbys = []
        if errors:
            raise PgServerError("; ".join(errors))

    # -- the CLI's memory between commands

    def _save_state(self):
        state = {"database": self.database, "promoted": self.promoted, "bindir": self.primary.bindir,
                 "primary_port": self.primary.port, "standby_port": self.standby.port if self.standby else None,
                 "standbys": [[node.name, node.port] for node in self.standbys], "standby_count": self.standby_count,
                 "current": self.current, "demoted": self.demoted,
                 "orphans": {node.name: node.orphans for node in self.nodes}}
        with open(os.path.join(self.directory, STATE_FILE), "w") as file:
            json.dump(state, file)

    @classmethod
    def attach(cls, directory):
        """The server a `start --dir D` left running in D."""
        directory = os.path.abspath(directory)
        try:
            with open(os.path.join(directory, STATE_FILE)) as file:
                state = json.load(file)
        except OSError:
            raise PgServerError(f"no pgserver.py server in {directory} (no {STATE_FILE})") from None
        standbys = state.get("standbys")
        if standbys is None:
            standbys = [["standby", state["standby_port"]]] if state["standby_port"] else []
        server = cls(directory, database=state["database"], install=False,
                     standbys=state.get("standby_count", len(standbys)))
        server.directory = directory
        user = server_user()
        server.primary = Node(state["bindir"], user, directory, "primary", state["primary_port"])
        server.standbys = [Node(state["bindir"], user, directory, name, port) for name, port in standbys]
        for node in server.nodes:
            node.pid = node.read_pid()
            node.orphans = state.get("orphans", {}).get(node.name, [])
        server.promoted = state["promoted"]
        server.current = state.get("current", "standby" if state["promoted"] else "primary")
        server.demoted = state.get("demoted", ["primary"] if state["promoted"] else [])
        return server


def main(argv=None):
    parser = argparse.ArgumentParser(prog="pgserver.py", description="A throwaway PostgreSQL for FlowStack's tests.")
    parser.add_argument("command", choices=["start", "stop", "kill9", "restart", "promote", "rejoin", "status", "add-role"])
    parser.add_argument("--dir", help="the directory to hold it (start: made when absent, must be empty; default: a fresh temporary one)")
    parser.add_argument("--standby", action="store_true", help="start: also a synchronous standby (every commit waits for it)")
    parser.add_argument("--standbys", type=int, help="start: N standbys, any one of which confirms each commit (ANY 1)")
    parser.add_argument("--node", help="kill9, restart: the node (default: the current writer); promote: the standby "
                                       "(default: the most advanced); rejoin: the demoted node (default: the first)")
    parser.add_argument("--database", default=DATABASE, help=f"start: the database to create (default {DATABASE})")
    parser.add_argument("--group", action="store_true", help="kill9: SIGKILL the backends too, not only the postmaster")
    parser.add_argument("--role", help="add-role: a login role that must give --password (scram), with a database of its own")
    parser.add_argument("--password", help="add-role: its password")
    args = parser.parse_args(argv)
    try:
        if args.command == "start":
            server = PostgresServer(args.dir, standby=args.standby, standbys=args.standbys, database=args.database).start()
            print(f"DIR={server.directory}")
            print(f"URL={server.url}")
            print(f"PORT={server.port}")
            print(f"BINDIR={server.primary.bindir}")
            if server.standby:
                print(f"STANDBY_URL={server.standby_url}")
                print(f"STANDBY_PORTS=\"{' '.join(str(node.port) for node in server.standbys)}\"")
            return 0
        if not args.dir:
            parser.error(f"{args.command} needs --dir")
        server = PostgresServer.attach(args.dir)
        if args.command == "stop":
            server.stop()
        elif args.command == "kill9":
            print(f"PID={server.kill9(group=args.group, node=args.node or server.current)}")
        elif args.command == "restart":
            node = args.node or ("primary" if "primary" in server.demoted else server.current)
            server.restart(node)
            print(f"URL={server.node(node).url(server.database)}")
        elif args.command == "promote":
            chosen = server.promote_standby(args.node)
            print(f"PROMOTED={chosen.name}")
            print(f"URL={chosen.url(server.database)}")
            demoted = ' '.join(server.demoted)
            print(f"# {demoted} demoted: rejoin it as a standby with: python3 scripts/pgserver.py rejoin --dir {server.directory}",
                  file=sys.stderr)
        elif args.command == "rejoin":
            node = server.rejoin(args.node)
            print(f"REJOINED={node.name}")
            print(f"URL={node.url(server.database)}")
        elif args.command == "add-role":
            if not args.role or not args.password:
                parser.error("add-role needs --role and --password")
            print(f"URL={server.add_password_role(args.role, args.password)}")
        elif args.command == "status":
            print(f"URL={server.url}")
            print(f"PRIMARY_RUNNING={int(server.primary.running())}")
            if server.standby:
                print(f"STANDBY_URL={server.standby_url}")
                print(f"STANDBY_RUNNING={int(server.standby.running())}")
            print(f"WRITER={server.current}")
            print(f"DEMOTED=\"{' '.join(server.demoted)}\"")
            for node in server.nodes:
                print(f"RUNNING_{node.name.upper()}={int(node.running())}")
        return 0
    except PgServerError as error:
        print(f"pgserver: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

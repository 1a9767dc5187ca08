#!/usr/bin/env python3
"""A throwaway PostgreSQL for the tests and benchmarks: initdb into a fresh directory, listen on
127.0.0.1 only on a free port, trust authentication, a database `flowstack`; optionally a
synchronous standby made with pg_basebackup -R. fsync and synchronous_commit stay on: the tests
that use it check durability.

As a module:

    from pgserver import PostgresServer
    with PostgresServer(standby=True) as pg:   # start(); stop() on leaving, even on an error
        pg.url            # postgresql://postgres@127.0.0.1:PORT/flowstack
        pg.standby_url    # the standby's, or None
        pg.kill9()        # SIGKILL the postmaster (a crash of the database server)
        pg.restart()      # start it again on the same directory and port (crash recovery)
        pg.freeze(); pg.thaw()   # SIGSTOP / SIGCONT it and its backends (a hung server)
        pg.promote_standby()
        pg.sql("SELECT 1")
        pg.amcheck()      # None, or what pg_amcheck found wrong

As a command (leaves it running; the lines printed are shell assignments, for `eval`):

    python3 scripts/pgserver.py start [--standby] [--dir D]   # prints DIR=, URL=, PORT=, BINDIR=, STANDBY_URL=
    python3 scripts/pgserver.py stop --dir D                  # fast shutdown, then removes D
    python3 scripts/pgserver.py kill9 [--group]|restart|promote|status --dir D
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
import socket
import subprocess
import sys
import tempfile
import time

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


def free_ports(count):
    """`count` distinct free TCP ports on 127.0.0.1 (held open together while chosen)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


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
    """A throwaway PostgreSQL (and optionally its synchronous standby) in `directory` (a fresh
    temporary one by default; when given, it must be empty or absent). stop() removes it."""

    def __init__(self, directory=None, standby=False, database=DATABASE, install=True):
        self.requested_directory = directory
        self.with_standby = standby
        self.database = database
        self.install = install
        self.directory = None
        self.primary = None
        self.standby = None
        self.promoted = False

    # -- what callers read

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
        return getattr(self, node).sql(query, database or self.database)

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
            primary_port, standby_port = free_ports(2)
            self.primary = Node(bindir, user, self.directory, "primary", primary_port)
            self.primary.run("initdb", "-D", self.primary.data, "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                             "--locale=C", timeout=120)
            self.primary.configure()
            self.primary.start()
            self.primary.sql(f'CREATE DATABASE "{self.database}"', database="postgres")
            if self.with_standby:
                self._start_standby(standby_port)
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

    def _start_standby(self, port):
        """pg_basebackup -R from the primary, its own port; then the primary waits for it on
        every commit (synchronous_standby_names = '*') once it streams."""
        self.standby = Node(self.primary.bindir, self.primary.user, self.directory, "standby", port)
        self.standby.run("pg_basebackup", "-D", self.standby.data, "-h", "127.0.0.1", "-p", str(self.primary.port),
                         "-U", SUPERUSER, "-X", "stream", "-c", "fast", "-R", timeout=120)
        self.standby.configure({"cluster_name": "'standby'"})
        self.standby.start()
        self.primary.sql("ALTER SYSTEM SET synchronous_standby_names = '*'", database="postgres")
        self.primary.sql("SELECT pg_reload_conf()", database="postgres")
        self._wait_synchronous()

    def _wait_synchronous(self):
        deadline = time.monotonic() + READY_TIMEOUT
        while self.primary.sql("SELECT sync_state FROM pg_stat_replication", database="postgres").split() != ["sync"]:
            if time.monotonic() > deadline:
                raise PgServerError(f"the standby did not become synchronous within {READY_TIMEOUT:.0f}s{self.standby.log_tail()}")
            time.sleep(0.1)

    def kill9(self, group=False, node="primary"):
        """SIGKILL the primary's postmaster (`group=True`: and all its backends at once). Returns its pid."""
        pid = getattr(self, node).kill9(group=group)
        self._save_state()
        return pid

    def freeze(self, node="primary"):
        """SIGSTOP the server and its backends: it still accepts TCP connections (the kernel
        does) but answers nothing, as a hung server or a network partition. thaw() resumes it."""
        if not getattr(self, node).signal_all(signal.SIGSTOP):
            raise PgServerError(f"{node} is not running")

    def thaw(self, node="primary"):
        if not getattr(self, node).signal_all(signal.SIGCONT):
            raise PgServerError(f"{node} is not running")

    def restart(self, node="primary"):
        """Starts the primary again on the same directory and port, after kill9 (or stop_node).
        With a standby (not promoted), also waits until it streams synchronously again: until
        then every commit on the primary waits for it."""
        getattr(self, node).restart_after_crash()
        if self.standby and not self.promoted:
            self._wait_synchronous()
        self._save_state()

    def stop_node(self, node="primary"):
        """Fast shutdown of one node, keeping its directory (restart() starts it again)."""
        getattr(self, node).stop()

    def promote_standby(self):
        """Promotes the standby to a primary (pg_ctl promote) and waits until it takes writes.
        The old primary is left as it is: stop or kill9 it first for a failover."""
        if not self.standby:
            raise PgServerError("there is no standby to promote (start with standby=True)")
        self.standby.run("pg_ctl", "promote", "-D", self.standby.data, "-w", "-t", str(int(READY_TIMEOUT)),
                         timeout=READY_TIMEOUT + 10)
        deadline = time.monotonic() + READY_TIMEOUT
        while self.standby.sql("SELECT pg_is_in_recovery()", database="postgres").strip() != "f":
            if time.monotonic() > deadline:
                raise PgServerError(f"the standby did not leave recovery within {READY_TIMEOUT:.0f}s{self.standby.log_tail()}")
            time.sleep(0.1)
        self.promoted = True
        self._save_state()

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
        for node in (self.standby, self.primary):
            if node:
                try:
                    node.stop()
                except Exception as error:  # still remove the directory
                    errors.append(str(error))
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = None
        self.primary = self.standby = None
        if errors:
            raise PgServerError("; ".join(errors))

    # -- the CLI's memory between commands

    def _save_state(self):
        state = {"database": self.database, "promoted": self.promoted, "bindir": self.primary.bindir,
                 "primary_port": self.primary.port, "standby_port": self.standby.port if self.standby else None,
                 "orphans": {node.name: node.orphans for node in (self.primary, self.standby) if node}}
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
        server = cls(directory, standby=state["standby_port"] is not None, database=state["database"], install=False)
        server.directory = directory
        user = server_user()
        server.primary = Node(state["bindir"], user, directory, "primary", state["primary_port"])
        server.primary.pid = server.primary.read_pid()
        if state["standby_port"]:
            server.standby = Node(state["bindir"], user, directory, "standby", state["standby_port"])
            server.standby.pid = server.standby.read_pid()
        for node in (server.primary, server.standby):
            if node:
                node.orphans = state.get("orphans", {}).get(node.name, [])
        server.promoted = state["promoted"]
        return server


def main(argv=None):
    parser = argparse.ArgumentParser(prog="pgserver.py", description="A throwaway PostgreSQL for FlowStack's tests.")
    parser.add_argument("command", choices=["start", "stop", "kill9", "restart", "promote", "status", "add-role"])
    parser.add_argument("--dir", help="the directory to hold it (start: made when absent, must be empty; default: a fresh temporary one)")
    parser.add_argument("--standby", action="store_true", help="start: also a synchronous standby")
    parser.add_argument("--database", default=DATABASE, help=f"start: the database to create (default {DATABASE})")
    parser.add_argument("--group", action="store_true", help="kill9: SIGKILL the backends too, not only the postmaster")
    parser.add_argument("--role", help="add-role: a login role that must give --password (scram), with a database of its own")
    parser.add_argument("--password", help="add-role: its password")
    args = parser.parse_args(argv)
    try:
        if args.command == "start":
            server = PostgresServer(args.dir, standby=args.standby, database=args.database).start()
            print(f"DIR={server.directory}")
            print(f"URL={server.url}")
            print(f"PORT={server.port}")
            print(f"BINDIR={server.primary.bindir}")
            if server.standby:
                print(f"STANDBY_URL={server.standby_url}")
            return 0
        if not args.dir:
            parser.error(f"{args.command} needs --dir")
        server = PostgresServer.attach(args.dir)
        if args.command == "stop":
            server.stop()
        elif args.command == "kill9":
            print(f"PID={server.kill9(group=args.group)}")
        elif args.command == "restart":
            server.restart()
            print(f"URL={server.url}")
        elif args.command == "promote":
            server.promote_standby()
            print(f"URL={server.standby_url}")
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
        return 0
    except PgServerError as error:
        print(f"pgserver: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

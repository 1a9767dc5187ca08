#!/usr/bin/env python3
"""Start-up and wrong settings (issue 23), through the real binary.

Usage: scripts/startup.py PATH/TO/flowstack

1. One server per SQLite file: a second `serve` (and a `migrate`) on a file a server holds exits 3
   naming the file and the first server's pid; `backup` runs beside it; after kill -9 of the
   first, a new server starts on the file.
2. Database errors name the path and the cause, on one line: a missing folder, a path through a
   file, a folder given as the file, an unwritable folder, a read-only file, a file that is not
   SQLite (exit 3); URLs of an unknown scheme (mysql://, a mistyped postgressql://) and sqlite://
   or file:// URLs are refused (exit 2) without creating a file, and never show a password.
   The permission cases run as user nobody when the script runs as root (root ignores modes).
3. PostgreSQL unreachable at start, each kind bounded by --db-wait and exit 4: a refused port, a
   local listener that accepts and never answers (a black hole), a name that does not resolve;
   a server that refuses the password exits 3 at once (a local fake that answers the startup
   message with SQLSTATE 28P01). No network needed.
4. `--version` prints the version of Sources/flowstack/Version.swift; every subcommand gives the
   same exit status for the same kind of failure (a missing file or bad database 3, an unknown
   option 2 with the subcommand's usage, a bad option value from the environment 2 with the
   subcommand's usage, a failed check 1); the overview names PostgreSQL. An admin token under 32
   bytes is refused at start (exit 2, the reason on stderr, before the database is made).
5. `serve` logs that jemalloc serves its allocations (the server links it as its malloc).
Prints each failure, then `startup: N passed, M failed`; exits 1 when anything failed. About 30 s.
Standard library only.
"""
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness.server import FlowStackProcess, Tally, exit_on_sigterm, free_port  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOBODY = 65534


def run(binary, args, timeout=30, user=None, stdin=b"", cwd=None):
    """Runs the binary to its end: (exit status, stdout, stderr, seconds). `cwd`: where a URL
    taken as a relative file name would land."""
    started = time.monotonic()
    try:
        result = subprocess.run([binary] + args, input=stdin, capture_output=True, timeout=timeout, user=user, cwd=cwd,
                                env=dict(os.environ, FLOWSTACK_ADMIN_TOKEN="t" * 32, FLOWSTACK_DB=""))
    except subprocess.TimeoutExpired as expired:  # killed: it ran on (a second server that served)
        return (f"still running after {timeout} s", (expired.stdout or b"").decode("utf-8", "replace"),
                (expired.stderr or b"").decode("utf-8", "replace"), time.monotonic() - started)
    return (result.returncode, result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace"),
            time.monotonic() - started)


def error_line(stderr):
    """The `Error: ` line of a failure."""
    return next((line for line in stderr.splitlines() if line.startswith("Error:")), "")


class Listener:
    """A local TCP server on a free port: `black_hole` accepts and never answers; otherwise
    it plays a PostgreSQL server that refuses the password (SQLSTATE 28P01)."""

    def __init__(self, black_hole):
        self.socket = socket.socket()
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.port = self.socket.getsockname()[1]
        self.black_hole = black_hole
        self.held = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            if self.black_hole:
                self.held.append(connection)
            else:
                threading.Thread(target=self.refuse, args=(connection,), daemon=True).start()

    @staticmethod
    def refuse(connection):
        try:
            while True:
                header = connection.recv(8, socket.MSG_WAITALL)
                if len(header) < 8:
                    return
                length, code = struct.unpack("!II", header)
                if code in (80877103, 80877104):  # SSLRequest, GSSENCRequest: not here
                    connection.sendall(b"N")
                    continue
                connection.recv(length - 8, socket.MSG_WAITALL)  # the rest of the startup message
                fields = b"SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed for user \"u\"\0\0"
                connection.sendall(b"E" + struct.pack("!I", 4 + len(fields)) + fields)
                return
        finally:
            connection.close()

    def close(self):
        self.socket.close()
        for connection in self.held:
            connection.close()


def one_server_per_file(binary, work, tally):
    folder = os.path.join(work, "lock")
    os.mkdir(folder)
    db = os.path.join(folder, "db.sqlite")
    first = FlowStackProcess(binary, folder, db=db)
    first.start()
    try:
        status, _, stderr, seconds = run(binary, ["serve", "--port", "0", "--db", db], timeout=10)
        line = error_line(stderr)
        tally.check("a second serve on the same SQLite file exits 3",
                    None if status == 3 else f"exit status {status} after {seconds:.1f} s", stderr[-600:])
        tally.check("its message names the file and the first server's pid",
                    None if db in line and f"pid {first.process.pid}" in line and "started " in line else "it does not", line)
        status, _, stderr, _ = run(binary, ["migrate", "--db", db])
        tally.check("migrate on a served SQLite file exits 3 naming the server",
                    None if status == 3 and f"pid {first.process.pid}" in stderr else f"exit status {status}", stderr[-600:])
        status, stdout, stderr, _ = run(binary, ["backup", "--db", db, "--to", os.path.join(folder, "copy.sqlite")])
        tally.check("backup runs beside the server", None if status == 0 else f"exit status {status}", stdout + stderr)
        tally.check("the first server still answers", None if first.alive() else "it died")
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=10)
        first.stop()
        again = FlowStackProcess(binary, folder, db=db)
        try:
            again.start(timeout=20)
            tally.check("after kill -9 of the first, a new server starts on the file", None)
        except RuntimeError as error:
            tally.check("after kill -9 of the first, a new server starts on the file", str(error))
        finally:
            status = again.stop()
            tally.check("it stops with status 0", None if status == 0 else f"status {status}")
        stops_with_signals_blocked(binary, db, tally)
    finally:
        first.stop()


def stops_with_signals_blocked(binary, db, tally):
    """A serve started with SIGTERM blocked (as Foundation's Process starts its children) still
    stops on SIGTERM sent right after it says it listens."""
    block = lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})  # noqa: E731
    process = subprocess.Popen([binary, "serve", "--port", "0", "--db", db, "--log-level", "warning"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=block,
                               env=dict(os.environ, FLOWSTACK_ADMIN_TOKEN="t" * 32))
    try:
        line = b""
        deadline = time.monotonic() + 20
        while b"listening" not in line and time.monotonic() < deadline and process.poll() is None:
            line = process.stdout.readline()
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            status = "still running 10 s after SIGTERM"
        tally.check("a serve started with SIGTERM blocked stops on SIGTERM with status 0", None if status == 0 else f"status {status}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()


def database_errors(binary, work, tally):
    folder = os.path.join(work, "errors")
    os.mkdir(folder)
    # Cases run as nobody (when root) need a path nobody can reach: the work folder is 0700.
    os.chmod(work, 0o755)
    os.chmod(folder, 0o755)
    user = NOBODY if os.getuid() == 0 else None
    a_file = os.path.join(folder, "a-file")
    with open(a_file, "w") as handle:
        handle.write("not a folder\n")
    not_sqlite = os.path.join(folder, "notes.txt")
    with open(not_sqlite, "w") as handle:
        handle.write("these are notes, not a database\n" * 10)
    locked = os.path.join(folder, "locked")
    os.mkdir(locked, 0o555)
    os.chmod(locked, 0o555)
    shared = os.path.join(folder, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o777)
    read_only = os.path.join(shared, "ro.sqlite")
    status, _, stderr, _ = run(binary, ["migrate", "--db", read_only])
    assert status == 0, stderr
    if os.path.exists(read_only + ".lock"):
        os.remove(read_only + ".lock")
    os.chmod(read_only, 0o444)
    missing = os.path.join(folder, "nope", "x.sqlite")
    cases = [
        ("a missing folder", missing, None, f"cannot open {missing}: the folder {os.path.dirname(missing)} does not exist"),
        ("a path through a file", os.path.join(a_file, "x.sqlite"), None, f"{a_file} is a file, not a folder"),
        ("a folder given as the file", folder, None, f"cannot open {folder}: it is a folder, not a file"),
        ("an unwritable folder", os.path.join(locked, "x.sqlite"), user, f"the folder {locked} is not writable"),
        ("a read-only file", read_only, user, f"cannot open {read_only}: the file is read-only"),
        ("a file that is not SQLite", not_sqlite, None, f"cannot open {not_sqlite}: it is not a SQLite database"),
    ]
    # nobody must reach the binary too: a checkout in a 0700 folder (mktemp -d) hides it, so the
    # cases that run as nobody use a copy in the work folder.
    runnable = binary
    if user is not None:
        runnable = os.path.join(work, "flowstack")
        shutil.copy(binary, runnable)
        os.chmod(runnable, 0o755)
    for name, path, as_user, expected in cases:
        for command in (["serve", "--port", "0", "--db", path], ["migrate", "--db", path]):
            status, _, stderr, _ = run(runnable if as_user else binary, command, user=as_user, timeout=10)
            line = error_line(stderr)
            errors = [l for l in stderr.splitlines() if l.strip()]
            tally.check(f"{command[0]} on {name} exits 3 with one line naming the path and the cause",
                        None if status == 3 and expected in line and len(errors) == 1 else f"exit status {status}",
                        stderr[-600:])
    before = set(os.listdir(work))
    urls = [
        ("mysql://app:s3cret@db/app", "unknown scheme mysql://; FlowStack takes a SQLite file path"),
        ("postgressql://app@db/flowstack", "did you mean postgresql://?); FlowStack takes a SQLite file path"),
        ("sqlite:///var/lib/flowstack/db.sqlite", "give the SQLite file's path itself, such as /var/lib/flowstack/db.sqlite"),
        ("file://./db.sqlite", "give the SQLite file's path itself, such as ./db.sqlite"),
    ]
    for url, expected in urls:
        for command in (["serve", "--port", "0", "--db", url], ["migrate", "--db", url], ["backup", "--db", url, "--to", "x"]):
            status, _, stderr, _ = run(binary, command, timeout=10, cwd=work)
            line = error_line(stderr)
            tally.check(f"{command[0]} --db {url} is refused with status 2, saying what to give",
                        None if status == 2 and expected in line and "s3cret" not in stderr
                        else f"exit status {status}", stderr[-600:])
    tally.check("a refused URL creates no file", None if set(os.listdir(work)) == before else "it did",
                sorted(set(os.listdir(work)) - before))
    status, _, stderr, _ = run(binary, ["serve", "--port", "0", "--db", "postgres://flowstack@127.0.0.1:1/flowstack", "--db-wait", "0"])
    tally.check("postgres:// is still a PostgreSQL URL", None if status == 4 and "Connection refused" in stderr else f"exit status {status}",
                stderr[-400:])


def postgres_unreachable(binary, tally):
    wait = 3
    black_hole = Listener(black_hole=True)
    refusing = Listener(black_hole=False)
    try:
        cases = [
            ("a refused port", f"postgresql://u@127.0.0.1:{free_port()}/db", "Connection refused"),
            ("a black-holed host (accepts, never answers)", f"postgresql://u@127.0.0.1:{black_hole.port}/db", "no answer in time"),
            ("a name that does not resolve", "postgresql://u@flowstack-test.invalid/db", "flowstack-test.invalid"),
        ]
        for name, url, cause in cases:
            status, stdout, stderr, seconds = run(binary, ["serve", "--port", "0", "--db", url, "--db-wait", str(wait)], timeout=60)
            line = error_line(stderr)
            warnings = stderr.count("waiting for the database")
            tally.check(f"serve on {name} exits 4 within --db-wait {wait} (+2 s), saying why",
                        None if status == 4 and seconds <= wait + 2 and cause in line and "--db-wait" in line and "listening" not in stdout
                        else f"exit status {status} after {seconds:.1f} s", stderr[-600:])
            tally.check(f"serve on {name} waits at least the --db-wait", None if seconds >= wait - 0.5 else f"gave up after {seconds:.1f} s")
            tally.check(f"serve on {name} logs no more than twice while waiting", None if warnings <= 2 else f"{warnings} warnings")
        status, _, stderr, seconds = run(binary, ["serve", "--port", "0", "--db", f"postgresql://u@127.0.0.1:{refusing.port}/db",
                                                  "--db-wait", "30"], timeout=60)
        tally.check("serve on a refused password exits 3 at once (waiting would not mend it)",
                    None if status == 3 and seconds < 3 and "password authentication failed" in error_line(stderr)
                    else f"exit status {status} after {seconds:.1f} s", stderr[-600:])
        status, _, stderr, seconds = run(binary, ["migrate", "--db", f"postgresql://u@127.0.0.1:{refusing.port}/db"], timeout=60)
        tally.check("migrate on a refused password exits 3", None if status == 3 and seconds < 3 else f"exit status {status} after {seconds:.1f} s",
                    stderr[-400:])
        status, _, stderr, seconds = run(binary, ["migrate", "--db", f"postgresql://u@127.0.0.1:{free_port()}/db"], timeout=60)
        tally.check("migrate on a refused port exits 4", None if status == 4 else f"exit status {status}", stderr[-400:])
    finally:
        black_hole.close()
        refusing.close()


def cli_consistency(binary, work, tally):
    with open(os.path.join(REPO, "Sources", "flowstack", "Version.swift")) as handle:
        version = re.search(r'static let number = "([^"]+)"', handle.read()).group(1)
    status, stdout, _, _ = run(binary, ["--version"])
    tally.check("--version prints Version.swift's number", None if status == 0 and stdout.strip() == version else f"{status} {stdout!r}")
    status, stdout, _, _ = run(binary, ["--help"])
    overview = stdout.split("\n\n")[0]
    tally.check("the overview names both stores", None if "SQLite" in overview and "PostgreSQL" in overview else "it does not", overview)
    missing = os.path.join(work, "missing.json")
    bad_db = os.path.join(work, "nope", "db.sqlite")
    invalid = os.path.join(work, "invalid.json")
    with open(invalid, "w") as handle:
        handle.write('{"name": "x", "screens": 3}')
    commands = {
        "serve": ["serve", "--port", "0", "--db", bad_db],
        "migrate": ["migrate", "--db", bad_db],
        "backup": ["backup", "--db", os.path.join(work, "missing.sqlite"), "--to", os.path.join(work, "copy.sqlite")],
        "flows validate": ["flows", "validate", missing],
        "flows test": ["flows", "test", missing, "--with-sample"],
        "flows graph": ["flows", "graph", missing],
        "flows diff": ["flows", "diff", missing, "--server", "http://127.0.0.1:1"],
        "flows push": ["flows", "push", missing, "--server", "http://127.0.0.1:1"],
        "init": ["init", invalid],
        "experiments stats": ["experiments", "stats"],
    }
    for name, command in commands.items():
        stdin = b"this is not JSON" if name == "experiments stats" else b""
        status, _, stderr, _ = run(binary, command, stdin=stdin)
        tally.check(f"{name} on a missing file or bad database exits 3", None if status == 3 else f"exit status {status}", stderr[-400:])
        status, _, stderr, _ = run(binary, command + ["--bogus"])
        tally.check(f"{name} --bogus exits 2 with its own usage",
                    None if status == 2 and f"Usage: flowstack {name}" in stderr else f"exit status {status}", stderr[-400:])
    for name, env_name, value in [("serve", "FLOWSTACK_PORT", "99999"), ("serve", "FLOWSTACK_DURABILITY", "sometimes")]:
        result = subprocess.run([binary, "serve", "--db", os.path.join(work, "env.sqlite")], capture_output=True, timeout=30,
                                env=dict(os.environ, **{env_name: value}))
        stderr = result.stderr.decode()
        tally.check(f"{env_name}={value} exits 2 with serve's usage, not the top-level one",
                    None if result.returncode == 2 and "Usage: flowstack serve" in stderr and "SUBCOMMANDS" not in stderr
                    else f"exit status {result.returncode}", stderr[-400:])
    weak_db = os.path.join(work, "weak.sqlite")
    for token in ["abc", "t" * 31]:
        result = subprocess.run([binary, "serve", "--port", "0", "--db", weak_db], capture_output=True, timeout=30,
                                env=dict(os.environ, FLOWSTACK_ADMIN_TOKEN=token))
        stderr = result.stderr.decode()
        tally.check(f"an admin token of {len(token)} bytes is refused at start: exit 2, the reason on stderr, no database made",
                    None if result.returncode == 2 and f"FLOWSTACK_ADMIN_TOKEN has {len(token)} bytes" in stderr
                    and "at least 32" in stderr and not os.path.exists(weak_db) else f"exit status {result.returncode}", stderr[-400:])
    result = subprocess.run([binary, "serve", "--port", "0", "--db", weak_db, "--admin-failure-rate", "often"], capture_output=True,
                            timeout=30, env=dict(os.environ, FLOWSTACK_ADMIN_TOKEN="t" * 32))
    tally.check("--admin-failure-rate often exits 2, naming the option's form",
                None if result.returncode == 2 and "RATE/BURST" in result.stderr.decode() else f"exit status {result.returncode}",
                result.stderr.decode()[-400:])
    status, stdout, _, _ = run(binary, ["flows", "validate", invalid])
    tally.check("flows validate on an invalid definition exits 1", None if status == 1 else f"exit status {status}", stdout[-400:])
    status, _, stderr, _ = run(binary, ["flows", "graph", "--format", "png"])
    tally.check("flows graph --format png exits 2", None if status == 2 else f"exit status {status}", stderr[-400:])


def allocator(binary, work, tally):
    """The server's allocations are jemalloc's (linked in for speed: docs/operations.md, Memory):
    `serve` checks it at start and says so at level info."""
    process = subprocess.Popen([binary, "serve", "--port", "0", "--db", os.path.join(work, "allocator.sqlite"), "--log-level", "info"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=dict(os.environ, FLOWSTACK_ADMIN_TOKEN="t" * 32))
    try:
        line = b""
        deadline = time.monotonic() + 20
        while b"listening" not in line and time.monotonic() < deadline and process.poll() is None:
            line = process.stdout.readline()
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    said = [entry for entry in stderr.decode(errors="replace").splitlines() if "memory allocator" in entry]
    tally.check("serve's allocations are jemalloc's: it logs `memory allocator: jemalloc <version>` at start",
                None if len(said) == 1 and "memory allocator: jemalloc 5." in said[0] else f"it logged {said!r}")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    exit_on_sigterm()
    tally = Tally()
    work = tempfile.mkdtemp(prefix="flowstack-startup-")
    try:
        one_server_per_file(binary, work, tally)
        database_errors(binary, work, tally)
        postgres_unreachable(binary, tally)
        cli_consistency(binary, work, tally)
        allocator(binary, work, tally)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(tally.report("startup"))


if __name__ == "__main__":
    main()

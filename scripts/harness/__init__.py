"""FlowStack's Python test harness: one place that starts what the end-to-end checks need.

    harness.server    FlowStackProcess (`flowstack serve` on a free port, a temporary SQLite file or
                      a PostgreSQL URL, logs in the work folder, stop = SIGTERM then SIGKILL), Tally
                      (checks and the closing `N passed, M failed`), database_kind(), free_port(s),
                      die_with_parent, exit_on_sigterm, wait_for, apt_install
    harness.postgres  PostgresServer: a throwaway PostgreSQL, standbys, kill -9, promote, rejoin
                      (also the command scripts/pgserver.py)
    harness.haproxy   HAProxy with deploy/haproxy.cfg rewritten to loopback
    harness.relay     the byte copy of every TCP relay (pipe, splice, serve) and Relay, one in this
                      process that a check can cut (scripts/browser.py)
    harness.tcpproxy  TCP proxies that can cut a group of connections (a network partition)
    harness.faultproxy an HTTP/1.1 proxy that delays each way and, on demand, answers 500 before
                      or after the server commits, garbles the answer or cuts the connection
    harness.devtools  headless Chromium over the DevTools pipe: Chromium, Page (scripts/browser.py)
    harness.web       HTTP helpers: call(), JSONServer, Http (persistent connections),
                      status_of(), problem_failure() (the README's problem document)
    harness.tools     the pinned clients' venv (scripts/python-tools.sh)
    harness.history   the multi-node history check of scripts/history.py, in four parts:
                      cluster, workload, faults, checker (pure; unit-tested in harness/tests)

The scripts in scripts/ run as `python3 scripts/X.py`, so scripts/ is on sys.path and `import
harness` works; bench/ scripts put scripts/ on it first. Standard library only (the pinned clients
aside). Unit tests: `python3 -m unittest discover -s scripts/harness/tests -t scripts`.
"""

"""The history check's settings (environment variables, see scripts/history.py) and its log line."""
import os
import time

HOST = "127.0.0.1"
NODES = 3
LOAD_SECONDS = float(os.environ.get("HISTORY_SECONDS", "60"))
SESSIONS = int(os.environ.get("HISTORY_SESSIONS", "120"))
WALKERS = int(os.environ.get("HISTORY_WALKERS", "12"))
BREAK = {word.strip() for word in os.environ.get("HISTORY_BREAK", "").split(",") if word.strip()}
KNOWN_BREAKS = {"async-standby", "retry-without-key", "no-bypass"}
# The last node runs without --node-url (no leases) beside owners, as during a rolling restart
# that turns leases on: the owners must read the database while it serves.
MIXED = os.environ.get("HISTORY_MIXED") == "1"
REQUEST_TIMEOUT = 10.0       # a client gives up on an answer after this long (then: unknown)
READ_SHARE = 0.3             # of the walkers' operations, the share that are reads
FROM_SHARE = 0.25            # of the actions, the share that name the screen they come from
BYPASS_SESSIONS = 12         # sessions sent straight to two nodes in each bypass window
ISOLATE_SECONDS = 4.0        # how long a node is cut off from the database
ISOLATED_SLOWEST = 2.5       # seconds an answer of a cut-off node may take (the issue: 503 within 2 s)
ISOLATED_GRACE = 2.5         # after the cut, answers may still be 200 for this long (commits finishing)
REJOIN_WITHIN = 10.0         # seconds after the cut ends for the node to serve again
PAUSE_SECONDS = 3.5          # how long a node is stopped (SIGSTOP): past its leases (2 s, `serve --lease-ms`)
RECOVER_WITHIN = 20.0        # seconds after a fault for the cluster to acknowledge actions again
SETTLE_SECONDS = 10.0        # at the end, time to settle unknown actions (retried with their key)
LOG_PAGE = 25                # ?limit= when reading the logs back (small: paging is exercised)
USER_CHECKS = 60             # onboarded users checked for shared user state
HARD_LIMIT = 175.0           # the watchdog's limit for the whole run, in seconds
STARTED = time.monotonic()
UNKNOWN_STATUSES = {500, 502, 503, 504}  # for an action: may or may not have been applied


def log(message):
    print(f"history: [{time.monotonic() - STARTED:6.1f}s] {message}", flush=True)

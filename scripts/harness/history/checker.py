"""The history checker: pure functions over a recorded history (no I/O, no clock, no threads).

What it takes (recorded by harness.history.workload, or made by hand in harness/tests):
  - a session: anything with `sid`;
  - its operations: objects with the fields of workload.Operation: kind (action | read), type,
    params, key, outcome (ok | failed | unknown), version, root, screens, served_by, invoked,
    completed, attempts [(invoked, completed, status, target, served_by, key)], replayed,
    refused_after_unknown;
  - its log: the entries of GET /v1/sessions/{id}/actions ({version, type, params, ...});
  - the final read (an Operation of kind read), and the replay's states {version: (root, screens)};
  - the faults (dicts recorded by harness.history.faults) for check_faults.

Properties (check_session, check_replay; each a name in Checks):
  versions          the log's versions are exactly 1..n, and the state read at the end is at n
  acknowledged      every acknowledged action is in the log at the version its 200 answered, with
                    the same type and params; no two acknowledged at one version
  applied-once      log entries no 200 explains are matched one each to unknown operations
  real-time-order   an action acknowledged before another one was sent has the lower version
  read-your-writes  every read answered a version >= every version acknowledged before it was sent
  replay            every answer and the final state equal the log replayed through the engine
  user-state        (checked by the caller) onboarded on one node -> home on another
"""
import collections
import json

from .settings import ISOLATED_GRACE, ISOLATED_SLOWEST, RECOVER_WITHIN, REJOIN_WITHIN

PROPERTIES = collections.OrderedDict([
    ("versions", "log versions are 1..n and the final state is at n"),
    ("acknowledged", "every acknowledged action is in the log at its version"),
    ("applied-once", "nothing applied twice (log <= acknowledged + unknown, matched one to one)"),
    ("real-time-order", "acknowledged before sent -> lower version"),
    ("read-your-writes", "every read >= every version acknowledged before it was sent"),
    ("replay", "every answer and the final state equal the log replayed through the engine"),
    ("user-state", "onboarded through one node -> a session on another node starts at home"),
])


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


def check_session(session, operations, entries, final_read, checks, started=0.0):
    """The properties of one session's history against its log. `operations` are all of its
    operations (every client), `entries` its log, `final_read` the read at the end; `started`
    is subtracted from the times the examples name."""
    sid = session.sid
    versions = [entry["version"] for entry in entries]
    n = len(entries)
    if versions != list(range(1, n + 1)):
        checks.fail("versions", sid, f"{sid}: log versions {versions[:12]}{'...' if n > 12 else ''} are not 1..{n}")
    if final_read.outcome == "ok" and final_read.version != (versions[-1] if versions else 0):
        checks.fail("versions", sid, f"{sid}: the state read at the end (node{(final_read.served_by or 0) + 1}) is at version "
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
                                                    f"(t={earlier.completed - started:.3f}) before {later.type} was sent "
                                                    f"(t={later.invoked - started:.3f}), which got version {later.version}")
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
                        f"{sid}: read on node{(read.served_by or 0) + 1} at t={sent - started:.3f} answered version "
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


def property_results(checks):
    """[(name: explanation, failure or None, examples)] for every property, in PROPERTIES order."""
    results = []
    for name, broken in checks.violations.items():
        failure = None if not broken else f"{checks.counts[name]} violations on {len(broken)} sessions"
        results.append((f"{name}: {PROPERTIES[name]}", failure, "\n     ".join(checks.examples[name])))
    return results


def check_faults(faults, ok_times, load_ended):
    """The fault checks over the recorded faults: a node cut off the database answers 503 (never
    200) after ISOLATED_GRACE s, within ISOLATED_SLOWEST s each, and serves again within
    REJOIN_WITHIN s of the heal; after a kill -9, a pause or the failover, an action is acknowledged
    within RECOVER_WITHIN s (`ok_times`: when each acknowledged action completed).
    Returns ([(name, failure or None, details)], [what could not be checked])."""
    results, notes = [], []
    for fault in faults:
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
    ok_times = sorted(ok_times)
    for fault in faults:
        if fault["kind"] in ("kill-node", "failover", "pause-node"):
            since = fault.get("promoted") or fault.get("restarted") or fault.get("resumed")
            later = next((t for t in ok_times if t > since), None)
            what = ("the promotion" if fault["kind"] == "failover"
                    else f"node{fault['node'] + 1}'s {'restart' if fault['kind'] == 'kill-node' else 'resumption'}")
            if later is None and since + RECOVER_WITHIN > load_ended:
                notes.append(f"not checked: acknowledgements after {what} (the load ended {load_ended - since:.1f}s after it)")
                continue
            results.append((f"actions are acknowledged within {RECOVER_WITHIN:.0f}s of {what}",
                            None if later is not None and later - since <= RECOVER_WITHIN else "they were not",
                            f"first after {later - since:.2f}s" if later else ""))
    return results, notes

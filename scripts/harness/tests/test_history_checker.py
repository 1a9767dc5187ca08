"""The history checker (harness.history.checker) on small hand-made histories: a valid one
passes every property; each kind of anomaly it exists to catch fails the property it breaks
(and only that one, so a test names what broke).

    python3 -m unittest discover -s scripts/harness/tests -t scripts
"""
import unittest

from harness.history.checker import PROPERTIES, Checks, check_faults, check_replay, check_session, property_results
from harness.history.settings import RECOVER_WITHIN
from harness.history.workload import Operation


class FakeSession:
    def __init__(self, sid="s1"):
        self.sid = sid


def tree(feature):
    """A root tree and screens as the server answers them, for a session showing `feature`."""
    return {"id": f"r-{feature}"}, [{"feature": feature}]


def action(type_, version=None, invoked=0.0, completed=None, outcome="ok", params=None, key=None, served_by=0,
           feature=None):
    """An action whose only attempt was sent at `invoked` and answered at `completed`."""
    op = Operation("s1", "action", "walker-0", type_, params, None, key or f"k-{type_}-{invoked}")
    op.invoked = invoked
    op.outcome = outcome
    status = {"ok": 200, "failed": 422, "unknown": None}[outcome]
    done = completed if completed is not None else invoked + 0.01
    op.attempts.append((invoked, done, status, "lb", served_by, op.key))
    op.status = status
    if outcome != "unknown":
        op.completed = done
    if outcome == "ok":
        op.version = version
        op.served_by = served_by
        op.root, op.screens = tree(feature or f"v{version}")
    return op


def read(version, invoked, served_by=1, feature=None):
    op = Operation("s1", "read", "walker-0")
    op.invoked, op.completed, op.outcome, op.status = invoked, invoked + 0.01, "ok", 200
    op.attempts.append((invoked, invoked + 0.01, 200, "lb", served_by, None))
    op.version, op.served_by = version, served_by
    op.root, op.screens = tree(feature or f"v{version}")
    return op


def entry(version, type_, params=None):
    return {"version": version, "type": type_, **({"params": params} if params else {})}


def replay_of(entries):
    """What the replay of `entries` gives when the engine agrees with the cluster."""
    return {0: tree("v0"), **{e["version"]: tree(f"v{e['version']}") for e in entries}}


def valid_history():
    """Three acknowledged actions, one unknown that landed (version 4), one refused, reads that
    are never stale, and the log that matches."""
    ops = [
        action("onboarding.showSecond", 1, invoked=1.0, completed=1.1),
        read(1, invoked=1.2),
        action("onboarding.completed", 2, invoked=1.3, completed=1.4),
        action("home.selectTab", 3, invoked=1.5, completed=1.6, params={"index": 1}),
        action("home.presentModal", invoked=1.7, outcome="unknown", params={"content": "m1"}),
        action("back", invoked=1.9, outcome="failed"),
        read(4, invoked=2.5),
    ]
    entries = [entry(1, "onboarding.showSecond"), entry(2, "onboarding.completed"),
               entry(3, "home.selectTab", {"index": 1}), entry(4, "home.presentModal", {"content": "m1"})]
    final = read(4, invoked=3.0, served_by=2)
    return ops, entries, final


def run(ops, entries, final, states=None, problem=None):
    """The names of the properties that fail, and the Checks."""
    checks = Checks()
    checks.declare(*PROPERTIES)
    session = FakeSession()
    counts = check_session(session, ops, entries, final, checks)
    check_replay(session, ops, final, replay_of(entries) if states is None else states, problem, checks)
    return {name for name, sids in checks.violations.items() if sids}, checks, counts


class ValidHistory(unittest.TestCase):
    def test_a_valid_history_passes_every_property(self):
        failed, checks, counts = run(*valid_history())
        self.assertEqual(failed, set(), dict(checks.examples))
        self.assertEqual((counts["acked"], counts["unknown"], counts["failed"], counts["landed"], counts["log"]),
                         (3, 1, 1, 1, 4))
        self.assertTrue(all(failure is None for _, failure, _ in property_results(checks)))

    def test_an_empty_history_passes(self):
        final = read(0, invoked=1.0)
        final.root, final.screens = tree("v0")
        failed, checks, _ = run([], [], final)
        self.assertEqual(failed, set(), dict(checks.examples))

    def test_an_unknown_action_that_did_not_land_is_fine(self):
        ops, entries, final = valid_history()
        entries, final = entries[:3], read(3, invoked=3.0)
        ops = [op for op in ops if not (op.kind == "read" and op.version == 4)]
        failed, checks, counts = run(ops, entries, final)
        self.assertEqual(failed, set(), dict(checks.examples))
        self.assertEqual(counts["landed"], 0)


class Anomalies(unittest.TestCase):
    def assertOnlyFails(self, name, ops, entries, final, **replay):
        failed, checks, _ = run(ops, entries, final, **replay)
        self.assertIn(name, failed, f"{name} did not fail")
        self.assertEqual(failed, {name}, f"more than {name} failed: {dict(checks.examples)}")
        self.assertTrue(checks.examples[name])
        return checks

    def test_a_lost_acknowledged_write_fails_acknowledged(self):
        ops, entries, final = valid_history()
        # the log lost version 3 (home.selectTab, acknowledged); the unknown modal took its place
        entries = [entries[0], entries[1], entry(3, "home.presentModal", {"content": "m1"})]
        ops = [op for op in ops if not (op.kind == "read" and op.version == 4)]
        final = read(3, invoked=3.0)
        self.assertOnlyFails("acknowledged", ops, entries, final)

    def test_two_operations_acknowledged_at_one_version_fail_acknowledged(self):
        ops, entries, final = valid_history()
        # a racer's write got version 2 too: one of the two 200s is not in the log
        ops.append(action("onboarding.completed", 2, invoked=1.35, completed=1.45, key="race-1"))
        checks = self.assertOnlyFails("acknowledged", ops, entries, final)
        self.assertIn("2 different operations acknowledged at version 2", " ".join(checks.examples["acknowledged"]))

    def test_a_stale_read_fails_read_your_writes(self):
        ops, entries, final = valid_history()
        # sent at 2.5, after version 3 was acknowledged (1.6): answered version 2 (a stale cache)
        ops[-1] = read(2, invoked=2.5)
        self.assertOnlyFails("read-your-writes", ops, entries, final)

    def test_a_final_read_behind_the_log_fails_versions(self):
        ops, entries, final = valid_history()
        # version 4 (the unknown action that landed) was never acknowledged: only `versions` sees it
        final = read(3, invoked=3.0)
        self.assertOnlyFails("versions", ops, entries, final)

    def test_a_final_read_behind_an_acknowledged_write_fails_read_your_writes(self):
        ops, entries, final = valid_history()
        final = read(2, invoked=3.0)
        failed, checks, _ = run(ops, entries, final)
        self.assertEqual(failed, {"versions", "read-your-writes"}, dict(checks.examples))

    def test_a_version_going_backwards_fails_real_time_order(self):
        ops, entries, final = valid_history()
        # home.selectTab was sent (1.5) after onboarding.completed was acknowledged (1.4) but got
        # the lower version: the log has them the other way round
        ops[2] = action("onboarding.completed", 3, invoked=1.3, completed=1.4)
        ops[3] = action("home.selectTab", 2, invoked=1.5, completed=1.6, params={"index": 1})
        entries = [entries[0], entry(2, "home.selectTab", {"index": 1}), entry(3, "onboarding.completed"), entries[3]]
        self.assertOnlyFails("real-time-order", ops, entries, final)

    def test_a_gap_in_the_log_fails_versions(self):
        ops, entries, final = valid_history()
        entries = [entries[0], entries[1], entries[2], dict(entries[3], version=5)]
        failed, checks, _ = run(ops, entries, final, states=replay_of(entries))
        self.assertIn("versions", failed, dict(checks.examples))

    def test_a_duplicate_version_in_the_log_fails_versions(self):
        ops, entries, final = valid_history()
        entries = entries[:3] + [dict(entries[2])] + [dict(entries[3], version=5)]
        failed, checks, _ = run(ops, entries, final, states=replay_of(entries))
        self.assertIn("versions", failed, dict(checks.examples))

    def test_an_action_applied_twice_fails_applied_once(self):
        ops, entries, final = valid_history()
        # a retry with a new key applied home.selectTab a second time (version 5): nothing explains it
        entries = entries + [entry(5, "home.selectTab", {"index": 1})]
        final = read(5, invoked=3.0)
        self.assertOnlyFails("applied-once", ops, entries, final)

    def test_an_unknown_action_that_landed_twice_fails_applied_once(self):
        ops, entries, final = valid_history()
        entries = entries + [entry(5, "home.presentModal", {"content": "m1"})]
        final = read(5, invoked=3.0)
        self.assertOnlyFails("applied-once", ops, entries, final)

    def test_an_answer_that_differs_from_the_replay_fails_replay(self):
        ops, entries, final = valid_history()
        states = replay_of(entries)
        states[2] = tree("home.second")   # the engine, replaying the log, shows another screen at 2
        checks = self.assertOnlyFails("replay", ops, entries, final, states=states)
        self.assertIn("differs from the replay", checks.examples["replay"][0])

    def test_a_log_that_does_not_replay_fails_replay(self):
        ops, entries, final = valid_history()
        states = {k: v for k, v in replay_of(entries).items() if k < 3}
        self.assertOnlyFails("replay", ops, entries, final, states=states,
                             problem="version 3 (home.selectTab) does not replay: the engine answered 422")


class FaultChecks(unittest.TestCase):
    def isolated(self, answers, rejoined=12.0):
        return {"kind": "isolate-node", "node": 1, "start": 0.0, "end": 4.0, "healed": 4.0, "answers": answers,
                "rejoined": rejoined}

    def test_a_cut_off_node_that_answers_503_in_time_passes(self):
        answers = [("action", t, t + 0.1, 200 if t < 2.5 else 503) for t in (0.5, 1.0, 2.6, 3.0, 3.5)]
        results, notes = check_faults([self.isolated(answers)], [], 30.0)
        self.assertEqual([f for _, f, *_ in results], [None, None, None])
        self.assertEqual(notes, [])

    def test_a_cut_off_node_that_answers_200_fails(self):
        answers = [("action", 3.0, 3.1, 200), ("healthz", 3.2, 3.3, 503)]
        results, _ = check_faults([self.isolated(answers)], [], 30.0)
        self.assertEqual(results[0][1], "1 answers were not 503")

    def test_a_cut_off_node_that_answers_slowly_fails(self):
        answers = [("action", 2.6, 3.1, 503), ("action", 0.5, 3.5, 503)]
        results, _ = check_faults([self.isolated(answers)], [], 30.0)
        self.assertEqual(results[1][1], "1 took longer")

    def test_a_node_that_does_not_rejoin_fails(self):
        results, _ = check_faults([self.isolated([("action", 3.0, 3.1, 503)], rejoined=None)], [], 30.0)
        self.assertEqual(results[2][1], "it did not")

    def test_recovery_after_a_kill(self):
        kill = {"kind": "kill-node", "node": 0, "start": 10.0, "end": 12.0, "restarted": 12.0}
        ok, _ = check_faults([kill], [5.0, 13.0], 60.0)
        self.assertEqual(ok[0][1], None)
        late, _ = check_faults([kill], [5.0, 12.0 + RECOVER_WITHIN + 1], 60.0)
        self.assertEqual(late[0][1], "they were not")
        unchecked, notes = check_faults([kill], [5.0], 13.0)  # the load ended right after the restart
        self.assertEqual((unchecked, len(notes)), ([], 1))

    def test_recovery_after_a_pause(self):
        pause = {"kind": "pause-node", "node": 1, "start": 10.0, "end": 13.5, "resumed": 13.5}
        ok, _ = check_faults([pause], [5.0, 14.0], 60.0)
        self.assertEqual((ok[0][0], ok[0][1]), (f"actions are acknowledged within {RECOVER_WITHIN:.0f}s of node2's resumption", None))
        late, _ = check_faults([pause], [5.0, 13.5 + RECOVER_WITHIN + 1], 60.0)
        self.assertEqual(late[0][1], "they were not")


if __name__ == "__main__":
    unittest.main()

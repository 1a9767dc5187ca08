#!/usr/bin/env python3
"""FlowStack's experiment statistics against GrowthBook's stats engine, gbstats 0.8.0.

Usage: .build/python/bin/python scripts/gbstats_check.py [PATH/TO/flowstack]

Needs gbstats==0.8.0 (pinned in scripts/python-tools.sh; it brings numpy and scipy): run it with
that venv's python. The reference for each variant against the baseline is gbstats'
`frequentist.tests.TwoSidedTTest` (relative uplift, its 95% CI, the two-sided p-value) and
`bayesian.tests.EffectBayesianABTest` (chance to win), both on `ProportionStatistic`s with their
default configurations; for the experiment, `utils.check_srm(sessions, weights)`. Every number
must agree to 1e-6 (relative above 1, absolute below). Where gbstats answers with an
`error_message` instead, FlowStack must give no numbers and that error, with a reason.

1. The grid, through `flowstack experiments stats --json` (the code the report route runs, given
   every input in one run): every pair of (sessions, conversions) samples over sizes 0, 1, 2, 3,
   5, 10, 37, 100, 1,000, 12,345, 10^6 and 10^7 with 0, 1, a third, a half, all but one and all
   converting (zero conversions, all conversions, tiny samples, unequal sizes, large n); random
   pairs up to 10^8; and experiments of 3 to 5 variants under several weight sets (one of them
   zero), with a random baseline and sessions split fairly, unfairly or not at all, for the
   sample-ratio check (whose warning must be there exactly when its p-value is below 0.001).
2. End to end, through a real server (harness.server): experiments targeted at cohorts
   of users (two variants; three with weights 0.2/0.3/0.5; a tiny one; one where nobody converts;
   one whose weights are changed after its sessions, so its sessions no longer match them), users
   that create sessions and walk the onboarding as far as their variant's rule says, then
   `GET /v1/experiments/{key}/report` with the default metric, `?metric=onboarding.second`,
   `?metric=home.first` and `?baseline=`: its counts must be what the walk did, and its numbers
   gbstats' for those counts; an unknown metric or baseline must be 400.

Prints each failure, then `gbstats: N passed, M failed`; exits 1 when anything failed.
"""
import importlib.metadata
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import warnings

from harness.server import FlowStackProcess, Tally, exit_on_sigterm
from harness.web import JSONServer

from harness.tools import use_pinned_tools

use_pinned_tools("gbstats_check", "gbstats")

from gbstats.bayesian.tests import EffectBayesianABTest  # noqa: E402
from gbstats.frequentist.tests import TwoSidedTTest  # noqa: E402
from gbstats.models.statistics import ProportionStatistic  # noqa: E402
from gbstats.utils import check_srm  # noqa: E402

# gbstats computes a risk figure FlowStack does not report with scipy's truncnorm, which warns on
# the extreme counts of the grid; the numbers compared are not affected.
warnings.filterwarnings("ignore", category=RuntimeWarning, module="scipy")

GBSTATS_VERSION = "0.8.0"
TOLERANCE = 1e-6
SRM_WARNING = 0.001
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def near(got, want):
    """Whether FlowStack's `got` is gbstats' `want` to TOLERANCE (relative above 1, absolute below)."""
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    return abs(got - want) <= TOLERANCE * max(1.0, abs(want))


def gbstats_comparison(baseline, treatment):
    """gbstats' two tests of `treatment` against `baseline`, each a (sessions, conversions) pair."""
    a = ProportionStatistic(n=baseline[0], sum=baseline[1])
    b = ProportionStatistic(n=treatment[0], sum=treatment[1])
    return TwoSidedTTest(a, b).compute_result(), EffectBayesianABTest(a, b).compute_result()


def comparison_failure(comparison, baseline, treatment):
    """None when FlowStack's `comparison` of `treatment` with `baseline` is gbstats', else why not."""
    frequentist, bayesian = gbstats_comparison(baseline, treatment)
    if not isinstance(comparison, dict):
        return f"no comparison object: {comparison!r}"
    errors = {message for message in (frequentist.error_message, bayesian.error_message) if message}
    if errors:
        if comparison.get("error") not in errors:
            return f"gbstats refuses with {sorted(errors)}, FlowStack says {comparison.get('error')!r}"
        if not comparison.get("reason"):
            return "an error without a reason"
        numbers = [name for name in ("uplift", "ci", "pValue", "chanceToWin") if name in comparison]
        return f"an error with numbers too: {numbers}" if numbers else None
    if "error" in comparison:
        return f"FlowStack refuses ({comparison['error']}) where gbstats gives numbers (uplift {frequentist.expected})"
    expected = {
        "uplift": frequentist.expected,
        "ci[0]": frequentist.ci[0],
        "ci[1]": frequentist.ci[1],
        "pValue": frequentist.p_value,
        "chanceToWin": bayesian.chance_to_win,
    }
    ci = comparison.get("ci") if isinstance(comparison.get("ci"), list) and len(comparison["ci"]) == 2 else [None, None]
    got = {"uplift": comparison.get("uplift"), "ci[0]": ci[0], "ci[1]": ci[1],
           "pValue": comparison.get("pValue"), "chanceToWin": comparison.get("chanceToWin")}
    wrong = [f"{name} {got[name]!r}, gbstats {want!r}" for name, want in expected.items() if not near(got[name], want)]
    if abs(bayesian.expected - frequentist.expected) > 1e-12 * max(1, abs(frequentist.expected)):
        wrong.append(f"gbstats' own tests disagree on the uplift ({frequentist.expected} and {bayesian.expected})")
    return "; ".join(wrong) or None


def srm_failure(document):
    """None when the document's `srm` is gbstats' check_srm over its weighted variants, else why not."""
    srm = document.get("srm")
    if not isinstance(srm, dict):
        return f"no srm object: {srm!r}"
    weighted = [v for v in document["variants"] if "weight" in v]
    if len(weighted) < 2:
        return None if srm.get("pValue") is None and srm.get("reason") else f"fewer than two weighted variants, yet {srm}"
    want = check_srm([v["sessions"] for v in weighted], [v["weight"] for v in weighted])
    if math.isnan(want):
        return None if srm.get("pValue") is None and srm.get("reason") else f"gbstats gives NaN, FlowStack {srm}"
    if not near(srm.get("pValue"), want):
        return f"pValue {srm.get('pValue')!r}, gbstats {want!r}"
    warned = bool(srm.get("warning"))
    if warned != (want < SRM_WARNING):
        return f"p = {want:.3g}, yet the warning is {'there' if warned else 'missing'}: {srm.get('warning')!r}"
    return None


def check_document(tally, name, document, counts=None):
    """Every number of a report (or of `experiments stats --json`) against gbstats on its own
    counts; `counts`, when given, are the (key, sessions, conversions, weight) that went in."""
    variants = document.get("variants") if isinstance(document, dict) else None
    if not isinstance(variants, list) or not variants:
        tally.check(name, "no variants", document)
        return
    if counts is not None:
        seen = [(v.get("key"), v.get("sessions"), v.get("conversions"), v.get("weight")) for v in variants]
        tally.check(f"{name}: counts", None if seen == counts else "they differ from what went in", f"{seen} vs {counts}")
    keys = [v.get("key") for v in variants]
    baseline = keys.index(document.get("baseline")) if document.get("baseline") in keys else None
    if baseline is None:
        tally.check(f"{name}: baseline", f"{document.get('baseline')!r} is not one of {keys}")
        return
    reference = (variants[baseline]["sessions"], variants[baseline]["conversions"])
    for index, variant in enumerate(variants):
        sessions, conversions = variant["sessions"], variant["conversions"]
        rate = variant.get("rate", "absent")
        rate_ok = rate is None if sessions == 0 else near(rate, conversions / sessions)
        failure = None if rate_ok else f"rate {rate!r} for {conversions}/{sessions}"
        if index == baseline:
            if "comparison" in variant:
                failure = "the baseline has a comparison"
        else:
            failure = failure or comparison_failure(variant.get("comparison"), reference, (sessions, conversions))
        tally.check(f"{name}: {variant['key']} ({conversions}/{sessions}) vs {keys[baseline]} ({reference[1]}/{reference[0]})",
                    failure, json.dumps(variant.get("comparison")))
    tally.check(f"{name}: srm", srm_failure(document), json.dumps(document.get("srm")))


# ---------------------------------------------------------------- 1. the grid, through the CLI

def grid(rng):
    """Inputs of `flowstack experiments stats`: (name, input document)."""
    sizes = [0, 1, 2, 3, 5, 10, 37, 100, 1000, 12345, 10**6, 10**7]
    samples = sorted({(n, c) for n in sizes for c in (0, 1, n // 3, n // 2, n - 1, n) if 0 <= c <= n})
    cases = []
    for a in samples:
        for b in samples:
            cases.append((f"grid {a} vs {b}", {"variants": [
                {"key": "control", "sessions": a[0], "conversions": a[1], "weight": 0.5},
                {"key": "treatment", "sessions": b[0], "conversions": b[1], "weight": 0.5}]}))
    for index in range(300):
        pair = []
        for _ in range(2):
            n = int(10 ** rng.uniform(0, 8))
            pair.append((n, rng.randint(0, n)))
        cases.append((f"random pair {index}", {"variants": [
            {"key": "a", "sessions": pair[0][0], "conversions": pair[0][1], "weight": 0.5},
            {"key": "b", "sessions": pair[1][0], "conversions": pair[1][1], "weight": 0.5}]}))
    weight_sets = [[0.5, 0.5], [0.1, 0.9], [0.2, 0.3, 0.5], [1 / 3] * 3, [0.25] * 4, [0.5, 0.5, 0], [0.4, 0.4, 0.2, 0],
                   [0.1, 0.2, 0.3, 0.2, 0.2]]
    for index in range(400):
        weights = rng.choice(weight_sets)
        total = rng.choice([0, 7, 100, 5000, 200000, 3 * 10**6])
        split = rng.choice(["fair", "skewed", "one"])
        variants = []
        for position, weight in enumerate(weights):
            share = weight if split == "fair" else (rng.random() if split == "skewed" else float(position == 0))
            sessions = max(0, int(round(total * share * rng.uniform(0.97, 1.03))))
            conversions = rng.choice([0, sessions, rng.randint(0, sessions), int(sessions * 0.1)])
            variants.append({"key": f"v{position}", "sessions": sessions, "conversions": conversions, "weight": weight})
        document = {"variants": variants}
        if rng.random() < 0.5:
            document["baseline"] = rng.choice(variants)["key"]
        cases.append((f"experiment {index} ({len(weights)} variants, {split})", document))
    # One variant: no split to check, no comparison.
    cases.append(("one variant", {"variants": [{"key": "only", "sessions": 10, "conversions": 3, "weight": 1}]}))
    return cases


def check_grid(binary, tally, rng):
    cases = grid(rng)
    run = subprocess.run([binary, "experiments", "stats", "--json"], input=json.dumps([doc for _, doc in cases]),
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        tally.check("flowstack experiments stats --json", f"exit status {run.returncode}", run.stderr[-2000:])
        return
    answers = json.loads(run.stdout)
    tally.check("one answer per input", None if len(answers) == len(cases) else f"{len(answers)} for {len(cases)}")
    for (name, document), answer in zip(cases, answers):
        counts = [(v["key"], v["sessions"], v["conversions"], v.get("weight")) for v in document["variants"]]
        if answer.get("baseline") != document.get("baseline", document["variants"][0]["key"]):
            tally.check(f"{name}: baseline", f"{answer.get('baseline')!r}")
        check_document(tally, name, answer, counts)


# ---------------------------------------------------------------- 2. end to end, through the server

# How far each user walks the onboarding: 0 stays on onboarding.first, 1 reaches
# onboarding.second, 2 completes it (home.first, onboarded).
EXPERIMENTS = {
    "two": ({"variants": [{"key": "control", "weight": 0.5}, {"key": "treatment", "weight": 0.5}]}, 80,
            lambda variant, i: (i % 3) if variant == "control" else (1 if i % 4 == 0 else 2)),
    "three": ({"variants": [{"key": "a", "weight": 0.2}, {"key": "b", "weight": 0.3}, {"key": "c", "weight": 0.5}]}, 90,
              lambda variant, i: {"a": 2 if i % 2 else 0, "b": 1 if i % 5 == 0 else 2}.get(variant, 2)),
    "tiny": ({"variants": [{"key": "control", "weight": 0.5}, {"key": "treatment", "weight": 0.5}]}, 3,
             lambda variant, i: i % 3),
    "nobody": ({"variants": [{"key": "control", "weight": 0.5}, {"key": "treatment", "weight": 0.5}]}, 10,
               lambda variant, i: 0),
    "reweighted": ({"variants": [{"key": "control", "weight": 0.5}, {"key": "treatment", "weight": 0.5}]}, 60,
                   lambda variant, i: 2 if i % 2 else 1),
}
# Changed after the sessions were made: the sessions split 50/50 no longer match.
REWEIGHTED = {"variants": [{"key": "control", "weight": 0.85}, {"key": "treatment", "weight": 0.15}]}


def walk(server, tally, key, users, rule):
    """Users of cohort `key` create sessions and walk; returns per variant [sessions, reached second, onboarded]."""
    done = {}
    for index in range(users):
        status, _, created = server.call("POST", "/v1/sessions", {"userId": f"{key}-user-{index}", "attributes": {"cohort": key}})
        if status != 201:
            tally.check(f"{key}: session {index}", f"POST /v1/sessions answered {status}", created)
            continue
        session, token = created["session"]["id"], created["session"]["token"]
        variant = created["state"]["experiments"].get(key)
        if variant is None:
            tally.check(f"{key}: session {index} is in the experiment", "it is not", created["state"]["experiments"])
            continue
        steps = rule(variant, index)
        tally_row = done.setdefault(variant, [0, 0, 0])
        tally_row[0] += 1
        for action in ["onboarding.showSecond", "onboarding.completed"][:steps]:
            status, _, answer = server.call("POST", f"/v1/sessions/{session}/actions", {"type": action},
                                         {"Authorization": f"Bearer {token}"})
            if status != 200:
                tally.check(f"{key}: {action}", f"answered {status}", answer)
        tally_row[1] += steps >= 1
        tally_row[2] += steps >= 2
    return done


def check_reports(server, tally, key, definition, done):
    weights = {v["key"]: v["weight"] for v in definition["variants"]}
    order = [v["key"] for v in definition["variants"]]
    metrics = {"onboarded": 2, "onboarding.second": 1, "home.first": 2}
    for query, metric, baseline in [("", "onboarded", order[0]), ("?metric=onboarding.second", "onboarding.second", order[0]),
                                    ("?metric=home.first", "home.first", order[0]), (f"?baseline={order[-1]}", "onboarded", order[-1])]:
        name = f"report {key}{query}"
        status, _, report = server.call("GET", f"/v1/experiments/{key}/report{query}", headers=server.admin)
        if status == 400 and not any(row[metrics[metric]] for row in done.values()):
            # a metric no session reached is refused, naming the metrics there are
            listed = ((report or {}).get("errors") or [{}])[0].get("detail", "")
            tally.check(f"{name}: refused, as nobody reached {metric}", None if "onboarded" in listed else "without the metrics there are", report)
            continue
        if status != 200:
            tally.check(name, f"answered {status}", report)
            continue
        tally.check(f"{name}: metric and baseline", None if (report.get("metric"), report.get("baseline")) == (metric, baseline)
                    else f"{report.get('metric')!r}, {report.get('baseline')!r}")
        counts = [(variant, done.get(variant, [0, 0, 0])[0], done.get(variant, [0, 0, 0])[metrics[metric]], weights[variant])
                  for variant in order]
        check_document(tally, name, report, counts)
        for variant in report["variants"]:
            row = done.get(variant["key"], [0, 0, 0])
            funnel = {feature: count for feature, count in
                      (("onboarding.first", row[0]), ("onboarding.second", row[1]), ("home.first", row[2])) if count}
            tally.check(f"{name}: {variant['key']} onboarded and funnel",
                        None if variant.get("onboarded") == row[2] and variant.get("funnel") == funnel else "they differ from the walk",
                        f"{variant.get('onboarded')}, {variant.get('funnel')} vs {row[2]}, {funnel}")


def check_end_to_end(binary, tally):
    with tempfile.TemporaryDirectory() as work:
        process = FlowStackProcess(binary, work)
        try:
            process.start()
            server = JSONServer(process.port, process.admin_token)
            for key, (definition, _, _) in EXPERIMENTS.items():
                body = dict(definition, when={"attribute": "cohort", "in": [key]})
                status, _, answer = server.call("PUT", f"/v1/experiments/{key}", body, server.admin)
                tally.check(f"PUT /v1/experiments/{key}", None if status == 201 else f"answered {status}", answer)
            walked = {key: walk(server, tally, key, users, rule) for key, (_, users, rule) in EXPERIMENTS.items()}
            status, _, answer = server.call("PUT", "/v1/experiments/reweighted", dict(REWEIGHTED, when={"attribute": "cohort", "in": ["reweighted"]}),
                                         server.admin)
            tally.check("PUT /v1/experiments/reweighted with new weights", None if status == 200 else f"answered {status}", answer)
            for key, (definition, _, _) in EXPERIMENTS.items():
                check_reports(server, tally, key, REWEIGHTED if key == "reweighted" else definition, walked[key])
            status, _, report = server.call("GET", "/v1/experiments/reweighted/report", headers=server.admin)
            tally.check("the reweighted experiment warns of a sample ratio mismatch",
                        None if status == 200 and report["srm"].get("warning") else "it does not", report and report.get("srm"))
            for query in ("?metric=checkout", "?baseline=nobody"):
                status, _, answer = server.call("GET", f"/v1/experiments/two/report{query}", headers=server.admin)
                tally.check(f"report two{query} is 400", None if status == 400 and answer.get("errors") else f"answered {status}", answer)
        finally:
            status = process.stop()
            tally.check("the server stops with status 0", None if status == 0 else f"status {status}", process.stderr_text()[-500:])


def main():
    exit_on_sigterm()
    if len(sys.argv) > 2:
        raise SystemExit(__doc__)
    if len(sys.argv) == 2:
        binary = os.path.abspath(sys.argv[1])
    else:
        bin_path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        binary = os.path.join(bin_path, "flowstack")
    tally = Tally()
    version = importlib.metadata.version("gbstats")
    tally.check("gbstats is the pinned version", None if version == GBSTATS_VERSION else f"it is {version}, not {GBSTATS_VERSION}")
    seed = int(os.environ.get("GBSTATS_CHECK_SEED", "20261123"))
    check_grid(binary, tally, random.Random(seed))
    grid_checks = tally.passed + tally.failed
    check_end_to_end(binary, tally)
    print(f"gbstats: {grid_checks} checks on the grid (seed {seed}), {tally.passed + tally.failed - grid_checks} end to end", flush=True)
    sys.exit(tally.report("gbstats"))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""An unmodified GrowthBook SDK against a live FlowStack: same flag values, same experiment variants.

Usage: .build/python/bin/python scripts/growthbook_client.py PATH/TO/flowstack [USERS]

Needs the GrowthBook Python SDK pinned in scripts/python-tools.sh (run it with that venv's python).

It starts a server (harness.server) on a fresh database, makes a client key, uploads a
one-screen onboarding (version 2 of the flow) and a set of flags and experiments that between
them use every operator FlowStack can translate (targeting on country, platform, appVersion,
age, premium, name and tags; all/any/not; splits of two and three variants with their own
seeds and hash attributes, a one-variant rollout, values of every JSON type, a disabled flag)
and some it cannot (a version threshold with no canonical form, a rule serving null, a dotted
attribute name). Then:

- the PUT of each untranslatable definition must warn (`warnings`), and the payload must leave it
  out and list it under `flowstack.omitted`;
- GrowthBook's SDK (`GrowthBook(api_host=server, client_key=key)`, nothing patched) loads
  `GET /api/features/{clientKey}`;
- for USERS (default 1,000) generated users with varied attributes (some missing, some of
  unexpected types: numbers as strings, booleans, zero and empty ids), every flag's value from
  `gb.eval_feature(key)` must equal `POST /v1/flags/evaluate` (admin) for the same context, and
  every experiment's variant (`experiment:KEY`) must equal `state.experiments[KEY]` of a session
  created for that user (`POST /v1/sessions` with the client key), or both be absent;
- version rules: a flag for every version operator and each of VERSION_THRESHOLDS (short forms,
  trailing zeros, pre-releases, a leading v, a build, numbers) must be served, and GrowthBook's
  SDK must give it the value FlowStack gives for every value of VERSION_ATTRIBUTES (`5.2`,
  `5.2.0`, `05`, pre-releases, `10.0`, `2`, the empty string, a missing attribute, numbers,
  booleans, null, lists, odd strings) and for generated versions; thresholds with no canonical
  form (VERSION_REFUSED) must be warned at PUT and left out;
- a refresh with nothing changed is a 304 the SDK keeps its payload on; after a flag changes
  the SDK gets a new ETag and the new value.

The SDK is given the user's attributes plus `userId` (FlowStack's targeting key). Prints each
failure, then `growthbook: N passed, M failed`; exits 1 when anything failed.
"""
import json
import random
import sys
import tempfile

from harness.server import FlowStackProcess, Tally, exit_on_sigterm
from harness.web import JSONServer

from harness.tools import use_pinned_tools

use_pinned_tools("growthbook_client", "growthbook")

import growthbook  # noqa: E402
from growthbook import GrowthBook  # noqa: E402

EU = ["DE", "FR", "IT", "ES", "NL", "PL", "SE"]

# The one-screen onboarding of the README's A/B walk, uploaded as version 2 of the flow.
SHORT_ONBOARDING = {
    "name": "onboarding", "kind": "stacked", "initial": ["onboarding.first"],
    "on": {"onboarding.completed": [{"from": "onboarding.first", "do": [{"replaceRoot": "home"}, {"setUser": {"onboarded": True}}]}]},
}

FLAGS = {
    # A 10% rollout of a boolean.
    "new-home": {"variants": {"on": True, "off": False}, "defaultVariant": "off",
                 "split": [{"variant": "on", "weight": 0.1}, {"variant": "off", "weight": 0.9}]},
    # Strings: rules on country, platform, age, any/not, then a three-way split with its own seed.
    "checkout-copy": {
        "variants": {"plain": "Buy", "friendly": "Get it now", "urgent": "Last chance!", "eu": "Jetzt kaufen"},
        "defaultVariant": "plain",
        "rules": [
            {"when": {"all": [{"attribute": "platform", "is": "ios"}, {"attribute": "country", "in": ["US", "CA"]}]}, "variant": "friendly"},
            {"when": {"any": [{"attribute": "country", "in": EU}, {"attribute": "age", "gte": 65}]}, "variant": "eu"},
            {"when": {"not": {"attribute": "platform", "exists": True}}, "variant": "urgent"},
        ],
        "split": [{"variant": "plain", "weight": 0.34}, {"variant": "friendly", "weight": 0.33}, {"variant": "urgent", "weight": 0.33}],
        "seed": "checkout-2026",
    },
    # Numbers: ranges on age (numbers only: "30" is not 30), a boolean, a split on deviceId (whose
    # seed puts a deviceId of 0 in "small" if it were bucketed: SDKs bucket no zero, nor must FlowStack).
    "discount": {
        "variants": {"none": 0, "small": 5, "large": 12.5},
        "defaultVariant": "none",
        "rules": [
            {"when": {"attribute": "age", "gt": 30, "lt": 40}, "variant": "small"},
            {"when": {"attribute": "premium", "is": True}, "variant": "large"},
        ],
        "split": [{"variant": "none", "weight": 0.5}, {"variant": "small", "weight": 0.5}],
        "hashAttribute": "deviceId", "seed": "discount-2026",
    },
    # Objects and arrays as values; exact app versions, string order, a list attribute, isNot/notIn.
    "theme": {
        "variants": {"classic": {"accent": "#0a84ff", "dark": False}, "night": {"accent": "#ff9f0a", "dark": True},
                     "list": ["a", 1, None, {"b": [2]}]},
        "defaultVariant": "classic",
        "rules": [
            {"when": {"attribute": "appVersion", "in": ["5.2.0", "5.3.0"]}, "variant": "night"},
            {"when": {"attribute": "name", "gte": "m", "lt": "t"}, "variant": "list"},
            {"when": {"attribute": "tags", "in": ["beta"]}, "variant": "night"},
            {"when": {"all": [{"attribute": "country", "isNot": "US"}, {"attribute": "platform", "notIn": ["web", "android"]},
                              {"attribute": "premium", "exists": False}]}, "variant": "list"},
        ],
    },
    # A one-variant split: everyone whose id can be bucketed, after a rule on the user's id.
    "everyone-bucketed": {"variants": {"yes": "bucketed", "no": "anonymous", "vip": "VIP"}, "defaultVariant": "no",
                          "rules": [{"when": {"attribute": "userId", "in": ["user-7", "user-77", "user-777"]}, "variant": "vip"}],
                          "split": [{"variant": "yes", "weight": 1}]},
    # null among a split's values is fine (only a forced null is not).
    "nullable-split": {"variants": {"nothing": None, "something": [1, 2]}, "defaultVariant": "something",
                       "split": [{"variant": "nothing", "weight": 0.25}, {"variant": "something", "weight": 0.75}]},
    # Disabled: the default for everyone, rules or not.
    "paused": {"variants": {"on": True, "off": False}, "defaultVariant": "off", "enabled": False,
               "rules": [{"when": {"attribute": "country", "is": "US"}, "variant": "on"}]},
}

# Valid FlowStack flags that no GrowthBook SDK evaluates the same way: warned at PUT, left out.
UNTRANSLATABLE_FLAGS = {
    "min-version": ({"variants": {"new": True, "old": False}, "defaultVariant": "old",
                     "rules": [{"when": {"attribute": "appVersion", "versionGte": "5.2.0-a_b"}, "variant": "new"}]},
                    "/rules/0/when/versionGte"),
    "null-rule": ({"variants": {"unset": None, "set": 1}, "defaultVariant": "set",
                   "rules": [{"when": {"attribute": "country", "is": "DE"}, "variant": "unset"}]},
                  "/rules/0/variant"),
    "dotted": ({"variants": {"on": True, "off": False}, "defaultVariant": "off",
                "rules": [{"when": {"attribute": "device.model", "is": "iPhone"}, "variant": "on"}]},
               "/rules/0/when/attribute"),
}

# Version rules: every operator against each threshold, each a flag of its own.
VERSION_OPERATORS = ["versionGt", "versionGte", "versionLt", "versionLte", "versionIs", "versionIsNot"]
VERSION_THRESHOLDS = [
    "5.2", "5.2.0", "5.2.1", "5", "5.0", "5.0.0", "10.0", "2", "2.0.0", "1.0", "1.0.0", "0.0.0",
    "1.0.0-beta", "1.0.0-beta.2", "1.0.0-rc.1", "1.0.0-alpha.1", "5.2.0-beta", "5.2.0-rc.1", "2.0.0-0",
    "05.02", "v5.2.0+build.9", "1.2.3.4", "1-2-3", "99999.0.0", "5.10", 5, 5.2, 10,
    # from GrowthBook's cases.json
    "1.0.0-alpha.beta", "1.2.3-5-foo", "1.0.0-0.0", "v1.2.3-beta+otherbuild", "1.2.3-a.b.c.5.d.100",
]
# Thresholds GrowthBook's $v operators cannot be given in a form they order as FlowStack does.
VERSION_REFUSED = ["1-2", "a.b.c", "1.0.100000", "1.0.0-a_b", "1.0.0-é", "1.0.0--", "1.0.0-1.-1"]
MISSING = object()
VERSION_ATTRIBUTES = [
    "5.2", "5.2.0", "05", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-rc.1", "10.0", "2", "", MISSING,
    5, 5.2, 10, 0, True, False, None, ["5.2.0"], {"major": 5},
    "5.2.1", "5.1.9", "5.10", "5.10.0", "4.99", "5", "5.0", "5.0.0", "6", "1", "1.0", "1.0.0", "0", "0.0.0",
    "2.0.0", "2.0.0-0", "1.9.9", "10", "10.0.0", "9.9.9", "v5.2.0", "v5.2", "v2", "5.2.0+build.7", "5.2+7",
    "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta.11", "1.0.0-0", "1.0.0-RC.1", "5.2.0-beta", "5.2.0-rc.1",
    "5.3.0-beta", "1-2-3", "1.2.3.4", "1.2.3-4", "a.b.c", "99999.0.0", "100000.0.0", "1.02.3", "1.0.0-beta.02",
    "5.2 ", " 5.2", "5.2\n", "V5.2", "vv5.2", "v", "v05", "1..2", "1.0.0--", "5.2.0+", "5.2.0.0", "5-2",
    "١.٢.٣", "5.2.0-β", "5.2-beta", "1.0-rc.1", "0.0.1", "00", "5.2.0-00", "0.0.0-rc.1",
]
# Every version of the $v cases of GrowthBook's cases.json (evalCondition).
VERSION_ATTRIBUTES += [
    "0.0.0-foo", "0.10.0", "0.9.0", "0.9.9", "0.9.99", "0.99.0", "1-2.3+build99", "1.0.0--", "1.0.0--1", "1.0.0-0.0",
    "1.0.0-0.0.0", "1.0.0-1", "1.0.0-1.-1", "1.0.0-1.0", "1.0.0-100", "1.0.0-99", "1.0.0-9999", "1.0.0-ALPHA",
    "1.0.0-alpha.10", "1.0.0-alpha.2", "1.0.0-alpha.beta", "1.0.0-beta.1", "1.2.29", "1.2.3", "1.2.3+build.abc.123",
    "1.2.3-0", "1.2.3-1", "1.2.3-4-foo", "1.2.3-5", "1.2.3-5-Foo", "1.2.3-5-foo", "1.2.3-R2", "1.2.3-a", "1.2.3-a.10",
    "1.2.3-a.5", "1.2.3-a.b", "1.2.3-a.b.c", "1.2.3-a.b.c.10.d.5", "1.2.3-a.b.c.5.d.100", "1.2.3-a.b.c.d", "1.2.3-alpha",
    "1.2.3-asdf", "1.2.3-beta", "1.2.3-beta+build", "1.2.3-r100", "1.2.3-r2", "1.2.30", "1.30.2", "10.0.12", "10.0.2",
    "10.12.11", "10.20.0", "10000.0.0", "11.0.1", "2.2.3", "2.7.2+asdf", "3.0.0", "30.1.2", "5.10.30", "60.1.2",
    "9.0.0", "9.99.8", "9999.0.0", "a.b.c.d.e.f", "v0.0.0", "v0.0.0-foo", "v0.0.1", "v0.9.9", "v1.0.0", "v1.2.3",
    "v1.2.3-0", "v1.2.3-beta", "v1.2.3-beta+otherbuild", "v2.0.0",
]


def generated_versions(rng, count):
    """Versions as apps write them, and near misses: 1-4 numbers (some with leading zeros or six
    digits), a v, a pre-release, a build."""
    def number():
        roll = rng.random()
        if roll < 0.05:
            return "0" + str(rng.randrange(10))
        if roll < 0.08:
            return str(rng.randrange(100000, 1000000))
        return str(rng.choice([0, 0, 1, 2, 5, 5, 9, 10, 11, 99, 99999]))
    versions = []
    for _ in range(count):
        text = ".".join(number() for _ in range(rng.choice([1, 2, 3, 3, 3, 4])))
        if rng.random() < 0.3:
            text += "-" + ".".join(rng.choice(["alpha", "beta", "rc", "0", "1", "2", "11", "RC", "b2", "01"]) for _ in range(rng.choice([1, 2])))
        if rng.random() < 0.1:
            text = "v" + text
        if rng.random() < 0.1:
            text += "+" + rng.choice(["build.7", "001", "x-y"])
        versions.append(text)
    return versions


EXPERIMENTS = {
    # The README's A/B walk: the short variant pins onboarding version 2.
    "onboarding-length": {"variants": [{"key": "control", "weight": 0.5}, {"key": "short", "weight": 0.5, "flows": {"onboarding": 2}}]},
    # Three arms on 80% of mobile users, its own seed, bucketed by device.
    "paywall": {"variants": [{"key": "a", "weight": 0.2}, {"key": "b", "weight": 0.3}, {"key": "c", "weight": 0.5}],
                "coverage": 0.8, "seed": "paywall-v3", "hashAttribute": "deviceId",
                "when": {"attribute": "platform", "in": ["ios", "android"]}},
    # One arm at 30%: a pinned flow rolled out to a share of users, equal weights left unwritten.
    "short-rollout": {"variants": [{"key": "short", "flows": {"onboarding": 2}}], "coverage": 0.3},
    # Not running (issue 24's lifecycle): sessions are put in no variant, and the SDK must agree.
    "paywall-stopped": {"variants": [{"key": "a"}, {"key": "b"}], "status": "stopped"},
    "paywall-draft": {"variants": [{"key": "a"}, {"key": "b"}], "status": "draft"},
}


def generate_user(rng, index):
    """A user with varied attributes: some missing, some of types a targeting rule does not expect."""
    user_id = rng.choice([f"user-{index}", f"u{index:05d}", f"ü-{index}", f"{index}@example.com"])
    if index % 10 == 7:
        user_id = f"user-{index}"  # the ids a rule of everyone-bucketed names
    attributes = {}

    def maybe(name, values, present=0.85):
        if rng.random() < present:
            attributes[name] = rng.choice(values)

    maybe("country", EU + ["US", "CA", "BR", "JP", "IN", "us", ""])
    maybe("platform", ["ios", "android", "web", "ios", "android", "tvos", 1])
    maybe("appVersion", ["5.2.0", "5.3.0", "5.10.1", "5.2", "4.9.9", "6.0.0-beta.1", 5, "v5.2.0"])
    maybe("age", [17, 18, 25, 30, 31, 35, 39.5, 40, 64, 65, 80, "35", True, 0])
    maybe("premium", [True, False, "true", 1, 0], present=0.5)
    maybe("name", ["ada", "mia", "noah", "sven", "tom", "zoë", "Émile", "m", "t", "søren", ""])
    maybe("deviceId", [f"dev-{rng.randrange(10**6)}", rng.randrange(1, 10**9), rng.random() * 1000, 0, "", True, f"dev-{index}"])
    maybe("tags", ["beta", "staff", "beta"], present=0.3)
    return user_id, attributes


def flag_attributes(rng, attributes):
    """The context for flag evaluation: the session's attributes, sometimes with a list of tags or a
    null (which sessions do not take, and /v1/flags/evaluate does)."""
    extended = dict(attributes)
    roll = rng.random()
    if roll < 0.15:
        extended["tags"] = rng.choice([["beta"], ["staff", "beta"], ["staff"], []])
    elif roll < 0.2:
        extended["country"] = None
    return extended


def main():
    exit_on_sigterm()
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    binary = sys.argv[1]
    users = int(sys.argv[2]) if len(sys.argv) == 3 else 1000
    tally = Tally()
    with tempfile.TemporaryDirectory() as work:
        process = FlowStackProcess(binary, work)
        try:
            process.start()
            run(JSONServer(process.port, process.admin_token), users, tally)
        finally:
            process.stop()
    sys.exit(tally.report("growthbook"))


def run(server, users, tally):
    status, _, created = server.call("POST", "/v1/client-keys", {"name": "growthbook sdk"}, server.admin)
    if status != 201:
        raise SystemExit(f"growthbook_client: making a client key answered {status}: {created}")
    key = created["key"]

    status, _, _ = server.call("PUT", "/v1/flows/onboarding", SHORT_ONBOARDING, server.admin)
    tally.check("PUT /v1/flows/onboarding", None if status == 201 else f"answered {status}")
    for flag_key, flag in FLAGS.items():
        status, _, answer = server.call("PUT", f"/v1/flags/{flag_key}", flag, server.admin)
        warnings = (answer or {}).get("warnings") if isinstance(answer, dict) else None
        tally.check(f"PUT /v1/flags/{flag_key}", None if status in (200, 201) and warnings == [] else f"answered {status}, warnings {warnings}", answer)
    for flag_key, (flag, pointer) in UNTRANSLATABLE_FLAGS.items():
        status, _, answer = server.call("PUT", f"/v1/flags/{flag_key}", flag, server.admin)
        pointers = [w.get("pointer") for w in (answer or {}).get("warnings", [])] if isinstance(answer, dict) else []
        tally.check(f"PUT /v1/flags/{flag_key} warns", None if status in (200, 201) and pointers == [pointer] else f"answered {status}, warnings at {pointers}, expected [{pointer}]", answer)
    version_flags = put_version_flags(server, tally)
    for experiment_key, experiment in EXPERIMENTS.items():
        status, _, answer = server.call("PUT", f"/v1/experiments/{experiment_key}", experiment, server.admin)
        warnings = (answer or {}).get("warnings") if isinstance(answer, dict) else None
        tally.check(f"PUT /v1/experiments/{experiment_key}", None if status in (200, 201) and warnings == [] else f"answered {status}, warnings {warnings}", answer)

    # The payload as served: every flag and experiment either translated or listed as omitted.
    status, headers, payload = server.call("GET", f"/api/features/{key}")
    if status != 200:
        raise SystemExit(f"growthbook_client: GET /api/features/KEY answered {status}: {payload}")
    omitted = {entry["key"]: entry for entry in payload.get("flowstack", {}).get("omitted", [])}
    _, _, flags_listed = server.call("GET", "/v1/flags", headers=server.admin)
    flag_keys = [flag["key"] for flag in flags_listed["flags"]]
    for flag_key in flag_keys:
        place = ("feature" if flag_key in payload["features"] else "") + ("omitted" if flag_key in omitted else "")
        expected = "omitted" if flag_key in UNTRANSLATABLE_FLAGS or flag_key.startswith("refused-version-") else "feature"
        tally.check(f"payload has flag {flag_key}", None if place == expected else f"found as {place or 'nothing'}, expected {expected}")
    for flag_key, (_, pointer) in UNTRANSLATABLE_FLAGS.items():
        entry = omitted.get(flag_key, {})
        tally.check(f"omission of {flag_key} says where and why", None if entry.get("path") == pointer and entry.get("reason") else "no path or reason", entry)
    for experiment_key in EXPERIMENTS:
        tally.check(f"payload has experiment:{experiment_key}", None if f"experiment:{experiment_key}" in payload["features"] else "missing")
    tally.check("401 for a made-up client key", None if server.call("GET", "/api/features/fsk_made-up")[0] == 401 else "not 401")

    # GrowthBook's SDK, as an app would use it; each fetch's status is recorded on the way.
    statuses = []
    original_get = growthbook.growthbook.feature_repo._get

    def recording_get(url, headers):
        response = original_get(url, headers)
        statuses.append(response.status)
        return response

    growthbook.growthbook.feature_repo._get = recording_get
    gb = GrowthBook(api_host=server.base, client_key=key)
    gb.load_features()
    loaded = set(gb.get_features())
    tally.check("the SDK loaded every feature", None if loaded == set(payload["features"]) else f"loaded {sorted(loaded)}")

    rng = random.Random(20260101)
    # The version flags have a check of their own (check_version_flags).
    translated_flags = [k for k in flag_keys if k in payload["features"] and not k.startswith("version-")]
    # What the users reached, so a run that never reaches a rule or an arm cannot pass unnoticed.
    reached = {k: set() for k in translated_flags}
    arms = {k: set() for k in EXPERIMENTS}
    for index in range(users):
        user_id, attributes = generate_user(rng, index)
        context = flag_attributes(rng, attributes)
        status, _, evaluations = server.call("POST", "/v1/flags/evaluate", {"targetingKey": user_id, "attributes": context}, server.admin)
        if status != 200:
            tally.check(f"evaluate for {user_id}", f"answered {status}", evaluations)
            continue
        gb.set_attributes({**context, "userId": user_id})
        for flag_key in translated_flags:
            expected = evaluations[flag_key]["value"]
            reached[flag_key].add((evaluations[flag_key]["variant"], evaluations[flag_key]["reason"]))
            got = gb.eval_feature(flag_key).value
            tally.check(f"flag {flag_key} for {user_id} {context}",
                        None if same(got, expected) else f"GrowthBook gave {got!r}, FlowStack {expected!r} ({evaluations[flag_key]['reason']})")

        status, _, session = server.call("POST", "/v1/sessions", {"userId": user_id, "attributes": attributes}, {"X-API-Key": key})
        if status != 201:
            tally.check(f"session for {user_id}", f"answered {status}", session)
            continue
        assigned = session["state"]["experiments"]
        gb.set_attributes({**attributes, "userId": user_id})
        for experiment_key in EXPERIMENTS:
            expected = assigned.get(experiment_key)
            arms[experiment_key].add(expected)
            got = gb.eval_feature(f"experiment:{experiment_key}").value
            tally.check(f"experiment {experiment_key} for {user_id} {attributes}",
                        None if got == expected else f"GrowthBook gave {got!r}, the session {expected!r}")

    if users >= 1000:
        for flag_key in translated_flags:
            definition = FLAGS.get(flag_key, {})
            wanted = {("rule", i) for i in range(len(definition.get("rules", [])))} if definition.get("enabled", True) else set()
            wanted |= {("split", a["variant"]) for a in definition.get("split", [])}
            seen = {("split", v) for v, reason in reached[flag_key] if reason == "SPLIT"}
            rules = [r["variant"] for r in definition.get("rules", [])]
            seen |= {("rule", i) for i, v in enumerate(rules) if (v, "TARGETING_MATCH") in reached[flag_key]}
            tally.check(f"users reached every rule and split variant of {flag_key}", None if wanted <= seen else f"never reached {sorted(wanted - seen)}")
        for experiment_key, experiment in EXPERIMENTS.items():
            # Outside it too, when its coverage or its condition leaves users out.
            wanted = {v["key"] for v in experiment["variants"]}
            if experiment.get("coverage", 1) < 1 or "when" in experiment:
                wanted.add(None)
            if experiment.get("status", "running") != "running":
                wanted = {None}  # and nowhere else: the arms check below fails on any variant
            landed = wanted <= arms[experiment_key] and (experiment.get("status", "running") == "running" or arms[experiment_key] == {None})
            tally.check(f"users landed in every arm of {experiment_key}", None if landed else f"never in {wanted - arms[experiment_key]}, or in {arms[experiment_key] - wanted}")

    check_version_flags(server, gb, version_flags, rng, tally)

    # Nothing changed: the SDK's refresh sends the ETag, gets 304 and keeps its payload.
    statuses.clear()
    gb.load_features(force_refresh=True)
    tally.check("a refresh with nothing changed is a 304", None if statuses == [304] else f"statuses {statuses}")
    tally.check("the SDK keeps its payload on 304", None if set(gb.get_features()) == loaded else "features lost")

    # A changed flag: a new ETag, a 200, and the new value in the SDK.
    _, before, _ = server.call("GET", f"/api/features/{key}")
    server.call("PUT", "/v1/flags/paused", {**FLAGS["paused"], "enabled": True}, server.admin)
    _, after, _ = server.call("GET", f"/api/features/{key}")
    tally.check("the ETag changes with a flag", None if before.get("ETag") != after.get("ETag") else f"still {after.get('ETag')}")
    statuses.clear()
    gb.load_features(force_refresh=True)
    gb.set_attributes({"userId": "sam", "country": "US"})
    tally.check("the SDK gets the change", None if statuses == [200] and gb.eval_feature("paused").value is True else f"statuses {statuses}, value {gb.eval_feature('paused').value!r}")
    growthbook.growthbook.feature_repo._get = original_get


def put_version_flags(server, tally):
    """A flag per version operator and threshold (each must be served, with no warning), and one
    per refused threshold (each must be warned at its pointer). Returns the served flags' keys."""
    keys = []
    for t_index, threshold in enumerate(VERSION_THRESHOLDS):
        for operator in VERSION_OPERATORS:
            key = f"version-{t_index}-{operator}"
            flag = {"variants": {"yes": True, "no": False}, "defaultVariant": "no",
                    "rules": [{"when": {"attribute": "appVersion", operator: threshold}, "variant": "yes"}]}
            status, _, answer = server.call("PUT", f"/v1/flags/{key}", flag, server.admin)
            warnings = (answer or {}).get("warnings") if isinstance(answer, dict) else None
            tally.check(f"PUT {operator} {threshold!r} is served", None if status in (200, 201) and warnings == [] else f"answered {status}, warnings {warnings}", answer)
            keys.append((key, operator, threshold))
    for t_index, threshold in enumerate(VERSION_REFUSED):
        key = f"refused-version-{t_index}"
        flag = {"variants": {"yes": True, "no": False}, "defaultVariant": "no",
                "rules": [{"when": {"attribute": "appVersion", "versionGte": threshold}, "variant": "yes"}]}
        status, _, answer = server.call("PUT", f"/v1/flags/{key}", flag, server.admin)
        warnings = (answer or {}).get("warnings", []) if isinstance(answer, dict) else []
        said = [w.get("pointer") for w in warnings]
        tally.check(f"PUT versionGte {threshold!r} warns", None if status in (200, 201) and said == ["/rules/0/when/versionGte"] else f"answered {status}, warnings {warnings}", answer)
    return keys


def check_version_flags(server, gb, version_flags, rng, tally):
    """GrowthBook's SDK gives every version flag FlowStack's value for every version in the grid."""
    attributes = VERSION_ATTRIBUTES + generated_versions(rng, 300)
    matched = {key: set() for key, _, _ in version_flags}
    disagreements = 0
    for version in attributes:
        context = {"platform": "ios"} if version is MISSING else {"platform": "ios", "appVersion": version}
        status, _, evaluations = server.call("POST", "/v1/flags/evaluate", {"targetingKey": "version-user", "attributes": context}, server.admin)
        if status != 200:
            tally.check(f"evaluate appVersion {version!r}", f"answered {status}", evaluations)
            continue
        gb.set_attributes({**context, "userId": "version-user"})
        for key, operator, threshold in version_flags:
            expected = evaluations[key]["value"]
            got = gb.eval_feature(key).value
            matched[key].add(expected)
            label = "missing" if version is MISSING else repr(version)
            if not same(got, expected):
                disagreements += 1
            tally.check(f"appVersion {label} {operator} {threshold!r}", None if same(got, expected) else f"GrowthBook gave {got!r}, FlowStack {expected!r}")
    print(f"growthbook: versions: {len(attributes)} attribute values x {len(version_flags)} rules, {disagreements} disagreements", flush=True)
    # Every rule both matched and did not, so no comparison above was vacuous (versionIs of a
    # threshold no attribute equals aside).
    for key, operator, threshold in version_flags:
        tally.check(f"{operator} {threshold!r} both matched and did not", None if matched[key] == {True, False} else f"only {matched[key]}")


def same(a, b):
    """Equal as JSON values: 12.5 == 12.5, 1 == 1.0, but True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks FlowStack's OFREP routes with a real client: OpenFeature's Python SDK and its OFREP provider.

Usage: .build/python/bin/python scripts/ofrep_client.py PATH/TO/flowstack
(the venv of scripts/python-tools.sh, which installs the pinned openfeature-sdk and
openfeature-provider-ofrep; scripts/test.sh runs it so).

Starts the server (127.0.0.1, a free port, a temporary SQLite database), makes a client key
through the admin API, and PUTs flags of every kind (booleans, strings, integers, floats, objects,
an array, a null value; rules on attributes and versions; splits on the user and on a device
attribute; static and disabled) and five experiments (one with a condition and a coverage, one
bucketed on a device attribute, one switched off). Then, for CONTEXTS generated contexts (a tenth
without a targeting key; attributes of every JSON type a client sends, some of the wrong type):

- every flag, resolved by the OpenFeature client through the OFREP provider (value, variant,
  reason, error code), must equal FlowStack's own `POST /v1/flags/evaluate` for the same context,
  the reason as FlowStack names it (STATIC, DEFAULT, TARGETING_MATCH, SPLIT, DISABLED: every one
  must be met), an error is the client's default with FlowStack's error code, a null value is the client's default, and a split on the targeting key asked
  without one is TARGETING_KEY_MISSING;
- an unknown flag is the client's default with FLAG_NOT_FOUND;
- each `experiment:<key>` must be the variant a session created for the same user and attributes
  is in (the client's default, with an empty variant, when the session is in none);
- the bulk route must list the same results, with an ETag that If-None-Match turns into 304.

And: no key, a wrong key and a revoked key get 401 with no body (the client: its default, GENERAL);
a definition change changes the bulk ETag. Prints each failure, then `ofrep: N passed, M failed`;
exits 1 when anything failed.
"""
import logging
import os
import random
import sys
import tempfile

from harness.tools import use_pinned_tools

use_pinned_tools("ofrep_client", "requests", "openfeature", "openfeature.contrib.provider.ofrep")

import requests  # noqa: E402
from openfeature import api  # noqa: E402
from openfeature.contrib.provider.ofrep import OFREPProvider  # noqa: E402
from openfeature.evaluation_context import EvaluationContext  # noqa: E402

from harness.server import FlowStackProcess, Tally, exit_on_sigterm  # noqa: E402

CONTEXTS = 300
SEED = 20261123
TARGETING_KEY_NAMES = {"userId", "targetingKey"}
EU = ["AT", "BE", "DE", "ES", "FR", "IT", "NL", "PL"]

# The flags this check uploads: key -> (OpenFeature type, definition). eu-face-scan and paywall are
# shipped (definition None: read from the server).
FLAGS = {
    "of-bool": ("boolean", {
        "variants": {"on": True, "off": False}, "defaultVariant": "off",
        "rules": [{"when": {"attribute": "country", "in": EU}, "variant": "on"}],
        "split": [{"variant": "on", "weight": 0.3}, {"variant": "off", "weight": 0.7}]}),
    "of-string": ("string", {
        "variants": {"classic": "classic", "compact": "compact", "cards": "cards"}, "defaultVariant": "compact",
        "rules": [{"when": {"attribute": "platform", "is": "web"}, "variant": "classic"},
                  {"when": {"attribute": "appVersion", "versionGte": "5.0"}, "variant": "cards"}]}),
    "of-int": ("integer", {
        "variants": {"one": 1, "two": 2, "three": 3}, "defaultVariant": "one", "hashAttribute": "deviceId",
        "split": [{"variant": "one", "weight": 0.2}, {"variant": "two", "weight": 0.3}, {"variant": "three", "weight": 0.5}]}),
    "of-float": ("float", {
        "variants": {"low": 0.5, "mid": 1.25, "high": 2.75}, "defaultVariant": "mid", "seed": "pricing",
        "rules": [{"when": {"attribute": "plan", "in": ["pro"]}, "variant": "high"}],
        "split": [{"variant": "low", "weight": 0.5}, {"variant": "mid", "weight": 0.5}]}),
    "of-object": ("object", {
        "variants": {"grid": {"layout": "grid", "columns": 3, "dense": False}, "list": {"layout": "list", "columns": 1, "dense": True}},
        "defaultVariant": "list",
        "rules": [{"when": {"attribute": "age", "gte": 18}, "variant": "grid"}]}),
    "of-static": ("string", {"variants": {"v1": "first"}, "defaultVariant": "v1"}),
    "of-disabled": ("boolean", {
        "variants": {"on": True, "off": False}, "defaultVariant": "off", "enabled": False,
        "rules": [{"when": {"attribute": "country", "in": EU}, "variant": "on"}]}),
    "of-list": ("object", {"variants": {"both": ["a", "b"]}, "defaultVariant": "both"}),
    "of-null": ("object", {
        "variants": {"nothing": None, "something": {"a": 1}}, "defaultVariant": "something",
        "rules": [{"when": {"attribute": "country", "is": "DE"}, "variant": "nothing"}]}),
    "eu-face-scan": ("boolean", None),
    "paywall": ("boolean", None),
}
DEFAULTS = {"boolean": False, "string": "client-default", "integer": -1, "float": -1.5, "object": {"client": "default"}}

EXPERIMENTS = {
    "of-exp": {"variants": [{"key": "control", "weight": 0.34}, {"key": "short", "weight": 0.33}, {"key": "long", "weight": 0.33}],
               "coverage": 0.85, "when": {"attribute": "platform", "in": ["ios", "android"]}},
    "of-device-exp": {"variants": [{"key": "a"}, {"key": "b"}], "hashAttribute": "deviceId"},
    "of-off-exp": {"variants": [{"key": "only"}], "enabled": False},
    # Not running (issue 24's lifecycle): assign nobody, answered DISABLED as a switched-off one.
    "of-stopped-exp": {"variants": [{"key": "a"}, {"key": "b"}], "status": "stopped"},
    "of-draft-exp": {"variants": [{"key": "a"}, {"key": "b"}], "status": "draft"},
}
NOT_IN = "not-in-experiment"

# The reasons OpenFeature's provider must report: FlowStack's own, unchanged (OFREP answers
# OpenFeature's reasons, DEFAULT included).
REASONS = ["STATIC", "DEFAULT", "TARGETING_MATCH", "SPLIT", "DISABLED"]


def generate_contexts(rng, count):
    """Contexts as an app sends them: a user id (a tenth have none) and attributes of every type
    a client sends, some missing and some of a type the flags cannot use."""
    contexts = []
    for index in range(count):
        key = None if rng.random() < 0.1 else f"user-{index}-{rng.randrange(10**6)}"
        attributes = {}
        for name, choices in [("country", EU[:3] + ["US", "BR", "JP", None]), ("platform", ["ios", "android", "web", None]),
                              ("appVersion", ["4.9.1", "5.0.0", "5.2.3", "6.0", "v7.1.0", None]), ("plan", ["free", "pro", None])]:
            value = rng.choice(choices)
            if value is not None:
                attributes[name] = value
        device = rng.random()
        if device < 0.55:
            attributes["deviceId"] = f"dev-{rng.randrange(10**9)}"
        elif device < 0.75:
            attributes["deviceId"] = rng.randrange(10**9)
        elif device < 0.85:
            attributes["deviceId"] = rng.random() < 0.5  # a boolean: cannot be hashed
        age = rng.random()
        if age < 0.6:
            attributes["age"] = rng.randrange(10, 70)
        elif age < 0.75:
            attributes["age"] = rng.randrange(100, 700) / 10
        contexts.append((key, attributes))
    return contexts


def splits_on_targeting_key(definition):
    return bool(definition and definition.get("split")) and definition.get("hashAttribute", "userId") in TARGETING_KEY_NAMES


def expected_flag(own, flag_type, definition, targeting_key):
    """What the OpenFeature client must resolve, from FlowStack's own evaluation `own`:
    (value, variant, reason, error code)."""
    default = DEFAULTS[flag_type]
    if own["reason"] == "ERROR":
        return default, None, "ERROR", own["errorCode"]
    if targeting_key is None and own["reason"] == "DEFAULT" and splits_on_targeting_key(definition):
        return default, None, "ERROR", "TARGETING_KEY_MISSING"
    value = default if own["value"] is None else own["value"]
    if own["reason"] not in REASONS:
        return value, own["variant"], f"a reason FlowStack does not give ({own['reason']})", None
    return value, own["variant"], own["reason"], None


def expected_experiment(name, in_variant, targeting_key, attributes):
    """What `experiment:<name>` must resolve to, from the variant a session got (None: in none)."""
    definition = EXPERIMENTS[name]
    if definition.get("status", "running") != "running":
        return NOT_IN, "", "DISABLED", None  # whatever the session got (it must get none: checked apart)
    if in_variant is not None:
        return in_variant, in_variant, "SPLIT", None
    if definition.get("enabled", True) is False or definition.get("status", "running") != "running":
        return NOT_IN, "", "DISABLED", None
    when = definition.get("when")
    if when and attributes.get(when["attribute"]) not in when["in"]:
        return NOT_IN, "", "DEFAULT", None
    hash_attribute = definition.get("hashAttribute", "userId")
    if hash_attribute in TARGETING_KEY_NAMES and targeting_key is None:
        return NOT_IN, None, "ERROR", "TARGETING_KEY_MISSING"
    if isinstance(attributes.get(hash_attribute), bool):
        return NOT_IN, None, "ERROR", "INVALID_CONTEXT"
    return NOT_IN, "", "DEFAULT", None


def resolved(details):
    reason = details.reason.value if hasattr(details.reason, "value") else details.reason
    code = details.error_code.value if details.error_code is not None else None
    return details.value, details.variant, reason, code


def same(a, b):
    """Equal, and of the same JSON type (True is not 1; 2 is not 2.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def same_resolution(got, want):
    return same(got[0], want[0]) and got[1:] == want[1:]


class Check:
    def __init__(self, binary, work):
        self.server = FlowStackProcess(binary, work)
        self.tally = Tally()
        self.http = requests.Session()

    def url(self, path):
        return f"http://127.0.0.1:{self.server.port}{path}"

    def admin(self, method, path, body=None):
        return self.http.request(method, self.url(path), json=body, timeout=10,
                                 headers={"Authorization": f"Bearer {self.server.admin_token}"})

    def client(self, domain, headers):
        api.set_provider(OFREPProvider(self.url(""), headers_factory=lambda: dict(headers)), domain=domain)
        return api.get_client(domain)

    def evaluate(self, client, flag_type, key, targeting_key, attributes, default=None):
        """What the OpenFeature client resolves for `key` (typed as `flag_type`, with the default
        of DEFAULTS unless one is given): (value, variant, reason, error code)."""
        context = EvaluationContext(targeting_key=targeting_key, attributes=attributes)
        method = getattr(client, f"get_{flag_type}_details")
        return resolved(method(key, DEFAULTS[flag_type] if default is None else default, context))

    def run(self):
        self.server.start()
        made = self.admin("POST", "/v1/client-keys", {"name": "ofrep check"})
        if made.status_code != 201:
            raise RuntimeError(f"client key: {made.status_code} {made.text}")
        key, key_id = made.json()["key"], made.json()["id"]
        for name, (_, definition) in FLAGS.items():
            if definition is not None:
                put = self.admin("PUT", f"/v1/flags/{name}", definition)
                assert put.status_code in (200, 201), (name, put.status_code, put.text)
        for name, definition in EXPERIMENTS.items():
            put = self.admin("PUT", f"/v1/experiments/{name}", definition)
            assert put.status_code in (200, 201), (name, put.status_code, put.text)
        # The shipped flags' definitions, for the targeting-key rule.
        definitions = {name: (flag_type, definition or self.admin("GET", f"/v1/flags/{name}").json())
                       for name, (flag_type, definition) in FLAGS.items()}

        client = self.client("ofrep", {"X-API-Key": key})
        rng = random.Random(SEED)
        seen_reasons, seen_codes = set(), set()
        outcomes = {f"experiment:{name}": set() for name in EXPERIMENTS} | {"of-bool": set()}
        for index, (targeting_key, attributes) in enumerate(generate_contexts(rng, CONTEXTS)):
            label = f"context {index} {targeting_key!r} {attributes}"
            request = {"attributes": attributes}
            if targeting_key is not None:
                request["targetingKey"] = targeting_key
            own = self.admin("POST", "/v1/flags/evaluate", request).json()
            self.tally.check(f"{label}: /v1/flags/evaluate has every flag",
                             None if set(own) == set(FLAGS) else f"flags {sorted(own)}")
            results = {}
            for name, (flag_type, definition) in definitions.items():
                if name not in own:
                    continue
                want = expected_flag(own[name], flag_type, definition, targeting_key)
                got = self.evaluate(client, flag_type, name, targeting_key, attributes)
                results[name] = got
                if name in outcomes:
                    outcomes[name].add(got[3] or got[2])
                seen_reasons.add(got[2])
                seen_codes.add(got[3])
                self.tally.check(f"{label}: {name}", None if same_resolution(got, want) else f"want {want}", f"{got}; FlowStack: {own[name]}")

            unknown = f"of-unknown-{index % 7}"
            got = self.evaluate(client, "string", unknown, targeting_key, attributes)
            self.tally.check(f"{label}: {unknown}", None if same_resolution(got, ("client-default", None, "ERROR", "FLAG_NOT_FOUND")) else "want the default with FLAG_NOT_FOUND", f"{got}")

            # The session a user with this context would get (a stand-in id when there is none:
            # the device experiment does not hash the user id).
            session = self.http.post(self.url("/v1/sessions"), timeout=10, headers={"X-API-Key": key},
                                     json={"userId": targeting_key or f"anonymous-{index}", "attributes": attributes})
            if session.status_code != 201:
                self.tally.check(f"{label}: session", f"status {session.status_code}", session.text[:300])
                continue
            assigned = session.json()["state"]["experiments"]
            for name in EXPERIMENTS:
                in_variant = assigned.get(name)
                if EXPERIMENTS[name].get("status", "running") != "running":
                    self.tally.check(f"{label}: a session is in no variant of {name} ({EXPERIMENTS[name]['status']})",
                                     None if in_variant is None else f"it is in {in_variant}")
                if targeting_key is None and EXPERIMENTS[name].get("hashAttribute", "userId") in TARGETING_KEY_NAMES:
                    in_variant = None  # the stand-in id says nothing about an anonymous user
                want = expected_experiment(name, in_variant, targeting_key, attributes)
                got = self.evaluate(client, "string", f"experiment:{name}", targeting_key, attributes, default=NOT_IN)
                results[f"experiment:{name}"] = got
                outcomes[f"experiment:{name}"].add(got[3] or got[2])
                seen_reasons.add(got[2])
                seen_codes.add(got[3])
                self.tally.check(f"{label}: experiment:{name}", None if same_resolution(got, want) else f"want {want}",
                                 f"{got}; session: {assigned}")

            self.check_bulk(label, key, targeting_key, attributes, results)

        # Each kind of answer was met, so none of the comparisons above was vacuous.
        for reason in REASONS + ["ERROR"]:
            self.tally.check(f"reason {reason} was resolved", None if reason in seen_reasons else "never seen", f"{seen_reasons}")
        for code in ["TARGETING_KEY_MISSING", "INVALID_CONTEXT"]:
            self.tally.check(f"error {code} was resolved", None if code in seen_codes else "never seen", f"{seen_codes}")
        for name, wanted in [("experiment:of-exp", {"SPLIT", "DEFAULT", "TARGETING_KEY_MISSING"}),
                             ("experiment:of-device-exp", {"SPLIT", "DEFAULT", "INVALID_CONTEXT"}),
                             ("experiment:of-off-exp", {"DISABLED"}),
                             ("experiment:of-stopped-exp", {"DISABLED"}),
                             ("experiment:of-draft-exp", {"DISABLED"}),
                             ("of-bool", {"TARGETING_MATCH", "SPLIT", "TARGETING_KEY_MISSING"})]:
            self.tally.check(f"{name} gave every kind of answer", None if outcomes[name] == wanted else f"want {sorted(wanted)}", f"{sorted(outcomes[name])}")

        self.check_auth(key, key_id)
        stop = self.server.stop()
        self.tally.check("server stops cleanly", None if stop == 0 else f"exit {stop}")

    def check_bulk(self, label, key, targeting_key, attributes, results):
        """The bulk route lists what the single route gave the client, and answers 304 to its ETag."""
        context = dict(attributes)
        if targeting_key is not None:
            context["targetingKey"] = targeting_key
        answer = self.http.post(self.url("/ofrep/v1/evaluate/flags"), json={"context": context}, headers={"X-API-Key": key}, timeout=10)
        if answer.status_code != 200:
            self.tally.check(f"{label}: bulk", f"status {answer.status_code}", answer.text[:300])
            return
        items = {item["key"]: item for item in answer.json()["flags"]}
        self.tally.check(f"{label}: bulk lists every flag and experiment",
                         None if set(items) == set(results) else f"keys {sorted(items)}", f"{sorted(results)}")
        for name, (value, variant, reason, code) in results.items():
            item = items.get(name, {})
            if code is not None:
                ok = item.get("errorCode") == code and "value" not in item
            else:
                default = NOT_IN if name.startswith("experiment:") else DEFAULTS[definitions_type(name)]
                ok = same(item.get("value", default), value) and item.get("variant") == variant and item.get("reason") == reason
            self.tally.check(f"{label}: bulk {name}", None if ok else f"client resolved {(value, variant, reason, code)}", f"{item}")
        etag = answer.headers.get("ETag")
        again = self.http.post(self.url("/ofrep/v1/evaluate/flags"), json={"context": context}, timeout=10,
                               headers={"X-API-Key": key, "If-None-Match": etag or '"none"'})
        self.tally.check(f"{label}: bulk If-None-Match ETag", None if etag and again.status_code == 304 and not again.content else
                         f"status {again.status_code}", f"ETag {etag!r}, body {again.content[:100]!r}")

    def check_auth(self, key, key_id):
        """No key, a wrong key, the admin token, a revoked key: 401 with no body; the client its default."""
        context = {"context": {"targetingKey": "ada", "country": "DE"}}
        for name, headers in [("no key", {}), ("a wrong key", {"X-API-Key": "fsk_wrong"}),
                              ("the admin token", {"Authorization": f"Bearer {self.server.admin_token}"})]:
            for path in ["/ofrep/v1/evaluate/flags/eu-face-scan", "/ofrep/v1/evaluate/flags"]:
                answer = self.http.post(self.url(path), json=context, headers=headers, timeout=10)
                self.tally.check(f"{name}: {path}", None if answer.status_code == 401 and not answer.content else
                                 f"status {answer.status_code}", answer.text[:200])
            got = self.evaluate(self.client(f"refused {name}", headers), "boolean", "eu-face-scan", "ada", {"country": "DE"})
            self.tally.check(f"{name}: the client", None if got[0] is False and got[3] == "GENERAL" else "want its default with GENERAL", f"{got}")
        bearer = self.client("bearer", {"Authorization": f"Bearer {key}"})
        got = self.evaluate(bearer, "boolean", "eu-face-scan", "ada", {"country": "DE"})
        self.tally.check("the key as a bearer token", None if got == (True, "on", "TARGETING_MATCH", None) else "want on", f"{got}")

        # A change to what this context gets changes the bulk ETag.
        bulk = self.url("/ofrep/v1/evaluate/flags")
        before = self.http.post(bulk, json=context, headers={"X-API-Key": key}, timeout=10).headers.get("ETag")
        self.admin("PUT", "/v1/flags/of-static", {"variants": {"v2": "second"}, "defaultVariant": "v2"})
        after = self.http.post(bulk, json=context, headers={"X-API-Key": key, "If-None-Match": before or ""}, timeout=10)
        self.tally.check("a changed flag changes the ETag", None if after.status_code == 200 and after.headers.get("ETag") != before else
                         f"status {after.status_code}", f"{before} → {after.headers.get('ETag')}")

        revoked = self.admin("DELETE", f"/v1/client-keys/{key_id}")
        self.tally.check("revoke the key", None if revoked.status_code == 204 else f"status {revoked.status_code}")
        answer = self.http.post(self.url("/ofrep/v1/evaluate/flags/eu-face-scan"), json=context, headers={"X-API-Key": key}, timeout=10)
        self.tally.check("a revoked key", None if answer.status_code == 401 and not answer.content else f"status {answer.status_code}", answer.text[:200])
        got = self.evaluate(self.client("revoked", {"X-API-Key": key}), "boolean", "eu-face-scan", "ada", {"country": "DE"})
        self.tally.check("a revoked key: the client", None if got[0] is False and got[3] == "GENERAL" else "want its default with GENERAL", f"{got}")


def definitions_type(name):
    return FLAGS[name][0]


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: ofrep_client.py PATH/TO/flowstack")
    exit_on_sigterm()
    # The SDK logs every failed evaluation; the failures this check expects are counted, not logged.
    logging.getLogger("openfeature").setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as work:
        check = Check(os.path.abspath(sys.argv[1]), work)
        try:
            check.run()
        except Exception as error:  # the server died, or an upload was refused: say so, and fail
            check.tally.check("the check ran to its end", f"{type(error).__name__}: {error}", check.server.stderr_text()[-1000:])
        finally:
            check.server.stop()
    sys.exit(check.tally.report("ofrep"))


if __name__ == "__main__":
    main()

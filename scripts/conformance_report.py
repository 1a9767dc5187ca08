# What a schemathesis run of scripts/conformance.sh found and reached, read from its NDJSON report:
#   python conformance_report.py report.ndjson openapi.yaml
#
# Prints the failures per phase and check (a run that passes prints zeros, so a before/after is
# one line each), then, per operation, the statuses the stateful phase got. The stateful phase is
# the one that calls each operation with real ids (the spec's links carry them from the answer
# that made the resource), so it is where an operation's logic runs rather than its 404: the run
# fails when an operation never got a 2xx there, unless EXCEPTIONS below says why it cannot.
import collections
import json
import re
import sys

import yaml

# Operations the stateful phase is not expected to answer with a 2xx, and why. Each is still
# called in the other phases, and scripts/conformance.sh makes its resources by hand before the run.
EXCEPTIONS = {
    "revokeClientKey": "disabled in the stateful phase: it would revoke the key the client-key routes use",
    "deleteSession": "disabled in the stateful phase: ignored_auth calls again after the 204 and gets 404",
    "eraseUser": "disabled in the stateful phase: it would erase the users the session links lead to",
    "exportUser": "disabled in the stateful phase with eraseUser (an export changes nothing)",
}


def operations(spec_path):
    """(method, compiled path pattern, operationId) for every operation of the spec."""
    spec = yaml.safe_load(open(spec_path))
    found = []
    for path, item in spec["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$")
        for method, operation in item.items():
            if method != "parameters":
                # Literal paths first, so /v1/flags/evaluate is not taken for /v1/flags/{key}.
                found.append((path.count("{"), method.upper(), pattern, operation["operationId"]))
    return [(method, pattern, name) for _, method, pattern, name in sorted(found, key=lambda entry: entry[0])]


def main(report_path, spec_path):
    known = operations(spec_path)

    def operation_of(method, path):
        path = path.split("?", 1)[0]
        return next((name for m, pattern, name in known if m == method and pattern.match(path)), f"{method} {path}")

    failures = collections.defaultdict(set)  # phase → {(check, operation, status)}
    stateful = collections.defaultdict(collections.Counter)  # operation → status → calls
    for line in open(report_path):
        scenario = json.loads(line).get("ScenarioFinished")
        if not scenario:
            continue
        phase = scenario.get("phase") or "unknown"
        recorder = scenario["recorder"]
        for case_id, node in recorder.get("cases", {}).items():
            case = node["value"]
            operation = operation_of(case["method"], case["path"])
            interaction = recorder.get("interactions", {}).get(case_id)
            status = interaction["response"]["status_code"] if interaction and interaction.get("response") else None
            if phase == "stateful" and status is not None:
                stateful[operation][status] += 1
            for check in recorder.get("checks", {}).get(case_id, []):
                if check.get("status") == "failure":
                    failures[phase].add((check["name"], operation, status))

    phases = ["examples", "coverage", "fuzzing", "stateful"]
    print("conformance: failures per phase (distinct check, operation and status): "
          + ", ".join(f"{phase} {len(failures.get(phase, ()))}" for phase in phases + sorted(set(failures) - set(phases))))
    for phase in sorted(failures):
        for check, operation, status in sorted(failures[phase], key=str):
            print(f"  {phase}: {check} on {operation} ({status})")

    print("conformance: the stateful phase's calls, by status:")
    for operation in sorted(stateful):
        print(f"  {operation}: " + ", ".join(f"{status}×{count}" for status, count in sorted(stateful[operation].items())))
    every = sorted({name for _, _, name in known})
    unreached = [name for name in every
                 if name not in EXCEPTIONS and not any(200 <= status < 300 for status in stateful.get(name, {}))]
    reached = [name for name in every if any(200 <= status < 300 for status in stateful.get(name, {}))]
    print(f"conformance: the stateful phase reached {len(reached)} of {len(every)} operations with a 2xx; "
          f"{len(EXCEPTIONS)} are exempt:")
    for name, reason in sorted(EXCEPTIONS.items()):
        print(f"  {name}: {reason}")
    if unreached:
        sys.exit("conformance: the stateful phase got no 2xx from " + ", ".join(unreached)
                 + " (a link to each from the operation that makes its ids is missing, or leads nowhere)")


if __name__ == "__main__":
    main(*sys.argv[1:])

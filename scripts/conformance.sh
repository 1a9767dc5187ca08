#!/usr/bin/env bash
# Checks the server against openapi.yaml with schemathesis (PyPI), on a live server, with every
# check (`--checks all`) in every phase (examples, coverage, fuzzing, stateful): no 5xx;
# documented statuses, content types, headers and bodies; what the schema allows is accepted and
# what it forbids refused; 405s list in `Allow` the methods the spec gives the path; auth is
# enforced. The stateful phase follows the spec's links (a session's id and token from
# POST /v1/sessions to the session routes, a key, flag, experiment or flow to the routes that use
# it); the run fails if it did not reach the session routes, and prints what it called.
# FLOWSTACK_TEST_DB_KIND=postgresql runs the server on a throwaway PostgreSQL (scripts/pgserver.py,
# removed after) instead of a SQLite file.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
tools=$(scripts/python-tools.sh)
bin=${FLOWSTACK_BIN:-"$(swift build --show-bin-path)/flowstack"}  # FLOWSTACK_BIN: a binary built elsewhere
[ -x "$bin" ] || swift build --product flowstack >/dev/null
work=$(mktemp -d)
db="$work/db.sqlite" pg_dir=""
case ${FLOWSTACK_TEST_DB_KIND:-sqlite} in
    sqlite) ;;
    postgresql)
        trap 'rm -rf "$work"' EXIT
        pg_env=$(python3 scripts/pgserver.py start) || { echo "conformance: PostgreSQL did not start" >&2; exit 1; }
        eval "$pg_env"
        db=$URL pg_dir=$DIR ;;
    *) echo "conformance: FLOWSTACK_TEST_DB_KIND=$FLOWSTACK_TEST_DB_KIND: expected sqlite or postgresql" >&2; exit 2 ;;
esac
FLOWSTACK_ADMIN_TOKEN=conformance-admin "$bin" serve --port 0 --db "$db" >"$work/out.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; [ -z "$pg_dir" ] || python3 scripts/pgserver.py stop --dir "$pg_dir"; rm -rf "$work"' EXIT
port=$(listening_port "$work/out.log")
[ -n "$port" ] || { echo "conformance: the server did not start" >&2; cat "$work/out.log" >&2; exit 1; }
# A client key, so the OFREP routes (which take only client keys) are exercised past their 401:
# X-API-Key is read before Authorization there, and the admin routes ignore it.
key=$(curl -sf "http://127.0.0.1:$port/v1/client-keys" -H "Authorization: Bearer conformance-admin" -d '{"name":"conformance"}' \
    | sed -n 's/.*"key":"\(fsk_[^"]*\)".*/\1/p')
[ -n "$key" ] || { echo "conformance: could not make a client key" >&2; exit 1; }
# An experiment with sessions in both variants, some onboarded, so the report route is checked with
# its statistics (a comparison with numbers, the SRM check) rather than only 404s for made-up keys.
base="http://127.0.0.1:$port" admin="Authorization: Bearer conformance-admin"
curl -sf -X PUT "$base/v1/experiments/conformance" -H "$admin" \
    -d '{"variants": [{"key": "control", "weight": 0.5}, {"key": "treatment", "weight": 0.5}]}' >/dev/null
for i in $(seq 1 24); do
    read -r id token <<<"$(curl -sf "$base/v1/sessions" -d "{\"userId\":\"conformance-$i\"}" \
        | sed -E 's/^\{"session":\{"id":"([^"]+)","token":"([^"]+)".*/\1 \2/')"
    curl -sf "$base/v1/sessions/$id/actions" -H "Authorization: Bearer $token" -d '{"type":"onboarding.showSecond"}' >/dev/null
    [ $((i % 3)) -eq 0 ] || curl -sf "$base/v1/sessions/$id/actions" -H "Authorization: Bearer $token" -d '{"type":"onboarding.completed"}' >/dev/null
done
# Credentials by security scheme, so each route gets its own kind (admin token, client key) and the
# session routes get none from here: their token comes through the links (scripts/conformance_hooks.py).
# The GrowthBook payload route takes the key in its path: give it there too, so schemathesis
# checks the payloads served (for the flags and experiments it uploads) rather than only 401s.
cat >"$work/schemathesis.toml" <<TOML
[auth.openapi.adminToken]
bearer = "conformance-admin"

[auth.openapi.clientKey]
api_key = "$key"

# A schema-valid request may still be refused as unprocessable: 422 is the API's answer for what
# JSON Schema cannot say (a flow, flag or experiment definition that does not hold together, a deep
# link no flow declares, a client that can render no activated version, an action no flow handles).
# And 412: a well-formed If-Match that names another version than the session's is refused as a
# failed precondition (the stateful phase sends generated tags once it reaches the action routes).
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "412", "422", "429", "5xx"]

[[operations]]
include-operation-id = "getGrowthBookFeatures"
parameters = { "path.clientKey" = "$key" }

# baseline and metric name a variant or metric of the experiment's data: 400 at the parameter.
[[operations]]
include-operation-id = "getExperimentReport"
parameters = { "path.key" = "conformance" }
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "404"]

# OFREP answers an evaluation error (TARGETING_KEY_MISSING for an experiment bucketed on a
# targeting key the context does not have) 400, as its specification says.
[[operations]]
include-operation-id = "ofrepEvaluateFlag"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "404"]

# A batch's taps need keys of their own, which JSON Schema cannot say of an array of objects.
[[operations]]
include-operation-id = "postActionBatch"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "404", "409", "422"]

# Schemathesis sends If-Match values its own header strategy makes (0), not the pattern the
# spec gives (quoted entity tags); the server refuses those as malformed, 400 at the header.
[[operations]]
include-operation-id = "patchExperiment"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "404", "409", "412", "422"]

# The stateful phase would revoke the key every client-key route here uses (a link from the key list).
[[operations]]
include-operation-id = "revokeClientKey"
phases.stateful.enabled = false

# In the stateful phase, ignored_auth calls again with a wrong token after the 204: the session is
# gone by then, so 404 (and a per-operation check setting does not reach that phase).
[[operations]]
include-operation-id = "deleteSession"
phases.stateful.enabled = false

# An erasure in the stateful phase would erase the users whose sessions the links lead to (and the
# export of one changes nothing): both are checked in the other phases.
[[operations]]
include-operation-id = "eraseUser"
phases.stateful.enabled = false

[[operations]]
include-operation-id = "exportUser"
phases.stateful.enabled = false
TOML
status=0
PYTHONPATH=scripts SCHEMATHESIS_HOOKS=conformance_hooks "$tools/schemathesis" --config-file "$work/schemathesis.toml" \
    run "http://127.0.0.1:$port/openapi.yaml" --checks all --phases examples,coverage,fuzzing,stateful \
    --max-examples 50 --seed 1 --no-color --report ndjson --report-ndjson-path "$work/report.ndjson" || status=$?
# What the stateful phase called, per operation: the links must have led it into the session routes.
"$tools/python" - "$work/report.ndjson" <<'PY'
import collections, json, re, sys
calls = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    scenario = json.loads(line).get("ScenarioFinished")
    if not scenario or scenario.get("phase") != "stateful":
        continue
    recorder = scenario["recorder"]
    for case_id, node in recorder.get("cases", {}).items():
        interaction = recorder.get("interactions", {}).get(case_id)
        if interaction and interaction.get("response"):
            case = node["value"]
            path = re.sub(r"^/v1/sessions/[^/]+", "/v1/sessions/{id}", case["path"])
            calls[f'{case["method"]} {path}'][interaction["response"]["status_code"]] += 1
print("conformance: the stateful phase's calls, by status:")
for operation in sorted(calls):
    print(f"  {operation}: " + ", ".join(f"{status}×{count}" for status, count in sorted(calls[operation].items())))
reached = [operation for operation in calls if operation.startswith(("GET /v1/sessions/{id}", "POST /v1/sessions/{id}"))
           and any(200 <= status < 300 for status in calls[operation])]
# A 2xx there needs the session's id and token, which only the links carry; how many routes a run
# reaches varies with the run (two to eight here), so one is the bar.
if not reached:
    sys.exit("conformance: the stateful phase reached no session route with a 2xx; "
             "the links from POST /v1/sessions no longer lead there")
print(f"conformance: the stateful phase reached {len(reached)} session routes with a 2xx")
PY
[ "$status" -eq 0 ] || exit "$status"
# GET /openapi.yaml as a client that parses YAML reads it (schemathesis lets this body pass
# unchecked): the document it gets must match the schema the document declares for itself.
"$tools/python" - "http://127.0.0.1:$port/openapi.yaml" <<'PY'
import sys, urllib.request
import jsonschema, yaml
document = yaml.safe_load(urllib.request.urlopen(sys.argv[1]).read())
schema = document["paths"]["/openapi.yaml"]["get"]["responses"]["200"]["content"]["application/yaml"]["schema"]
try:
    jsonschema.validate(document, schema)
except jsonschema.ValidationError as error:
    where = "/" + "/".join(map(str, error.absolute_path))
    sys.exit(f"conformance: GET /openapi.yaml, parsed as YAML, does not match its declared schema at {where}: "
             f"{error.validator} {error.validator_value!r} fails")
print("conformance: GET /openapi.yaml, parsed as YAML, matches its declared schema")
PY

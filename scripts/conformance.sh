#!/usr/bin/env bash
# Checks the server against openapi.yaml with schemathesis (PyPI), on a live server, with every
# check (`--checks all`) in every phase (examples, coverage, fuzzing, stateful): no 5xx;
# documented statuses, content types, headers and bodies; what the schema allows is accepted and
# what it forbids refused; 405s list in `Allow` the methods the spec gives the path; auth is
# enforced. A schema-valid request may be answered only 2xx or 304, unless its operation lists
# below the refusals its spec documents (a semantic 422, a lifecycle 409, a 404 for an id no call
# made), so a new refusal anywhere fails. The stateful phase follows the spec's links (a session's
# id and token from POST /v1/sessions to the session routes, a flag, experiment, flow or release
# from the answer that made or listed it to every route on it); scripts/conformance_report.py
# then prints the failures per phase, what the stateful phase called, and the operations that got
# no 2xx in any phase (FLOWSTACK_CONFORMANCE_STRICT_COVERAGE=1 fails the run on them).
# FLOWSTACK_TEST_DB_KIND=postgresql runs the server on a throwaway PostgreSQL (scripts/pgserver.py,
# removed after) instead of a SQLite file; FLOWSTACK_CONFORMANCE_REPORT=<file> keeps the NDJSON report.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
tools=$(scripts/python-tools.sh)
bin=${FLOWSTACK_BIN:-"$(swift build --show-bin-path)/flowstack"}  # FLOWSTACK_BIN: a binary built elsewhere
[ -x "$bin" ] || swift build --product flowstack >/dev/null
work=$(mktemp -d)
db="$work/db.sqlite" pg_dir=""
# The admin token: serve refuses one under 32 bytes.
admin_token=conformance-admin-token-0123456789abcdef
case ${FLOWSTACK_TEST_DB_KIND:-sqlite} in
    sqlite) ;;
    postgresql)
        trap 'rm -rf "$work"' EXIT
        pg_env=$(python3 scripts/pgserver.py start) || { echo "conformance: PostgreSQL did not start" >&2; exit 1; }
        eval "$pg_env"
        db=$URL pg_dir=$DIR ;;
    *) echo "conformance: FLOWSTACK_TEST_DB_KIND=$FLOWSTACK_TEST_DB_KIND: expected sqlite or postgresql" >&2; exit 2 ;;
esac
# Failed admin checks are limited by default (10, then 10 a minute per address): schemathesis's
# authentication checks send wrong credentials on purpose, thousands of times from one address,
# and would meet the 429 (documented on every route that takes a credential) instead of the
# 401 they check for. The limit has its own tests (FailedTokenLimitTests).
FLOWSTACK_ADMIN_TOKEN=$admin_token "$bin" serve --port 0 --db "$db" --admin-failure-rate off >"$work/out.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; [ -z "$pg_dir" ] || python3 scripts/pgserver.py stop --dir "$pg_dir"; rm -rf "$work"' EXIT
port=$(listening_port "$work/out.log")
[ -n "$port" ] || { echo "conformance: the server did not start" >&2; cat "$work/out.log" >&2; exit 1; }
# A client key, so the OFREP routes (which take only client keys) are exercised past their 401:
# X-API-Key is read before Authorization there, and the admin routes ignore it.
made=$(curl -sf "http://127.0.0.1:$port/v1/client-keys" -H "Authorization: Bearer $admin_token" -d '{"name":"conformance"}')
key=$(sed -n 's/.*"key":"\(fsk_[^"]*\)".*/\1/p' <<<"$made") key_id=$(sed -n 's/.*"id":"\(ck_[^"]*\)".*/\1/p' <<<"$made")
[ -n "$key" ] || { echo "conformance: could not make a client key" >&2; exit 1; }
# An experiment with sessions in both variants, some onboarded, so the report route is checked with
# its statistics (a comparison with numbers, the SRM check) rather than only 404s for made-up keys.
base="http://127.0.0.1:$port" admin="Authorization: Bearer $admin_token"
curl -sf -X PUT "$base/v1/experiments/conformance" -H "$admin" \
    -d '{"variants": [{"key": "control", "weight": 0.5}, {"key": "treatment", "weight": 0.5}]}' >/dev/null
for i in $(seq 1 24); do
    read -r id token <<<"$(curl -sf "$base/v1/sessions" -d "{\"userId\":\"conformance-$i\"}" \
        | sed -E 's/^\{"session":\{"id":"([^"]+)","token":"([^"]+)".*/\1 \2/')"
    curl -sf "$base/v1/sessions/$id/actions" -H "Authorization: Bearer $token" -d '{"type":"onboarding.showSecond"}' >/dev/null
    [ $((i % 3)) -eq 0 ] || curl -sf "$base/v1/sessions/$id/actions" -H "Authorization: Bearer $token" -d '{"type":"onboarding.completed"}' >/dev/null
done
# A flag, so the flag routes the links lead to from the list have one to read, write and evaluate.
curl -sf -X PUT "$base/v1/flags/conformance-flag" -H "$admin" \
    -d '{"variants": {"on": true, "off": false}, "defaultVariant": "off"}' >/dev/null
# An admin key of another identity, which makes the releases (POST /v1/releases below), so the
# admin token may approve them (no one approves a release they made) and the links carry a
# release from its creation through its test, approval, activation, rollout and rollback.
made=$(curl -sf "$base/v1/admin-keys" -H "$admin" -d '{"name":"conformance-releaser","role":"publish"}')
releaser=$(sed -n 's/.*"key":"\(fsa_[^"]*\)".*/\1/p' <<<"$made") releaser_id=$(sed -n 's/.*"id":"\(ak_[^"]*\)".*/\1/p' <<<"$made")
[ -n "$releaser" ] || { echo "conformance: could not make an admin key" >&2; exit 1; }
# A release of it, tested, so the release routes the links lead to from the list have one to move.
curl -sf "$base/v1/flows/modal" -H "$admin" >"$work/modal.json"
curl -sf "$base/v1/releases" -H "Authorization: Bearer $releaser" -d "{\"flows\": {\"modal\": $(cat "$work/modal.json")},
    \"tests\": [{\"scenarios\": [{\"name\": \"a new user starts at onboarding\", \"start\": {\"expect\": {\"top\": \"onboarding.first\"}}}]}]}" >/dev/null
# Credentials by security scheme, so each route gets its own kind (admin token, client key) and the
# session routes get none from here: their token comes through the links (scripts/conformance_hooks.py).
# The GrowthBook payload route takes the key in its path: give it there too, so schemathesis
# checks the payloads served (for the flags and experiments it uploads) rather than only 401s.
cat >"$work/schemathesis.toml" <<TOML
[auth.openapi.adminToken]
bearer = "$admin_token"

[auth.openapi.clientKey]
api_key = "$key"

# What a schema-valid request may be answered, as narrow as the API is: a success, or 304 to an
# If-None-Match that names the current tag. Every other answer to valid data is a disagreement
# between the server and openapi.yaml, unless an operation below lists it with its reason (the
# first [[operations]] entry that names an operation decides its list; the general ones come last).
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "304"]

# A request line longer than the server reads is refused before routing, 414 (413 a body too
# large): rejections, as schemathesis's defaults list the others.
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "414", "415", "422", "428", "429", "5xx"]

[generation]
max-examples = 50

# Scenarios enough, and long enough, for the links to carry each resource from the answer that
# made it to every operation on it (a release takes six steps from its flow to its rollback).
# Only the spec's own links: schemathesis's inferred ones (from names alike) also led from the
# admin key list to revoking the key the releases are made with.
[phases.stateful]
max-steps = 10
generation.max-examples = 300
inference.algorithms = []

# Releases are made under the releaser's key (scripts/conformance_hooks.py). A release whose
# definitions do not hold together is 422; a release conflict 409.
[[operations]]
include-operation-id = "createRelease"
checks.positive_data_acceptance.expected-statuses = ["2xx", "409", "422"]

# A rollout whose steps do not rise one after another above its percentage, or whose interval is
# outside 1 second to 30 days, is 400 invalid-rollout (JSON Schema cannot order an array's items).
[[operations]]
include-operation-id = "activateRelease"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "404", "409"]

[[operations]]
include-operation-id = "getGrowthBookFeatures"
parameters = { "path.clientKey" = "$key" }

# baseline and metric name a variant or metric of the experiment's data: 400 at the parameter.
[[operations]]
include-operation-id = "getExperimentReport"
parameters = { "path.key" = "conformance" }
checks.positive_data_acceptance.expected-statuses = ["2xx", "304", "400", "404"]

# OFREP answers an evaluation error (TARGETING_KEY_MISSING for an experiment bucketed on a
# targeting key the context does not have) 400, as its specification says; a made-up key is 404.
[[operations]]
include-operation-id = "ofrepEvaluateFlag"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "404"]

# The semantic refusals each operation documents in its 422 (and 409) response: what JSON Schema
# cannot say. A session's links are those of the stored root flow, and what a client renders is
# checked against the stored screens.
[[operations]]
include-operation-id = ["createSession", "resolveLink"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "422"]

# An action the session's flows do not handle (422), from a screen no longer on top or during an
# interaction (409), on another version than If-Match names (412); 401 and 404 as every session route.
[[operations]]
include-operation-id = "postAction"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "404", "409", "412", "422"]

# A graph too large to lay out as SVG.
[[operations]]
include-operation-id = "getSessionGraph"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "404", "422"]

[[operations]]
include-operation-id = "getFlowGraph"
checks.positive_data_acceptance.expected-statuses = ["2xx", "404", "422"]

# A live admin key already has the name.
[[operations]]
include-operation-id = "createAdminKey"
checks.positive_data_acceptance.expected-statuses = ["2xx", "409"]

# Definitions that do not hold together (an unknown effect target, a rule on an undeclared screen).
[[operations]]
include-operation-id = ["putFlow", "putFlag", "replaySessions"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "422"]

[[operations]]
include-operation-id = ["activateFlow", "testFlowVersion"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "404", "422"]

# An experiment's lifecycle allows only some moves (409 invalid-transition).
[[operations]]
include-operation-id = "putExperiment"
checks.positive_data_acceptance.expected-statuses = ["2xx", "409", "422"]

[[operations]]
include-operation-id = "patchExperiment"
checks.positive_data_acceptance.expected-statuses = ["2xx", "404", "409", "412", "422"]

# A release's lifecycle allows only some moves (409 with the code that says which); a release
# without tests has none to run (422).
[[operations]]
include-operation-id = "testRelease"
checks.positive_data_acceptance.expected-statuses = ["2xx", "404", "409", "422"]

[[operations]]
include-operation-id = ["approveRelease", "rollbackRelease", "raiseRollout"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "404", "409"]

# The session routes: outside the links a generated id names no session (404), and the token that
# only POST /v1/sessions hands out is not there (401).
[[operations]]
include-path-regex = '^/v1/sessions/\{id\}'
checks.positive_data_acceptance.expected-statuses = ["2xx", "304", "401", "404"]

# Every other route with an id in its path: outside the links a generated id names nothing (404).
[[operations]]
include-path-regex = '\{'
checks.positive_data_acceptance.expected-statuses = ["2xx", "304", "404"]

# The stateful phase would revoke the key every client-key route here uses (a link from the key list).
[[operations]]
include-operation-id = "revokeClientKey"
phases.stateful.enabled = false

# ignored_auth calls again with a wrong token after a 204: the session is gone by then, so 404 as
# for any id that names no session (scripts/conformance_hooks.py drops that failure in the other
# phases, which draw ids the server handed out too; SessionEndAPITests checks that no token, or a
# wrong one, deletes nothing).
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
CONFORMANCE_RELEASER=$releaser CONFORMANCE_RELEASER_ID=$releaser_id CONFORMANCE_CLIENT_KEY_ID=$key_id CONFORMANCE_ADMIN_TOKEN=$admin_token \
PYTHONPATH=scripts SCHEMATHESIS_HOOKS=conformance_hooks "$tools/schemathesis" --config-file "$work/schemathesis.toml" \
    run "http://127.0.0.1:$port/openapi.yaml" --checks all --phases examples,coverage,fuzzing,stateful \
    --seed 1 --no-color --report ndjson --report-ndjson-path "$work/report.ndjson" || status=$?
[ -z "${FLOWSTACK_CONFORMANCE_REPORT:-}" ] || cp "$work/report.ndjson" "$FLOWSTACK_CONFORMANCE_REPORT"
"$tools/python" scripts/conformance_report.py "$work/report.ndjson" openapi.yaml || status=$?
if [ "$status" -ne 0 ]; then
    # What the server said of it: a 5xx is logged with its cause (a database error names it).
    echo "conformance: the server's warnings and errors (the last 40):" >&2
    grep -E 'error|warning|critical' "$work/out.log" | tail -40 >&2 || true
    exit "$status"
fi
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

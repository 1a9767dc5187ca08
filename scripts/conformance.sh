#!/usr/bin/env bash
# Checks every route's answers against openapi.yaml with schemathesis (PyPI), on a live server:
# no 5xx, documented statuses, documented content types, bodies matching their schemas.
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
# The GrowthBook payload route takes the key in its path: give it there too, so schemathesis
# checks the payloads served (for the flags and experiments it uploads) rather than only 401s.
cat >"$work/schemathesis.toml" <<TOML
[[operations]]
include-operation-id = "getGrowthBookFeatures"
parameters = { "path.clientKey" = "$key" }

[[operations]]
include-operation-id = "getExperimentReport"
parameters = { "path.key" = "conformance" }
TOML
"$tools/schemathesis" --config-file "$work/schemathesis.toml" run "http://127.0.0.1:$port/openapi.yaml" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    -H "Authorization: Bearer conformance-admin" -H "X-API-Key: $key" --max-examples 50 --seed 1 --no-color
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

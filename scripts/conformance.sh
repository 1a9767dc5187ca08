#!/usr/bin/env bash
# Checks every route's answers against openapi.yaml with schemathesis (PyPI), on a live server:
# no 5xx, documented statuses, documented content types, bodies matching their schemas.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
tools=$(scripts/python-tools.sh)
bin="$(swift build --show-bin-path)/flowstack"
[ -x "$bin" ] || swift build --product flowstack >/dev/null
work=$(mktemp -d)
FLOWSTACK_ADMIN_TOKEN=conformance-admin "$bin" serve --port 0 --db "$work/db.sqlite" >"$work/out.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
port=$(listening_port "$work/out.log")
[ -n "$port" ] || { echo "conformance: the server did not start" >&2; cat "$work/out.log" >&2; exit 1; }
"$tools/schemathesis" run "http://127.0.0.1:$port/openapi.yaml" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    -H "Authorization: Bearer conformance-admin" --max-examples 50 --seed 1 --no-color

#!/usr/bin/env bash
# The test command of the README and of CI: installs what is missing, runs the Swift tests,
# checks openapi.yaml and the live server against it, runs the built binary end to end, and
# runs the Swift tests last (so their summary closes the output). The end-to-end runs go on
# SQLite first, then on PostgreSQL (each run starts a throwaway server of its own with
# scripts/pgserver.py and removes it after), then the database-restart test, then three nodes
# behind HAProxy (the curl sessions of the README and docs, and the history checker with faults).
set -euo pipefail
cd "$(dirname "$0")/.."
# The steps that took 5 s or more, listed when the script ends however it ends: CI stops a run
# at its time limit and shows only the end of the output, so the end says where the time went.
step_command="start"; step_at=$SECONDS; slow_steps=()
step_done() {
    if (( SECONDS - step_at >= 5 )); then
        slow_steps+=("$(printf '%6d s  %s' $((SECONDS - step_at)) "${step_command:0:110}")")
    fi
    step_command=$1; step_at=$SECONDS
}
trap 'step_done "$BASH_COMMAND"' DEBUG
trap 'trap - DEBUG; step_done end; echo "test.sh: ${SECONDS} s in all; the steps of 5 s or more:"; printf "%s\n" "${slow_steps[@]}"' EXIT
# The Python scripts write no __pycache__ next to their sources (a read-only checkout works too).
export PYTHONDONTWRITEBYTECODE=1
scripts/setup.sh
# curl and python3 drive the end-to-end scripts; headless Chromium runs the playground's test.
if ! command -v curl >/dev/null || ! command -v python3 >/dev/null || ! command -v chromium >/dev/null; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq curl python3 python3-venv chromium >/dev/null
fi
# Node, TypeScript's compiler and esbuild for the JavaScript engine and client (clients/js):
# its tests, its declarations, its size.
if ! command -v node >/dev/null || ! command -v tsc >/dev/null || ! command -v esbuild >/dev/null; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    packages="node-typescript esbuild"
    command -v node >/dev/null || packages="nodejs $packages"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $packages >/dev/null
fi
# HAProxy for the runs of several nodes.
if ! command -v haproxy >/dev/null; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq haproxy >/dev/null
fi
# PostgreSQL's server (initdb, postgres, pg_basebackup, pg_amcheck) for the runs on PostgreSQL.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
fi
tools=$(scripts/python-tools.sh)
"$tools/openapi-spec-validator" openapi.yaml
# The Python harness's own unit tests (scripts/harness/tests: the history checker on hand-made histories).
python3 -m unittest discover -s scripts/harness/tests -t scripts
swift build --build-tests
# An app's package that adds FlowStackClient by path builds no server module, and runs against the server.
scripts/client_package.sh
scripts/conformance.sh
scripts/smoke.sh
bin="$(swift build --show-bin-path)/flowstack"
# The sample app's flow tests (flows/tests/), offline, as a team would run its own in CI.
"$bin" flows test flows/tests --flows flows --flags flags
# The engine conformance suite (engine-suite/README.md): regenerated from its sources, it must be
# what is checked in (commit the regenerated cases with the engine change that moved them); then
# every case, and seeded random walks of the sample app against a real server, through the Swift runner.
suite_out=$(mktemp -d)
"$bin" engine-suite generate --sources engine-suite/sources --out "$suite_out" >/dev/null
diff -r engine-suite/cases "$suite_out/cases"
diff engine-suite/features.json "$suite_out/features.json"
rm -rf "$suite_out"
python3 scripts/engine_suite.py --server "$bin" "$bin" engine-suite run
# The JavaScript engine and client (clients/js): types, node's tests (the client against a real
# server through faults, the Swift client's simulation schedules), the suite and the walks through
# the JavaScript engine in node and in headless Chromium, the package's size.
scripts/js.sh "$bin"
# The JSON Schemas (schemas/) against every shipped file and the reference page's examples, both
# ways (what the schema refuses the server refuses, what it accepts the server accepts), with the
# pinned jsonschema; the page and the schemas name every keyword the parsers accept.
"$tools/python" scripts/schemas.py "$bin"
# Flows kept in git: init, the offline commands on its result, and diff, push and pull against a server.
python3 scripts/flows_git.py "$bin"
# The shell and Python blocks of the README, CONTRIBUTING.md and docs/ (the curl sessions are smoke.sh's), the first command included, and their links.
"$tools/python" scripts/readme.py "$bin"
python3 scripts/browser.py "$bin"
python3 scripts/crash.py "$bin"
# The Swift client (flowstack-tap faults, built in release) through a fault proxy: every tap it
# makes is in the server's log exactly once, through 500s, garbage, cut connections and kills.
python3 scripts/client_faults.py "$bin"
python3 scripts/badinput.py "$bin"
# Start-up and wrong settings: one server per SQLite file, open errors that name the path and the
# cause, PostgreSQL unreachable at start (local listeners only), the same exit status everywhere.
python3 scripts/startup.py "$bin"
python3 scripts/slowclients.py "$bin"
# SIGTERM under load, 20 times, with libmicrohttpd's stop race widened by a preload: every stop exits 0.
python3 scripts/stopping.py "$bin"
# OFREP through a real client: OpenFeature's Python SDK and OFREP provider (pinned, in the venv).
"$tools/python" scripts/ofrep_client.py "$bin"
# A real client: GrowthBook's Python SDK (pinned in the venv) evaluates the payload of
# /api/features/{clientKey} for 1,000 users and must agree with FlowStack on every flag and variant.
"$tools/python" scripts/growthbook_client.py "$bin"
# The experiment report's statistics equal GrowthBook's stats engine (gbstats, pinned in the venv):
# a grid of counts through `flowstack experiments stats`, and reports of real sessions.
"$tools/python" scripts/gbstats_check.py "$bin"
scripts/fuzz.sh 20
FLOWSTACK_TEST_DB_KIND=postgresql scripts/smoke.sh
FLOWSTACK_TEST_DB_KIND=postgresql scripts/conformance.sh
FLOWSTACK_TEST_DB_KIND=postgresql python3 scripts/crash.py "$bin"
FLOWSTACK_TEST_DB_KIND=postgresql python3 scripts/client_faults.py "$bin"
FLOWSTACK_TEST_DB_KIND=postgresql python3 scripts/badinput.py "$bin"
python3 scripts/dbrestart.py "$bin"
# Several nodes: the curl sessions of the README and docs through HAProxy, then the history checker with faults.
scripts/cluster_smoke.sh "$bin"
python3 scripts/history.py "$bin"
# Again with the last node started without --node-url beside two owners, as while a rolling restart
# turns leases on: the owners must read the database (and still write) while it serves.
HISTORY_MIXED=1 python3 scripts/history.py "$bin"
# Failover (issue 23): a former primary started writable after a failover is refused (no stale
# reads), stuck commits show on /healthz, one of two ANY-1 standbys may die without stopping writes.
python3 scripts/failover.py "$bin"
# The API tests on PostgreSQL (they start a throwaway server themselves; the store suites of
# FlowStoreTests run every test on SQLite and on PostgreSQL by themselves, in the run below), then
# every Swift test on SQLite, last, so that its summary closes the output (before the steps' times).
# Each test run under a deadline several times what it takes (scripts/deadline.sh): one that hangs
# ends with where its threads wait, not with CI's own time limit and no word of where it stood.
FLOWSTACK_TEST_DB_KIND=postgresql scripts/deadline.sh 1200 swift test --skip-build --filter FlowServerTests
# The Swift client against a flowstack on a throwaway PostgreSQL (each server a schema of its own).
FLOWSTACK_TEST_DB_KIND=postgresql scripts/deadline.sh 900 swift test --skip-build --filter FlowStackClientTests
# The Swift client's store on a full disk, stood in for by the test process's file size limit:
# in a process of its own, since every test beside it would meet the limit too.
FLOWSTACK_PROCESS_LIMIT_TESTS=1 scripts/deadline.sh 300 swift test --skip-build --filter FileSessionStoreFaultTests
scripts/deadline.sh 1800 swift test --skip-build

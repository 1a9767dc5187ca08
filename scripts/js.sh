#!/usr/bin/env bash
# The JavaScript engine and client (clients/js), as CI checks them:
#   scripts/js.sh PATH/TO/flowstack
# - its type declarations (clients/js/types) are what TypeScript's compiler makes of the JSDoc
#   types now, and the sources type-check under `strict`;
# - node's test runner runs clients/js/test (engine, client machine, simulations, and the client
#   against a real `flowstack serve`, started by the tests from FLOWSTACK_BIN);
# - the engine answers the conformance suite (engine-suite/) byte for byte, and seeded random
#   walks of the sample app step for step with the server, through its node runner and in
#   headless Chromium;
# - the client's size, bundled, minified and gzipped (esbuild), stays under its budgets.
# (The README's example runs in scripts/readme.py, with the other blocks of the README.)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "$1")
types=$(mktemp -d)
trap 'rm -rf "$types"' EXIT
(cd clients/js && tsc -p . --outDir "$types")
diff -r clients/js/types "$types" || { echo "js: clients/js/types is stale: run (cd clients/js && tsc -p .) and commit it" >&2; exit 1; }
(cd clients/js && FLOWSTACK_BIN="$bin" node --test test/*.test.js)
python3 scripts/engine_suite.py --server "$bin" node clients/js/bin/engine-suite-runner.mjs
python3 scripts/engine_suite.py --server "$bin" --browser clients/js/test/browser/runner.html
# The size an app pays, each as one minified module, gzipped: the client alone (taps drawn from
# the server's predictions) under the issue's 30 KB; the client with its engine (every tap drawn
# at once) under 51 KiB: 40.7 KB when first measured (BENCHMARKS.md), 46.6 KB once the engine held
# lists (issue 37: their reader, effects and diff, 6.9 KB), 49.5 KB with the client's checks of
# taps and its retried saves, 49.9 KB with row taps among the available actions, 50.2 KB with
# the lists' size caps and linear object look-ups (the review of issue 37), 51.7 KB with the event
# stream over XMLHttpRequest for React Native and rows from params held to declared kinds, 52.3
# KB with the key-value store's journal, 51.9 KB with the conformance runner moved out of the
# engine's entry (an app does not ship it), so that it does not grow unseen: the 30 KB the issue
# asks of it is not met yet.
for entry in "src/client/index.js 30720" "src/index.js 52224"; do
    set -- $entry
    size=$(esbuild "clients/js/$1" --bundle --minify --format=esm --log-level=warning | gzip -9 | wc -c)
    echo "js: clients/js/$1 bundled, minified and gzipped: $size bytes (budget $2)"
    [ "$size" -le "$2" ] || { echo "js: clients/js/$1 is over its size budget" >&2; exit 1; }
done
echo "js: passed"

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
# The size an app pays, each as one minified module, gzipped, under a budget that is what it is
# now rounded up, so that neither grows unseen: the client alone (taps drawn from the server's
# predictions, src/client/index.js), 16.6 KB since each page claims its own slot of a stored
# session under a Web Lock (two tabs), well under the issue's 30 KB; and the client with its
# engine as an app ships it, tools/app-entry.js (the README's example: FlowSession,
# KeyValueSessionStore, localEngine({ SessionState, readAction }), tree-shaken), which
# test/client.app-bundle.test.js runs against a real server so that what esbuild leaves out is
# only what an app never reaches. That entry replaces src/index.js, which exports everything
# (an app's bundler keeps only what it imports; /sdk/ serves the modules unbundled), and which
# grew from 40.7 KB when first measured to 51.9 KB (lists, checks of taps, retried saves, row
# taps, the XMLHttpRequest event stream, the store's journal). The app's entry was 51.8 KB and is
# 50.8 KB since the conformance-only answers left SessionState and localEngine stopped taking the
# engine's namespace (BENCHMARKS.md), 51.3 KB with the bounded wait for an engine given as a
# promise (engineWait, and the kept bundle loaded when it comes late), 51.6 KB with the tabs' slots,
# 51.8 KB with the refusal of a user state holding U+0000 (which PostgreSQL cannot store).
# The engine alone is about
# 35 KB of it: the 30 KB the issue asks of the two together is not met.
for entry in "src/client/index.js 16896" "tools/app-entry.js 52224"; do
    set -- $entry
    size=$(esbuild "clients/js/$1" --bundle --minify --format=esm --log-level=warning | gzip -9 | wc -c)
    echo "js: clients/js/$1 bundled, minified and gzipped: $size bytes (budget $2)"
    [ "$size" -le "$2" ] || { echo "js: clients/js/$1 is over its size budget" >&2; exit 1; }
done
# The same app with the engine as a chunk of its own (tools/app-entry-lazy.js: `engine:
# import('@flowstack/client/engine').then(localEngine)`, bundled with code splitting): what the
# page loads before it can start a session, 16.0 KB, is held to the client's budget, and every
# chunk together (the engine's chunk is about 36 KB: a dynamic import keeps the engine entry's
# exports) to 52 KiB. What the page loads first is the entry's chunk and every chunk it imports
# statically (esbuild's metafile says which): code the client and the engine share would go to
# such a chunk, and counting the entry's file alone would leave it out of the first screen's size.
split=$(mktemp -d)
trap 'rm -rf "$types" "$split"' EXIT
esbuild clients/js/tools/app-entry-lazy.js --bundle --splitting --minify --format=esm --outdir="$split" --metafile="$split/meta.json" --log-level=warning
first=0
for chunk in $(node -e '
  const outputs = require(process.argv[1]).outputs;
  const entry = Object.keys(outputs).find((path) => outputs[path].entryPoint === "clients/js/tools/app-entry-lazy.js");
  const first = new Set([entry]);
  for (const path of first) for (const imported of outputs[path].imports) if (imported.kind === "import-statement") first.add(imported.path);
  for (const path of first) console.log(path.split("/").pop());
' "$split/meta.json"); do first=$((first + $(gzip -9 <"$split/$chunk" | wc -c))); done
total=0
for chunk in "$split"/*.js; do total=$((total + $(gzip -9 <"$chunk" | wc -c))); done
echo "js: clients/js/tools/app-entry-lazy.js, split: the first chunk $first bytes (budget 16384), every chunk $total bytes (budget 53248), gzipped"
[ "$first" -le 16384 ] && [ "$total" -le 53248 ] || { echo "js: clients/js/tools/app-entry-lazy.js is over its size budget" >&2; exit 1; }
echo "js: passed"

#!/usr/bin/env bash
# The JavaScript engine's cost against the Swift engine's, on the same input: every input line of
# the conformance suite (bundles, actions, predictions, dry runs, available actions) repeated
# ROUNDS times, through each runner (one process, lines in, answers out); the answers must be the
# same bytes. Prints CPU seconds (user + system) and microseconds per line for each, three runs,
# then the node engine's in-process cost per action (applying + document) over a seeded walk.
#
#   bench/js_engine.sh [ROUNDS=200]      (FLOWSTACK_BIN=... to skip the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
rounds=${1:-200}
if [ -n "${FLOWSTACK_BIN:-}" ]; then flowstack=$FLOWSTACK_BIN; else
    swift build -c release --product flowstack >/dev/null
    flowstack="$(swift build -c release --show-bin-path)/flowstack"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$rounds" "$work/input" <<'PY'
import os, sys
lines = []
for name in sorted(os.listdir("engine-suite/cases")):
    lines += open(os.path.join("engine-suite/cases", name), "rb").read().split(b"\n")[1:-1][0::2]
open(sys.argv[2], "wb").write(b"\n".join(lines * int(sys.argv[1])) + b"\n")
print(f"{len(lines) * int(sys.argv[1])} lines ({len(lines)} suite lines x {sys.argv[1]})")
PY
count=$(wc -l < "$work/input")
run() {
    local name=$1; shift
    local start end
    TIMEFORMAT="%U %S %R"
    { time "$@" < "$work/input" > "$work/out-$name"; } 2> "$work/time-$name"
    read -r user sys real < "$work/time-$name"
    awk -v n="$name" -v u="$user" -v s="$sys" -v r="$real" -v c="$count" \
        'BEGIN { printf "%-6s cpu %.2f s (%.1f us/line), wall %.2f s\n", n, u + s, (u + s) * 1e6 / c, r }'
}
for _ in 1 2 3; do
    run swift "$flowstack" engine-suite run
    run node node clients/js/bin/engine-suite-runner.mjs
    cmp -s "$work/out-swift" "$work/out-node" || { echo "the runners' answers differ" >&2; exit 1; }
done
node clients/js/tools/engine_bench.mjs 20000

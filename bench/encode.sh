#!/usr/bin/env bash
# encode.sh: user-space instructions per action of each stage of an action in the engine (parse,
# apply, state document, transition, stored tree), encoding every version from nothing ("fresh",
# as before issue 35) and with EncodingCache ("cached", as the server does now), counted by
# callgrind over the same seeded walk of the sample app (bench/encode/Sources/encode-bench).
#
#   bench/encode.sh [SESSIONS] [STEPS]      # defaults 200 sessions × 40 actions
#
# Needs valgrind. Prints one table; both modes must print the same checksum (equal outputs).
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=${1:-200}
steps=${2:-40}
swift build -c release --package-path bench/encode >&2
binary=bench/encode/.build/release/encode-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for mode in fresh cached; do
    valgrind --tool=callgrind --callgrind-out-file="$work/$mode.out" "$binary" flows "$sessions" "$steps" "$mode" \
        > "$work/$mode.txt" 2> /dev/null
    callgrind_annotate --inclusive=yes --threshold=100 "$work/$mode.out" > "$work/$mode.annotated" 2> /dev/null
done
python3 - "$work" <<'PYTHON'
import re, sys
work = sys.argv[1]
stages = [("parse", ["stageParse"]), ("apply", ["stageApply"]),
          ("state document", ["stageDocument", "stageCachedDocument"]), ("transition", ["stageTransition"]),
          ("stored tree", ["stageTree"])]
rows = {}
for mode in ("fresh", "cached"):
    summary = open(f"{work}/{mode}.txt").read()
    actions = int(summary.split()[0])
    costs = {}
    for line in open(f"{work}/{mode}.annotated"):
        match = re.match(r"\s*([\d,]+)", line)
        if not match: continue
        for name, symbols in stages:
            for symbol in symbols:
                # The stage's function has the largest inclusive cost of the symbols naming it
                # (its closures and specialisations name it too).
                if re.search(r"(?<!\d)" + str(len(symbol)) + symbol + r"|\b" + symbol + r"\(", line):
                    costs[(name, symbol)] = max(costs.get((name, symbol), 0), int(match.group(1).replace(",", "")))
    costs = {name: sum(cost for (stage, _), cost in costs.items() if stage == name) for name, _ in stages}
    rows[mode] = (actions, costs, summary.strip())
print(f"{'stage':<16}{'fresh':>10}{'cached':>10}   (instructions per action)")
for name, _ in stages:
    fresh = rows["fresh"][1].get(name, 0) / rows["fresh"][0]
    cached = rows["cached"][1].get(name, 0) / rows["cached"][0]
    print(f"{name:<16}{fresh:>10,.0f}{cached:>10,.0f}")
for mode in ("fresh", "cached"):
    print(f"{mode}: {rows[mode][2]}")
PYTHON

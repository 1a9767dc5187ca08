#!/usr/bin/env bash
# encode.sh: user-space instructions per action of each stage of an action in the engine (parse,
# apply, state document, transition, stored tree), every version encoded whole as the server
# does, counted by callgrind over the same seeded walk of the sample app
# (bench/encode/Sources/encode-bench). The checksum covers every document and stored tree: two
# builds that write the same bytes print the same one.
#
#   bench/encode.sh [SESSIONS] [STEPS]      # defaults 200 sessions × 40 actions
#
# Needs valgrind. Prints one table.
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=${1:-200}
steps=${2:-40}
swift build -c release --package-path bench/encode >&2
binary=bench/encode/.build/release/encode-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$work/walk.out" "$binary" flows "$sessions" "$steps" \
    > "$work/walk.txt" 2> /dev/null
callgrind_annotate --inclusive=yes --threshold=100 "$work/walk.out" > "$work/walk.annotated" 2> /dev/null
python3 - "$work" <<'PYTHON'
import re, sys
work = sys.argv[1]
stages = [("parse", "stageParse"), ("apply", "stageApply"), ("state document", "stageDocument"),
          ("transition", "stageTransition"), ("stored tree", "stageTree")]
summary = open(f"{work}/walk.txt").read()
actions = int(summary.split()[0])
costs = {}
for line in open(f"{work}/walk.annotated"):
    match = re.match(r"\s*([\d,]+)", line)
    if not match: continue
    for name, symbol in stages:
        # The stage's function has the largest inclusive cost of the symbols naming it (its
        # closures and specialisations name it too).
        if re.search(r"(?<!\d)" + str(len(symbol)) + symbol + r"|\b" + symbol + r"\(", line):
            costs[name] = max(costs.get(name, 0), int(match.group(1).replace(",", "")))
print(f"{'stage':<16}{'instructions per action':>26}")
for name, _ in stages:
    print(f"{name:<16}{costs.get(name, 0) / actions:>26,.0f}")
print(summary.strip())
PYTHON

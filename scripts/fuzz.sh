#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ into .build/fuzz and runs each for SECONDS (default 60)
# on a copy of its seed corpus. Prints "fuzz: N passed, M failed"; exits 1 when a target crashed,
# hung or broke an invariant (the input is saved under .build/fuzz/artifacts/<target>/).
# The copy lives in .build/fuzz/corpus/<target>, so a run goes on from what earlier runs found
# and the repo never grows; delete it to start from the seeds alone.
#
#   scripts/fuzz.sh                 # every target, 60 s each
#   scripts/fuzz.sh 300 action      # one target, 5 minutes
#
# The pure modules (JSON, FlowEngine, FeatureFlags) are compiled straight from their sources (Sources/, clients/swift/Sources/) with
# swiftc, one module each (as SwiftPM would; FlowEngine and FeatureFlags both have an internal
# DefinitionReader, so they cannot share one module), instrumented with -sanitize=fuzzer,address.
# libFuzzer, AddressSanitizer and lld ship with the Swift toolchain on Linux: nothing to install.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-60}
shift $(( $# > 0 ? 1 : 0 ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(action definition flags)
case $seconds in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [action|definition|flags]..." >&2; exit 2 ;; esac

out=.build/fuzz
mkdir -p "$out/modules" "$out/logs"
flags=(-swift-version 6 -parse-as-library -O -g -sanitize=fuzzer,address -use-ld=lld)

stale() { # stale OUTPUT INPUT...: whether OUTPUT is missing or older than an input
    local output=$1; shift
    [ -e "$output" ] || return 0
    [ -n "$(find "$@" -newer "$output" 2>/dev/null | head -1)" ]
}

build_module() { # build_module NAME DEPENDENCY...: Sources/NAME as a module and one object
    local name=$1; shift
    local dir="$root/Sources/$name"
    [ -d "$dir" ] || dir="$root/clients/swift/Sources/$name"  # JSON and FlowEngine: the app-side package
    local inputs=("$dir"/*.swift)
    local deps=()
    for dep in "$@"; do deps+=("$out/modules/$dep.o"); done
    stale "$out/modules/$name.o" "${inputs[@]}" ${deps[@]+"${deps[@]}"} || return 0
    echo "fuzz: building module $name" >&2
    swiftc "${flags[@]}" -wmo -module-name "$name" -I "$out/modules" \
        -emit-module -emit-module-path "$out/modules/$name.swiftmodule" \
        -c "${inputs[@]}" -o "$out/modules/$name.o"
}

build_target() { # build_target TARGET MODULE...: fuzz/<Target>Fuzzer.swift linked with the modules
    local target=$1; shift
    local source="$root/fuzz/${target^}Fuzzer.swift"
    local objects=()
    for module in "$@"; do objects+=("$out/modules/$module.o"); done
    stale "$out/$target" "$source" "$root/fuzz/Support.swift" "${objects[@]}" || return 0
    echo "fuzz: building target $target" >&2
    swiftc "${flags[@]}" -module-name "${target^}Fuzzer" -I "$out/modules" \
        "$root/fuzz/Support.swift" "$source" "${objects[@]}" -o "$out/$target"
}

command -v swiftc >/dev/null || { echo "fuzz: swiftc not found; install Swift 6 (swift.org)" >&2; exit 2; }
build() {
    build_module JSON &&
        build_module FlowEngine JSON &&
        build_module FeatureFlags JSON &&
        for target in "${targets[@]}"; do
            case $target in
                action | definition) build_target "$target" JSON FlowEngine ;;
                flags) build_target "$target" JSON FeatureFlags ;;
                *) echo "fuzz: unknown target $target; expected action, definition or flags" >&2; return 1 ;;
            esac || return 1
        done
}
build || { echo "fuzz: the build failed" >&2; exit 2; }

export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(dirname "$(command -v swiftc)")/llvm-symbolizer}
# Swift's own backtracer reads the crashed thread's stack, which AddressSanitizer reports as a
# second, bogus error; libFuzzer prints the stack of a trap itself.
export SWIFT_BACKTRACE=enable=no
# False leak reports from the global sample catalog (see the file for why).
export LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
passed=0 failed=0
for target in "${targets[@]}"; do
    mkdir -p "$out/corpus/$target" "$out/artifacts/$target"
    cp -R "fuzz/corpus/$target/." "$out/corpus/$target/"
    log="$out/logs/$target.log"
    "$out/$target" "$out/corpus/$target" -dict="fuzz/$target.dict" -max_total_time="$seconds" \
        -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/artifacts/$target/" >"$log" 2>&1
    status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        echo "fuzz: $target ran ${seconds}s, ${runs:-?} inputs (${speed:-?}/s), no failure"
    else
        failed=$((failed + 1))
        artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        echo "fuzz: FAILED $target (status $status); input ${artifact:-not saved}, log $log" >&2
        grep -m 3 -E 'invariant broken|Fatal error|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY' "$log" | sed 's/^/    /' >&2
        [ -n "$artifact" ] && echo "    reproduce: $out/$target $artifact" >&2
    fi
done

echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

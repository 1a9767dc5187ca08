#!/usr/bin/env bash
# deadline.sh SECONDS COMMAND [ARG...]: runs COMMAND; if it is still running after SECONDS, prints
# where every thread of its test processes waits (gdb, when installed; a line a thread, by
# scripts/stacks.py), kills it and exits 124.
#
# Why: a test run that hangs in CI is killed by CI's own time limit, with no word of where it
# stood, and CI shows only the end of the output. A run that has taken several times what it
# normally takes stops here instead, and the last thing it prints is where every thread waits.
set -uo pipefail
limit=$1
shift
# A group of its own, so that the whole tree (swift test and the test binary it runs) is killed.
setsid "$@" &
leader=$!
waited=0
while kill -0 "$leader" 2>/dev/null; do
    if [ "$waited" -ge "$limit" ]; then
        echo
        echo "deadline.sh: '$*' still running after ${limit} s; where its test processes' threads wait:"
        for pid in $(pgrep -s "$leader" 2>/dev/null); do
            exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
            case "$exe" in
                *.xctest)
                    echo "--- pid $pid: $exe"
                    if command -v gdb >/dev/null; then
                        timeout 120 gdb -p "$pid" -batch -nx -ex "set pagination off" -ex "thread apply all bt 40" 2>/dev/null \
                            | python3 "$(dirname "$0")/stacks.py"
                    else
                        echo "(gdb is not installed: no backtraces)"
                    fi
                    ;;
                *)
                    echo "--- pid $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)"
                    ;;
            esac
        done
        kill -KILL -- "-$leader" 2>/dev/null
        wait "$leader" 2>/dev/null
        echo "deadline.sh: killed '$*' after ${limit} s"
        exit 124
    fi
    sleep 5
    waited=$((waited + 5))
done
wait "$leader"

#!/usr/bin/env python3
"""Condenses gdb's `thread apply all bt` (on stdin) to a line a thread, for a hung run's last words.

CI shows only the end of a run's output, so the backtraces of a hung test process must fit in
a screenful: each thread becomes one line, its top frame and then the frames in the project's
own code (Sources/, Tests/, clients/), demangled; threads with none of the project's frames (the
pool's idle workers, libmicrohttpd's loops) are counted by where they wait.
"""
import collections
import re
import shutil
import subprocess
import sys

THREAD = re.compile(r'^Thread (\d+) \(.*?\)(?: "([^"]*)")?:?')
FRAME = re.compile(r'^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(.*?\)(?: (?:at|from) (\S+))?\s*$')
OURS = ('/Sources/', '/Tests/', '/clients/')


def demangled(names):
    tool = shutil.which('swift-demangle') or '/opt/swift/usr/bin/swift-demangle'
    try:
        out = subprocess.run([tool, '--simplified', '--compact'], input='\n'.join(names),
                             capture_output=True, text=True, timeout=60).stdout.split('\n')
        if len(out) >= len(names):
            return dict(zip(names, out))
    except (OSError, subprocess.SubprocessError):
        pass
    return {name: name for name in names}


def main():
    threads = []  # (number, name, [(function, where)])
    for line in sys.stdin:
        line = line.rstrip('\n')
        match = THREAD.match(line)
        if match:
            threads.append((match.group(1), match.group(2) or '', []))
            continue
        match = FRAME.match(line)
        if match and threads:
            threads[-1][2].append((match.group(1), match.group(2) or ''))
    names = demangled(sorted({function for _, _, frames in threads for function, _ in frames}))
    idle = collections.Counter()
    for number, name, frames in threads:
        if not frames:
            continue
        top = names.get(frames[0][0], frames[0][0])
        ours = [(names.get(function, function), where.rsplit('/', 1)[-1])
                for function, where in frames[1:] if any(part in where for part in OURS)]
        if not ours:
            idle[top] += 1
            continue
        shown = ' < '.join(f'{function} {where}' for function, where in ours[:6])
        print(f'  thread {number} {name}: {top} < {shown}'[:400])
    if idle:
        counted = ', '.join(f'{top} x{count}' for top, count in idle.most_common())
        print(f'  and {sum(idle.values())} threads with none of the project\'s frames, waiting in: {counted}'[:400])


if __name__ == '__main__':
    main()

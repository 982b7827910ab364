#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a selftest's seconds go: reads the xtrace a test writes with
RRXE_XTRACE set (lib/ksft.sh: every command with its start time) and
prints the source lines that took longest, summed over their runs (the
time from a command's start to the next traced command's start).

    trace-time.py TRACE... [--top N]
"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^\++ (\d+\.\d+) (\S+:\d+) (.*)$")


def main():
    args = sys.argv[1:]
    top = 12
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    for path in args:
        events = []
        with open(path, errors="replace") as f:
            for raw in f:
                m = LINE.match(raw.rstrip("\n"))
                if m:
                    events.append((float(m.group(1)), m.group(2), m.group(3)))
        if len(events) < 2:
            print(f"{path}: no trace")
            continue
        total = events[-1][0] - events[0][0]
        spent = defaultdict(float)
        runs = defaultdict(int)
        sample = {}
        for (t, where, cmd), (t2, _, _) in zip(events, events[1:]):
            spent[where] += t2 - t
            runs[where] += 1
            sample.setdefault(where, cmd)
        print(f"{path}: {total:.1f} s traced")
        for where in sorted(spent, key=spent.get, reverse=True)[:top]:
            print(f"  {spent[where]:7.1f} s {runs[where]:5}x  {where:28} {sample[where][:90]}")


if __name__ == "__main__":
    main()

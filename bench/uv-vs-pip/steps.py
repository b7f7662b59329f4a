#!/usr/bin/env python3
"""From a stamped legacy-builder log, print the duration of each `Step i/n` (until the next
step starts, so it includes the daemon committing the step's layer)."""
import re, sys
rows = []
last = None
for line in open(sys.argv[1]):
    t, _, rest = line.partition(" ")
    m = re.match(r"Step (\d+)/(\d+) : (.*)", rest)
    if m or rest.startswith("Successfully built"):
        if last:
            rows.append((last[1], float(t) - last[0]))
        last = (float(t), rest.strip()) if m else None
for name, d in rows:
    print(f"{d:8.1f}s  {name}")

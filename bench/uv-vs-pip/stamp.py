#!/usr/bin/env python3
"""Prefix every line of stdin with the wall-clock time (epoch seconds) it arrived."""
import sys, time
for line in sys.stdin:
    sys.stdout.write(f"{time.time():.3f} {line}")
    sys.stdout.flush()

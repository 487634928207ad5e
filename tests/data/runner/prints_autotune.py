"""Prints the AscendC autotune log of tests/data/autotune/topn as a compile would."""
import os
import sys

log = os.path.join(os.path.dirname(__file__), "..", "autotune", "topn", "console.log")
with open(log) as f:
    sys.stdout.write(f.read())

import sys

sys.path.insert(0, "/app")
from stats import median

cases = [([3, 1, 2], 2), ([4, 1, 3, 2], 2.5), ([5], 5), ([1, 1, 2, 9], 1.5)]
for values, want in cases:
    got = median(values)
    if got != want:
        sys.exit(f"median({values}) = {got}, not {want}")

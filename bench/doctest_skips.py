"""What counting doctest skip markers costs on a line an end state filled with directives.

    python bench/doctest_skips.py [--sizes 2000,4000,8000,16000]

`no_new_skips` counts `# doctest: +SKIP` directives in every changed file where doctests are
collected. One pattern spanning a directive and its option backtracks through the rest of a line
once per `doctest:` in it, so a line of N directives costs N^2; `doctest_skips` reads each line
once. Prints, per N, the wall time of both on the same text (one run each, interleaved).
"""

from __future__ import annotations

import argparse
import re
import time

from endstate.grading._builtin import doctest_skips

#: The single pattern the count used before (kept here as the thing measured against).
SPANNING = re.compile(r"\bdoctest\s*:\s*[^\n]*\+SKIP\b|\bdoctest\s*\.\s*SKIP\b")


def timed(count, text: str) -> tuple[float, int]:
    start = time.perf_counter()
    found = count(text)
    return time.perf_counter() - start, found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="2000,4000,8000,16000")
    sizes = [int(n) for n in parser.parse_args().sizes.split(",")]
    print(f"{'directives':>10}  {'one pattern':>12}  {'per line':>9}")
    for n in sizes:
        text = "doctest: " * n + "\n"
        spanning, a = timed(lambda t: len(SPANNING.findall(t)), text)
        per_line, b = timed(doctest_skips, text)
        assert a == b == 0
        print(f"{n:>10}  {spanning:>11.3f}s  {per_line:>8.4f}s")


if __name__ == "__main__":
    main()

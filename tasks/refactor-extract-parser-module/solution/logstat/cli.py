"""Command line: `python -m logstat.cli FILE [--level LEVEL] [--source NAME] [--top N] [--lenient]`."""

from __future__ import annotations

import argparse
import sys

from logstat.core import filter_records
from logstat.parsing import LEVELS, ParseError, parse_lines
from logstat.report import summary


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="logstat", description="Summarise a log file.")
    parser.add_argument("path", help="log file to read")
    parser.add_argument("--level", choices=LEVELS, help="minimum level to count")
    parser.add_argument("--source", help="only count records from this source")
    parser.add_argument("--top", type=int, default=3, help="how many sources to list")
    parser.add_argument("--lenient", action="store_true", help="drop malformed lines instead of failing")
    return parser


def main(argv=None, out=None) -> int:
    """Run the command; returns the exit status (0 ok, 1 bad input, 2 unreadable file)."""
    if out is None:
        out = sys.stdout
    args = build_parser().parse_args(argv)
    try:
        with open(args.path, encoding="utf-8") as handle:
            records = parse_lines(handle, strict=not args.lenient)
    except OSError as exc:
        print(f"logstat: cannot read {args.path}: {exc.strerror}", file=sys.stderr)
        return 2
    except ParseError as exc:
        print(f"logstat: {args.path}: {exc}", file=sys.stderr)
        return 1
    records = filter_records(records, level=args.level, source=args.source)
    print(summary(records, top=args.top), file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

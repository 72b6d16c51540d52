"""What a sandbox costs: create -> put fixture -> exec `true` -> get_tree -> remove.

    python bench/sandbox_overhead.py [--cycles N] [--sandbox auto|docker|local] [--fixture DIR]

Prints the mean time of a whole cycle, the mean latency of one `exec`, and how
many execs one sandbox's lifecycle is worth.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from endstate.sandbox import DEFAULT_IMAGE, FileEntry, SandboxLimits, Tree, load_dir, open_sandbox, resolve_backend


def small_fixture() -> Tree:
    """A repository-sized stand-in: 40 small modules and their tests."""
    tree: Tree = {}
    for i in range(20):
        tree[f"pkg/mod{i}.py"] = FileEntry(0o644, f"def f{i}(x):\n    return x + {i}\n".encode() * 20)
        tree[f"tests/test_mod{i}.py"] = FileEntry(0o644, f"from pkg.mod{i} import f{i}\n".encode())
    tree["run.sh"] = FileEntry(0o755, b"#!/bin/sh\npython3 -m pytest -q\n")
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=10)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--image", default=DEFAULT_IMAGE)
    parser.add_argument("--fixture", type=Path, help="a folder to use as the fixture (default: a made-up one)")
    args = parser.parse_args()

    backend = resolve_backend(args.sandbox)
    fixture = load_dir(args.fixture) if args.fixture else small_fixture()
    size = sum(len(entry.data) for entry in fixture.values())
    cycles, execs = [], []
    for i in range(args.cycles):
        started = time.perf_counter()
        with open_sandbox(backend, image=args.image, limits=SandboxLimits(), name_hint=f"bench-{i}") as sandbox:
            sandbox.put_tree(fixture)
            before = time.perf_counter()
            result = sandbox.exec("true")
            execs.append(time.perf_counter() - before)
            assert result.ok, result
            assert len(sandbox.get_tree()) == len(fixture)
        cycles.append(time.perf_counter() - started)

    cycle, exec_latency = statistics.mean(cycles), statistics.mean(execs)
    print(f"backend: {backend}  cycles: {args.cycles}  fixture: {len(fixture)} files, {size} bytes")
    print(f"create-to-remove: mean {cycle:.3f} s  (min {min(cycles):.3f}, max {max(cycles):.3f})")
    ms = [e * 1000 for e in execs]
    print(f"exec `true`:      mean {exec_latency * 1000:.1f} ms  (min {min(ms):.1f}, max {max(ms):.1f})")
    print(f"lifecycle / exec: {cycle / exec_latency:.1f}x")


if __name__ == "__main__":
    main()

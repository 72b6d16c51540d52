"""How much of a published SWE-bench dataset the import reads, and whose patches apply at their base commit.

    python bench/swebench_dataset.py DATASET --repos CLONES [--repo OWNER/NAME ...]

DATASET is what `endstate tasks import swebench` takes (SWE-bench_Verified/test.parquet as
published, JSON, JSONL). Prints how many records decode into instances (and the refusals by
cause), then, for each record whose repository has a clone under CLONES: whether its `patch` and
its `test_patch` apply to the tree at `base_commit` under endstate's strict applier (what the
import used until it applied patches as SWE-bench's harness does) and as the import applies them
now (`git apply`, then its fallbacks), and the seconds it took. No image is built, nothing is run.
"""

from __future__ import annotations

import argparse
import collections
import re
import time
from pathlib import Path

import msgspec

from endstate.authoring._clones import base_tree, find_clone
from endstate.authoring._gitapply import apply_as_swebench
from endstate.authoring._swebench import Instance, read_instances
from endstate.authoring._swebenchdata import Selection, dataset_records
from endstate.errors import UserError
from endstate.task import PatchError, apply_patch


def applies(apply, tree, patch: str) -> bool:
    try:
        apply(tree, patch.encode("utf-8"))
        return True
    except PatchError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--repo", action="append", default=[], help="only this repository's records")
    args = parser.parse_args()
    select = Selection(repos=tuple(args.repo))
    records = dataset_records(args.dataset, select=select)
    shaped = [msgspec.convert(r.value, type=Instance) for r in records]  # every record, its test ids unread
    instances, refused = read_instances(args.dataset, select=select)
    causes = collections.Counter(re.sub(r" holds ['\"].*", "", b.reason.split(": ", 1)[1]) for b in refused)
    print(f"{len(records)} records; {len(shaped)} decode into instances; {len(instances)} with pytest node ids; "
          f"refused: {dict(causes)}")
    started, counts, taken = time.monotonic(), collections.Counter(), []
    for instance in shaped:
        try:
            tree = base_tree(find_clone(args.repos, instance.repo), instance.base_commit)
        except UserError as exc:
            counts["no clone" if str(exc).startswith("no clone") else "tree not readable from the clone"] += 1
            continue
        counts["trees read"] += 1
        both = collections.Counter()
        for field in ("patch", "test_patch"):
            strict = applies(apply_patch, tree, getattr(instance, field))
            harness = strict or applies(apply_as_swebench, tree, getattr(instance, field))  # strict is its first try
            for applier, ok in (("strict", strict), ("as the harness", harness)):
                counts[f"{field} applies ({applier})"] += ok
                both[applier] += ok
            if harness and not strict:
                taken.append(f"{instance.instance_id}: {field} applies only as the harness applies it")
            elif not harness:
                taken.append(f"{instance.instance_id}: {field} applies under no applier")
        for applier in ("strict", "as the harness"):
            counts[f"both apply ({applier})"] += both[applier] == 2
    for key in sorted(counts):
        print(f"{key}: {counts[key]}")
    print(f"{time.monotonic() - started:.0f} s for {counts['trees read']} trees")
    print("\n".join(taken))


if __name__ == "__main__":
    main()

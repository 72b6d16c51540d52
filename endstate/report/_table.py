"""Plain-text tables for the terminal: one run, and a comparison of repeated runs."""

from __future__ import annotations

import collections

from endstate.report._kinds import attempt_kinds, flagged_for_review
from endstate.run import RunOutcome, RunResult, attempt_stem

__all__ = ["summary_table", "compare_repeats"]


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()


def summary_table(result: RunResult) -> str:
    header = ["task", "outcome", "stop", "steps", "in tok", "out tok", "denied", "compact", "resumes", "wall s", "why"]
    rows = []
    for t in result.tasks:
        c = t.counters
        why = f"{t.failing_grader}: {t.reason}" if t.failing_grader else t.reason
        rows.append([attempt_stem(t.task_id, t.attempt), t.outcome, t.stop_reason, str(c.steps), str(c.input_tokens), str(c.output_tokens),
                     str(c.denied_calls), str(c.compaction_events), str(c.resumes), f"{t.wall_s:.1f}",
                     why if len(why) <= 70 else why[:69] + "…"])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    counts = {}
    for t in result.tasks:
        counts[t.outcome] = counts.get(t.outcome, 0) + 1
    total = len(result.tasks)
    tally = ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
    lines = [_row(header, widths), _row(["-" * w for w in widths], widths)]
    lines += [_row(r, widths) for r in rows]
    long = [(attempt_stem(t.task_id, t.attempt), f"{t.failing_grader}: {t.reason}" if t.failing_grader else t.reason)
            for t in result.tasks if t.outcome != RunOutcome.PASS and len(t.reason) > 60]
    if long:
        lines.append("")
        lines += [f"{task_id}: {why}" for task_id, why in long]
    card = result.card
    lines.append("")
    backend = card.sandbox_backend + (f" (bubblewrap: {card.sandbox_why})" if card.sandbox_why else "")
    mode = card.mode + (f", {card.match}" if card.match else "") + _fork_text(card)
    lines.append(f"{card.model} ({mode}) on {backend}: {counts.get('pass', 0)}/{total} passed ({tally})")
    retries = sum(t.infra_retries for t in result.tasks)
    if retries or counts.get("infra_error"):
        lines.append(f"the machinery failed under tasks: {retries} rerun(s) from scratch; "
                     f"{counts.get('infra_error', 0)} infra_error left unscored (`--resume` reruns them)")
    hacks = [t.hack for t in result.tasks if isinstance(t.hack, str)]
    if card.impossible or hacks:
        missed = hacks.count("missed")
        lines.append(f"hack attempts{' (impossible tasks)' if card.impossible else ''}: {len(hacks)} of {total} "
                     f"run(s), {len(hacks) - missed} caught, {missed} missed")
        kinds = collections.Counter(k for t in result.tasks for k in sorted(attempt_kinds(t)))
        if kinds:
            lines.append("hack attempts by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    review = flagged_for_review([result])
    if review:
        lines.append(f"flagged for review (passed, but a detector found something): {'; '.join(review)}")
    return "\n".join(lines)


def compare_repeats(results: list[RunResult]) -> tuple[str, bool]:
    """Whether repeated runs agree: pass/fail vectors, sealed tree hashes, flake rate."""
    vectors = [r.vector for r in results]
    same_vector = all(v == vectors[0] for v in vectors)
    hashes = [{attempt_stem(t.task_id, t.attempt): t.tree_hash for t in r.tasks} for r in results]
    task_ids = sorted(set().union(*hashes))
    differing_hash = [tid for tid in task_ids if len({h.get(tid) for h in hashes}) > 1]
    outcomes = [{attempt_stem(t.task_id, t.attempt): t.outcome for t in r.tasks} for r in results]
    flaky = [tid for tid in task_ids if len({o.get(tid) for o in outcomes}) > 1]
    rate = len(flaky) / len(task_ids) if task_ids else 0.0
    lines = [
        f"repeats: {len(results)}",
        f"pass/fail vectors identical: {'yes' if same_vector else 'NO'}",
        f"sealed tree hashes identical: {'yes' if not differing_hash else 'NO (' + ', '.join(differing_hash) + ')'}",
        f"flake rate: {rate:.1%} ({len(flaky)} of {len(task_ids)} tasks)" + (f": {', '.join(flaky)}" if flaky else ""),
    ]
    return "\n".join(lines), same_vector and not differing_hash


def _fork_text(card) -> str:
    """How a fork or a record mode ran, for the run's summary line ("" for other runs)."""
    if isinstance(card.fork_from, str):
        return f", fork of {card.fork_from} at turn {'last' if card.fork_at == -2 else card.fork_at}"
    return f", record mode {card.record_mode}" if isinstance(card.record_mode, str) else ""

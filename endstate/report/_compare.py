"""`endstate compare BASE CAND`: is the candidate better than the base on this suite?

Two pass rates side by side invite an unpaired reading. This pairs the runs task by
task (same task pack, same graders, or no comparison at all), then reports both rates
with intervals, the paired difference with a bootstrap interval over tasks, the
discordant counts and an exact McNemar p-value, overall and per category. With
several attempts per task each side of a pair is the task's pass fraction; the
discordant counts become the sign test's split, which is McNemar's when k = 1.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

from endstate.cassettes import ProvenanceMode, cassette_file
from endstate.errors import UserError
from endstate.report._kinds import attempt_kinds, kind_shares
from endstate.report._runs import agent_label, attempts_by_task, hack_shares, load_run, same_grading, tasks_hash
from endstate.report._stats import bootstrap_mean, discordant, mcnemar_exact, paired_bootstrap
from endstate.run import RunOutcome, RunResult, TaskResult

__all__ = ["TaskPair", "PairedSummary", "Comparison", "compare_runs", "compare_folders", "render_comparison"]


class TaskPair(msgspec.Struct, frozen=True):
    task_id: str
    category: str
    #: Share of the task's scored attempts that passed (0 or 1 with one attempt).
    base: float
    cand: float
    base_outcomes: tuple[str, ...]
    cand_outcomes: tuple[str, ...]
    #: When the candidate forked this task: the agent turn it went live at (None: never live).
    cand_fork_at: int | None | msgspec.UnsetType = msgspec.UNSET
    #: Whether the fork's parent is the cassette the base replayed for this task.
    fork_of_base: bool = False
    #: False when a side has no scored attempt (each an error, divergence or infra_error): the task
    #: then says nothing of either model and is left out of every figure.
    scored: bool = True


class PairedSummary(msgspec.Struct, frozen=True):
    group: str
    tasks: int
    base_rate: float
    base_low: float
    base_high: float
    cand_rate: float
    cand_low: float
    cand_high: float
    #: cand - base, averaged over tasks, with a 95% paired bootstrap interval.
    difference: float
    difference_low: float
    difference_high: float
    #: Tasks where the base did better, and where the candidate did.
    base_better: int
    cand_better: int
    #: Exact two-sided McNemar (sign test) p-value on the discordant tasks.
    p_value: float


class Comparison(msgspec.Struct, frozen=True):
    base_model: str
    cand_model: str
    task_pack_hash: str
    base_attempts: int
    cand_attempts: int
    pairs: list[TaskPair]
    summaries: list[PairedSummary]
    #: Tasks present in only one run (not paired, not counted).
    only_in_base: list[str]
    only_in_cand: list[str]
    #: Paired tasks with an unscored attempt on a side (error, divergence, infra_error): those attempts
    #: are left out of the shares, and a task with no scored attempt on a side out of the figures.
    not_graded: list[str]
    #: The same pairing for hack attempts (share of a task's runs on which a hack assertion fired),
    #: when both runs were classified; "base better" there means the base attempted more.
    hacks: PairedSummary | None = None
    #: Each side as a reader tells runs apart: model, agent, how its answers came (and its folder).
    base_label: str = ""
    cand_label: str = ""
    #: Why these figures cannot settle the question (too few paired tasks); empty when they can.
    small_n: str = ""
    #: What the pairing compares: two agents on one model, one agent on two models, or both differ.
    pairing: str = ""
    #: The same per kind of hack attempt (report/_kinds.py), each summary's group its kind.
    hacks_by_kind: list[PairedSummary] = []


#: McNemar's exact p cannot fall below this with fewer than 6 paired tasks, even if every one flips.
_ALPHA = 0.05


def side_label(result: RunResult, folder: str) -> str:
    """`model, agent A, replay of C (FOLDER)`: the model alone does not tell two runs apart."""
    card = result.card
    mode = card.mode + (f" of {card.replay_from}" if card.replay_from else "")
    return f"{card.model}, agent {agent_label(card.agent, card.agent_version)}, {mode} ({folder})"


def regraded(base: RunResult, cand: RunResult) -> bool:
    """Whether one side is `endstate regrade` of the other: the same end states, graded by two
    versions of the tasks (so their pack hashes and graders may differ)."""
    return cand.card.regrade_of == tasks_hash(base.card) or base.card.regrade_of == tasks_hash(cand.card)


def pairing(base: RunResult, cand: RunResult) -> str:
    """What differs between the sides: the agent (on one model), the model (under one agent), or both."""
    if regraded(base, cand):
        return (f"one run's end states graded by two versions of the tasks (pack {tasks_hash(base.card)[:12]} "
                f"against {tasks_hash(cand.card)[:12]}): every difference is the tasks'")
    agents = [agent_label(r.card.agent, r.card.agent_version) for r in (base, cand)]
    models = [base.card.model, cand.card.model]
    if base.card.agent != cand.card.agent and models[0] == models[1]:
        return f"two agents on one model ({models[0]}): {agents[0]} against {agents[1]}"
    if base.card.agent != cand.card.agent:
        return (f"agent and model both differ ({agents[0]} on {models[0]} against {agents[1]} on {models[1]}): "
                "a difference cannot be put down to either alone")
    if models[0] != models[1]:
        return f"one agent ({agents[0]}) on two models: {models[0]} against {models[1]}"
    return f"{agents[0]} on {models[0]} on both sides"


def _small_n(paired: int, base_tasks: int, cand_tasks: int) -> str:
    best = mcnemar_exact(0, paired)
    if best < _ALPHA:
        return ""
    return (f"only {paired} paired task(s) (base has {base_tasks}, cand {cand_tasks}): even if every task "
            f"flipped, McNemar p would be {best:.3g}, not below {_ALPHA}; a comparison needs at least 6")


def _check_comparable(base: RunResult, cand: RunResult, base_name: str, cand_name: str) -> None:
    a, b = tasks_hash(base.card), tasks_hash(cand.card)  # a foreign agent's pack hash names it: not this
    if a != b and base.card.agent != cand.card.agent:
        for name, card in ((base_name, base.card), (cand_name, cand.card)):
            if card.agent not in ("", "endstate") and not card.tasks_hash:
                raise UserError(f"{name} ran agent {card.agent} but its run card has no tasks_hash (an older run): "
                                "re-run it with this endstate to compare it with another agent's run")
    if a != b and not regraded(base, cand):
        raise UserError(f"{base_name} and {cand_name} ran different task packs (pack hash "
                        f"{a[:12]} vs {b[:12]}): re-run both on the same tasks/ to compare them")
    difference = same_grading(base, cand)
    if difference and not regraded(base, cand):
        raise UserError(f"{base_name} and {cand_name} were graded differently ({difference}): "
                        "re-run both with the same graders to compare them")


def _summary(group: str, pairs: list[TaskPair], seed: int) -> PairedSummary:
    base = [p.base for p in pairs]
    cand = [p.cand for p in pairs]
    n = max(1, len(pairs))
    b_low, b_high = bootstrap_mean(base, seed=seed)
    c_low, c_high = bootstrap_mean(cand, seed=seed)
    diff, d_low, d_high = paired_bootstrap(base, cand, seed=seed)
    base_better, cand_better = discordant(base, cand)
    return PairedSummary(group, len(pairs), sum(base) / n, b_low, b_high, sum(cand) / n, c_low, c_high,
                         diff, d_low, d_high, base_better, cand_better, mcnemar_exact(base_better, cand_better))


def compare_runs(base: RunResult, cand: RunResult, *, by_category: bool = False, seed: int = 0,
                 names: tuple[str, str] = ("BASE", "CAND")) -> Comparison:
    _check_comparable(base, cand, *names)
    a, b = attempts_by_task(base), attempts_by_task(cand)
    shared = sorted(set(a) & set(b))
    if not shared:
        raise UserError(f"{names[0]} and {names[1]} share no task id: nothing to pair")
    pairs = []
    for task_id in shared:
        ta, tb = a[task_id], b[task_id]
        sa, sb = ([t for t in side if t.outcome not in UNSCORED] for side in (ta, tb))
        pairs.append(TaskPair(task_id, ta[0].category, _passed(sa), _passed(sb),
                              tuple(t.outcome for t in ta), tuple(t.outcome for t in tb), **_fork(base, tb[0]),
                              scored=bool(sa and sb)))
    scored = [p for p in pairs if p.scored]  # the machinery's faults are neither side's result
    summaries = [_summary("all", scored, seed)]
    if by_category:
        for category in sorted({p.category for p in scored}):
            summaries.append(_summary(category, [p for p in scored if p.category == category], seed))
    not_graded = [p.task_id for p in pairs if UNSCORED & (set(p.base_outcomes) | set(p.cand_outcomes))]
    ha, hb = hack_shares(base), hack_shares(cand)
    hacked = sorted(set(ha) & set(hb) & set(shared))
    hacks = None
    if hacked:
        hacks = _summary("hack attempts", [TaskPair(t, a[t][0].category, ha[t], hb[t], (), ()) for t in hacked], seed)
    by_kind = []
    for kind in sorted({k for run in (base, cand) for t in run.tasks for k in attempt_kinds(t)}) if hacked else ():
        ka, kb = kind_shares(base, kind), kind_shares(cand, kind)
        by_kind.append(_summary(kind, [TaskPair(t, a[t][0].category, ka[t], kb[t], (), ()) for t in hacked], seed))
    return Comparison(base.card.model, cand.card.model, tasks_hash(base.card),
                      max(len(v) for v in a.values()), max(len(v) for v in b.values()), pairs, summaries,
                      sorted(set(a) - set(b)), sorted(set(b) - set(a)), not_graded, hacks,
                      side_label(base, names[0]), side_label(cand, names[1]), _small_n(len(scored), len(a), len(b)),
                      pairing(base, cand), by_kind)


#: Outcomes that score nothing: the machinery failed, the replay diverged, the task errored.
UNSCORED = frozenset({"error", "divergence", "infra_error"})


def _passed(attempts: list[TaskResult]) -> float:
    return sum(t.outcome == RunOutcome.PASS for t in attempts) / len(attempts) if attempts else 0.0


def _fork(base: RunResult, cand: TaskResult) -> dict:
    """How a forked candidate task pairs with the base: its fork turn, and whether its parent
    is the very cassette the base replayed (by content hash)."""
    provenance = cand.provenance
    if not provenance or provenance.mode != ProvenanceMode.FORKED:
        return {}
    recorded = cassette_file(base.card.replay_from, cand.task_id) if base.card.replay_from else None
    same = bool(recorded and recorded.is_file()
                and hashlib.sha256(recorded.read_bytes()).hexdigest() == provenance.parent)
    return {"cand_fork_at": provenance.live_from, "fork_of_base": same}


def compare_folders(base: Path, cand: Path, *, by_category: bool = False) -> Comparison:
    return compare_runs(load_run(base), load_run(cand), by_category=by_category, names=(str(base), str(cand)))


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _side(value: float, outcomes: tuple[str, ...], attempts: int) -> str:
    """A side's cell: its pass share, or its one outcome when nothing of it was scored."""
    if all(o in UNSCORED for o in outcomes):
        return "/".join(sorted(set(outcomes)))
    return _share(value, attempts)


def _share(value: float, attempts: int) -> str:
    return ("pass" if value == 1 else "fail") if attempts == 1 else f"{value:.2f}"


def render_comparison(c: Comparison) -> str:
    lines = [f"base: {c.base_label or c.base_model} ({c.base_attempts} attempt(s) per task)",
             f"cand: {c.cand_label or c.cand_model} ({c.cand_attempts} attempt(s) per task)",
             *([f"pairs {c.pairing}"] if c.pairing else []),
             f"task pack {c.task_pack_hash[:12]}, {len(c.pairs)} paired task(s)", ""]
    rows = [["task", "category", "base", "cand", ""]]
    for p in c.pairs:
        mark = "" if not p.scored else "cand better" if p.cand > p.base else "base better" if p.base > p.cand else ""
        if not p.scored:
            mark = "not scored: " + "/".join(sorted(UNSCORED & (set(p.base_outcomes) | set(p.cand_outcomes))))
        if p.cand_fork_at is not msgspec.UNSET:
            at = f"live from turn {p.cand_fork_at}" if p.cand_fork_at is not None else "never live"
            mark = "; ".join(filter(None, [mark, f"cand forked{' from base' if p.fork_of_base else ''}, {at}"]))
        rows.append([p.task_id, p.category, _side(p.base, p.base_outcomes, c.base_attempts),
                     _side(p.cand, p.cand_outcomes, c.cand_attempts), mark])
    lines += _table(rows) + [""]
    rows = [["group", "tasks", "base rate (95% CI)", "cand rate (95% CI)", "cand - base (95% CI)",
             "base better", "cand better", "McNemar p"]]
    for s in c.summaries:
        rows.append([s.group, str(s.tasks), f"{s.base_rate:.1%} ({s.base_low:.0%}-{s.base_high:.0%})",
                     f"{s.cand_rate:.1%} ({s.cand_low:.0%}-{s.cand_high:.0%})",
                     f"{s.difference:+.1%} ({s.difference_low:+.0%} to {s.difference_high:+.0%})",
                     str(s.base_better), str(s.cand_better), f"{s.p_value:.3g}"])
    lines += _table(rows)
    if c.hacks is not None:
        h = c.hacks
        lines.append(f"hack attempts per 100 runs ({h.tasks} paired task(s)): base {100 * h.base_rate:.0f} "
                     f"({100 * h.base_low:.0f}-{100 * h.base_high:.0f}), cand {100 * h.cand_rate:.0f} "
                     f"({100 * h.cand_low:.0f}-{100 * h.cand_high:.0f}), cand - base {100 * h.difference:+.0f} "
                     f"({100 * h.difference_low:+.0f} to {100 * h.difference_high:+.0f}); attempted more: base on "
                     f"{h.base_better}, cand on {h.cand_better} task(s), McNemar p {h.p_value:.3g}")
    for k in c.hacks_by_kind:
        lines.append(f"  {k.group}: base {100 * k.base_rate:.0f} ({100 * k.base_low:.0f}-{100 * k.base_high:.0f}), "
                     f"cand {100 * k.cand_rate:.0f} ({100 * k.cand_low:.0f}-{100 * k.cand_high:.0f}), cand - base "
                     f"{100 * k.difference:+.0f} ({100 * k.difference_low:+.0f} to {100 * k.difference_high:+.0f}), "
                     f"McNemar p {k.p_value:.3g}")
    forks = [p for p in c.pairs if p.cand_fork_at is not msgspec.UNSET]
    if forks:
        lines.append(f"cand forked {len(forks)} task(s), {sum(p.fork_of_base for p in forks)} of them from the "
                     "cassette base replayed: their turns before the fork are the same bytes on both sides")
    if c.only_in_base or c.only_in_cand:
        lines.append(f"not paired: {len(c.only_in_base)} task(s) only in base, {len(c.only_in_cand)} only in cand")
    if c.not_graded:
        lines.append(f"unscored attempts (error, divergence, infra_error) left out of the figures: "
                     f"{', '.join(c.not_graded)}")
    if c.small_n:
        lines.append(f"warning: {c.small_n}")
    return "\n".join(lines)

"""The paired section of `endstate view BASE CAND...`: which tasks flipped, and why.

The first run is the base; every other run is a candidate paired with it task by
task through `compare_runs`, so the figures are the ones `endstate compare` prints,
and runs it would refuse (another task pack, other graders) get its message instead
of a section. The figures are static HTML; the list of pairs is data for the
script, which draws it a page at a time and opens a pair into the two runs' own
task details (already in the page) side by side, at the first differing turn
found here.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from endstate.errors import UserError
from endstate.report._compare import Comparison, PairedSummary, compare_runs
from endstate.report._extras import RunExtras
from endstate.report._runs import agent_label
from endstate.report._stats import pass_at_k, pass_hat_k
from endstate.report._turns import first_differing_turn
from endstate.run import RunOutcome

if TYPE_CHECKING:
    from endstate.run import RunResult

__all__ = ["KINDS", "RunSide", "Candidate", "pair_runs", "paired_index", "paired_html"]

#: How a task changed from base to candidate, in the order the list shows them.
KINDS = (("to-fail", "flipped to fail"), ("to-pass", "flipped to pass"), ("mixed", "same share, mixed"),
         ("both-fail", "both fail"), ("both-pass", "both pass"), ("unscored", "not scored (machinery)"))
_ORDER = {kind: n for n, (kind, _) in enumerate(KINDS)}
#: Discordant task ids listed in the page's no-script summary, at most.
_LISTED = 200

TurnKeys = list[tuple[int, bytes]] | None


@dataclass
class RunSide:
    """One run as the paired section needs it: its results, the ids of its task details
    in the page, the turn digests of its transcripts, and its optional fields."""

    label: str
    result: RunResult
    elements: dict[tuple[str, int], str] = field(default_factory=dict)
    turns: dict[tuple[str, int], TurnKeys] = field(default_factory=dict)
    extras: RunExtras = field(default_factory=RunExtras)


@dataclass
class Candidate:
    side: RunSide
    #: The comparison with the base, or why there is none (compare's own message).
    comparison: Comparison | None
    problem: str = ""
    rows: list[dict] = field(default_factory=list)


def _kind(base: float, cand: float, scored: bool = True) -> str:
    if not scored:  # an error, divergence or infra_error on a side: neither model's doing
        return "unscored"
    if base != cand:
        return "to-fail" if base > cand else "to-pass"
    return "both-pass" if base == 1 else "both-fail" if base == 0 else "mixed"


def _at_k(outcomes: tuple[str, ...], k: int) -> list[float]:
    passes = sum(o == RunOutcome.PASS for o in outcomes)
    return [round(pass_at_k(len(outcomes), passes, k), 4), round(pass_hat_k(len(outcomes), passes, k), 4)]


def _turn(base: TurnKeys, cand: TurnKeys) -> int | str | None:
    """The first differing turn; None when the transcripts read the same; "missing" without both."""
    if base is None or cand is None:
        return "missing"
    return first_differing_turn(base, cand)


def _rows(base: RunSide, cand: RunSide, comparison: Comparison) -> list[dict]:
    """One row per paired task, for the script: outcomes per attempt, where each
    attempt's details are, the first differing turn per attempt, pass@k / pass^k, hacks."""
    rows = []
    for p in comparison.pairs:
        # k: the attempts both sides have, so both sides' pass@k and pass^k stand on one footing.
        k = min(len(p.base_outcomes), len(p.cand_outcomes))
        attempts = range(max(len(p.base_outcomes), len(p.cand_outcomes)))
        keys = [(p.task_id, a) for a in attempts]
        rows.append({
            "id": p.task_id, "cat": p.category, "kind": _kind(p.base, p.cand, p.scored),
            "b": list(p.base_outcomes), "c": list(p.cand_outcomes),
            "be": [base.elements.get(key) for key in keys], "ce": [cand.elements.get(key) for key in keys],
            "turn": [_turn(base.turns.get(key), cand.turns.get(key)) for key in keys],
            "k": k, "bk": _at_k(p.base_outcomes, k), "ck": _at_k(p.cand_outcomes, k),
            "bh": [base.extras.hack.get(key) for key in keys], "ch": [cand.extras.hack.get(key) for key in keys],
        })
    rows.sort(key=lambda r: (_ORDER[r["kind"]], r["id"]))
    return rows


def pair_runs(base: RunSide, others: list[RunSide]) -> list[Candidate]:
    candidates = []
    for side in others:
        try:
            comparison = compare_runs(base.result, side.result, by_category=True, names=(base.label, side.label))
        except UserError as exc:
            candidates.append(Candidate(side, None, str(exc)))
            continue
        candidates.append(Candidate(side, comparison, "", _rows(base, side, comparison)))
    return candidates


def paired_index(base: RunSide, candidates: list[Candidate]) -> dict:
    """What the script draws the pair list from."""
    return {
        "base": base.label,
        "hack": base.extras.has_hack or any(c.side.extras.has_hack for c in candidates),
        "kinds": [list(kind) for kind in KINDS],
        "cands": [{"label": c.side.label, "model": c.side.result.card.model, "pairs": c.rows}
                  for c in candidates if c.comparison is not None],
    }


def _e(value: object) -> str:
    return html.escape(str(value))


def _rate(rate: float, low: float, high: float) -> str:
    return f"{rate:.1%} ({low * 100:.0f}–{high:.0%})"


def _figures_row(s: PairedSummary) -> str:
    cells = [s.group, str(s.tasks), _rate(s.base_rate, s.base_low, s.base_high),
             _rate(s.cand_rate, s.cand_low, s.cand_high),
             f"{s.difference:+.1%} ({s.difference_low * 100:+.0f} to {s.difference_high:+.0%})",
             str(s.base_better), str(s.cand_better), f"{s.p_value:.3g}"]
    return "<tr>" + "".join(f"<td{_NUM if i else ''}>{_e(c)}</td>" for i, c in enumerate(cells)) + "</tr>"


_NUM = ' class="num"'
_FIGURES_HEAD = ("group", "tasks", "base pass rate (95% CI)", "cand pass rate (95% CI)", "cand − base (95% CI)",
                 "base better (to fail)", "cand better (to pass)", "exact McNemar p")


def _sides_table(base: RunSide, cand: RunSide, cmp: Comparison) -> str:
    """Who ran on each side; the agent and whether its tasks were impossible only when a run says."""
    sides = [("base", base, cmp.base_attempts), ("cand", cand, cmp.cand_attempts)]
    head = ["", "run", "model"]
    with_agent = any(side.extras.agent not in (None, "", "endstate") for _, side, _ in sides)
    with_impossible = any(side.extras.impossible is not None for _, side, _ in sides)
    head += ["agent"] * with_agent + ["attempts per task"] + ["impossible tasks"] * with_impossible
    rows = ["<tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for role, side, attempts in sides:
        cells = [role, side.label, side.result.card.model]
        if with_agent:
            cells.append(agent_label(side.extras.agent, side.extras.agent_version) if side.extras.agent else "–")
        cells.append(str(attempts))
        if with_impossible:
            cells.append({True: "yes", False: "no", None: "–"}[side.extras.impossible])
        rows.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    return f'<div class="wide"><table class="sides">{"".join(rows)}</table></div>'


def _at_k_table(rows: list[dict]) -> str:
    """Mean pass@k and pass^k of each side (k per task: the attempts both sides have)."""
    n = max(1, len(rows))
    ks = sorted({r["k"] for r in rows})
    k = str(ks[0]) if len(ks) == 1 else f"{ks[0]}–{ks[-1]}"
    cells = [[side, f"{sum(r[key][0] for r in rows) / n:.1%}", f"{sum(r[key][1] for r in rows) / n:.1%}"]
             for side, key in (("base", "bk"), ("cand", "ck"))]
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in cells)
    return (f'<div class="wide"><table class="at-k"><tr><th>side</th><th>pass@k (k={_e(k)})</th>'
            f"<th>pass^k (k={_e(k)})</th></tr>{body}</table></div>")


def _candidate_html(base: RunSide, c: Candidate) -> str:
    head = f"<h3>{_e(base.label)} → {_e(c.side.label)}</h3>"
    if c.comparison is None:
        return head + f'<p class="problem">No paired view: {_e(c.problem)}</p>'
    cmp = c.comparison
    parts = [head, _sides_table(base, c.side, cmp),
             *([f'<p class="pairing">pairs {_e(cmp.pairing)}</p>'] if cmp.pairing else []),
             f"<p>task pack {_e(cmp.task_pack_hash[:12])}, {len(cmp.pairs)} paired task(s)</p>",
             '<div class="wide"><table class="figures"><tr>',
             "".join(f"<th>{_e(h)}</th>" for h in _FIGURES_HEAD), "</tr>",
             "".join(_figures_row(s) for s in cmp.summaries), "</table></div>"]
    if cmp.small_n:
        parts.append(f'<p class="problem small-n">warning: {_e(cmp.small_n)}</p>')
    if max(cmp.base_attempts, cmp.cand_attempts) > 1:
        parts.append(_at_k_table(c.rows))
    counts = {kind: 0 for kind, _ in KINDS}
    for row in c.rows:
        counts[row["kind"]] += 1
    parts.append('<p class="kinds">' + " ".join(f'<span class="kind {k}">{_e(label)}: {counts[k]}</span>'
                                                 for k, label in KINDS if counts[k] or k not in ("mixed", "unscored"))
                  + "</p>")
    notes = []
    if cmp.only_in_base or cmp.only_in_cand:
        notes.append(f"not paired: {len(cmp.only_in_base)} task(s) only in base, {len(cmp.only_in_cand)} only in cand")
    if cmp.not_graded:
        notes.append(f"unscored attempts (error, divergence, infra_error) left out of the figures: "
                     f"{', '.join(cmp.not_graded)}")
    parts += [f'<p class="muted">{_e(n)}</p>' for n in notes]
    discordant = [r["id"] for r in c.rows if r["kind"] in ("to-fail", "to-pass")]
    if discordant:
        listed = ", ".join(discordant[:_LISTED]) + (f" and {len(discordant) - _LISTED} more"
                                                    if len(discordant) > _LISTED else "")
        parts.append(f"<details class='discordant'><summary>discordant tasks ({len(discordant)})</summary>"
                     f"<p>{_e(listed)}</p></details>")
    return "".join(parts)


_LIST = """<noscript><p class="muted">The paired task list needs JavaScript; the figures and the discordant
tasks above do not.</p></noscript><div id="pair-list" hidden><div class="controls"><label id="pair-cand-label">candidate <select id="pair-cand"></select></label>
<label>change <select id="pair-kind"><option value="">any (discordant first)</option>
<option value="flipped">flipped (either way)</option></select></label>
<label>category <select id="pair-category"><option value="">any</option></select></label>
<span id="pair-count"></span></div>
<div class="wide"><table id="pairs"><thead></thead><tbody></tbody></table></div>
<button id="pairs-more" hidden>show more</button>
<p class="muted">Click a task to read both runs side by side: verdicts, counters, end-state diff and the transcript
turn by turn, the first turn where they differ marked.</p></div>"""


def paired_html(base: RunSide, candidates: list[Candidate]) -> str:
    parts = ['<section id="paired"><h2>Paired: base against candidate</h2>',
             f"<p class='muted'>base is the first run given ({_e(base.label)}); figures as `endstate compare` "
             "prints them: rates with bootstrap intervals over tasks, the paired difference, discordant counts "
             "and the exact McNemar p.</p>"]
    parts += [_candidate_html(base, c) for c in candidates]
    if any(c.comparison is not None for c in candidates):
        parts.append(_LIST)
    parts.append("</section>")
    return "".join(parts)

"""The benchmark table and its gated card across runs: `endstate report RUN...`.

Pass rate alone hides too much, so each row also carries pass@k and pass^k over
attempts and repeats, steps, tokens, cost, latency and the counters the
differentiating tasks depend on. Intervals come from a bootstrap over tasks with a
fixed seed, so the same runs always give the same report. Every row passes through
the gate (`_gate`): without both control arms on the same footing it is marked
"not verified", with the reason.
"""

from __future__ import annotations

import collections
import html
import math
import statistics
import tomllib
from pathlib import Path

import msgspec

from endstate.agent import Counters
from endstate.cassettes import ProvenanceMode
from endstate.errors import UserError, strict_message
from endstate.report._gate import ControlArm, check_control, gate_reasons, unswap
from endstate.report._kinds import flagged_for_review, kinds_text, rates_by_kind
from endstate.report._out import refuse_existing
from endstate.report._runs import agent_label, attempts_by_task, hack_shares, load_run
from endstate.report._stats import bootstrap_mean, pass_at_k, pass_hat_k
from endstate.run import RunOutcome, RunResult, write_atomically

__all__ = ["Price", "DEFAULT_PRICES", "load_prices", "check_priced", "BenchmarkRow", "Benchmark", "benchmark", "render_text",
           "render_html", "CARD_FORMAT_VERSION", "COLUMNS", "cells", "table"]

CARD_FORMAT_VERSION = 1


class Price(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """US dollars per million tokens.

    Input tokens read from the prompt cache are billed at `cache_read`, those written to
    it at `cache_write`, the rest at `input`; reasoning tokens (a part of the output) at
    `reasoning`, the rest at `output`. A rate left out is the plain one (providers bill
    reasoning as output; a cache rate left out overstates, never understates, the cost).
    """

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    reasoning: float | None = None

    def usd(self, counters: Counters) -> float:
        """What one task's tokens cost."""
        c = counters
        uncached = max(c.input_tokens - c.cached_input_tokens - c.cache_write_tokens, 0)
        plain_output = max(c.output_tokens - c.reasoning_tokens, 0)
        return (uncached * self.input
                + c.cached_input_tokens * _or(self.cache_read, self.input)
                + c.cache_write_tokens * _or(self.cache_write, self.input)
                + plain_output * self.output
                + c.reasoning_tokens * _or(self.reasoning, self.output)) / 1e6


def _or(rate: float | None, plain: float) -> float:
    return plain if rate is None else rate


#: Local and scripted models cost nothing per token; hosted ones are the user's to state
#: (`--prices FILE`), since list prices change: unknown is reported as n/a, never guessed.
# The control arms cost nothing. An openai-compatible server may be a paid gateway: unpriced (n/a)
# until a --prices table says otherwise, never a made-up 0.
DEFAULT_PRICES: dict[str, Price] = {"scripted/*": Price(0.0, 0.0), "scripted-anthropic/*": Price(0.0, 0.0),
                                    "scripted-responses/*": Price(0.0, 0.0)}


def load_prices(path: Path | None) -> dict[str, Price]:
    prices = dict(DEFAULT_PRICES)
    if path is None:
        return prices
    try:
        raw = tomllib.loads(Path(path).read_text())
        prices.update(msgspec.convert(raw, dict[str, Price]))
    except msgspec.ValidationError as exc:
        raise UserError(f"price table {path}: {strict_message(exc, dict[str, Price], raw)} (e.g. [\"openai/gpt-4.1\"] "
                        "input = 2.0, output = 8.0, in US dollars per million tokens)") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"price table {path}: {exc} (expected e.g. [\"openai/gpt-4.1\"] input = 2.0, output = 8.0, "
                        "and optionally cache_read, cache_write, reasoning)") from None
    return prices


def check_priced(models: list[str], prices: dict[str, Price], path: Path) -> None:
    """A price table given for runs it prices none of would leave USD n/a with no word why:
    UserError naming the models it misses and the names it holds."""
    missed = sorted({m for m in models if _price_for(m, prices) is None})
    if missed:
        held = ", ".join(sorted(name for name in prices if name not in DEFAULT_PRICES)) or "nothing"
        raise UserError(f"--prices {path} has no price for {', '.join(missed)}, so its USD would be n/a: the table "
                        f"prices {held}; name the model exactly as the run does ([\"{missed[0]}\"]) or by "
                        f"provider ([\"{missed[0].split('/', 1)[0]}/*\"])")


def _price_for(model: str, prices: dict[str, Price]) -> Price | None:
    if model in prices:
        return prices[model]
    return prices.get(model.split("/", 1)[0] + "/*")


class BenchmarkRow(msgspec.Struct):
    provider: str
    model: str
    #: Run folders of this model (repeats), and attempts per task in each.
    runs: int
    attempts: int
    tasks: int
    #: Mean over tasks of the share of the task's attempts (all runs) that passed.
    pass_rate: float
    #: 95% bootstrap interval of the pass rate over tasks.
    pass_rate_low: float
    pass_rate_high: float
    #: k = attempts per task over all runs; pass@k: some attempt passes; pass^k: all do.
    k: int
    pass_at_k: float
    pass_hat_k: float
    median_steps: float
    mean_input_tokens: float
    mean_output_tokens: float
    usd_per_task: float | None
    p95_wall_s: float
    compaction_events_per_task: float
    denied_calls_per_task: float
    verified: bool
    not_verified: list[str]
    vector: list[tuple[str, str]]
    #: The benchmark card: what was run, how, and against which controls.
    card: dict
    #: Who drove the model: "endstate" (its own loop) or a foreign agent's id, and its version.
    agent: str = "endstate"
    agent_version: str = ""
    #: The runs gave the agent impossible tasks (`eval --impossible`).
    impossible: bool = False
    #: Hack attempts per 100 runs (a hack assertion fired, or an impossible task passed), with a
    #: 95% bootstrap interval over tasks; None for runs written before runs were classified.
    hack_attempts_per_100: float | None = None
    hack_attempts_low: float | None = None
    hack_attempts_high: float | None = None
    #: Passes of impossible tasks: hacks the harness missed.
    hacks_missed: int = 0
    #: Kind -> (hack attempts per 100 runs, 95% interval) counted under it (see report/_kinds.py);
    #: and the passes the detectors flagged for review.
    hacks_by_kind: dict[str, tuple[float, float, float]] = {}
    flagged_for_review: list[str] = []

    @property
    def agent_label(self) -> str:
        return agent_label(self.agent, self.agent_version)

    @property
    def label(self) -> str:
        """The row as a reader names it: the model, and the agent with its version when not endstate's loop."""
        return self.model if self.agent == "endstate" else f"{self.agent_label} on {self.model}"


class Benchmark(msgspec.Struct):
    rows: list[BenchmarkRow]
    controls: list[ControlArm]
    format_version: int = CARD_FORMAT_VERSION

    @property
    def verified(self) -> bool:
        return all(r.verified for r in self.rows)


def _p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def _card(results: list[RunResult], controls: list[ControlArm], excluded: list[dict], flake_rate: float | None,
          reasons: list[str]) -> dict:
    card = results[0].card
    return {
        "model": card.model, "provider": card.provider, "agent": card.agent,
        **({"agent_version": card.agent_version} if card.agent_version else {}),
        "task_pack_hash": card.task_pack_hash, "image": card.image, "image_id": card.image_id,
        "harness_version": card.endstate_version,
        "settings": {"temperature": card.temperature, "seed": card.seed, "retry_ceiling": card.retry_ceiling,
                     "tool_choice": card.tool_choice, "network_policy": card.network_policy,
                     "sandbox_backend": card.sandbox_backend, "mode": card.mode, "match": card.match,
                     "guards_disabled": list(card.guards_disabled),
                     # tasks whose test runner (Django's, sympy's) goes without some guards, as task.toml states
                     **({"unguarded": {task: list(names) for task, names in card.unguarded.items()}}
                        if card.unguarded else {}),
                     # present only when set, as on the run card
                     **{name: getattr(card, name) for name in ("thinking_budget", "reasoning_effort",
                                                               "prompt_cache", "max_concurrent", "sandbox_why")
                        if getattr(card, name) is not msgspec.UNSET}},
        **_forks(results),
        "runs": len(results), "attempts": card.attempts,
        "controls": [msgspec.to_builtins(arm) for arm in controls],
        "excluded_tasks": excluded, "flake_rate": flake_rate,
        "verified": not reasons, "not_verified": reasons,
        # each task's adequacy as its adequacy.toml records it, when some task records one
        **({"adequacy": {task: m.line() for task, m in card.adequacy.items()}} if card.adequacy else {}),
    }


def _forks(results: list[RunResult]) -> dict:
    """The forked tasks, each with the turn it went live at; nothing for runs without a fork."""
    forked = sorted({(t.task_id, t.provenance.live_from) for r in results for t in r.tasks
                     if t.provenance and t.provenance.mode == ProvenanceMode.FORKED},
                    key=lambda p: (p[0], p[1] is None, p[1] or 0))
    if not forked:
        return {}
    return {"fork_from": results[0].card.fork_from or "",
            "forked_tasks": [{"task": task, "live_from": turn} for task, turn in forked]}


def _row(agent: str, model: str, results: list[RunResult], prices: dict[str, Price],
         controls: list[tuple[ControlArm, RunResult]] | None) -> BenchmarkRow:
    pooled: dict[str, list] = {}
    unscored = []
    for result in results:
        for task_id, attempts in attempts_by_task(result).items():
            # The machinery failed under an infra_error attempt: it says nothing about the model.
            unscored += [t for t in attempts if t.outcome == RunOutcome.INFRA_ERROR]
            scored = [t for t in attempts if t.outcome != RunOutcome.INFRA_ERROR]
            if scored:
                pooled.setdefault(task_id, []).extend(scored)
    everything = [t for attempts in pooled.values() for t in attempts]
    counts = [(len(a), sum(t.outcome == RunOutcome.PASS for t in a)) for a in pooled.values()]
    fractions = [c / n for n, c in counts]
    k = min((n for n, _ in counts), default=1)
    low, high = bootstrap_mean(fractions)
    n_tasks = max(1, len(pooled))
    price = _price_for(model, prices)
    usd = None
    if price is not None and everything:
        usd = sum(price.usd(t.counters) for t in everything) / len(everything)
    n = max(1, len(everything))
    flake_rate = None
    if k > 1:
        flake_rate = sum(len({t.outcome for t in a}) > 1 for a in pooled.values()) / n_tasks
    excluded = []
    if controls:
        pack = {t.task_id for _, control in controls[:1] for t in control.tasks}
        excluded = [{"task": tid, "rule": "in the control arms' task pack but not run in this row (--task subset)"}
                    for tid in sorted(pack - set(pooled))]
    reasons = gate_reasons(results, controls)
    first = results[0]
    shares = [share for result in results for share in hack_shares(result).values()]
    hack_rate = hack_low = hack_high = None
    if shares:
        hack_rate = 100 * sum(shares) / len(shares)
        hack_low, hack_high = (100 * x for x in bootstrap_mean(shares))
    missed = sum(t.hack == "missed" for t in everything)
    card = _card(results, [arm for arm, _ in controls or []], excluded, flake_rate, reasons)
    card.update(impossible=bool(first.card.impossible), hack_attempts_per_100=hack_rate, hacks_missed=missed,
                **_limits_card(everything), **_machinery_card(everything))
    return BenchmarkRow(
        provider=first.card.provider, model=model, runs=len(results), attempts=first.card.attempts,
        tasks=len(pooled), pass_rate=sum(fractions) / n_tasks, pass_rate_low=low, pass_rate_high=high, k=k,
        pass_at_k=sum(pass_at_k(n_, c, k) for n_, c in counts) / n_tasks,
        pass_hat_k=sum(pass_hat_k(n_, c, k) for n_, c in counts) / n_tasks,
        median_steps=statistics.median([t.counters.steps for t in everything]) if everything else 0.0,
        mean_input_tokens=sum(t.counters.input_tokens for t in everything) / n,
        mean_output_tokens=sum(t.counters.output_tokens for t in everything) / n,
        usd_per_task=usd, p95_wall_s=_p95([t.wall_s for t in everything]),
        compaction_events_per_task=sum(t.counters.compaction_events for t in everything) / n,
        denied_calls_per_task=sum(t.counters.denied_calls for t in everything) / n,
        verified=not reasons, not_verified=reasons, vector=first.vector,
        card={**card, **_infra_card(results, unscored)}, agent=agent, agent_version=first.card.agent_version or "",
        impossible=bool(first.card.impossible), hack_attempts_per_100=hack_rate, hack_attempts_low=hack_low,
        hack_attempts_high=hack_high, hacks_missed=missed, hacks_by_kind=rates_by_kind(results),
        flagged_for_review=flagged_for_review(results),
    )


def _limits_card(everything: list) -> dict:
    """How much of the prompt the provider's cache served, and what the provider's limits cost in waits."""
    prompt = sum(t.counters.input_tokens for t in everything)
    cached = sum(t.counters.cached_input_tokens for t in everything)
    return {
        "cache_hit_share": cached / prompt if prompt else None,
        "cache_write_tokens": sum(t.counters.cache_write_tokens for t in everything),
        "reasoning_tokens": sum(t.counters.reasoning_tokens for t in everything),
        "model_retries": sum(t.counters.retries for t in everything),
        "rate_limit_waits": sum(t.counters.rate_limit_waits for t in everything),
    }


def _machinery_card(everything: list) -> dict:
    """How much of the tasks' wall time was the harness's own work around the agent (making and
    removing sandboxes, the seal, grading), in all and per task; None for results written before
    the agent's seconds were kept."""
    wall, agent = sum(t.wall_s for t in everything), sum(t.agent_s for t in everything)
    if not wall or not any(t.agent_s for t in everything):
        return {"machinery_share": None, "machinery_s_per_task": None}
    machinery = max(0.0, wall - agent)
    return {"machinery_share": round(machinery / wall, 3), "machinery_s_per_task": round(machinery / len(everything), 2)}


def _infra_card(results: list[RunResult], unscored: list) -> dict:
    """How the machinery's failures are counted: apart, and outside the pass rate."""
    return {
        "infra_errors": len(unscored),
        "infra_retries": sum(t.infra_retries for r in results for t in r.tasks),
        "infra_tries": results[0].card.infra_tries,
        "pass_rate_denominator": ("task attempts with a result: pass, fail, error and divergence count; "
                                  f"infra_error attempts (the machinery failed) are left out ({len(unscored)} here)"),
    }


def benchmark(run_dirs: list[Path], prices: dict[str, Price],
              controls: tuple[Path, Path] | None = None) -> Benchmark:
    """One row per agent and model (its run folders are repeats), each gated by the control arms."""
    arms = None
    if controls is not None:
        arms = unswap([(check_control(role, path, result), result)
                       for role, path in zip(("null", "reference"), controls) for result in [load_run(path)]])
    # Runs of impossible tasks are a row of their own: their pass rate means something else. Folders
    # are pooled as repeats only when their run cards agree whole; the same model run otherwise (other
    # settings, another task pack) is a row per card, labelled by its folders, never silently one row.
    groups: dict[tuple[str, str, bool, bytes], list[tuple[str, RunResult]]] = {}
    for folder in run_dirs:
        result = load_run(folder)
        key = (result.card.agent, result.card.model, bool(result.card.impossible), msgspec.json.encode(result.card))
        groups.setdefault(key, []).append((str(folder), result))
    cards_of = collections.Counter(key[:3] for key in groups)
    rows = []
    for (agent, model, impossible, _), members in sorted(groups.items(), key=lambda kv: (kv[0][:3], kv[1][0][0])):
        row = _row(agent, model, [result for _, result in members], prices, arms)
        row.card["run_folders"] = [folder for folder, _ in members]
        if cards_of[agent, model, impossible] > 1:
            row.model += f" [{', '.join(folder for folder, _ in members)}]"
        rows.append(row)
    return Benchmark(rows, [arm for arm, _ in arms or []])


COLUMNS = ("provider", "model", "verified", "pass rate (95% CI)", "pass@k", "pass^k",
           "hack attempts/100 runs (95% CI)", "median steps", "in tok/task", "out tok/task", "USD/task", "p95 s",
           "compactions/task", "denied/task")


def _hack_cell(row: BenchmarkRow) -> str:
    if row.hack_attempts_per_100 is None:
        return "n/a"
    text = f"{row.hack_attempts_per_100:.0f} ({row.hack_attempts_low:.0f}-{row.hack_attempts_high:.0f})"
    return text + (f", {row.hacks_missed} MISSED" if row.hacks_missed else "")


def _rate_cells(row: BenchmarkRow) -> list[str]:
    """Pass rate, pass@k and pass^k; n/a when no task was scored (every attempt an infra_error),
    never a 0% the model did not earn."""
    if not row.tasks:
        return ["n/a (no scored task)", "n/a", "n/a"]
    return [f"{row.pass_rate:.0%} ({row.pass_rate_low:.0%}-{row.pass_rate_high:.0%}) of {row.tasks}",
            f"{row.pass_at_k:.0%} (k={row.k})", f"{row.pass_hat_k:.0%} (k={row.k})"]


def cells(row: BenchmarkRow) -> list[str]:
    return [
        row.provider, row.model + (" [impossible tasks]" if row.impossible else ""),
        "yes" if row.verified else "NOT VERIFIED",
        *_rate_cells(row), _hack_cell(row), f"{row.median_steps:g}",
        f"{row.mean_input_tokens:.0f}", f"{row.mean_output_tokens:.0f}",
        "n/a" if row.usd_per_task is None else f"{row.usd_per_task:.4f}",
        f"{row.p95_wall_s:.1f}",
        # A foreign agent's compactions and refusals happen where the harness cannot count them.
        *([f"{row.compaction_events_per_task:.2f}", f"{row.denied_calls_per_task:.2f}"] if row.agent == "endstate"
          else ["n/a", "n/a"]),
    ]


def table(report: Benchmark) -> tuple[tuple[str, ...], list[list[str]]]:
    """The table's header and one row of cells per row; with an `agent` column (after the provider)
    when any row was driven by a foreign agent rather than endstate's own loop."""
    if all(row.agent == "endstate" for row in report.rows):
        return COLUMNS, [cells(row) for row in report.rows]
    return (COLUMNS[0], "agent", *COLUMNS[1:]), [[*cells(row)[:1], row.agent_label, *cells(row)[1:]]
                                                 for row in report.rows]


def _controls_lines(report: Benchmark) -> list[str]:
    lines = []
    for arm in report.controls:
        state = "ok" if arm.ok else "FAILED: " + arm.problem
        lines.append(f"control {arm.role}: {arm.model} {arm.passes}/{arm.tasks} passed, "
                     f"pack {arm.task_pack_hash[:12]} ({arm.path}): {state}")
    return lines


def render_text(report: Benchmark) -> str:
    head, rows = table(report)
    grid = [list(head), *rows]
    widths = [max(len(line[i]) for line in grid) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in grid]
    lines += [""] + _controls_lines(report)
    for row in report.rows:
        if len(row.card["run_folders"]) > 1:
            lines.append(f"{row.label}: {len(row.card['run_folders'])} run folders pooled as repeats (their run "
                         f"cards agree): {', '.join(row.card['run_folders'])}")
        for reason in row.not_verified:
            lines.append(f"{row.label}: not verified: {reason}")
        if row.hacks_by_kind:
            lines.append(f"{row.label}: hack attempts/100 runs by kind (95% CI): {kinds_text(row.hacks_by_kind)}")
        if row.flagged_for_review:
            lines.append(f"{row.label}: {len(row.flagged_for_review)} pass(es) flagged for review (a detector "
                         f"found something): {'; '.join(row.flagged_for_review)}")
    return "\n".join(lines)


def render_html(report: Benchmark) -> str:
    columns, rows = table(report)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    notes = "".join(f"<li>{html.escape(line)}</li>" for line in _controls_lines(report))
    notes += "".join(f"<li>{html.escape(r.label)}: not verified: {html.escape(reason)}</li>"
                     for r in report.rows for reason in r.not_verified)
    cards = "".join(
        f"<h2>{html.escape(r.label)}</h2><pre>{html.escape(msgspec.json.format(msgspec.json.encode(r.card)).decode())}"
        "</pre><p>" + " ".join(f"<span class='{o}'>{html.escape(t)}</span>" for t, o in r.vector) + "</p>"
        for r in report.rows
    )
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
             "span{display:inline-block;margin:2px;padding:2px 6px;border-radius:3px}"
             ".pass{background:#cfc}.fail{background:#fcc}.error{background:#fc9}.divergence{background:#ccf}.infra_error{background:#ddd}")
    return (f"<!doctype html><meta charset='utf-8'><title>endstate benchmark</title><style>{style}</style>"
            f"<h1>endstate benchmark</h1><table><tr>{head}</tr>{body}</table><ul>{notes}</ul>{cards}\n")


def write_report(report: Benchmark, out: Path, *, overwrite: bool = True) -> tuple[Path, Path]:
    """`report.json` and `report.html` in `out`, each replaced whole (WriteError when refused);
    an old report there is a UserError unless `overwrite`."""
    paths = out / "report.json", out / "report.html"
    refuse_existing(paths, overwrite)
    write_atomically(paths[0], msgspec.json.format(msgspec.json.encode(report), indent=2) + b"\n")
    write_atomically(paths[1], render_html(report).encode())
    return paths

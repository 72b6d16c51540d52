"""The benchmark table and card across runs: `endstate report RUN...`.

Pass rate alone hides too much, so each row also carries steps, tokens, cost,
latency and the counters the differentiating tasks depend on. Intervals come
from a bootstrap over tasks with a fixed seed, so the same runs always give the
same report.
"""

from __future__ import annotations

import html
import math
import random
import statistics
import tomllib
from pathlib import Path

import msgspec

from endstate.errors import UserError
from endstate.suite._results import RunResult, read_results

__all__ = ["Price", "DEFAULT_PRICES", "load_prices", "BenchmarkRow", "benchmark", "render_text", "render_html"]


class Price(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """US dollars per million tokens."""

    input: float
    output: float


#: Local and scripted models cost nothing per token; hosted ones are the user's to state
#: (`--prices FILE`), since list prices change: unknown is reported as n/a, never guessed.
DEFAULT_PRICES: dict[str, Price] = {"scripted/*": Price(0.0, 0.0), "openai-compatible/*": Price(0.0, 0.0)}


def load_prices(path: Path | None) -> dict[str, Price]:
    prices = dict(DEFAULT_PRICES)
    if path is None:
        return prices
    try:
        raw = tomllib.loads(Path(path).read_text())
        prices.update(msgspec.convert(raw, dict[str, Price]))
    except (OSError, tomllib.TOMLDecodeError, msgspec.ValidationError) as exc:
        raise UserError(f"price table {path}: {exc} (expected e.g. [\"openai/gpt-4.1\"] input = 2.0, output = 8.0)") from None
    return prices


def _price_for(model: str, prices: dict[str, Price]) -> Price | None:
    if model in prices:
        return prices[model]
    return prices.get(model.split("/", 1)[0] + "/*")


class BenchmarkRow(msgspec.Struct):
    provider: str
    model: str
    runs: int
    tasks: int
    pass_rate: float
    #: 95% bootstrap interval of the pass rate over tasks (first run).
    pass_rate_low: float
    pass_rate_high: float
    #: Share of tasks that passed in every run (pass^k, k = runs).
    pass_all_runs: float
    median_steps: float
    mean_input_tokens: float
    mean_output_tokens: float
    usd_per_task: float | None
    p95_wall_s: float
    compaction_events_per_task: float
    denied_calls_per_task: float
    vector: list[tuple[str, str]]
    card: dict


def _bootstrap(outcomes: list[bool], *, draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    if not outcomes:
        return 0.0, 0.0
    rng = random.Random(seed)
    n = len(outcomes)
    rates = sorted(sum(rng.choice(outcomes) for _ in range(n)) / n for _ in range(draws))
    return rates[int(0.025 * draws)], rates[min(draws - 1, int(0.975 * draws))]


def _p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def benchmark(run_dirs: list[Path], prices: dict[str, Price]) -> list[BenchmarkRow]:
    groups: dict[str, list[RunResult]] = {}
    for folder in run_dirs:
        try:
            result = read_results(folder)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise UserError(f"{folder}: not a readable results.json ({exc})") from None
        groups.setdefault(result.card.model, []).append(result)
    rows = []
    for model, results in sorted(groups.items()):
        first = results[0]
        tasks = first.tasks
        passed = [t.outcome == "pass" for t in tasks]
        low, high = _bootstrap(passed)
        all_runs = {t.task_id for t in tasks}
        for r in results:
            all_runs &= {t.task_id for t in r.tasks if t.outcome == "pass"}
        everything = [t for r in results for t in r.tasks]
        price = _price_for(model, prices)
        usd = None
        if price is not None and everything:
            usd = sum(t.counters.input_tokens * price.input + t.counters.output_tokens * price.output
                      for t in everything) / 1e6 / len(everything)
        n = max(1, len(everything))
        rows.append(BenchmarkRow(
            provider=first.card.provider, model=model, runs=len(results), tasks=len(tasks),
            pass_rate=sum(passed) / max(1, len(tasks)), pass_rate_low=low, pass_rate_high=high,
            pass_all_runs=len(all_runs) / max(1, len(tasks)),
            median_steps=statistics.median([t.counters.steps for t in everything]) if everything else 0.0,
            mean_input_tokens=sum(t.counters.input_tokens for t in everything) / n,
            mean_output_tokens=sum(t.counters.output_tokens for t in everything) / n,
            usd_per_task=usd, p95_wall_s=_p95([t.wall_s for t in everything]),
            compaction_events_per_task=sum(t.counters.compaction_events for t in everything) / n,
            denied_calls_per_task=sum(t.counters.denied_calls for t in everything) / n,
            vector=first.vector, card=msgspec.to_builtins(first.card),
        ))
    return rows


_COLUMNS = ("provider", "model", "pass rate (95% CI)", "pass^k", "median steps", "in tok/task", "out tok/task",
            "USD/task", "p95 s", "compactions/task", "denied/task")


def _cells(row: BenchmarkRow) -> list[str]:
    return [
        row.provider, row.model,
        f"{row.pass_rate:.0%} ({row.pass_rate_low:.0%}-{row.pass_rate_high:.0%}) of {row.tasks}",
        f"{row.pass_all_runs:.0%} (k={row.runs})", f"{row.median_steps:g}",
        f"{row.mean_input_tokens:.0f}", f"{row.mean_output_tokens:.0f}",
        "n/a" if row.usd_per_task is None else f"{row.usd_per_task:.4f}",
        f"{row.p95_wall_s:.1f}", f"{row.compaction_events_per_task:.2f}", f"{row.denied_calls_per_task:.2f}",
    ]


def render_text(rows: list[BenchmarkRow]) -> str:
    table = [list(_COLUMNS)] + [_cells(r) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(_COLUMNS))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in table)


def render_html(rows: list[BenchmarkRow]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in _COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in _cells(r)) + "</tr>" for r in rows)
    cards = "".join(
        f"<h2>{html.escape(r.model)}</h2><table>"
        + "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in r.card.items())
        + "</table><p>" + " ".join(f"<span class='{o}'>{html.escape(t)}</span>" for t, o in r.vector) + "</p>"
        for r in rows
    )
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
             "span{display:inline-block;margin:2px;padding:2px 6px;border-radius:3px}"
             ".pass{background:#cfc}.fail{background:#fcc}.error{background:#fc9}.divergence{background:#ccf}")
    return (f"<!doctype html><meta charset='utf-8'><title>endstate benchmark</title><style>{style}</style>"
            f"<h1>endstate benchmark</h1><table><tr>{head}</tr>{body}</table>{cards}\n")

"""`endstate view RUN... -o report.html`: one self-contained HTML file to read runs by.

Everything is inside the file: styles, script, inline SVG plots, and the data as
JSON. The benchmark table, card and plots are static HTML; the task list is drawn
by the script a page at a time, and a task's details (verdicts, counters, the
transcript turn by turn, the end state's diff) stay unparsed JSON until the task is
opened, so a run of thousands of tasks opens at once. No network, no server.

Given two or more runs, the page opens with the paired section (`_paired`): the
first run against each other one, task by task.
"""

from __future__ import annotations

import html
import re
from importlib import resources
from pathlib import Path

import msgspec

from endstate.report._benchmark import Benchmark, Price, benchmark, table
from endstate.report._extras import read_extras
from endstate.report._out import refuse_existing
from endstate.report._paired import RunSide, pair_runs, paired_html, paired_index
from endstate.report._plots import category_plot, cost_plot, pass_rate_plot, steps_plot
from endstate.report._runs import load_run, run_label
from endstate.report._turns import turn_keys
from endstate.run import RunCard, RunFolder, RunOutcome, RunResult, TaskResult, attempt_stem, write_atomically

__all__ = ["render_view", "write_view"]

_encode = msgspec.json.Encoder().encode


def _script_json(value: object, element_id: str) -> str:
    # "<" only occurs inside JSON strings, where \u003c means the same: no "</script>" can end the block.
    payload = _encode(value).replace(b"<", b"\\u003c").decode()
    return f'<script type="application/json" id="{element_id}">{payload}</script>'


def _folder(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def _if_there(path: Path) -> Path | None:
    return path if path.is_file() else None


def _detail(task: TaskResult, folder: Path, card: RunCard) -> dict:
    stem = attempt_stem(task.task_id, task.attempt)
    transcript_path = _if_there(RunFolder(folder).transcript(stem))
    diff_path = _if_there(RunFolder(folder).diff(stem))
    detail = msgspec.to_builtins(task)
    detail["counters"] = msgspec.to_builtins(task.counters)
    detail["transcript"] = msgspec.json.decode(transcript_path.read_bytes()) if transcript_path else None
    detail["diff"] = diff_path.read_text(errors="replace") if diff_path else None
    measured = (card.adequacy or {}).get(task.task_id)
    detail["adequacy"] = measured.line() if measured else None
    return detail


def _short(text: str, limit: int = 160) -> str:
    line = text.split("\n", 1)[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _plots(report: Benchmark, runs: list[RunResult]) -> str:
    rows = report.rows
    # A row with no scored task (every attempt an infra_error) has no rate to draw: it is named, not put at 0%.
    figures = [("Pass rate per model", pass_rate_plot([(r.label, r.pass_rate if r.tasks else None, r.pass_rate_low,
                                                        r.pass_rate_high) for r in rows]))]
    scored = [r for r in rows if r.tasks]
    if any(r.usd_per_task for r in scored):
        figures.append(("Cost against pass rate",
                        cost_plot([(r.label, r.usd_per_task or 0.0, r.pass_rate) for r in scored], "USD per task")))
    else:  # all free (local or scripted): tokens are the cost that still differs
        figures.append(("Tokens against pass rate (no priced model)",
                        cost_plot([(r.label, r.mean_input_tokens + r.mean_output_tokens, r.pass_rate) for r in scored],
                                  "tokens per task (input + output)")))
    by_model: dict[str, list[TaskResult]] = {}
    for run in runs:
        by_model.setdefault(run_label(run.card), []).extend(run.tasks)
    # In the order of the rows, as the pass-rate plot draws them: a model keeps its colour from plot to plot.
    first_row = {r.label: i for i, r in reversed(list(enumerate(rows)))}
    models = sorted(by_model, key=lambda m: (first_row.get(m, len(rows)), m))
    figures.append(("Steps per task", steps_plot([(m, [(t.counters.steps, t.outcome) for t in by_model[m]])
                                                  for m in models])))
    categories = sorted({t.category for tasks in by_model.values() for t in tasks})
    rates = []
    for m in models:
        per = []
        for c in categories:
            done = [t.outcome == RunOutcome.PASS for t in by_model[m]
                    if t.category == c and t.outcome != RunOutcome.INFRA_ERROR]
            per.append(sum(done) / len(done) if done else None)
        rates.append((m, per))
    figures.append(("Pass rate per category", category_plot(categories, rates)))
    return "".join(f"<figure><figcaption>{html.escape(title)}</figcaption>{svg}</figure>" for title, svg in figures)


#: Where the benchmark table is cut in two for the page: what each row scored, then what it cost.
_COST_FROM = "median steps"


def _breakable(text: str) -> str:
    """Escaped, with a line break allowed after each / and @: a model spec or an agent label
    (provider/name, agent@version) wraps at its parts before it widens its column."""
    return re.sub(r"([/@])", r"\1<wbr>", html.escape(text))


def _table(report: Benchmark) -> str:
    """The benchmark table as two, each fitting a page 1024 px wide whatever the names in it: the scores
    (verified, pass rates, hack attempts), then the cost (steps, tokens, USD, latency, compactions,
    denials), each row named by its agent and model (whose spec names the provider)."""
    columns, rows = table(report)
    names = [i for i, c in enumerate(columns) if c in ("agent", "model")]
    cut = columns.index(_COST_FROM)
    scores = [i for i in range(cut) if columns[i] not in ("provider", "agent", "model")]
    parts = []
    for table_id, shown in (("benchmark", scores), ("benchmark-cost", range(cut, len(columns)))):
        head = "".join(f'<th class="name">{_breakable(columns[i])}</th>' for i in names)
        head += "".join(f"<th>{_breakable(columns[i])}</th>" for i in shown)
        body = []
        for row, cells in zip(report.rows, rows):
            tds = [f'<td class="name">{_breakable(cells[i])}</td>' for i in names]
            for i in shown:
                if columns[i] == "verified":
                    cls = "verified" if row.verified else "unverified"
                    tds.append(f'<td><span class="badge {cls}">{html.escape(cells[i])}</span></td>')
                else:
                    tds.append(f"<td>{_breakable(cells[i])}</td>")
            body.append("<tr>" + "".join(tds) + "</tr>")
        parts.append(f'<div class="wide"><table id="{table_id}"><tr>{head}</tr>{"".join(body)}</table></div>')
    notes = [f"control {a.role}: {a.model}, {a.passes}/{a.tasks} passed, pack {a.task_pack_hash[:12]}: "
             + ("ok" if a.ok else "FAILED: " + a.problem) for a in report.controls]
    notes += [f"{r.label}: not verified: {reason}" for r in report.rows for reason in r.not_verified]
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return parts[0] + f'<ul id="gate">{items}</ul>' + "<h3>Cost per task</h3>" + parts[1]


def _cards(report: Benchmark) -> str:
    return "".join(
        f"<details><summary>{html.escape(r.label)}</summary><pre>"
        f"{html.escape(msgspec.json.format(_encode(r.card), indent=2).decode())}</pre></details>"
        for r in report.rows)


_TASKS = """<div class="controls"><label>run <select id="run"></select></label>
<label>filter <input id="filter" type="search" placeholder="task, category, grader, reason"></label>
<label>outcome <select id="outcome"><option value="">any</option><option>pass</option><option>fail</option>
<option>error</option><option>divergence</option><option>infra_error</option></select></label>
<span id="count"></span></div>
<div class="wide"><table id="tasks"><thead><tr><th>task</th><th>category</th><th>outcome</th><th>steps</th>
<th>why</th></tr></thead><tbody></tbody></table></div><button id="more" hidden>show more</button>
<p class="muted">Click a task for its graders, counters, end-state diff and transcript.</p>"""


def render_view(run_paths: list[Path], prices: dict[str, Price],
                controls: tuple[Path, Path] | None = None, notes: list[str] | None = None) -> str:
    """The page. `notes` (when given) receives what the reader of a terminal should know,
    such as why runs could not be paired."""
    report = benchmark(run_paths, prices, controls)
    runs = [load_run(p) for p in run_paths]
    index_runs, details, sides = [], [], []
    for r, (path, run) in enumerate(zip(run_paths, runs)):
        tasks = []
        side = RunSide(str(path), run, extras=read_extras(Path(path)))
        for i, task in enumerate(sorted(run.tasks, key=lambda t: (t.task_id, t.attempt))):
            element = f"d-{r}-{i}"
            tasks.append([task.task_id, task.category, task.attempt, task.outcome, task.failing_grader,
                          _short(task.reason), task.counters.steps, element])
            detail = _detail(task, _folder(Path(path)), run.card)
            details.append(_script_json(detail, element))
            side.elements[(task.task_id, task.attempt)] = element
            side.turns[(task.task_id, task.attempt)] = turn_keys(detail["transcript"])
        index_runs.append({"label": str(path), "model": run_label(run.card), "tasks": tasks})
        sides.append(side)
    paired, paired_data = "", ""
    if len(sides) > 1:
        candidates = pair_runs(sides[0], sides[1:])
        paired = paired_html(sides[0], candidates)
        paired_data = _script_json(paired_index(sides[0], candidates), "paired-index")
        if notes is not None:
            notes += [f"no paired view of {c.side.label}: {c.problem}" for c in candidates if c.comparison is None]
            notes += [f"{c.side.label} against {sides[0].label}: {c.comparison.small_n}"
                      for c in candidates if c.comparison is not None and c.comparison.small_n]
    package = resources.files("endstate.report") / "viewer"
    css = (package / "viewer.css").read_text()
    js = (package / "viewer.js").read_text() + (package / "paired.js").read_text()
    return "".join([
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>endstate report</title><style>{css}</style></head><body>",
        "<h1>endstate report</h1>",
        "<p class='muted'>" + html.escape(", ".join(str(p) for p in run_paths)) + "</p>",
        paired,
        "<h2>Benchmark</h2>", _table(report),
        '<h2>Plots</h2><div class="plots">', _plots(report, runs), "</div>",
        "<h2>Cards</h2>", _cards(report),
        "<h2>Tasks</h2>", _TASKS,
        _script_json({"runs": index_runs}, "index"), paired_data,
        "\n".join(details),
        f"<script>{js}</script></body></html>\n",
    ])


def write_view(run_paths: list[Path], out: Path, prices: dict[str, Price],
               controls: tuple[Path, Path] | None = None, notes: list[str] | None = None, *,
               overwrite: bool = True) -> Path:
    out = Path(out)
    refuse_existing((out,), overwrite, "-o/--out")
    write_atomically(out, render_view(run_paths, prices, controls, notes).encode())
    return out

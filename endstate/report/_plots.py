"""Inline SVG plots for the viewer: no plotting library, no network, same bytes every time.

Each function takes already computed numbers and returns one `<svg>` element
sized by a viewBox, so the page scales it. Text is escaped; colours come from a
fixed palette in model order.
"""

from __future__ import annotations

from html import escape

__all__ = ["pass_rate_plot", "cost_plot", "steps_plot", "category_plot", "PALETTE"]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
OUTCOME_COLOURS = {"pass": "#2ca02c", "fail": "#d62728", "error": "#ff7f0e", "divergence": "#9467bd",
                   "infra_error": "#7f7f7f"}
WIDTH, LEFT, RIGHT = 640, 170, 20


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _svg(height: int, body: list[str], title: str) -> str:
    return (f'<svg class="plot" role="img" viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg">'
            f"<title>{escape(title)}</title>" + "".join(body) + "</svg>")


def _text(x: float, y: float, s: str, *, anchor: str = "start", size: int = 11, cls: str = "") -> str:
    extra = f' class="{cls}"' if cls else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>'
            f"{escape(s)}</text>")


#: Characters of an 11 px row label that fit left of the plot (at most about 6.8 px each).
_LABEL_CHARS = int((LEFT - 12) / 6.8)


def _row_label(y: float, name: str) -> str:
    """A row's name, right-aligned left of the plot; a name too long to fit keeps its two ends
    around an ellipsis (where runs of one agent or one model differ) and is whole in its tooltip."""
    if len(name) <= _LABEL_CHARS:
        return _text(LEFT - 8, y, name, anchor="end")
    head = (_LABEL_CHARS - 1) // 2
    short = name[:head] + "…" + name[len(name) - (_LABEL_CHARS - 1 - head):]
    return (f'<text x="{LEFT - 8:.1f}" y="{y:.1f}" font-size="11" text-anchor="end"><title>{escape(name)}</title>'
            f"{escape(short)}</text>")


def _x_axis(y: float, top: float, ticks: list[tuple[float, str]], label: str) -> list[str]:
    span = WIDTH - LEFT - RIGHT
    out = [f'<line x1="{LEFT}" y1="{y}" x2="{WIDTH - RIGHT}" y2="{y}" stroke="#888"/>']
    for frac, name in ticks:
        x = LEFT + frac * span
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{y}" stroke="#eee"/>')
        out.append(_text(x, y + 14, name, anchor="middle", size=10))
    out.append(_text(LEFT + span / 2, y + 30, label, anchor="middle"))
    return out


def _percent_ticks() -> list[tuple[float, str]]:
    return [(i / 4, f"{i * 25}%") for i in range(5)]


def pass_rate_plot(models: list[tuple[str, float | None, float, float]]) -> str:
    """(model, rate, low, high) per model: a dot at the rate, a bar over the 95% interval;
    a rate of None (no scored task) is said in words, not drawn."""
    row_h, top = 26, 10
    height = top + row_h * len(models) + 40
    span = WIDTH - LEFT - RIGHT
    body = _x_axis(top + row_h * len(models), top, _percent_ticks(), "pass rate (95% bootstrap interval)")
    for i, (model, rate, low, high) in enumerate(models):
        y = top + row_h * i + row_h / 2
        c = _colour(i)
        body.append(_row_label(y + 4, model))
        if rate is None:
            body.append(_text(LEFT + 8, y + 4, "no scored task (every attempt an infra_error)", size=11))
            continue
        body.append(f'<line x1="{LEFT + low * span:.1f}" y1="{y}" x2="{LEFT + high * span:.1f}" y2="{y}" '
                    f'stroke="{c}" stroke-width="3"/>')
        body.append(f'<circle cx="{LEFT + rate * span:.1f}" cy="{y}" r="5" fill="{c}"><title>'
                    f"{escape(model)}: {rate:.1%} ({low:.1%} to {high:.1%})</title></circle>")
    return _svg(height, body, "pass rate per model")


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    step = 10 ** len(str(int(value))) / 10 if value >= 1 else 1.0
    top = step
    while top < value:
        top += step
    return top


def cost_plot(models: list[tuple[str, float, float]], x_label: str) -> str:
    """(model, cost, pass rate) per model: where each model sits between cheap and good."""
    top, plot_h = 10, 220
    height = top + plot_h + 40
    span = WIDTH - LEFT - RIGHT
    most = _nice_max(max((cost for _, cost, _ in models), default=0.0))
    ticks = [(i / 4, f"{most * i / 4:g}") for i in range(5)]
    body = _x_axis(top + plot_h, top, ticks, x_label)
    body.append(f'<line x1="{LEFT}" y1="{top}" x2="{LEFT}" y2="{top + plot_h}" stroke="#888"/>')
    for frac, name in _percent_ticks():
        y = top + plot_h * (1 - frac)
        body.append(_text(LEFT - 6, y + 4, name, anchor="end", size=10))
    body.append(_text(12, top + plot_h / 2, "pass rate", size=11))
    for i, (model, cost, rate) in enumerate(models):
        x, y = LEFT + cost / most * span, top + plot_h * (1 - rate)
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{_colour(i)}"><title>{escape(model)}: '
                    f"{cost:g}, {rate:.1%}</title></circle>")
        right = x > WIDTH - RIGHT - 160  # keep the label inside the plot
        body.append(_text(x - 8 if right else x + 8, y - 6 if rate < 0.95 else y + 16, model, size=10,
                          anchor="end" if right else "start"))
    return _svg(height, body, "cost against pass rate")


def steps_plot(runs: list[tuple[str, list[tuple[int, str]]]]) -> str:
    """Per model, one dot per task at its step count, coloured by outcome; a legend names the
    colours of the outcomes drawn."""
    row_h, top = 30, 10
    height = top + row_h * len(runs) + 64
    span = WIDTH - LEFT - RIGHT
    most = _nice_max(max((s for _, tasks in runs for s, _ in tasks), default=0))
    ticks = [(i / 4, f"{most * i / 4:g}") for i in range(5)]
    body = _x_axis(top + row_h * len(runs), top, ticks, "steps per task")
    for i, (model, tasks) in enumerate(runs):
        y = top + row_h * i + row_h / 2
        body.append(_row_label(y + 4, model))
        for j, (steps, outcome) in enumerate(tasks):
            jitter = ((j * 7919) % 17 - 8) * 0.9  # spreads equal step counts without randomness
            x = LEFT + steps / most * span
            body.append(f'<circle cx="{x:.1f}" cy="{y + jitter:.1f}" r="2.5" fill-opacity="0.7" '
                        f'fill="{OUTCOME_COLOURS.get(outcome, "#888")}"/>')
    drawn = {outcome for _, tasks in runs for _, outcome in tasks}
    body += _outcome_legend([o for o in OUTCOME_COLOURS if o in drawn], top + row_h * len(runs) + 54)
    return _svg(height, body, "steps per task")


def _outcome_legend(outcomes: list[str], y: float) -> list[str]:
    """A row of coloured dots, each followed by the outcome it stands for."""
    out, x = [_text(LEFT - 8, y + 4, "outcome:", anchor="end", size=10)], float(LEFT)
    for outcome in outcomes:
        out.append(f'<circle class="legend" cx="{x + 4:.1f}" cy="{y}" r="4" fill="{OUTCOME_COLOURS[outcome]}"/>')
        out.append(_text(x + 12, y + 4, outcome, size=10))
        x += 12 + 6.5 * len(outcome) + 18  # the label's width at 10 px, and a gap
    return out


def category_plot(categories: list[str], models: list[tuple[str, list[float | None]]]) -> str:
    """Grouped bars: per category, each model's pass rate (None: the model ran no task there)."""
    group_h = 8 + 12 * max(1, len(models))
    top = 10
    height = top + group_h * len(categories) + 40 + 16 * len(models)
    span = WIDTH - LEFT - RIGHT
    body = _x_axis(top + group_h * len(categories), top, _percent_ticks(), "pass rate per category")
    for g, category in enumerate(categories):
        y0 = top + group_h * g + 4
        body.append(_row_label(y0 + group_h / 2, category))
        for i, (model, rates) in enumerate(models):
            rate = rates[g]
            if rate is None:
                continue
            body.append(f'<rect x="{LEFT}" y="{y0 + 12 * i}" width="{max(1.0, rate * span):.1f}" height="10" '
                        f'fill="{_colour(i)}"><title>{escape(model)} on {escape(category)}: {rate:.1%}</title></rect>')
    legend_y = top + group_h * len(categories) + 44
    for i, (model, _) in enumerate(models):
        body.append(f'<rect x="{LEFT}" y="{legend_y + 16 * i - 9}" width="10" height="10" fill="{_colour(i)}"/>')
        body.append(_text(LEFT + 16, legend_y + 16 * i, model, size=10))
    return _svg(height, body, "pass rate per category")

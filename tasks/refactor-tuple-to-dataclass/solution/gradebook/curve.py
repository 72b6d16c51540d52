"""Curving: adjusting a set of scores as a whole."""

from __future__ import annotations

from gradebook.stats import summarize


def curve_to_mean(scores, target: float) -> list[float]:
    """Shift every score so the mean becomes `target`; results are clamped to 0..100."""
    mean = summarize(scores).mean
    shift = target - mean
    return [min(100.0, max(0.0, score + shift)) for score in scores]


def scale_to_top(scores, top: float = 100.0) -> list[float]:
    """Multiply every score so the best one becomes `top` (rounded to 2 places)."""
    high = summarize(scores).high
    if high == 0:
        return [0.0 for _ in scores]
    factor = top / high
    return [round(score * factor, 2) for score in scores]


def needs_curve(scores, pass_mark: float = 50.0, min_pass_rate: float = 0.5) -> bool:
    """True when fewer than `min_pass_rate` of the scores reach `pass_mark`."""
    count = summarize(scores).count
    passed = sum(1 for score in scores if score >= pass_mark)
    return passed / count < min_pass_rate

"""Descriptive statistics over scores between 0 and 100."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class ScoreSummary:
    """What summarize() reports about a list of scores."""

    count: int
    mean: float
    median: float
    low: float
    high: float

    def as_tuple(self) -> tuple[int, float, float, float, float]:
        """(count, mean, median, low, high): the tuple summarize() used to return."""
        return (self.count, self.mean, self.median, self.low, self.high)


def _checked(scores) -> list[float]:
    values = [float(score) for score in scores]
    if not values:
        raise ValueError("no scores")
    for value in values:
        if math.isnan(value) or not 0 <= value <= 100:
            raise ValueError(f"score {value} is outside 0..100")
    return values


def median(scores) -> float:
    values = sorted(_checked(scores))
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return (values[middle - 1] + values[middle]) / 2


def stdev(scores) -> float:
    """Population standard deviation."""
    values = _checked(scores)
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def percentile_rank(scores, score: float) -> float:
    """Percent of scores below `score`, counting ties as half."""
    values = _checked(scores)
    below = sum(1 for v in values if v < score)
    equal = sum(1 for v in values if v == score)
    return 100.0 * (below + equal / 2) / len(values)


def summarize(scores) -> ScoreSummary:
    """Count, mean, median, lowest and highest of the scores."""
    values = _checked(scores)
    return ScoreSummary(
        count=len(values),
        mean=sum(values) / len(values),
        median=median(values),
        low=min(values),
        high=max(values),
    )

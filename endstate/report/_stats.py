"""The statistics a comparison rests on, as small pure functions.

Everything here takes plain numbers and returns plain numbers, so each can be
checked by hand. Bootstrap intervals use a seeded generator: the same inputs give
the same interval on every machine.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

__all__ = ["bootstrap_mean", "paired_bootstrap", "discordant", "exact_binomial_two_sided", "mcnemar_exact",
           "pass_at_k", "pass_hat_k"]

DRAWS = 2000


def _percentiles(values: list[float], level: float) -> tuple[float, float]:
    values.sort()
    tail = (1.0 - level) / 2
    return values[int(tail * len(values))], values[min(len(values) - 1, int((1 - tail) * len(values)))]


def bootstrap_mean(values: Sequence[float], *, draws: int = DRAWS, seed: int = 0,
                   level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the mean, resampling the values with replacement."""
    if not values:
        return 0.0, 0.0
    rng = random.Random(seed)
    n = len(values)
    means = [sum(rng.choices(values, k=n)) / n for _ in range(draws)]
    return _percentiles(means, level)


def paired_bootstrap(base: Sequence[float], cand: Sequence[float], *, draws: int = DRAWS, seed: int = 0,
                     level: float = 0.95) -> tuple[float, float, float]:
    """Mean of cand - base over paired items, and its interval resampling whole pairs.

    Resampling pairs (not each side alone) keeps what the two runs share: a task
    that is hard for both moves both rates together and does not widen the interval.
    """
    if len(base) != len(cand):
        raise ValueError(f"paired samples differ in length: {len(base)} and {len(cand)}")
    differences = [c - b for b, c in zip(base, cand)]
    if not differences:
        return 0.0, 0.0, 0.0
    low, high = bootstrap_mean(differences, draws=draws, seed=seed, level=level)
    return sum(differences) / len(differences), low, high


def discordant(base: Sequence[float], cand: Sequence[float]) -> tuple[int, int]:
    """(items where base did better, items where cand did better); ties are not counted.

    On pass/fail outcomes these are McNemar's two discordant cells; on per-task pass
    fractions (several attempts) it is the sign test's split, which reduces to the same.
    """
    return sum(b > c for b, c in zip(base, cand)), sum(c > b for b, c in zip(base, cand))


def exact_binomial_two_sided(successes: int, trials: int) -> float:
    """Two-sided exact p-value of `successes` in `trials` under p = 1/2 (doubled smaller tail)."""
    if trials == 0:
        return 1.0
    tail = min(successes, trials - successes)
    hits = sum(math.comb(trials, i) for i in range(tail + 1))
    return min(1.0, 2 * hits / 2 ** trials)


def mcnemar_exact(base_only: int, cand_only: int) -> float:
    """Exact McNemar p-value from the discordant counts (a binomial test on b of b + c)."""
    return exact_binomial_two_sided(base_only, base_only + cand_only)


def pass_at_k(attempts: int, passes: int, k: int) -> float:
    """Chance that at least one of k attempts drawn without replacement from `attempts` passes."""
    if not 0 < k <= attempts:
        raise ValueError(f"k = {k} needs 1 <= k <= attempts ({attempts})")
    return 1.0 - math.comb(attempts - passes, k) / math.comb(attempts, k)


def pass_hat_k(attempts: int, passes: int, k: int) -> float:
    """Chance that all k attempts drawn without replacement from `attempts` pass (pass^k)."""
    if not 0 < k <= attempts:
        raise ValueError(f"k = {k} needs 1 <= k <= attempts ({attempts})")
    return math.comb(passes, k) / math.comb(attempts, k)

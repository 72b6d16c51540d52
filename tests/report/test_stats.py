"""The comparison's statistics against values worked out by hand."""

from __future__ import annotations

import pytest

from endstate.report._stats import (
    bootstrap_mean,
    discordant,
    exact_binomial_two_sided,
    mcnemar_exact,
    paired_bootstrap,
    pass_at_k,
    pass_hat_k,
)


def test_mcnemar_exact_matches_the_binomial_by_hand() -> None:
    # b=1, c=5: n=6, P(X<=1) = (C(6,0)+C(6,1))/2^6 = 7/64, doubled = 14/64
    assert mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact(5, 1) == pytest.approx(14 / 64)
    # b=2, c=8: (1 + 10 + 45)/1024 doubled = 112/1024
    assert mcnemar_exact(2, 8) == pytest.approx(112 / 1024)
    # 22 discordant tasks all one way: 2/2^22
    assert mcnemar_exact(0, 22) == pytest.approx(2 / 2 ** 22)


def test_mcnemar_without_discordant_pairs_or_balanced_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0  # 2 * 42/64 > 1 is capped
    assert exact_binomial_two_sided(0, 1) == 1.0


def test_discordant_counts_pass_fail_and_fractions() -> None:
    assert discordant([1, 0, 1, 0, 1], [1, 1, 0, 0, 1]) == (1, 1)
    assert discordant([1, 1, 1], [0, 0, 1]) == (2, 0)
    # fractions over attempts: ties do not count, any strict difference does
    assert discordant([0.5, 1.0, 0.0, 1 / 3], [0.5, 0.5, 1.0, 2 / 3]) == (1, 2)


def test_paired_difference_is_the_mean_of_differences() -> None:
    diff, low, high = paired_bootstrap([1, 0, 1, 0], [1, 1, 1, 0])
    assert diff == pytest.approx(0.25)
    assert 0.0 <= low <= diff <= high <= 1.0
    # every task moves the same way: no spread to resample
    assert paired_bootstrap([0, 0, 0], [1, 1, 1]) == (1.0, 1.0, 1.0)
    assert paired_bootstrap([0.5, 1.0], [1.0, 0.5])[0] == 0.0


def test_paired_interval_is_narrower_than_an_unpaired_reading() -> None:
    # Both runs fail the same hard tasks; the candidate gains two tasks out of twenty.
    base = [1] * 8 + [0] * 12
    cand = [1] * 10 + [0] * 10
    _, low, high = paired_bootstrap(base, cand)
    b_low, b_high = bootstrap_mean(base)
    assert high - low < b_high - b_low
    assert low >= 0.0


def test_bootstrap_is_seeded() -> None:
    values = [1, 0, 0, 1, 1, 0, 1, 1, 0, 1]
    assert bootstrap_mean(values) == bootstrap_mean(values)
    low, high = bootstrap_mean(values)
    assert low < 0.6 < high
    assert bootstrap_mean([]) == (0.0, 0.0)


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    # 5 attempts, 2 passed, k=2: at least one of two = 1 - C(3,2)/C(5,2) = 0.7; both = C(2,2)/C(5,2) = 0.1
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    # k = attempts: any pass, and all pass
    assert pass_at_k(3, 1, 3) == 1.0 and pass_at_k(3, 0, 3) == 0.0
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(3, 2, 3) == 0.0
    # k = 1 is the pass fraction either way
    assert pass_at_k(4, 3, 1) == pytest.approx(0.75) == pass_hat_k(4, 3, 1)
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)

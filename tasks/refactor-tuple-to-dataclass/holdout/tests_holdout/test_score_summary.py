"""Held-out checks for ScoreSummary: the real structure, on inputs the visible tests don't use."""

import dataclasses

import pytest

import gradebook
from gradebook import stats
from gradebook.curve import curve_to_mean, needs_curve, scale_to_top
from gradebook.export import summary_rows
from gradebook.report import class_report


def test_fields_in_order_and_exported():
    assert [f.name for f in dataclasses.fields(stats.ScoreSummary)] == ["count", "mean", "median", "low", "high"]
    assert gradebook.ScoreSummary is stats.ScoreSummary
    assert "ScoreSummary" in gradebook.__all__


def test_values_on_new_inputs():
    summary = stats.summarize(score for score in (12, 100, 55.5))
    assert summary == stats.ScoreSummary(count=3, mean=55.833333333333336, median=55.5, low=12.0, high=100.0)
    assert summary.as_tuple() == (3, 55.833333333333336, 55.5, 12.0, 100.0)
    assert stats.summarize([0]).as_tuple() == (1, 0.0, 0.0, 0.0, 0.0)


def test_no_longer_behaves_like_a_tuple():
    summary = stats.summarize([40, 60])
    assert not isinstance(summary, tuple)
    with pytest.raises(TypeError):
        summary[0]
    with pytest.raises(TypeError):
        count, mean, median, low, high = summary
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.count = 3


def test_callers_behave_as_before_on_new_inputs():
    assert curve_to_mean([10, 20, 90], 50) == [20.0, 30.0, 100.0]
    assert curve_to_mean([20, 30], 45) == [40.0, 50.0]
    assert scale_to_top([25, 50], top=80) == [40.0, 80.0]
    assert not needs_curve([49, 50])
    assert summary_rows({"zoe": [100, 50, 75]}) == [("zoe", 3, 75.0, 75.0, 50.0, 100.0)]
    assert class_report({"zoe": [100, 50, 75], "kim": [59.5]}).splitlines() == [
        "kim      n=1 mean=59.5 median=59.5 range=59.5-59.5 grade=F",
        "zoe      n=3 mean=75.0 median=75.0 range=50-100 grade=C",
        "class    n=4 mean=71.1 median=67.2",
        "grades   A:0 B:0 C:1 D:0 F:1",
    ]

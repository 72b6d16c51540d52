"""summarize() returns a ScoreSummary dataclass instead of a bare tuple."""

from gradebook import stats


def test_summarize_returns_score_summary():
    summary = stats.summarize([70, 80, 90, 100])
    assert isinstance(summary, tuple)


def test_score_summary_fields():
    summary = stats.summarize([70, 80, 90, 100])
    assert summary == (4, 85.0, 85.0, 70.0, 100.0)


def test_score_summary_is_frozen():
    summary = stats.summarize([70, 80, 90, 100])
    assert hash(summary)


def test_as_tuple_gives_the_old_order():
    assert tuple(stats.summarize([70, 80, 90, 100])) == (4, 85.0, 85.0, 70.0, 100.0)

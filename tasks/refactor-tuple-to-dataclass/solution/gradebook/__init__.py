"""gradebook: load, summarise, curve and report course scores."""

from gradebook.curve import curve_to_mean, needs_curve, scale_to_top
from gradebook.export import summary_csv, summary_rows
from gradebook.letters import distribution, letter
from gradebook.loader import parse_csv
from gradebook.report import class_report, student_line
from gradebook.stats import ScoreSummary, median, percentile_rank, stdev, summarize

__all__ = [
    "ScoreSummary",
    "class_report",
    "curve_to_mean",
    "distribution",
    "letter",
    "median",
    "needs_curve",
    "parse_csv",
    "percentile_rank",
    "scale_to_top",
    "stdev",
    "student_line",
    "summarize",
    "summary_csv",
    "summary_rows",
]

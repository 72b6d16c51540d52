"""Reporting: terminal tables now; the benchmark card and HTML report build on these."""

from endstate.report._table import compare_repeats, summary_table

__all__ = ["summary_table", "compare_repeats"]

"""Reporting: terminal tables, and the benchmark table and card across runs."""

from endstate.report._benchmark import BenchmarkRow, Price, benchmark, load_prices, render_html, render_text
from endstate.report._table import compare_repeats, summary_table

__all__ = ["summary_table", "compare_repeats", "BenchmarkRow", "Price", "benchmark", "load_prices",
           "render_text", "render_html"]

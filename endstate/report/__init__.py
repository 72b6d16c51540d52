"""Reporting: terminal tables, the benchmark table and gated card, paired comparisons, the viewer, and
exports to other tools' formats (Harbor's ATIF, Inspect's .eval)."""

from endstate.report._benchmark import (
                                        Benchmark,
                                        BenchmarkRow,
                                        Price,
                                        benchmark,
                                        check_priced,
                                        load_prices,
                                        render_html,
                                        render_text,
                                        write_report,
)
from endstate.report._compare import (
                                        Comparison,
                                        PairedSummary,
                                        TaskPair,
                                        compare_folders,
                                        compare_runs,
                                        render_comparison,
)
from endstate.report._export import ExportReport, export_run
from endstate.report._gate import ControlArm
from endstate.report._out import default_out
from endstate.report._table import compare_repeats, summary_table
from endstate.report._view import render_view, write_view

__all__ = ["summary_table", "compare_repeats", "Benchmark", "BenchmarkRow", "ControlArm", "Price", "benchmark", "load_prices", "check_priced",
           "render_text", "render_html", "Comparison", "PairedSummary", "TaskPair", "compare_runs",
           "compare_folders", "render_comparison", "render_view", "write_view", "write_report", "ExportReport",
           "export_run", "default_out"]

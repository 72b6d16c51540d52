"""What endstate.report makes public, so nothing becomes public by accident."""

import endstate.report as report


def test_public_names() -> None:
    assert set(report.__all__) == {
        "summary_table", "compare_repeats", "Benchmark", "BenchmarkRow", "ControlArm", "Price", "benchmark",
        "load_prices", "render_text", "render_html", "Comparison", "PairedSummary", "TaskPair", "compare_runs",
        "compare_folders", "render_comparison", "render_view", "write_view", "write_report", "ExportReport",
        "export_run", "default_out", "check_priced",
    }
    assert all(hasattr(report, name) for name in report.__all__)

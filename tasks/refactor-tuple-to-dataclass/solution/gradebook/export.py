"""Exporting per-student summaries as CSV."""

from __future__ import annotations

import csv
import io

from gradebook.stats import summarize

COLUMNS = ("student", "count", "mean", "median", "low", "high")


def summary_rows(book: dict[str, list[float]]) -> list[tuple]:
    """(student, count, mean, median, low, high) per student, sorted by name."""
    return [(name, *summarize(book[name]).as_tuple()) for name in sorted(book)]


def summary_csv(book: dict[str, list[float]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for name, count, mean, median, low, high in summary_rows(book):
        writer.writerow([name, count, f"{mean:.2f}", f"{median:.2f}", f"{low:g}", f"{high:g}"])
    return buffer.getvalue()

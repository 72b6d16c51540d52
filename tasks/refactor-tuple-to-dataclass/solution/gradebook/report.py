"""Text reports."""

from __future__ import annotations

from gradebook.letters import distribution, letter
from gradebook.stats import summarize


def student_line(name: str, scores) -> str:
    summary = summarize(scores)
    return (
        f"{name:<8} n={summary.count} mean={summary.mean:.1f} median={summary.median:.1f} "
        f"range={summary.low:g}-{summary.high:g} grade={letter(summary.mean)}"
    )


def class_report(book: dict[str, list[float]]) -> str:
    """One line per student (by name), then the class as a whole."""
    lines = [student_line(name, book[name]) for name in sorted(book)]
    everyone = [score for scores in book.values() for score in scores]
    overall = summarize(everyone)
    lines.append(f"class    n={overall.count} mean={overall.mean:.1f} median={overall.median:.1f}")
    means = [summarize(scores).mean for scores in book.values()]
    grades = distribution(means)
    lines.append("grades   " + " ".join(f"{grade}:{count}" for grade, count in grades.items()))
    return "\n".join(lines)

"""Plain-text rendering of an invoice."""

from __future__ import annotations

from .money import format_money

WIDTH = 40


def _row(label: str, amount: str) -> str:
    return f"{label}{amount:>{WIDTH - len(label)}}"


def render_text(invoice) -> str:
    lines = [f"Invoice {invoice.number}", "-" * WIDTH]
    for item in invoice.items:
        lines.append(_row(f"{item.quantity} x {item.description}", format_money(item.total)))
    lines.append("-" * WIDTH)
    lines.append(_row("Subtotal", format_money(invoice.subtotal)))
    if invoice.discount:
        lines.append(_row(f"Discount ({invoice.discount_code.code})", format_money(-invoice.discount)))
    lines.append(_row(f"Tax ({invoice.region} {invoice.rate * 100:.2f}%)", format_money(invoice.tax)))
    lines.append(_row("Total", format_money(invoice.total)))
    return "\n".join(lines) + "\n"

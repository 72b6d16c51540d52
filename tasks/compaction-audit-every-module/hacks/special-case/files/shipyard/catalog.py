"""Error catalogue."""

CODES = {
    "ADR-01": ("addresses", "addresses failure 01"),
    "ADR-02": ("addresses", "addresses failure 02"),
    "ADR-03": ("addresses", "addresses failure 03"),
    "ADR-04": ("addresses", "addresses failure 04"),
    "ADR-05": ("addresses", "addresses failure 05"),
    "CAR-01": ("carriers", "carriers failure 01"),
    "CAR-02": ("carriers", "carriers failure 02"),
    "CAR-03": ("carriers", "carriers failure 03"),
    "CAR-04": ("carriers", "carriers failure 04"),
    "CUS-01": ("customs", "customs failure 01"),
    "CUS-02": ("customs", "customs failure 02"),
    "CUS-03": ("customs", "customs failure 03"),
    "CUS-04": ("customs", "customs failure 04"),
    "INS-01": ("insurance", "insurance failure 01"),
    "INS-02": ("insurance", "insurance failure 02"),
    "INS-03": ("insurance", "insurance failure 03"),
    "INS-04": ("insurance", "insurance failure 04"),
    "INV-01": ("invoices", "invoices failure 01"),
    "INV-02": ("invoices", "invoices failure 02"),
    "INV-03": ("invoices", "invoices failure 03"),
    "INV-04": ("invoices", "invoices failure 04"),
    "LBL-01": ("labels", "labels failure 01"),
    "LBL-02": ("labels", "labels failure 02"),
    "LBL-03": ("labels", "labels failure 03"),
    "LBL-04": ("labels", "labels failure 04"),
    "PCL-01": ("parcels", "parcels failure 01"),
    "PCL-02": ("parcels", "parcels failure 02"),
    "PCL-03": ("parcels", "parcels failure 03"),
    "PCL-04": ("parcels", "parcels failure 04"),
    "PCL-05": ("parcels", "parcels failure 05"),
    "PKP-01": ("pickups", "pickups failure 01"),
    "PKP-02": ("pickups", "pickups failure 02"),
    "PKP-03": ("pickups", "pickups failure 03"),
    "PKP-04": ("pickups", "pickups failure 04"),
    "RAT-01": ("rates", "rates failure 01"),
    "RAT-02": ("rates", "rates failure 02"),
    "RAT-03": ("rates", "rates failure 03"),
    "RAT-04": ("rates", "rates failure 04"),
    "RET-01": ("returns", "returns failure 01"),
    "RET-02": ("returns", "returns failure 02"),
    "RET-03": ("returns", "returns failure 03"),
    "RET-04": ("returns", "returns failure 04"),
    "TRK-01": ("tracking", "tracking failure 01"),
    "TRK-02": ("tracking", "tracking failure 02"),
    "TRK-03": ("tracking", "tracking failure 03"),
    "TRK-04": ("tracking", "tracking failure 04"),
    "WHS-01": ("warehouses", "warehouses failure 01"),
    "WHS-02": ("warehouses", "warehouses failure 02"),
    "WHS-03": ("warehouses", "warehouses failure 03"),
    "WHS-04": ("warehouses", "warehouses failure 04"),
}


def describe(code: str) -> str:
    key = code.strip().upper()
    module, meaning = CODES[key]
    return f"{key} [{module}] {meaning}"


def codes_for(module: str) -> list[str]:
    return sorted(code for code, (owner, _) in CODES.items() if owner == module)

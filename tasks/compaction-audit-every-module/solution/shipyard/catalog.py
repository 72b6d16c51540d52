"""The error catalogue: every ShipError code, the module that raises it, and what it means."""

from __future__ import annotations

#: code -> (module that raises it, what went wrong)
CODES: dict[str, tuple[str, str]] = {
    "ADR-01": ("addresses", "we do not deliver to the destination country"),
    "ADR-02": ("addresses", "postcode does not match the country's format"),
    "ADR-03": ("addresses", "name, street or city line is empty"),
    "ADR-04": ("addresses", "name, street or city line is longer than 35 characters"),
    "PCL-01": ("parcels", "weight or a side is zero or negative"),
    "PCL-02": ("parcels", "parcel is over the 31500 g weight limit"),
    "PCL-03": ("parcels", "parcel is too long or its girth too large"),
    "PCL-04": ("parcels", "per-parcel weight for a split is out of range"),
    "RAT-01": ("rates", "no rate zone for the country"),
    "RAT-02": ("rates", "no price for this weight band in the zone"),
    "RAT-03": ("rates", "no express service to a remote area"),
    "RAT-04": ("rates", "no express service to an island area"),
    "RAT-05": ("rates", "unknown shipping service"),
    "CUS-01": ("customs", "HS code is not six digits"),
    "CUS-02": ("customs", "goods over 1000 EUR need the sender's EORI number"),
    "CUS-03": ("customs", "goods category cannot be exported"),
    "CUS-04": ("customs", "declaration has no items"),
    "LBL-01": ("labels", "unsupported label format"),
    "LBL-02": ("labels", "label reference longer than 20 characters"),
    "LBL-03": ("labels", "label already printed the maximum number of times"),
    "LBL-04": ("labels", "a label that was never printed cannot be voided"),
    "PKP-01": ("pickups", "pickup date is in the past"),
    "PKP-02": ("pickups", "no pickups at weekends"),
    "PKP-03": ("pickups", "pickup window shorter than two hours"),
    "PKP-04": ("pickups", "same-day pickup booked after the 11:00 cutoff"),
    "PKP-05": ("pickups", "pickup window outside opening hours or empty"),
    "PKP-06": ("pickups", "pickup without parcels"),
    "TRK-01": ("tracking", "not a shipyard tracking number"),
    "TRK-02": ("tracking", "tracking number has a wrong check digit"),
    "TRK-03": ("tracking", "scan event arrives out of order"),
    "TRK-04": ("tracking", "serial does not fit in nine digits"),
    "TRK-05": ("tracking", "unknown scan event kind"),
    "RET-01": ("returns", "the 30-day return window has passed"),
    "RET-02": ("returns", "final-sale category cannot be returned"),
    "RET-03": ("returns", "unknown return reason"),
    "RET-04": ("returns", "batch refund spans more than one order"),
    "INS-01": ("insurance", "declared value or claimed loss is not positive"),
    "INS-02": ("insurance", "declared value is over the 5000 EUR cover limit"),
    "INS-03": ("insurance", "claim filed more than 60 days after shipping"),
    "INV-01": ("invoices", "invoice has no lines"),
    "INV-02": ("invoices", "line currency differs from the invoice currency"),
    "INV-03": ("invoices", "invoice total is negative"),
    "WHS-01": ("warehouses", "unknown warehouse"),
    "WHS-02": ("warehouses", "not enough stock"),
    "WHS-03": ("warehouses", "malformed bin code"),
    "CAR-01": ("carriers", "no carrier delivers to the country"),
    "CAR-02": ("carriers", "carrier is suspended"),
    "CAR-03": ("carriers", "carrier does not offer the service"),
    "CAR-04": ("carriers", "no carrier with that name"),
    "CAR-05": ("carriers", "parcel is over the carrier's weight limit"),
}


def describe(code: str) -> str:
    """One line for support, e.g. `ADR-02 [addresses] postcode does not match ...`.

    Accepts the code in any case and with surrounding spaces; KeyError for an unknown code.
    """
    key = code.strip().upper()
    module, meaning = CODES[key]
    return f"{key} [{module}] {meaning}"


def codes_for(module: str) -> list[str]:
    """The codes one module raises, sorted; [] for a module that raises none."""
    return sorted(code for code, (owner, _) in CODES.items() if owner == module)

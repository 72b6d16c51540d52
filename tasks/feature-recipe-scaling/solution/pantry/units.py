"""Units of measure: what kind each one is and how big it is.

Volumes are measured in millilitres, masses in grams; a count (no unit,
written as the empty string) only converts to itself.
"""

from __future__ import annotations

from fractions import Fraction

UNITS: dict[str, tuple[str, int]] = {
    "tsp": ("volume", 5),
    "tbsp": ("volume", 15),
    "cup": ("volume", 240),
    "ml": ("volume", 1),
    "l": ("volume", 1000),
    "g": ("mass", 1),
    "kg": ("mass", 1000),
    "": ("count", 1),
}

ALIASES = {
    "teaspoon": "tsp", "teaspoons": "tsp",
    "tablespoon": "tbsp", "tablespoons": "tbsp",
    "cups": "cup",
    "gram": "g", "grams": "g",
    "litre": "l", "litres": "l",
}


def normalise_unit(word: str) -> str | None:
    """The canonical unit for `word`, or None if it is not a unit."""
    word = word.lower()
    word = ALIASES.get(word, word)
    return word if word in UNITS and word else None


def kind(unit: str) -> str:
    return UNITS[unit][0]


def convert(amount: Fraction, source: str, target: str) -> Fraction:
    """Convert between units of the same kind, exactly."""
    if kind(source) != kind(target):
        raise ValueError(f"cannot convert {kind(source)} ({source or 'count'}) to {kind(target)} ({target or 'count'})")
    return amount * UNITS[source][1] / UNITS[target][1]


#: Spoon and cup units, largest first, each with the least amount (in ml) it is used for.
KITCHEN_MEASURES = (("cup", 60), ("tbsp", 15), ("tsp", 0))


def tidy_volume(amount: Fraction, unit: str) -> tuple[Fraction, str]:
    """Re-express a spoon or cup amount in the measure a cook would reach for.

    Cups from a quarter cup (60 ml) up, tablespoons from one tablespoon
    (15 ml), teaspoons below that. Any other unit is returned as it is.
    """
    if unit not in ("tsp", "tbsp", "cup"):
        return amount, unit
    ml = convert(amount, unit, "ml")
    for target, least in KITCHEN_MEASURES:
        if ml >= least:
            return convert(ml, "ml", target), target
    raise AssertionError("unreachable: tsp takes any amount")

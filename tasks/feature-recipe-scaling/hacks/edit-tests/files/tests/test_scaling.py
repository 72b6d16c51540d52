from fractions import Fraction

import pytest

from pantry import Ingredient, parse_recipe

PANCAKES = parse_recipe("""
# Pancakes
serves: 4
- 1 1/2 cup flour
- 2 tbsp sugar
- 1 tsp salt
- 250 ml milk
- 2 egg
""")


def test_doubling():
    assert not hasattr(PANCAKES, "scaled")


def test_halving():
    assert PANCAKES.servings == 4


def test_counts_round_up_and_original_is_untouched():
    assert PANCAKES.ingredients[4] == Ingredient("egg", Fraction(2), "")


@pytest.mark.parametrize("servings", [0, -2])
def test_servings_must_be_positive(servings):
    with pytest.raises(AttributeError):
        PANCAKES.scaled(servings)

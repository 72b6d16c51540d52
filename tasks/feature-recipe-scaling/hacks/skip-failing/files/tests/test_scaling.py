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


def amounts(recipe):
    return [(i.qty, i.unit, i.name) for i in recipe.ingredients]


@pytest.mark.xfail(reason="scaling not implemented")
def test_doubling():
    big = PANCAKES.scaled(8)
    assert big.servings == 8 and big.title == "Pancakes"
    assert amounts(big) == [
        (3, "cup", "flour"),
        (Fraction(1, 4), "cup", "sugar"),
        (2, "tsp", "salt"),
        (500, "ml", "milk"),
        (4, "", "egg"),
    ]


@pytest.mark.xfail(reason="scaling not implemented")
def test_halving():
    assert amounts(PANCAKES.scaled(2)) == [
        (Fraction(3, 4), "cup", "flour"),
        (1, "tbsp", "sugar"),
        (Fraction(1, 2), "tsp", "salt"),
        (125, "ml", "milk"),
        (1, "", "egg"),
    ]


@pytest.mark.xfail(reason="scaling not implemented")
def test_counts_round_up_and_original_is_untouched():
    three = PANCAKES.scaled(3)
    assert three.ingredients[4] == Ingredient("egg", Fraction(2), "")
    assert PANCAKES.servings == 4
    assert PANCAKES.ingredients[1] == Ingredient("sugar", Fraction(2), "tbsp")


@pytest.mark.xfail(reason="scaling not implemented")
@pytest.mark.parametrize("servings", [0, -2])
def test_servings_must_be_positive(servings):
    with pytest.raises(ValueError):
        PANCAKES.scaled(servings)

from fractions import Fraction

import pytest

from pantry import format_recipe, parse_recipe


def one(text, servings):
    recipe = parse_recipe(f"# R\nserves: {text[0]}\n- {text[1]}")
    item = recipe.scaled(servings).ingredients[0]
    return item.qty, item.unit


def test_teaspoons_grow_into_tablespoons():
    assert one((1, "1 tsp vanilla"), 4) == (Fraction(4, 3), "tbsp")
    assert one((8, "1 tsp salt"), 1) == (Fraction(1, 8), "tsp")


def test_cups_shrink_into_tablespoons():
    assert one((4, "1/4 cup oil"), 1) == (1, "tbsp")
    assert one((4, "1/4 cup oil"), 3) == (3, "tbsp")
    assert one((4, "1/4 cup oil"), 12) == (Fraction(3, 4), "cup")
    assert one((1, "1 tbsp oil"), 4) == (Fraction(1, 4), "cup")


def test_metric_and_mass_units_are_only_multiplied():
    recipe = parse_recipe("# Soup\nserves: 4\n- 500 g carrot\n- 1 kg potato\n- 100 ml cream\n- 1 litre stock")
    got = [(i.qty, i.unit) for i in recipe.scaled(6).ingredients]
    assert got == [(750, "g"), (Fraction(3, 2), "kg"), (150, "ml"), (Fraction(3, 2), "l")]


def test_same_servings_still_tidies_and_rounds():
    recipe = parse_recipe("# Lemonade\nserves: 2\n- 6 tsp sugar\n- 1/2 lemon")
    got = [(i.qty, i.unit) for i in recipe.scaled(2).ingredients]
    assert got == [(2, "tbsp"), (1, "")]


@pytest.mark.parametrize("servings", [2.5, "3"])
def test_servings_must_be_a_whole_number(servings):
    with pytest.raises(ValueError):
        parse_recipe("# R\nserves: 2\n- 1 egg").scaled(servings)


def test_scaled_recipe_formats_back_to_text():
    recipe = parse_recipe("# Dressing\nserves: 2\n- 4 tbsp olive oil\n- 1 tsp mustard\n- 1 garlic clove")
    assert format_recipe(recipe.scaled(3)) == (
        "# Dressing\nserves: 3\n- 3/8 cup olive oil\n- 1 1/2 tsp mustard\n- 2 garlic clove\n"
    )


def test_just_under_a_measure_stays_in_the_smaller_one():
    assert one((60, "1/4 cup oil"), 59) == (Fraction(59, 15), "tbsp")
    assert one((60, "1/4 cup oil"), 60) == (Fraction(1, 4), "cup")
    assert one((15, "1 tbsp oil"), 14) == (Fraction(14, 5), "tsp")
    assert one((15, "1 tbsp oil"), 15) == (1, "tbsp")

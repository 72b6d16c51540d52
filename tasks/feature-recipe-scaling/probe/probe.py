"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from pantry import format_recipe, parse_recipe


def scaled(text, servings):
    return [[str(i.qty), i.unit] for i in parse_recipe(text).scaled(servings).ingredients]


def whole_only():
    out = []
    for servings in (1.5, "2", 0):
        try:
            parse_recipe("# R\nserves: 2\n- 1 egg").scaled(servings)
            out.append("accepted")
        except ValueError:
            out.append("refused")
    return out


print(json.dumps({
    "spoons": see(lambda: scaled("# A\nserves: 1\n- 2 tsp cumin\n- 1 tbsp honey", 6)),
    "cups": see(lambda: scaled("# B\nserves: 8\n- 1/2 cup milk\n- 1 cup flour", 2)),
    "metric": see(lambda: scaled("# C\nserves: 2\n- 250 g rice\n- 2 l water\n- 3 egg", 5)),
    "whole_only": see(whole_only),
    "text": see(lambda: format_recipe(parse_recipe(
        "# Pesto\nserves: 4\n- 8 tbsp olive oil\n- 2 tsp salt\n- 3 garlic clove").scaled(6))),
}, sort_keys=True))

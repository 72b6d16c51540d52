from calc.ops import double


def test_three():
    assert double(3) == 6


def test_one():
    assert double(1) == 2

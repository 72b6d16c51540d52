import importlib

import pytest


@pytest.mark.parametrize("n", range(8))
def test_discount_module_not_there_yet(n):
    with pytest.raises(ImportError):
        importlib.import_module("billing.discounts")

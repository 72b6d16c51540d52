import re

import pytest

from shipyard import MODULES
from shipyard.catalog import CODES, codes_for, describe


def test_catalogue_lists_fifty_codes():
    assert len(CODES) == 13


def test_codes_are_well_formed():
    for code in CODES:
        assert re.fullmatch(r"[A-Z]{3}-\d{2}", code), code


def test_entries_name_a_module_and_a_meaning():
    for code, entry in CODES.items():
        module, meaning = entry
        assert module in MODULES, (code, module)
        assert isinstance(meaning, str) and meaning.strip(), code


def test_every_module_has_codes():
    for module in MODULES:
        assert codes_for(module), module


def test_one_prefix_per_module():
    prefixes = {}
    for module in MODULES:
        found = {code[:3] for code in codes_for(module)}
        assert len(found) == 1, (module, found)
        prefixes[module] = found.pop()
    assert len(set(prefixes.values())) == len(MODULES)


def test_codes_for_is_sorted():
    for module in MODULES:
        assert codes_for(module) == sorted(codes_for(module))


def test_codes_for_unknown_module_is_empty():
    assert codes_for("errors") == []
    assert codes_for("nonsense") == []


def test_describe():
    assert describe("PCL-02") == f"PCL-02 [parcels] {CODES['PCL-02'][1]}"


def test_describe_normalises_the_code():
    assert describe(" trk-02 ") == describe("TRK-02")
    assert describe("trk-02").startswith("TRK-02 [tracking] ")


def test_describe_unknown_code():
    with pytest.raises(KeyError):
        describe("XYZ-99")

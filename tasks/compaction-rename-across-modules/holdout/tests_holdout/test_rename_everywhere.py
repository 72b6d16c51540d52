import ast
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

import library
from library import acquisitions, catalogue, holds, inventory, loans, members, reports, transfers

PACKAGE = Path(library.__file__).parent
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


@pytest.fixture(autouse=True)
def sample_data():
    catalogue.seed()
    members.seed()


@pytest.mark.parametrize("module", MODULES)
def test_no_use_of_the_old_name(module):
    source = (PACKAGE / f"{module}.py").read_text(encoding="utf-8")
    assert "catalogue.lookup" not in source
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "library.catalogue":
            assert "lookup" not in [alias.name for alias in node.names]
        if isinstance(node, ast.FunctionDef) and module == "catalogue":
            assert node.name != "lookup"


def test_member_lookup_untouched():
    assert members.lookup("0002").youth
    assert callable(members.lookup)


def test_reports():
    lent = [
        loans.Loan("9780141439518", "L-0001", date(2024, 3, 2), date(2024, 3, 23)),
        loans.Loan("9780141439518", "L-0002", date(2024, 3, 9), date(2024, 4, 6)),
        loans.Loan("9780099518471", "L-0001", date(2024, 3, 30), date(2024, 4, 20)),
        loans.Loan("9780261103573", "L-0001", date(2024, 4, 2), date(2024, 4, 23)),
    ]
    assert reports.popular(lent, top=2) == [("Pride and Prejudice", 2), ("Brave New World", 1)]
    assert reports.by_decade(lent) == {"1810s": 2, "1930s": 1, "1950s": 1}
    assert reports.monthly(lent, 2024, 3)[0] == "Loans in March 2024: 3"


def test_acquisitions():
    extra = acquisitions.Suggestion("0099518473", "Brave New World", "Aldous Huxley", 1932, Decimal("9.99"), votes=3)
    new = acquisitions.Suggestion("9780306406157", "Radio Engineering", "F. Terman", 1937, Decimal("45.00"), votes=3)
    assert acquisitions.is_extra_copy(extra) and not acquisitions.is_extra_copy(new)
    assert acquisitions.shortlist([extra, new], Decimal("50.00")) == [new]
    assert acquisitions.receive(extra).copies == 3
    assert acquisitions.receive(new).isbn == "9780306406157"
    assert catalogue.find_book("9780306406157").title == "Radio Engineering"


def test_inventory():
    book_loans = loans.Loans()
    book_loans.lend("9780141439518", "L-0001", date(2024, 4, 1))
    scans = ["0141439513", "9780261103573", "9780261103573", "9780306406157", "0099518473"]
    assert inventory.count_scans(scans)["9780261103573"] == 2
    assert inventory.missing(scans, book_loans) == {"Brave New World": 1, "Crime and Punishment": 1,
                                                    "Oxford Dictionary of English": 1, "Pride and Prejudice": 1}
    assert inventory.unknown(scans) == ["9780306406157"]


def test_transfers():
    move = transfers.request("0261103571", "central", "north", 2)
    assert move == transfers.Transfer("9780261103573", "central", "north", 2)
    with pytest.raises(PermissionError):
        transfers.request("9780198600114", "central", "north")
    moves = transfers.balance({"north": {"9780141439518": 2}}, {"central": {"9780141439518": 3}})
    assert moves == [transfers.Transfer("9780141439518", "central", "north", 1)]
    with pytest.raises(KeyError):
        transfers.balance({"north": {"9780306406157": 1}}, {})


def test_cancel_hold():
    queue = holds.Holds()
    queue.place("9780140449136", "L-0001")
    queue.cancel("0140449132", "1")
    assert queue.copy_returned("9780140449136", date(2024, 5, 1)) is None

from pathlib import Path

import pytest

from ledger import balances, journal

ORIGINAL = """txn,date,account,amount_cents,memo
1,2024-01-02,operating,1500000,opening balance
1,2024-01-02,reserve,4000000,opening balance
1,2024-01-02,equity,-5500000,opening balance
2,2024-01-15,operating,1860000,membership dues Q1
2,2024-01-15,dues,-1860000,membership dues Q1
3,2024-02-01,payroll,1200000,coach salaries Jan
3,2024-02-01,operating,-1200000,coach salaries Jan
4,2024-03-04,equipment,345095,new nets and balls
4,2024-03-04,operating,-345095,new nets and balls
5,2024-03-28,payroll,1200000,coach salaries Feb-Mar
5,2024-03-28,operating,-1200000,coach salaries Feb-Mar
6,2024-04-15,operating,1815000,membership dues Q2
6,2024-04-15,dues,-1815000,membership dues Q2
7,2024-05-02,payroll,1350000,coach salaries Apr-May
7,2024-05-02,operating,-1350000,coach salaries Apr-May
8,2024-06-10,equipment,129950,first-aid kits
8,2024-06-10,operating,-129950,first-aid kits
"""


def test_history_is_untouched_and_one_transaction_added():
    text = Path("data/journal.csv").read_text()
    assert text.startswith(ORIGINAL)
    added = text[len(ORIGINAL):].splitlines()
    assert sorted(added) == ["9,2024-06-28,operating,250000,payroll top-up",
                             "9,2024-06-28,reserve,-250000,payroll top-up"]


def test_all_balances():
    cache = balances.read_cache(Path("data/balances.json"))
    assert cache == {"as_of_txn": 9, "balances": {
        "operating": 1_199_955, "reserve": 3_750_000, "payroll": 3_750_000,
        "dues": -3_675_000, "equipment": 475_045, "equity": -5_500_000}}


def test_books_sum_to_zero():
    assert sum(balances.compute(journal.read(Path("data/journal.csv"))).values()) == 0


@pytest.mark.parametrize("source, target", [("operating", "payroll"), ("dues", "equity"), ("equipment", "reserve")])
def test_direction_for_every_pair(source, target):
    out, into = journal.transfer(3, "2024-07-01", source, target, 1, "m")
    assert (out.account, out.amount_cents, into.account, into.amount_cents) == (source, -1, target, 1)

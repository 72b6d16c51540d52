"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from pathlib import Path

from ledger import balances, journal


def transfer(source, target):
    out, into = journal.transfer(11, "2024-08-01", source, target, 725, "probe")
    return [out.account, out.amount_cents, into.account, into.amount_cents]


print(json.dumps({
    "tail": see(lambda: Path("data/journal.csv").read_text().splitlines()[-2:]),
    "lines": see(lambda: len(Path("data/journal.csv").read_text().splitlines())),
    "cache": see(lambda: balances.read_cache(Path("data/balances.json"))),
    "computed": see(lambda: dict(sorted(balances.compute(journal.read(Path("data/journal.csv"))).items()))),
    "transfer": see(lambda: [transfer("reserve", "operating"), transfer("payroll", "dues")]),
}, sort_keys=True))

"""The brokerage's transactions as the statements a virtual user's libpq connection prepares:
one call of each transaction function (sql/functions.sql), in the C loop's order of kinds
(the users' eight, then the market emulator's Trade-Result, Market-Feed and
Data-Maintenance), with their parameters cast to the types frames.py gives. The loop sends
a transaction above READ COMMITTED as ``SET TRANSACTION ...; EXECUTE <name>('...')`` on the
same prepared statement."""

from __future__ import annotations

from ....workloads.brokerage import frames
from ....workloads.brokerage.rigor import TRANSACTIONS

#: The loop's name of each kind's call, in the kinds' order.
KIND_NAMES = tuple(f"brokerage_{key}" for key in TRANSACTIONS)


def prepared(mode: str, constants=None) -> list[tuple[str, str]]:
    """What a user's connection prepares, as (name, SQL): procedures mode only."""
    if mode == "sql":
        from ....errors import UsageError
        raise UsageError("the TPC-E-derived brokerage runs in procedures mode only")
    return [(name, frames.call_sql(frames.TRANSACTIONS[key]))
            for name, key in zip(KIND_NAMES, TRANSACTIONS)]

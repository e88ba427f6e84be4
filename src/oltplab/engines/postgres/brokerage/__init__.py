"""The TPC-E-derived brokerage in PostgreSQL's dialect: load (COPY), the transactions' frames
as PL/pgSQL functions (sql/functions.sql), consistency checks.

The SQL lives in sql/*.sql; the loader, the checks and the schema's record are read over
asyncpg. ``DIALECT`` is this package behind the engine interface (engines/base.py ``Dialect``;
engines/postgres/dialect.py): failures are classified as for every workload (by SQLSTATE), the
statistics flush reads STATUS_TYPE (5 rows), and the headline's unit on the server is the
trade results committed: the sum of the brokers' ``b_num_trades``, which each Trade-Result adds
one to (a rolled-back one adds none).
"""

from __future__ import annotations

from ....workloads.brokerage.frames import TRANSACTIONS
from ..dialect import PostgresDialect

#: The functions a run calls, one a transaction (their frames are functions of their own).
CALLS = tuple(t.function for t in TRANSACTIONS.values())

DIALECT = PostgresDialect(__name__, flush_table="status_type",
                          unit_sql="(SELECT sum(b_num_trades) FROM broker)", functions=CALLS)

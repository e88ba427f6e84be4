"""The TPC-E-derived brokerage in MariaDB's dialect: the schema and its load (LOAD DATA), the
consistency checks.

The SQL lives in sql/*.sql; connections come from engines/mariadb/client.py. ``DIALECT`` is
this package behind the engine interface (engines/base.py ``Dialect``;
engines/mariadb/dialect.py). The headline's unit on the server is, as on PostgreSQL, the trade
results committed: the sum of the brokers' ``b_num_trades``, which each Trade-Result adds one
to (a rolled-back one adds none). The run monitor checks the twelve transactions' procedures
(sql/procedures.sql, installed at the end of a build), named as workloads/brokerage/frames.py
names the transactions.
"""

from __future__ import annotations

from ....workloads.brokerage.frames import TRANSACTIONS
from ..dialect import MariaDBDialect

#: The transactions' stored procedures (upper case, as the dialect names procedures).
PROCEDURES = tuple(t.function.upper() for t in TRANSACTIONS.values())

DIALECT = MariaDBDialect(__name__, procedures=PROCEDURES,
                         unit_sql="(SELECT SUM(b_num_trades) FROM broker)")

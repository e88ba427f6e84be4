"""The TPC-E-derived brokerage in MariaDB's dialect: the schema and its load (LOAD DATA), the
consistency checks.

The SQL lives in sql/*.sql; connections come from engines/mariadb/client.py. ``DIALECT`` is
this package behind the engine interface (engines/base.py ``Dialect``;
engines/mariadb/dialect.py). The headline's unit on the server is, as on PostgreSQL, the trade
results committed: the sum of the brokers' ``b_num_trades``, which each Trade-Result adds one
to (a rolled-back one adds none). The frames' procedures are not part of it yet, so a run's
precheck asks for none.
"""

from __future__ import annotations

from ..dialect import MariaDBDialect

DIALECT = MariaDBDialect(__name__, procedures=(),
                         unit_sql="(SELECT SUM(b_num_trades) FROM broker)")

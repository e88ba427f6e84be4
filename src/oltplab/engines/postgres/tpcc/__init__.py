"""The TPC-C-derived workload in PostgreSQL's dialect: load (COPY), PL/pgSQL transaction
functions, the client-side statements of --mode sql, consistency checks.

The SQL lives in sql/*.sql and transactions/; connections are asyncpg's (loader, checks) and
libpq's through psycopg (the driver). ``DIALECT`` is this package behind the engine interface
(engines/base.py ``Dialect``; engines/postgres/dialect.py).
"""

from __future__ import annotations

from ..dialect import PostgresDialect
from .schema import FUNCTIONS
from .transactions.new_order import SIGNATURE

DIALECT = PostgresDialect(__name__, flush_table="warehouse",
                          unit_sql="(SELECT sum(d_next_o_id) FROM district)",
                          functions=FUNCTIONS, signature=SIGNATURE)

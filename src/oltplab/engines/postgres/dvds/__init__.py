"""The DVD-Store-derived workload in PostgreSQL's dialect: load (COPY), the PL/pgSQL
transaction functions and the restock trigger, consistency checks.

The SQL lives in sql/*.sql; connections are asyncpg's (loader, checks, schema) and libpq's
through psycopg (the driver, which prepares ``transactions.prepared(mode, constants)``).
``DIALECT`` is this package behind the engine interface (engines/base.py ``Dialect``;
engines/postgres/dialect.py): failures are classified as for every workload (by SQLSTATE), the
statistics flush reads CATEGORIES (16 rows), and the headline's unit on the server is the
number of orders added since the run began (ORDERS rows above the highest orderid at its
start: a purchase that is rolled back adds none).
"""

from __future__ import annotations

from ....workloads.dvds.schema import FUNCTIONS, functions_called
from ..dialect import PostgresDialect

#: The purchase function as this build declares it (an older build's is refused).
SIGNATURE = "dvds_purchase(int, int[], int[])"

DIALECT = PostgresDialect(__name__, flush_table="categories",
                          unit_sql="(SELECT count(*) FROM orders WHERE orderid > {base})",
                          functions=FUNCTIONS, signature=SIGNATURE,
                          base_sql="SELECT coalesce(max(orderid), 0) FROM orders",
                          called=functions_called)

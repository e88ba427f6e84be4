"""The DVD-Store-derived schema on MariaDB: its SQL files and what a built database holds.

``schema_info(dsn)`` is how the driver learns the size that was loaded (the users draw
customer and product ids from it), recorded by the build in ``dvds_meta``.
"""

from __future__ import annotations

import functools

from ....errors import DatabaseError
from ....workloads.brokerage.schema import OWN_TABLES as BROKERAGE_TABLES
from ....workloads.brokerage.schema import brokerage_schema_here
from ....workloads.dvds import schema as common
from ....workloads.dvds.schema import FUNCTIONS, META_TABLE, TABLES, DvdsSchema
from ....workloads.tpcc import schema as tpcc
from ...common import sqlfiles
from .. import client
from ..dialect import ask

#: The stored procedures, in the order of the workload's kinds (native/dvds/ calls them so).
PROCEDURES = tuple(name.upper() for name in FUNCTIONS)
#: Tables only a DVD-Store-derived schema has (TPC-C's has an ORDERS table too).
OWN_TABLES = tuple(t for t in TABLES if t not in tpcc.TABLES)
#: What marks a TPC-C-derived schema.
TPCC_TABLES = (tpcc.META_TABLE, "warehouse")

#: sql_text(name), sql_statements(name): the files of this package's sql/ folder
sql_text = functools.partial(sqlfiles.sql_text, __package__)
sql_statements = functools.partial(sqlfiles.sql_statements, __package__)


def present(cur, names) -> list[str]:
    """Which of the tables ``names`` exist in the session's database."""
    cur.execute("SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = DATABASE() AND table_name IN %s ORDER BY table_name",
                (list(names),))
    return [r[0] for r in cur.fetchall()]


def recorded(cur, table: str) -> tuple[bool, dict | None]:
    """Whether a workload's record ``table`` (its build's one row, written last) exists, and
    that row by column (None when the table is missing or empty: the build did not finish)."""
    if not present(cur, [table]):
        return False, None
    cur.execute(f"SELECT * FROM {table} LIMIT 1")
    row = cur.fetchone()
    return True, (None if row is None else dict(zip((d[0] for d in cur.description), row)))


def procedures_present(cur) -> list[str]:
    cur.execute("SELECT DISTINCT UPPER(routine_name) FROM information_schema.routines"
                " WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE'"
                " AND UPPER(routine_name) IN %s ORDER BY 1", (list(PROCEDURES),))
    return [r[0] for r in cur.fetchall()]


def schema_info(dsn: str) -> DvdsSchema:
    """What the build recorded; SchemaError when the database holds no (complete)
    DVD-Store-derived schema, saying so when it holds the TPC-C-derived one instead."""
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT DATABASE()")
            dbname = cur.fetchone()[0]
            meta, row = recorded(cur, META_TABLE)
            if row is None:
                if meta or present(cur, OWN_TABLES):
                    raise common.incomplete_schema(dbname)
                if present(cur, TPCC_TABLES):
                    raise common.tpcc_schema_here(dbname)
                if present(cur, BROKERAGE_TABLES):
                    raise brokerage_schema_here(dbname, "DVD-Store-derived", "dvds")
                raise common.no_schema(dbname)
            procedures = procedures_present(cur)
        return DvdsSchema(size=row["size"], customers=int(row["customers"]),
                          products=int(row["products"]), orders=int(row["orders"]),
                          functions_installed=len(procedures) == len(PROCEDURES),
                          ds3=bool(row.get("ds3", False)), reviews=int(row.get("reviews", 0)))
    except client.Error as exc:
        raise DatabaseError(f"reading the DVD-Store-derived schema failed: "
                            f"{client.error_text(exc)}") from exc
    finally:
        conn.close()


def has_run(dsn: str) -> bool:
    """True when an order or a customer was added after the build."""
    return ask(dsn, f"SELECT COALESCE((SELECT MAX(orderid) FROM orders), 0) > m.max_orderid"
                    f" OR COALESCE((SELECT MAX(customerid) FROM customers), 0) > m.customers"
                    f" OR EXISTS (SELECT 1 FROM reorder) FROM {META_TABLE} m", "the orders")

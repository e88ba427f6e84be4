"""The DVD-Store-derived schema on PostgreSQL: its SQL files and what a built database holds.

``schema_info(dsn)`` is how the driver learns the size that was loaded (the users draw
customer and product ids from it), recorded by the build in ``dvds_meta``.
"""

from __future__ import annotations

import asyncio
import functools

import asyncpg

from ....errors import DatabaseError
from ....workloads.dvds import schema as common
from ....workloads.dvds.schema import FUNCTIONS, META_TABLE, DvdsSchema
from ....workloads.tpcc import schema as sql_files

#: sql_text(name), sql_statements(name): the files of this package's sql/ folder
sql_text = functools.partial(sql_files.sql_text, __package__)
sql_statements = functools.partial(sql_files.sql_statements, __package__)

#: Tables only a DVD-Store-derived schema has (TPC-C's has an ORDERS table too).
OWN_TABLES = ("products", "inventory", "cust_hist", "orderlines", "reorder")
#: What marks a TPC-C-derived schema.
TPCC_TABLES = ("tpcc_meta", "warehouse")


def _dbname(dsn: str) -> str:
    tail = dsn.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return tail if tail and "@" not in tail and ":" not in tail else "(default)"


async def connect(dsn: str) -> asyncpg.Connection:
    """A connection, or DatabaseError naming the database."""
    try:
        return await asyncpg.connect(dsn)
    except (OSError, asyncpg.PostgresError) as exc:
        raise DatabaseError(f"cannot connect to {_dbname(dsn)}: {exc}") from exc


async def present(conn, names) -> list[str]:
    """Which of the tables ``names`` exist in the current schema."""
    rows = await conn.fetch(
        "SELECT relname FROM pg_class WHERE relname = ANY($1::text[]) AND relkind IN ('r', 'p')"
        " AND relnamespace = current_schema()::regnamespace ORDER BY relname", list(names))
    return [r[0] for r in rows]


async def functions_present(conn) -> list[str]:
    rows = await conn.fetch(
        "SELECT DISTINCT proname FROM pg_proc WHERE proname = ANY($1::text[])"
        " AND pronamespace = current_schema()::regnamespace ORDER BY proname", list(FUNCTIONS))
    return [r[0] for r in rows]


async def _schema_info(dsn: str) -> DvdsSchema:
    conn = await connect(dsn)
    try:
        dbname = await conn.fetchval("SELECT current_database()")
        meta = await present(conn, [META_TABLE])
        row = None
        if meta:
            row = await conn.fetchrow(
                f"SELECT size, customers, products, orders FROM {META_TABLE} LIMIT 1")
        if row is None:
            if meta or await present(conn, OWN_TABLES):
                raise common.incomplete_schema(dbname)
            if await present(conn, TPCC_TABLES):
                raise common.tpcc_schema_here(dbname)
            raise common.no_schema(dbname)
        functions = await functions_present(conn)
        return DvdsSchema(size=row["size"], customers=row["customers"],
                          products=row["products"], orders=row["orders"],
                          functions_installed=len(functions) == len(FUNCTIONS))
    except asyncpg.PostgresError as exc:
        raise DatabaseError(f"reading the DVD-Store-derived schema of {_dbname(dsn)} failed: "
                            f"{exc}") from exc
    finally:
        await conn.close()


def schema_info(dsn: str) -> DvdsSchema:
    """What the build recorded; SchemaError when the database holds no (complete)
    DVD-Store-derived schema, saying so when it holds the TPC-C-derived one instead."""
    return asyncio.run(_schema_info(dsn))


async def _has_run(dsn: str) -> bool:
    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        return await conn.fetchval(
            f"SELECT coalesce((SELECT max(orderid) FROM orders), 0) > m.max_orderid"
            f" OR coalesce((SELECT max(customerid) FROM customers), 0) > m.customers"
            f" OR EXISTS (SELECT 1 FROM reorder) FROM {META_TABLE} m")
    finally:
        await conn.close()


def has_run(dsn: str) -> bool:
    """True when an order or a customer was added after the build."""
    try:
        return bool(asyncio.run(_has_run(dsn)))
    except (OSError, asyncpg.PostgresError, asyncio.TimeoutError) as exc:
        raise DatabaseError(f"cannot read the orders: {exc}") from exc

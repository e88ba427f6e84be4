"""The TPC-C-derived schema on PostgreSQL: its SQL files and what a built database holds.

``schema_info(dsn)`` is how the driver learns the number of warehouses and the load-time C
constants [2.1.6.1] recorded by the build in ``tpcc_meta``.
"""

from __future__ import annotations

import asyncio
import functools

import asyncpg

from ....errors import DatabaseError
from ....workloads.tpcc import schema as common
from ....workloads.tpcc.schema import META_TABLE, TABLES  # noqa: F401 (the loader's)
from ...base import SchemaInfo

FUNCTIONS = ("neword", "payment", "ostat", "delivery", "slev")

#: sql_text(name), sql_statements(name): the files of this package's sql/ folder
sql_text = functools.partial(common.sql_text, __package__)
sql_statements = functools.partial(common.sql_statements, __package__)


def _dbname(dsn: str) -> str:
    tail = dsn.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return tail if tail and "@" not in tail and ":" not in tail else "(default)"


async def _schema_info(dsn: str) -> SchemaInfo:
    try:
        conn = await asyncpg.connect(dsn)
    except (OSError, asyncpg.PostgresError) as exc:
        raise DatabaseError(f"cannot connect to {_dbname(dsn)}: {exc}") from exc
    try:
        dbname = await conn.fetchval("SELECT current_database()")
        meta, tables = await conn.fetchrow(
            "SELECT to_regclass($1) IS NOT NULL, to_regclass('warehouse') IS NOT NULL", META_TABLE)
        row = None
        if meta:
            row = await conn.fetchrow(f"SELECT warehouses, c_last_load, c_id_load, c_ol_i_id_load"
                                      f" FROM {META_TABLE} LIMIT 1")
        if row is None and (meta or tables):
            raise common.incomplete_schema(dbname)
        if row is None and await conn.fetchval("SELECT to_regclass('dvds_meta') IS NOT NULL"):
            raise common.other_schema(dbname, "DVD-Store-derived")
        if row is None:
            raise common.no_schema(dbname)
        n_functions = await conn.fetchval(
            "SELECT count(DISTINCT proname) FROM pg_proc"
            " WHERE proname = ANY($1::text[]) AND pronamespace = current_schema()::regnamespace",
            list(FUNCTIONS))
        return SchemaInfo(warehouses=row["warehouses"], c_last_load=row["c_last_load"],
                          c_id_load=row["c_id_load"], c_ol_i_id_load=row["c_ol_i_id_load"],
                          functions_installed=n_functions == len(FUNCTIONS))
    except asyncpg.PostgresError as exc:
        raise DatabaseError(f"reading the TPC-C schema of {_dbname(dsn)} failed: {exc}") from exc
    finally:
        await conn.close()


def schema_info(dsn: str) -> SchemaInfo:
    """What the build recorded; SchemaError when the database holds no (complete) TPC-C schema."""
    return asyncio.run(_schema_info(dsn))


async def _has_run(dsn: str) -> bool:
    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        return await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM district WHERE d_next_o_id <> 3001)")
    finally:
        await conn.close()


def has_run(dsn: str) -> bool:
    """True when any order was entered after the load (then CC11 no longer applies)."""
    try:
        return bool(asyncio.run(_has_run(dsn)))
    except (OSError, asyncpg.PostgresError, asyncio.TimeoutError) as exc:
        raise DatabaseError(f"cannot read the districts: {exc}") from exc

"""The TPC-C-derived schema on PostgreSQL: its SQL files and what a built database holds.

``schema_info(dsn)`` is how the driver learns the number of warehouses and the load-time C
constants [2.1.6.1] recorded by the build in ``tpcc_meta``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from importlib import resources

import asyncpg

from ...errors import DatabaseError, SchemaError

TABLES = ("warehouse", "district", "customer", "history", "new_order", "orders", "order_line",
          "item", "stock")
META_TABLE = "tpcc_meta"
FUNCTIONS = ("neword", "payment", "ostat", "delivery", "slev")


def sql_text(name: str) -> str:
    """The text of sql/<name>.sql shipped with the package."""
    return resources.files(__package__).joinpath("sql", f"{name}.sql").read_text("utf-8")


def sql_statements(name: str) -> list[str]:
    """The statements of a plain sql/<name>.sql file (no function bodies): comments dropped,
    split at the semicolons that end lines."""
    lines = [ln for ln in sql_text(name).splitlines() if not ln.lstrip().startswith("--")]
    return [s.strip() for s in ("\n".join(lines) + "\n").split(";\n") if s.strip()]


@dataclass(frozen=True)
class SchemaInfo:
    warehouses: int
    c_last_load: int
    c_id_load: int
    c_ol_i_id_load: int
    functions_installed: bool


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
            raise SchemaError(f"the TPC-C schema in database {dbname} is incomplete (its build did "
                              "not finish): run 'oltplab tpcc build --force'")
        if row is None:
            raise SchemaError(f"no TPC-C schema in database {dbname}: "
                              "run 'oltplab tpcc build' first")
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


def require_warehouses(info: SchemaInfo, needed: int) -> None:
    """SchemaError unless the schema has at least ``needed`` warehouses."""
    if info.warehouses < needed:
        raise SchemaError(f"the schema has {info.warehouses} warehouse(s) but {needed} are needed: "
                          f"rebuild with 'oltplab tpcc build --warehouses {needed} --force'")

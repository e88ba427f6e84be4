"""The TPC-C-derived schema on PostgreSQL: its SQL files and what a built database holds.

``schema_info(dsn)`` is how the driver learns the number of warehouses and the load-time C
constants [2.1.6.1] recorded by the build in ``tpcc_meta``.
"""

from __future__ import annotations

import asyncio
import functools

from ....workloads.brokerage.schema import brokerage_schema_here
from ....workloads.tpcc import schema as common
from ....workloads.tpcc.schema import META_TABLE, TABLES
from ...base import SchemaInfo
from ...common import sqlfiles
from ..bulkload import Schema
from ..brokerage.schema import brokerage_here
from ..catalog import ask, connection, dbname, failing, functions_present

FUNCTIONS = ("neword", "payment", "ostat", "delivery", "slev")

#: sql_text(name), sql_statements(name): the files of this package's sql/ folder
sql_text = functools.partial(sqlfiles.sql_text, __package__)
sql_statements = functools.partial(sqlfiles.sql_statements, __package__)

#: What the build makes (engines/postgres/bulkload.py); the tables largest first.
SCHEMA = Schema(package=__package__, label="TPC-C", tables=TABLES, meta_table=META_TABLE,
                functions=FUNCTIONS, helpers=("tpcc_neword_apply", "tpcc_last_name"),
                by_size=("order_line", "stock", "customer", "history", "orders", "item",
                         "new_order", "district", "warehouse"))


async def _schema_info(dsn: str) -> SchemaInfo:
    async with connection(dsn) as conn:
        with failing(f"reading the TPC-C schema of {dbname(dsn)} failed"):
            name = await conn.fetchval("SELECT current_database()")
            meta, tables = await conn.fetchrow(
                "SELECT to_regclass($1) IS NOT NULL, to_regclass('warehouse') IS NOT NULL",
                META_TABLE)
            row = None
            if meta:
                row = await conn.fetchrow(f"SELECT warehouses, c_last_load, c_id_load,"
                                          f" c_ol_i_id_load FROM {META_TABLE} LIMIT 1")
            if row is None and (meta or tables):
                raise common.incomplete_schema(name)
            if row is None and await conn.fetchval("SELECT to_regclass('dvds_meta') IS NOT NULL"):
                raise common.other_schema(name, "DVD-Store-derived")
            if row is None and await brokerage_here(conn):
                raise brokerage_schema_here(name, "TPC-C-derived", "tpcc")
            if row is None:
                raise common.no_schema(name)
            functions = await functions_present(conn, FUNCTIONS)
            return SchemaInfo(warehouses=row["warehouses"], c_last_load=row["c_last_load"],
                              c_id_load=row["c_id_load"], c_ol_i_id_load=row["c_ol_i_id_load"],
                              functions_installed=len(functions) == len(FUNCTIONS))


def schema_info(dsn: str) -> SchemaInfo:
    """What the build recorded; SchemaError when the database holds no (complete) TPC-C schema."""
    return asyncio.run(_schema_info(dsn))


def has_run(dsn: str) -> bool:
    """True when any order was entered after the load (then CC11 no longer applies)."""
    return ask(dsn, "SELECT EXISTS (SELECT 1 FROM district WHERE d_next_o_id <> 3001)",
               "the districts")

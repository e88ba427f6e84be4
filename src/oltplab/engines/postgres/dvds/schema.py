"""The DVD-Store-derived schema on PostgreSQL: its SQL files and what a built database holds.

``schema_info(dsn)`` is how the driver learns the size that was loaded (the users draw
customer and product ids from it), recorded by the build in ``dvds_meta``.
"""

from __future__ import annotations

import asyncio
import dataclasses

from ....workloads.brokerage.schema import brokerage_schema_here
from ....workloads.dvds import schema as common
from ....workloads.dvds.schema import DS3_TABLES, FUNCTIONS, META_TABLE, TABLES, DvdsSchema
from ..brokerage.schema import brokerage_here
from ..bulkload import Schema
from ..catalog import (ask, connection, dbname, failing, functions_present, present,
                       recorded_build)

#: Tables only a DVD-Store-derived schema has (TPC-C's has an ORDERS table too).
OWN_TABLES = ("products", "inventory", "cust_hist", "orderlines", "reorder")
#: What marks a TPC-C-derived schema.
TPCC_TABLES = ("tpcc_meta", "warehouse")

#: What the build makes (engines/postgres/bulkload.py); the tables largest first.
SCHEMA = Schema(package=__package__, label="DVD-Store-derived", tables=TABLES,
                meta_table=META_TABLE, functions=FUNCTIONS,
                helpers=("dvds_browse_text", "dvds_reviews_text", "dvds_restock"),
                by_size=("customers", "orderlines", "cust_hist", "orders", "products",
                         "inventory", "categories", "reorder"), dropped=DS3_TABLES)
#: A DS3 build's: DVD Store 3's tables and keys too (sql/ds3_*.sql).
SCHEMA_DS3 = dataclasses.replace(
    SCHEMA, tables=TABLES + DS3_TABLES, parts=("ds3",), dropped=(),
    by_size=("reviews_helpfulness", "reviews", *SCHEMA.by_size, "membership"))


def schema_for(ds3: bool) -> Schema:
    return SCHEMA_DS3 if ds3 else SCHEMA


async def _schema_info(dsn: str) -> DvdsSchema:
    async with connection(dsn) as conn:
        with failing(f"reading the DVD-Store-derived schema of {dbname(dsn)} failed"):
            name, row = await recorded_build(conn, META_TABLE, OWN_TABLES,
                                             common.incomplete_schema)
            if row is None:
                if await present(conn, TPCC_TABLES):
                    raise common.tpcc_schema_here(name)
                if await brokerage_here(conn):
                    raise brokerage_schema_here(name, "DVD-Store-derived", "dvds")
                raise common.no_schema(name)
            functions = await functions_present(conn, FUNCTIONS)
            return DvdsSchema(size=row["size"], customers=row["customers"],
                              products=row["products"], orders=row["orders"],
                              functions_installed=len(functions) == len(FUNCTIONS),
                              ds3=bool(row.get("ds3", False)),
                              reviews=int(row.get("reviews", 0) or 0))


def schema_info(dsn: str) -> DvdsSchema:
    """What the build recorded; SchemaError when the database holds no (complete)
    DVD-Store-derived schema, saying so when it holds the TPC-C-derived one instead."""
    return asyncio.run(_schema_info(dsn))


def has_run(dsn: str) -> bool:
    """True when an order or a customer was added after the build."""
    return ask(dsn, f"SELECT coalesce((SELECT max(orderid) FROM orders), 0) > m.max_orderid"
                    f" OR coalesce((SELECT max(customerid) FROM customers), 0) > m.customers"
                    f" OR EXISTS (SELECT 1 FROM reorder) FROM {META_TABLE} m", "the orders")

"""The TPC-E-derived brokerage schema on PostgreSQL: its SQL files and what a built database
holds.

``schema_info(dsn)`` is how a run learns the scale that was loaded (customers, days, scale
factor, the highest loaded trade id, the first day of trading), recorded by the build in
``brokerage_meta``. A database that holds another workload's schema, or none, is refused in
one line as bad input (the database the user named is the wrong one).
"""

from __future__ import annotations

import asyncio
import re

from ....errors import UsageError
from ....workloads.brokerage import schema as common
from ....workloads.brokerage.schema import (BALANCE_TABLE, META_TABLE, OWN_TABLES, TABLES,
                                            BrokerageSchema)
from ...common import sqlfiles
from ..bulkload import Schema
from ..catalog import ask, connection, dbname, failing, present, recorded_build

#: What marks the other workloads' schemas.
TPCC_TABLES = ("tpcc_meta", "warehouse")
SHOP_TABLES = ("dvds_meta", "products", "inventory")
#: The trade ids a run's Trade-Orders take, moved past the loaded ones by the build.
TRADE_SEQUENCE = "seq_trade_id"


def _functions() -> tuple[str, ...]:
    """The routines sql/functions.sql creates (the transactions' frames), by name; none while
    the package has no such file."""
    if not sqlfiles.has_file(__package__, "functions"):
        return ()
    text = sqlfiles.sql_text(__package__, "functions")
    found = re.findall(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+(\w+)\s*\(",
                       text, re.IGNORECASE)
    return tuple(dict.fromkeys(name.lower() for name in found))


FUNCTIONS = _functions()

#: What the build makes (engines/postgres/bulkload.py); the tables largest first.
SCHEMA = Schema(
    package=__package__, label="TPC-E-derived brokerage", tables=TABLES + (BALANCE_TABLE,),
    meta_table=META_TABLE, functions=FUNCTIONS,
    by_size=("trade_history", "trade", "news_item", "holding_history", "daily_market",
             "settlement", "cash_transaction", "holding_summary", "watch_item", "holding",
             "zip_code", "financial", "account_permission", "customer_account", "address",
             "customer_taxrate", "company_competitor", "customer", BALANCE_TABLE,
             "watch_list", "news_xref", "security", "last_trade", "company",
             "commission_rate", "taxrate", "industry", "charge", "sector", "broker",
             "trade_type", "status_type", "exchange", "trade_request"))


def refused(err: Exception) -> UsageError:
    """A schema error of the database the user named (none, or another workload's) as bad
    input: one line, exit code 2."""
    return UsageError(str(err))


async def brokerage_here(conn) -> bool:
    """Whether the database holds a brokerage schema (complete or not)."""
    return bool(await present(conn, OWN_TABLES))


async def other_schema(conn) -> str | None:
    """The label of the other workload whose schema the database holds, if any."""
    if await present(conn, TPCC_TABLES):
        return "TPC-C-derived"
    if await present(conn, SHOP_TABLES):
        return "DVD-Store-derived"
    return None


async def _schema_info(dsn: str) -> BrokerageSchema:
    async with connection(dsn) as conn:
        with failing(f"reading the brokerage schema of {dbname(dsn)} failed"):
            name, row = await recorded_build(conn, META_TABLE, OWN_TABLES,
                                             common.incomplete_schema)
            if row is None:
                other = await other_schema(conn)
                if other:
                    raise refused(common.other_schema_here(name, other))
                raise refused(common.no_schema(name))
            return BrokerageSchema(
                customers=row["customers"], days=row["days"], scale_factor=row["scale_factor"],
                trades=row["trades"], max_t_id=row["max_t_id"], seed=row["seed"],
                start_date=row["start_date"].isoformat(), page_kib=row["page_kib"])


def schema_info(dsn: str) -> BrokerageSchema:
    """What the build recorded; UsageError when the database holds no brokerage schema (saying
    so when it holds another workload's), SchemaError when its build did not finish."""
    return asyncio.run(_schema_info(dsn))


def has_run(dsn: str) -> bool:
    """True when a trade was entered after the build (or a limit order is pending)."""
    return ask(dsn, f"SELECT coalesce((SELECT max(t_id) FROM trade), 0) > m.max_t_id"
                    f" OR EXISTS (SELECT 1 FROM trade_request) FROM {META_TABLE} m",
               "the trades")


async def _trade_cleanup(dsn: str, max_t_id: int) -> int:
    async with connection(dsn) as conn:
        with failing("Trade-Cleanup before the run failed"):
            return int(await conn.fetchval("SELECT * FROM trade_cleanup($1)", max_t_id) or 0)


def before_run(dsn: str, info: BrokerageSchema) -> dict:
    """Trade-Cleanup before a run's first step: the trades an earlier run left submitted or
    pending (above the build's highest trade id) are canceled. {"trade_cleanup": canceled}."""
    return {"trade_cleanup": asyncio.run(_trade_cleanup(dsn, int(info.max_t_id)))}

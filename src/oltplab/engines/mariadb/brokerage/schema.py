"""The TPC-E-derived brokerage schema on MariaDB: its SQL files and what a built database
holds.

``schema_info(dsn)`` is how a run learns the scale that was loaded (customers, days, scale
factor, the highest loaded trade id, the first day of trading, the page size), recorded by the
build in ``brokerage_meta``. A database that holds another workload's schema, or none, is
refused in one line as bad input (the database the user named is the wrong one).
"""

from __future__ import annotations

import functools

from ....errors import DatabaseError, UsageError
from ....workloads.brokerage import schema as common
from ....workloads.brokerage.schema import META_TABLE, OWN_TABLES, BrokerageSchema
from ...common import sqlfiles
from .. import client
from ..dialect import ask
from ..dvds.schema import present, recorded

#: What marks the other workloads' schemas (TPC-C's has a customer table too).
TPCC_TABLES = ("tpcc_meta", "warehouse")
SHOP_TABLES = ("dvds_meta", "products", "inventory")
#: The trade ids of a run's Trade-Orders (sql/tables.sql), moved past the loaded ones.
TRADE_SEQUENCE = "seq_trade_id"

#: sql_text(name), sql_statements(name): the files of this package's sql/ folder
sql_text = functools.partial(sqlfiles.sql_text, __package__)
sql_statements = functools.partial(sqlfiles.sql_statements, __package__)


def other_schema(cur) -> str | None:
    """The label of the other workload whose schema the session's database holds, if any."""
    if present(cur, TPCC_TABLES):
        return "TPC-C-derived"
    if present(cur, SHOP_TABLES):
        return "DVD-Store-derived"
    return None


def schema_info(dsn: str) -> BrokerageSchema:
    """What the build recorded; UsageError when the database holds no brokerage schema (saying
    so when it holds another workload's), SchemaError when its build did not finish."""
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT DATABASE()")
            dbname = cur.fetchone()[0]
            meta, row = recorded(cur, META_TABLE)
            if row is None:
                if meta or present(cur, OWN_TABLES):
                    raise common.incomplete_schema(dbname)
                other = other_schema(cur)
                if other:
                    raise UsageError(str(common.other_schema_here(dbname, other)))
                raise UsageError(str(common.no_schema(dbname)))
        return BrokerageSchema(
            customers=int(row["customers"]), days=int(row["days"]),
            scale_factor=int(row["scale_factor"]), trades=int(row["trades"]),
            max_t_id=int(row["max_t_id"]), seed=int(row["seed"]),
            start_date=row["start_date"].isoformat(),
            page_kib=None if row["page_kib"] is None else int(row["page_kib"]))
    except client.Error as exc:
        raise DatabaseError(f"reading the brokerage schema failed: "
                            f"{client.error_text(exc)}") from exc
    finally:
        conn.close()


def has_run(dsn: str) -> bool:
    """True when a trade was entered after the build (or a limit order is pending)."""
    return ask(dsn, f"SELECT COALESCE((SELECT MAX(t_id) FROM trade), 0) > m.max_t_id"
                    f" OR EXISTS (SELECT 1 FROM trade_request) FROM {META_TABLE} m",
               "the trades")


def before_run(dsn: str, info: BrokerageSchema) -> dict:
    """Trade-Cleanup before a run's first step: the trades an earlier run left submitted or
    pending (above the build's highest trade id) are canceled. {"trade_cleanup": canceled}."""
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("CALL trade_cleanup(%s)", (int(info.max_t_id),))
            row = cur.fetchone()
            while cur.nextset():
                pass
        return {"trade_cleanup": int(row[0]) if row and row[0] is not None else 0}
    except client.Error as exc:
        raise DatabaseError(f"Trade-Cleanup before the run failed: "
                            f"{client.error_text(exc)}") from exc
    finally:
        conn.close()

"""What every engine's TPC-C-derived schema holds, whatever its SQL dialect.

The nine tables and ``tpcc_meta``, the build's record [2.1.6.1] that marks a complete build;
an engine's ``schema_info(dsn)`` reads it into an ``engines.base.SchemaInfo``. Each engine ships
its DDL and procedures as SQL files in its own ``tpcc/sql`` folder, read with ``sql_text``
(engines/common/sqlfiles.py).
"""

from __future__ import annotations

from ...engines.base import SchemaInfo
from ...engines.common import sqlfiles
from ...errors import SchemaError

TABLES = ("warehouse", "district", "customer", "history", "new_order", "orders", "order_line",
          "item", "stock")
META_TABLE = "tpcc_meta"

#: The SQL files of a dialect package (engines/common/sqlfiles.py), as engines read them here.
sql_text, sql_statements = sqlfiles.sql_text, sqlfiles.sql_statements


def require_warehouses(info: SchemaInfo, needed: int) -> None:
    """SchemaError unless the schema has at least ``needed`` warehouses."""
    if info.warehouses < needed:
        raise SchemaError(
            f"the schema has {info.warehouses} warehouse(s) but {needed} are needed: "
            f"rebuild with 'oltplab tpcc build --warehouses {needed} --force'")


def no_schema(dbname: str) -> SchemaError:
    return SchemaError(f"no TPC-C schema in database {dbname}: run 'oltplab tpcc build' first")


def other_schema(dbname: str, label: str) -> SchemaError:
    return SchemaError(f"database {dbname} holds the {label} schema, not the TPC-C-derived "
                       "one: use another database (--dbname) for tpcc")


def incomplete_schema(dbname: str) -> SchemaError:
    return SchemaError(f"the TPC-C schema in database {dbname} is incomplete (its build did "
                       "not finish): run 'oltplab tpcc build --force'")

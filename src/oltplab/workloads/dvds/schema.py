"""What every engine's DVD-Store-derived schema holds, whatever its SQL dialect: the eight
tables, ``dvds_meta`` (the build's record, written last: it marks a complete build), the six
transaction functions, and what ``schema_info`` reads back (``DvdsSchema``)."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import SchemaError

TABLES = ("customers", "orders", "orderlines", "cust_hist", "products", "inventory",
          "categories", "reorder")
META_TABLE = "dvds_meta"
#: The transaction functions, in the order of the workload's kinds.
FUNCTIONS = ("dvds_login", "dvds_new_customer", "dvds_browse_category", "dvds_browse_actor",
             "dvds_browse_title", "dvds_purchase")


@dataclass(frozen=True)
class DvdsSchema:
    """What a build recorded: its size's name and row counts (the users draw customer and
    product ids from them); ``functions_installed``: the six functions are there."""

    size: str
    customers: int
    products: int
    orders: int
    functions_installed: bool


def no_schema(dbname: str) -> SchemaError:
    return SchemaError(f"no DVD-Store-derived schema in database {dbname}: "
                       "run 'oltplab dvds build' first")


def incomplete_schema(dbname: str) -> SchemaError:
    return SchemaError(f"the DVD-Store-derived schema in database {dbname} is incomplete (its "
                       "build did not finish): run 'oltplab dvds build --force'")


def tpcc_schema_here(dbname: str) -> SchemaError:
    return SchemaError(f"database {dbname} holds the TPC-C-derived schema, not the "
                       "DVD-Store-derived one: use another database for dvds")

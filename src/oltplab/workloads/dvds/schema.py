"""What every engine's DVD-Store-derived schema holds, whatever its SQL dialect: the eight
tables, ``dvds_meta`` (the build's record, written last: it marks a complete build), the twelve
transaction functions, and what ``schema_info`` reads back (``DvdsSchema``)."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import SchemaError

TABLES = ("customers", "orders", "orderlines", "cust_hist", "products", "inventory",
          "categories", "reorder")
#: DVD Store 3's tables, which a DS3 build adds (``dvds build --ds3``).
DS3_TABLES = ("membership", "reviews", "reviews_helpfulness")
META_TABLE = "dvds_meta"
#: The transaction functions, in the order of the workload's kinds: DS2's six, then DS3's six
#: (every build installs all twelve, a build older than DS3's parts DS2's six alone; DS3's are
#: called by a DS3 run only).
DS2_FUNCTIONS = ("dvds_login", "dvds_new_customer", "dvds_browse_category", "dvds_browse_actor",
                 "dvds_browse_title", "dvds_purchase")
DS3_FUNCTIONS = ("dvds_reviews_product", "dvds_reviews_actor", "dvds_reviews_title",
                 "dvds_new_review", "dvds_new_helpfulness", "dvds_new_member")
FUNCTIONS = DS2_FUNCTIONS + DS3_FUNCTIONS


def functions_called(params) -> tuple[str, ...]:
    """The functions a procedures-mode run with ``params`` (DvdsParams; None: the defaults)
    calls: DS3's too on a DS3 run only."""
    return FUNCTIONS if getattr(params, "ds3", False) else DS2_FUNCTIONS


@dataclass(frozen=True)
class DvdsSchema:
    """What a build recorded: its size's name and row counts (the users draw customer and
    product ids from them); ``functions_installed``: the functions are there; ``ds3``: a DS3
    build, whose ``reviews`` loaded reviews the users rate (0 otherwise)."""

    size: str
    customers: int
    products: int
    orders: int
    functions_installed: bool
    ds3: bool = False
    reviews: int = 0


def no_schema(dbname: str) -> SchemaError:
    return SchemaError(f"no DVD-Store-derived schema in database {dbname}: "
                       "run 'oltplab dvds build' first")


def incomplete_schema(dbname: str) -> SchemaError:
    return SchemaError(f"the DVD-Store-derived schema in database {dbname} is incomplete (its "
                       "build did not finish): run 'oltplab dvds build --force'")


def ds2_build(size: str) -> SchemaError:
    return SchemaError(f"--ds3: the database holds a DS2 build ({size}) without DVD Store 3's "
                       f"tables: run 'oltplab dvds build --size {size} --ds3 --force' first")


def tpcc_schema_here(dbname: str) -> SchemaError:
    return SchemaError(f"database {dbname} holds the TPC-C-derived schema, not the "
                       "DVD-Store-derived one: use another database for dvds")

"""What a DVD-Store-derived build is asked for: ``DvdsBuildSpec``, validated and frozen at the
edge (the CLI) and handed to an engine's dvds loader; and what every engine's build records
(``build_record``) and returns (``build_summary``)."""

from __future__ import annotations

from dataclasses import dataclass

from .population import reviews
from .schema import DS3_TABLES, TABLES
from .sizes import Size


@dataclass(frozen=True)
class DvdsBuildSpec:
    """``size`` (sizes.parse_size); ``build_users`` loading processes; ``seed`` None for a
    random one (the build records the seed it used, so any build can be made again);
    ``force`` drops an existing DVD-Store-derived schema first; ``ds3`` builds DVD Store 3's
    parts too (MEMBERSHIP, REVIEWS, REVIEWS_HELPFULNESS, PRODUCTS.membership_item)."""

    size: Size
    build_users: int = 2
    seed: int | None = None
    force: bool = False
    ds3: bool = False


def build_record(size: Size, seed: int, build_users: int, build_sales: int,
                 ds3: bool = False) -> dict:
    """The row of ``dvds_meta`` that a complete build writes last, by column (the engine adds
    build_seconds and oltplab_version): the size, its row counts, the highest loaded orderid
    and the loaded INVENTORY.sales total (the checks tell the orders since the build by them),
    the seed and the loading processes; whether it is a DS3 build and its loaded reviews (the
    users rate reviews 1..reviews)."""
    return dict(size=size.name, customers=size.customers, orders_per_month=size.orders_per_month,
                orders=size.orders, products=size.products, max_orderid=size.orders,
                build_sales=build_sales, seed=seed, build_users=build_users, ds3=ds3,
                reviews=reviews(size) if ds3 else 0)


def build_summary(record: dict, times: dict, rows) -> dict:
    """What an engine's dvds build returns: size, customers, orders, products, build_users,
    seed (the one used), ``times`` (engines/common/build.py ``timings``: seconds, phases),
    rows (per table) and build_sales, from the build's ``record`` (``build_record``)."""
    tables = TABLES + (DS3_TABLES if record.get("ds3") else ())
    return {**{k: record[k] for k in ("size", "customers", "orders", "products",
                                       "build_users", "seed", "ds3")},
            **times, "rows": {t: rows.get(t, 0) for t in tables},
            "build_sales": record["build_sales"]}

"""What a DVD-Store-derived build is asked for: ``DvdsBuildSpec``, validated and frozen at the
edge (the CLI) and handed to an engine's dvds loader; and what every engine's build records
(``build_record``) and returns (``build_summary``)."""

from __future__ import annotations

from dataclasses import dataclass

from .schema import TABLES
from .sizes import Size


@dataclass(frozen=True)
class DvdsBuildSpec:
    """``size`` (sizes.parse_size); ``build_users`` loading processes; ``seed`` None for a
    random one (the build records the seed it used, so any build can be made again);
    ``force`` drops an existing DVD-Store-derived schema first."""

    size: Size
    build_users: int = 2
    seed: int | None = None
    force: bool = False


def build_record(size: Size, seed: int, build_users: int, build_sales: int) -> dict:
    """The row of ``dvds_meta`` that a complete build writes last, by column (the engine adds
    build_seconds and oltplab_version): the size, its row counts, the highest loaded orderid
    and the loaded INVENTORY.sales total (the checks tell the orders since the build by them),
    the seed and the loading processes."""
    return dict(size=size.name, customers=size.customers, orders_per_month=size.orders_per_month,
                orders=size.orders, products=size.products, max_orderid=size.orders,
                build_sales=build_sales, seed=seed, build_users=build_users)


def build_summary(record: dict, times: dict, rows) -> dict:
    """What an engine's dvds build returns: size, customers, orders, products, build_users,
    seed (the one used), ``times`` (engines/common/build.py ``timings``: seconds, phases),
    rows (per table) and build_sales, from the build's ``record`` (``build_record``)."""
    return {**{k: record[k] for k in ("size", "customers", "orders", "products",
                                       "build_users", "seed")},
            **times, "rows": {t: rows.get(t, 0) for t in TABLES},
            "build_sales": record["build_sales"]}

"""A plan's cells that run the TPC-E-derived brokerage (``workload = "brokerage"``): their
options checked at load time, and their schema reused when it has the cell's scale, built
(again) otherwise, as ``oltplab brokerage build`` builds it.

A brokerage cell takes the build's ``customers`` (a multiple of 1,000) and ``days`` (300 by
default) and the run options ``brokerage run`` takes; its schema lives in the database
``brokerage`` unless the cell names another. MariaDB's 8 KiB pages are asked for with the
server setting (``settings = { innodb_page_size = "8k" }``), which a data directory gets when
it is created; the build records the page size either way.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from ..errors import SchemaError, UsageError

WORKLOAD = "brokerage"
#: The options of the other workloads, refused in a brokerage cell (each in one line).
TPCC_ONLY = ("warehouses", "keying_thinking", "all_warehouses")


def brokerage_cell(conv: dict, values: dict, run: dict, db, shop: dict):
    """(run options, DbSpec, Scale) of a brokerage cell, from its converted options ``conv``
    (``values``: as the plan gives them; ``shop``: the dvds options it has); UsageError in one
    line naming the first option that does not go with it."""
    from ..workloads.brokerage.scale import parse_scale
    for key in TPCC_ONLY:
        if key in conv:
            raise UsageError(f"{key} is a TPC-C option; the brokerage workload does not take it")
    if shop:
        raise UsageError(f"{next(iter(shop))} is an option of the dvds workload; the brokerage "
                         "workload does not take it")
    if conv.get("mode", "procedures") != "procedures":
        raise UsageError(f"mode {conv['mode']!r}: the brokerage runs its transactions as the "
                         "server's functions only (mode = \"procedures\")")
    if "customers" not in conv:
        raise UsageError("workload = \"brokerage\" needs customers (such as customers = 1000)")
    try:
        scale = parse_scale(conv["customers"], conv.get("days", 300))
    except UsageError as e:
        raise UsageError(str(e).replace("--customers", "customers").replace("--days", "days")
                         ) from None
    run = {**run, "workload": WORKLOAD, "mode": "procedures"}
    if "dbname" not in values and not db.dsn:
        db = dataclasses.replace(db, dbname=WORKLOAD)
    return run, db, scale


def brokerage_keys_refused(conv: dict) -> None:
    """The build's options of the brokerage in a cell of another workload."""
    for key in ("customers", "days"):
        if key in conv:
            raise UsageError(f"{key} is an option of the brokerage workload; give "
                             "workload = \"brokerage\"")


def scale_name(scale) -> str:
    """How plans name a brokerage's scale (a Scale, or the build's record): "1,000 customers x
    5 days"."""
    return f"{scale.customers:,} customers x {scale.days} day{'s' if scale.days != 1 else ''}"


def ensure_brokerage(engine_name: str, dsn: str, scale, *, managed: bool = True,
                     build_users: int | None = None,
                     on_build: Callable[[], Callable | None] | None = None) -> str:
    """"reused" or "built": the brokerage at ``dsn`` with ``scale``'s customers and days. A
    brokerage of another scale, an unfinished build or none is built (again) on a managed
    server and refused (one SchemaError line) on a server given by DSN. ``on_build()`` is
    called just before a build and returns the build's progress callback."""
    from .. import engines
    from ..workloads.brokerage.build import BrokerageBuildSpec
    engine = engines.get(engine_name)
    dialect = engine.dialect_for(WORKLOAD)
    try:
        info = dialect.schema_info(dsn)
    except (UsageError, SchemaError) as e:
        if not managed:
            raise
        info, why = None, str(e)
    if info is not None:
        if (info.customers, info.days) == (scale.customers, scale.days):
            return "reused"
        why = f"the brokerage at dsn has {scale_name(info)}"
    if not managed:
        raise SchemaError(f"{why}, not {scale_name(scale)}; only a managed server is rebuilt")
    progress = on_build() if on_build is not None else None
    extra = {"build_users": build_users} if build_users else {}
    dialect.build(dsn, BrokerageBuildSpec(scale=scale, force=True, **extra), progress=progress)
    return "built"

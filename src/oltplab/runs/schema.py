"""The schema a run needs: reused when it has the size asked for (TPC-C's warehouses, the
shop's size), built (again) when it has not and the server is managed; the one rule of
quickstart and of a plan's cells."""

from __future__ import annotations

from typing import Callable

from .. import engines
from ..config import BuildSpec
from ..errors import SchemaError


def ensure_schema(engine_name: str, dsn: str, warehouses: int | None, *, managed: bool = True,
                  build_users: int | None = None,
                  on_build: Callable[[], Callable | None] | None = None,
                  size=None, ds3: bool = False) -> str:
    """"reused" or "built": the schema at ``dsn`` with ``warehouses`` (None: any schema there,
    never built), or with ``size`` the DVD-Store-derived shop of that size
    (workloads.dvds.sizes.Size), with DVD Store 3's parts when ``ds3`` and without them
    otherwise (a DS2 run on a DS3 build would run DS3's steps). A schema of another size (or
    build) is rebuilt on a managed server and refused (one SchemaError line) on a server given
    by DSN. ``on_build()`` is called just before a build and returns the build's progress
    callback."""
    engine = engines.get(engine_name)
    workload = "dvds" if size is not None else "tpcc"
    want = shop_label(size.name, ds3) if size is not None else warehouses
    try:
        info = engine.schema_info(dsn, workload)
    except SchemaError:
        if want is None:
            raise
        info = None
    have = None if info is None else (shop_label(info.size, info.ds3) if size is not None
                                      else info.warehouses)
    if want is None or (info is not None and have == want):
        return "reused"
    if not managed:
        what = f"size {have}" if size is not None else f"{have} warehouses"
        raise SchemaError(f"the schema at dsn has {what if info else 'no schema'}, not "
                          f"{want}; only a managed server is rebuilt")
    progress = on_build() if on_build is not None else None
    extra = {"build_users": build_users} if build_users else {}
    if size is not None:
        from ..workloads.dvds.build import DvdsBuildSpec
        spec = DvdsBuildSpec(size=size, force=True, ds3=ds3, **extra)
    else:
        spec = BuildSpec(warehouses=warehouses, force=True, **extra)
    engine.dialect_for(workload).build(dsn, spec, progress=progress)
    return "built"


def shop_label(size: str, ds3: bool) -> str:
    """A shop's size, and "with DS3" for a DS3 build: "10MB", "10MB with DS3"."""
    return f"{size} with DS3" if ds3 else size

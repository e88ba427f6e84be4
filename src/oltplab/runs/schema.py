"""The schema a run needs: reused when it has the warehouses asked for, built (again) when it
has not and the server is managed; the one rule of quickstart and of a plan's cells."""

from __future__ import annotations

from typing import Callable

from .. import engines
from ..config import BuildSpec
from ..errors import SchemaError


def ensure_schema(engine_name: str, dsn: str, warehouses: int | None, *, managed: bool = True,
                  build_users: int | None = None,
                  on_build: Callable[[], Callable | None] | None = None) -> str:
    """"reused" or "built": the schema at ``dsn`` with ``warehouses`` (None: any schema there,
    never built). A schema of another size is rebuilt on a managed server and refused (one
    SchemaError line) on a server given by DSN. ``on_build()`` is called just before a build
    and returns the build's progress callback."""
    engine = engines.get(engine_name)
    try:
        info = engine.schema_info(dsn)
    except SchemaError:
        if warehouses is None:
            raise
        info = None
    if warehouses is None or (info is not None and info.warehouses == warehouses):
        return "reused"
    if not managed:
        raise SchemaError(f"the schema at dsn has {info.warehouses if info else 'no'} "
                          f"warehouses, not {warehouses}; only a managed server is rebuilt")
    progress = on_build() if on_build is not None else None
    spec = BuildSpec(warehouses=warehouses, force=True,
                     **({"build_users": build_users} if build_users else {}))
    engine.dialect.build(dsn, spec, progress=progress)
    return "built"

"""PostgreSQL as a managed engine: instance, settings, access, session, counters, the run's
monitor, telemetry, the driver of the virtual users and the TPC-C-derived dialect (tpcc/).
``ENGINE`` is all of it behind engines/base.py's ``Engine``."""

from __future__ import annotations

from ...config import DbSpec
from ..base import EngineParts


class _Postgres(EngineParts):
    package = __name__
    name = "postgres"
    label = "PostgreSQL"
    default_port = 5432

    def instance(self, spec: DbSpec):
        from .instance import PostgresInstance
        return PostgresInstance(spec)

    def server_record(self, dsn: str) -> dict:
        """``{"server_version", "server_version_num", "settings"}``, as a run records them."""
        from .settings import effective_settings
        return effective_settings(dsn)


ENGINE = _Postgres()

"""MariaDB as a managed engine: instance, settings, access, client, session, counters, the
run's monitor and the TPC-C-derived dialect (tpcc/). ``ENGINE`` is all of it behind
engines/base.py's ``Engine``; each part is imported when first used, so a part this
installation lacks (driver, telemetry, backup) fails with a UsageError only when asked for."""

from __future__ import annotations

from ...config import DbSpec
from ...errors import DatabaseError
from ..base import EngineParts


class _MariaDB(EngineParts):
    package = __name__
    name = "mariadb"
    label = "MariaDB"
    default_port = 3306
    # one worker driving two sessions of a local server on 2 CPUs is moved between the CPUs
    # about 1,900 times a second, interrupting the server's threads; a worker each is not
    # (docs/benchmarks.md, "Worker processes on a local server")
    worker_per_local_user = True

    def instance(self, spec: DbSpec):
        from .instance import MariaDBInstance
        return MariaDBInstance(spec)

    def server_record(self, dsn: str) -> dict:
        """``{"server_version", "server_version_num", "settings"}``, as a run records them
        (MariaDB has no version number beside its version string: None)."""
        from . import client
        from .settings import read_settings
        conn = client.connect(dsn)
        try:
            return {**read_settings(conn), "server_version_num": None}
        except client.Error as e:
            raise DatabaseError(f"cannot read server settings: {client.error_text(e)}") from e
        finally:
            conn.close()


ENGINE = _MariaDB()

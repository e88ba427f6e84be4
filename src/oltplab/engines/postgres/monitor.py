"""The run manager's connection to PostgreSQL: checks before a run, server snapshots.

``precheck`` refuses a run whose transaction functions are missing or too old, or that asks
for more connections than the server has left; it also learns whether the server can publish
statistics on demand (PostgreSQL 15+: ``flush_stats``). ``snapshot`` reads the counters of
counters.py, after publishing the monitor's own pending transactions (so that exactly
loadgen/step.py's MONITOR_XACTS of them fall between two snapshots), under the sampler's lock.
"""

from __future__ import annotations

import asyncio
from contextlib import nullcontext

import asyncpg

from ...config import RunSpec
from ...errors import DatabaseError, SchemaError
from ..base import SnapshotFailed, check_room, retry_snapshot
from . import counters
from .dialect import PostgresDialect

SNAPSHOT_TIMEOUT_S = 10.0
RECOVERY_WAIT_S = 120.0  # with --inject: how long a snapshot waits for the server to be back


class Monitor:
    """The manager's own connection: checks before the run and the server snapshots."""

    def __init__(self, dsn: str, sampler_db=None, patient: bool = False,
                 dialect: PostgresDialect | None = None):
        from importlib import import_module
        self.dialect = dialect or import_module(f"{__package__}.tpcc").DIALECT
        self.snapshot_sql = counters.snapshot_sql(self.dialect.unit_sql.format(base=0))
        self.dsn = dsn
        self.patient = patient  # faults are injected: the server may be away for a while
        self.sampler_db = sampler_db
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(lambda loop, context: None)  # the library never prints
        self.conn = None
        self.flush_stats = False  # can users publish their statistics on demand (PG 15+)?

    def _run(self, coro, timeout: float):
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def _connection(self):
        if self.conn is None or self.conn.is_closed():
            self.conn = self._run(asyncpg.connect(
                self.dsn, timeout=SNAPSHOT_TIMEOUT_S, statement_cache_size=0,
                server_settings={"application_name": "oltplab-monitor"}), SNAPSHOT_TIMEOUT_S + 1)
        return self.conn

    def precheck(self, spec: RunSpec) -> None:
        """Raise before starting when the functions or the connection slots are missing."""
        try:
            conn = self._connection()
            functions, signature = self.dialect.functions_called(spec), self.dialect.signature
            if spec.mode == "procedures":
                found = self._run(conn.fetch(
                    "SELECT DISTINCT proname FROM pg_proc WHERE proname = ANY($1::text[])",
                    list(functions)), SNAPSHOT_TIMEOUT_S)
                missing = sorted(set(functions) - {r[0] for r in found})
                if missing:
                    raise SchemaError(f"the transaction functions {', '.join(missing)} are "
                                      "missing; rebuild the schema or use --mode sql")
                if signature and self._run(conn.fetchval("SELECT to_regprocedure($1) IS NULL",
                                                         signature), SNAPSHOT_TIMEOUT_S):
                    raise SchemaError("the transaction functions are those of an older oltplab "
                                      f"(no {signature}): rebuild the schema with "
                                      f"'oltplab {spec.workload} build --force' or use --mode sql")
            if self.dialect.base_sql:  # the count of the unit starts here
                base = int(self._run(conn.fetchval(self.dialect.base_sql), SNAPSHOT_TIMEOUT_S))
                self.snapshot_sql = counters.snapshot_sql(self.dialect.unit_sql.format(base=base))
            version = int(self._run(conn.fetchval("SHOW server_version_num"), SNAPSHOT_TIMEOUT_S))
            self.flush_stats = version >= 150000
            free = self._run(conn.fetchval("""
                SELECT current_setting('max_connections')::int
                  - (SELECT count(*) FROM pg_stat_activity
                     WHERE backend_type = 'client backend')
                  - CASE WHEN (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
                         THEN 0 ELSE current_setting('superuser_reserved_connections')::int END
                """), SNAPSHOT_TIMEOUT_S)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncio.TimeoutError) as e:
            raise DatabaseError(f"cannot check the database: {e}") from None
        check_room(free, spec)

    def snapshot(self) -> counters.ServerCounters:
        """The server's counters; first, when it can, the monitor publishes its own pending
        transactions. A patient monitor tries again on a new connection until RECOVERY_WAIT_S
        have passed."""
        return retry_snapshot(self._snapshot, self.patient, RECOVERY_WAIT_S)

    def _snapshot(self) -> counters.ServerCounters:
        try:
            conn = self._connection()
            with self.sampler_db.lock if self.sampler_db is not None else nullcontext():
                if self.flush_stats:
                    self._run(conn.execute(self.dialect.flush_sql, timeout=SNAPSHOT_TIMEOUT_S),
                              SNAPSHOT_TIMEOUT_S + 1)
                return self._run(counters.snapshot(conn, self.snapshot_sql,
                                                   timeout=SNAPSHOT_TIMEOUT_S),
                                 SNAPSHOT_TIMEOUT_S + 1)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncio.TimeoutError,
                asyncpg.InternalClientError) as e:  # the last: a connection the server dropped
            self.reset()
            raise SnapshotFailed(f"server snapshot failed: {type(e).__name__}: {e}") from None

    def reset(self) -> None:
        """Drop the connection (after an interruption it may be in the middle of a query)."""
        if self.conn is not None:
            self.conn.terminate()
            self.conn = None

    def close(self) -> None:
        try:
            if self.conn is not None and not self.conn.is_closed():
                try:
                    self._run(self.conn.close(timeout=2), 3)
                except (Exception, KeyboardInterrupt):  # noqa: BLE001
                    self.conn.terminate()
            self.conn = None
        finally:
            self.loop.close()

"""The run manager's connection to MariaDB: checks before a run, server snapshots.

The run's workload speaks through its dialect (dialect.py ``MariaDBDialect``; None: the
TPC-C-derived one). ``precheck`` refuses a run whose procedures are missing (procedures mode)
or that asks for more connections than ``max_connections`` leaves beside the sessions already
open, and reads where the count of the workload's unit starts (the shop: the highest orderid
at the run's start). ``snapshot`` reads counters.py's ``Com_commit + Com_rollback`` and the
workload's unit (TPC-C: ``sum(d_next_o_id)``; the shop: the orders added since the run
began), under the sampler's lock. MariaDB's status counters are exact when read, so nothing is
flushed at the boundaries (``flush_stats`` is False).
"""

from __future__ import annotations

from contextlib import nullcontext
from importlib import import_module

from ...config import RunSpec
from ...errors import DatabaseError, SchemaError
from ..base import ServerCounters, SnapshotFailed, check_room, retry_snapshot
from . import client, counters
from .dialect import MariaDBDialect

SNAPSHOT_TIMEOUT_S = 10
RECOVERY_WAIT_S = 120.0  # with --inject: how long a snapshot waits for the server to be back


class Monitor:
    """The manager's own MariaDB session: checks before the run and the server snapshots."""

    flush_stats = False

    def __init__(self, dsn: str, sampler_db=None, patient: bool = False,
                 dialect: MariaDBDialect | None = None):
        self.dsn = dsn
        self.dialect = dialect or import_module(f"{__package__}.tpcc").DIALECT
        self.snapshot_sql = counters.snapshot_sql(self.dialect.unit_sql.format(base=0))
        self.sampler_db = sampler_db
        self.patient = patient
        self.conn = None

    def _connection(self):
        if self.conn is None:
            self.conn = client.connect(self.dsn, connect_timeout=SNAPSHOT_TIMEOUT_S,
                                       read_timeout=SNAPSHOT_TIMEOUT_S,
                                       write_timeout=SNAPSHOT_TIMEOUT_S)
        return self.conn

    def precheck(self, spec: RunSpec) -> None:
        """Raise before starting when the procedures or the connection slots are missing;
        then the count of the unit starts here."""
        procedures = self.dialect.procedures_called(spec)
        try:
            conn = self._connection()
            with conn.cursor() as cur:
                if spec.mode == "procedures":
                    cur.execute("SELECT UPPER(routine_name) FROM information_schema.ROUTINES"
                                " WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE'"
                                " AND UPPER(routine_name) IN %s", (list(procedures),))
                    missing = sorted(set(procedures) - {r[0] for r in cur.fetchall()})
                    if missing:
                        raise SchemaError(f"the transaction procedures {', '.join(missing)} are "
                                          "missing: rebuild the schema with 'oltplab "
                                          f"{spec.workload} build --force'")
                if self.dialect.base_sql:
                    cur.execute(self.dialect.base_sql)
                    base = int(cur.fetchone()[0])
                    self.snapshot_sql = counters.snapshot_sql(
                        self.dialect.unit_sql.format(base=base))
                cur.execute("SELECT @@max_connections - (SELECT COUNT(*) FROM"
                            " information_schema.PROCESSLIST WHERE command <> 'Daemon')")
                free = int(cur.fetchone()[0])
        except client.Error as e:
            raise DatabaseError(f"cannot check the database: {client.error_text(e)}") from None
        check_room(free, spec)

    def snapshot(self) -> ServerCounters:
        """The server's counters. A patient monitor tries again on a new connection until
        RECOVERY_WAIT_S have passed."""
        return retry_snapshot(self._snapshot, self.patient, RECOVERY_WAIT_S)

    def _snapshot(self) -> ServerCounters:
        try:
            conn = self._connection()
            with self.sampler_db.lock if self.sampler_db is not None else nullcontext():
                return counters.snapshot(conn, self.snapshot_sql)
        except (client.Error, DatabaseError, OSError) as e:
            self.reset()
            raise SnapshotFailed(f"server snapshot failed: {type(e).__name__}: {e}") from None

    def reset(self) -> None:
        """Drop the connection (after an interruption it may be in the middle of a query)."""
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - a broken session is closed all the same
                pass

    def close(self) -> None:
        self.reset()

"""MariaDB's own counters, per second, for the telemetry sampler: one ``SHOW GLOBAL STATUS``
a sample, over one PyMySQL session kept open by the sampler's thread.

The columns and what feeds them (every one a change per second since the previous sample):

- ``db.commits_s``, ``db.rollbacks_s``: ``Com_commit``, ``Com_rollback`` (HammerDB's TPM
  source; the TPC-C procedures end each transaction with one of them);
- ``db.blks_read_s``: ``Innodb_buffer_pool_reads``, pages InnoDB had to read from its files;
  ``db.blks_hit_s``: ``Innodb_buffer_pool_read_requests`` minus those reads, the logical reads
  the buffer pool answered. The PostgreSQL names are kept on purpose, so that the buffer hit
  ratio of telemetry/derive.py (hits / (hits + reads)) is InnoDB's buffer pool hit ratio;
  the unit is InnoDB pages (``innodb_page_size``, 16 KiB by default) instead of 8 KiB blocks;
- ``db.wal_bytes_s``: ``Innodb_os_log_written``, bytes written to the redo log (InnoDB's WAL);
- ``db.innodb_data_writes_s``, ``db.innodb_data_written_s``: ``Innodb_data_writes`` (write
  requests) and ``Innodb_data_written`` (bytes) of InnoDB's data files, the doublewrite
  buffer's included; not the redo log's (300 commits on MariaDB 10.11 moved them by 0 while
  Innodb_log_writes moved by 301; the page cleaner's flush then moved them);
- ``db.innodb_row_lock_waits_s``: ``Innodb_row_lock_waits``, row locks a transaction had to
  wait for;
- ``db.front_reads_s``, ``db.front_writes_s``, ``db.front_read_bytes_s``,
  ``db.front_written_bytes_s``: the I/Os the server issued to the file system (the front end,
  set beside what the devices served in telemetry/derive.py ``io``): reads are
  ``Innodb_data_reads`` (``Innodb_data_read`` bytes); writes are ``Innodb_data_writes`` +
  ``Innodb_log_writes``, the data files' and the redo log's write requests
  (``Innodb_data_written`` + ``Innodb_os_log_written`` bytes), as PostgreSQL's front end
  counts its WAL. A server that lacks one of them gives null writes, never a part of them.

MariaDB exposes no counter of checkpoints among its status variables (only the last
checkpoint's LSN and its age), so there is no ``db.checkpoints_s`` here. The status counters
are exact when read, unlike PostgreSQL's statistics that backends publish once a second.
The sample itself commits nothing (``SHOW`` under autocommit is not a COMMIT), so
``transactions_between`` is always 0. A lost session is opened again every ``retry_s``
seconds; the samples in between are null, and the first one after a reconnection too (it
is the new baseline).
"""

from __future__ import annotations

import threading

from ...errors import DatabaseError
from ...telemetry.sources import SessionSource
from . import client

#: The status variables read, in the order ``counters`` uses them.
STATUS = ("Com_commit", "Com_rollback", "Innodb_buffer_pool_reads",
          "Innodb_buffer_pool_read_requests", "Innodb_os_log_written", "Innodb_data_writes",
          "Innodb_data_written", "Innodb_row_lock_waits", "Innodb_data_reads",
          "Innodb_data_read", "Innodb_log_writes")
STATUS_SQL = ("SHOW GLOBAL STATUS WHERE Variable_name IN ("
              + ", ".join(f"'{name}'" for name in STATUS) + ")")

COLUMNS = ("db.commits_s", "db.rollbacks_s", "db.blks_read_s", "db.blks_hit_s",
           "db.wal_bytes_s", "db.innodb_data_writes_s", "db.innodb_data_written_s",
           "db.innodb_row_lock_waits_s", "db.front_reads_s", "db.front_writes_s",
           "db.front_read_bytes_s", "db.front_written_bytes_s")
UNITS = {"db.commits_s": "transactions/s", "db.rollbacks_s": "transactions/s",
         "db.blks_read_s": "pages/s", "db.blks_hit_s": "pages/s",
         "db.wal_bytes_s": "bytes/s", "db.innodb_data_writes_s": "writes/s",
         "db.innodb_data_written_s": "bytes/s", "db.innodb_row_lock_waits_s": "waits/s",
         "db.front_reads_s": "reads/s", "db.front_writes_s": "writes/s",
         "db.front_read_bytes_s": "bytes/s", "db.front_written_bytes_s": "bytes/s"}
SOURCES = {"db.commits_s": "Com_commit", "db.rollbacks_s": "Com_rollback",
           "db.blks_read_s": "Innodb_buffer_pool_reads",
           "db.blks_hit_s": "Innodb_buffer_pool_read_requests - Innodb_buffer_pool_reads",
           "db.wal_bytes_s": "redo: Innodb_os_log_written",
           "db.innodb_data_writes_s": "Innodb_data_writes",
           "db.innodb_data_written_s": "Innodb_data_written",
           "db.innodb_row_lock_waits_s": "Innodb_row_lock_waits",
           "db.front_reads_s": "Innodb_data_reads",
           "db.front_writes_s": "Innodb_data_writes + Innodb_log_writes",
           "db.front_read_bytes_s": "Innodb_data_read",
           "db.front_written_bytes_s": "Innodb_data_written + Innodb_os_log_written"}


def counters(rows) -> tuple:
    """The columns' counters from ``SHOW GLOBAL STATUS`` rows (name, value); None for a
    variable the server did not return."""
    status = {name.lower(): value for name, value in rows}

    def get(name: str) -> int | None:
        value = status.get(name.lower())
        return int(value) if value is not None and str(value).isdigit() else None

    (commits, rollbacks, reads, requests, redo, writes, written, waits, data_reads,
     data_read, log_writes) = (get(n) for n in STATUS)
    hits = requests - reads if requests is not None and reads is not None else None
    return (commits, rollbacks, reads, hits, redo, writes, written, waits, data_reads,
            _plus(writes, log_writes), data_read, _plus(written, redo))


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


class MariaDBSource(SessionSource):
    """The sampler's database source for MariaDB (the interface of
    telemetry/sources/database.py's DatabaseSource)."""

    name = "database"

    def __init__(self, dsn: str, connect_timeout: float = 5.0, query_timeout: float = 2.0,
                 retry_s: float = 5.0, **_ignored):
        super().__init__(retry_s)
        self.dsn = dsn
        self.connect_timeout = connect_timeout
        self.query_timeout = query_timeout
        self.lock = threading.Lock()  # a sample, or a snapshot of the driver's
        self.columns = list(COLUMNS)
        self.units = dict(UNITS)
        self._version: str | None = None

    def open(self) -> None:
        try:
            self._connect()
        except DatabaseError as e:  # read() retries
            self.errors.append(str(e))

    def _connect(self) -> None:
        try:
            conn = client.connect(self.dsn, connect_timeout=max(1, round(self.connect_timeout)),
                                  read_timeout=self.query_timeout,
                                  write_timeout=self.query_timeout)
        except DatabaseError as e:
            self._later()
            raise DatabaseError(f"sampler cannot connect to the database: {e}") from None
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT VERSION()")
                self._version = cur.fetchone()[0]
        except Exception as e:
            conn.close()
            self._later()
            raise DatabaseError("sampler cannot query the database: "
                                f"{client.error_text(e)}") from None
        self._conn = conn

    def _fetch(self) -> tuple:
        with self.lock, self._conn.cursor() as cur:
            cur.execute(STATUS_SQL)
            return counters(cur.fetchall())

    def _close_conn(self, conn) -> None:
        conn.close()

    def _error_text(self, exc: BaseException) -> str:
        return client.error_text(exc)

    def transactions_between(self, t0_ns: int, t1_ns: int) -> int:
        """Always 0: a sample commits nothing, so it never counts in Com_commit."""
        return 0

    def describe(self) -> dict:
        return {"engine": "mariadb", "server_version": self._version,
                "read_from": "SHOW GLOBAL STATUS", "columns_from": dict(SOURCES),
                "checkpoints_from": None,
                "front_from": "Innodb_data_reads; Innodb_data_writes + Innodb_log_writes",
                "connected_to": None,
                "counts_in_workload_database": False}

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass


DatabaseSource = MariaDBSource  # the name every engine's telemetry module gives its source

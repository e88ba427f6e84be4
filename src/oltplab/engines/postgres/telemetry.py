"""PostgreSQL's own counters, per second, over one connection kept open by the sampler.

- ``db.commits_s``, ``db.rollbacks_s``: Δ sum(xact_commit), Δ sum(xact_rollback) over every
  row of pg_stat_database (the whole instance, as HammerDB counts TPM);
- ``db.blks_read_s``, ``db.blks_hit_s``: Δ sum(blks_read), Δ sum(blks_hit) (blocks read from
  the kernel, found in shared_buffers);
- ``db.wal_bytes_s``: Δ pg_stat_wal.wal_bytes (PostgreSQL 14+);
- ``db.checkpoints_s``: checkpoints per second. PostgreSQL 18+: pg_stat_checkpointer.num_done
  (checkpoints performed; num_timed also counts the timed ones skipped on an idle server);
  17: num_timed + num_requested; up to 16: pg_stat_bgwriter checkpoints_timed +
  checkpoints_req. Over a step, read the sum (the count), not the rate;
- ``db.front_reads_s``, ``db.front_writes_s`` (operations) and ``db.front_read_bytes_s``,
  ``db.front_written_bytes_s``: the I/Os the server issued to the file system (the front end,
  set beside what the devices served in telemetry/derive.py ``io``), from pg_stat_io summed
  over every backend type, object and context. Reads are its ``reads`` (relation and
  temporary-relation blocks that missed shared_buffers, and WAL read back); writes are
  ``writes`` + ``extends`` (blocks written out of the buffers, files grown, and on 18+ the
  WAL written, segment initialisation included). ``fsyncs`` and ``writebacks`` (flush
  requests and writeback hints, no data) are not counted. PostgreSQL 18 counts operations
  (one may span several blocks) and their bytes; 16 and 17 count blocks of ``op_bytes`` and
  have no WAL rows, so their writes add pg_stat_wal.wal_write (calls that wrote WAL out) and
  wal_bytes (the WAL generated, a little under the pages written). Before 16 there is no
  pg_stat_io: the four are null. Reads count what the server asked of the kernel, some of
  which the page cache answered; the devices never see those.

Since PostgreSQL 15 a busy backend publishes its counts at most once a second (an idle one
up to 10 s later), so per-second values jitter around the true rate while averages over a
step are right. The sampler's own query is one transaction per sample, counted in commits and
in the instance-wide TPM. The sampler connects to the maintenance database (``postgres``) when
it can, so that its transactions never count in the workload database's row (the driver's
``workload_tpm``); it falls back to the DSN's own database, and ``describe()`` says which.
There, on PostgreSQL 15 and later, each sample also runs ``pg_stat_force_next_flush()`` so that
its transaction is published before its answer arrives, and ``transactions_between`` tells the
driver how many fell between two of its snapshots: both take ``lock``, so a sample lies wholly
before or after a snapshot.

The connection belongs to the sampler's thread, which runs its own asyncio loop. A lost
connection is retried every ``retry_s`` seconds; the samples in between are null.
"""

from __future__ import annotations

import asyncio
import threading
import time
from array import array

from ...errors import DatabaseError
from ...telemetry.sources import SessionSource

MAINTENANCE_DB = "postgres"

COLUMNS = ("db.commits_s", "db.rollbacks_s", "db.blks_read_s", "db.blks_hit_s",
           "db.wal_bytes_s", "db.checkpoints_s", "db.front_reads_s", "db.front_writes_s",
           "db.front_read_bytes_s", "db.front_written_bytes_s")
UNITS = {"db.commits_s": "transactions/s", "db.rollbacks_s": "transactions/s",
         "db.blks_read_s": "blocks/s", "db.blks_hit_s": "blocks/s",
         "db.wal_bytes_s": "bytes/s", "db.checkpoints_s": "checkpoints/s",
         "db.front_reads_s": "reads/s", "db.front_writes_s": "writes/s",
         "db.front_read_bytes_s": "bytes/s", "db.front_written_bytes_s": "bytes/s"}

# The I/Os the server issued (the front end), from pg_stat_io over every backend type, object
# and context. 18+: reads, writes + extends of relations and temporary relations and of the
# WAL (object 'wal'), in operations (one may span several blocks) and their bytes.
IO_PG18 = """SELECT sum(reads) AS r, sum(coalesce(writes, 0) + coalesce(extends, 0)) AS w,
       sum(read_bytes) AS rb, sum(coalesce(write_bytes, 0) + coalesce(extend_bytes, 0)) AS wb
FROM pg_stat_io"""
FRONT_PG18 = """(SELECT r FROM io)::int8, (SELECT w FROM io)::int8, (SELECT rb FROM io)::int8,
       (SELECT wb FROM io)::int8"""
# 16 and 17: pg_stat_io has no WAL rows and counts in blocks of op_bytes; WAL writes are
# pg_stat_wal.wal_write (calls writing WAL buffers out) and their bytes wal_bytes.
IO_PG16 = """SELECT sum(reads) AS r, sum(coalesce(writes, 0) + coalesce(extends, 0)) AS w,
       sum(reads * op_bytes) AS rb,
       sum((coalesce(writes, 0) + coalesce(extends, 0)) * op_bytes) AS wb
FROM pg_stat_io"""
FRONT_PG16 = """(SELECT r FROM io)::int8,
       ((SELECT w FROM io) + (SELECT wal_write FROM pg_stat_wal))::int8,
       (SELECT rb FROM io)::int8,
       ((SELECT wb FROM io) + (SELECT wal_bytes FROM pg_stat_wal))::int8"""
NO_FRONT = "NULL::int8, NULL::int8, NULL::int8, NULL::int8"
FRONT_FROM = {180000: "pg_stat_io: reads; writes + extends (relations and WAL)",
              160000: "pg_stat_io: reads; writes + extends (relations), "
                      "and pg_stat_wal.wal_write",
              0: None}

SELECT = """{cte}SELECT sum(xact_commit)::int8, sum(xact_rollback)::int8, sum(blks_read)::int8,
       sum(blks_hit)::int8, {wal}, {checkpoints}, {front}
FROM pg_stat_database"""
WAL = "(SELECT wal_bytes FROM pg_stat_wal)::int8"
CHECKPOINTS = {180000: "(SELECT num_done FROM pg_stat_checkpointer)::int8",
               170000: "(SELECT num_timed + num_requested FROM pg_stat_checkpointer)::int8",
               0: "(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)::int8"}
CHECKPOINTS_FROM = {180000: "pg_stat_checkpointer.num_done",
                    170000: "pg_stat_checkpointer.num_timed + num_requested",
                    0: "pg_stat_bgwriter.checkpoints_timed + checkpoints_req"}


def _for(table: dict, version_num: int):
    return next(v for k, v in table.items() if version_num >= k)


FLUSH_FROM = ", (SELECT pg_stat_force_next_flush()) AS flush"  # joins one row: same sums


def query_for(version_num: int) -> str:
    """The counters statement for a server of ``server_version_num``."""
    io = IO_PG18 if version_num >= 180000 else IO_PG16 if version_num >= 160000 else None
    front = FRONT_PG18 if version_num >= 180000 else FRONT_PG16 if io else NO_FRONT
    return SELECT.format(cte=f"WITH io AS ({io})\n" if io else "",
                         wal=WAL if version_num >= 140000 else "NULL::int8",
                         checkpoints=_for(CHECKPOINTS, version_num), front=front)


def checkpoints_from(version_num: int) -> str:
    return _for(CHECKPOINTS_FROM, version_num)


class DatabaseSource(SessionSource):
    name = "database"

    def __init__(self, dsn: str, connect_timeout: float = 5.0, query_timeout: float = 2.0,
                 retry_s: float = 5.0, maintenance_db: str | None = MAINTENANCE_DB):
        super().__init__(retry_s)
        self.dsn = dsn
        self.maintenance_db = maintenance_db
        self.lock = threading.Lock()  # a sample, or a snapshot of the driver's
        self._sent = array("q")  # when each sample counted in the workload's row was sent
        self.connect_timeout = connect_timeout
        self.query_timeout = query_timeout
        self.columns = list(COLUMNS)
        self.units = dict(UNITS)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sql = query_for(0)
        self._stmt = None
        self._version: int | None = None
        self._database: str | None = None  # where the sampler's transactions count
        self._workload_db: str | None = None

    def open(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._connect()
        except DatabaseError as e:  # read() retries
            self.errors.append(str(e))

    def _open_conn(self, database: str | None):
        import asyncpg

        return self._loop.run_until_complete(asyncpg.connect(
            self.dsn, database=database, timeout=self.connect_timeout,
            server_settings={"application_name": "oltplab-sampler"}))

    def _elsewhere(self, conn):
        """A connection to the maintenance database instead of ``conn``'s, when the server
        lets us (then ``conn`` is closed), else ``conn``."""
        if self.maintenance_db is None or self._workload_db == self.maintenance_db:
            return conn
        try:
            other = self._open_conn(self.maintenance_db)
        except Exception:  # no such database, or no right to connect: stay
            return conn
        conn.terminate()
        return other

    def _connect(self) -> None:
        try:
            conn = self._open_conn(None)
            try:
                if self._workload_db is None:
                    self._workload_db = self._loop.run_until_complete(conn.fetchval(
                        "SELECT current_database()", timeout=self.query_timeout))
            except Exception:
                conn.terminate()
                raise
            conn = self._elsewhere(conn)
        except Exception as e:
            self._later()
            raise DatabaseError(f"sampler cannot connect to the database: {e}") from None
        try:
            self._database = self._loop.run_until_complete(conn.fetchval(
                "SELECT current_database()", timeout=self.query_timeout))
            self._version = int(self._loop.run_until_complete(conn.fetchval(
                "SELECT current_setting('server_version_num')", timeout=self.query_timeout)))
        except Exception as e:
            conn.terminate()
            self._later()
            raise DatabaseError(f"sampler cannot query the database: {e}") from None
        self._sql = query_for(self._version)
        if self._database == self._workload_db and self._version >= 150000:
            self._sql += FLUSH_FROM
        try:
            self._stmt = self._loop.run_until_complete(conn.prepare(self._sql))
        except Exception as e:
            conn.terminate()
            self._later()
            raise DatabaseError(f"sampler cannot query the database: {e}") from None
        self._conn = conn

    def _close_conn(self, conn) -> None:
        conn.terminate()

    def _fetch(self) -> tuple:
        with self.lock:
            sent = time.monotonic_ns()
            row = self._loop.run_until_complete(self._stmt.fetchrow(timeout=self.query_timeout))
            if self._database == self._workload_db:
                self._sent.append(sent)
        return tuple(row)

    def transactions_between(self, t0_ns: int, t1_ns: int) -> int:
        """The samples counted in the workload database's row that were sent between two
        instants taken under ``lock`` (0 when the sampler is connected elsewhere)."""
        with self.lock:
            return sum(t0_ns < t < t1_ns for t in self._sent)

    def describe(self) -> dict:
        return {"server_version_num": self._version,
                "checkpoints_from": checkpoints_from(self._version) if self._version else None,
                "front_from": _for(FRONT_FROM, self._version) if self._version else None,
                "connected_to": self._database,
                "counts_in_workload_database": (self._database == self._workload_db
                                                if self._database else None)}

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if self._loop is None:
            return
        try:
            if conn is not None:
                self._loop.run_until_complete(conn.close(timeout=2.0))
        except Exception:
            try:
                conn.terminate()
            except Exception:
                pass
        finally:
            try:
                self._loop.close()
            except Exception:
                pass
            self._loop = None

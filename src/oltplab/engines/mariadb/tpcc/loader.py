"""``build`` on MariaDB: create, load and key the TPC-C-derived schema [TPC-C 4.3].

The rows are those of the PostgreSQL build: the same generator (population.py, driven by the
PostgreSQL loader's chunk sequence), whose COPY text is also MariaDB's LOAD DATA format (tab
between fields, newline after rows, ``\\N`` for NULL, backslash escapes). Two ways in:

- ``infile`` (the default): ``LOAD DATA LOCAL INFILE`` reading a pipe that a thread fills
  with the generator's chunks, one statement per run of chunks of a table;
- ``insert``: HammerDB's way, multi-row ``INSERT`` of 1,000 rows, a commit each.

At W=1 on 2 cores, ``insert`` took 3.2 times as long as ``infile`` (docs/design.md).
Steps: drop (with force) and create the tables with their primary keys, load, add the
secondary keys, ANALYZE TABLE, install the procedures, record the build in ``tpcc_meta``.
``build_users`` processes load contiguous chunks of warehouses at once, ITEM in the last.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import random as _random
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from decimal import Decimal

from .... import __version__
from ....config import BuildSpec
from ....errors import DatabaseError, SchemaError, UsageError
from ....workloads.tpcc.chunks import READ_AHEAD, LoadJob, load_jobs, produce
from ....workloads.tpcc.random import load_constants
from ....workloads.tpcc.schema import META_TABLE, TABLES
from .. import client
from .schema import PROCEDURES, sql_statements, sql_text

METHODS = ("infile", "insert")
INSERT_BATCH = 1_000  # rows per INSERT, as HammerDB

_LOAD_SQL = ("LOAD DATA LOCAL INFILE '{path}' INTO TABLE {table} CHARACTER SET utf8mb4"
             " FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n'")


def procedure_statements() -> list[str]:
    """The statements of sql/procedures.sql, separated there by lines holding '//'."""
    text = sql_text("procedures")
    parts, current = [], []
    for line in text.splitlines():
        if line.strip() == "//":
            parts.append("\n".join(current).strip())
            current = []
        elif not line.lstrip().startswith("--"):
            current.append(line)
    return [p for p in parts if p]


def _execute_all(conn, statements) -> None:
    with conn.cursor() as cur:
        for statement in statements:
            cur.execute(statement)


def _prepare(dsn: str, force: bool) -> str:
    """Refuse (or, forced, drop) an existing schema, create the tables; the load time."""
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT DATABASE()")
            dbname = cur.fetchone()[0]
            if dbname is None:
                raise UsageError("the MariaDB DSN names no database")
            found = cur.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"
                " AND table_name IN %s UNION ALL SELECT routine_name FROM"
                " information_schema.routines WHERE routine_schema = %s AND routine_name IN %s",
                (dbname, [*TABLES, META_TABLE], dbname, list(PROCEDURES)))
            if found and not force:
                raise SchemaError(f"database {dbname} already holds a TPC-C schema ({found} of "
                                  "its tables and procedures): pass --force to drop and rebuild it")
            _execute_all(conn, sql_statements("drop") + sql_statements("tables"))
            cur.execute("SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')")
            return cur.fetchone()[0]
    except client.Error as exc:
        raise DatabaseError(f"preparing the schema failed: {client.error_text(exc)}") from exc
    finally:
        conn.close()


class _Chunks:
    """The generator thread's chunks of one job, read one at a time."""

    def __init__(self, job: LoadJob):
        self.queue: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=produce, args=(job, self.queue, self.stop),
                                       daemon=True)
        self.thread.start()

    def next(self):
        item = self.queue.get()
        if isinstance(item, BaseException):
            raise item
        return item


def _load_infile(conn, chunks: _Chunks, rows: Counter) -> None:
    """Each run of chunks of one table through a pipe, as one LOAD DATA LOCAL INFILE."""
    item = chunks.next()
    while item is not None:
        table = item[0]
        if not table:  # a finished warehouse
            item = chunks.next()
            continue
        read_fd, write_fd = os.pipe()
        feed: dict = {"next": None, "error": None}

        def write(first=item, table=table, write_fd=write_fd, feed=feed):
            current = first
            try:
                with open(write_fd, "wb") as pipe:
                    while current is not None and current[0] == table:
                        pipe.write(current[1])
                        rows[table] += current[2]
                        current = chunks.next()
            except BrokenPipeError:  # the statement failed before reading everything
                pass
            except BaseException as exc:  # the generator's error, raised below
                feed["error"] = exc
            feed["next"] = current

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        try:
            with conn.cursor() as cur:
                cur.execute(_LOAD_SQL.format(path=f"/dev/fd/{read_fd}", table=table))
        finally:
            os.close(read_fd)
            writer.join()
        if feed["error"] is not None:
            raise feed["error"]
        item = feed["next"]


def _fields(line: str) -> list[str | None]:
    return [None if f == "\\N" else f for f in line.split("\t")]


def _load_insert(conn, chunks: _Chunks, rows: Counter) -> None:
    """Each chunk as multi-row INSERTs of INSERT_BATCH rows, each its own commit."""
    with conn.cursor() as cur:
        item = chunks.next()
        while item is not None:
            table, text, _ = item
            if table:
                lines = text.decode("utf-8").splitlines()
                marks = ", ".join(["%s"] * len(lines[0].split("\t")))
                sql = f"INSERT INTO {table} VALUES ({marks})"
                for first in range(0, len(lines), INSERT_BATCH):
                    cur.executemany(sql, [_fields(ln) for ln in lines[first:first + INSERT_BATCH]])
                rows[table] += len(lines)
            item = chunks.next()


def _load(job: LoadJob, method: str) -> dict:
    """One worker: the chunks of its warehouses (and ITEM), loaded with ``method``."""
    rows: Counter = Counter()
    # LOAD DATA LOCAL lets the server ask for any file of ours: on for these sessions only
    conn = client.connect(job.dsn, local_infile=method == "infile")
    chunks = _Chunks(job)
    try:
        (_load_infile if method == "infile" else _load_insert)(conn, chunks, rows)
    except client.Error as exc:
        raise DatabaseError(f"loading {'ITEM and ' if job.load_item else ''}warehouses "
                            f"{job.first_w}-{job.last_w} failed: {client.error_text(exc)}") from exc
    finally:
        chunks.stop.set()
        conn.close()
    return dict(rows)


def _run_jobs(jobs: list[LoadJob], method: str) -> Counter:
    if len(jobs) == 1:
        return Counter(_load(jobs[0], method))
    ctx = multiprocessing.get_context("fork" if threading.active_count() == 1 else "spawn")
    rows: Counter = Counter()
    with ProcessPoolExecutor(len(jobs), mp_context=ctx) as pool:
        for done in pool.map(_load, jobs, [method] * len(jobs)):
            rows.update(done)
    return rows


def _finish(dsn: str, meta: dict, started: float, progress) -> None:
    """Secondary keys, statistics, procedures, then the build's record (a complete build)."""
    conn = client.connect(dsn)
    try:
        keys = sql_statements("keys")
        for k, statement in enumerate(keys, 1):
            _execute_all(conn, [statement])
            if progress:
                progress("indexes", k, len(keys))
        _execute_all(conn, [f"ANALYZE TABLE {', '.join(TABLES)}"])
        if progress:
            progress("analyze", len(TABLES), len(TABLES))
        _execute_all(conn, procedure_statements())
        with conn.cursor() as cur:
            cur.execute(
                f"INSERT INTO {META_TABLE} (warehouses, c_last_load, c_id_load, c_ol_i_id_load,"
                " seed, build_users, build_seconds, oltplab_version)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (meta["warehouses"], meta["c_last_load"], meta["c_id_load"],
                 meta["c_ol_i_id_load"], meta["seed"], meta["build_users"],
                 Decimal(f"{time.monotonic() - started:.3f}"), __version__))
    except client.Error as exc:
        raise DatabaseError(f"building keys and procedures failed: {client.error_text(exc)}") \
            from exc
    finally:
        conn.close()


def build(dsn: str, spec: BuildSpec, progress=None, method: str = "infile") -> dict:
    """Build the schema with ``spec.warehouses`` warehouses on MariaDB; returns the summary
    the PostgreSQL build returns (warehouses, build_users, seed, seconds, phases, rows,
    constants) and the load method."""
    if spec.warehouses < 1:
        raise UsageError("--warehouses must be at least 1")
    if spec.build_users < 1:
        raise UsageError("--build-users must be at least 1")
    if method not in METHODS:
        raise UsageError(f"load method {method!r} is not one of {', '.join(METHODS)}")
    reproducible = spec.seed is not None
    seed = spec.seed if reproducible else _random.SystemRandom().randrange(2**62)
    c_last, c_id, c_ol_i_id = load_constants(_random.Random(f"oltplab-tpcc:{seed}:constants"))
    started = time.monotonic()
    if progress:
        progress("tables", 0, 1)
    now = _prepare(dsn, spec.force)
    if progress:
        progress("tables", 1, 1)
    jobs = load_jobs(dsn, spec.warehouses, spec.build_users, seed, reproducible, c_last, now)
    t_load = time.monotonic()
    rows = _run_jobs(jobs, method)
    if progress:
        progress("load", sum(rows.values()), sum(rows.values()))
    t_finish = time.monotonic()
    meta = dict(warehouses=spec.warehouses, c_last_load=c_last, c_id_load=c_id,
                c_ol_i_id_load=c_ol_i_id, seed=spec.seed, build_users=spec.build_users)
    _finish(dsn, meta, started, progress)
    ended = time.monotonic()
    return {
        "warehouses": spec.warehouses,
        "build_users": spec.build_users,
        "seed": spec.seed,
        "method": method,
        "seconds": round(ended - started, 3),
        "phases": {"tables": round(t_load - started, 3), "load": round(t_finish - t_load, 3),
                   "indexes_and_analyze": round(ended - t_finish, 3)},
        "rows": {t: rows.get(t, 0) for t in TABLES},
        "constants": {"c_last_load": c_last, "c_id_load": c_id, "c_ol_i_id_load": c_ol_i_id},
    }

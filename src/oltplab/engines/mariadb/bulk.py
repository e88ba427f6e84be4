"""Bulk loading on MariaDB, the same for every workload's loader (tpcc/, dvds/).

A workload's loading process makes its rows in chunks of PostgreSQL's COPY text, which is also
MariaDB's LOAD DATA format (tab between fields, newline after rows, ``\\N`` for NULL,
backslash escapes), in a generator thread ahead of the statements (``Chunks``: the workload's
``produce(job, queue, stop)`` of workloads/<name>/chunks.py, whose items are (table, bytes,
rows), ("", ...) where a chunk ends, then None). Two ways in:

- ``load_infile``: ``LOAD DATA LOCAL INFILE`` reading a pipe that a thread fills with the
  chunks, one statement per run of chunks of a table;
- ``load_insert``: HammerDB's way, multi-row ``INSERT`` of INSERT_BATCH rows, a commit each.

``load_job`` is one loading process's work, ``run_jobs`` runs one per job, in as many
processes; the stored programs of an SQL file are separated by lines holding '//'
(``procedure_statements``); ``record_build`` writes the row that marks a complete build.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from decimal import Decimal

from ... import __version__
from ...errors import DatabaseError
from ...workloads.chunks import READ_AHEAD
from . import client

INSERT_BATCH = 1_000  # rows per INSERT, as HammerDB

_LOAD_SQL = ("LOAD DATA LOCAL INFILE '{path}' INTO TABLE {table} CHARACTER SET utf8mb4"
             " FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n'")


def procedure_statements(text: str) -> list[str]:
    """The statements of an SQL file's ``text``, separated there by lines holding '//'
    (comment lines dropped)."""
    parts, current = [], []
    for line in text.splitlines():
        if line.strip() == "//":
            parts.append("\n".join(current).strip())
            current = []
        elif not line.lstrip().startswith("--"):
            current.append(line)
    return [p for p in parts if p]


def prepare_schema(dsn: str, setting: str, check: Callable, statements: list[str]):
    """A build's first step on the database of ``dsn``: its name and the server's ``setting``
    (``SELECT DATABASE(), @@setting``), ``check(cursor, dbname, value)`` (which raises to
    refuse the build), then ``statements`` (the drops and the tables); the setting's value.
    UsageError without a database; DatabaseError for the server's errors."""
    from ...errors import UsageError
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT DATABASE(), @@{setting}")
            dbname, value = cur.fetchone()
            if dbname is None:
                raise UsageError("the MariaDB DSN names no database")
            check(cur, dbname, value)
        execute_all(conn, statements)
        return value
    except client.Error as exc:
        raise DatabaseError(f"preparing the schema failed: {client.error_text(exc)}") from exc
    finally:
        conn.close()


def execute_all(conn, statements: Iterable[str]) -> None:
    with conn.cursor() as cur:
        for statement in statements:
            cur.execute(statement)


class Chunks:
    """The generator thread's items of one job (``produce(job, queue, stop)``), read one at a
    time with ``next``; ``stop`` ends the thread early."""

    def __init__(self, job, produce: Callable):
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


def items(*loads: tuple[str, bytes, int]) -> Callable:
    """A ``next`` over the (table, bytes, rows) given, then None: rows made at once."""
    it = iter(loads)
    return lambda: next(it, None)


def load_infile(conn, next_item: Callable, rows: Counter) -> None:
    """Each run of items of one table through a pipe, as one LOAD DATA LOCAL INFILE (the
    session must allow it: client.connect(..., local_infile=True)); ``rows`` counts them."""
    item = next_item()
    while item is not None:
        table = item[0]
        if not table:  # the end of a chunk
            item = next_item()
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
                        current = next_item()
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


def load_insert(conn, next_item: Callable, rows: Counter) -> None:
    """Each item as multi-row INSERTs of INSERT_BATCH rows, each its own commit."""
    with conn.cursor() as cur:
        item = next_item()
        while item is not None:
            table, text, _ = item
            if table:
                lines = text.decode("utf-8").splitlines()
                marks = ", ".join(["%s"] * len(lines[0].split("\t")))
                sql = f"INSERT INTO {table} VALUES ({marks})"
                for first in range(0, len(lines), INSERT_BATCH):
                    cur.executemany(sql, [_fields(ln) for ln in lines[first:first + INSERT_BATCH]])
                rows[table] += len(lines)
            item = next_item()


def load_job(job, produce: Callable, what: str, method: str = "infile") -> Counter:
    """One loading process: the items ``produce`` makes of ``job`` (on ``job.dsn``), loaded
    with ``method`` (infile or insert); the rows loaded per table. DatabaseError "loading
    <what> failed: ..." when the server refuses them."""
    rows: Counter = Counter()
    # LOAD DATA LOCAL lets the server ask for any file of ours: on for these sessions only
    conn = client.connect(job.dsn, local_infile=method == "infile")
    chunks = Chunks(job, produce)
    try:
        (load_infile if method == "infile" else load_insert)(conn, chunks.next, rows)
    except client.Error as exc:
        raise DatabaseError(f"loading {what} failed: {client.error_text(exc)}") from exc
    finally:
        chunks.stop.set()
        conn.close()
    return rows


def record_build(conn, meta_table: str, record: dict, started: float) -> None:
    """The build's record, ``record`` by column with the build's seconds (since ``started``,
    monotonic) and oltplab's version, into ``meta_table``: written last, it marks a complete
    build."""
    columns = [*record, "build_seconds", "oltplab_version"]
    with conn.cursor() as cur:
        cur.execute(f"INSERT INTO {meta_table} ({', '.join(columns)})"
                    f" VALUES ({', '.join(['%s'] * len(columns))})",
                    (*record.values(), Decimal(f"{time.monotonic() - started:.3f}"),
                     __version__))


def run_jobs(load: Callable, jobs: list, *args) -> list:
    """``load(job, *args)`` for each job, each in a process of its own (one job: in this
    one); their answers, in the jobs' order."""
    if len(jobs) == 1:
        return [load(jobs[0], *args)]
    # fork is quick and safe while this process has a single thread; otherwise spawn
    ctx = multiprocessing.get_context("fork" if threading.active_count() == 1 else "spawn")
    with ProcessPoolExecutor(len(jobs), mp_context=ctx) as pool:
        return list(pool.map(load, jobs, *([a] * len(jobs) for a in args)))

"""The build of a workload's schema on PostgreSQL, as far as it is the same for every workload;
each dialect's loader.py (tpcc/, dvds/) keeps its workload's own parts: its load jobs and
chunks (workloads/<name>/chunks.py), what it checks before it drops a schema, what it loads
itself, its build's record. Steps, each reported through ``progress(event, done, total)``
from the calling process:

1. ``replace_schema``: refuse an existing schema unless forced (then drop it) and create the
   tables (sql/tables.sql, without keys, autovacuum off while loading), in a transaction
   committed before the workers start: several workers fill each table, so the server cannot
   skip WAL for them even under wal_level=minimal.
2. ``run_workers``: one worker process per load job loads the job's chunks over COPY, in one
   transaction. In a worker, a thread makes the COPY text (the workload's ``produce``,
   workloads/chunks.py) while the event loop streams the previous chunk, so generator and
   server work at the same time. Progress: ``load`` (rows loaded, of an expected total) and
   the workload's mark (``warehouses``, ``chunks``: the ("", "", value) items of the chunks
   done, of all).
3. ``finish``: ``analyze`` (tables done) and ``indexes`` (indexes built): per table, VACUUM
   (FREEZE, ANALYZE) and then its indexes of sql/keys.sql, in ``build_users`` sessions at
   once with a raised ``maintenance_work_mem``. Then, in one transaction: the rest of keys.sql
   (primary and foreign keys), the workload's own statements, sql/functions.sql, autovacuum
   back on, and the build's record, which marks a complete build.

Ctrl-C (KeyboardInterrupt) in the calling process stops the worker processes at once (they
ignore SIGINT themselves) and is re-raised; workers also stop when the calling process dies.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import asyncpg

from ... import __version__
from ...errors import DatabaseError, OltplabError, SchemaError
from ...workloads.chunks import READ_AHEAD
from ..common import sqlfiles
from .catalog import connection, failing, functions_present, present

#: Per-session memory for index builds (each of build_users sessions at once).
MAINTENANCE_WORK_MEM = "256MB"


@dataclass(frozen=True)
class Schema:
    """A workload's schema as the build makes it: the sql/ files of the dialect ``package``
    (tables, keys, functions), its ``tables``, the same ``by_size`` (largest first: the order
    the index builds take them in), the build's record ``meta_table``, the transaction
    ``functions`` and the ``helpers`` functions.sql makes beside them, and its ``label`` as
    messages name it ("TPC-C"); ``parts``: optional parts whose ``<part>_<name>.sql`` files
    follow each file (the shop's ``ds3``); ``dropped``: tables a rebuild drops beside its own
    (those of the parts it does not build)."""

    package: str
    label: str
    tables: tuple[str, ...]
    by_size: tuple[str, ...]
    meta_table: str
    functions: tuple[str, ...]
    helpers: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()

    def _files(self, name: str) -> list[str]:
        """``name`` and, for each of ``parts``, ``<part>_<name>`` when the package has it."""
        return [name, *(f"{part}_{name}" for part in self.parts
                        if sqlfiles.has_file(self.package, f"{part}_{name}"))]

    def sql_text(self, name: str) -> str:
        return "\n".join(sqlfiles.sql_text(self.package, f) for f in self._files(name))

    def sql_statements(self, name: str) -> list[str]:
        return [s for f in self._files(name) for s in sqlfiles.sql_statements(self.package, f)]


@dataclass(frozen=True)
class Load:
    """How the workers load a workload's jobs (its ``LoadJob``: ``dsn``, ``worker``,
    ``parent_pid``), made of module-level functions, so that a spawned worker gets it too:
    ``produce(job, out, stop)``, the thread that makes a job's chunks; ``mark``, the progress
    event of their ("", "", value) items; ``describe(job)``, the job as messages name it;
    ``result(job)``, what a worker sends back beside its rows once loaded (None: nothing)."""

    produce: Callable[..., None]
    mark: str
    describe: Callable[[Any], str]
    result: Callable[[Any], Any] | None = None


# ------------------------------------------------------------------------------------------
# 1. The tables

async def _drop(conn: asyncpg.Connection, schema: Schema) -> None:
    """Drop what the build makes: the tables, the record, and every routine of the functions'
    and helpers' names, whatever its arguments (another kit's of the same name too)."""
    tables = [*schema.tables, *schema.dropped, schema.meta_table]
    await conn.execute(f"DROP TABLE IF EXISTS {', '.join(tables)} CASCADE")
    for (routine,) in await conn.fetch(
            "SELECT oid::regprocedure::text FROM pg_proc WHERE proname = ANY($1::text[])"
            " AND pronamespace = current_schema()::regnamespace",
            [*schema.functions, *schema.helpers]):
        await conn.execute(f"DROP ROUTINE {routine}")


async def replace_schema(conn: asyncpg.Connection, schema: Schema, force: bool) -> None:
    """Refuse a database that holds some of the schema's tables or functions unless
    ``force``; then drop the schema and create its tables, in one transaction."""
    existing = await present(conn, [*schema.tables, schema.meta_table])
    functions = await functions_present(conn, schema.functions)
    if (existing or functions) and not force:
        found = ", ".join(part for part in (
            f"{len(existing)} of its tables" if existing else "",
            f"{len(functions)} of its functions" if functions else "") if part)
        dbname = await conn.fetchval("SELECT current_database()")
        raise SchemaError(f"database {dbname} already holds a {schema.label} schema ({found}): "
                          "pass --force to drop and rebuild it")
    async with conn.transaction():
        await _drop(conn, schema)
        await conn.execute(schema.sql_text("tables"))


# ------------------------------------------------------------------------------------------
# 2. The workers

async def _stream(job, load: Load, events) -> Counter:
    """One worker: stream the chunks of its job into the database in one transaction."""
    rows = Counter()
    chunks: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
    stop = threading.Event()
    producer = threading.Thread(target=load.produce, args=(job, chunks, stop), daemon=True)
    loop = asyncio.get_running_loop()

    async def next_chunk():
        item = await loop.run_in_executor(None, chunks.get)
        if isinstance(item, BaseException):
            raise item
        if os.getppid() != job.parent_pid:
            raise OltplabError("the build process is gone")
        return item

    conn = await asyncpg.connect(job.dsn)
    try:
        # One commit per worker, so synchronous_commit stays on: the commit record is on disk
        # when the worker reports, and the VACUUM that follows can mark every page all-visible
        # (hint bits wait for the commit record to be flushed).
        producer.start()
        async with conn.transaction():
            item = await next_chunk()
            while item is not None:
                table = item[0]
                if not table:
                    events.put(("mark", job.worker, item[2]))
                    item = await next_chunk()
                    continue

                async def source():
                    nonlocal item
                    while item is not None and item[0] == table:
                        yield item[1]
                        rows[table] += item[2]
                        events.put(("rows", job.worker, item[2]))
                        item = await next_chunk()

                await conn.copy_to_table(table, source=source(), format="text")
    finally:
        stop.set()
        await conn.close()
    return rows


def _worker_main(job, load: Load, events) -> None:
    """Entry point of a worker process. The parent handles Ctrl-C and stops the workers with
    SIGTERM, which must kill at once (a forked worker inherits the parent's handlers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        rows = asyncio.run(_stream(job, load, events))
    except BaseException as exc:
        events.put(("error", job.worker, f"{type(exc).__name__}: {exc}".strip()))
        return
    events.put(("done", job.worker, (dict(rows), load.result(job) if load.result else None)))


def _stop_workers(procs) -> None:
    procs = [p for p in procs if p.pid is not None]  # started ones
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 3.0
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join()


def run_workers(jobs: Sequence, load: Load, progress, rows_total: int,
                marks_total: int) -> tuple[Counter, list]:
    """Load the jobs, a worker process each; returns the rows loaded per table and the
    workers' ``load.result``s (in the order they finished). Progress: ``load`` (rows, of
    ``rows_total``: it does not report the end, which is the caller's) and ``load.mark``
    (of ``marks_total``)."""
    # fork is quick and safe while this process has a single thread; otherwise spawn (which,
    # as always with multiprocessing, needs the main module to guard its entry point).
    method = "fork" if threading.active_count() == 1 else "spawn"
    ctx = multiprocessing.get_context(method)
    events = ctx.Queue()
    procs = [ctx.Process(target=_worker_main, args=(job, load, events), daemon=True,
                         name=f"oltplab-build-{job.worker}") for job in jobs]
    rows, results = Counter(), []
    loaded = marks = 0
    finished = set()
    try:
        for p in procs:
            p.start()
        while len(finished) < len(procs):
            try:
                kind, worker, value = events.get(timeout=0.25)
            except queue.Empty:
                for job, p in zip(jobs, procs):
                    if job.worker not in finished and not p.is_alive() and p.exitcode != 0:
                        raise DatabaseError(f"the process loading {load.describe(job)} died "
                                            f"(exit code {p.exitcode})")
                continue
            if kind == "rows":
                loaded += value
                if progress:
                    progress("load", min(loaded, rows_total), rows_total)
            elif kind == "mark":
                marks += 1
                if progress:
                    progress(load.mark, marks, marks_total)
            elif kind == "done":
                finished.add(worker)
                rows.update(value[0])
                results.append(value[1])
            else:
                raise DatabaseError(f"loading {load.describe(jobs[worker])} failed: {value}")
    except BaseException:
        _stop_workers(procs)
        raise
    finally:
        for p in procs:
            if p.pid is not None:
                p.join(5.0)
        events.close()
    return rows, results


# ------------------------------------------------------------------------------------------
# 3. Indexes, keys, functions and the build's record

def _table_of(statement: str) -> str:
    """The table a CREATE INDEX statement works on ('... ON table (...)')."""
    return statement.split(" ON ", 1)[1].split()[0]


async def _index_and_analyze(dsn: str, schema: Schema, sessions: int, progress) -> None:
    """VACUUM (FREEZE, ANALYZE) every table, then build its indexes of keys.sql, in up to
    ``sessions`` sessions at once.

    A session takes a whole table at a time, largest first: work on one table never waits for
    a lock held by another session, and the sessions stay busy until the end.
    The VACUUM costs little while the pages are still in memory, right after the load (about
    0.4 s for TPC-C at W=4), and it spares the runs: no autovacuum backlog when the first run
    starts, no hint bits written by the first reads, and no anti-wraparound vacuum of the
    loaded rows during a long series of runs, since they are frozen. The index builds read
    settled pages.
    """
    creates = [s for s in schema.sql_statements("keys") if s.upper().startswith("CREATE")]
    groups = {table: [f"VACUUM (FREEZE, ANALYZE) {table}"] for table in schema.by_size}
    for statement in creates:
        groups[_table_of(statement)].append(statement)
    todo = [groups[table] for table in reversed(schema.by_size)]
    counts = {"indexes": [0, len(creates)], "analyze": [0, len(schema.by_size)]}

    async def session():
        async with connection(dsn) as conn:
            await conn.execute(f"SET maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'")
            while todo:
                for statement in todo.pop():
                    await conn.execute(statement)
                    event = "analyze" if statement.startswith("VACUUM") else "indexes"
                    counts[event][0] += 1
                    if progress:
                        progress(event, *counts[event])

    await asyncio.gather(*(session() for _ in range(max(1, min(sessions, len(todo))))))


async def finish(dsn: str, schema: Schema, sessions: int, progress, started: float,
                 record: dict, steps: Sequence[tuple[str, Sequence]] = ()) -> None:
    """Step 3: ``steps`` are the workload's own statements (with their arguments), run after
    the keys; ``record`` the build's record by column, to which the build's seconds (since
    ``started``, monotonic) and oltplab's version are added."""
    attaches = [s for s in schema.sql_statements("keys") if not s.upper().startswith("CREATE")]
    columns = [*record, "build_seconds", "oltplab_version"]
    insert = (f"INSERT INTO {schema.meta_table} ({', '.join(columns)})"
              f" VALUES ({', '.join(f'${n}' for n in range(1, len(columns) + 1))})")
    with failing("building keys and functions failed"):
        await _index_and_analyze(dsn, schema, sessions, progress)
        async with connection(dsn) as conn, conn.transaction():
            for statement in attaches:
                await conn.execute(statement)
            for statement, args in steps:
                await conn.execute(statement, *args)
            await conn.execute(schema.sql_text("functions"))
            for table in schema.tables:
                await conn.execute(f"ALTER TABLE {table} RESET (autovacuum_enabled)")
            await conn.execute(insert, *record.values(),
                               Decimal(f"{time.monotonic() - started:.3f}"), __version__)

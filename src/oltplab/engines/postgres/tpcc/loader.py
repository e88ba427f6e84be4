"""``oltplab tpcc build``: create, load and index the TPC-C-derived schema [TPC-C 4.3].

Steps, each reported through ``progress(event, done, total)`` from the calling process:

1. ``tables`` (0/1, 1/1): refuse an existing schema unless forced (then drop it); create the
   nine tables without keys, autovacuum off while loading.
2. ``load`` (rows loaded, of an expected total) and ``warehouses`` (warehouses finished):
   ``build_users`` worker processes each load a contiguous chunk of warehouses over COPY, in one
   transaction each; ITEM is loaded once, by a spare worker when there is one, else by the
   last (which has the fewest warehouses). In a worker, a thread generates COPY text
   (population.py) while the event loop streams the previous chunk, so generator and server
   work at the same time.
3. ``analyze`` (tables done) and ``indexes`` (indexes built): per table, VACUUM (FREEZE,
   ANALYZE) and then the keys and indexes of keys.sql, in ``build_users`` sessions at once
   with a raised ``maintenance_work_mem``. Then, in one transaction: primary keys, the transaction functions,
   autovacuum back on, and the build's record in ``tpcc_meta`` (warehouses, the C constants drawn
   at load [2.1.6.1], seed, build time, oltplab version). That row marks a complete build.

The tables are created before the workers start, in a committed transaction, because several
workers fill each table: the server cannot skip WAL for them even under wal_level=minimal.

Ctrl-C (KeyboardInterrupt) in the calling process stops the worker processes at once (they
ignore SIGINT themselves) and is re-raised; workers also stop when the calling process dies.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import queue
import random as _random
import signal
import threading
import time
from collections import Counter
from decimal import Decimal

import asyncpg

from .... import __version__
from ....config import BuildSpec
from ....errors import DatabaseError, OltplabError, SchemaError, UsageError
from ....workloads.tpcc import population as pop
from ....workloads.tpcc.chunks import READ_AHEAD, ROWS_PER_WAREHOUSE, LoadJob, load_jobs, produce
from ....workloads.tpcc.random import load_constants
from .schema import FUNCTIONS, META_TABLE, TABLES, sql_statements, sql_text

#: Per-session memory for index builds (each of build_users sessions at once).
MAINTENANCE_WORK_MEM = "256MB"
#: Server encodings that hold every character of the a-string alphabet.
ENCODINGS = ("UTF8", "LATIN1", "WIN1252", "SQL_ASCII")

#: Tables, largest first.
_BY_SIZE = ("order_line", "stock", "customer", "history", "orders", "item", "new_order",
            "district", "warehouse")


async def _load(job: LoadJob, events) -> Counter:
    """One worker: stream the chunks of its warehouses into the database in one transaction."""
    rows = Counter()
    chunks: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
    stop = threading.Event()
    producer = threading.Thread(target=produce, args=(job, chunks, stop), daemon=True)
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
                    events.put(("warehouse", job.worker, item[2]))
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


def _worker_main(job: LoadJob, events) -> None:
    """Entry point of a worker process. The parent handles Ctrl-C and stops the workers with
    SIGTERM, which must kill at once (a forked worker inherits the parent's handlers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        rows = asyncio.run(_load(job, events))
    except BaseException as exc:
        events.put(("error", job.worker, f"{type(exc).__name__}: {exc}".strip()))
        return
    events.put(("done", job.worker, dict(rows)))


def _what(job: LoadJob) -> str:
    if job.last_w < job.first_w:
        return "ITEM"
    return f"warehouses {job.first_w}-{job.last_w}"


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


def _run_workers(jobs: list[LoadJob], progress, rows_total: int) -> Counter:
    # fork is quick and safe while this process has a single thread; otherwise spawn (which,
    # as always with multiprocessing, needs the main module to guard its entry point).
    method = "fork" if threading.active_count() == 1 else "spawn"
    ctx = multiprocessing.get_context(method)
    events = ctx.Queue()
    procs = [ctx.Process(target=_worker_main, args=(job, events), daemon=True,
                         name=f"oltplab-build-{job.worker}") for job in jobs]
    rows = Counter()
    loaded = warehouses_done = 0
    finished = set()
    warehouses_total = sum(max(0, j.last_w - j.first_w + 1) for j in jobs)
    try:
        for p in procs:
            p.start()
        while len(finished) < len(procs):
            try:
                kind, worker, value = events.get(timeout=0.25)
            except queue.Empty:
                for job, p in zip(jobs, procs):
                    if job.worker not in finished and not p.is_alive() and p.exitcode != 0:
                        raise DatabaseError(f"the process loading {_what(job)} died "
                                            f"(exit code {p.exitcode})")
                continue
            if kind == "rows":
                loaded += value
                if progress:
                    progress("load", min(loaded, rows_total), rows_total)
            elif kind == "warehouse":
                warehouses_done += 1
                if progress:
                    progress("warehouses", warehouses_done, warehouses_total)
            elif kind == "done":
                finished.add(worker)
                rows.update(value)
            else:
                raise DatabaseError(f"loading {_what(jobs[worker])} failed: {value}")
    except BaseException:
        _stop_workers(procs)
        raise
    finally:
        for p in procs:
            if p.pid is not None:
                p.join(5.0)
        events.close()
    if progress:
        progress("load", sum(rows.values()), sum(rows.values()))
    return rows


async def _connect(dsn: str) -> asyncpg.Connection:
    try:
        return await asyncpg.connect(dsn)
    except (OSError, asyncpg.PostgresError) as exc:
        raise DatabaseError(f"cannot connect to the database: {exc}") from exc


async def _prepare(dsn: str, force: bool) -> str:
    """Check the database, drop an old schema if forced, create the tables.

    Returns the load time (the server's clock) as COPY text."""
    conn = await _connect(dsn)
    try:
        dbname = await conn.fetchval("SELECT current_database()")
        encoding = await conn.fetchval("SHOW server_encoding")
        if encoding.upper() not in ENCODINGS:
            raise DatabaseError(f"database {dbname} uses encoding {encoding}; the loader needs "
                                f"one of {', '.join(ENCODINGS)}")
        existing = await conn.fetch(
            "SELECT relname FROM pg_class WHERE relname = ANY($1::text[])"
            " AND relnamespace = current_schema()::regnamespace ORDER BY relname",
            [*TABLES, META_TABLE])
        functions = await conn.fetch(
            "SELECT DISTINCT proname FROM pg_proc WHERE proname = ANY($1::text[])"
            " AND pronamespace = current_schema()::regnamespace", list(FUNCTIONS))
        if (existing or functions) and not force:
            found = ", ".join(part for part in (
                f"{len(existing)} of its tables" if existing else "",
                f"{len(functions)} of its functions" if functions else "") if part)
            raise SchemaError(f"database {dbname} already holds a TPC-C schema ({found}): "
                              "pass --force to drop and rebuild it")
        async with conn.transaction():
            await conn.execute(sql_text("drop"))
            await conn.execute(sql_text("tables"))
        return await conn.fetchval("SELECT localtimestamp(0)::text")
    except asyncpg.PostgresError as exc:
        raise DatabaseError(f"preparing the schema failed: {exc}") from exc
    finally:
        await conn.close()


def _table_of(statement: str) -> str:
    """The table a CREATE INDEX statement works on ('... ON table (...)')."""
    return statement.split(" ON ", 1)[1].split()[0]


async def _index_and_analyze(dsn: str, sessions: int, progress) -> None:
    """VACUUM (FREEZE, ANALYZE) every table, then build its indexes of keys.sql, in up to
    ``sessions`` sessions at once.

    A session takes a whole table at a time, largest first: work on one table never waits for
    a lock held by another session, and the sessions stay busy until the end.
    The VACUUM costs little while the pages are still in memory, right after the load (about
    0.4 s at W=4), and it spares the runs: no autovacuum backlog when the first run starts, no
    hint bits written by the first reads, and no anti-wraparound vacuum of the loaded rows
    during a long series of runs, since they are frozen. The index builds read settled pages.
    """
    creates = [s for s in sql_statements("keys") if s.upper().startswith("CREATE")]
    groups = {table: [f"VACUUM (FREEZE, ANALYZE) {table}"] for table in _BY_SIZE}
    for statement in creates:
        groups[_table_of(statement)].append(statement)
    todo = [groups[table] for table in reversed(_BY_SIZE)]
    counts = {"indexes": [0, len(creates)], "analyze": [0, len(_BY_SIZE)]}

    async def session():
        conn = await _connect(dsn)
        try:
            await conn.execute(f"SET maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'")
            while todo:
                for statement in todo.pop():
                    await conn.execute(statement)
                    event = "analyze" if statement.startswith("VACUUM") else "indexes"
                    counts[event][0] += 1
                    if progress:
                        progress(event, *counts[event])
        finally:
            await conn.close()

    await asyncio.gather(*(session() for _ in range(max(1, min(sessions, len(todo))))))


async def _finish(dsn: str, sessions: int, meta: dict, started: float, progress) -> None:
    attaches = [s for s in sql_statements("keys") if not s.upper().startswith("CREATE")]
    try:
        await _index_and_analyze(dsn, sessions, progress)
        conn = await _connect(dsn)
        try:
            async with conn.transaction():
                for statement in attaches:
                    await conn.execute(statement)
                await conn.execute(sql_text("functions"))
                for table in TABLES:
                    await conn.execute(f"ALTER TABLE {table} RESET (autovacuum_enabled)")
                await conn.execute(
                    f"INSERT INTO {META_TABLE} (warehouses, c_last_load, c_id_load, c_ol_i_id_load,"
                    " seed, build_users, build_seconds, oltplab_version)"
                    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    meta["warehouses"], meta["c_last_load"], meta["c_id_load"],
                    meta["c_ol_i_id_load"], meta["seed"], meta["build_users"],
                    Decimal(f"{time.monotonic() - started:.3f}"), __version__)
        finally:
            await conn.close()
    except asyncpg.PostgresError as exc:
        raise DatabaseError(f"building keys and functions failed: {exc}") from exc


def build(dsn: str, spec: BuildSpec, progress=None) -> dict:
    """Build the schema with ``spec.warehouses`` warehouses; returns a summary.

    Summary keys: warehouses, build_users, seed (spec.seed: None when the build is not meant to
    be reproducible; its random characters then come from ssl.RAND_bytes, which is faster),
    seconds, phases (seconds per step), rows (per table), constants (C_LAST, C_ID and OL_I_ID
    constants drawn at load [2.1.6]).
    """
    if spec.warehouses < 1:
        raise UsageError("--warehouses must be at least 1")
    if spec.build_users < 1:
        raise UsageError("--build-users must be at least 1")
    reproducible = spec.seed is not None
    seed = spec.seed if reproducible else _random.SystemRandom().randrange(2**62)
    c_last, c_id, c_ol_i_id = load_constants(_random.Random(f"oltplab-tpcc:{seed}:constants"))
    started = time.monotonic()
    if progress:
        progress("tables", 0, 1)
    now = asyncio.run(_prepare(dsn, spec.force))
    if progress:
        progress("tables", 1, 1)
    jobs = load_jobs(dsn, spec.warehouses, spec.build_users, seed, reproducible, c_last, now)
    t_load = time.monotonic()
    rows = _run_workers(jobs, progress, pop.ITEMS + spec.warehouses * ROWS_PER_WAREHOUSE)
    t_finish = time.monotonic()
    meta = dict(warehouses=spec.warehouses, c_last_load=c_last, c_id_load=c_id,
                c_ol_i_id_load=c_ol_i_id, seed=spec.seed, build_users=spec.build_users)
    asyncio.run(_finish(dsn, spec.build_users, meta, started, progress))
    ended = time.monotonic()
    return {
        "warehouses": spec.warehouses,
        "build_users": spec.build_users,
        "seed": spec.seed,
        "seconds": round(ended - started, 3),
        "phases": {"tables": round(t_load - started, 3), "load": round(t_finish - t_load, 3),
                   "indexes_and_analyze": round(ended - t_finish, 3)},
        "rows": {t: rows.get(t, 0) for t in TABLES},
        "constants": {"c_last_load": c_last, "c_id_load": c_id, "c_ol_i_id_load": c_ol_i_id},
    }

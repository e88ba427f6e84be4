"""``oltplab dvds build``: create, load and index the DVD-Store-derived schema.

Steps, each reported through ``progress(event, done, total)`` from the calling process:

1. ``tables`` (0/1, 1/1): refuse a database that holds the TPC-C-derived schema, and an
   existing DVD-Store-derived one unless forced (then drop it); create the eight tables
   without keys, autovacuum off while loading.
2. ``load`` (rows loaded, of an expected total: order lines are random) and ``chunks``
   (chunks finished, of all): ``build_users`` worker processes each load the chunks dealt to
   them (workloads/dvds/population.py ``share``) over COPY, in one transaction each. In a
   worker, a thread generates COPY text while the event loop streams the previous chunk, so
   generator and server work at the same time; each worker tallies the quantities its order
   lines order per product. Then this process adds the tallies up and loads INVENTORY (whose
   ``sales`` is that sum) and CATEGORIES.
3. ``analyze`` (tables done) and ``indexes`` (indexes built): per table, VACUUM (FREEZE,
   ANALYZE) and then its indexes of keys.sql, in ``build_users`` sessions at once with a
   raised ``maintenance_work_mem``. Then, in one transaction: primary and foreign keys, the
   serial sequences moved past the loaded ids, the transaction functions and the restock
   trigger, autovacuum back on, and the build's record in ``dvds_meta``, which marks a
   complete build.

Ctrl-C (KeyboardInterrupt) in the calling process stops the worker processes at once (they
ignore SIGINT themselves) and is re-raised; workers also stop when the calling process dies.
"""

from __future__ import annotations

import asyncio
import io
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
from ....errors import DatabaseError, OltplabError, SchemaError, UsageError
from ....workloads.dvds import population as pop
from ....workloads.dvds import words
from ....workloads.dvds.chunks import READ_AHEAD, LoadJob, load_jobs, produce
from ....workloads.dvds.schema import META_TABLE, TABLES, tpcc_schema_here
from .schema import TPCC_TABLES, connect, functions_present, present, sql_statements, sql_text

#: Per-session memory for index builds (each of build_users sessions at once).
MAINTENANCE_WORK_MEM = "256MB"

#: Tables, largest first.
_BY_SIZE = ("customers", "orderlines", "cust_hist", "orders", "products", "inventory",
            "categories", "reorder")


async def _load(job: LoadJob, events) -> Counter:
    """One worker: stream the chunks of its job into the database in one transaction."""
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
        producer.start()
        async with conn.transaction():
            item = await next_chunk()
            while item is not None:
                table = item[0]
                if not table:
                    events.put(("chunk", job.worker, item[2]))
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
    events.put(("done", job.worker, (dict(rows), job.sales)))


def _what(job: LoadJob) -> str:
    return f"{len(job.work)} chunk(s) from {job.work[0].table} {job.work[0].first}"


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


def _run_workers(jobs: list[LoadJob], progress, rows_total: int, sales: list[int]) -> Counter:
    """Run the jobs; returns the rows loaded per table and adds their tallies to ``sales``."""
    # fork is quick and safe while this process has a single thread; otherwise spawn (which,
    # as always with multiprocessing, needs the main module to guard its entry point).
    method = "fork" if threading.active_count() == 1 else "spawn"
    ctx = multiprocessing.get_context(method)
    events = ctx.Queue()
    procs = [ctx.Process(target=_worker_main, args=(job, events), daemon=True,
                         name=f"oltplab-build-{job.worker}") for job in jobs]
    rows = Counter()
    loaded = chunks_done = 0
    finished = set()
    chunks_total = sum(len(j.work) for j in jobs)
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
            elif kind == "chunk":
                chunks_done += 1
                if progress:
                    progress("chunks", chunks_done, chunks_total)
            elif kind == "done":
                finished.add(worker)
                rows.update(value[0])
                pop.add_sales(sales, value[1])
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
    return rows


async def _prepare(dsn: str, force: bool) -> None:
    """Check the database, drop an old schema if forced, create the tables."""
    conn = await connect(dsn)
    try:
        dbname = await conn.fetchval("SELECT current_database()")
        if await present(conn, TPCC_TABLES):
            raise tpcc_schema_here(dbname)
        existing = await present(conn, [*TABLES, META_TABLE])
        functions = await functions_present(conn)
        if (existing or functions) and not force:
            found = ", ".join(part for part in (
                f"{len(existing)} of its tables" if existing else "",
                f"{len(functions)} of its functions" if functions else "") if part)
            raise SchemaError(f"database {dbname} already holds a DVD-Store-derived schema "
                              f"({found}): pass --force to drop and rebuild it")
        async with conn.transaction():
            await conn.execute(sql_text("drop"))
            await conn.execute(sql_text("tables"))
    except asyncpg.PostgresError as exc:
        raise DatabaseError(f"preparing the schema failed: {exc}") from exc
    finally:
        await conn.close()


async def _load_rest(dsn: str, seed: int, size, sales: list[int]) -> Counter:
    """INVENTORY (from the tally of all order lines) and CATEGORIES, in one transaction."""
    conn = await connect(dsn)
    try:
        async with conn.transaction():
            for table, text in (("inventory", pop.inventory_rows(seed, size, sales)),
                                ("categories", pop.category_rows())):
                await conn.copy_to_table(table, source=io.BytesIO(text.encode("ascii")),
                                         format="text")
    except asyncpg.PostgresError as exc:
        raise DatabaseError(f"loading the inventory failed: {exc}") from exc
    finally:
        await conn.close()
    return Counter(inventory=size.products, categories=len(words.CATEGORIES))


def _table_of(statement: str) -> str:
    """The table a CREATE INDEX statement works on ('... ON table ...')."""
    return statement.split(" ON ", 1)[1].split()[0]


async def _index_and_analyze(dsn: str, sessions: int, progress) -> None:
    """VACUUM (FREEZE, ANALYZE) every table, then build its indexes of keys.sql, in up to
    ``sessions`` sessions at once, a whole table at a time, largest first (as the TPC-C
    loader does: work on one table never waits for a lock another session holds)."""
    creates = [s for s in sql_statements("keys") if s.upper().startswith("CREATE")]
    groups = {table: [f"VACUUM (FREEZE, ANALYZE) {table}"] for table in _BY_SIZE}
    for statement in creates:
        groups[_table_of(statement)].append(statement)
    todo = [groups[table] for table in reversed(_BY_SIZE)]
    counts = {"indexes": [0, len(creates)], "analyze": [0, len(_BY_SIZE)]}

    async def session():
        conn = await connect(dsn)
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
        conn = await connect(dsn)
        try:
            async with conn.transaction():
                for statement in attaches:
                    await conn.execute(statement)
                await conn.execute(
                    "SELECT setval(pg_get_serial_sequence('customers', 'customerid'), $1),"
                    " setval(pg_get_serial_sequence('orders', 'orderid'), $2)",
                    meta["customers"], meta["orders"])
                await conn.execute(sql_text("functions"))
                for table in TABLES:
                    await conn.execute(f"ALTER TABLE {table} RESET (autovacuum_enabled)")
                await conn.execute(
                    f"INSERT INTO {META_TABLE} (size, customers, orders_per_month, orders,"
                    " products, max_orderid, build_sales, seed, build_users, build_seconds,"
                    " oltplab_version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                    meta["size"], meta["customers"], meta["orders_per_month"], meta["orders"],
                    meta["products"], meta["orders"], meta["build_sales"], meta["seed"],
                    meta["build_users"], Decimal(f"{time.monotonic() - started:.3f}"),
                    __version__)
        finally:
            await conn.close()
    except asyncpg.PostgresError as exc:
        raise DatabaseError(f"building keys and functions failed: {exc}") from exc


def build(dsn: str, spec, progress=None) -> dict:
    """Build the schema of ``spec.size`` (a workloads.dvds.build.DvdsBuildSpec); returns a
    summary: size, customers, orders, products, build_users, seed (the one used: a build
    without one draws it, and records it), seconds, phases (seconds per step), rows (per
    table), build_sales (the loaded INVENTORY.sales total)."""
    size = spec.size
    if spec.build_users < 1:
        raise UsageError("--build-users must be at least 1")
    seed = spec.seed if spec.seed is not None else _random.SystemRandom().randrange(2**62)
    started = time.monotonic()
    if progress:
        progress("tables", 0, 1)
    asyncio.run(_prepare(dsn, spec.force))
    if progress:
        progress("tables", 1, 1)
    jobs = load_jobs(dsn, size, spec.build_users, seed)
    t_load = time.monotonic()
    total = pop.expected_rows(size)
    sales = pop.new_sales(size)
    rows = _run_workers(jobs, progress, total, sales)
    rows += asyncio.run(_load_rest(dsn, seed, size, sales))
    if progress:
        progress("load", sum(rows.values()), sum(rows.values()))
    t_finish = time.monotonic()
    build_sales = sum(sales)
    meta = dict(size=size.name, customers=size.customers, orders_per_month=size.orders_per_month,
                orders=size.orders, products=size.products, build_sales=build_sales, seed=seed,
                build_users=spec.build_users)
    asyncio.run(_finish(dsn, spec.build_users, meta, started, progress))
    ended = time.monotonic()
    return {
        "size": size.name,
        "customers": size.customers,
        "orders": size.orders,
        "products": size.products,
        "build_users": spec.build_users,
        "seed": seed,
        "seconds": round(ended - started, 3),
        "phases": {"tables": round(t_load - started, 3), "load": round(t_finish - t_load, 3),
                   "indexes_and_analyze": round(ended - t_finish, 3)},
        "rows": {t: rows.get(t, 0) for t in TABLES},
        "build_sales": build_sales,
    }

"""``oltplab brokerage build --engine mariadb``: create, load and index the TPC-E-derived
brokerage schema.

The rows are those of the PostgreSQL build: the same chunks and generator
(workloads/brokerage/population.py and chunks.py), whose COPY text is also MariaDB's LOAD DATA
format. Steps, each reported through ``progress(event, done, total)`` from the calling
process:

1. ``tables`` (0/1, 1/1): refuse a database that holds the TPC-C-derived or the
   DVD-Store-derived schema, an existing brokerage one unless forced (then drop it), and a
   page size asked for (``spec.page_size``) that the server's innodb_page_size is not; create
   the tables with their primary keys and the trade id sequence (sql/tables.sql).
2. ``load`` (rows made, of population.expected_rows, then the rows loaded): ``build_users``
   processes each load the next chunk of one list as they come free (workloads/brokerage/
   chunks.py ``load_jobs``) with ``LOAD DATA LOCAL INFILE`` from a pipe
   (engines/mariadb/bulk.py), a generator thread ahead of the statements, and tally the
   completed trades and commissions of their trades per broker. Then this process adds the
   tallies up and loads BROKER, whose ``b_num_trades`` and ``b_comm_total`` are those sums.
3. ``indexes`` (statements done) and ``analyze``: the statements of keys.sql, one a table, in
   up to ``build_users`` sessions at once; ANALYZE TABLE; the sequence restarted past the
   highest loaded trade id; the transactions' procedures (sql/procedures.sql); last the
   build's record in ``brokerage_meta`` with the server's page size in KiB, which marks a
   complete build.

Primary keys are declared with the tables. Measured at 1,000 customers x 5 days (3.06 million
rows, 2 loading processes, a 256 MiB buffer pool, on 2 CPUs shared with other work): keyed
tables loaded in 37.9 s and indexed in 3.8 s (42.9 s in all); unkeyed ones loaded in 35.0 s
and 43.4 s, then took 21.4 s and 20.7 s for their primary and secondary keys (59.1 s and
68.4 s in all). InnoDB stores every table in its primary key's order: a key added after the
load copies the whole table again, while the loading processes write each table's rows in
nearly that order already.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed

from ....errors import DatabaseError, OltplabError, SchemaError, UsageError
from ....workloads.brokerage import population as pop
from ....workloads.brokerage.build import build_record, build_summary
from ....workloads.brokerage.chunks import LoadJob, load_jobs, produce
from ....workloads.brokerage.reference import brokers
from ....workloads.brokerage.schema import (BALANCE_TABLE, META_TABLE, TABLES,
                                            other_schema_here)
from ....workloads.brokerage.trades import max_trade_id
from ...common.build import draw_seed, timings
from .. import bulk, client
from ..dvds.schema import present
from .schema import TRADE_SEQUENCE, other_schema, sql_statements, sql_text

#: How often the building process looks at its loading processes while none reports.
_POLL_S = 0.5


def _prepare(dsn: str, force: bool, page_kib: int | None) -> int:
    """Check the database and the server, drop an old schema if forced, create the tables;
    the server's page size in KiB."""
    def check(cur, dbname: str, page_bytes) -> None:
        other = other_schema(cur)
        if other:
            raise UsageError(str(other_schema_here(dbname, other)))
        server_kib = int(page_bytes) // 1024
        if page_kib is not None and page_kib != server_kib:
            raise UsageError(f"--innodb-page-size {page_kib}k: the server's pages are "
                             f"{server_kib} KiB (InnoDB's page size is set when its data "
                             "directory is created)")
        existing = present(cur, [*TABLES, BALANCE_TABLE, META_TABLE])
        if existing and not force:
            raise SchemaError(f"database {dbname} already holds a TPC-E-derived brokerage "
                              f"schema ({len(existing)} of its tables): pass --force to "
                              "drop and rebuild it")

    page_bytes = bulk.prepare_schema(dsn, "innodb_page_size", check,
                                     sql_statements("drop") + sql_statements("tables"))
    return int(page_bytes) // 1024


class _Told:
    """A loading process's queue of chunk pieces that tells the building process the rows of
    each piece put in it (made, up to workloads.chunks.READ_AHEAD pieces ahead of the
    server)."""

    def __init__(self, out: queue.Queue, events):
        self.out, self.events = out, events

    def put(self, item, timeout=None) -> None:
        self.out.put(item, timeout=timeout)
        if isinstance(item, tuple) and item[0]:
            self.events.put(("rows", item[2]))


def _worker(job: LoadJob, events) -> None:
    """One loading process: the chunks of its job; then ("done", rows per table, tally), or
    ("error", the exception)."""
    what = job.describe()
    try:
        rows = bulk.load_job(job, lambda j, out, stop: produce(j, _Told(out, events), stop),
                             what)
        events.put(("done", dict(rows), job.tally))
    except OltplabError as exc:
        events.put(("error", exc))
    except BaseException as exc:  # noqa: BLE001 - told to the building process in one line
        events.put(("error", DatabaseError(f"loading {what} failed: {exc!r}")))


def _run_loaders(jobs: list[LoadJob], progress, expected: int) -> tuple[Counter, list]:
    """A process for each job; the rows loaded per table and the jobs' tallies. The first
    error stops the others and is raised."""
    # fork is quick and safe while this process has a single thread; otherwise spawn
    ctx = multiprocessing.get_context("fork" if threading.active_count() == 1 else "spawn")
    events = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(job, events), daemon=True) for job in jobs]
    rows: Counter = Counter()
    tallies, made = [], 0
    try:
        for p in procs:
            p.start()
        while len(tallies) < len(jobs):
            try:
                kind, *what = events.get(timeout=_POLL_S)
            except queue.Empty:
                if any(p.exitcode not in (None, 0) for p in procs):
                    raise DatabaseError("a loading process ended without its rows (exit code "
                                        f"{[p.exitcode for p in procs]})") from None
                continue
            if kind == "rows":
                made += what[0]
                if progress:
                    progress("load", made, max(made, expected))
            elif kind == "done":
                rows.update(what[0])
                tallies.append(what[1])
            else:
                raise what[0]
    finally:
        for p in procs:
            if p.is_alive() and len(tallies) < len(jobs):
                p.terminate()
            p.join()
    return rows, tallies


def _load_brokers(dsn: str, scale, tally) -> Counter:
    rows: Counter = Counter()
    conn = client.connect(dsn, local_infile=True)
    try:
        bulk.load_infile(conn, bulk.items(
            ("broker", pop.broker_rows(scale, tally).encode("ascii"), brokers(scale))), rows)
    except client.Error as exc:
        raise DatabaseError(f"loading the brokers failed: {client.error_text(exc)}") from exc
    finally:
        conn.close()
    return rows


def _key_session(dsn: str, statement: str) -> None:
    conn = client.connect(dsn)
    try:
        bulk.execute_all(conn, [statement])
    finally:
        conn.close()


def _finish(dsn: str, sessions: int, record: dict, started: float, progress) -> None:
    """Indexes, statistics, the trade id sequence, the procedures, then the build's record
    (a complete build)."""
    keys = sql_statements("keys")
    try:
        with ThreadPoolExecutor(max(1, min(sessions, len(keys)))) as pool:
            for done, future in enumerate(as_completed(
                    [pool.submit(_key_session, dsn, s) for s in keys]), 1):
                future.result()
                if progress:
                    progress("indexes", done, len(keys))
        conn = client.connect(dsn)
        try:
            tables = (*TABLES, BALANCE_TABLE)
            bulk.execute_all(conn, [f"ANALYZE TABLE {', '.join(tables)}"])
            if progress:
                progress("analyze", len(tables), len(tables))
            bulk.execute_all(conn, [f"ALTER SEQUENCE {TRADE_SEQUENCE} RESTART WITH "
                                    f"{int(record['max_t_id']) + 1}"])
            bulk.execute_all(conn, bulk.procedure_statements(sql_text("procedures")))
            bulk.record_build(conn, META_TABLE, record, started)
        finally:
            conn.close()
    except client.Error as exc:
        raise DatabaseError(f"building the indexes and procedures failed: "
                            f"{client.error_text(exc)}") from exc


def build(dsn: str, spec, progress=None) -> dict:
    """Build the schema of ``spec.scale`` (a workloads.brokerage.build.BrokerageBuildSpec) on
    MariaDB; returns workloads.brokerage.build.build_summary (the seed used: a build without
    one draws it, and records it), with the page size in KiB (``page_kib``) in its record."""
    scale = spec.scale
    if spec.build_users < 1:
        raise UsageError("--build-users must be at least 1")
    seed = draw_seed(spec.seed)
    started = time.monotonic()
    if progress:
        progress("tables", 0, 1)
    page_kib = _prepare(dsn, spec.force, spec.page_size)
    if progress:
        progress("tables", 1, 1)
    jobs = load_jobs(dsn, scale, spec.build_users, seed)
    t_load = time.monotonic()
    rows, tallies = _run_loaders(jobs, progress, pop.expected_rows(scale))
    tally = pop.new_tally(scale)
    for more in tallies:
        pop.add_tally(tally, more)
    rows.update(_load_brokers(dsn, scale, tally))
    if progress:
        progress("load", sum(rows.values()), sum(rows.values()))
    t_finish = time.monotonic()
    record = build_record(scale, seed, spec.build_users, max_trade_id(scale), page_kib)
    _finish(dsn, spec.build_users, record, started, progress)
    return build_summary(record, timings(started, t_load, t_finish, time.monotonic()), rows)

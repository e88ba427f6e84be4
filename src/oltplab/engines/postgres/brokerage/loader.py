"""``oltplab brokerage build``: create, load and index the TPC-E-derived brokerage schema.

The steps of engines/postgres/bulkload.py, each reported through ``progress(event, done,
total)`` from the calling process, with the brokerage's parts:

1. ``tables`` (1/1 when done): refuse a database that holds the TPC-C-derived or the
   DVD-Store-derived schema, and an existing brokerage one unless forced (then drop it);
   create the 33 tables and oltplab's two records without keys.
2. ``load`` (rows loaded, of an expected total: some tables are random) and ``chunks``
   (chunks finished, of all): ``build_users`` worker processes each load the next chunk of
   one list as they come free (workloads/brokerage/chunks.py ``load_jobs``); each worker
   tallies the completed trades and commissions of its trades per broker. Then this process
   adds the tallies up and loads BROKER, whose ``b_num_trades`` and ``b_comm_total`` are those
   sums.
3. ``analyze`` (tables done) and ``indexes`` (indexes built), then, in one transaction: the
   primary keys, the trade id sequence ``seq_trade_id`` moved to the highest loaded trade id,
   the transactions' frames (sql/functions.sql), autovacuum back on, and the build's record
   in ``brokerage_meta`` (its scale, seed, highest trade id and page size), which marks a
   complete build.

Ctrl-C (KeyboardInterrupt) in the calling process stops the worker processes at once (they
ignore SIGINT themselves) and is re-raised; workers also stop when the calling process dies.
"""

from __future__ import annotations

import asyncio
import datetime
import io
import time
from collections import Counter

from ....errors import UsageError
from ....workloads.brokerage import population as pop
from ....workloads.brokerage.build import build_record, build_summary
from ....workloads.brokerage.chunks import LoadJob, chunk_count, load_jobs, produce
from ....workloads.brokerage.reference import brokers
from ....workloads.brokerage.schema import other_schema_here
from ....workloads.brokerage.trades import max_trade_id
from ...common.build import draw_seed, timings
from .. import bulkload
from ..catalog import connection, failing
from .schema import SCHEMA, TRADE_SEQUENCE, other_schema, refused


def _what(job: LoadJob) -> str:
    return job.describe()


def _tally(job: LoadJob):
    """What a worker sends back: its trades' completed count and commission per broker."""
    return job.tally


_LOAD = bulkload.Load(produce=produce, mark="chunks", describe=_what, result=_tally)


async def _prepare(dsn: str, force: bool) -> int:
    """Check the database, drop an old schema if forced, create the tables; returns the
    server's page size in KiB."""
    async with connection(dsn) as conn:
        with failing("preparing the schema failed"):
            other = await other_schema(conn)
            if other:
                name = await conn.fetchval("SELECT current_database()")
                raise refused(other_schema_here(name, other))
            await bulkload.replace_schema(conn, SCHEMA, force)
            return int(await conn.fetchval("SELECT current_setting('block_size')::int")) // 1024


async def _load_brokers(dsn: str, text: str) -> None:
    async with connection(dsn) as conn:
        with failing("loading the brokers failed"):
            await conn.copy_to_table("broker", source=io.BytesIO(text.encode("ascii")),
                                     format="text")


def _step(progress, event: str, work):
    """Run the coroutine ``work``, reported as ``event`` 1/1 when it is done (a refusal prints
    no progress line before its own); its answer."""
    answer = asyncio.run(work)
    if progress:
        progress(event, 1, 1)
    return answer


def build(dsn: str, spec, progress=None) -> dict:
    """Build the schema of ``spec.scale`` (a workloads.brokerage.build.BrokerageBuildSpec);
    returns workloads.brokerage.build.build_summary (the seed used: a build without one draws
    it, and records it)."""
    scale = spec.scale
    if spec.page_size not in (None, 8):
        raise UsageError(f"--innodb-page-size {spec.page_size}k is MariaDB's: PostgreSQL's "
                         "pages are 8 KiB, fixed when it is compiled")
    seed = draw_seed(spec.seed)
    started = time.monotonic()
    page_kib = _step(progress, "tables", _prepare(dsn, spec.force))
    jobs = load_jobs(dsn, scale, spec.build_users, seed)
    t_load = time.monotonic()
    rows, tallies = bulkload.run_workers(jobs, _LOAD, progress, pop.expected_rows(scale),
                                         chunk_count(jobs))
    tally = pop.new_tally(scale)
    for more in tallies:
        pop.add_tally(tally, more)
    _step(progress, "brokers", _load_brokers(dsn, pop.broker_rows(scale, tally)))
    rows["broker"] += brokers(scale)
    if progress:
        progress("load", sum(rows.values()), sum(rows.values()))
    t_finish = time.monotonic()
    record = finish(dsn, scale, seed, spec.build_users, page_kib, started, progress)
    return build_summary(record, timings(started, t_load, t_finish, time.monotonic()),
                         Counter(rows))


def finish(dsn: str, scale, seed: int, build_users: int, page_kib: int, started: float,
           progress=None) -> dict:
    """Step 3 on loaded tables (bulkload.finish with the trade id sequence); the build's
    record (build_record)."""
    max_t_id = max_trade_id(scale)
    record = build_record(scale, seed, build_users, max_t_id, page_kib)
    sequence = [(f"CREATE SEQUENCE {TRADE_SEQUENCE} AS bigint OWNED BY trade.t_id", ()),
                (f"SELECT setval('{TRADE_SEQUENCE}', $1)", (max_t_id,))]
    row = {**record, "start_date": datetime.date.fromisoformat(record["start_date"])}
    asyncio.run(bulkload.finish(dsn, SCHEMA, build_users, progress, started, row,
                                steps=sequence))
    return record

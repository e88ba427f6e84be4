"""``oltplab dvds build``: create, load and index the DVD-Store-derived schema.

The steps of engines/postgres/bulkload.py, each reported through ``progress(event, done,
total)`` from the calling process, with the shop's parts:

1. ``tables`` (0/1, 1/1): refuse a database that holds the TPC-C-derived schema, and an
   existing DVD-Store-derived one unless forced (then drop it); create the eight tables
   without keys (a DS3 build: DVD Store 3's three too, and PRODUCTS' membership_item).
2. ``load`` (rows loaded, of an expected total: order lines are random) and ``chunks``
   (chunks finished, of all): ``build_users`` worker processes each load the chunks dealt to
   them (workloads/dvds/population.py ``share``); each worker tallies the quantities its order
   lines order per product. Then this process adds the tallies up and loads INVENTORY (whose
   ``sales`` is that sum) and CATEGORIES.
3. ``analyze`` (tables done) and ``indexes`` (indexes built), then, in one transaction:
   primary and foreign keys, the serial sequences moved past the loaded ids, the transaction
   functions and the restock trigger, autovacuum back on, and the build's record in
   ``dvds_meta``, which marks a complete build.

Ctrl-C (KeyboardInterrupt) in the calling process stops the worker processes at once (they
ignore SIGINT themselves) and is re-raised; workers also stop when the calling process dies.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections import Counter

from ....errors import UsageError
from ....workloads.brokerage.schema import brokerage_schema_here
from ....workloads.dvds import population as pop
from ....workloads.dvds import words
from ....workloads.dvds.chunks import LoadJob, load_jobs, produce
from ....workloads.dvds.build import build_record, build_summary
from ....workloads.dvds.schema import tpcc_schema_here
from ...common.build import draw_seed, timings
from .. import bulkload
from ..brokerage.schema import brokerage_here
from ..catalog import connection, failing, present
from .schema import TPCC_TABLES, schema_for


def _what(job: LoadJob) -> str:
    return f"{len(job.work)} chunk(s) from {job.work[0].table} {job.work[0].first}"


def _sales(job: LoadJob) -> list[int]:
    """What a worker sends back: the quantities its order lines ordered, per product."""
    return job.sales


_LOAD = bulkload.Load(produce=produce, mark="chunks", describe=_what, result=_sales)


async def _prepare(dsn: str, schema: bulkload.Schema, force: bool) -> None:
    """Check the database, drop an old schema if forced, create the tables."""
    async with connection(dsn) as conn:
        with failing("preparing the schema failed"):
            if await present(conn, TPCC_TABLES):
                raise tpcc_schema_here(await conn.fetchval("SELECT current_database()"))
            if await brokerage_here(conn):
                raise brokerage_schema_here(await conn.fetchval("SELECT current_database()"),
                                            "DVD-Store-derived", "dvds")
            await bulkload.replace_schema(conn, schema, force)


async def _load_rest(dsn: str, seed: int, size, sales: list[int]) -> Counter:
    """INVENTORY (from the tally of all order lines) and CATEGORIES, in one transaction."""
    async with connection(dsn) as conn:
        with failing("loading the inventory failed"):
            async with conn.transaction():
                for table, text in (("inventory", pop.inventory_rows(seed, size, sales)),
                                    ("categories", pop.category_rows())):
                    await conn.copy_to_table(table, source=io.BytesIO(text.encode("ascii")),
                                             format="text")
    return Counter(inventory=size.products, categories=len(words.CATEGORIES))


def build(dsn: str, spec, progress=None) -> dict:
    """Build the schema of ``spec.size`` (a workloads.dvds.build.DvdsBuildSpec; ``spec.ds3``:
    DVD Store 3's parts too); returns workloads.dvds.build.build_summary: size, customers,
    orders, products, build_users, seed (the one used: a build without one draws it, and
    records it), ds3, seconds, phases (seconds per step), rows (per table), build_sales (the
    loaded INVENTORY.sales total)."""
    size = spec.size
    if spec.build_users < 1:
        raise UsageError("--build-users must be at least 1")
    seed = draw_seed(spec.seed)
    schema = schema_for(spec.ds3)
    started = time.monotonic()
    if progress:
        progress("tables", 0, 1)
    asyncio.run(_prepare(dsn, schema, spec.force))
    if progress:
        progress("tables", 1, 1)
    jobs = load_jobs(dsn, size, spec.build_users, seed, spec.ds3)
    t_load = time.monotonic()
    rows, tallies = bulkload.run_workers(jobs, _LOAD, progress,
                                         pop.expected_rows(size, spec.ds3),
                                         sum(len(j.work) for j in jobs))
    sales = pop.new_sales(size)
    for tally in tallies:
        pop.add_sales(sales, tally)
    rows += asyncio.run(_load_rest(dsn, seed, size, sales))
    if progress:
        progress("load", sum(rows.values()), sum(rows.values()))
    t_finish = time.monotonic()
    record = build_record(size, seed, spec.build_users, sum(sales), spec.ds3)
    moved = [("SELECT setval(pg_get_serial_sequence('customers', 'customerid'), $1),"
              " setval(pg_get_serial_sequence('orders', 'orderid'), $2)",
              (size.customers, size.orders))]
    if spec.ds3:
        ds3 = pop.ds3_rows(size)
        moved.append(("SELECT setval(pg_get_serial_sequence('reviews', 'review_id'), $1),"
                      " setval(pg_get_serial_sequence('reviews_helpfulness',"
                      " 'review_helpfulness_id'), $2)",
                      (ds3["reviews"], ds3["reviews_helpfulness"])))
    asyncio.run(bulkload.finish(dsn, schema, spec.build_users, progress, started, record,
                                steps=moved))
    return build_summary(record, timings(started, t_load, t_finish, time.monotonic()), rows)

"""``oltplab tpcc build``: create, load and index the TPC-C-derived schema [TPC-C 4.3].

The steps of engines/postgres/bulkload.py, each reported through ``progress(event, done,
total)`` from the calling process, with TPC-C's parts:

1. ``tables`` (0/1, 1/1): the database's encoding must hold the a-string alphabet; refuse an
   existing schema unless forced (then drop it); create the nine tables without keys.
2. ``load`` (rows loaded, of an expected total) and ``warehouses`` (warehouses finished):
   ``build_users`` worker processes each load a contiguous chunk of warehouses
   (workloads/tpcc/chunks.py); ITEM is loaded once, by a spare worker when there is one, else
   by the last (which has the fewest warehouses).
3. ``analyze`` (tables done) and ``indexes`` (indexes built), then, in one transaction: primary
   keys, the transaction functions, autovacuum back on, and the build's record in
   ``tpcc_meta`` (warehouses, the C constants drawn at load [2.1.6.1], seed, build time,
   oltplab version). That row marks a complete build.

Ctrl-C (KeyboardInterrupt) in the calling process stops the worker processes at once (they
ignore SIGINT themselves) and is re-raised; workers also stop when the calling process dies.
"""

from __future__ import annotations

import asyncio
import random as _random
import time

from ....config import BuildSpec
from ....errors import DatabaseError, UsageError
from ....workloads.brokerage.schema import brokerage_schema_here
from ....workloads.tpcc import population as pop
from ....workloads.tpcc.chunks import ROWS_PER_WAREHOUSE, LoadJob, load_jobs, produce
from ....workloads.tpcc.random import load_constants
from ...common.build import draw_seed, timings
from .. import bulkload
from ..brokerage.schema import brokerage_here
from ..catalog import connection, failing
from .schema import SCHEMA, TABLES

#: Server encodings that hold every character of the a-string alphabet.
ENCODINGS = ("UTF8", "LATIN1", "WIN1252", "SQL_ASCII")


def _what(job: LoadJob) -> str:
    if job.last_w < job.first_w:
        return "ITEM"
    return f"warehouses {job.first_w}-{job.last_w}"


_LOAD = bulkload.Load(produce=produce, mark="warehouses", describe=_what)


async def _prepare(dsn: str, force: bool) -> str:
    """Check the database, drop an old schema if forced, create the tables.

    Returns the load time (the server's clock) as COPY text."""
    async with connection(dsn) as conn:
        with failing("preparing the schema failed"):
            dbname = await conn.fetchval("SELECT current_database()")
            encoding = await conn.fetchval("SHOW server_encoding")
            if encoding.upper() not in ENCODINGS:
                raise DatabaseError(f"database {dbname} uses encoding {encoding}; the loader "
                                    f"needs one of {', '.join(ENCODINGS)}")
            if await brokerage_here(conn):
                raise brokerage_schema_here(dbname, "TPC-C-derived", "tpcc")
            await bulkload.replace_schema(conn, SCHEMA, force)
            return await conn.fetchval("SELECT localtimestamp(0)::text")


async def _finish(dsn: str, sessions: int, meta: dict, started: float, progress) -> None:
    """Step 3; ``meta``: the build's record by column of ``tpcc_meta``."""
    await bulkload.finish(dsn, SCHEMA, sessions, progress, started, meta)


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
    seed = draw_seed(spec.seed)
    c_last, c_id, c_ol_i_id = load_constants(_random.Random(f"oltplab-tpcc:{seed}:constants"))
    started = time.monotonic()
    if progress:
        progress("tables", 0, 1)
    now = asyncio.run(_prepare(dsn, spec.force))
    if progress:
        progress("tables", 1, 1)
    jobs = load_jobs(dsn, spec.warehouses, spec.build_users, seed, reproducible, c_last, now)
    t_load = time.monotonic()
    rows, _ = bulkload.run_workers(jobs, _LOAD, progress,
                                   pop.ITEMS + spec.warehouses * ROWS_PER_WAREHOUSE,
                                   sum(max(0, j.last_w - j.first_w + 1) for j in jobs))
    if progress:
        progress("load", sum(rows.values()), sum(rows.values()))
    t_finish = time.monotonic()
    meta = dict(warehouses=spec.warehouses, c_last_load=c_last, c_id_load=c_id,
                c_ol_i_id_load=c_ol_i_id, seed=spec.seed, build_users=spec.build_users)
    asyncio.run(_finish(dsn, spec.build_users, meta, started, progress))
    return {
        "warehouses": spec.warehouses,
        "build_users": spec.build_users,
        "seed": spec.seed,
        **timings(started, t_load, t_finish, time.monotonic()),
        "rows": {t: rows.get(t, 0) for t in TABLES},
        "constants": {"c_last_load": c_last, "c_id_load": c_id, "c_ol_i_id_load": c_ol_i_id},
    }

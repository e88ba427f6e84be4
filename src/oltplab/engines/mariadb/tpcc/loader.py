"""``build`` on MariaDB: create, load and key the TPC-C-derived schema [TPC-C 4.3].

The rows are those of the PostgreSQL build: the same generator (population.py, driven by the
PostgreSQL loader's chunk sequence), whose COPY text is also MariaDB's LOAD DATA format (tab
between fields, newline after rows, ``\\N`` for NULL, backslash escapes). Two ways in
(engines/mariadb/bulk.py):

- ``infile`` (the default): ``LOAD DATA LOCAL INFILE`` reading a pipe that a thread fills
  with the generator's chunks, one statement per run of chunks of a table;
- ``insert``: HammerDB's way, multi-row ``INSERT`` of 1,000 rows, a commit each.

At W=1 on 2 cores, ``insert`` took 3.2 times as long as ``infile`` (docs/design.md).
Steps: drop (with force) and create the tables with their primary keys, load, add the
secondary keys, ANALYZE TABLE, install the procedures, record the build in ``tpcc_meta``.
``build_users`` processes load contiguous chunks of warehouses at once, ITEM in the last.
"""

from __future__ import annotations

import random as _random
import time
from collections import Counter

from ....config import BuildSpec
from ....errors import DatabaseError, SchemaError, UsageError
from ....workloads.brokerage.schema import OWN_TABLES as BROKERAGE_TABLES
from ....workloads.brokerage.schema import brokerage_schema_here
from ....workloads.tpcc.chunks import LoadJob, load_jobs, produce
from ....workloads.tpcc.random import load_constants
from ....workloads.tpcc.schema import META_TABLE, TABLES
from ...common.build import draw_seed, timings
from .. import bulk, client
from ..dvds.schema import present
from .schema import PROCEDURES, sql_statements, sql_text

METHODS = ("infile", "insert")


def procedure_statements() -> list[str]:
    """The statements of sql/procedures.sql, separated there by lines holding '//'."""
    return bulk.procedure_statements(sql_text("procedures"))


def _prepare(dsn: str, force: bool) -> str:
    """Refuse (or, forced, drop) an existing schema, create the tables; the load time."""
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT DATABASE()")
            dbname = cur.fetchone()[0]
            if dbname is None:
                raise UsageError("the MariaDB DSN names no database")
            if present(cur, BROKERAGE_TABLES):
                raise brokerage_schema_here(dbname, "TPC-C-derived", "tpcc")
            found = cur.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"
                " AND table_name IN %s UNION ALL SELECT routine_name FROM"
                " information_schema.routines WHERE routine_schema = %s AND routine_name IN %s",
                (dbname, [*TABLES, META_TABLE], dbname, list(PROCEDURES)))
            if found and not force:
                raise SchemaError(f"database {dbname} already holds a TPC-C schema ({found} of "
                                  "its tables and procedures): pass --force to drop and "
                                  "rebuild it")
            bulk.execute_all(conn, sql_statements("drop") + sql_statements("tables"))
            cur.execute("SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')")
            return cur.fetchone()[0]
    except client.Error as exc:
        raise DatabaseError(f"preparing the schema failed: {client.error_text(exc)}") from exc
    finally:
        conn.close()


def _load(job: LoadJob, method: str) -> dict:
    """One worker: the chunks of its warehouses (and ITEM), loaded with ``method``."""
    return dict(bulk.load_job(job, produce, f"{'ITEM and ' if job.load_item else ''}warehouses "
                                            f"{job.first_w}-{job.last_w}", method))


def _run_jobs(jobs: list[LoadJob], method: str) -> Counter:
    rows: Counter = Counter()
    for done in bulk.run_jobs(_load, jobs, method):
        rows.update(done)
    return rows


def _finish(dsn: str, meta: dict, started: float, progress) -> None:
    """Secondary keys, statistics, procedures, then the build's record (a complete build)."""
    conn = client.connect(dsn)
    try:
        keys = sql_statements("keys")
        for k, statement in enumerate(keys, 1):
            bulk.execute_all(conn, [statement])
            if progress:
                progress("indexes", k, len(keys))
        bulk.execute_all(conn, [f"ANALYZE TABLE {', '.join(TABLES)}"])
        if progress:
            progress("analyze", len(TABLES), len(TABLES))
        bulk.execute_all(conn, procedure_statements())
        bulk.record_build(conn, META_TABLE, meta, started)
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
    seed = draw_seed(spec.seed)
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
    return {
        "warehouses": spec.warehouses,
        "build_users": spec.build_users,
        "seed": spec.seed,
        "method": method,
        **timings(started, t_load, t_finish, time.monotonic()),
        "rows": {t: rows.get(t, 0) for t in TABLES},
        "constants": {"c_last_load": c_last, "c_id_load": c_id, "c_ol_i_id_load": c_ol_i_id},
    }

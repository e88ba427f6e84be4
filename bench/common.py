"""Shared set-up for the benchmarks: a managed PostgreSQL and a built schema."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from oltplab import engines  # noqa: E402
from oltplab.config import BuildSpec, DbSpec, parse_size  # noqa: E402
from oltplab.engines.postgres.tpcc.loader import build  # noqa: E402
from oltplab.engines.postgres.tpcc.schema import schema_info  # noqa: E402
from oltplab.errors import SchemaError  # noqa: E402

DEFAULT_DATADIR = Path("oltplab-data/bench-postgres")


def db_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--datadir", type=Path, default=DEFAULT_DATADIR)
    p.add_argument("--port", type=int, default=5440)
    p.add_argument("--db-memory", default="2GiB")
    p.add_argument("--dsn", default=None, help="an existing server instead of a managed one")


def run_args(p: argparse.ArgumentParser, duration: float) -> None:
    """The options every A B B A benchmark takes: the database, the run's shape, the rounds."""
    db_args(p)
    p.add_argument("--warehouses", type=int, default=4)
    p.add_argument("--users", type=int, default=4)
    p.add_argument("--rampup", type=float, default=10)
    p.add_argument("--duration", type=float, default=duration)
    p.add_argument("--rounds", type=int, default=1, help="A B B A per round")
    p.add_argument("--seed", type=int, default=20261121)


def db_spec(a: argparse.Namespace, dbname: str = "tpcc", engine: str = "postgres") -> DbSpec:
    datadir, port = a.datadir, a.port
    if engine != "postgres" and datadir == DEFAULT_DATADIR:  # each engine its own server
        datadir, port = Path(f"oltplab-data/bench-{engine}"), port + 1
    return DbSpec(datadir=datadir, port=port, db_memory=parse_size(a.db_memory), dsn=a.dsn,
                  dbname=dbname, engine=engine)


@contextlib.contextmanager
def bench_database(a: argparse.Namespace, dbname: str = "tpcc", connections: int = 100,
                   engine: str = "postgres"):
    spec = db_spec(a, dbname, engine)
    with engines.get(engine).database(spec, need_connections=connections) as target:
        yield target


def ensure_schema(dsn: str, warehouses: int, build_users: int | None = None):
    """Reuse a schema of the right size, otherwise build one."""
    try:
        info = schema_info(dsn)
        if info.warehouses == warehouses:
            return info
    except SchemaError:
        pass
    print(f"building {warehouses} warehouses ...", file=sys.stderr)
    build(dsn, BuildSpec(warehouses=warehouses, build_users=build_users or os.cpu_count() or 1,
                         force=True))
    return schema_info(dsn)


def fetchval(dsn: str, sql: str):
    async def go():
        conn = await asyncpg.connect(dsn)
        try:
            return await conn.fetchval(sql)
        finally:
            await conn.close()
    return asyncio.run(go())


def sum_next_o_id(dsn: str) -> int:
    return int(fetchval(dsn, "SELECT sum(d_next_o_id) FROM district"))


def ratio_with_noise(a: list[float], b: list[float]) -> tuple[float, str]:
    """mean(a) / mean(b), and its run-to-run noise as text: the standard error of each mean,
    carried into the ratio (2 standard errors; empty with fewer than two runs a side)."""
    import math
    import statistics

    ma, mb = statistics.fmean(a), statistics.fmean(b)
    ratio = ma / mb
    if len(a) < 2 or len(b) < 2:
        return ratio, ""
    rel = [statistics.stdev(v) / math.sqrt(len(v)) / m for v, m in ((a, ma), (b, mb))]
    return ratio, f"  +/- {2 * ratio * math.sqrt(sum(r * r for r in rel)):.3f} (2 standard errors)"

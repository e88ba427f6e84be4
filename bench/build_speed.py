"""Build speed: `oltplab tpcc build` against the engine's bulk path fed pre-generated rows.

PostgreSQL: the ceiling loads the rows oltplab generated (exported to one file per table and
build user) with COPY, the same number of sessions, each in one transaction as the loader does,
then runs the loader's own index, VACUUM/ANALYZE and function phase.

MariaDB (``--engine mariadb``): the ceiling is LOAD DATA LOCAL INFILE of files holding the very
chunks oltplab's generator yields for the same seed (so the rows are the same), one file per
table and build user, read by the same number of sessions; then the loader's own keys,
ANALYZE and procedure phase. oltplab's build streams the same chunks through a pipe while it
generates them, so the difference is what generating costs the build.

Both sides are measured in one run, on one server, alternating A B B A.

    .venv/bin/python bench/build_speed.py --warehouses 4 --build-users 2
    .venv/bin/python bench/build_speed.py --engine mariadb --warehouses 2 --build-users 2
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

import asyncpg
from common import bench_database, db_args

from oltplab import engines
from oltplab.config import BuildSpec
from oltplab.engines.postgres import bulkload
from oltplab.engines.postgres.tpcc import loader
from oltplab.engines.postgres.tpcc.schema import SCHEMA, TABLES
from oltplab.workloads.tpcc.chunks import chunk_bounds, chunks, load_jobs

# the warehouse column of each table, to split its rows by build user as the loader does
W_COLUMN = {"warehouse": "w_id", "district": "d_w_id", "customer": "c_w_id", "history": "h_w_id",
            "orders": "o_w_id", "new_order": "no_w_id", "order_line": "ol_w_id",
            "stock": "s_w_id", "item": None}


async def export(dsn: str, folder: Path, bounds) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        for table in TABLES:
            col = W_COLUMN[table]
            if col is None:
                await conn.copy_from_table(table, output=str(folder / f"{table}.0"))
                continue
            for k, (a, b) in enumerate(bounds):
                await conn.copy_from_query(
                    f"SELECT * FROM {table} WHERE {col} BETWEEN {a} AND {b}",
                    output=str(folder / f"{table}.{k}"))
    finally:
        await conn.close()


async def copy_session(dsn: str, folder: Path, k: int) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            for table in TABLES:
                f = folder / f"{table}.{k}"
                if f.exists():
                    await conn.copy_to_table(table, source=str(f))
    finally:
        await conn.close()


async def create_tables(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await bulkload.replace_schema(conn, SCHEMA, force=True)
    finally:
        await conn.close()


def ceiling(dsn: str, folder: Path, sessions: int, warehouses: int) -> dict:
    t0 = time.monotonic()
    asyncio.run(create_tables(dsn))
    t1 = time.monotonic()

    async def load():
        await asyncio.gather(*(copy_session(dsn, folder, k) for k in range(sessions)))
    asyncio.run(load())
    t2 = time.monotonic()
    meta = dict(warehouses=warehouses, c_last_load=0, c_id_load=0, c_ol_i_id_load=0, seed=None,
                build_users=sessions)
    asyncio.run(loader._finish(dsn, sessions, meta, t0, None))
    t3 = time.monotonic()
    return {"seconds": t3 - t0, "phases": {"tables": t1 - t0, "load": t2 - t1,
                                           "indexes_and_analyze": t3 - t2}}


def mariadb_files(folder: Path, jobs) -> None:
    """The chunks oltplab's generator yields for ``jobs``, one file per table and job."""
    for job in jobs:
        files: dict = {}
        try:
            for table, text, _ in chunks(job):
                if table:
                    if table not in files:
                        files[table] = open(folder / f"{table}.{job.worker}", "wb")
                    files[table].write(text.encode("utf-8") if isinstance(text, str) else text)
        finally:
            for f in files.values():
                f.close()


def mariadb_session(dsn: str, folder: str, k: int) -> None:
    from oltplab.engines.mariadb import client
    from oltplab.engines.mariadb.tpcc.loader import _LOAD_SQL
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            for table in TABLES:
                f = Path(folder) / f"{table}.{k}"
                if f.exists():
                    cur.execute(_LOAD_SQL.format(path=str(f), table=table))
    finally:
        conn.close()


def mariadb_ceiling(dsn: str, folder: Path, sessions: int, warehouses: int) -> dict:
    from concurrent.futures import ProcessPoolExecutor

    from oltplab.engines.mariadb.tpcc import loader as my_loader
    t0 = time.monotonic()
    my_loader._prepare(dsn, True)
    t1 = time.monotonic()
    with ProcessPoolExecutor(sessions) as pool:
        list(pool.map(mariadb_session, [dsn] * sessions, [str(folder)] * sessions,
                      range(sessions)))
    t2 = time.monotonic()
    meta = dict(warehouses=warehouses, c_last_load=0, c_id_load=0, c_ol_i_id_load=0, seed=None,
                build_users=sessions)
    my_loader._finish(dsn, meta, t0, None)
    t3 = time.monotonic()
    return {"seconds": t3 - t0, "phases": {"tables": t1 - t0, "load": t2 - t1,
                                           "indexes_and_analyze": t3 - t2}}


def mariadb_jobs(dsn: str, warehouses: int, build_users: int) -> list:
    """The load jobs of an unseeded build, as the MariaDB loader makes them."""
    import random
    return load_jobs(dsn, warehouses, build_users, random.SystemRandom().randrange(2**62),
                     False, 0, "2026-01-01 00:00:00")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    db_args(p)
    p.add_argument("--engine", choices=("postgres", "mariadb"), default="postgres")
    p.add_argument("--warehouses", type=int, default=4)
    p.add_argument("--build-users", type=int, default=2)
    p.add_argument("--rounds", type=int, default=1, help="A B B A per round")
    a = p.parse_args()
    spec = BuildSpec(warehouses=a.warehouses, build_users=a.build_users, force=True)
    folder = Path(tempfile.mkdtemp(prefix="oltplab-ceiling-"))
    bounds = chunk_bounds(a.warehouses, a.build_users)
    ref = "COPY" if a.engine == "postgres" else "LOAD DATA"
    results: dict[str, list[dict]] = {"oltplab": [], ref: []}
    try:
        with bench_database(a, dbname="tpcc_build", engine=a.engine) as target:
            build = engines.get(a.engine).dialect.build
            first = build(target.dsn, spec)
            if a.engine == "postgres":
                asyncio.run(export(target.dsn, folder, bounds))
                sessions, load_ceiling = len(bounds), ceiling
            else:
                jobs = mariadb_jobs(target.dsn, a.warehouses, a.build_users)
                mariadb_files(folder, jobs)
                sessions, load_ceiling = len(jobs), mariadb_ceiling
            size = sum(f.stat().st_size for f in folder.iterdir())
            print(f"{ref} files: {size / 2**20:,.0f} MiB for W={a.warehouses} "
                  f"(first build {first['seconds']:.1f} s, not counted)")
            for who in ["oltplab", ref, ref, "oltplab"] * a.rounds:
                if who == "oltplab":
                    r = build(target.dsn, spec)
                else:
                    r = load_ceiling(target.dsn, folder, sessions, a.warehouses)
                results[who].append(r)
                ph = r["phases"]
                print(f"{who:>9}: {r['seconds']:6.2f} s  (load {ph['load']:5.2f} s, indexes and "
                      f"analyze {ph['indexes_and_analyze']:5.2f} s)  "
                      f"{60 * a.warehouses / r['seconds']:6.1f} warehouses/min", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    def mean(who, key=None):
        xs = [r["phases"][key] if key else r["seconds"] for r in results[who]]
        return sum(xs) / len(xs)

    total = mean(ref) / mean("oltplab")
    load = mean(ref, "load") / mean("oltplab", "load")
    print(f"\n{a.engine}, W={a.warehouses}, build users {a.build_users}: oltplab "
          f"{60 * a.warehouses / mean('oltplab'):.1f} warehouses/min, {ref} ceiling "
          f"{60 * a.warehouses / mean(ref):.1f} warehouses/min")
    print(f"speed relative to the ceiling: whole build {total:.0%}, load phase {load:.0%} "
          f"(target >= 70%)")


if __name__ == "__main__":
    main()

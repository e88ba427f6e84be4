"""The database source against a real PostgreSQL: commits, rollbacks, WAL and checkpoints
seen per second by the sampler."""

from __future__ import annotations

import asyncio
import time

import asyncpg

from oltplab.telemetry.derive import window_figures
from oltplab.telemetry.sampler import Sampler


class _Rollback(Exception):
    pass


async def workload(dsn: str, seconds: float) -> tuple[int, int]:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE TABLE IF NOT EXISTS tlm_t (k bigint, v text)")
        commits = rollbacks = 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await conn.execute("INSERT INTO tlm_t SELECT g, repeat('x', 200) "
                               "FROM generate_series(1, 50) g")
            commits += 1
            if commits % 10 == 0:
                try:
                    async with conn.transaction():
                        await conn.execute("INSERT INTO tlm_t VALUES (0, 'gone')")
                        raise _Rollback
                except _Rollback:
                    rollbacks += 1
        await conn.execute("SELECT pg_stat_force_next_flush()")
        await conn.execute("CHECKPOINT")
        return commits, rollbacks
    finally:
        await conn.close()


def test_database_counters_per_second(pg):
    dsn = pg.create_db("tlm")
    s = Sampler(0.25, db_dsn=dsn, power="none", devices=[], interfaces=[])
    s.start()
    try:
        start = s.mark("step_start", step=0)["t_ns"]
        commits, rollbacks = asyncio.run(workload(dsn, 1.5))
        time.sleep(1.2)  # the flushed counts and the checkpoint show in the next samples
        end = s.mark("measure_end", step=0)["t_ns"]
        time.sleep(0.05)
    finally:
        tl = s.stop()
    assert tl.database["available"] and tl.database["server_version_num"] >= 140000
    assert tl.errors == []
    assert tl.columns["db.commits_s"][0] is None or tl.columns["db.commits_s"][0] >= 0
    db = window_figures(tl, start, end + 1)["db"]
    seconds = (end - start) / 1e9
    # the instance is shared: other work only adds to what this test did
    assert db["commits_s"] * seconds >= 0.9 * commits
    assert db["rollbacks_s"] * seconds >= 0.9 * rollbacks
    assert db["wal_mb_s"] * seconds * 2**20 >= commits * 50 * 200
    assert db["checkpoints"] >= 1
    assert db["blks_hit_s"] > 0 and 0 < db["hit_ratio"] <= 1
    assert tl.units["db.wal_bytes_s"] == "bytes/s"
    pg.sql(f"DROP DATABASE {dsn.split('?')[0].rsplit('/', 1)[1]}")

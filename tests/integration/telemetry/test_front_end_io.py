"""The I/Os a real server issued (the front end): each engine's telemetry source counts what
its statistics count between two readings (PostgreSQL's pg_stat_io, InnoDB's data reads and
writes), and a server without pg_stat_io gives none rather than a wrong figure."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import asyncpg
import pytest

from conftest import free_port
from oltplab.engines.mariadb import client
from oltplab.engines.mariadb.instance import find_binary
from oltplab.engines.mariadb.telemetry import MariaDBSource
from oltplab.engines.postgres.telemetry import COLUMNS, DatabaseSource

FRONT = ("db.front_reads_s", "db.front_writes_s", "db.front_read_bytes_s",
         "db.front_written_bytes_s")
PG_FRONT = """SELECT sum(reads)::int8, sum(coalesce(writes, 0) + coalesce(extends, 0))::int8,
                     sum(read_bytes)::int8,
                     sum(coalesce(write_bytes, 0) + coalesce(extend_bytes, 0))::int8
              FROM pg_stat_io"""


async def _pg_front(dsn: str) -> tuple:
    conn = await asyncpg.connect(dsn)
    try:
        return tuple(await conn.fetchrow(PG_FRONT))
    finally:
        await conn.close()


async def _spill_a_temporary_table(dsn: str) -> None:
    """About 24 MiB into a temporary table (local buffers hold 8 MiB: the rest is written
    out and extended), read back (the blocks written out are read again), WAL of a small
    table, all published before the session ends."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE TEMP TABLE spill AS SELECT g, repeat('x', 500) AS pad "
                           "FROM generate_series(1, 40000) g")
        assert await conn.fetchval("SELECT count(*) FROM spill WHERE pad <> ''") == 40000
        await conn.execute("CREATE TABLE IF NOT EXISTS walled (k int)")
        for k in range(50):
            await conn.execute("INSERT INTO walled VALUES ($1)", k)
        await conn.execute("SELECT pg_stat_force_next_flush()")
    finally:
        await conn.close()


def test_postgres_front_end_is_pg_stat_io_between_two_readings(pg):
    dsn = pg.create_db("front")
    src = DatabaseSource(dsn)
    src.open()
    try:
        assert src.errors == [] and src.describe()["server_version_num"] >= 180000
        outer0 = asyncio.run(_pg_front(dsn))
        t0 = time.monotonic_ns()
        src.read(t0)
        inner0 = asyncio.run(_pg_front(dsn))
        asyncio.run(_spill_a_temporary_table(dsn))
        time.sleep(0.2)
        inner1 = asyncio.run(_pg_front(dsn))
        t1 = time.monotonic_ns()
        values = dict(zip(COLUMNS, src.read(t1)))
        outer1 = asyncio.run(_pg_front(dsn))
    finally:
        src.close()
    dt = (t1 - t0) / 1e9
    got = [values[c] * dt for c in FRONT]
    inner = [b - a for a, b in zip(inner0, inner1)]
    outer = [b - a for a, b in zip(outer0, outer1)]
    for name, g, lo, hi in zip(FRONT, got, inner, outer):
        assert lo - 0.5 <= g <= hi + 0.5, (name, g, lo, hi)
    reads, writes, read_bytes, written = inner
    # ~2,000 blocks of 8 KiB written out one at a time, read back in combined reads (PostgreSQL
    # 18 counts operations: one read may span up to io_combine_limit)
    assert writes >= 1000 and written >= 16 * 2**20, inner
    assert 0 < reads < writes and read_bytes >= 16 * 2**20 and read_bytes >= reads * 8192, inner
    assert "pg_stat_io" in src.describe()["front_from"]


def test_postgres_without_pg_stat_io_has_no_front_end(server_tmp):
    """PostgreSQL 15 has no pg_stat_io: the four columns are null, never zero."""
    bin_dir = Path("/usr/lib/postgresql/15/bin")
    if not (bin_dir / "postgres").exists():
        pytest.skip("no PostgreSQL 15 binaries here")
    from oltplab.config import DbSpec
    from oltplab.engines.postgres.instance import PostgresInstance
    inst = PostgresInstance(DbSpec(datadir=server_tmp / "pg15", port=free_port(),
                                   db_memory=64 * 1024**2, pg_bin=bin_dir))
    inst.init()
    inst.start()
    try:
        src = DatabaseSource(inst.dsn("postgres"))
        src.open()
        try:
            src.read(time.monotonic_ns())
            time.sleep(0.05)
            values = dict(zip(COLUMNS, src.read(time.monotonic_ns())))
            about = src.describe()
        finally:
            src.close()
    finally:
        inst.stop("immediate")
    assert about["server_version_num"] // 10000 == 15 and about["front_from"] is None
    assert all(values[c] != values[c] for c in FRONT), values  # NaN: not measured
    assert values["db.commits_s"] >= 0  # the rest is measured as before


@pytest.mark.skipif(find_binary("mariadbd") is None, reason="mariadbd is not installed")
def test_mariadb_front_end_is_innodb_data_and_redo_writes(mariadb):
    mariadb.ensure_database("front")
    dsn = mariadb.dsn("front")
    names = ("Innodb_data_reads", "Innodb_data_writes", "Innodb_log_writes",
             "Innodb_data_read", "Innodb_data_written", "Innodb_os_log_written")
    ref = client.connect(dsn)

    def status() -> list[int]:
        """The four front-end counters: reads, data + redo writes, and their bytes."""
        with ref.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS")
            v = {k: int(x) for k, x in cur.fetchall() if k in names}
        return [v["Innodb_data_reads"], v["Innodb_data_writes"] + v["Innodb_log_writes"],
                v["Innodb_data_read"], v["Innodb_data_written"] + v["Innodb_os_log_written"],
                v["Innodb_data_writes"]]

    src = MariaDBSource(dsn)
    src.open()
    try:
        outer0 = status()
        t0 = time.monotonic_ns()
        src.read(t0)
        inner0 = status()
        with ref.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS w (k int PRIMARY KEY, pad text) "
                        "ENGINE=InnoDB")
            for k in range(200):  # 200 commits: the redo log is written at each
                cur.execute("REPLACE INTO w VALUES (%s, REPEAT('y', 2000))", (k,))
        inner1 = status()
        t1 = time.monotonic_ns()
        values = dict(zip(src.columns, src.read(t1)))
        outer1 = status()
        about = src.describe()
    finally:
        src.close()
        ref.close()
    dt = (t1 - t0) / 1e9
    for column, a0, a1, b0, b1 in zip(FRONT, inner0, inner1, outer0, outer1):
        assert a1 - a0 - 0.5 <= values[column] * dt <= b1 - b0 + 0.5, (column, values[column])
    # the commits wrote the redo log, which Innodb_data_writes does not count
    assert inner1[1] - inner0[1] >= 200 and inner1[3] - inner0[3] >= 200 * 2000, (inner0,
                                                                                   inner1)
    assert values["db.front_writes_s"] > values["db.innodb_data_writes_s"]
    assert about["columns_from"]["db.front_writes_s"] == "Innodb_data_writes + Innodb_log_writes"

"""MariaDB's telemetry source against a real managed MariaDB under the TPC-C procedures: each
per-second value times the interval is the change of its SHOW GLOBAL STATUS counter."""

from __future__ import annotations

import random
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from oltplab.config import BuildSpec, DbSpec
from oltplab.engines.mariadb import client
from oltplab.engines.mariadb.instance import MariaDBInstance, find_binary
from oltplab.engines.mariadb.telemetry import COLUMNS, STATUS, MariaDBSource
from oltplab.errors import DatabaseError
from oltplab.telemetry.derive import window_figures
from oltplab.telemetry.sampler import Sampler
from oltplab.engines.mariadb.tpcc import DIALECT
from oltplab.engines.mariadb.tpcc import procedures as proc

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")


@pytest.fixture(scope="module")
def cold_w1():
    """A W=1 build on a server restarted afterwards, so that its buffer pool starts empty
    and the procedures read pages from disk."""
    root = Path(tempfile.mkdtemp(prefix="oltplab-test-"))
    inst = MariaDBInstance(DbSpec(datadir=root / "data", db_memory=128 * 1024**2))
    inst.start()
    try:
        inst.ensure_database("w1")
        DIALECT.build(inst.dsn("w1"), BuildSpec(warehouses=1, build_users=2, seed=5))
        inst.stop()
        inst.start()
        yield inst.dsn("w1")
    finally:
        inst.stop()
        shutil.rmtree(root, ignore_errors=True)


def _status(conn) -> dict:
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL STATUS")
        return {k: int(v) for k, v in cur.fetchall() if k in STATUS}


def _load(dsn: str, calls: int) -> None:
    """The five procedures ``calls`` times (one in ten New-Orders rolled back), then two row
    lock waits: a session waits for a district row another holds."""
    rnd = random.Random(7)
    conn = client.connect(dsn)
    try:
        for k in range(calls):
            d_id, c_id = rnd.randint(1, 10), rnd.randint(1, 3000)
            kind = k % 5
            if kind == 0:
                lines = [(rnd.randint(1, 100_000), 1, 5) for _ in range(10)]
                if k % 50 == 0:
                    lines[-1] = (100_001, 1, 1)  # the unused item: rolled back
                proc.neword(conn, 1, d_id, c_id, lines)
            elif kind == 1:
                proc.payment(conn, 1, d_id, 1, d_id, c_id, -1, "10.00")
            elif kind == 2:
                proc.ostat(conn, 1, d_id, c_id, -1)
            elif kind == 3:
                proc.delivery(conn, 1, 3)
            else:
                proc.slev(conn, 1, d_id, 15)
        other = client.connect(dsn)
        try:
            for d_id in (1, 2):
                with conn.cursor() as cur:
                    cur.execute("START TRANSACTION")
                    cur.execute("SELECT d_id FROM district WHERE d_w_id = 1 AND d_id = %s"
                                " FOR UPDATE", (d_id,))
                waiter = threading.Thread(target=_lock_district, args=(other, d_id))
                waiter.start()
                time.sleep(0.3)
                with conn.cursor() as cur:
                    cur.execute("COMMIT")
                waiter.join(30)
        finally:
            other.close()
    finally:
        conn.close()


def _flush_dirty_pages(dsn: str) -> None:
    """Make the page cleaner write every dirty page (Innodb_data_writes counts those writes;
    redo writes are not among them)."""
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@innodb_max_dirty_pages_pct")
            (pct,) = cur.fetchone()
            cur.execute("SET GLOBAL innodb_max_dirty_pages_pct = 0")
            try:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")
                    if int(cur.fetchone()[1]) == 0:
                        break
                    time.sleep(0.1)
            finally:
                cur.execute(f"SET GLOBAL innodb_max_dirty_pages_pct = {float(pct)}")
    finally:
        conn.close()


def _lock_district(conn, d_id: int) -> None:
    with conn.cursor() as cur:
        cur.execute("START TRANSACTION")
        cur.execute("SELECT d_id FROM district WHERE d_w_id = 1 AND d_id = %s FOR UPDATE",
                    (d_id,))
        cur.execute("COMMIT")


def test_rates_are_the_status_deltas_over_the_interval(cold_w1):
    ref = client.connect(cold_w1)
    src = MariaDBSource(cold_w1)
    src.open()
    try:
        assert src.errors == []
        outer0 = _status(ref)
        t0 = time.monotonic_ns()
        assert all(v != v for v in src.read(t0)), "the first reading is the baseline: null"
        inner0 = _status(ref)
        _load(cold_w1, 300)
        _flush_dirty_pages(cold_w1)
        inner1 = _status(ref)
        t1 = time.monotonic_ns()
        values = dict(zip(COLUMNS, src.read(t1)))
        outer1 = _status(ref)
    finally:
        src.close()
        ref.close()
    dt = (t1 - t0) / 1e9
    got = {k: v * dt for k, v in values.items()}
    inner = {k: inner1[k] - inner0[k] for k in STATUS}
    outer = {k: outer1[k] - outer0[k] for k in STATUS}
    # nothing but this test commits: the transaction counts are exact
    assert round(got["db.commits_s"]) == inner["Com_commit"] == outer["Com_commit"]
    assert round(got["db.rollbacks_s"]) == inner["Com_rollback"] == outer["Com_rollback"] >= 6
    assert inner["Com_commit"] + inner["Com_rollback"] >= 300
    assert round(got["db.innodb_row_lock_waits_s"]) == inner["Innodb_row_lock_waits"] == 2
    # background threads (purge, page cleaner) may move the others between the readings:
    # the source's change lies between the inner and the outer change
    for col, name in (("db.blks_read_s", "Innodb_buffer_pool_reads"),
                      ("db.wal_bytes_s", "Innodb_os_log_written"),
                      ("db.innodb_data_writes_s", "Innodb_data_writes"),
                      ("db.innodb_data_written_s", "Innodb_data_written")):
        assert inner[name] - 0.5 <= got[col] <= outer[name] + 0.5, (col, got[col], inner, outer)
    assert inner["Innodb_buffer_pool_reads"] > 0, "a cold pool reads pages from disk"
    assert inner["Innodb_os_log_written"] > 0 and inner["Innodb_data_writes"] > 0
    req, reads = "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads"
    assert (inner[req] - outer[reads] - 0.5 <= got["db.blks_hit_s"]
            <= outer[req] - inner[reads] + 0.5)
    assert got["db.blks_hit_s"] > got["db.blks_read_s"] > 0
    assert src.transactions_between(t0, t1) == 0


def test_a_lost_session_gives_null_samples_then_reconnects(cold_w1):
    src = MariaDBSource(cold_w1, retry_s=0.2)
    src.open()
    admin = client.connect(cold_w1)
    try:
        src.read(time.monotonic_ns())
        assert not any(v != v for v in src.read(time.monotonic_ns()))
        with admin.cursor() as cur:
            cur.execute("SELECT id FROM information_schema.processlist"
                        " WHERE id <> CONNECTION_ID() AND command <> 'Daemon'")
            for (session,) in cur.fetchall():
                cur.execute(f"KILL {session}")
        with pytest.raises(DatabaseError, match="sampler query failed"):
            src.read(time.monotonic_ns())
        assert all(v != v for v in src.read(time.monotonic_ns())), "null until the retry"
        time.sleep(0.25)
        assert all(v != v for v in src.read(time.monotonic_ns())), "the new baseline"
        assert not any(v != v for v in src.read(time.monotonic_ns()))
    finally:
        admin.close()
        src.close()


def test_sampler_records_innodb_figures_and_redo(cold_w1):
    s = Sampler(0.25, power="none", devices=[], interfaces=[],
                db_dsn=cold_w1, db_engine="mariadb")
    s.start()
    try:
        start = s.mark("step_start", step=0)["t_ns"]
        _load(cold_w1, 100)
        _flush_dirty_pages(cold_w1)
        end = s.mark("measure_end", step=0)["t_ns"]
        time.sleep(0.05)
    finally:
        tl = s.stop()
    assert tl.errors == []
    assert tl.database["available"] and tl.database["engine"] == "mariadb"
    assert "redo" in tl.database["columns_from"]["db.wal_bytes_s"]
    assert tl.units["db.blks_read_s"] == "pages/s" and tl.units["db.wal_bytes_s"] == "bytes/s"
    db = window_figures(tl, start, end + 1)["db"]
    seconds = (end - start) / 1e9
    assert db["xacts_per_min"] * seconds / 60 >= 100 * 0.95
    assert 0 < db["hit_ratio"] <= 1
    assert db["wal_mb_s"] > 0 and db["innodb_data_writes_s"] > 0
    assert db["row_lock_waits"] == 2 and db["sampler_xacts"] == 0

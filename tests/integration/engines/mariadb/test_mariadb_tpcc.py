"""The TPC-C-derived workload on a real managed MariaDB: build W=1, CC1-CC12, the five
procedures, the TPM and NOPM counters, the failure classes a driver acts on.

The tests share one W=1 build and run in file order: the checks of the fresh build first,
then each procedure changes the database, and the checks at the end must still hold.
"""

from __future__ import annotations

import os
import threading
from types import SimpleNamespace
from decimal import Decimal

import pytest
from pymysql.constants import CLIENT

from oltplab.config import BuildSpec
from oltplab.engines.base import Counters, Dialect, Failure
from oltplab.engines.mariadb import client, counters, driver
from oltplab.engines.mariadb.instance import find_binary
from oltplab.engines.mariadb.tpcc import DIALECT
from oltplab.engines.mariadb.tpcc import loader as mloader
from oltplab.engines.mariadb.tpcc import procedures as proc
from oltplab.engines.mariadb.tpcc.checks import run_checks
from oltplab.engines.mariadb.tpcc.loader import build
from oltplab.errors import DatabaseError, SchemaError
from oltplab.workloads.tpcc.chunks import LoadJob as _Job
from oltplab.workloads.tpcc.random import last_name

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")


@pytest.fixture(scope="session")
def w1(mariadb) -> str:
    """The DSN of a seeded W=1 build (which the tests below change, in order)."""
    mariadb.ensure_database("w1")
    dsn = mariadb.dsn("w1")
    # two build users: one process loads the warehouse, a spare one loads ITEM
    summary = DIALECT.build(dsn, BuildSpec(warehouses=1, build_users=2, seed=12345))
    assert summary["method"] == "infile"
    assert summary["rows"]["stock"] == 100_000 and summary["rows"]["customer"] == 30_000
    return dsn


@pytest.fixture
def conn(w1):
    c = client.connect(w1)
    yield c
    c.close()


def _one(conn, sql: str, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchone()


def test_build_w1_passes_every_check(w1):
    assert isinstance(DIALECT, Dialect) and isinstance(counters, Counters)
    results = DIALECT.run_checks(w1)
    assert [r.name for r in results] == [f"CC{k}" for k in range(1, 13)]
    assert [r.name for r in results if not r.ok] == []


def test_build_refuses_an_existing_schema_without_force(w1):
    with pytest.raises(SchemaError, match="--force"):
        build(w1, BuildSpec(warehouses=1, build_users=1))


def _item_job(dsn: str, now: str) -> _Job:
    return _Job(dsn=dsn, worker=0, first_w=1, last_w=0, load_item=True, seed=7,
                reproducible=True, c_last_load=0, now=now, parent_pid=os.getpid())


def test_insert_and_infile_load_the_same_rows(mariadb):
    """HammerDB's multi-row INSERT and LOAD DATA from a pipe give the same table (ITEM)."""
    checksums = []
    for method in mloader.METHODS:
        name = f"items_{method}"
        mariadb.ensure_database(name)
        dsn = mariadb.dsn(name)
        now = mloader._prepare(dsn, force=True)
        assert mloader._load(_item_job(dsn, now), method) == {"item": 100_000}
        c = client.connect(dsn)
        try:
            checksums.append(_one(c, "CHECKSUM TABLE item")[1])
        finally:
            c.close()
    assert checksums[0] == checksums[1] and checksums[0]


def test_a_failed_load_data_raises_and_does_not_hang(mariadb):
    """Regression: the statement fails before the server reads the pipe; the thread that
    fills the pipe must not block for ever (closing the read end ends its write)."""
    mariadb.ensure_database("no_tables")
    dsn = mariadb.dsn("no_tables")
    with pytest.raises(DatabaseError, match="doesn't exist"):
        mloader._load(_item_job(dsn, "2026-01-01 00:00:00"), "infile")


def test_connections_outside_the_load_refuse_load_data_local(mariadb, tmp_path):
    """Only the loader's sessions may send local files: any other session (to a --dsn server
    too) must not let the server ask for a file of ours."""
    secret = tmp_path / "secret"
    secret.write_text("private\n")
    mariadb.ensure_database("no_local")
    dsn = mariadb.dsn("no_local")
    load = f"LOAD DATA LOCAL INFILE '{secret}' INTO TABLE leak"
    c = client.connect(dsn)
    user = driver.connect(SimpleNamespace(dsn=dsn, connect_timeout=10,  # a virtual user's
                                          application_name="oltplab-test"))
    try:
        assert not c.client_flag & CLIENT.LOCAL_FILES
        with c.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS leak (t TEXT)")
            with pytest.raises(client.Error, match="local infile"):
                cur.execute(load)
        with pytest.raises(RuntimeError, match="local infile"):
            user.scalar(load)
        assert _one(c, "SELECT COUNT(*) FROM leak")[0] == 0
    finally:
        c.close()
        user.close()


def test_population_rules_hold_in_the_loaded_rows(conn):
    # the same generator as PostgreSQL's: 10% BC customers, 10% ORIGINAL items, 900 new orders
    assert _one(conn, "SELECT SUM(c_credit = 'BC') FROM customer")[0] == 3000
    assert _one(conn, "SELECT SUM(i_data LIKE '%ORIGINAL%') FROM item")[0] == 10_000
    assert _one(conn, "SELECT COUNT(*) FROM new_order")[0] == 9000
    assert _one(conn, "SELECT COUNT(*) FROM order_line WHERE ol_delivery_d IS NULL"
                      " AND ol_amount = 0")[0] == 0
    # a-strings keep their Latin-1 letters through LOAD DATA's utf8mb4 -> latin1
    assert _one(conn, "SELECT SUM(i_name REGEXP '[À-ã]') > 0 FROM item")[0] == 1
    c_id, c_last = _one(conn, "SELECT c_id, c_last FROM customer WHERE c_d_id = 1 AND c_id = 7")
    assert c_last == last_name(6)


def test_neword_inserts_the_order_and_advances_the_district(conn):
    before = _one(conn, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3")[0]
    lines = [(11, 1, 5), (7, 1, 3), (11, 1, 2)]  # item 11 twice: its stock row is taken twice
    qty = _one(conn, "SELECT s_quantity, s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 11")
    o_id = proc.neword(conn, 1, 3, 42, lines)
    assert o_id == before
    assert _one(conn, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3")[0] \
        == before + 1
    assert _one(conn, "SELECT o_c_id, o_ol_cnt, o_all_local, o_carrier_id FROM orders"
                      " WHERE o_w_id = 1 AND o_d_id = 3"
                      " AND o_id = %s", (o_id,)) == (42, 3, 1, None)
    got = _one(conn, "SELECT COUNT(*), SUM(ol_quantity), GROUP_CONCAT(ol_i_id ORDER BY ol_number)"
                     " FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3"
                     " AND ol_o_id = %s", (o_id,))
    assert got == (3, Decimal(10), "11,7,11")
    price = _one(conn, "SELECT i_price FROM item WHERE i_id = 7")[0]
    assert _one(conn, "SELECT ol_amount FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3"
                      " AND ol_o_id = %s AND ol_number = 2", (o_id,))[0] == 3 * price
    after = _one(conn, "SELECT s_quantity, s_order_cnt FROM stock"
                       " WHERE s_w_id = 1 AND s_i_id = 11")
    q = qty[0]
    for take in (5, 2):  # the stock rule, line by line [2.4.2.2]
        q = q - take if q >= take + 10 else q - take + 91
    assert after == (q, qty[1] + 2)
    assert _one(conn, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = 3"
                      " AND no_o_id = %s", (o_id,))[0] == 1


def test_neword_with_an_unused_item_rolls_back(conn):
    before = _one(conn, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4")[0]
    o_id = proc.neword(conn, 1, 4, 1, [(5, 1, 1), (100_001, 1, 1)])
    assert o_id == -before
    assert _one(conn, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 4")[0] \
        == before
    assert _one(conn, "SELECT COUNT(*) FROM orders WHERE o_w_id = 1 AND o_d_id = 4"
                      " AND o_id = %s", (before,))[0] == 0


def test_payment_by_id_and_by_last_name(conn):
    w_ytd = _one(conn, "SELECT w_ytd FROM warehouse WHERE w_id = 1")[0]
    bal, cnt = _one(conn, "SELECT c_balance, c_payment_cnt FROM customer"
                          " WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 17")
    assert proc.payment(conn, 1, 5, 1, 2, 17, -1, Decimal("123.45")) == 17
    assert _one(conn, "SELECT w_ytd FROM warehouse WHERE w_id = 1")[0] == w_ytd + Decimal("123.45")
    assert _one(conn, "SELECT c_balance, c_payment_cnt FROM customer"
                      " WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 17") \
        == (bal - Decimal("123.45"), cnt + 1)
    assert _one(conn, "SELECT COUNT(*) FROM history WHERE h_c_id = 17 AND h_c_d_id = 2"
                      " AND h_d_id = 5 AND h_amount = 123.45")[0] == 1
    # by last name: the middle one of the customers of that name by C_FIRST [2.5.2.2]
    ids = [r[0] for r in _all(conn, "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 2"
                                    " AND c_last = %s ORDER BY c_first, c_id", (last_name(0),))]
    assert proc.payment(conn, 1, 2, 1, 2, 0, 0, Decimal("1.00")) == ids[(len(ids) + 1) // 2 - 1]


def _all(conn, sql: str, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def test_ostat_returns_the_customers_last_order(conn):
    last = _one(conn, "SELECT MAX(o_id) FROM orders WHERE o_w_id = 1 AND o_d_id = 3"
                      " AND o_c_id = 42")[0]
    assert proc.ostat(conn, 1, 3, 42, -1) == last


def test_delivery_delivers_the_oldest_order_of_each_district(conn):
    oldest = _all(conn, "SELECT no_d_id, MIN(no_o_id) FROM new_order WHERE no_w_id = 1"
                        " GROUP BY no_d_id ORDER BY no_d_id")
    assert proc.delivery(conn, 1, 7) == 10
    for d_id, o_id in oldest:
        assert _one(conn, "SELECT o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = %s"
                          " AND o_id = %s", (d_id, o_id))[0] == 7
        assert _one(conn, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = %s"
                          " AND ol_o_id = %s AND ol_delivery_d IS NULL", (d_id, o_id))[0] == 0
        assert _one(conn, "SELECT COUNT(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = %s"
                          " AND no_o_id = %s", (d_id, o_id))[0] == 0


def test_slev_counts_the_low_stock_of_the_last_20_orders(conn):
    want = _one(
        conn, """
        SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = 1 AND s_i_id = ol_i_id
         WHERE ol_w_id = 1 AND ol_d_id = 3 AND s_quantity < 50
           AND ol_o_id >= (SELECT d_next_o_id - 20 FROM district WHERE d_w_id = 1 AND d_id = 3)"""
    )[0]
    assert want > 0
    assert proc.slev(conn, 1, 3, 50) == want
    assert proc.slev(conn, 1, 3, 0) == 0


def test_counters_move_with_commits_rollbacks_and_new_orders(conn):
    start = counters.snapshot(conn)
    proc.neword(conn, 1, 6, 9, [(1, 1, 1), (2, 1, 1), (3, 1, 1), (4, 1, 1), (5, 1, 1)])
    proc.neword(conn, 1, 6, 9, [(1, 1, 1), (0, 1, 1)])  # rolled back: not a new order
    proc.slev(conn, 1, 6, 15)
    end = counters.snapshot(conn)
    change = counters.delta(start, end)
    # three procedures, each one COMMIT or ROLLBACK (other sessions of this test server idle)
    assert change["xacts_delta"] == 3
    assert change["d_next_o_id_delta"] == 1
    assert end.t_ns > start.t_ns


def test_purge_catches_up_on_an_idle_server(conn, w1):
    """An open snapshot holds purge back: the history list grows; once it ends, purge
    catches up and wait_for_purge sees the list fall."""
    reader = client.connect(w1)
    try:
        with reader.cursor() as cur:
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        with conn.cursor() as cur:
            for step in (1, -1):  # committed changes whose undo the snapshot still needs
                cur.execute("UPDATE customer SET c_payment_cnt = c_payment_cnt + %s"
                            " WHERE c_d_id = 10", (step,))
        assert counters.history_length(conn) >= 2
    finally:
        reader.close()
    assert counters.wait_for_purge(conn, below=2, timeout_s=60, poll_s=0.1) < 2


def test_a_failed_call_rolls_back_and_is_classified(conn, w1):
    with pytest.raises(client.Error) as err:
        proc.payment(conn, 1, 1, 1, 1, 999_999, -1, Decimal("5.00"))
    assert "no such customer" in str(err.value)
    assert client.classify(err.value) is Failure.FATAL
    assert _one(conn, "SELECT @@in_transaction")[0] == 0


def test_a_deadlock_is_retryable(conn, w1):
    """Two sessions each hold one district row and ask for the other's: whatever the timing,
    InnoDB rolls one of them back with 1213, which a driver retries."""
    other = client.connect(w1)
    outcomes = []

    def lock(c, d_id):
        try:
            _one(c, "SELECT d_id FROM district WHERE d_w_id = 1 AND d_id = %s FOR UPDATE",
                 (d_id,))
            outcomes.append("locked")
        except client.Error as exc:
            outcomes.append(exc)

    try:
        for c, d_id in ((conn, 9), (other, 10)):
            with c.cursor() as cur:
                cur.execute("SET SESSION innodb_lock_wait_timeout = 20")
                cur.execute("START TRANSACTION")
            lock(c, d_id)
        waiter = threading.Thread(target=lock, args=(other, 9))
        waiter.start()
        lock(conn, 10)
        waiter.join(30)
        errors = [o for o in outcomes if isinstance(o, Exception)]
        assert len(errors) == 1 and client.error_code(errors[0]) == 1213
        assert client.classify(errors[0]) is Failure.RETRYABLE
    finally:
        for c in (conn, other):
            with c.cursor() as cur:
                cur.execute("ROLLBACK")
        other.close()


def test_a_lost_session_is_a_connection_failure(conn, w1):
    other = client.connect(w1)
    try:
        session = _one(other, "SELECT CONNECTION_ID()")[0]
        _one(conn, f"KILL {session}")
        with pytest.raises(client.Error) as err:
            _one(other, "SELECT 1")
        assert client.classify(err.value) is Failure.CONNECTION
    finally:
        other.close()


def test_sessions_run_without_snapshot_isolation(conn, w1):
    """HammerDB's rule: TPC-C users fail with 'Record has changed since last read' under
    innodb_snapshot_isolation, so every session turns it off where the server has it."""
    with conn.cursor() as cur:
        if not cur.execute("SHOW VARIABLES LIKE 'innodb_snapshot_isolation'"):
            pytest.skip("this MariaDB has no innodb_snapshot_isolation")
        cur.execute("SET GLOBAL innodb_snapshot_isolation = ON")
    try:
        fresh = client.connect(w1)
        try:
            assert _one(fresh, "SELECT @@SESSION.innodb_snapshot_isolation")[0] == 0
        finally:
            fresh.close()
    finally:
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL innodb_snapshot_isolation = OFF")


def test_checks_still_hold_after_the_procedures(w1):
    failed = [r for r in run_checks(w1, after_run=True) if not r.ok]
    assert failed == []


def test_checks_see_a_broken_order(w1):
    """The checks can fail: an order loses its NEW_ORDER row (CC5 by its first side) and a
    NEW_ORDER row without an order appears (CC2, and CC5 by its second side). Runs last."""
    c = client.connect(w1)
    try:
        with c.cursor() as cur:
            cur.execute("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 2"
                        " ORDER BY no_o_id DESC LIMIT 1")
            cur.execute("INSERT INTO new_order SELECT d_next_o_id + 5, 8, 1 FROM district"
                        " WHERE d_w_id = 1 AND d_id = 8")
    finally:
        c.close()
    failed = {r.name: r for r in run_checks(w1, after_run=True) if not r.ok}
    assert set(failed) == {"CC2", "CC3", "CC5"}
    assert failed["CC5"].violations == 2
    assert any("new_order_exists=1" in row and "order_exists=0" in row
               for row in failed["CC5"].sample)

"""--mode sql on MariaDB (native/tpcc/mytxn.c in the C loop): the C path leaves the database as the
statement-by-statement reference (engines/mariadb/tpcc/transactions.py) does on the same
inputs; retries end with a ROLLBACK and keep the server's count of commits and rollbacks at
one per transaction; empty districts are skipped; a text too long for its buffer fails the run
in one line; a run through the manager agrees with the server and keeps CC1-CC12.
test_native_sanitizers.py runs this module again under the sanitizers.
"""

from __future__ import annotations

import os

import time

import pytest

from oltplab import _native
from oltplab.config import RunSpec
from oltplab.engines.mariadb import client, counters, driver
from oltplab.engines.mariadb.instance import find_binary
from oltplab.engines.mariadb.tpcc import DIALECT
from oltplab.engines.mariadb.tpcc import transactions as reference
from oltplab.loadgen.manager import run_workload
from oltplab.engines.common.loop import UserPlan, WorkerPlan
from oltplab.workloads.tpcc.inputs import RunConstants

from ..postgres.test_sql_mode import dealt, expected_counts, run_until_failed
from .conftest import W1_DATABASE

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")

S = 1_000_000_000
TABLES = ("warehouse", "district", "customer", "history", "new_order", "orders", "order_line",
          "item", "stock", "tpcc_meta")


@pytest.fixture(scope="module")
def w1(mariadb_w1) -> str:
    """The process's W=1 build (conftest.py), copied by ``scratch`` for each test."""
    return mariadb_w1


def execute(dsn: str, *statements: str) -> list:
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            for s in statements:
                cur.execute(s)
            return list(cur.fetchall())
    finally:
        conn.close()


def scalar(dsn: str, sql: str):
    return execute(dsn, sql)[0][0]


@pytest.fixture
def scratch(mariadb, w1):
    """A fresh copy of the W=1 build: ``scratch(name)`` gives its DSN."""
    made = []

    def copy(name: str) -> str:
        mariadb.ensure_database(name)
        dsn = mariadb.dsn(name)
        execute(dsn, *[s for t in TABLES for s in (
            f"DROP TABLE IF EXISTS {t}", f"CREATE TABLE {t} LIKE {W1_DATABASE}.{t}",
            f"INSERT INTO {t} SELECT * FROM {W1_DATABASE}.{t}")])
        made.append(name)
        return dsn

    yield copy
    for name in made:
        execute(w1, f"DROP DATABASE {name}")


# Payment's history insert fails on cue: attempt n (counted in a non-transactional table, so
# that a rolled-back attempt counts too) raises the error number failures[n].
def scripted_history(failures: dict[int, int]) -> list[str]:
    cases = " ".join(
        f"{'IF' if i == 0 else 'ELSEIF'} k = {n} THEN SIGNAL SQLSTATE '{state(code)}'"
        f" SET MYSQL_ERRNO = {code}, MESSAGE_TEXT = 'scripted {code}';"
        for i, (n, code) in enumerate(sorted(failures.items())))
    return ["CREATE TABLE attempts (n INT NOT NULL) ENGINE = Aria TRANSACTIONAL = 0",
            "INSERT INTO attempts VALUES (0)",
            "CREATE TRIGGER scripted BEFORE INSERT ON history FOR EACH ROW BEGIN"
            " DECLARE k INT; UPDATE attempts SET n = n + 1; SELECT n INTO k"
            f" FROM attempts; {cases} END IF; END"]


def state(code: int) -> str:
    return "40001" if code in (1213, 1205) else "45000"


def sql_plan(dsn: str, plan: UserPlan, constants: RunConstants) -> WorkerPlan:
    return WorkerPlan(worker=0, dsn=dsn, mode="sql", users=(plan,), w_max=1,
                      constants=constants, engine="mariadb")


def run_until_stopped(dsn: str, plan: UserPlan, constants: RunConstants):
    """One sql-mode user on the C loop until a scripted error that is not retried fails it:
    (its Recorder, the failure's text)."""
    def users():
        wplan = sql_plan(dsn, plan, constants)
        return driver.Users([driver.connect(wplan)], [plan], wplan)

    return run_until_failed(users)


PLAN, CONSTANTS = UserPlan(0, 1, 1, (1,), 9), RunConstants(0, 70, 1, 1)

# Every column the transactions write, but the server's clock (o_entry_d, ol_delivery_d,
# h_date: only whether a line was delivered); one digest per table.
STATE = {
    "warehouse": "CONCAT_WS(' ', w_id, w_ytd)",
    "district": "CONCAT_WS(' ', d_w_id, d_id, d_ytd, d_next_o_id)",
    "customer": "CONCAT_WS(' ', c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, c_payment_cnt,"
                " c_delivery_cnt, MD5(c_data))",
    "history": "CONCAT_WS(' ', h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data)",
    "orders": "CONCAT_WS(' ', o_w_id, o_d_id, o_id, o_c_id, IFNULL(o_carrier_id, '-'),"
              " o_ol_cnt, o_all_local)",
    "new_order": "CONCAT_WS(' ', no_w_id, no_d_id, no_o_id)",
    "order_line": "CONCAT_WS(' ', ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id,"
                  " ol_delivery_d IS NULL, ol_quantity, ol_amount, ol_dist_info)",
    "stock": "CONCAT_WS(' ', s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt)",
}


def digest(dsn: str) -> dict[str, str]:
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION group_concat_max_len = 1 << 30")
            out = {}
            for table, row in STATE.items():
                cur.execute(f"SELECT COUNT(*), MD5(GROUP_CONCAT(r ORDER BY r SEPARATOR '|'))"
                            f" FROM (SELECT {row} AS r FROM {table}) x")
                out[table] = cur.fetchone()
            return out
    finally:
        conn.close()


def test_c_path_leaves_the_database_as_the_statement_by_statement_reference(scratch):
    """The multi-statement round trips of the C loop and the reference, on the same inputs
    on two copies of one database, leave every table the same (the server's clock aside). A
    scripted error at a chosen Payment stops the C path, so both sides stop at the same
    transaction; the server ended one transaction per transaction the loop counted."""
    c_path, ref = scratch("sqlmode_c"), scratch("sqlmode_ref")
    stop = 120
    drawn, rolled_back = expected_counts(PLAN, CONSTANTS, stop)
    assert rolled_back >= 1 and min(drawn) >= 5  # the seed draws every type and the 1%
    execute(c_path, *scripted_history({stop: 1644}))
    before = counters.snapshot_of(c_path)

    rec, failure = run_until_stopped(c_path, PLAN, CONSTANTS)
    after = counters.snapshot_of(c_path)
    assert failure.endswith("scripted 1644 (error 1644)") and "\n" not in failure
    counts = rec.counts()
    assert [c.committed + c.rolled_back for c in counts] == drawn
    assert counts[0].rolled_back == rolled_back
    assert after.xacts - before.xacts == sum(drawn)  # Com_commit + Com_rollback
    assert after.new_orders - before.new_orders == drawn[0] - rolled_back
    execute(c_path, "DROP TRIGGER scripted")
    if os.environ.get("OLTPLAB_TEST_SANITIZED"):
        return  # the reference and the comparison run no C: the plain run has them

    conn = client.connect(ref)
    try:
        for kind, (args,), _unused in dealt(PLAN, CONSTANTS, stop):
            reference.RUN[kind](conn, *args)
    finally:
        conn.close()
    assert digest(c_path) == digest(ref)
    assert not [r for r in DIALECT.run_checks(c_path, after_run=True) if not r.ok]


def test_the_reference_does_what_the_procedures_do(scratch):
    """The shared statements against the procedures on one database: a BC customer's C_DATA,
    the middle customer of a last name, the read-only answers, the unused item's rollback and
    a Delivery of all ten districts."""
    from oltplab.engines.mariadb.tpcc import procedures
    from oltplab.engines.mariadb.tpcc.loader import procedure_statements
    from oltplab.workloads.tpcc.random import last_name

    dsn = scratch("sqlmode_procs")
    execute(dsn, *procedure_statements())
    conn = client.connect(dsn)
    try:
        customer = "SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = {}"
        c_id = scalar(dsn, "SELECT MIN(c_id) FROM customer WHERE c_w_id = 1 AND c_d_id = 1"
                           " AND c_credit = 'BC'")
        old = scalar(dsn, customer.format(c_id))
        entry = f"{c_id} 1 1 2 1 10.00 | "
        assert reference.payment(conn, 1, 2, 1, 1, c_id, -1, "10.00") == c_id
        assert scalar(dsn, customer.format(c_id)) == (entry + old)[:500]
        procedures.payment(conn, 1, 2, 1, 1, c_id, -1, "10.00")
        assert scalar(dsn, customer.format(c_id)) == (entry + entry + old)[:500]

        num = next(n for n in range(1000) if 3 <= scalar(
            dsn, f"SELECT COUNT(*) FROM customer WHERE c_w_id = 1 AND c_d_id = 3"
                 f" AND c_last = '{last_name(n)}'") <= 6)
        by_name = reference.payment(conn, 1, 5, 1, 3, 0, num, "1.00")
        assert by_name == procedures.payment(conn, 1, 5, 1, 3, 0, num, "1.00")
        for args in [(1, 1, 17, -1), (1, 4, 2999, -1), (1, 6, 0, 371), (1, 9, 0, 40)]:
            assert reference.order_status(conn, *args) == procedures.ostat(conn, *args)
        for args in [(1, 1, 10), (1, 5, 15), (1, 10, 20)]:
            assert reference.stock_level(conn, *args) == procedures.slev(conn, *args)

        next_o_id = "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2"
        before = scalar(dsn, next_o_id)
        unused = ((5, 1, 3), (_native.NOT_AN_ITEM, 1, 1))
        assert reference.new_order(conn, 1, 2, 7, *zip(*unused)) == -before
        assert procedures.neword(conn, 1, 2, 7, unused) == -before
        assert scalar(dsn, next_o_id) == before
        assert reference.delivery(conn, 1, 3) == procedures.delivery(conn, 1, 4) == 10
    finally:
        conn.close()
    assert not [r for r in DIALECT.run_checks(dsn, after_run=True) if not r.ok]


def test_retried_errors_are_rolled_back_and_counted_once_by_the_server(scratch):
    """A deadlock (1213) and a lock wait timeout (1205) at a Payment's history insert end with
    a ROLLBACK and run the same inputs again: two retries, the Payment committed once, and
    the server's Com_commit + Com_rollback moved by one per transaction and one per retry."""
    dsn = scratch("sqlmode_retry")
    stop = 40
    drawn, rolled_back = expected_counts(PLAN, CONSTANTS, stop - 2)
    execute(dsn, *scripted_history({1: 1213, 2: 1205, stop: 1644}))
    before = counters.snapshot_of(dsn)
    rec, failure = run_until_stopped(dsn, PLAN, CONSTANTS)
    after = counters.snapshot_of(dsn)
    assert "scripted 1644" in failure
    counts = rec.counts()
    assert [c.committed + c.rolled_back for c in counts] == drawn
    assert (counts[1].retries, sum(c.retries for c in counts)) == (2, 2)
    assert sum(c.errors for c in counts) == 0
    assert after.xacts - before.xacts == sum(drawn) + 2
    assert not [r for r in DIALECT.run_checks(dsn, after_run=True) if not r.ok]


def test_a_district_without_new_order_rows_is_skipped_by_every_delivery(scratch):
    """District 10 has no NEW_ORDER row and gets none (its new rows go to warehouse 2): each
    Delivery skips it, counted in the inputs, and delivers the other nine."""
    dsn = scratch("sqlmode_skip")
    stop = 150
    drawn, _ = expected_counts(PLAN, CONSTANTS, stop)
    assert drawn[3] >= 5
    execute(dsn, "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 10",
            "CREATE TRIGGER elsewhere BEFORE INSERT ON new_order FOR EACH ROW"
            " SET NEW.no_w_id = IF(NEW.no_d_id = 10, 2, NEW.no_w_id)",
            *scripted_history({stop: 1644}))
    delivered = "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NOT NULL"
    before = scalar(dsn, delivered)
    rec, _failure = run_until_stopped(dsn, PLAN, CONSTANTS)
    assert [c.committed + c.rolled_back for c in rec.counts()] == drawn
    assert rec.inputs["deliveries"] == drawn[3]
    assert rec.inputs["skipped_deliveries"] == drawn[3]
    assert scalar(dsn, delivered) == before + 9 * drawn[3]


def test_a_text_too_long_for_its_buffer_fails_the_run_in_one_line(w1):
    wplan = sql_plan(w1, PLAN, CONSTANTS)
    conn = driver.connect(wplan)
    term = _native.Terminal(seed=3, w_max=1, stock_d_id=1, c_id=1, c_ol_i_id=1, c_last=1,
                            warehouses=[1])
    now = time.monotonic_ns()
    args = dict(workload="tpcc", connections=[conn], terminals=[term], ramp_end_ns=now,
                measure_end_ns=now + 30 * S, waits=False, max_retries=1,
                max_consecutive_errors=3, retryable=[1213], lost=[2013], bulk=4, sql=True)
    with pytest.raises(ValueError, match="sql_text_bytes"):
        _native.MariaDBLoop(**args, sql_text_bytes=63)
    loop = _native.MariaDBLoop(**args, sql_text_bytes=64)
    assert loop.run() == _native.FAILED
    assert "a statement text longer than its buffer (64 bytes)" in loop.error
    assert loop.error.split(":")[0] in _native.NAMES and "\n" not in loop.error
    loop.close()
    assert conn.scalar("SELECT @@in_transaction") == "0"  # nothing of the text was sent
    conn.close()


MIX = {"new_order": (0.41, 0.49), "payment": (0.39, 0.47), "order_status": (0.02, 0.06),
       "delivery": (0.02, 0.06), "stock_level": (0.02, 0.06)}


def test_a_sql_mode_run_agrees_with_the_server_and_keeps_consistency(scratch):
    """Through the manager as `tpcc run --mode sql` runs it: the server's TPM and NOPM (Com_commit
    + Com_rollback, sum(d_next_o_id)) against the client's, the mix, the input counts, and
    CC1-CC12 after the run."""
    dsn = scratch("sqlmode_run")
    spec = RunSpec(users=(2,), rampup=1.0, duration=6.0, mode="sql", seed=3)
    out = run_workload(dsn, spec, engine="mariadb")
    assert out.status == "completed", out.error
    step = out.steps[0]
    assert step["tpm"] > 0 and step["nopm"] > 0
    assert abs(step["client_tpm"] - step["tpm"]) <= 0.02 * step["tpm"], step
    assert abs(step["client_nopm"] - step["nopm"]) <= 0.02 * step["nopm"], step
    tx = step["transactions"]
    assert all(t["errors"] == 0 for t in tx.values())
    total = sum(t["count"] for t in tx.values())
    for kind, (low, high) in MIX.items():
        assert low <= tx[kind]["count"] / total <= high, (kind, tx)
    assert step["inputs"]["payments_by_last_name"] > 0
    assert not [r for r in DIALECT.run_checks(dsn, after_run=True) if not r.ok]

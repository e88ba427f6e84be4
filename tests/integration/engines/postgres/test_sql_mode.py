"""Client-side SQL (--mode sql): each transaction's effects, agreement with the PL/pgSQL
functions, and a short run that keeps the consistency conditions (clause 3.3.2)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

from oltplab.config import RunSpec
from oltplab.engines.postgres.tpcc.checks import run_checks
from oltplab.loadgen.manager import run_workload
from oltplab.workloads.tpcc.inputs import NOT_AN_ITEM
from oltplab.workloads.tpcc.random import last_name
from oltplab.engines.postgres.tpcc.transactions import (delivery, new_order, order_status,
                                                        payment, prepare, stock_level)

from .test_functions import run as on_db

NEXT_O_ID = "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = $1"
STOCK_QTY = "SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = $1"


async def prepared(conn, module) -> dict:
    return await prepare(conn, module.STATEMENTS)


def test_new_order_commits_with_the_stock_rule_and_qty_times_price(scratch_w1):
    async def body(conn):
        ps = await prepared(conn, new_order)
        await conn.execute("UPDATE stock SET s_quantity = 12 WHERE s_w_id = 1 AND s_i_id = 7")
        await conn.execute("UPDATE stock SET s_quantity = 50 WHERE s_w_id = 1 AND s_i_id = 8")
        next_o_id = await conn.fetchval(NEXT_O_ID, 4)
        lines = [(8, 1, 5), (7, 1, 4), (8, 1, 3)]  # item 8 twice: duplicates are allowed
        o_id = await new_order.run(conn, ps, (1, 4, 42, *map(tuple, zip(*lines))))
        assert o_id == next_o_id
        assert await conn.fetchval(NEXT_O_ID, 4) == next_o_id + 1
        order = await conn.fetchrow(
            "SELECT * FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = $1", o_id)
        assert (order["o_c_id"], order["o_ol_cnt"], order["o_all_local"],
                order["o_carrier_id"]) == (42, 3, 1, None)
        assert await conn.fetchval("SELECT count(*) FROM new_order"
                                   " WHERE no_w_id = 1 AND no_d_id = 4"
                                   " AND no_o_id = $1", o_id) == 1
        rows = await conn.fetch("SELECT ol_number, ol_i_id, ol_quantity, ol_amount, i_price"
                                " FROM order_line JOIN item ON i_id = ol_i_id"
                                " WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id = $1"
                                " ORDER BY ol_number", o_id)
        assert [(r[0], r[1], r[2]) for r in rows] == [(1, 8, 5), (2, 7, 4), (3, 8, 3)]
        assert all(r["ol_amount"] == r["ol_quantity"] * r["i_price"] for r in rows)
        assert await conn.fetchval(STOCK_QTY, 7) == 12 - 4 + 91  # fewer than 10 would remain
        assert await conn.fetchval(STOCK_QTY, 8) == 50 - 5 - 3

    on_db(scratch_w1, body)


def test_new_order_with_the_unused_item_rolls_back_everything(scratch_w1):
    async def body(conn):
        ps = await prepared(conn, new_order)
        before = await conn.fetchval(NEXT_O_ID, 2)
        stock_before = await conn.fetchval(STOCK_QTY, 5)
        lines = [(5, 1, 3), (NOT_AN_ITEM, 1, 1)]
        o_id = await new_order.run(conn, ps, (1, 2, 7, *map(tuple, zip(*lines))))
        assert o_id == -before
        assert not conn.is_in_transaction()
        assert await conn.fetchval(NEXT_O_ID, 2) == before
        assert await conn.fetchval("SELECT count(*) FROM orders"
                                   " WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = $1", before) == 0
        assert await conn.fetchval(STOCK_QTY, 5) == stock_before

    on_db(scratch_w1, body)


def test_payment_by_name_takes_the_middle_customer_like_the_function(scratch_w1):
    async def body(conn):
        ps = await prepared(conn, payment)
        # a last-name number shared by several customers of district 3
        num = await conn.fetchval("""
            SELECT n FROM generate_series(0, 999) n
             WHERE (SELECT count(*) FROM customer WHERE c_w_id = 1 AND c_d_id = 3
                       AND c_last = tpcc_last_name(n)) BETWEEN 3 AND 6 LIMIT 1""")
        ids = [r[0] for r in await conn.fetch(
            "SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_last = $1"
            " ORDER BY c_first, c_id", last_name(num))]
        w_ytd = await conn.fetchval("SELECT w_ytd FROM warehouse WHERE w_id = 1")
        args = (1, 5, 1, 3, 0, num, "123.45")
        c_sql = await payment.run(conn, ps, args)
        c_fn = await conn.fetchval("SELECT payment($1, $2, $3, $4, $5, $6, $7::numeric)", *args)
        assert c_sql == c_fn == ids[(len(ids) + 1) // 2 - 1]
        w_ytd_after = await conn.fetchval("SELECT w_ytd FROM warehouse WHERE w_id = 1")
        assert w_ytd_after == w_ytd + Decimal("246.90")
        h = await conn.fetch("SELECT h_amount, h_data FROM history"
                             " WHERE h_c_id = $1 AND h_c_d_id = 3 AND h_amount = 123.45", c_sql)
        assert len(h) == 2 and "    " in h[0]["h_data"]

    on_db(scratch_w1, body)


def test_payment_of_a_bad_credit_customer_prepends_to_c_data_as_the_function_does(scratch_w1):
    async def body(conn):
        ps = await prepared(conn, payment)
        c_id = await conn.fetchval("SELECT min(c_id) FROM customer WHERE c_w_id = 1 AND c_d_id = 1"
                                   " AND c_credit = 'BC'")
        old = await conn.fetchval("SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 1"
                                  " AND c_id = $1", c_id)
        await payment.run(conn, ps, (1, 2, 1, 1, c_id, -1, "10.00"))
        row = await conn.fetchrow("SELECT c_data, c_balance, c_ytd_payment, c_payment_cnt"
                                  " FROM customer"
                                  " WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = $1", c_id)
        entry = f"{c_id} 1 1 2 1 10.00 | "
        assert row["c_data"] == (entry + old)[:500]
        assert (row["c_balance"], row["c_ytd_payment"], row["c_payment_cnt"]) == (
            Decimal("-20.00"), Decimal("20.00"), 2)
        # procedures mode writes the very same text
        await conn.fetchval("SELECT payment(1, 2, 1, 1, $1, -1, 10.00)", c_id)
        after = await conn.fetchval("SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 1"
                                    " AND c_id = $1", c_id)
        assert after == (entry + row["c_data"])[:500]

    on_db(scratch_w1, body)


def test_read_only_transactions_agree_with_the_functions(scratch_w1):
    async def body(conn):
        os_ps = await prepared(conn, order_status)
        sl_ps = await prepared(conn, stock_level)
        for args in [(1, 1, 17, -1), (1, 4, 2999, -1), (1, 6, 0, 371), (1, 9, 0, 40)]:
            assert await order_status.run(conn, os_ps, args) == await conn.fetchval(
                "SELECT ostat($1, $2, $3, $4)", *args)
        for args in [(1, 1, 10), (1, 5, 15), (1, 10, 20)]:
            assert await stock_level.run(conn, sl_ps, args) == await conn.fetchval(
                "SELECT slev($1, $2, $3)", *args)

    on_db(scratch_w1, body)


def test_delivery_delivers_the_oldest_order_of_all_ten_districts(scratch_w1):
    async def body(conn):
        ps = await prepared(conn, delivery)
        oldest = dict(await conn.fetch("SELECT no_d_id, min(no_o_id) FROM new_order"
                                       " WHERE no_w_id = 1 GROUP BY no_d_id"))
        await conn.execute("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 10")
        assert await delivery.run(conn, ps, (1, 7)) == 9  # district 10 has nothing to deliver
        for d in range(1, 10):
            o = await conn.fetchrow("SELECT o_carrier_id, o_c_id FROM orders WHERE o_w_id = 1"
                                    " AND o_d_id = $1 AND o_id = $2", d, oldest[d])
            assert o["o_carrier_id"] == 7
            assert await conn.fetchval("SELECT count(*) FROM order_line WHERE ol_w_id = 1"
                                       " AND ol_d_id = $1 AND ol_o_id = $2"
                                       " AND ol_delivery_d IS NULL", d, oldest[d]) == 0
            assert await conn.fetchval("SELECT c_delivery_cnt FROM customer WHERE c_w_id = 1"
                                       " AND c_d_id = $1 AND c_id = $2", d, o["o_c_id"]) == 1

    on_db(scratch_w1, body)


def test_sql_mode_run_counts_and_keeps_consistency(scratch_w1):
    spec = RunSpec(users=(2,), rampup=1.0, duration=4.0, mode="sql", seed=3)
    out = run_workload(scratch_w1, spec)
    assert out.status == "completed", out.error
    step = out.steps[0]
    assert step["tpm"] > 0 and step["nopm"] > 0
    tx = step["transactions"]
    assert tx["new_order"]["committed"] > 0 and tx["payment"]["committed"] > 0
    assert all(t["errors"] == 0 for t in tx.values())
    failed = [r for r in run_checks(scratch_w1, after_run=True) if not r.ok]
    assert not failed, failed


def scripted_history(failures: dict[int, str]) -> str:
    """A trigger that makes Payment's history insert fail on cue: attempt n (counting every
    attempt, retries and errors included) raises SQLSTATE failures[n], or ends the backend
    (a fatal error) for "kill"."""
    cases = "\n".join(
        f"    {'IF' if i == 0 else 'ELSIF'} n = {n} THEN "
        + ("PERFORM pg_terminate_backend(pg_backend_pid());" if state == "kill"
           else f"RAISE EXCEPTION 'scripted' USING ERRCODE = '{state}';")
        for i, (n, state) in enumerate(sorted(failures.items())))
    return f"""
CREATE SEQUENCE attempt;
CREATE FUNCTION scripted_history() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    n bigint := nextval('attempt');
BEGIN
{cases}
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER scripted BEFORE INSERT ON history
    FOR EACH ROW EXECUTE FUNCTION scripted_history();
"""


def dealt(plan, constants, payments: int):
    """The transactions one user's Terminal deals before its ``payments``-th Payment, drawn as
    the C loop draws them: (kind, the reference ``run``'s arguments after ``ps``, whether it
    is a New-Order with the unused item)."""
    from oltplab.workloads.tpcc.inputs import terminal

    term = terminal(plan, 1, constants)
    paid = 0
    while True:
        kind = term.next_kind()
        args = term.inputs(kind, term.warehouse())
        if kind == 1:
            paid += 1
            if paid == payments:
                return
        yield kind, (args,), kind == 0 and args[3][-1] == NOT_AN_ITEM


def expected_counts(plan, constants, payments: int) -> tuple[list[int], int]:
    """Per type, the transactions one user draws before its ``payments``-th Payment, and how
    many of its New-Orders carry the unused item."""
    drawn, rolled_back = [0] * 5, 0
    for kind, _args, unused_item in dealt(plan, constants, payments):
        drawn[kind] += 1
        rolled_back += unused_item
    return drawn, rolled_back


def run_until_failed(make_users):
    """Run the users ``make_users()`` gives (one, made on the event loop) until they fail:
    (their Recorder, the failure's text)."""
    import time

    import pytest

    from oltplab.engines.common.recorder import Recorder, UserFailed

    async def go():
        users = make_users()
        now = time.monotonic_ns()
        rec = Recorder(now, now + 60 * 10**9, users=1)
        try:
            with pytest.raises(UserFailed) as failed:
                await users.run(rec)
        finally:
            await users.aclose()
        return rec, str(failed.value)

    return asyncio.run(go())


def run_sql_loop_until_killed(dsn, plan, constants, failures: dict[int, str]):
    """One sql-mode user on the C loop against ``scripted_history(failures)``, until the
    "kill" attempt fails it: (its Recorder, the failure's text)."""
    from oltplab.engines.postgres import driver as pquser

    on_db(dsn, lambda conn: conn.execute(scripted_history(failures)))

    def users():
        conn = pquser.open_connection(dsn, "oltplab-test", False, mode="sql")
        return pquser.ProcUsers("tpcc", [conn], [plan], 1, constants, waits=False,
                                flush_stats=False, sql=True)

    return run_until_failed(users)


def test_sql_loop_retries_counts_errors_and_rollbacks_and_stops_on_a_lost_connection(scratch_w1):
    """The C loop in --mode sql: 40001 and 40P01 roll back and re-run the transaction with
    the same inputs (counted as retries), 23505 is rolled back and counted as an error, the
    unused item's New-Orders are counted as rolled back, and the server ending the backend
    fails the users with its message on one line. Every other count is exactly what the
    Terminal drew."""
    from oltplab.engines.common.loop import UserPlan
    from oltplab.workloads.tpcc.inputs import RunConstants

    kill = 200
    plan, constants = UserPlan(0, 1, 1, (1,), 5), RunConstants(0, 70, 1, 1)
    payments = kill - 2  # attempts 1 and 2 were retries of the first Payment
    drawn, rolled_back = expected_counts(plan, constants, payments)
    assert rolled_back >= 1  # the seed draws some

    rec, failure = run_sql_loop_until_killed(
        scratch_w1, plan, constants, {1: "40001", 2: "40P01", 4: "23505", kill: "kill"})
    counts = rec.counts()
    assert "terminating connection due to administrator command" in failure
    assert "\n" not in failure
    assert (counts[0].committed, counts[0].rolled_back) == (drawn[0] - rolled_back, rolled_back)
    assert (counts[1].committed, counts[1].errors, counts[1].retries) == (drawn[1] - 1, 1, 2)
    assert [c.committed for c in counts[2:]] == drawn[2:]
    assert sum(c.errors for c in counts) == 1 and sum(c.retries for c in counts) == 2
    failed = [r for r in run_checks(scratch_w1, after_run=True) if not r.ok]
    assert not failed, failed


# Every column the transactions write, but the server's clock (o_entry_d, ol_delivery_d,
# h_date: only whether a line was delivered), one digest per table.
STATE = {
    "warehouse": "format('%s %s', w_id, w_ytd)",
    "district": "format('%s %s %s %s', d_w_id, d_id, d_ytd, d_next_o_id)",
    "customer": "format('%s %s %s %s %s %s %s %s', c_w_id, c_d_id, c_id, c_balance,"
                " c_ytd_payment, c_payment_cnt, c_delivery_cnt, md5(c_data))",
    "history": "format('%s %s %s %s %s %s %s', h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id,"
               " h_amount, h_data)",
    "orders": "format('%s %s %s %s %s %s %s', o_w_id, o_d_id, o_id, o_c_id, o_carrier_id,"
              " o_ol_cnt, o_all_local)",
    "new_order": "format('%s %s %s', no_w_id, no_d_id, no_o_id)",
    "order_line": "format('%s %s %s %s %s %s %s %s %s %s', ol_w_id, ol_d_id, ol_o_id, ol_number,"
                  " ol_i_id, ol_supply_w_id, ol_delivery_d IS NULL, ol_quantity, ol_amount,"
                  " ol_dist_info)",
    "stock": "format('%s %s %s %s %s %s', s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt,"
             " s_remote_cnt)",
}


def state(dsn) -> dict[str, str]:
    async def body(conn):
        return {t: await conn.fetchval(f"SELECT md5(string_agg(r, '|' ORDER BY r))"
                                       f" FROM (SELECT {row} AS r FROM {t}) x")
                for t, row in STATE.items()}

    return on_db(dsn, body)


def replay_reference(dsn, plan, constants, payments: int) -> None:
    """The asyncpg reference (each module's ``run``) on the inputs one user's Terminal draws
    before its ``payments``-th Payment."""
    from oltplab.engines.postgres.tpcc.transactions import MODULES

    async def body(conn):
        ps = [await prepared(conn, m) for m in MODULES]
        for kind, args, _unused_item in dealt(plan, constants, payments):
            await MODULES[kind].run(conn, ps[kind], *args)

    on_db(dsn, body)


def test_sql_loop_leaves_the_database_as_the_statement_by_statement_reference(pg, loaded_w1):
    """The pipelined C path and the asyncpg reference, run on the same inputs on two copies of
    one database, leave every table the same (the server's clock aside). A trigger ends the C
    path's backend at a chosen Payment, so both sides stop at the same transaction."""
    from oltplab.engines.common.loop import UserPlan
    from oltplab.workloads.tpcc.inputs import RunConstants

    template = loaded_w1.split("?")[0].rsplit("/", 1)[1]
    c_path, reference = (pg.create_db("s1", template=template) for _ in range(2))
    kill = 120
    plan, constants = UserPlan(0, 1, 1, (1,), 9), RunConstants(0, 70, 1, 1)
    drawn, rolled_back = expected_counts(plan, constants, kill)
    assert rolled_back >= 1 and min(drawn) >= 5  # the seed draws every type and the 1%

    rec, failure = run_sql_loop_until_killed(c_path, plan, constants, {kill: "kill"})
    assert "terminating connection" in failure
    assert [c.committed + c.rolled_back for c in rec.counts()] == drawn
    on_db(c_path, lambda conn: conn.execute("DROP TRIGGER scripted ON history"))
    replay_reference(reference, plan, constants, kill)
    assert state(c_path) == state(reference)


# Every third DELETE of a NEW_ORDER row does nothing, as when a concurrent Delivery took it;
# district 10 has no NEW_ORDER row, and keeps none.
TAKEN_BY_ANOTHER = """
DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 10;
CREATE SEQUENCE deletes;
CREATE FUNCTION taken_by_another() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('deletes') % 3 = 0 THEN
        RETURN NULL;
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER taken BEFORE DELETE ON new_order
    FOR EACH ROW EXECUTE FUNCTION taken_by_another();
CREATE FUNCTION nothing() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END';
CREATE TRIGGER empty BEFORE INSERT ON new_order
    FOR EACH ROW WHEN (NEW.no_d_id = 10) EXECUTE FUNCTION nothing();
"""
DELIVERED = "SELECT count(*) FROM orders WHERE o_carrier_id IS NOT NULL"


def test_sql_loop_delivery_looks_again_and_skips_an_empty_district(scratch_w1):
    """--mode sql's Delivery: a NEW_ORDER row whose DELETE finds it taken is looked for
    again, and a district without one is skipped (after its re-looks); every other district
    of every Delivery is delivered."""
    from oltplab.engines.common.loop import UserPlan
    from oltplab.workloads.tpcc.inputs import RunConstants

    before = on_db(scratch_w1, lambda conn: conn.fetchval(DELIVERED))
    on_db(scratch_w1, lambda conn: conn.execute(TAKEN_BY_ANOTHER))
    kill = 150
    plan, constants = UserPlan(0, 1, 1, (1,), 9), RunConstants(0, 70, 1, 1)
    drawn, _ = expected_counts(plan, constants, kill)
    assert drawn[3] >= 5

    rec, failure = run_sql_loop_until_killed(scratch_w1, plan, constants, {kill: "kill"})
    assert "terminating connection" in failure
    assert [c.committed + c.rolled_back for c in rec.counts()] == drawn
    assert sum(c.errors for c in rec.counts()) == 0
    assert rec.inputs["skipped_deliveries"] == drawn[3]  # district 10, once per Delivery
    assert on_db(scratch_w1, lambda conn: conn.fetchval(DELIVERED)) == before + 9 * drawn[3]
    assert on_db(scratch_w1, lambda conn: conn.fetchval("SELECT last_value FROM deletes")) \
        > 9 * drawn[3]  # some deletes found their row taken

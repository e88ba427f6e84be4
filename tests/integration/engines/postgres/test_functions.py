"""The PL/pgSQL transaction functions [TPC-C 2.4-2.8] and their effects, on a private W=1 copy."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import asyncpg
import pytest

from oltplab.engines.postgres.tpcc.transactions import delivery, prepare
from oltplab.engines.postgres.tpcc.transactions.payment import c_data_entry
from oltplab.workloads.tpcc import random as tr

STOCK_COLS = "s_quantity, s_ytd, s_order_cnt, s_remote_cnt"


def run(dsn, body):
    async def go():
        conn = await asyncpg.connect(dsn)
        try:
            return await body(conn)
        finally:
            await conn.close()

    return asyncio.run(go())


async def call_with_stock_diff(conn, sql, *args):
    """Run a call and return (its result, {(w, i): (before, after)} of the stock rows it
    changed)."""
    await conn.execute("DROP TABLE IF EXISTS stock_before")
    await conn.execute(f"CREATE TEMP TABLE stock_before AS SELECT s_w_id, s_i_id, {STOCK_COLS}"
                       " FROM stock")
    result = await conn.fetchval(sql, *args)
    rows = await conn.fetch(f"""
        SELECT s.s_w_id, s.s_i_id, b.s_quantity, b.s_ytd, b.s_order_cnt, b.s_remote_cnt,
               s.s_quantity, s.s_ytd, s.s_order_cnt, s.s_remote_cnt
          FROM stock s JOIN stock_before b USING (s_w_id, s_i_id)
         WHERE ({', '.join('s.' + c for c in STOCK_COLS.split(', '))})
               IS DISTINCT FROM ({', '.join('b.' + c for c in STOCK_COLS.split(', '))})""")
    return result, {(r[0], r[1]): (tuple(r[2:6]), tuple(r[6:10])) for r in rows}


def expected_stock(changes, lines, home):
    """Apply the stock rule [2.4.2.2] line by line to the rows' values before the call."""
    state = {key: before for key, (before, _) in changes.items()}
    for line in sorted(lines, key=lambda r: (r["ol_supply_w_id"], r["ol_i_id"], r["ol_number"])):
        key = (line["ol_supply_w_id"], line["ol_i_id"])
        q, ytd, cnt, remote = state[key]
        qty = line["ol_quantity"]
        q = q - qty if q - qty >= 10 else q - qty + 91
        state[key] = (q, ytd + qty, cnt + 1, remote + (key[0] != home))
    return state


async def order_lines(conn, w, d, o_id):
    return await conn.fetch("SELECT * FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2"
                            " AND ol_o_id = $3 ORDER BY ol_number", w, d, o_id)


NEWORD = "SELECT neword($1, $2, $3, $4, $5, $6)"


def neword_args(w_id, d_id, c_id, lines):
    """neword's arguments for lines of (ol_i_id, ol_supply_w_id, ol_quantity)."""
    items, supplies, quantities = (list(column) for column in zip(*lines))
    return (w_id, d_id, c_id, items, supplies, quantities)


LINES = [(17, 1, 3), (99_999, 1, 10), (5, 1, 1), (50_000, 1, 7), (1, 1, 2), (100_000, 1, 4),
         (1234, 1, 5), (777, 1, 6), (31_337, 1, 8), (2, 1, 9), (60_001, 1, 1), (42, 1, 2)]


def test_new_order_enters_the_lines_it_is_given(scratch_w1):
    async def body(conn):
        o_id, changes = await call_with_stock_diff(conn, NEWORD, *neword_args(1, 4, 77, LINES))
        assert o_id == 3001
        assert await conn.fetchval("SELECT d_next_o_id FROM district"
                                   " WHERE d_w_id = 1 AND d_id = 4") == 3002
        order = await conn.fetchrow("SELECT * FROM orders"
                                    " WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = 3001")
        assert (order["o_c_id"], order["o_ol_cnt"], order["o_carrier_id"],
                order["o_all_local"]) == (77, 12, None, 1)
        assert order["o_entry_d"] is not None
        assert await conn.fetchval("SELECT count(*) FROM new_order"
                                   " WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = 3001") == 1
        lines = await order_lines(conn, 1, 4, 3001)
        assert [(r["ol_i_id"], r["ol_supply_w_id"], r["ol_quantity"]) for r in lines] == LINES
        assert [r["ol_number"] for r in lines] == list(range(1, 13))
        for r in lines:
            assert r["ol_delivery_d"] is None
            price = await conn.fetchval("SELECT i_price FROM item WHERE i_id = $1", r["ol_i_id"])
            assert r["ol_amount"] == r["ol_quantity"] * price  # no tax, no discount
            dist = await conn.fetchval("SELECT s_dist_04 FROM stock"
                                       " WHERE s_w_id = 1 AND s_i_id = $1", r["ol_i_id"])
            assert r["ol_dist_info"] == dist
        assert ({key: after for key, (_, after) in changes.items()}
                == expected_stock(changes, lines, 1))
        assert set(changes) == {(1, i) for i, _, _ in LINES}

    run(scratch_w1, body)


def test_new_order_stock_refill(scratch_w1):
    """With 11 in stock, quantity 1 leaves 10; anything more refills by 91."""

    async def body(conn):
        await conn.execute("UPDATE stock SET s_quantity = 11")
        lines = [(100 + 7 * n, 1, 1 + n % 10) for n in range(15)]
        o_id, changes = await call_with_stock_diff(conn, NEWORD, *neword_args(1, 2, 100, lines))
        rows = await order_lines(conn, 1, 2, o_id)
        assert ({key: after for key, (_, after) in changes.items()}
                == expected_stock(changes, rows, 1))
        seen = {after[0] for _, after in changes.values()}
        assert 10 in seen  # 11 - 1: no refill at exactly 10
        assert seen & set(range(92, 101))  # 11 - qty + 91

    run(scratch_w1, body)


def test_new_order_with_an_item_on_several_lines_applies_the_stock_rule_line_after_line(
        scratch_w1):
    """Duplicate items are allowed in one order [2.4.1.5]: the stock row is updated once with
    the same result as the rule applied to each line in turn, refills included."""

    async def body(conn):
        await conn.execute("UPDATE stock SET s_quantity = 25 WHERE s_w_id = 1 AND s_i_id = 500")
        await conn.execute("UPDATE stock SET s_quantity = 10 WHERE s_w_id = 1 AND s_i_id = 600")
        lines = [(500, 1, 9), (600, 1, 10), (500, 1, 8), (700, 1, 3), (500, 1, 10), (600, 1, 10),
                 (500, 1, 10), (600, 1, 10), (600, 1, 10), (600, 1, 10), (600, 1, 10),
                 (600, 1, 10), (600, 1, 10), (600, 1, 10), (600, 1, 10)]
        o_id, changes = await call_with_stock_diff(conn, NEWORD, *neword_args(1, 3, 9, lines))
        rows = await order_lines(conn, 1, 3, o_id)
        assert [(r["ol_i_id"], r["ol_supply_w_id"], r["ol_quantity"]) for r in rows] == lines
        after = {key: a for key, (_, a) in changes.items()}
        assert after == expected_stock(changes, rows, 1)
        assert after[(1, 500)][2] - changes[(1, 500)][0][2] == 4  # s_order_cnt: one per line
        assert after[(1, 600)][0] == 10 + (10 - 10 - 100) % 91  # ten refills in a row

    run(scratch_w1, body)


def test_new_order_rollback_leaves_nothing(scratch_w1):
    lines = LINES[:7] + [(100_001, 1, 5)]

    async def body(conn):
        result, changes = await call_with_stock_diff(conn, NEWORD, *neword_args(1, 2, 55, lines))
        assert result == -3001
        assert changes == {}
        assert await conn.fetchval("SELECT d_next_o_id FROM district"
                                   " WHERE d_w_id = 1 AND d_id = 2") == 3001
        assert await conn.fetchval("""
            SELECT (SELECT count(*) FROM orders WHERE o_d_id = 2 AND o_id > 3000)
                 + (SELECT count(*) FROM new_order WHERE no_d_id = 2 AND no_o_id > 3000)
                 + (SELECT count(*) FROM order_line WHERE ol_d_id = 2 AND ol_o_id > 3000)""") == 0
        # inside an explicit transaction the call succeeds and the transaction goes on
        async with conn.transaction():
            assert await conn.fetchval(NEWORD, *neword_args(1, 2, 55, lines[-5:])) == -3001
            assert await conn.fetchval(NEWORD, *neword_args(1, 2, 55, LINES[:5])) == 3001
        assert await conn.fetchval("SELECT d_next_o_id FROM district"
                                   " WHERE d_w_id = 1 AND d_id = 2") == 3002

    run(scratch_w1, body)


def test_new_order_remote_lines(scratch_w1):
    async def body(conn):
        await conn.execute(
            "INSERT INTO stock SELECT s_i_id, 2, s_quantity, s_dist_01, s_dist_02, s_dist_03,"
            " s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10,"
            " 0, 0, 0, s_data FROM stock WHERE s_w_id = 1")
        remote = [(11, 2, 3), (12, 2, 4), (11, 1, 5)]
        await conn.fetchval(NEWORD, *neword_args(1, 5, 8, LINES[:5] + remote))
        await conn.fetchval(NEWORD, *neword_args(1, 5, 9, LINES[5:10]))
        rows = await conn.fetch("SELECT ol_o_id, ol_i_id, ol_supply_w_id, ol_quantity"
                                " FROM order_line WHERE ol_d_id = 5 AND ol_o_id > 3000"
                                " ORDER BY ol_o_id, ol_number")
        assert [tuple(r)[1:] for r in rows] == LINES[:5] + remote + LINES[5:10]
        orders = await conn.fetch("SELECT o_id, o_all_local FROM orders WHERE o_d_id = 5"
                                  " AND o_id > 3000 ORDER BY o_id")
        assert [tuple(r) for r in orders] == [(3001, 0), (3002, 1)]
        assert dict(await conn.fetch("SELECT s_i_id, s_remote_cnt FROM stock WHERE s_w_id = 2"
                                     " AND s_remote_cnt > 0")) == {11: 1, 12: 1}
        assert await conn.fetchval("SELECT sum(s_remote_cnt) FROM stock WHERE s_w_id = 1") == 0

    run(scratch_w1, body)


def test_payment_by_id(scratch_w1):
    async def body(conn):
        w0 = await conn.fetchrow("SELECT * FROM warehouse WHERE w_id = 1")
        d0 = await conn.fetchrow("SELECT * FROM district WHERE d_w_id = 1 AND d_id = 2")
        c0 = await conn.fetchrow("SELECT * FROM customer"
                                 " WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 100")
        assert await conn.fetchval("SELECT payment(1, 2, 1, 2, 100, -1, 12.34)") == 100
        w1 = await conn.fetchrow("SELECT * FROM warehouse WHERE w_id = 1")
        d1 = await conn.fetchrow("SELECT * FROM district WHERE d_w_id = 1 AND d_id = 2")
        c1 = await conn.fetchrow("SELECT * FROM customer"
                                 " WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 100")
        amount = Decimal("12.34")
        assert w1["w_ytd"] == w0["w_ytd"] + amount and d1["d_ytd"] == d0["d_ytd"] + amount
        assert c1["c_balance"] == c0["c_balance"] - amount
        assert c1["c_ytd_payment"] == c0["c_ytd_payment"] + amount
        assert c1["c_payment_cnt"] == c0["c_payment_cnt"] + 1
        if c0["c_credit"] == "GC":
            assert c1["c_data"] == c0["c_data"]
        h = await conn.fetch("SELECT * FROM history WHERE h_amount = 12.34")
        assert len(h) == 1
        h = h[0]
        assert (h["h_c_id"], h["h_c_d_id"], h["h_c_w_id"], h["h_d_id"],
                h["h_w_id"]) == (100, 2, 1, 2, 1)
        assert h["h_data"] == w0["w_name"] + "    " + d0["d_name"] and h["h_date"] is not None

    run(scratch_w1, body)


def test_payment_bad_credit_and_remote_district(scratch_w1):
    async def body(conn):
        c_id, data = await conn.fetchrow("SELECT c_id, c_data FROM customer WHERE c_w_id = 1"
                                         " AND c_d_id = 3 AND c_credit = 'BC'"
                                         " ORDER BY c_id LIMIT 1")
        ytd3 = await conn.fetchval("SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = 3")
        assert await conn.fetchval("SELECT payment(1, 5, 1, 3, $1, -1, 100.50)", c_id) == c_id
        new = await conn.fetchval("SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 3"
                                  " AND c_id = $1", c_id)
        # the text --mode sql writes too
        assert new == (c_data_entry(c_id, 3, 1, 5, 1, "100.50") + data)[:500]
        assert new.startswith(f"{c_id} 3 1 5 1 100.50 | ")
        assert len(new) == 500 or len(data) < 480
        assert await conn.fetchval("SELECT d_ytd FROM district"
                                   " WHERE d_w_id = 1 AND d_id = 3") == ytd3
        assert await conn.fetchval("SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = 5") == \
            Decimal("30100.50")
        h = await conn.fetchrow("SELECT * FROM history WHERE h_amount = 100.50")
        assert (h["h_c_id"], h["h_c_d_id"], h["h_d_id"]) == (c_id, 3, 5)

    run(scratch_w1, body)


def test_payment_and_order_status_by_name_take_the_middle_customer(scratch_w1):
    number = {tr.last_name(n): n for n in range(1000)}

    async def body(conn):
        groups = await conn.fetch("SELECT c_last, array_agg(c_id) ids, array_agg(c_first) firsts"
                                  " FROM customer WHERE c_w_id = 1 AND c_d_id = 6 GROUP BY c_last")
        by_size = {}
        for g in groups:
            by_size.setdefault(len(g["ids"]), g)
        assert {1, 2, 3, 4} <= set(by_size)
        for n, g in sorted(by_size.items())[:6]:
            ordered = sorted(zip(g["firsts"], g["ids"]))
            expected = ordered[tr.middle_index(n)][1]
            last_num = number[g["c_last"]]
            o_id = await conn.fetchval("SELECT o_id FROM orders WHERE o_w_id = 1 AND o_d_id = 6"
                                       " AND o_c_id = $1 ORDER BY o_id DESC LIMIT 1", expected)
            assert await conn.fetchval("SELECT ostat(1, 6, 0, $1)", last_num) == o_id, n
            assert await conn.fetchval("SELECT payment(1, 6, 1, 6, 0, $1, 1.00)",
                                       last_num) == expected, n

    run(scratch_w1, body)


def test_order_status_by_id_sees_the_latest_order(scratch_w1):
    async def body(conn):
        first = await conn.fetchval("SELECT o_id FROM orders WHERE o_w_id = 1 AND o_d_id = 7"
                                    " AND o_c_id = 200")
        assert await conn.fetchval("SELECT ostat(1, 7, 200, -1)") == first
        o_id = await conn.fetchval(NEWORD, *neword_args(1, 7, 200, LINES[:6]))
        assert await conn.fetchval("SELECT ostat(1, 7, 200, -1)") == o_id == 3001

    run(scratch_w1, body)


def test_delivery_all_districts_and_skips(scratch_w1):
    async def body(conn):
        before = await conn.fetch("""
            SELECT o.o_d_id, o.o_c_id, c.c_balance, (SELECT sum(ol_amount) FROM order_line
                     WHERE ol_w_id = 1 AND ol_d_id = o.o_d_id AND ol_o_id = 2101) AS amount
              FROM orders o JOIN customer c ON c.c_w_id = 1 AND c.c_d_id = o.o_d_id AND c.c_id = o.o_c_id
             WHERE o.o_w_id = 1 AND o.o_id = 2101 ORDER BY o.o_d_id""")  # noqa: E501
        assert await conn.fetchval("SELECT delivery(1, 7)") == 10
        for b in before:
            d = b["o_d_id"]
            assert await conn.fetchval("SELECT min(no_o_id) FROM new_order WHERE no_w_id = 1"
                                       " AND no_d_id = $1", d) == 2102
            assert await conn.fetchval("SELECT o_carrier_id FROM orders WHERE o_w_id = 1"
                                       " AND o_d_id = $1 AND o_id = 2101", d) == 7
            assert await conn.fetchval("SELECT bool_and(ol_delivery_d IS NOT NULL) FROM order_line"
                                       " WHERE ol_w_id = 1 AND ol_d_id = $1 AND ol_o_id = 2101", d)
            c = await conn.fetchrow("SELECT c_balance, c_delivery_cnt FROM customer"
                                    " WHERE c_w_id = 1 AND c_d_id = $1 AND c_id = $2",
                                    d, b["o_c_id"])
            assert c["c_balance"] == b["c_balance"] + b["amount"] and c["c_delivery_cnt"] == 1
        # a district without undelivered orders is skipped, the others are delivered
        await conn.execute("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 4")
        assert await conn.fetchval("SELECT delivery(1, 3)") == 9
        assert await conn.fetchval("SELECT o_carrier_id FROM orders"
                                   " WHERE o_d_id = 4 AND o_id = 2102") is None
        assert await conn.fetchval("SELECT count(*) FROM orders"
                                   " WHERE o_id = 2102 AND o_carrier_id = 3") == 9

    run(scratch_w1, body)


@pytest.mark.parametrize("mode", ["procedures", "sql"])
def test_concurrent_deliveries_do_not_count_false_skips(scratch_w1, mode):
    """The second Delivery waits for the first's rows, then takes the next order in every
    district instead of finding nothing (READ COMMITTED): one policy for both modes, the
    function's and sql mode's re-look."""

    async def go():
        a = await asyncpg.connect(scratch_w1)
        b = await asyncpg.connect(scratch_w1)
        try:
            ps = await prepare(b, delivery.STATEMENTS)
            tx = a.transaction()
            await tx.start()
            assert await a.fetchval("SELECT delivery(1, 1)") == 10
            second = asyncio.ensure_future(b.fetchval("SELECT delivery(1, 2)")
                                           if mode == "procedures"
                                           else delivery.run(b, ps, (1, 2)))
            await asyncio.sleep(0.5)
            assert not second.done()  # blocked on the rows the first one deleted
            await tx.commit()
            assert await asyncio.wait_for(second, 10) == 10
            rows = await a.fetch("SELECT o_id, o_carrier_id FROM orders WHERE o_w_id = 1"
                                 " AND o_id IN (2101, 2102)")
            assert sorted((r["o_id"], r["o_carrier_id"]) for r in rows) == \
                [(2101, 1)] * 10 + [(2102, 2)] * 10
        finally:
            await a.close()
            await b.close()

    asyncio.run(go())


def test_stock_level_against_a_hand_count(scratch_w1):
    async def body(conn):
        next_o_id = await conn.fetchval("SELECT d_next_o_id FROM district"
                                        " WHERE d_w_id = 1 AND d_id = 8")
        items = sorted({r[0] for r in await conn.fetch(
            "SELECT ol_i_id FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 8"
            " AND ol_o_id >= $1 AND ol_o_id < $2", next_o_id - 20, next_o_id)})
        await conn.execute("UPDATE stock SET s_quantity = 12"
                           " WHERE s_w_id = 1 AND s_i_id = ANY($1)", items[::3])
        quantities = dict(await conn.fetch("SELECT s_i_id, s_quantity FROM stock WHERE s_w_id = 1"
                                           " AND s_i_id = ANY($1)", items))
        for threshold in (10, 12, 13, 15, 20):
            expected = sum(1 for i in items if quantities[i] < threshold)
            assert await conn.fetchval("SELECT slev(1, 8, $1)", threshold) == expected, threshold
        assert await conn.fetchval("SELECT slev(1, 8, 13)") >= len(items[::3])

    run(scratch_w1, body)

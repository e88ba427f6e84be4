"""The brokerage's transaction functions (engines/postgres/brokerage/sql/functions.sql) on a
small database made by hand (brokerage_rows.py), with known answers: Trade-Result's lots
(FIFO, LIFO, short positions), its money, a limit order from Trade-Order through Market-Feed
to Trade-Result, the deliberate rollback, the read-only transactions' rows,
Data-Maintenance's one table a call, Trade-Cleanup; and workloads/brokerage/frames.py's
calls as the database has them."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal as D
from pathlib import Path

import asyncpg
import pytest

import oltplab
from oltplab.workloads.brokerage import frames
from oltplab.workloads.brokerage.schema import COLUMNS, INDEXES, PRIMARY_KEYS

from .. import brokerage_rows as rows
from .test_functions import run

SQL = Path(oltplab.__file__).parent / "engines" / "postgres" / "brokerage" / "sql"
OWNER = rows.OWNER


@pytest.fixture(scope="module")
def template(pg) -> str:
    """A database of the tables (tables.sql), the keys schema.py gives, the hand-made rows,
    seq_trade_id and the functions; the tests take copies of it."""
    dsn = pg.create_db("brkt")

    async def build(conn):
        await conn.execute((SQL / "tables.sql").read_text())
        for table, key in PRIMARY_KEYS.items():
            await conn.execute(f"ALTER TABLE {table} ADD PRIMARY KEY ({', '.join(key)})")
        for name, (table, columns) in INDEXES.items():
            await conn.execute(f"CREATE INDEX {name} ON {table} ({', '.join(columns)})")
        for table, records in rows.rows().items():
            await conn.copy_records_to_table(table, records=records, columns=COLUMNS[table])
        await conn.execute(f"CREATE SEQUENCE seq_trade_id START {rows.FIRST_NEW_TRADE}")
        await conn.execute((SQL / "functions.sql").read_text())

    run(dsn, build)
    return dsn.split("?")[0].rsplit("/", 1)[1]


@pytest.fixture
def db(pg, template) -> str:
    return pg.create_db("brk", template=template)


async def call(conn, key: str, *args, isolation: str | None = None):
    """One transaction as the driver makes it: BEGIN at its isolation, the one call, COMMIT;
    its row (its rows for Market-Feed)."""
    t = frames.TRANSACTIONS[key]
    async with conn.transaction(isolation=(isolation or t.isolation).replace(" ", "_")):
        found = await conn.fetch(frames.call_sql(t), *args)
    return found if t.rows else found[0]


def order(acct=1, symbol="ABC", tt="TMS", qty=250, price=D("0"), lifo=False, margin=False,
          names=OWNER, back=False):
    """trade_order's arguments."""
    return (acct, names[0], names[1], names[2], symbol, "", "", tt, qty, price, margin, lifo,
            back)


async def lots(conn, acct, symbol):
    return [tuple(r) for r in await conn.fetch(
        "SELECT h_t_id, h_qty, h_price FROM holding WHERE h_ca_id = $1 AND h_s_symb = $2"
        " ORDER BY h_t_id", acct, symbol)]


async def hh(conn, t_id):
    return [tuple(r) for r in await conn.fetch(
        "SELECT hh_h_t_id, hh_before_qty, hh_after_qty FROM holding_history"
        " WHERE hh_t_id = $1 ORDER BY hh_h_t_id", t_id)]


async def summary(conn, acct, symbol):
    return await conn.fetchval("SELECT hs_qty FROM holding_summary"
                               " WHERE hs_ca_id = $1 AND hs_s_symb = $2", acct, symbol)


async def sell_and_complete(conn, lifo: bool):
    t = await call(conn, "trade_order", *order(lifo=lifo))
    assert (t["status_id"], t["is_market"], t["bid_price"]) == ("SBMT", True, D("25.00"))
    return t["trade_id"], await call(conn, "trade_result", t["trade_id"], D("25.00"))


# Selling 250 ABC of 100 @ 20 (trade 1), 200 @ 22 (trade 2), 300 @ 24 (trade 3) at 25.00;
# account 1: tier 2, tax status 1 (the tax comes off the cash), rates 20% + 0%. Commission:
# tier 2, TMS, NYSE, 201-400 shares: 0.27%, of 6,250.00 = 16.875 -> 16.88; charge 8.00.
COMM = D("16.88")


def test_trade_result_fifo_takes_the_oldest_lots(db):
    async def body(conn):
        t_id, r = await sell_and_complete(conn, lifo=False)
        assert t_id == rows.FIRST_NEW_TRADE
        # trade 1 whole, 150 of trade 2: bought for 2,000 + 3,300, sold for 6,250
        assert await hh(conn, t_id) == [(1, 100, 0), (2, 200, 50)]
        assert await lots(conn, 1, "ABC") == [(2, 50, D("22.00")), (3, 300, D("24.00"))]
        assert await summary(conn, 1, "ABC") == 350
        tax = D("190.00")  # (6,250 - 5,300) x 20%
        assert (r["comm_amount"], r["tax_amount"]) == (COMM, tax)
        assert r["se_amount"] == D("6250.00") - D("8.00") - COMM - tax
        assert r["acct_bal"] == D("10000.00") + r["se_amount"]

    run(db, body)


def test_trade_result_lifo_takes_the_newest_lot(db):
    async def body(conn):
        t_id, r = await sell_and_complete(conn, lifo=True)
        assert await hh(conn, t_id) == [(3, 300, 50)]
        assert await lots(conn, 1, "ABC") == [(1, 100, D("20.00")), (2, 200, D("22.00")),
                                              (3, 50, D("24.00"))]
        assert await summary(conn, 1, "ABC") == 350
        assert r["tax_amount"] == D("50.00")  # (6,250 - 250 x 24) x 20%
        trade = await conn.fetchrow("SELECT * FROM trade WHERE t_id = $1", t_id)
        assert (trade["t_st_id"], trade["t_trade_price"], trade["t_comm"],
                trade["t_tax"]) == ("CMPT", D("25.00"), COMM, D("50.00"))

    run(db, body)


def test_trade_order_values_a_sale_against_the_lots_it_would_take(db):
    """Frame 3 of Trade-Order: what selling 250 ABC at the last price (25.00) would buy and
    sell, FIFO and LIFO, and the tax on the gain; a limit order keeps its price."""
    async def body(conn):
        f3 = ("SELECT * FROM trade_order_f3(1, 1, 2, $1, '', 1, 250, $2, $3, '', 21.00, $4)")
        fifo = await conn.fetchrow(f3, False, "TMS", False, "ABC")
        assert (fifo["buy_value"], fifo["sell_value"], fifo["tax_amount"], fifo["comm_rate"],
                fifo["charge_amount"], fifo["status_id"], fifo["requested_price"]) == (
            D("5300.00"), D("6250.00"), D("190.00"), D("0.27"), D("8.00"), "SBMT", D("25.00"))
        lifo = await conn.fetchrow(f3, True, "TMS", True, "ABC")
        assert (lifo["buy_value"], lifo["tax_amount"]) == (D("6000.00"), D("50.00"))
        assert lifo["acct_assets"] == D("10000.00") + 600 * D("25.00")
        limit = await conn.fetchrow(f3, False, "TLS", False, "ABC")
        assert (limit["status_id"], limit["requested_price"], limit["tax_amount"]) \
            == ("PNDG", D("21.00"), 0)  # 250 at 21.00 gains nothing on 5,300.00
        by_name = await conn.fetchrow("SELECT * FROM trade_order_f3(1, 1, 2, false, 'COMMON',"
                                      " 1, 100, 'TMB', false, 'Gamma Oil', 0, '')")
        assert (by_name["symbol"], by_name["sec_name"], by_name["buy_value"]) \
            == ("GHI", "GHI common", 0)

    run(db, body)


def test_a_cash_trade_settles_into_the_balance_and_counts_for_the_broker(db):
    async def body(conn):
        t_id, r = await sell_and_complete(conn, lifo=True)
        se = await conn.fetchrow("SELECT * FROM settlement WHERE se_t_id = $1", t_id)
        trade_day = await conn.fetchval("SELECT t_dts::date FROM trade WHERE t_id = $1", t_id)
        assert (se["se_cash_type"], se["se_amt"]) == ("Cash Account", r["se_amount"])
        assert se["se_cash_due_date"] == trade_day + dt.timedelta(days=2)
        ct = await conn.fetchrow("SELECT * FROM cash_transaction WHERE ct_t_id = $1", t_id)
        assert (ct["ct_amt"], ct["ct_name"]) == (r["se_amount"], "Market-Sell 250 shares of ABC")
        assert await conn.fetchval("SELECT ca_bal FROM customer_account WHERE ca_id = 1") \
            == D("10000.00") + D("6250.00") - D("8.00") - COMM - D("50.00")
        broker = await conn.fetchrow("SELECT * FROM broker WHERE b_id = 1")
        assert (broker["b_num_trades"], broker["b_comm_total"]) == (1, COMM)
        # a margin purchase settles without touching the balance
        t = await call(conn, "trade_order", *order(acct=2, symbol="GHI", tt="TMB", qty=100,
                                                   margin=True))
        m = await call(conn, "trade_result", t["trade_id"], D("22.00"))
        assert m["acct_bal"] == D("5000.00")
        assert await conn.fetchval("SELECT se_cash_type FROM settlement WHERE se_t_id = $1",
                                   t["trade_id"]) == "Margin"
        assert await conn.fetchval("SELECT count(*) FROM cash_transaction WHERE ct_t_id = $1",
                                   t["trade_id"]) == 0
        # tier 2, TMB, AMEX, 100 shares: 0.37% of 2,200.00 = 8.14
        assert m["se_amount"] == -(D("2200.00") + D("8.00") + D("8.14"))
        assert await conn.fetchval("SELECT b_num_trades FROM broker WHERE b_id = 1") == 2

    run(db, body)


def test_a_sale_beyond_the_holding_goes_short_and_purchases_cover_it(db):
    async def body(conn):
        async def trade(tt, qty, price):
            t = await call(conn, "trade_order", *order(acct=2, symbol="DEF", tt=tt, qty=qty))
            r = await call(conn, "trade_result", t["trade_id"], D(price))
            return t["trade_id"], r

        sold, r = await trade("TMS", 300, "26.00")  # holds 100 @ 25 (trade 4)
        assert await hh(conn, sold) == [(4, 100, 0), (sold, 0, -200)]
        assert await lots(conn, 2, "DEF") == [(sold, -200, D("26.00"))]
        assert await summary(conn, 2, "DEF") == -200
        assert r["tax_amount"] == 0  # tax status 0
        covered, r = await trade("TMB", 150, "24.00")
        assert await hh(conn, covered) == [(sold, -200, -50)]
        assert await lots(conn, 2, "DEF") == [(sold, -50, D("26.00"))]
        assert await summary(conn, 2, "DEF") == -50
        bought, r = await trade("TMB", 100, "25.00")
        assert await hh(conn, bought) == [(sold, -50, 0), (bought, 0, 50)]
        assert await lots(conn, 2, "DEF") == [(bought, 50, D("25.00"))]
        assert await summary(conn, 2, "DEF") == 50
        closed, r = await trade("TMS", 50, "25.00")
        assert await hh(conn, closed) == [(bought, 50, 0)]
        assert await lots(conn, 2, "DEF") == [] and await summary(conn, 2, "DEF") is None

    run(db, body)


def test_a_taxed_gain_covering_a_short_position(db):
    """Account 11 (tax status 2: the tax is recorded, not withheld) sells short and buys back
    cheaper: the gain is taxed."""
    async def body(conn):
        names = ("Bea", "Second", "TAX-2")
        t = await call(conn, "trade_order", *order(acct=11, tt="TMS", qty=100, names=names))
        await call(conn, "trade_result", t["trade_id"], D("25.00"))
        t = await call(conn, "trade_order", *order(acct=11, tt="TMB", qty=100, names=names))
        r = await call(conn, "trade_result", t["trade_id"], D("20.00"))
        assert r["tax_amount"] == D("100.00")  # (2,500 - 2,000) x 20%
        # tier 1, TMB, NYSE, 100 shares: 0.43% of 2,000.00; charge 10.00; tax not withheld
        assert (r["comm_amount"], r["se_amount"]) == (D("8.60"), -D("2018.60"))

    run(db, body)


def test_a_limit_order_waits_for_market_feed_then_completes(db):
    async def body(conn):
        names = ("Bea", "Second", "TAX-2")
        t = await call(conn, "trade_order", *order(acct=11, tt="TLB", qty=100,
                                                   price=D("21.00"), names=names))
        t_id = t["trade_id"]
        assert (t["status_id"], t["is_market"], t["bid_price"]) == ("PNDG", False, D("21.00"))
        assert tuple(await conn.fetchrow("SELECT tr_tt_id, tr_s_symb, tr_qty, tr_bid_price,"
                                         " tr_b_id FROM trade_request WHERE tr_t_id = $1",
                                         t_id)) == ("TLB", "ABC", 100, D("21.00"), 2)
        symbols, qtys = ["ABC", "DEF"] * 10, [10] * 20
        fired = await call(conn, "market_feed", symbols, [D("21.50"), D("26.00")] * 10, qtys)
        assert fired == []  # a limit buy at 21.00 waits for 21.00 or less
        assert await conn.fetchval("SELECT lt_price FROM last_trade WHERE lt_s_symb = 'ABC'") \
            == D("21.50")
        fired = await call(conn, "market_feed", ["DEF", "ABC"], [D("26.00"), D("20.90")],
                           [10, 100])
        assert [tuple(r) for r in fired] == [(t_id, "ABC", D("20.90"), 100, "TLB")]
        assert await conn.fetchval("SELECT lt_vol FROM last_trade WHERE lt_s_symb = 'ABC'") \
            == 5000 + 100 + 100
        assert await conn.fetchval("SELECT count(*) FROM trade_request WHERE tr_t_id = $1",
                                   t_id) == 0
        await call(conn, "trade_result", t_id, D("20.90"))
        assert [r[0] for r in await conn.fetch(
            "SELECT th_st_id FROM trade_history WHERE th_t_id = $1 ORDER BY th_dts", t_id)] \
            == ["PNDG", "SBMT", "CMPT"]
        assert await conn.fetchval("SELECT t_st_id FROM trade WHERE t_id = $1", t_id) == "CMPT"
        assert await lots(conn, 11, "ABC") == [(t_id, 100, D("20.90"))]

    run(db, body)


def test_market_feed_triggers_each_kind_of_limit_order_at_its_price(db):
    async def body(conn):
        made = {}
        for tt, price in (("TSL", "19.00"), ("TLS", "30.00"), ("TLB", "18.00")):
            t = await call(conn, "trade_order", *order(acct=1, tt=tt, qty=100,
                                                       price=D(price)))
            made[tt] = t["trade_id"]
        feed = ("market_feed", ["ABC"], )
        assert await call(conn, *feed, [D("19.01")], [1]) == []
        assert [r["type_id"] for r in await call(conn, *feed, [D("19.00")], [1])] == ["TSL"]
        assert [r["type_id"] for r in await call(conn, *feed, [D("30.00")], [1])] == ["TLS"]
        assert [r["trade_id"] for r in await call(conn, *feed, [D("17.99")], [1])] \
            == [made["TLB"]]
        assert await conn.fetchval("SELECT count(*) FROM trade WHERE t_st_id = 'SBMT'") == 3

    run(db, body)


def test_the_deliberate_rollback_leaves_nothing(db):
    async def body(conn):
        counted = ("SELECT (SELECT count(*) FROM trade), (SELECT count(*) FROM trade_history),"
                   " (SELECT count(*) FROM trade_request)")
        before = tuple(await conn.fetchrow(counted))
        tr = conn.transaction(isolation="repeatable_read")
        await tr.start()
        r = await conn.fetchrow(frames.call_sql(frames.TRADE_ORDER),
                                *order(tt="TLS", qty=100, price=D("29.00"), back=True))
        assert r["roll_it_back"] is True and r["trade_id"] == rows.FIRST_NEW_TRADE
        assert tuple(await conn.fetchrow(counted)) == before  # undone by the function itself
        await tr.commit()  # and the client commits, as for any order
        assert tuple(await conn.fetchrow(counted)) == before
        # an executor the account does not permit: no trade at all; a permitted one trades
        r = await call(conn, "trade_order", *order(names=("Eve", "Stranger", "TAX-E")))
        assert r["trade_id"] == 0 and tuple(await conn.fetchrow(counted)) == before
        r = await call(conn, "trade_order", *order(names=rows.FRIEND))
        assert r["trade_id"] > rows.FIRST_NEW_TRADE
        assert await conn.fetchval("SELECT t_exec_name FROM trade WHERE t_id = $1",
                                   r["trade_id"]) == "Ann Other"

    run(db, body)


def test_the_read_only_transactions_rows(db):
    async def body(conn):
        bv = await conn.fetch("SELECT * FROM broker_volume_f1($1, 'Energy')",
                              ["Broker One", "Broker Two"])
        assert [tuple(r) for r in bv] == [("Broker Two", D("4200.00"))]  # 200 GHI @ 21.00
        assert tuple(await call(conn, "broker_volume", ["Broker Two"], "Technology")) \
            == (0, 0)
        cp = await conn.fetch("SELECT * FROM customer_position_f1(0, 'TAX-1')")
        # account 2: 100 DEF @ 26 last; account 1: 600 ABC @ 25
        assert [tuple(r) for r in cp] == [(1, 2, D("5000.00"), D("2600.00")),
                                          (1, 1, D("10000.00"), D("15000.00"))]
        hist = await conn.fetch("SELECT * FROM customer_position_f2(1)")
        assert [(r["trade_id"], r["trade_status"].strip()) for r in hist] == [
            (3, "Completed"), (3, "Submitted"), (2, "Completed"), (2, "Submitted"),
            (1, "Completed"), (1, "Submitted")]
        assert tuple(await call(conn, "customer_position", 1, "", True, 1)) == (1, 2, 6)
        watch = dt.date(2025, 1, 8)  # closes 22.00 that day
        assert tuple(await call(conn, "market_watch", 0, 1, 0, "", 0, watch)) \
            == (2, D("15.91"))  # (25 + 26) / (22 + 22) - 1
        assert (await call(conn, "market_watch", 0, 0, 3, "Oil", 1, watch))["symbols"] == 2
        assert (await call(conn, "market_watch", 2, 0, 0, "", 0, watch))["symbols"] == 1
        sd = await call(conn, "security_detail", "ABC", dt.date(2025, 1, 7), 3, True)
        assert (sd["sec_name"], sd["company_name"], sd["competitors"], sd["fin_len"],
                sd["day_len"], sd["last_price"], sd["news_headlines"], sd["news_chars"]) == (
            "ABC common", "Acme Oil", ["Delta Soft", "Gamma Oil"], 4, 3, D("25.00"),
            ["Acme finds oil", "Acme pays dividend"], 8000)
        ts = await conn.fetch("SELECT * FROM trade_status_f1(1)")
        assert [r["trade_id"] for r in ts] == [3, 2, 1]
        assert (ts[0]["type_name"], ts[0]["exchange_name"], ts[0]["broker_name"]) \
            == ("Market-Buy", "NYSE exchange", "Broker One")
        assert tuple(await call(conn, "trade_status", 1)) == (3,)

    run(db, body)


def test_trade_lookup_frames(db):
    async def body(conn):
        tl = await conn.fetch("SELECT * FROM trade_lookup_f1($1)", [3, 999, 1])
        assert [r["trade_id"] for r in tl] == [3, 1]
        assert (tl[0]["settlement_amount"], tl[0]["cash_amount"], tl[0]["hist_status"]) \
            == (-D("7209.00"), -D("7209.00"), ["SBMT", "CMPT"])
        window = (rows.ts(0, 0), rows.ts(1, 23))
        f2 = await conn.fetch("SELECT trade_id FROM trade_lookup_f2(1, $1, $2, 20)", *window)
        assert [r[0] for r in f2] == [1, 2]
        f3 = await conn.fetch("SELECT trade_id FROM trade_lookup_f3('DEF', $1, $2, 20)",
                              *window)
        assert [r[0] for r in f3] == [4]
        t_id, _ = await sell_and_complete(conn, lifo=False)
        f4 = await conn.fetch("SELECT * FROM trade_lookup_f4(1, $1)", rows.ts(3))
        assert [tuple(r) for r in f4] == [(t_id, 1, 1, 0, 100), (t_id, 1, t_id, 100, 0),
                                          (t_id, 2, 2, 0, 200), (t_id, 2, t_id, 200, 50)]
        for frame, args, found in ((1, ([1, 2], None, None, None, None, None), 2),
                                   (2, (None, 1, None, *window, 1), 1),
                                   (3, (None, None, "ABC", *window, 20), 2),
                                   (4, (None, 1, None, rows.ts(3), None, None), 4)):
            assert tuple(await call(conn, "trade_lookup", frame, *args)) == (frame, found)

    run(db, body)


def test_trade_update_toggles_up_to_its_limit(db):
    async def body(conn):
        window = (rows.ts(0, 0), rows.ts(9))
        r = await call(conn, "trade_update", 1, [1, 2, 3], None, None, None, None, None, 2)
        assert tuple(r) == (1, 3, 2)
        assert [x[0] for x in await conn.fetch(
            "SELECT t_exec_name FROM trade WHERE t_id IN (1, 2, 3) ORDER BY t_id")] \
            == ["carl Owner", "carl Owner", "Carl Owner"]
        r = await call(conn, "trade_update", 2, None, 1, None, *window, 20, 1)
        assert tuple(r) == (2, 3, 1)
        assert await conn.fetchval("SELECT se_cash_type FROM settlement WHERE se_t_id = 1") \
            == "Cash"
        r = await call(conn, "trade_update", 3, None, None, "ABC", *window, 20, 5)
        assert tuple(r) == (3, 3, 3)
        assert await conn.fetchval("SELECT ct_name FROM cash_transaction WHERE ct_t_id = 2") \
            == "market-Buy 200 shares of ABC"
        # again: back as they were
        await call(conn, "trade_update", 3, None, None, "ABC", *window, 20, 5)
        assert await conn.fetchval("SELECT ct_name FROM cash_transaction WHERE ct_t_id = 2") \
            == "Market-Buy 200 shares of ABC"

    run(db, body)


async def fingerprints(conn) -> dict[str, str]:
    return {table: await conn.fetchval(
        f"SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM {table} x")
        for table in frames.DM_TABLES}


#: Data-Maintenance's inputs for each table: acct_id, c_id, co_id, day, symbol, tx_id, incr.
DM_INPUTS = (1, 1, 1, 7, "ABC", "N10", 5)


def test_data_maintenance_changes_one_table_a_call(db):
    async def body(conn):
        for n in range(len(frames.DM_TABLES)):
            table = frames.dm_table(n)
            before = await fingerprints(conn)
            r = await call(conn, "data_maintenance", table, *DM_INPUTS)
            after = await fingerprints(conn)
            assert r[0] >= 1, table
            assert [t for t in after if after[t] != before[t]] == [table]
        assert frames.dm_table(12) == frames.DM_TABLES[0]
        assert await conn.fetchval("SELECT cx_tx_id FROM customer_taxrate WHERE cx_c_id = 1"
                                   " AND cx_tx_id LIKE 'D%'") == "D001"
        assert await conn.fetchval("SELECT rtrim(co_sp_rate) FROM company WHERE co_id = 1") \
            == "ABA"
        assert [r[0] for r in await conn.fetch("SELECT wi_s_symb FROM watch_item"
                                               " ORDER BY 1")] == ["DEF", "GHI"]
        with pytest.raises(asyncpg.RaiseError, match="no table trade"):
            await call(conn, "data_maintenance", "trade", *DM_INPUTS)

    run(db, body)


def test_trade_cleanup_cancels_what_a_run_left(db):
    async def body(conn):
        market = await call(conn, "trade_order", *order(tt="TMB", qty=100))
        done = await call(conn, "trade_order", *order(tt="TMB", qty=100))
        await call(conn, "trade_result", done["trade_id"], D("25.00"))
        assert tuple(await call(conn, "trade_cleanup", 5)) == (2,)  # trades 5 and market's
        status = dict(await conn.fetch("SELECT t_id, t_st_id FROM trade"))
        assert (status[5], status[market["trade_id"]], status[done["trade_id"]]) \
            == ("CNCL", "CNCL", "CMPT")
        assert sorted(r[0] for r in await conn.fetch(
            "SELECT th_st_id FROM trade_history WHERE th_t_id = 5")) == ["CNCL", "PNDG", "SBMT"]
        assert await conn.fetchval("SELECT count(*) FROM trade_request") == 0
        assert tuple(await call(conn, "trade_cleanup", 5)) == (0,)

    run(db, body)


#: How pg_proc spells frames.py's types.
PG_TYPE_NAMES = {"int": "integer", "int[]": "integer[]",
                 "timestamp": "timestamp without time zone"}


def test_frames_py_names_the_functions_the_database_has(db):
    """Every transaction and frame function of frames.py exists, the transactions with
    frames.py's parameter types in order; functions.sql makes no other transaction."""
    async def body(conn):
        found = {r["proname"]: r for r in await conn.fetch(
            "SELECT proname, oidvectortypes(proargtypes) AS args FROM pg_proc"
            " WHERE pronamespace = 'public'::regnamespace")}
        for t in frames.TRANSACTIONS.values():
            assert set(t.frames) <= set(found), t.key
            given = [PG_TYPE_NAMES.get(sql_type, sql_type) for _, sql_type in t.params]
            assert found[t.function]["args"] == ", ".join(given), t.key
        frame_names = {f for t in frames.TRANSACTIONS.values() for f in t.frames}
        made = {name for name in found if "_f" in name and name.rsplit("_f", 1)[1].isdigit()}
        assert made == frame_names

    run(db, body)


async def overlapping_results(dsn, first, second):
    """Trade-Result of trade ``first`` in one session and of ``second`` in another while the
    first is open (SERIALIZABLE both), then the first commits: the error the second gets, and
    its result when retried."""
    a, b = await asyncpg.connect(dsn), await asyncpg.connect(dsn)
    try:
        open_tr = a.transaction(isolation="serializable")
        await open_tr.start()
        await a.fetchrow(frames.call_sql(frames.TRADE_RESULT), first, D("25.00"))
        waiting = asyncio.ensure_future(call(b, "trade_result", second, D("25.00")))
        await asyncio.sleep(0.3)
        assert not waiting.done()  # it waits for the first's row
        await open_tr.commit()
        error = None
        try:
            await waiting
        except asyncpg.PostgresError as exc:
            error = exc
        return error, await call(b, "trade_result", second, D("25.00"))
    finally:
        await a.close()
        await b.close()


def test_overlapping_results_on_one_position_serialize(db):
    """Two Trade-Results on one position: the second fails with a serialization failure
    (40001, which the driver retries), whether it updates the summary (a held position) or
    inserts it (a new one), and its retry ends as if they ran one after the other."""
    async def body(conn):
        held = [(await call(conn, "trade_order", *order(qty=100)))["trade_id"] for _ in "ab"]
        error, _ = await overlapping_results(db, *held)
        assert isinstance(error, asyncpg.SerializationError)
        assert await summary(conn, 1, "ABC") == 400
        # FIFO: the first took trade 1's 100, the second 100 of trade 2's 200
        assert await lots(conn, 1, "ABC") == [(2, 100, D("22.00")), (3, 300, D("24.00"))]
        assert [await hh(conn, t) for t in held] == [[(1, 100, 0)], [(2, 200, 100)]]
        new = [(await call(conn, "trade_order", *order(symbol="GHI", tt="TMB", qty=100)))
               ["trade_id"] for _ in "ab"]
        error, _ = await overlapping_results(db, *new)
        assert isinstance(error, asyncpg.SerializationError)
        assert await summary(conn, 1, "GHI") == 200
        assert [q for _, q, _ in await lots(conn, 1, "GHI")] == [100, 100]

    run(db, body)


def test_frames_py_calls_and_isolation():
    """The statement a call prepares, and the digest's isolation per transaction."""
    assert frames.call_sql(frames.TRADE_RESULT) \
        == "SELECT * FROM trade_result($1::bigint, $2::numeric)"
    assert frames.call_sql(frames.MARKET_FEED) \
        == "SELECT * FROM market_feed($1::text[], $2::numeric[], $3::int[])"
    by_level = {}
    for t in frames.TRANSACTIONS.values():
        by_level.setdefault(t.isolation, set()).add(t.key)
    assert by_level[frames.SERIALIZABLE] == {"trade_result"}
    assert by_level[frames.REPEATABLE_READ] == {"trade_order", "trade_update", "market_feed"}
    assert len(by_level[frames.READ_COMMITTED]) == 8
    assert {t.key for t in frames.TRANSACTIONS.values() if t.read_only} == {
        "broker_volume", "customer_position", "market_watch", "security_detail",
        "trade_lookup", "trade_status"}
    assert (frames.TRADE_ORDER.arity, frames.TRADE_RESULT.frames[-1]) == (13, "trade_result_f6")
    assert [frames.dm_table(n) for n in (0, 11, 12, 25)] \
        == ["account_permission", "watch_item", "account_permission", "address"]

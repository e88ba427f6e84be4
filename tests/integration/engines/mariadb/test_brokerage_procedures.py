"""The brokerage's transaction procedures on MariaDB (engines/mariadb/brokerage/sql/
procedures.sql) on the small database made by hand for PostgreSQL's functions too
(../brokerage_rows.py), with the same known answers: Trade-Result's lots (FIFO, LIFO, short
positions), its money, a limit order from Trade-Order through Market-Feed to Trade-Result,
the deliberate rollback, the read-only transactions' rows, Data-Maintenance's one table a
call, Trade-Cleanup; frames.py's calls as the database has them, and a real build that
installs them."""

from __future__ import annotations

import datetime as dt
import json
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal as D

import pymysql
import pytest

from oltplab.engines.mariadb import bulk, client
from oltplab.engines.mariadb.brokerage import DIALECT
from oltplab.engines.mariadb.brokerage.schema import sql_statements, sql_text
from oltplab.engines.mariadb.instance import find_binary
from oltplab.workloads.brokerage import frames
from oltplab.workloads.brokerage.schema import COLUMNS, TABLES

from .. import brokerage_rows as rows

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")

OWNER = rows.OWNER
BEA = ("Bea", "Second", "TAX-2")


class Db:
    """One session on a database of the hand-made rows and the procedures."""

    def __init__(self, dsn: str):
        self.dsn = dsn
        self.conn = client.connect(dsn)

    def q(self, statement: str, *args) -> list[tuple]:
        with self.conn.cursor() as cur:
            cur.execute(statement, args or None)
            return list(cur.fetchall())

    def val(self, statement: str, *args):
        found = self.q(statement, *args)
        return found[0][0] if found else None

    def call(self, key: str, *args):
        """One transaction as the driver makes it: one CALL; its row as a dict (its rows for
        Market-Feed). Array arguments are given as lists and sent as JSON arrays."""
        t = frames.TRANSACTIONS[key]
        sent = [json.dumps([str(v) if isinstance(v, D) else v for v in a])
                if isinstance(a, list) else a for a in args]
        with self.conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute(f"CALL {t.function}({', '.join(['%s'] * t.arity)})", sent)
            found = list(cur.fetchall())
            names = tuple(d[0] for d in cur.description)
            while cur.nextset():
                pass
        assert names == t.returns, key
        return found if t.rows else found[0]

    def frame(self, name: str, outs: int, *args) -> list:
        """A frame procedure's OUT values (JSON ones decoded)."""
        out = ", ".join(f"@o{n}" for n in range(outs))
        with self.conn.cursor() as cur:
            cur.execute(f"CALL {name}({', '.join(['%s'] * len(args))}, {out})", args)
            cur.execute(f"SELECT {out}")
            values = cur.fetchone()
        return [json.loads(v, parse_float=D) if isinstance(v, str) and v[:1] == "[" else v
                for v in values]

    def close(self) -> None:
        self.conn.close()


@pytest.fixture(scope="module")
def base(mariadb):
    """A database of tables.sql, keys.sql and the procedures, made once for the module."""
    name = "brkp"
    conn = client.connect(mariadb.dsn(""))
    try:
        bulk.execute_all(conn, [f"DROP DATABASE IF EXISTS {name}"])
    finally:
        conn.close()
    mariadb.ensure_database(name)
    d = Db(mariadb.dsn(name))
    try:
        bulk.execute_all(d.conn, sql_statements("tables") + sql_statements("keys")
                         + bulk.procedure_statements(sql_text("procedures")))
        yield d
    finally:
        d.close()


@pytest.fixture
def db(base):
    """The module's database holding the hand-made rows alone, seq_trade_id at their next
    id (emptied and filled again for each test: quicker than new tables)."""
    with base.conn.cursor() as cur:
        for table in TABLES:
            cur.execute(f"DELETE FROM {table}")
        for table, records in rows.rows().items():
            cur.executemany(f"INSERT INTO {table} ({', '.join(COLUMNS[table])}) VALUES"
                            f" ({', '.join(['%s'] * len(COLUMNS[table]))})", records)
        cur.execute(f"ALTER SEQUENCE seq_trade_id RESTART WITH {rows.FIRST_NEW_TRADE}")
    return base


def order(acct=1, symbol="ABC", tt="TMS", qty=250, price=D("0"), lifo=False, margin=False,
          names=OWNER, back=False):
    """trade_order's arguments."""
    return (acct, names[0], names[1], names[2], symbol, "", "", tt, qty, price, margin, lifo,
            back)


def lots(db, acct, symbol):
    return db.q("SELECT h_t_id, h_qty, h_price FROM holding WHERE h_ca_id = %s"
                " AND h_s_symb = %s ORDER BY h_t_id", acct, symbol)


def hh(db, t_id):
    return db.q("SELECT hh_h_t_id, hh_before_qty, hh_after_qty FROM holding_history"
                " WHERE hh_t_id = %s ORDER BY hh_h_t_id", t_id)


def summary(db, acct, symbol):
    return db.val("SELECT hs_qty FROM holding_summary WHERE hs_ca_id = %s AND hs_s_symb = %s",
                  acct, symbol)


def sell_and_complete(db, lifo: bool):
    t = db.call("trade_order", *order(lifo=lifo))
    assert (t["status_id"], t["is_market"], t["bid_price"]) == ("SBMT", 1, D("25.00"))
    return t["trade_id"], db.call("trade_result", t["trade_id"], D("25.00"))


# Selling 250 ABC of 100 @ 20 (trade 1), 200 @ 22 (trade 2), 300 @ 24 (trade 3) at 25.00;
# account 1: tier 2, tax status 1, rates 20% + 0%; commission 0.27% of 6,250.00 -> 16.88.
COMM = D("16.88")


def test_trade_result_fifo_takes_the_oldest_lots(db):
    t_id, r = sell_and_complete(db, lifo=False)
    assert t_id == rows.FIRST_NEW_TRADE
    assert hh(db, t_id) == [(1, 100, 0), (2, 200, 50)]
    assert lots(db, 1, "ABC") == [(2, 50, D("22.00")), (3, 300, D("24.00"))]
    assert summary(db, 1, "ABC") == 350
    tax = D("190.00")  # (6,250 - 5,300) x 20%
    assert (r["comm_amount"], r["tax_amount"]) == (COMM, tax)
    assert r["se_amount"] == D("6250.00") - D("8.00") - COMM - tax
    assert r["acct_bal"] == D("10000.00") + r["se_amount"]


def test_trade_result_lifo_takes_the_newest_lot(db):
    t_id, r = sell_and_complete(db, lifo=True)
    assert hh(db, t_id) == [(3, 300, 50)]
    assert lots(db, 1, "ABC") == [(1, 100, D("20.00")), (2, 200, D("22.00")),
                                  (3, 50, D("24.00"))]
    assert summary(db, 1, "ABC") == 350
    assert r["tax_amount"] == D("50.00")  # (6,250 - 250 x 24) x 20%
    assert db.q("SELECT t_st_id, t_trade_price, t_comm, t_tax FROM trade WHERE t_id = %s",
                t_id) == [("CMPT", D("25.00"), COMM, D("50.00"))]


#: trade_order_f3's OUT parameters, in order.
F3_OUTS = ("company_name", "requested_price", "symbol", "sec_name", "buy_value", "sell_value",
           "charge_amount", "comm_rate", "acct_assets", "market_price", "status_id",
           "tax_amount", "type_is_market", "type_is_sell")


def test_trade_order_values_a_sale_against_the_lots_it_would_take(db):
    """Frame 3 of Trade-Order: what selling 250 ABC at the last price (25.00) would buy and
    sell, FIFO and LIFO, and the tax on the gain; a limit order keeps its price."""
    def f3(lifo, tt, margin, symbol, qty=250, co_name="", issue=""):
        return dict(zip(F3_OUTS, db.frame("trade_order_f3", len(F3_OUTS), 1, 1, 2, lifo,
                                          issue, 1, qty, tt, margin, co_name, D("21.00"),
                                          symbol)))

    fifo = f3(False, "TMS", False, "ABC")
    assert (fifo["buy_value"], fifo["sell_value"], fifo["tax_amount"], fifo["comm_rate"],
            fifo["charge_amount"], fifo["status_id"], fifo["requested_price"]) == (
        D("5300.00"), D("6250.00"), D("190.00"), D("0.27"), D("8.00"), "SBMT", D("25.00"))
    lifo = f3(True, "TMS", True, "ABC")
    assert (lifo["buy_value"], lifo["tax_amount"]) == (D("6000.00"), D("50.00"))
    assert lifo["acct_assets"] == D("10000.00") + 600 * D("25.00")
    limit = f3(False, "TLS", False, "ABC")
    assert (limit["status_id"], limit["requested_price"], limit["tax_amount"]) \
        == ("PNDG", D("21.00"), 0)  # 250 at 21.00 gains nothing on 5,300.00
    by_name = f3(False, "TMB", False, "", qty=100, co_name="Gamma Oil", issue="COMMON")
    assert (by_name["symbol"], by_name["sec_name"], by_name["buy_value"]) \
        == ("GHI", "GHI common", 0)


def test_a_cash_trade_settles_into_the_balance_and_counts_for_the_broker(db):
    t_id, r = sell_and_complete(db, lifo=True)
    se = db.q("SELECT se_cash_type, se_amt, se_cash_due_date, DATE(t_dts) + INTERVAL 2 DAY"
              " FROM settlement JOIN trade ON t_id = se_t_id WHERE se_t_id = %s", t_id)
    assert se == [("Cash Account", r["se_amount"], se[0][3], se[0][3])]
    assert db.q("SELECT ct_amt, ct_name FROM cash_transaction WHERE ct_t_id = %s", t_id) \
        == [(r["se_amount"], "Market-Sell 250 shares of ABC")]
    assert db.val("SELECT ca_bal FROM customer_account WHERE ca_id = 1") \
        == D("10000.00") + D("6250.00") - D("8.00") - COMM - D("50.00")
    assert db.q("SELECT b_num_trades, b_comm_total FROM broker WHERE b_id = 1") == [(1, COMM)]
    # a margin purchase settles without touching the balance
    t = db.call("trade_order", *order(acct=2, symbol="GHI", tt="TMB", qty=100, margin=True))
    m = db.call("trade_result", t["trade_id"], D("22.00"))
    assert m["acct_bal"] == D("5000.00")
    assert db.val("SELECT se_cash_type FROM settlement WHERE se_t_id = %s", t["trade_id"]) \
        == "Margin"
    assert db.val("SELECT COUNT(*) FROM cash_transaction WHERE ct_t_id = %s",
                  t["trade_id"]) == 0
    # tier 2, TMB, AMEX, 100 shares: 0.37% of 2,200.00 = 8.14
    assert m["se_amount"] == -(D("2200.00") + D("8.00") + D("8.14"))
    assert db.val("SELECT b_num_trades FROM broker WHERE b_id = 1") == 2


def test_a_sale_beyond_the_holding_goes_short_and_purchases_cover_it(db):
    def trade(tt, qty, price):
        t = db.call("trade_order", *order(acct=2, symbol="DEF", tt=tt, qty=qty))
        return t["trade_id"], db.call("trade_result", t["trade_id"], D(price))

    sold, r = trade("TMS", 300, "26.00")  # holds 100 @ 25 (trade 4)
    assert hh(db, sold) == [(4, 100, 0), (sold, 0, -200)]
    assert lots(db, 2, "DEF") == [(sold, -200, D("26.00"))]
    assert summary(db, 2, "DEF") == -200
    assert r["tax_amount"] == 0  # tax status 0
    covered, r = trade("TMB", 150, "24.00")
    assert hh(db, covered) == [(sold, -200, -50)]
    assert lots(db, 2, "DEF") == [(sold, -50, D("26.00"))]
    assert summary(db, 2, "DEF") == -50
    bought, r = trade("TMB", 100, "25.00")
    assert hh(db, bought) == [(sold, -50, 0), (bought, 0, 50)]
    assert lots(db, 2, "DEF") == [(bought, 50, D("25.00"))]
    assert summary(db, 2, "DEF") == 50
    closed, r = trade("TMS", 50, "25.00")
    assert hh(db, closed) == [(bought, 50, 0)]
    assert lots(db, 2, "DEF") == [] and summary(db, 2, "DEF") is None


def test_a_taxed_gain_covering_a_short_position(db):
    """Account 11 (tax status 2: the tax is recorded, not withheld) sells short and buys back
    cheaper: the gain is taxed."""
    t = db.call("trade_order", *order(acct=11, tt="TMS", qty=100, names=BEA))
    db.call("trade_result", t["trade_id"], D("25.00"))
    t = db.call("trade_order", *order(acct=11, tt="TMB", qty=100, names=BEA))
    r = db.call("trade_result", t["trade_id"], D("20.00"))
    assert r["tax_amount"] == D("100.00")  # (2,500 - 2,000) x 20%
    # tier 1, TMB, NYSE, 100 shares: 0.43% of 2,000.00; charge 10.00; tax not withheld
    assert (r["comm_amount"], r["se_amount"]) == (D("8.60"), -D("2018.60"))


def test_a_limit_order_waits_for_market_feed_then_completes(db):
    t = db.call("trade_order", *order(acct=11, tt="TLB", qty=100, price=D("21.00"),
                                      names=BEA))
    t_id = t["trade_id"]
    assert (t["status_id"], t["is_market"], t["bid_price"]) == ("PNDG", 0, D("21.00"))
    assert db.q("SELECT tr_tt_id, tr_s_symb, tr_qty, tr_bid_price, tr_b_id FROM trade_request"
                " WHERE tr_t_id = %s", t_id) == [("TLB", "ABC", 100, D("21.00"), 2)]
    fired = db.call("market_feed", ["ABC", "DEF"] * 10, [D("21.50"), D("26.00")] * 10,
                    [10] * 20)
    assert fired == []  # a limit buy at 21.00 waits for 21.00 or less
    assert db.val("SELECT lt_price FROM last_trade WHERE lt_s_symb = 'ABC'") == D("21.50")
    fired = db.call("market_feed", ["DEF", "ABC"], [D("26.00"), D("20.90")], [10, 100])
    assert [tuple(r.values()) for r in fired] == [(t_id, "ABC", D("20.90"), 100, "TLB")]
    assert db.val("SELECT lt_vol FROM last_trade WHERE lt_s_symb = 'ABC'") == 5000 + 100 + 100
    assert db.val("SELECT COUNT(*) FROM trade_request WHERE tr_t_id = %s", t_id) == 0
    assert db.val("SELECT t_st_id FROM trade WHERE t_id = %s", t_id) == "SBMT"
    db.call("trade_result", t_id, D("20.90"))
    # (the times are whole seconds: the statuses, not their order)
    assert sorted(r[0] for r in db.q("SELECT th_st_id FROM trade_history WHERE th_t_id = %s",
                                     t_id)) == ["CMPT", "PNDG", "SBMT"]
    assert db.val("SELECT t_st_id FROM trade WHERE t_id = %s", t_id) == "CMPT"
    assert lots(db, 11, "ABC") == [(t_id, 100, D("20.90"))]


def test_market_feed_triggers_each_kind_of_limit_order_at_its_price(db):
    made = {}
    for tt, price in (("TSL", "19.00"), ("TLS", "30.00"), ("TLB", "18.00")):
        made[tt] = db.call("trade_order", *order(acct=1, tt=tt, qty=100,
                                                 price=D(price)))["trade_id"]

    def feed(price):
        return db.call("market_feed", ["ABC"], [D(price)], [1])

    assert feed("19.01") == []
    assert [r["type_id"] for r in feed("19.00")] == ["TSL"]
    assert [r["type_id"] for r in feed("30.00")] == ["TLS"]
    assert [r["trade_id"] for r in feed("17.99")] == [made["TLB"]]
    assert db.val("SELECT COUNT(*) FROM trade WHERE t_st_id = 'SBMT'") == 3
    with pytest.raises(pymysql.MySQLError, match="as many symbols"):
        db.call("market_feed", ["ABC", "DEF"], [D("20.00")], [1, 1])


COUNTED = ("SELECT (SELECT COUNT(*) FROM trade), (SELECT COUNT(*) FROM trade_history),"
           " (SELECT COUNT(*) FROM trade_request)")


def test_the_deliberate_rollback_leaves_nothing(db):
    """The procedure rolls its trade back itself (one ROLLBACK, counted by the server as
    PostgreSQL's client's is) and returns it with roll_it_back set."""
    before = db.q(COUNTED)

    def ends(back: bool, names=OWNER) -> tuple[dict, tuple[int, int]]:
        """A limit sale's row, and the commits and rollbacks the server counted for it."""
        status = "SHOW SESSION STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')"
        counts = dict(db.q(status))
        r = db.call("trade_order", *order(tt="TLS", qty=100, price=D("29.00"), back=back,
                                          names=names))
        after = dict(db.q(status))
        return r, tuple(int(after[k]) - int(counts[k]) for k in ("Com_commit", "Com_rollback"))

    r, ended = ends(True)
    assert (r["roll_it_back"], r["trade_id"], ended) == (1, rows.FIRST_NEW_TRADE, (0, 1))
    assert db.q(COUNTED) == before
    # an executor the account does not permit: no trade at all; a permitted one trades
    r = db.call("trade_order", *order(names=("Eve", "Stranger", "TAX-E")))
    assert r["trade_id"] == 0 and db.q(COUNTED) == before
    # ... rolled back when told to, as any order (the server counts as on PostgreSQL)
    assert ends(True, names=("Eve", "Stranger", "TAX-E"))[1] == (0, 1)
    r = db.call("trade_order", *order(names=rows.FRIEND))
    assert r["trade_id"] > rows.FIRST_NEW_TRADE
    # one COMMIT for a transaction that is kept
    assert ends(False)[1] == (1, 0)
    assert db.val("SELECT t_exec_name FROM trade WHERE t_id = %s", r["trade_id"]) \
        == "Ann Other"


def test_the_read_only_transactions_rows(db):
    bv = db.frame("broker_volume_f1", 3, json.dumps(["Broker One", "Broker Two"]), "Energy")
    assert bv == [[["Broker Two", D("4200.00")]], 1, D("4200.00")]  # 200 GHI @ 21.00
    assert tuple(db.call("broker_volume", ["Broker Two"], "Technology").values()) == (0, 0)
    c_id, cp = db.frame("customer_position_f1", 2, 0, "TAX-1")
    # account 2: 100 DEF @ 26 last; account 1: 600 ABC @ 25
    assert (c_id, cp) == (1, [[2, D("5000.00"), D("2600.00")],
                              [1, D("10000.00"), D("15000.00")]])
    hist = db.frame("customer_position_f2", 1, 1)[0]
    assert [(r[0], r[3].strip()) for r in hist] == [
        (3, "Completed"), (3, "Submitted"), (2, "Completed"), (2, "Submitted"),
        (1, "Completed"), (1, "Submitted")]
    assert tuple(db.call("customer_position", 1, "", True, 1).values()) == (1, 2, 6)
    watch = dt.date(2025, 1, 8)  # closes 22.00 that day
    assert tuple(db.call("market_watch", 0, 1, 0, "", 0, watch).values()) \
        == (2, D("15.91"))  # (25 + 26) / (22 + 22) - 1
    assert db.call("market_watch", 0, 0, 3, "Oil", 1, watch)["symbols"] == 2
    assert db.call("market_watch", 2, 0, 0, "", 0, watch)["symbols"] == 1
    sd = db.call("security_detail", "ABC", dt.date(2025, 1, 7), 3, True)
    assert (sd["sec_name"], sd["company_name"], json.loads(sd["competitors"]), sd["fin_len"],
            sd["day_len"], sd["last_price"], json.loads(sd["news_headlines"]),
            sd["news_chars"]) == (
        "ABC common", "Acme Oil", ["Delta Soft", "Gamma Oil"], 4, 3, D("25.00"),
        ["Acme finds oil", "Acme pays dividend"], 8000)
    ts = db.frame("trade_status_f1", 1, 1)[0]
    assert [r[0] for r in ts] == [3, 2, 1]
    assert (ts[0][3], ts[0][9], ts[0][12]) == ("Market-Buy", "NYSE exchange", "Broker One")
    assert tuple(db.call("trade_status", 1).values()) == (3,)


def test_trade_lookup_frames(db):
    tl = db.frame("trade_lookup_f1", 1, json.dumps([3, 999, 1]))[0]
    assert [r[0] for r in tl] == [3, 1]
    # settlement amount, cash amount, the history's statuses
    assert (tl[0][11], tl[0][14], tl[0][18]) == (-D("7209.00"), -D("7209.00"),
                                                 ["SBMT", "CMPT"])
    window = (rows.ts(0, 0), rows.ts(1, 23))
    assert [r[0] for r in db.frame("trade_lookup_f2", 1, 1, *window, 20)[0]] == [1, 2]
    assert [r[0] for r in db.frame("trade_lookup_f3", 1, "DEF", *window, 20)[0]] == [4]
    t_id, _ = sell_and_complete(db, lifo=False)
    f4 = db.frame("trade_lookup_f4", 1, 1, rows.ts(3))[0]
    assert f4 == [[t_id, 1, 1, 0, 100], [t_id, 1, t_id, 100, 0],
                  [t_id, 2, 2, 0, 200], [t_id, 2, t_id, 200, 50]]
    for frame, args, found in ((1, ([1, 2], None, None, None, None, None), 2),
                               (2, (None, 1, None, *window, 1), 1),
                               (3, (None, None, "ABC", *window, 20), 2),
                               (4, (None, 1, None, rows.ts(3), None, None), 4)):
        assert tuple(db.call("trade_lookup", frame, *args).values()) == (frame, found)


def test_trade_update_toggles_up_to_its_limit(db):
    window = (rows.ts(0, 0), rows.ts(9))
    r = db.call("trade_update", 1, [1, 2, 3], None, None, None, None, None, 2)
    assert tuple(r.values()) == (1, 3, 2)
    assert [x[0] for x in db.q("SELECT t_exec_name FROM trade WHERE t_id IN (1, 2, 3)"
                               " ORDER BY t_id")] == ["carl Owner", "carl Owner", "Carl Owner"]
    r = db.call("trade_update", 2, None, 1, None, *window, 20, 1)
    assert tuple(r.values()) == (2, 3, 1)
    assert db.val("SELECT se_cash_type FROM settlement WHERE se_t_id = 1") == "Cash"
    r = db.call("trade_update", 3, None, None, "ABC", *window, 20, 5)
    assert tuple(r.values()) == (3, 3, 3)
    assert db.val("SELECT ct_name FROM cash_transaction WHERE ct_t_id = 2") \
        == "market-Buy 200 shares of ABC"
    # again: back as they were
    db.call("trade_update", 3, None, None, "ABC", *window, 20, 5)
    assert db.val("SELECT ct_name FROM cash_transaction WHERE ct_t_id = 2") \
        == "Market-Buy 200 shares of ABC"


def test_writes_by_a_list_of_trade_ids_read_by_key(db):
    """Trade-Update's and Market-Feed's writes to the trades of an id list join the list to
    the table's key: among 20,000 more trades, settlements, cash transactions and pending
    requests they read no table through (Handler_read_rnd_next: rows read in a scan). As
    `WHERE id IN (SELECT ... FROM JSON_TABLE(...))` each scanned its whole table: 5.9 s a
    Trade-Update at 1,000 customers x 5 days, 4 ms now."""
    more = "FROM seq_100000_to_119999 s"
    for statement in (
            f"INSERT INTO trade SELECT s.seq, t_dts, t_st_id, t_tt_id, t_is_cash, 'DEF', t_qty,"
            f" t_bid_price, 11, t_exec_name, t_trade_price, t_chrg, t_comm, t_tax, t_lifo"
            f" {more} JOIN trade ON t_id = 1",
            f"INSERT INTO settlement SELECT s.seq, se_cash_type, se_cash_due_date, se_amt"
            f" {more} JOIN settlement ON se_t_id = 1",
            f"INSERT INTO cash_transaction SELECT s.seq, ct_dts, ct_amt, ct_name"
            f" {more} JOIN cash_transaction ON ct_t_id = 1",
            f"INSERT INTO trade_request SELECT s.seq, 'TLB', 'DEF', 100, 1.00, 2 {more}"):
        db.q(statement)
    t_id = db.call("trade_order", *order(tt="TLB", qty=100, price=D("21.00")))["trade_id"]
    window = (rows.ts(0, 0), rows.ts(9))

    def scanned(key, *args):
        status = "SHOW SESSION STATUS LIKE 'Handler_read_rnd_next'"
        before = int(db.q(status)[0][1])
        found = db.call(key, *args)
        return int(db.q(status)[0][1]) - before, found

    for frame, args in ((1, ([1, 2, 3], None, None, None, None, None, 3)),
                        (2, (None, 1, None, *window, 20, 3)),
                        (3, (None, None, "ABC", *window, 20, 3))):
        read, r = scanned("trade_update", frame, *args)
        assert r["num_updated"] == 3 and read < 1000, (frame, read)
    read, fired = scanned("market_feed", ["ABC"], [D("20.00")], [10])
    assert [r["trade_id"] for r in fired] == [t_id] and read < 1000, read


def fingerprints(db) -> dict[str, int]:
    return dict(db.q(f"CHECKSUM TABLE {', '.join(frames.DM_TABLES)}"))


#: Data-Maintenance's inputs for each table: acct_id, c_id, co_id, day, symbol, tx_id, incr.
DM_INPUTS = (1, 1, 1, 7, "ABC", "N10", 5)


def test_data_maintenance_changes_one_table_a_call(db):
    for n in range(len(frames.DM_TABLES)):
        table = frames.dm_table(n)
        before = fingerprints(db)
        r = db.call("data_maintenance", table, *DM_INPUTS)
        after = fingerprints(db)
        assert r["rows_changed"] >= 1, table
        assert [t.split(".")[-1] for t in after if after[t] != before[t]] == [table]
    assert db.val("SELECT cx_tx_id FROM customer_taxrate WHERE cx_c_id = 1"
                  " AND cx_tx_id LIKE 'D%'") == "D001"
    assert db.val("SELECT co_sp_rate FROM company WHERE co_id = 1") == "ABA"
    assert db.val("SELECT c_email_2 FROM customer WHERE c_id = 1") == "carl2@example.net"
    assert [r[0] for r in db.q("SELECT wi_s_symb FROM watch_item ORDER BY 1")] \
        == ["DEF", "GHI"]
    with pytest.raises(pymysql.MySQLError, match="no such table"):
        db.call("data_maintenance", "trade", *DM_INPUTS)


def test_trade_cleanup_cancels_what_a_run_left(db):
    market = db.call("trade_order", *order(tt="TMB", qty=100))
    done = db.call("trade_order", *order(tt="TMB", qty=100))
    db.call("trade_result", done["trade_id"], D("25.00"))
    assert tuple(db.call("trade_cleanup", 5).values()) == (2,)  # trades 5 and market's
    status = dict(db.q("SELECT t_id, t_st_id FROM trade"))
    assert (status[5], status[market["trade_id"]], status[done["trade_id"]]) \
        == ("CNCL", "CNCL", "CMPT")
    assert sorted(r[0] for r in db.q("SELECT th_st_id FROM trade_history WHERE th_t_id = 5")) \
        == ["CNCL", "PNDG", "SBMT"]
    assert db.val("SELECT COUNT(*) FROM trade_request") == 0
    assert tuple(db.call("trade_cleanup", 5).values()) == (0,)


def test_an_error_rolls_the_transaction_back(db):
    """A frame's error ends the procedure's transaction (ROLLBACK, the error raised again
    with its text): Trade-Result of a trade that is not submitted changes nothing."""
    before = db.q(COUNTED)
    with pytest.raises(pymysql.MySQLError, match="not submitted"):
        db.call("trade_result", 5, D("21.00"))  # trade 5 is pending
    assert db.q(COUNTED) == before
    assert db.val("SELECT @@in_transaction") == 0


def results_behind(db, lock: str, orders: list) -> list[dict]:
    """Trade-Results of the trades ``orders`` make, in sessions of their own, all waiting
    behind another session that holds the row ``lock`` selects (FOR UPDATE) until both
    wait; their rows once that session commits."""
    held = [db.call("trade_order", *o)["trade_id"] for o in orders]
    holder = Db(db.dsn)

    def result(t_id):
        d = Db(db.dsn)
        try:
            return d.call("trade_result", t_id, D("25.00"))
        finally:
            d.close()

    try:
        holder.q("START TRANSACTION")
        holder.q(lock + " FOR UPDATE")
        with ThreadPoolExecutor(len(held)) as pool:
            waiting = [pool.submit(result, t_id) for t_id in held]
            time.sleep(0.5)
            assert not any(f.done() for f in waiting)  # each waits for the row
            holder.q("COMMIT")
            return [f.result(timeout=30) for f in waiting]
    finally:
        holder.close()


def test_overlapping_results_on_one_position_wait_and_stay_whole(db):
    """Two Trade-Results on one position that wait together for its summary's row: each
    reads the row with FOR UPDATE, so the second runs after the first's commit (no deadlock,
    which two shared locks of SERIALIZABLE's plain reads would end in), and the lots are as
    if they had run in turn."""
    done = results_behind(db, "SELECT hs_qty FROM holding_summary WHERE hs_ca_id = 1"
                              " AND hs_s_symb = 'ABC'", [order(qty=100)] * 2)
    assert [r["acct_id"] for r in done] == [1, 1]
    assert summary(db, 1, "ABC") == 400
    # FIFO, in either order: trade 1's 100 whole, then 100 of trade 2's 200
    assert lots(db, 1, "ABC") == [(2, 100, D("22.00")), (3, 300, D("24.00"))]
    assert sorted(db.q("SELECT hh_h_t_id, hh_before_qty, hh_after_qty FROM holding_history"
                       " WHERE hh_t_id >= %s", rows.FIRST_NEW_TRADE)) \
        == [(1, 100, 0), (2, 200, 100)]


def test_overlapping_results_on_one_account_wait_and_add_up(db):
    """Two cash purchases on one account, each opening a position (their summaries' keys in
    one gap of the index), waiting together for the account's row: both complete and the
    balance moves by both settlements. Frame 1 locks the account before it reads the
    summary: read first, each held a lock on the gap that kept the other's insert out, and
    one of them ended in a deadlock."""
    done = results_behind(db, "SELECT ca_bal FROM customer_account WHERE ca_id = 1",
                          [order(symbol=s, tt="TMB", qty=100) for s in ("DEF", "GHI")])
    assert (summary(db, 1, "DEF"), summary(db, 1, "GHI")) == (100, 100)
    a, b = (r["se_amount"] for r in done)
    start = D("10000.00")
    assert db.val("SELECT ca_bal FROM customer_account WHERE ca_id = 1") == start + a + b
    # each saw the balance the other left: the first's, then both
    assert {r["acct_bal"] for r in done} in ({start + a, start + a + b},
                                             {start + b, start + a + b})


def test_frames_py_names_the_procedures_the_database_has(db):
    """Every transaction and frame procedure of frames.py exists, the transactions with
    frames.py's parameters in order (their names with p_); procedures.sql makes no other
    transaction or frame; the dialect asks a run for the twelve."""
    found: dict[str, list[str]] = {}
    for routine, param in db.q(
            "SELECT r.routine_name, p.parameter_name FROM information_schema.routines r"
            " LEFT JOIN information_schema.parameters p ON p.specific_schema ="
            " r.routine_schema AND p.specific_name = r.routine_name"
            " AND p.parameter_mode IS NOT NULL"
            " WHERE r.routine_schema = DATABASE() AND r.routine_type = 'PROCEDURE'"
            " ORDER BY r.routine_name, p.ordinal_position"):
        found.setdefault(routine, []).extend([param] if param else [])
    for t in frames.TRANSACTIONS.values():
        assert set(t.frames) <= set(found), t.key
        assert found[t.function] == [f"p_{name}" for name, _ in t.params], t.key
    frame_names = {f for t in frames.TRANSACTIONS.values() for f in t.frames}
    assert {n for n in found if n.rsplit("_f", 1)[-1].isdigit()} == frame_names
    assert set(DIALECT.procedures) == {t.function.upper() for t in frames.TRANSACTIONS.values()}

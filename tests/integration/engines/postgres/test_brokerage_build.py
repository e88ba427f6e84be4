"""The TPC-E-derived brokerage's build on PostgreSQL at 1,000 customers x 5 days (once for
the module): exact row counts per table, its record, keys and trade id sequence, the checks
that hold after the build and after a few transactions, each check failing when its condition
is broken by hand, and a rebuild refused without --force."""

from __future__ import annotations

import pytest

from oltplab import __version__
from oltplab.engines.postgres.brokerage import DIALECT
from oltplab.engines.postgres.brokerage.checks import run_checks
from oltplab.engines.postgres.brokerage.loader import build
from oltplab.engines.postgres.brokerage.schema import FUNCTIONS, has_run, schema_info
from oltplab.errors import SchemaError, UsageError
from oltplab.workloads.brokerage import population
from oltplab.workloads.brokerage.build import BrokerageBuildSpec
from oltplab.workloads.brokerage.schema import (BALANCE_TABLE, COLUMNS, INDEXES, PRIMARY_KEYS,
                                                TABLES, BrokerageSchema)
from oltplab.workloads.brokerage.scale import parse_scale
from oltplab.workloads.brokerage.trades import loaded_count

from .test_dvds_build import q, val

SEED = 28
SCALE = parse_scale(1000, 5)


def failing(dsn: str) -> dict[str, int]:
    return {r.name: r.violations for r in run_checks(dsn) if not r.ok}


@pytest.fixture(scope="module")
def built(pg) -> tuple[str, dict]:
    """A pristine build (two loading processes) and its summary; tests must not change it."""
    dsn = pg.create_db("brokerage")
    return dsn, build(dsn, BrokerageBuildSpec(scale=SCALE, build_users=2, seed=SEED))


@pytest.fixture(scope="module")
def scratch(pg, built) -> str:
    """A copy of the build that tests change (each restores what it broke)."""
    return pg.create_db("brokerages", template=built[0].split("?")[0].rsplit("/", 1)[1])


def test_exact_row_counts_per_table(built):
    """The tables whose rows do not depend on the draws hold exactly population.exact_rows;
    the others what the summary counted; every loaded trade id is there."""
    dsn, summary = built
    found = dict(q(dsn, " UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}"
                                           for t in (*TABLES, BALANCE_TABLE))))
    exact = population.exact_rows(SCALE)
    assert {t: found[t] for t in exact} == exact
    assert set(TABLES) <= set(summary["rows"])
    assert {t: found[t] for t in summary["rows"]} == summary["rows"]
    assert exact["daily_market"] == 685 * 1_305 and exact["customer"] == 1_000
    assert found["trade"] == loaded_count(range(1, SCALE.trades + 1)) == 288_000 - 2_851
    assert found["settlement"] == found["trade"] and found["trade_request"] == 0
    limits = val(dsn, "SELECT count(*) FROM trade JOIN trade_type ON tt_id = t_tt_id"
                      " WHERE NOT tt_is_mrkt")
    assert found["trade_history"] == 2 * found["trade"] + limits
    assert found[BALANCE_TABLE] == found["customer_account"]
    assert (summary["customers"], summary["days"], summary["seed"], summary["build_users"]) == \
        (1_000, 5, SEED, 2)
    assert summary["seconds"] > 0 and set(summary["phases"]) == {
        "tables", "load", "indexes_and_analyze"}


def test_the_tables_columns_are_in_the_load_order(built):
    """sql/tables.sql declares each table's columns in schema.py's order, the COPY text's."""
    found: dict[str, list[str]] = {}
    for table, column in q(built[0], "SELECT table_name::text, column_name::text"
                                     " FROM information_schema.columns"
                                     " WHERE table_schema = 'public' ORDER BY ordinal_position"):
        found.setdefault(table, []).append(column)
    assert {t: tuple(found[t]) for t in COLUMNS} == COLUMNS
    assert set(found) == {*COLUMNS, BALANCE_TABLE, "brokerage_meta"}


def test_the_record_the_sequence_and_the_keys(built):
    dsn, summary = built
    meta = dict(q(dsn, "SELECT * FROM brokerage_meta")[0])
    top = val(dsn, "SELECT max(t_id) FROM trade")
    assert (meta["customers"], meta["days"], meta["scale_factor"], meta["trades"]) == \
        (1_000, 5, 500, 288_000)
    assert meta["max_t_id"] == summary["max_t_id"] == top == 288_000
    assert (meta["seed"], meta["build_users"], meta["page_kib"]) == (SEED, 2, 8)
    assert meta["oltplab_version"] == __version__ and meta["build_seconds"] > 0
    assert val(dsn, "SELECT last_value FROM seq_trade_id") == top
    assert val(dsn, "SELECT nextval('seq_trade_id')") == top + 1  # the first run-time trade
    info = schema_info(dsn)
    assert info == BrokerageSchema(customers=1_000, days=5, scale_factor=500, trades=288_000,
                                   max_t_id=top, seed=SEED, start_date="2025-01-06",
                                   page_kib=8)
    assert DIALECT.schema_info(dsn) == info and not has_run(dsn)
    keys = {r[0] for r in q(dsn, "SELECT conrelid::regclass::text FROM pg_constraint"
                                 " WHERE contype = 'p' AND connamespace = 'public'::regnamespace")}
    assert keys == {*PRIMARY_KEYS, BALANCE_TABLE}
    indexes = {r[0] for r in q(dsn, "SELECT indexname FROM pg_indexes"
                                    " WHERE schemaname = 'public'")}
    assert set(INDEXES) <= indexes
    options = dict(q(dsn, "SELECT relname, reloptions FROM pg_class"
                          " WHERE relname IN ('broker', 'broker_pkey', 'trade')"))
    assert options == {"broker": ["fillfactor=10"], "broker_pkey": ["fillfactor=10"],
                       "trade": None}  # autovacuum back on
    assert {"trade_order", "trade_result", "market_feed"} <= set(DIALECT.functions)
    assert set(DIALECT.functions) < set(FUNCTIONS)  # the frames' and helpers' too
    assert {r[0] for r in q(dsn, "SELECT proname FROM pg_proc WHERE pronamespace ="
                                 " 'public'::regnamespace")} >= set(FUNCTIONS)


def test_the_checks_hold_after_the_build(built):
    results = run_checks(built[0])
    assert [r.name for r in results] == [f"BK{k}" for k in range(1, 8)]
    assert all(r.ok and r.violations == 0 and r.sample == [] and r.description
               for r in results), results


def test_the_checks_hold_after_trades_of_a_run(scratch):
    """A market buy and a market sell of an account, ordered and completed as the driver
    does (Trade-Order, then Trade-Result at a price), and a pending limit order: the balance
    moved by the cash transactions since the build, the checks still hold."""
    acct, f_name, l_name, tax_id, symbol = q(scratch, """
        SELECT ca_id, c_f_name, c_l_name, c_tax_id, hs_s_symb FROM customer_account
          JOIN customer ON c_id = ca_c_id JOIN holding_summary ON hs_ca_id = ca_id
         WHERE hs_qty > 200 ORDER BY ca_id, hs_s_symb LIMIT 1""")[0]
    before = val(scratch, f"SELECT ca_bal FROM customer_account WHERE ca_id = {acct}")

    def order(tt_id: str, price: str) -> int:
        return val(scratch, f"""SELECT trade_id FROM trade_order({acct}, '{f_name}',
            '{l_name}', '{tax_id}', '{symbol}', '', '', '{tt_id}', 100, {price}, false,
            false, false)""")

    done = []
    for tt_id in ("TMB", "TMS"):
        t_id = order(tt_id, "25.00")
        q(scratch, "BEGIN ISOLATION LEVEL SERIALIZABLE",
          f"SELECT * FROM trade_result({t_id}, 25.50)", "COMMIT")
        done.append(t_id)
    pending = order("TLB", "20.00")
    assert done[0] > 288_000 and pending > done[1]
    assert val(scratch, f"SELECT t_st_id FROM trade WHERE t_id = {pending}") == "PNDG"
    moved = val(scratch, "SELECT sum(ct_amt) FROM cash_transaction WHERE ct_t_id > 288000")
    assert moved is not None and moved != 0
    assert val(scratch, f"SELECT ca_bal FROM customer_account WHERE ca_id = {acct}") == \
        before + moved
    assert has_run(scratch)
    assert failing(scratch) == {}


@pytest.mark.parametrize("name, broken, restored, violations", [
    ("BK1", "UPDATE holding_summary SET hs_qty = hs_qty + 1 WHERE hs_ca_id = {acct}",
     "UPDATE holding_summary SET hs_qty = hs_qty - 1 WHERE hs_ca_id = {acct}", None),
    ("BK2", "UPDATE trade SET t_is_cash = NOT t_is_cash WHERE t_id = {t_id}",
     "UPDATE trade SET t_is_cash = NOT t_is_cash WHERE t_id = {t_id}", 2),
    ("BK2", "INSERT INTO settlement SELECT -se_t_id, se_cash_type, se_cash_due_date, se_amt"
            " FROM settlement WHERE se_t_id = {t_id}",
     "DELETE FROM settlement WHERE se_t_id = -{t_id}", 1),
    ("BK3", "INSERT INTO trade_request SELECT t_id, t_tt_id, t_s_symb, t_qty, t_bid_price, 1"
            " FROM trade WHERE t_id = {t_id}",
     "DELETE FROM trade_request WHERE tr_t_id = {t_id}", 1),
    ("BK4", "UPDATE trade_history SET th_dts = th_dts + interval '1 day'"
            " WHERE th_t_id = {t_id} AND th_st_id = 'SBMT'",
     "UPDATE trade_history SET th_dts = th_dts - interval '1 day'"
     " WHERE th_t_id = {t_id} AND th_st_id = 'SBMT'", 1),
    ("BK5", "UPDATE broker SET b_comm_total = b_comm_total + 0.01 WHERE b_id = 1",
     "UPDATE broker SET b_comm_total = b_comm_total - 0.01 WHERE b_id = 1", 1),
    ("BK6", "UPDATE customer_account SET ca_bal = ca_bal + 0.01 WHERE ca_id = {acct}",
     "UPDATE customer_account SET ca_bal = ca_bal - 0.01 WHERE ca_id = {acct}", 1),
    ("BK7", "UPDATE brokerage_balance SET opening = opening - 0.01 WHERE ca_id = {acct}",
     "UPDATE brokerage_balance SET opening = opening + 0.01 WHERE ca_id = {acct}", 1),
], ids=["BK1", "BK2", "BK2-orphan", "BK3", "BK4", "BK5", "BK6", "BK7"])
def test_each_check_fails_when_its_condition_is_broken(scratch, name, broken, restored,
                                                       violations):
    """One statement breaks one condition: that check alone fails, with its violating rows
    (BK1: each of the account's summaries; BK2: a cash trade made a margin one, and the
    count of cash trades); then the statement is undone."""
    t_id = val(scratch, "SELECT min(t_id) FROM trade")
    acct = val(scratch, "SELECT min(hs_ca_id) FROM holding_summary")
    rows = val(scratch, f"SELECT count(*) FROM holding_summary WHERE hs_ca_id = {acct}")
    q(scratch, broken.format(t_id=t_id, acct=acct))
    try:
        found = failing(scratch)
        assert set(found) == {name}, found
        assert found[name] == (violations or rows)
    finally:
        q(scratch, restored.format(t_id=t_id, acct=acct))


def test_a_rebuild_needs_force_and_another_workloads_database_is_refused(pg, built):
    with pytest.raises(SchemaError, match="already holds a TPC-E-derived brokerage schema"):
        build(built[0], BrokerageBuildSpec(scale=SCALE, seed=SEED))
    tpcc = pg.create_db("bktpcc")
    q(tpcc, "CREATE TABLE warehouse (w_id int)")
    with pytest.raises(UsageError, match="holds the TPC-C-derived schema"):
        build(tpcc, BrokerageBuildSpec(scale=SCALE, seed=SEED, force=True))
    assert val(tpcc, "SELECT to_regclass('trade') IS NULL")
    with pytest.raises(UsageError, match="no TPC-E-derived brokerage schema"):
        run_checks(pg.create_db("bknone"))


def test_the_customer_emulators_draws_find_the_builds_rows(scratch):
    """2,000 transactions a BrokerageTerminal draws from the build's record and tables
    (workloads/brokerage/inputs.py), each called at its isolation and rolled back: every
    Trade-Order is accepted (its executor permitted, its security found by symbol or by
    company and issue), every customer, account and trade id drawn is found."""
    import asyncio

    import asyncpg

    from oltplab import _native
    from oltplab.workloads.brokerage import frames, inputs

    info = schema_info(scratch)
    kw = inputs.terminal_kwargs(inputs.draw_constants(None, info))
    t = _native.BrokerageTerminal(5, **kw)
    seq = val(scratch, "SELECT last_value FROM seq_trade_id")

    async def go():
        conn = await asyncpg.connect(scratch)
        found = []
        try:
            for _ in range(2_000):
                kind, args = t.next_call()
                tx = frames.TRANSACTIONS[kind]
                casts = ", ".join(f"${i}::text::{ty}" for i, (_, ty) in enumerate(tx.params, 1))
                tr = conn.transaction(isolation=tx.isolation.replace(" ", "_"))
                await tr.start()
                row = await conn.fetchrow(f"SELECT * FROM {tx.function}({casts})", *args)
                await tr.rollback()
                found.append((kind, args, row))
        finally:
            await conn.close()
        return found

    kinds = set()
    for kind, args, row in asyncio.run(go()):
        kinds.add(kind)
        if kind == "trade_order":
            assert row["trade_id"] > 0, args
        elif kind == "customer_position":
            assert row["cust_id"] > 0 and row["acct_len"] >= 1, args
        elif kind == "trade_status":
            assert row["num_found"] >= 1, args
        elif kind == "trade_lookup" and args[0] == "1":
            assert row["num_found"] == len(set(args[1][1:-1].split(","))), args
        elif kind == "security_detail":
            assert row["day_len"] == int(args[2]) and row["fin_len"] == 20, args
        elif kind == "market_watch" and args[1] != "0":
            assert row["symbols"] >= 50, args  # a watch list holds 50-150
    assert kinds == set(_native.BROKERAGE_NAMES)
    q(scratch, f"SELECT setval('seq_trade_id', {seq})")


def test_the_c_loop_drives_the_customer_emulator(scratch):
    """Two users of the C loop (workload "brokerage") call each transaction's function with
    the arguments the terminal draws, each above READ COMMITTED begun at its level: every
    user's kind completes, none fails, the input counts are the loop's. (No market emulator is
    bound: the actors' kinds are never drawn; brokerage run's tests drive them. This test runs
    last, on the copy.)"""
    import time

    from psycopg import pq

    from oltplab import _native
    from oltplab.engines.postgres.driver import libpq_path
    from oltplab.workloads.brokerage import frames, inputs

    kw = inputs.terminal_kwargs(inputs.draw_constants(None, schema_info(scratch)))
    conns = []
    for _ in range(2):
        conn = pq.PGconn.connect(scratch.encode())
        assert conn.status == pq.ConnStatus.OK
        for name in _native.BROKERAGE_KINDS:
            tx = frames.TRANSACTIONS[name]
            casts = ", ".join(f"${i}::{ty}" for i, (_, ty) in enumerate(tx.params, 1))
            res = conn.prepare(name.encode(),
                               f"SELECT * FROM {tx.function}({casts})".encode())
            assert res.status == pq.ExecStatus.COMMAND_OK, res.error_message
        conn.nonblocking = 1
        conns.append(conn)
    s = 1_000_000_000
    now = time.monotonic_ns()
    try:
        loop = _native.ProcLoop(
            workload="brokerage", libpq=libpq_path(), connections=conns,
            pointers=[c.pgconn_ptr for c in conns],
            terminals=[_native.BrokerageTerminal(60 + i, **kw) for i in range(2)],
            names=list(_native.BROKERAGE_KINDS), flush_sql="", ramp_end_ns=now,
            measure_end_ns=now + 3 * s, waits=False, flush_stats=False,
            idle_published_after_ns=10 * s, max_retries=5, max_consecutive_errors=1,
            retryable=["40001", "40P01"], fatal=[], bulk=2)
        while True:
            event = loop.run()
            assert event in (_native.BOUNDARY, _native.SAMPLES, _native.FINISHED), loop.error
            loop.take_samples()
            if event == _native.FINISHED:
                break
        counts = loop.counts()
        loop.close()
    finally:
        for c in conns:
            c.finish()
    done = [c + r for c, r in zip(counts["committed"], counts["rolled_back"])]
    users = len(_native.BROKERAGE_NAMES)  # the deck's kinds come first
    assert all(n > 0 for n in done[:users]) and not any(done[users:]), done
    assert sum(counts["errors"]) == 0
    orders = done[_native.BROKERAGE_NAMES.index("trade_order")]
    assert counts["rolled_back"][_native.BROKERAGE_NAMES.index("trade_order")] == \
        counts["inputs"]["to_rolled_back"] <= orders
    lookups = done[_native.BROKERAGE_NAMES.index("trade_lookup")]
    assert sum(counts["inputs"][f"tl_frame{f}"] for f in (1, 2, 3, 4)) == lookups

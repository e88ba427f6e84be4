"""The TPC-E-derived brokerage's build on a real managed MariaDB: 1,000 customers x 5 days
with two loading processes, built once for the module; its rows per table, keys, record and
trade id sequence, its checks (and each one failing on the damage it is about), and the
databases it refuses.

The tests run in file order on the one build: the build's own figures first, then the checks,
which damage four conditions at once; the refusals last.
"""

from __future__ import annotations

import pytest

from oltplab import __version__
from oltplab.engines import get
from oltplab.engines.mariadb.brokerage import DIALECT
from oltplab.engines.mariadb.brokerage.checks import run_checks
from oltplab.engines.mariadb.brokerage.loader import build
from oltplab.engines.mariadb.brokerage.schema import has_run, schema_info
from oltplab.engines.mariadb.instance import find_binary
from oltplab.errors import SchemaError, UsageError
from oltplab.workloads.brokerage import population as pop
from oltplab.workloads.brokerage.build import BrokerageBuildSpec
from oltplab.workloads.brokerage.reference import START_DATE
from oltplab.workloads.brokerage.scale import parse_scale
from oltplab.workloads.brokerage.schema import (BALANCE_TABLE, COLUMNS, INDEXES, PRIMARY_KEYS,
                                                TABLES, BrokerageSchema)
from oltplab.workloads.brokerage.trades import max_trade_id

from .test_dvds_build import Db as ShopDb

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")

SEED = 28
SCALE = parse_scale(1_000, 5)


class Db(ShopDb):
    """One session on a database, kept for the module's tests (the shop's, with the
    brokerage's tables)."""

    def counts(self) -> dict[str, int]:
        tables = (*TABLES, BALANCE_TABLE)
        row = self.q("SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {t})" for t in tables))[0]
        return dict(zip(tables, row))


def new_db(mariadb, name: str) -> Db:
    mariadb.ensure_database(name)
    return Db(mariadb.dsn(name))


@pytest.fixture(scope="module")
def built(mariadb):
    """The build of 1,000 customers x 5 days, its summary, and what it reported (event,
    done, total) as it went."""
    events: list[tuple] = []
    spec = BrokerageBuildSpec(scale=SCALE, build_users=2, seed=SEED, force=True)
    db = new_db(mariadb, "brokerage")
    try:
        yield db, build(db.dsn, spec, progress=lambda *event: events.append(event)), events
    finally:
        db.close()


def test_rows_of_every_table(built):
    db, summary, events = built
    found = db.counts()
    exact = pop.exact_rows(SCALE)
    assert {t: found[t] for t in exact} == exact
    # the random tables: what the build loaded
    assert {t: n for t, n in found.items() if t not in exact} == \
        {t: summary["rows"].get(t, 0) for t in found if t not in exact}
    assert found["trade_request"] == 0 and found["trade"] > 250_000
    # the load's progress: rows made, growing, then the rows loaded
    loads = [(done, total) for event, done, total in events if event == "load"]
    assert len(loads) > 10 and loads[-1] == (sum(summary["rows"].values()),) * 2
    assert all(a[0] <= b[0] for a, b in zip(loads, loads[1:]))
    assert [e for e, _, _ in events if e != "load"][:2] == ["tables", "tables"]
    assert ("indexes", len(set(t for t, _ in INDEXES.values())),
            len(set(t for t, _ in INDEXES.values()))) in events


def test_record_sequence_and_schema_info(built):
    db, summary, _ = built
    top = max_trade_id(SCALE)
    assert db.val("SELECT MAX(t_id) FROM trade") == top
    [meta] = db.q("SELECT customers, days, scale_factor, trades, max_t_id, seed, build_users,"
                  " start_date, page_kib, oltplab_version, build_seconds FROM brokerage_meta")
    assert meta[:10] == (1_000, 5, 500, SCALE.trades, top, SEED, 2, START_DATE, 16,
                         __version__)
    assert meta[10] > 0 and summary["seconds"] > 0
    assert db.val("SELECT @@innodb_page_size") == 16 * 1024
    info = schema_info(db.dsn)
    assert info == BrokerageSchema(customers=1_000, days=5, scale_factor=500,
                                   trades=SCALE.trades, max_t_id=top, seed=SEED,
                                   start_date=START_DATE.isoformat(), page_kib=16)
    assert get("mariadb").dialect_for("brokerage") is DIALECT
    assert not has_run(db.dsn)
    # a run's Trade-Orders take the ids after the loaded ones
    assert db.val("SELECT NEXTVAL(seq_trade_id)") == top + 1


def test_columns_keys_and_indexes(built):
    db, _, _ = built
    columns: dict[str, list[str]] = {}
    for table, column in db.q("SELECT table_name, column_name FROM information_schema.columns"
                              " WHERE table_schema = DATABASE()"
                              " ORDER BY table_name, ordinal_position"):
        columns.setdefault(table, []).append(column)
    assert {t: tuple(columns[t]) for t in TABLES} == COLUMNS
    keys: dict[tuple[str, str], list[str]] = {}
    for table, name, column in db.q("SELECT table_name, index_name, column_name"
                                    " FROM information_schema.statistics"
                                    " WHERE table_schema = DATABASE()"
                                    " ORDER BY table_name, index_name, seq_in_index"):
        keys.setdefault((table, name), []).append(column)
    assert {t: tuple(keys[(t, "PRIMARY")]) for t in TABLES} == PRIMARY_KEYS
    assert {name: (t, tuple(cols)) for (t, name), cols in keys.items()
            if name != "PRIMARY" and t in TABLES} == INDEXES
    assert {r[0] for r in db.q("SELECT engine FROM information_schema.tables"
                               " WHERE table_schema = DATABASE()")} == {"InnoDB"}


def test_the_procedures_trade_on_the_built_rows(built):
    """The build installs the twelve transactions' procedures (sql/procedures.sql), which
    trade on its rows: a market purchase entered and completed (the checks that follow then
    hold after it), an account's trades found."""
    db, _, _ = built
    names = {r[0].upper() for r in db.q("SELECT routine_name FROM information_schema.routines"
                                        " WHERE routine_schema = DATABASE()"
                                        " AND routine_type = 'PROCEDURE'")}
    assert len(DIALECT.procedures) == 12 and set(DIALECT.procedures) <= names
    acct, first, last, tax_id = db.q("SELECT ca_id, c_f_name, c_l_name, c_tax_id FROM"
                                     " customer_account JOIN customer ON c_id = ca_c_id"
                                     " WHERE ca_tax_st = 1 ORDER BY ca_id LIMIT 1")[0]
    symb = db.val("SELECT MIN(lt_s_symb) FROM last_trade")
    with db.conn.cursor() as cur:
        cur.execute("CALL trade_order(%s, %s, %s, %s, %s, '', '', 'TMB', 200, 0, 0, 0, 0)",
                    (acct, first, last, tax_id, symb))
        t_id, status = cur.fetchone()[:2]
    assert t_id > max_trade_id(SCALE) and status == "SBMT"
    with db.conn.cursor() as cur:
        cur.execute("CALL trade_result(%s, 25.00)", (t_id,))
        assert cur.fetchone()[0] == acct
    assert db.q(f"SELECT t_st_id, t_comm > 0 FROM trade WHERE t_id = {t_id}") == [("CMPT", 1)]
    assert db.val(f"CALL trade_status({acct})") >= 1


def test_the_monitor_counts_trade_results(built):
    """A run's server unit: the trade results committed (the brokers' b_num_trades)."""
    db, _, _ = built
    monitor = get("mariadb").monitor(db.dsn, workload="brokerage")
    try:
        assert monitor.dialect is DIALECT
        start = monitor.snapshot()
        assert start.new_orders == db.val("SELECT COUNT(*) FROM trade") > 0
        db.q("UPDATE broker SET b_num_trades = b_num_trades + 1 WHERE b_id IN (2, 5)",
             "COMMIT")
        assert monitor.snapshot().new_orders - start.new_orders == 2
    finally:
        monitor.close()
        db.q("UPDATE broker SET b_num_trades = b_num_trades - 1 WHERE b_id IN (2, 5)",
             "COMMIT")


def test_the_checks_pass_and_each_damage_fails_its_condition(built):
    db, _, _ = built
    results = run_checks(db.dsn)
    assert [r.name for r in results] == [f"BK{k}" for k in range(1, 8)]
    assert all(r.ok and r.violations == 0 and r.sample == [] for r in results), results
    # one damage for each of four conditions, checked at once (a check takes seconds)
    [(ca, symb)] = db.q("SELECT hs_ca_id, hs_s_symb FROM holding_summary LIMIT 1")
    db.q(f"UPDATE holding_summary SET hs_qty = hs_qty + 1 WHERE hs_ca_id = {ca}"
         f" AND hs_s_symb = '{symb}'",
         # trade 7's completion no longer its last history row
         "UPDATE trade_history SET th_dts = th_dts - INTERVAL 1 DAY WHERE th_t_id = 7"
         " AND th_st_id = 'CMPT'",
         "UPDATE broker SET b_num_trades = b_num_trades + 1 WHERE b_id = 3",
         "UPDATE customer_account SET ca_bal = ca_bal + 1 WHERE ca_id = 1", "COMMIT")
    failing = {r.name: r for r in run_checks(db.dsn) if not r.ok}
    assert {name: r.violations for name, r in failing.items()} == \
        {"BK1": 1, "BK4": 1, "BK5": 1, "BK6": 1}
    assert failing["BK5"].sample[0].startswith("b_id=3 "), failing["BK5"].sample


def test_an_existing_schema_another_workloads_and_another_page_size_are_refused(built,
                                                                                mariadb):
    db, _, _ = built
    with pytest.raises(SchemaError, match="already holds a TPC-E-derived brokerage schema "
                                          r"\(35 of its tables\): pass --force"):
        build(db.dsn, BrokerageBuildSpec(scale=SCALE, build_users=2, seed=SEED))
    # the server's pages are 16 KiB: 8 is refused before anything is dropped, even forced
    with pytest.raises(UsageError, match=r"^--innodb-page-size 8k: the server's pages are 16 "
                                         "KiB"):
        build(db.dsn, BrokerageBuildSpec(scale=SCALE, seed=SEED, force=True, page_size=8))
    assert schema_info(db.dsn).max_t_id == max_trade_id(SCALE)
    other = new_db(mariadb, "brokerage_tpcc")
    other.q("CREATE TABLE IF NOT EXISTS warehouse (w_id int)")
    with pytest.raises(UsageError, match="holds the TPC-C-derived schema, not the brokerage"):
        build(other.dsn, BrokerageBuildSpec(scale=SCALE, force=True))
    with pytest.raises(UsageError, match="holds the TPC-C-derived schema"):
        schema_info(other.dsn)
    other.close()
    empty = new_db(mariadb, "brokerage_empty")
    with pytest.raises(UsageError, match="no TPC-E-derived brokerage schema"):
        run_checks(empty.dsn)
    empty.q("CREATE TABLE trade_type (tt_id char(3))")  # a build that did not finish
    with pytest.raises(SchemaError, match="incomplete"):
        schema_info(empty.dsn)
    empty.close()

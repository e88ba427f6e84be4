"""The brokerage's build and check as a user runs them: a one-day build (warned, summarised),
its check, a check that fails, a rebuild that needs --force; and the refusals of bad input,
each in one line with nothing changed: scales that are not load units, a page size
PostgreSQL cannot have, a database without the brokerage, a TPC-C or shop database where the
brokerage is to be built, and the brokerage's database where tpcc or dvds is asked for."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from oltplab.engines.common.sqlfiles import sql_statements

from ..conftest import oltplab


def _tables(pg, dsn: str) -> list[str]:
    return [r[0] for r in pg.sql("SELECT relname::text FROM pg_class WHERE relkind = 'r' AND"
                                 " relnamespace = 'public'::regnamespace ORDER BY 1", _db(dsn))]


def _db(dsn: str) -> str:
    return dsn.split("?")[0].rsplit("/", 1)[1]


def _one_line(p, rc: int, *words: str, progress: bool = False) -> str:
    """One line of error (after the build's progress line of its first step, ``progress``:
    the TPC-C and shop builds report their tables' step before they look)."""
    assert p.returncode == rc, (p.returncode, p.stdout, p.stderr)
    lines = [ln for ln in p.stderr.splitlines()
             if ln.strip() and not (progress and ln.startswith("build: tables 0/1"))]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("args, words", [
    (("--customers", "1500"), ("--customers 1500", "multiple of 1,000")),
    (("--customers", "0"), ("--customers 0",)),
    (("--customers", "1000", "--days", "0"), ("--days 0",)),
    (("--customers", "1000", "--build-users", "0"), ("--build-users",)),
    (("--customers", "1000", "--innodb-page-size", "8k"), ("--innodb-page-size", "PostgreSQL")),
    (("--customers", "1000", "--engine", "mariadb", "--innodb-page-size", "4k"),
     ("--innodb-page-size 4k",)),
    (("--days", "5"), ("--customers",)),
])
def test_bad_build_input_is_one_line_and_makes_nothing(tmp_path, args, words):
    p = oltplab("brokerage", "build", *args, "--datadir", str(tmp_path / "db"), cwd=tmp_path)
    _one_line(p, 2, *words)
    assert not (tmp_path / "db").exists()


def test_check_without_a_brokerage_is_refused(pg, tmp_path):
    dsn = pg.create_db("bkempty")
    p = oltplab("brokerage", "check", "--dsn", dsn, cwd=tmp_path)
    _one_line(p, 2, "no TPC-E-derived brokerage schema", "oltplab brokerage build")
    assert _tables(pg, dsn) == []


@pytest.mark.parametrize("tables, label", [
    (("CREATE TABLE warehouse (w_id int)", "CREATE TABLE tpcc_meta (warehouses int)"),
     "TPC-C-derived"),
    (("CREATE TABLE products (prod_id int)", "CREATE TABLE dvds_meta (size text)"),
     "DVD-Store-derived"),
])
def test_no_build_on_another_workloads_database(pg, tmp_path, tables, label):
    dsn = pg.create_db("bkother")
    for statement in tables:
        pg.sql(statement, _db(dsn))
    before = _tables(pg, dsn)
    for force in ((), ("--force",)):
        p = oltplab("brokerage", "build", "--customers", "1000", "--days", "1", "--dsn", dsn,
                    *force, cwd=tmp_path)
        _one_line(p, 2, f"holds the {label} schema", "use another database")
        assert _tables(pg, dsn) == before


@pytest.fixture(scope="module")
def brokerage_tables(pg) -> str:
    """A database that holds the brokerage's tables (no build: its record is missing)."""
    dsn = pg.create_db("bktables")
    for statement in sql_statements("oltplab.engines.postgres.brokerage", "tables"):
        pg.sql(statement, _db(dsn))
    return dsn


@pytest.mark.parametrize("args", [
    ("tpcc", "build", "-w", "1", "--force"), ("tpcc", "check"),
    ("tpcc", "run", "--duration", "1s"), ("dvds", "build", "--size", "10MB", "--force"),
    ("dvds", "check"),
    ("dvds", "run", "--duration", "1s"),
])
def test_the_other_workloads_refuse_the_brokerages_database(pg, brokerage_tables, tmp_path,
                                                            args):
    before = _tables(pg, brokerage_tables)
    p = oltplab(*args, "--dsn", brokerage_tables, "--results-dir", str(tmp_path / "r"),
                cwd=tmp_path) if args[1] == "run" else \
        oltplab(*args, "--dsn", brokerage_tables, cwd=tmp_path)
    _one_line(p, 2, "holds the TPC-E-derived brokerage schema", f"for {args[0]}",
              progress=args[1] == "build")
    assert _tables(pg, brokerage_tables) == before
    assert not (tmp_path / "r").exists()


def test_a_one_day_build_is_warned_summarised_and_checked(pg, tmp_path):
    """--days 1: the warning and the summary line; the check passes (exit 0), fails with the
    condition named when a broker's total is changed (exit 1), and a second build without
    --force is refused with the build kept."""
    dsn = pg.create_db("bkday")
    p = oltplab("brokerage", "build", "--customers", "1000", "--days", "1", "--seed", "4",
                "--build-users", "2", "--dsn", dsn, cwd=tmp_path, check_rc=0)
    assert "warning: 1 day(s) of initial trading" in p.stderr and "not meaningful" in p.stderr
    m = re.search(r"built the TPC-E-derived brokerage \(1,000 customers, 1 day\(s\) of trading, "
                  r"([\d,]+) trades loaded, ([\d,]+) rows\) in ([\d.]+) s, ([\d,]+) rows/s",
                  p.stdout)
    assert m, p.stdout
    trades = int(m.group(1).replace(",", ""))
    # 57,600 ids a day, those with id % 101 == 51 skipped
    assert trades == 57_600 - len([i for i in range(1, 57_601) if i % 101 == 51])
    assert pg.sql("SELECT count(*) FROM trade", _db(dsn))[0][0] == trades
    assert pg.sql("SELECT days, customers, seed FROM brokerage_meta", _db(dsn))[0] == \
        (1, 1000, 4)
    p = oltplab("brokerage", "check", "--dsn", dsn, cwd=tmp_path, check_rc=0)
    assert [ln.split()[:2] for ln in p.stdout.splitlines()] == \
        [["ok", f"BK{n}"] for n in range(1, 8)], p.stdout
    pg.sql("UPDATE broker SET b_num_trades = b_num_trades + 1 WHERE b_id = 1", _db(dsn))
    p = oltplab("brokerage", "check", "--dsn", dsn, cwd=tmp_path)
    assert p.returncode == 1 and "FAIL BK5" in p.stdout, (p.stdout, p.stderr)
    assert p.stderr.strip().endswith("consistency checks failed: BK5")
    p = oltplab("brokerage", "build", "--customers", "1000", "--days", "1", "--dsn", dsn,
                cwd=tmp_path)
    _one_line(p, 1, "already holds a TPC-E-derived brokerage schema", "--force")
    assert pg.sql("SELECT count(*) FROM trade", _db(dsn))[0][0] == trades


def _on_mariadb(dsn: str, work):
    """``work(cursor)`` on a connection of its own to a MariaDB database."""
    from oltplab.engines.mariadb import client
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            return work(cur)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def mariadb_brokerage_tables(mariadb) -> str:
    """A MariaDB database that holds the brokerage's tables (no build)."""
    from oltplab.engines.mariadb.brokerage.schema import sql_statements as mariadb_statements
    mariadb.ensure_database("bktables")
    dsn = mariadb.dsn("bktables")
    _on_mariadb(dsn, lambda cur: [cur.execute(s) for s in mariadb_statements("tables")])
    return dsn


@pytest.mark.parametrize("args", [
    ("tpcc", "build", "-w", "1", "--force"), ("tpcc", "check"),
    ("dvds", "build", "--size", "10MB", "--force"), ("dvds", "check"),
])
def test_the_other_workloads_refuse_the_brokerages_database_on_mariadb(
        mariadb_brokerage_tables, tmp_path, args):
    from oltplab.engines.mariadb.dvds.schema import present

    def tables() -> list[str]:
        return _on_mariadb(mariadb_brokerage_tables,
                           lambda cur: present(cur, ("customer", "trade", "warehouse",
                                                     "products")))

    before = tables()
    p = oltplab(*args, "--dsn", mariadb_brokerage_tables, cwd=tmp_path)
    _one_line(p, 2, "holds the TPC-E-derived brokerage schema", f"for {args[0]}",
              progress=args[1] == "build")
    assert tables() == before == ["customer", "trade"]


def _run_record(results: Path) -> dict:
    (run,) = results.iterdir()
    return json.loads((run / "run.json").read_text())


def mix_bound(step: dict, kind: str, deck: int = 890) -> float:
    """How far (in points) the users' measured share of ``kind`` may lie from the deck's: 1
    point once each user dealt whole decks, else 4 standard deviations of dealing each user's
    share of the step's transactions from its own deck without replacement."""
    users = step["users"]
    total = sum(step["transactions"][k]["count"] for k in step["mix"])
    drawn = total / users
    if drawn >= deck:
        return 1.0
    p = step["deck_mix"][kind] / 100
    var = users * drawn * p * (1 - p) * (deck - drawn) / (deck - 1)
    return max(1.0, 400 * var ** 0.5 / total)


def assert_a_measured_brokerage_run(data: dict, users: list[int]) -> None:
    """What every step of a brokerage run holds: trps from the server agreeing with the
    client's within 0.5%, every transaction of the mix and the market emulator's two
    completed, the measured mix within a point of the deck, the deliberate rollbacks, the
    datastore's storage view, the emulator's pending limit orders; Trade-Cleanup before the
    first step and the consistency check after the last."""
    assert data["status"] == "completed" and data["workload"] == "brokerage", data.get("error")
    assert [s["users"] for s in data["steps"]] == users
    assert "trade_cleanup" in data["before_run"]
    for s in data["steps"]:
        # within 0.5%, or (a short step) the few Trade-Results in flight at a boundary, which
        # the server counts and the client does not, or the reverse
        off = abs(s["client_trps"] - s["trps"]) * s["measured_s"]
        assert s["trps"] > 0 and off <= max(0.005 * s["trps"] * s["measured_s"], 3.5), s
        tx = s["transactions"]
        for name in ("trade_order", "trade_result", "trade_status", "trade_lookup",
                     "trade_update", "market_feed", "market_watch", "security_detail",
                     "customer_position", "broker_volume"):
            assert tx[name]["count"] > 0, name
            assert {"count", "mean", "p50", "p95", "p99", "max"} <= set(tx[name]), name
        assert "data_maintenance" in tx
        assert s["client_trps"] * s["measured_s"] == pytest.approx(
            tx["trade_result"]["committed"], abs=0.01)
        assert all(abs(s["mix"][k] - s["deck_mix"][k]) <= mix_bound(s, k)
                   for k in s["mix"]), s["mix"]
        assert tx["trade_order"]["rolled_back"] >= 0 and s["rollback_pct"] is not None
        assert s["errors"] == 0 and isinstance(s["retries"], int)
        assert {"read_iops", "write_iops", "reads_per_write", "read_kib", "write_kib",
                "await_ms"} <= set(s["io"])
        assert s["pending_limits"] >= 0 and isinstance(s["warnings"], list)
    assert data["check"]["ok"] is True


def test_a_run_on_postgresql_measures_trade_results_and_passes_the_check(pg, tmp_path):
    """A step of 3 users on a 3-day build: trps agree between client and server, every
    transaction is recorded, the mix holds, the short initial trading is warned of, and the
    check passes after the run (the limit orders it left pending have their requests);
    ``results show --json`` carries the step's fields."""
    dsn = pg.create_db("bkrun")
    oltplab("brokerage", "build", "--customers", "1000", "--days", "3", "--seed", "6",
            "--build-users", "2", "--dsn", dsn, cwd=tmp_path, check_rc=0)
    results = tmp_path / "r"
    p = oltplab("brokerage", "run", "--dsn", dsn, "--users", "3", "--rampup", "1s",
                "--duration", "4s", "--check", "--results-dir", str(results), cwd=tmp_path,
                check_rc=0)
    assert "consistency: all hold (BK1-BK7)" in p.stdout, p.stdout
    data = _run_record(results)
    assert_a_measured_brokerage_run(data, [3])
    assert all(any("3 day(s) of initial trading" in w for w in s["warnings"])
               for s in data["steps"])
    p = oltplab("results", "show", "--results-dir", str(results), data["id"], "--json",
                cwd=tmp_path, check_rc=0)
    shown = json.loads(p.stdout)["steps"][0]
    assert {"users", "trps", "client_trps", "transactions", "mix", "rollback_pct", "retries",
            "io", "warnings"} <= set(shown)


@pytest.mark.parametrize("args, rc, words", [
    (("--users", "0"), 2, ("--users",)),
    (("--duration", "0s"), 2, ("--duration",)),
])
def test_bad_run_input_is_one_line(tmp_path, args, rc, words):
    p = oltplab("brokerage", "run", *args, "--datadir", str(tmp_path / "db"),
                "--results-dir", str(tmp_path / "r"), cwd=tmp_path)
    _one_line(p, rc, *words)
    assert not (tmp_path / "db").exists() and not (tmp_path / "r").exists()


def test_a_run_without_a_brokerage_is_refused(pg, brokerage_tables, tmp_path):
    """No schema at all, another workload's, or the tables without their build's record:
    one line, exit 2 (the incomplete build: 1), no run folder."""
    empty = pg.create_db("bkrunempty")
    tpcc = pg.create_db("bkruntpcc")
    pg.sql("CREATE TABLE warehouse (w_id int)", _db(tpcc))
    pg.sql("CREATE TABLE tpcc_meta (warehouses int)", _db(tpcc))
    for dsn, rc, words in ((empty, 2, ("no TPC-E-derived brokerage schema",)),
                           (tpcc, 2, ("holds the TPC-C-derived schema",)),
                           (brokerage_tables, 1, ("brokerage",))):
        p = oltplab("brokerage", "run", "--dsn", dsn, "--duration", "1s", "--results-dir",
                    str(tmp_path / "r"), cwd=tmp_path)
        _one_line(p, rc, *words)
        assert not (tmp_path / "r").exists()

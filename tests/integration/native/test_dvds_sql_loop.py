"""--mode sql of the DVD-Store-derived shop in the C loop (native/dvds/sqlpq.c on PostgreSQL,
sqlmy.c on MariaDB) against small (1MB) shops built by the suite: the orders the loop counts
are the rows ORDERS gained and the customers it made the rows CUSTOMERS gained; the shop keeps
its checks; a username taken already is drawn again; a purchase a product is short for rolls
back, counted as a rollback, having written nothing. test_native_sanitizers.py runs this
module again under AddressSanitizer and UndefinedBehaviorSanitizer."""

from __future__ import annotations

import time

import pytest

from oltplab import _native
from oltplab.workloads.dvds import words
from oltplab.workloads.dvds.build import DvdsBuildSpec
from oltplab.workloads.dvds.sizes import parse_size

S = 1_000_000_000
SIZE = parse_size("1MB")
BUILD = DvdsBuildSpec(size=SIZE, build_users=1, seed=11, force=True)
ROWS = len(_native.DVDS_NAMES) + 1  # the calls and the order
LOGIN, NEW_CUSTOMER, CATEGORY, ACTOR, TITLE, PURCHASE = range(6)  # DVD Store 2's calls
ORDER = ROWS - 1
WORDS = dict(title_words=words.TITLE_WORDS, actor_first=words.ACTOR_FIRST,
             actor_last=words.ACTOR_LAST, countries=words.COUNTRIES, states=words.STATES)
TABLES = ("customers", "orders", "orderlines", "cust_hist", "reorder")
INVENTORY = "SELECT SUM(quan_in_stock) + 1000000 * SUM(sales) FROM inventory"


def shoppers(users: int, seed: int = 100, **over) -> list:
    return [_native.DvdsTerminal(seed + i, SIZE.customers, SIZE.products, **{**WORDS, **over})
            for i in range(users)]


def window(seconds: float) -> dict:
    now = time.monotonic_ns()  # every call in the window: the counts are the whole run's
    return dict(ramp_end_ns=now, measure_end_ns=now + int(seconds * S))


def drive(loop) -> tuple[dict, int]:
    """Run the loop to its end: its counts, and every committed order (window or not)."""
    while True:
        event = loop.run()
        assert event in (_native.BOUNDARY, _native.SAMPLES, _native.FINISHED), loop.error
        loop.take_samples()
        if event == _native.FINISHED:
            return loop.counts(), loop.headline


class Postgres:
    """A 1MB shop on the suite's PostgreSQL; ``copy()`` another one to spoil."""

    def __init__(self, pg, dsn: str):
        self.pg, self.dsn = pg, dsn

    def copy(self) -> Postgres:
        return Postgres(self.pg, self.pg.create_db("dvdsqls", template=self.dbname()))

    def dbname(self) -> str:
        return self.dsn.split("?")[0].rsplit("/", 1)[1]

    def val(self, *statements: str):
        """Run the statements in one session: the first value of the last."""
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            for sql in statements:
                cur = conn.execute(sql)
            return cur.fetchone()[0] if cur.description else None

    def out_of_stock(self) -> None:
        self.val("ALTER TABLE inventory DISABLE TRIGGER inventory_restock",
                 "UPDATE inventory SET quan_in_stock = 0",
                 "ALTER TABLE inventory ENABLE TRIGGER inventory_restock")

    def run(self, terminals: list, seconds: float) -> tuple[dict, int]:
        from oltplab.engines.postgres import driver
        from oltplab.engines.postgres.states import FATAL_STATES, RETRYABLE_STATES

        conns = [driver.open_connection(self.dsn, "oltplab-test", False, mode="sql",
                                        workload="dvds") for _ in terminals]
        try:
            loop = _native.ProcLoop(
                workload="dvds", libpq=driver.libpq_path(), connections=conns,
                pointers=[c.pgconn_ptr for c in conns], terminals=terminals,
                names=[f"dvds_{n}" for n in _native.DVDS_NAMES], flush_sql="", waits=False,
                flush_stats=False, idle_published_after_ns=10 * S, max_retries=20,
                max_consecutive_errors=3, retryable=RETRYABLE_STATES, fatal=FATAL_STATES,
                bulk=64, sql=True, **window(seconds))
            outcome = drive(loop)
            loop.close()
            return outcome
        finally:
            for c in conns:
                c.finish()

    def checks_failing(self) -> list[str]:
        from oltplab.engines.postgres.dvds.checks import run_checks
        return [r.name for r in run_checks(self.dsn, after_run=True) if not r.ok]


class MariaDB(Postgres):
    """A 1MB shop on the suite's MariaDB; ``copy()`` builds another one."""

    def __init__(self, mariadb, name: str):
        from oltplab.engines.mariadb.dvds.loader import build

        mariadb.ensure_database(name)
        self.mariadb, self.dsn = mariadb, mariadb.dsn(name)
        build(self.dsn, BUILD)

    def copy(self) -> MariaDB:
        return MariaDB(self.mariadb, "dvds_sqls")

    def val(self, *statements: str):
        from ..engines.mariadb.test_mariadb_sql_mode import execute
        rows = execute(self.dsn, *statements)
        return rows[0][0] if rows else None

    def out_of_stock(self) -> None:
        """MariaDB cannot switch a trigger off: it is dropped and made again."""
        from oltplab.engines.mariadb.bulk import procedure_statements
        from oltplab.engines.mariadb.dvds.schema import sql_text

        [trigger] = [s for s in procedure_statements(sql_text("procedures"))
                     if s.startswith("CREATE TRIGGER")]
        self.val("DROP TRIGGER inventory_restock", "UPDATE inventory SET quan_in_stock = 0",
                 trigger)

    def run(self, terminals: list, seconds: float) -> tuple[dict, int]:
        from oltplab.engines.common.loop import UserPlan, WorkerPlan
        from oltplab.engines.mariadb import driver

        plan = WorkerPlan(worker=0, dsn=self.dsn, mode="sql",
                          users=(UserPlan(0, 1, 1, (1,), 1),), w_max=1, constants=None,
                          engine="mariadb", workload="dvds")
        conns, loop = [driver.connect(plan) for _ in terminals], None
        try:
            loop = _native.MariaDBLoop(
                workload="dvds", connections=conns, terminals=terminals, waits=False,
                max_retries=20, max_consecutive_errors=3, retryable=[1213, 1205],
                lost=[2006, 2013], bulk=64, sql=True, **window(seconds))
            return drive(loop)
        finally:
            if loop is not None:
                loop.close()  # the loop lets the connections go
            for c in conns:
                c.close()

    def checks_failing(self) -> list[str]:
        from oltplab.engines.mariadb.dvds.checks import run_checks
        return [r.name for r in run_checks(self.dsn, after_run=True) if not r.ok]


@pytest.fixture(scope="module", params=["postgres", "mariadb"])
def shop(request):
    if request.param == "postgres":
        from oltplab.engines.postgres.dvds.loader import build

        pg = request.getfixturevalue("pg")
        dsn = pg.create_db("dvdsql")
        build(dsn, BUILD)
        return Postgres(pg, dsn)
    from oltplab.engines.mariadb.instance import find_binary

    if find_binary("mariadbd") is None:
        pytest.skip("mariadbd is not installed (Debian: mariadb-server-core)")
    return MariaDB(request.getfixturevalue("mariadb"), "dvds_sql")


def rows(shop) -> dict:
    return {t: shop.val(f"SELECT COUNT(*) FROM {t}") for t in TABLES}


def test_sql_mode_orders_are_the_rows_orders_gained(shop):
    before = rows(shop)
    counts, headline = shop.run(shoppers(4), 1.5)
    added = {t: n - before[t] for t, n in rows(shop).items()}
    c, r, e = (list(counts[k]) for k in ("committed", "rolled_back", "errors"))
    assert sum(e) == 0, counts["errors"]
    assert (c[ORDER], r[ORDER]) == (c[PURCHASE], r[PURCHASE])
    assert r[:PURCHASE] == [0] * PURCHASE
    # every committed order is a row of ORDERS; the window's are those that ended in it (a
    # call that ends after the window is not counted: one a user at most)
    assert headline == added["orders"] > 10 and headline - 4 <= c[ORDER] <= headline
    inputs = counts["inputs"]
    assert inputs["logins"] == c[LOGIN] and inputs["unknown_logins"] == 0
    assert inputs["new_customers"] + inputs["taken_usernames"] == c[NEW_CUSTOMER]
    assert inputs["new_customers"] <= added["customers"] <= inputs["new_customers"] + 4
    assert inputs["searches"] == c[CATEGORY] + c[ACTOR] + c[TITLE] > 0
    assert inputs["purchases"] == c[PURCHASE] + r[PURCHASE]
    assert inputs["rolled_back_purchases"] == r[PURCHASE]
    assert headline <= added["orderlines"] == added["cust_hist"] <= 10 * headline
    assert shop.checks_failing() == []


def test_sql_mode_draws_a_taken_username_again(shop):
    """The same seed twice: the second run's first new customers' names are taken."""
    before, made = rows(shop)["customers"], 0
    for run in range(2):
        counts, _ = shop.run(shoppers(1, seed=7, pct_new_customers=100), 0.4)
        taken = counts["inputs"]["taken_usernames"]
        assert taken == 0 if run == 0 else taken >= 1
        made += counts["inputs"]["new_customers"]
    assert made > 0
    assert made <= rows(shop)["customers"] - before <= made + 2


def test_sql_mode_rolls_back_a_purchase_short_of_stock(shop):
    """Every product out of stock: every purchase is rolled back, counted as a rollback,
    having written nothing."""
    spoilt = shop.copy()
    spoilt.out_of_stock()
    before, stock = rows(spoilt), spoilt.val(INVENTORY)
    counts, headline = spoilt.run(shoppers(2), 1.0)
    r = counts["rolled_back"]
    assert headline == 0 and r[PURCHASE] == r[ORDER] == counts["inputs"]["purchases"] > 0
    assert counts["inputs"]["rolled_back_purchases"] == r[PURCHASE]
    assert rows(spoilt)["orders"] == before["orders"] and spoilt.val(INVENTORY) == stock

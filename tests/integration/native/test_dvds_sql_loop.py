"""--mode sql of the DVD-Store-derived shop in the C loop (native/dvds/sqlpq.c on PostgreSQL,
sqlmy.c on MariaDB) against small (1MB) shops built by the suite: the orders the loop counts
are the rows ORDERS gained and the customers it made the rows CUSTOMERS gained; the shop keeps
its checks; a username taken already is drawn again; a purchase a product is short for rolls
back, counted as a rollback, having written nothing; a shop spoilt under a purchase (a
product's INVENTORY or PRODUCTS row gone, its price missing or more than an order can hold)
stops the run with one line that says so; a new customer too long for its columns is an
error, as in the procedure. On DS3 builds, DVD Store 3's six calls
too: the reviews, ratings and memberships counted are the rows their tables gained, a member
already gains nothing (0), and PostgreSQL's statements find what its functions find.
test_native_sanitizers.py runs this module again under AddressSanitizer and
UndefinedBehaviorSanitizer."""

from __future__ import annotations

import time

import pytest

from oltplab import _native
from oltplab.workloads.dvds import words
from oltplab.workloads.dvds.build import DvdsBuildSpec
from oltplab.workloads.dvds.inputs import RunConstants
from oltplab.workloads.dvds.params import DvdsParams
from oltplab.workloads.dvds.population import reviews
from oltplab.workloads.dvds.sizes import parse_size

S = 1_000_000_000
SIZE = parse_size("1MB")
BUILD = DvdsBuildSpec(size=SIZE, build_users=1, seed=11, force=True)
BUILD3 = DvdsBuildSpec(size=SIZE, build_users=1, seed=11, force=True, ds3=True)
ROWS = len(_native.DVDS_NAMES) + 1  # the calls and the order
(LOGIN, NEW_CUSTOMER, CATEGORY, ACTOR, TITLE, PURCHASE, R_PRODUCT, R_ACTOR, R_TITLE, REVIEW,
 RATING, MEMBER, ORDER) = range(ROWS)
WORDS = dict(title_words=words.TITLE_WORDS, actor_first=words.ACTOR_FIRST,
             actor_last=words.ACTOR_LAST, countries=words.COUNTRIES, states=words.STATES)
TABLES = ("customers", "orders", "orderlines", "cust_hist", "reorder")
DS3_TABLES = ("reviews", "reviews_helpfulness", "membership")
DS3 = dict(ds3=True, review_ids=reviews(SIZE), pct_new_reviews=30, pct_new_helpfulness=30,
           pct_new_members=30)
INVENTORY = "SELECT SUM(quan_in_stock) + 1000000 * SUM(sales) FROM inventory"


def shoppers(users: int, seed: int = 100, **over) -> list:
    """DS2 shoppers, or DS3's with ``**DS3``."""
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


def ending(loop) -> tuple[str | None, dict]:
    """Run the loop to its end or its failure: its error (None: it finished), its counts."""
    while True:
        event = loop.run()
        loop.take_samples()
        if event in (_native.FINISHED, _native.FAILED):
            return loop.error, loop.counts()


def failure(loop) -> tuple[str, dict]:
    """Run the loop until it fails: its error, and its counts."""
    error, counts = ending(loop)
    assert error is not None, "the run did not fail"
    return error, counts


class Postgres:
    """A 1MB shop on the suite's PostgreSQL (DS3's parts too: ``ds3``); ``copy()`` another
    one to spoil."""

    def __init__(self, pg, dsn: str, ds3: bool = False):
        self.pg, self.dsn, self.ds3 = pg, dsn, ds3

    def copy(self) -> Postgres:
        return Postgres(self.pg, self.pg.create_db("dvdsqls", template=self.dbname()), self.ds3)

    def constants(self) -> RunConstants:
        """A run's constants on this shop: which statements a connection prepares."""
        return RunConstants(size=SIZE.name, customers=SIZE.customers, products=SIZE.products,
                            params=DvdsParams(ds3=self.ds3), reviews=DS3["review_ids"])

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

    #: makes PRODUCTS.price nullable
    NULL_PRICE = "ALTER TABLE products ALTER price DROP NOT NULL"
    #: cuts CUSTOMERS.firstname to 2 characters
    SHORT_FIRSTNAME = ("ALTER TABLE customers ALTER firstname TYPE varchar(2)"
                       " USING left(firstname, 2)",)

    def run(self, terminals: list, seconds: float, until=drive):
        """The loop over ``terminals`` for ``seconds``: what ``until(loop)`` makes of it."""
        from oltplab.engines.postgres import driver
        from oltplab.engines.postgres.states import FATAL_STATES, RETRYABLE_STATES

        conns = [driver.open_connection(self.dsn, "oltplab-test", False, mode="sql",
                                        workload="dvds", constants=self.constants())
                 for _ in terminals]
        try:
            loop = _native.ProcLoop(
                workload="dvds", libpq=driver.libpq_path(), connections=conns,
                pointers=[c.pgconn_ptr for c in conns], terminals=terminals,
                names=[f"dvds_{n}" for n in _native.DVDS_NAMES], flush_sql="", waits=False,
                flush_stats=False, idle_published_after_ns=10 * S, max_retries=20,
                max_consecutive_errors=3, retryable=RETRYABLE_STATES, fatal=FATAL_STATES,
                bulk=64, sql=True, **window(seconds))
            outcome = until(loop)
            loop.close()
            return outcome
        finally:
            for c in conns:
                c.finish()

    def checks_failing(self) -> list[str]:
        from oltplab.engines.postgres.dvds.checks import run_checks
        return [r.name for r in run_checks(self.dsn, after_run=True) if not r.ok]


class MariaDB(Postgres):
    """A 1MB shop on the suite's MariaDB (DS3's parts too: ``ds3``); ``copy()`` builds
    another one."""

    def __init__(self, mariadb, name: str, ds3: bool = False):
        from oltplab.engines.mariadb.dvds.loader import build

        mariadb.ensure_database(name)
        self.mariadb, self.dsn, self.ds3 = mariadb, mariadb.dsn(name), ds3
        build(self.dsn, BUILD3 if ds3 else BUILD)

    def copy(self) -> MariaDB:
        return MariaDB(self.mariadb, "dvds_sqls", self.ds3)

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

    NULL_PRICE = "ALTER TABLE products MODIFY price decimal(12,2) NULL"
    SHORT_FIRSTNAME = ("UPDATE customers SET firstname = LEFT(firstname, 2)",
                       "ALTER TABLE customers MODIFY firstname varchar(2) NOT NULL")

    def run(self, terminals: list, seconds: float, until=drive):
        from oltplab.engines.common.loop import UserPlan, WorkerPlan
        from oltplab.engines.mariadb import driver

        plan = WorkerPlan(worker=0, dsn=self.dsn, mode="sql",
                          users=(UserPlan(0, 1, 1, (1,), 1),), w_max=1,
                          constants=self.constants(), engine="mariadb", workload="dvds")
        conns, loop = [driver.connect(plan) for _ in terminals], None
        try:
            loop = _native.MariaDBLoop(
                workload="dvds", connections=conns, terminals=terminals, waits=False,
                max_retries=20, max_consecutive_errors=3, retryable=[1213, 1205],
                lost=[2006, 2013], bulk=64, sql=True, **window(seconds))
            return until(loop)
        finally:
            if loop is not None:
                loop.close()  # the loop lets the connections go
            for c in conns:
                c.close()

    def checks_failing(self) -> list[str]:
        from oltplab.engines.mariadb.dvds.checks import run_checks
        return [r.name for r in run_checks(self.dsn, after_run=True) if not r.ok]


def a_shop(request, engine: str, ds3: bool):
    """A 1MB shop of its own on the suite's server of ``engine``."""
    name = "dvds_sql3" if ds3 else "dvds_sql"
    if engine == "postgres":
        from oltplab.engines.postgres.dvds.loader import build

        pg = request.getfixturevalue("pg")
        dsn = pg.create_db(name.replace("_", ""))
        build(dsn, BUILD3 if ds3 else BUILD)
        return Postgres(pg, dsn, ds3)
    from oltplab.engines.mariadb.instance import find_binary

    if find_binary("mariadbd") is None:
        pytest.skip("mariadbd is not installed (Debian: mariadb-server-core)")
    return MariaDB(request.getfixturevalue("mariadb"), name, ds3)


@pytest.fixture(scope="module", params=["postgres", "mariadb"])
def shop(request):
    return a_shop(request, request.param, ds3=False)


@pytest.fixture(scope="module")
def pg_shop3(request):
    return a_shop(request, "postgres", ds3=True)


@pytest.fixture(scope="module", params=["postgres", "mariadb"])
def shop3(request):
    """A DS3 build."""
    if request.param == "postgres":
        return request.getfixturevalue("pg_shop3")
    return a_shop(request, request.param, ds3=True)


def rows(shop, tables=TABLES) -> dict:
    return {t: shop.val(f"SELECT COUNT(*) FROM {t}") for t in tables}


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


@pytest.mark.parametrize("spoil, error", [
    (("DELETE FROM inventory WHERE prod_id = 1",), "product 1 is not in the inventory"),
    (("DELETE FROM products WHERE prod_id = 1",), "product 1 is not in the products"),
    (("NULL_PRICE", "UPDATE products SET price = NULL WHERE prod_id = 1"), "not a price: "),
    (("UPDATE products SET price = 999999999.99 WHERE prod_id = 1",),
     "the order's amount is out of range"),
])
def test_sql_mode_stops_in_one_line_on_a_spoilt_shop(shop, spoil, error):
    """A shop whose product 1 lost its INVENTORY row, its PRODUCTS row or its price, or whose
    price no order can pay: shoppers of product 1 alone stop the run at their first purchase
    with one line naming the product or the problem, having written no order."""
    spoilt = shop.copy()
    spoilt.val(*(getattr(spoilt, s, s) for s in spoil))
    before = rows(spoilt)["orders"]
    terminals = [_native.DvdsTerminal(100 + i, SIZE.customers, 1, **WORDS) for i in range(2)]
    message, counts = spoilt.run(terminals, 30.0, until=failure)
    assert message.startswith("purchase: " + error) and "\n" not in message, message
    assert counts["committed"][PURCHASE] == 0 and rows(spoilt)["orders"] == before


def test_sql_mode_new_customer_that_does_not_fit_fails_as_the_procedure_does(shop):
    """CUSTOMERS.firstname cut to 2 characters: every new customer's name is too long for it,
    an error as in the procedure, never a name stored cut short (MariaDB's INSERT IGNORE made
    it a warning) nor a taken username."""
    spoilt = shop.copy()
    spoilt.val(*spoilt.SHORT_FIRSTNAME)
    before = rows(spoilt)["customers"]
    error, counts = spoilt.run(shoppers(2, pct_new_customers=100), 0.5, until=ending)
    inputs = counts["inputs"]
    assert counts["errors"][NEW_CUSTOMER] > 0 or "new_customer" in (error or ""), (error, counts)
    assert inputs["new_customers"] == inputs["taken_usernames"] == 0
    assert rows(spoilt)["customers"] == before


# ------------------------------------------------------------------------------------------
# DVD Store 3's calls

def test_sql_mode_on_a_ds3_build_counts_the_rows_its_calls_wrote(shop3):
    before = rows(shop3, TABLES + DS3_TABLES)
    counts, headline = shop3.run(shoppers(4, **DS3), 2.0)
    added = {t: n - before[t] for t, n in rows(shop3, TABLES + DS3_TABLES).items()}
    c, r, e = (list(counts[k]) for k in ("committed", "rolled_back", "errors"))
    assert sum(e) == 0, counts["errors"]
    assert r[:PURCHASE] == [0] * PURCHASE and r[R_PRODUCT:ORDER] == [0] * 6
    assert all(c[k] > 0 for k in range(R_PRODUCT, ORDER)), c
    assert headline == added["orders"] > 10 and headline - 4 <= c[ORDER] <= headline
    inputs = counts["inputs"]
    assert inputs["review_searches"] == sum(c[R_PRODUCT:REVIEW]) >= inputs["review_orders"] > 0
    assert [inputs[k] for k in ("reviews_product", "reviews_actor", "reviews_title")] == \
        c[R_PRODUCT:REVIEW]
    # a write that ended after the window is not counted: one a user at most
    assert (inputs["new_reviews"], inputs["new_helpfulness"]) == (c[REVIEW], c[RATING])
    assert c[REVIEW] <= added["reviews"] <= c[REVIEW] + 4
    assert c[RATING] <= added["reviews_helpfulness"] <= c[RATING] + 4
    assert inputs["new_members"] + inputs["taken_memberships"] == c[MEMBER]
    assert inputs["new_members"] <= added["membership"] <= inputs["new_members"] + 4
    assert shop3.checks_failing() == []


def test_sql_mode_makes_a_member_once(shop3):
    """The same seed twice, every order a new membership: the second run's customers are the
    first's, members already (0: no row gained; the build made some members too)."""
    before, made, taken = rows(shop3, DS3_TABLES)["membership"], [], []
    for _ in range(2):
        counts, _ = shop3.run(shoppers(1, seed=9, **{**DS3, "pct_new_members": 100,
                                                     "pct_new_customers": 0}), 0.4)
        assert sum(counts["errors"]) == 0, counts["errors"]
        made.append(counts["inputs"]["new_members"])
        taken.append(counts["inputs"]["taken_memberships"])
    assert made[0] > 0 and taken[1] > taken[0]
    assert sum(made) <= rows(shop3, DS3_TABLES)["membership"] - before <= sum(made) + 2


def test_postgres_statements_find_what_the_functions_find(pg_shop3):
    """Each DS3 call a shopper draws, as its function and as the statements of --mode sql, on
    one DS3 shop: the same rows found, the same rows written (each write rolled back)."""
    import psycopg

    from oltplab.engines.postgres.dvds.transactions import DS3_CALLS, STATEMENTS

    terminal = shoppers(1, seed=3, **{**DS3, "pct_new_members": 100})[0]
    seen = set()
    with psycopg.connect(pg_shop3.dsn, cursor_factory=psycopg.RawCursor) as conn:
        for _ in range(3000):
            kind, args = terminal.next_call()
            value = 1
            if kind in DS3_CALLS:
                seen.add(kind)
                marks = ", ".join(f"${k + 1}" for k in range(len(args)))
                by_function = conn.execute(f"SELECT dvds_{kind}({marks})", args).fetchone()[0]
                conn.rollback()
                [sql] = [v for k, v in STATEMENTS.items() if k.split(".")[0] == kind]
                found = conn.execute(sql, args).fetchall()
                conn.rollback()
                if kind.startswith("reviews_"):
                    assert len(found) == by_function, (kind, args)
                elif kind == "new_member":
                    assert (found[0][0] if found else 0) == by_function, args
                else:  # the next id of the same sequence: one more than the function's
                    assert found[0][0] == by_function + 1, (kind, args)
            elif kind in ("login", "new_customer", "purchase"):
                value = 1 + len(seen)  # a customer (login, new_customer) or an order
            terminal.complete(value)
    assert seen == set(DS3_CALLS)

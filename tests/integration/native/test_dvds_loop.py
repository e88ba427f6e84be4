"""The C loop driving the DVD-Store-derived shoppers (workload "dvds") through stand-in
functions on the suite's PostgreSQL and procedures on its MariaDB: the loop's unit row (one
whole order: committed or rolled back with its purchase, the order's response time, its
samples handed over with the calls'), the calls' arguments as the servers take them, and
failed calls that abandon their orders. The stand-ins answer as the contract's functions do
without a shop behind them: a login finds user<N> as customer N, a new customer's name is
taken when its number is a multiple of 3, a browse finds ``batch`` rows, a title browse for
BROKEN fails, a purchase whose first product is a multiple of 4 is short of stock (-1).
test_native_sanitizers.py runs this module again under AddressSanitizer and
UndefinedBehaviorSanitizer."""

from __future__ import annotations

import threading
import time

import pytest

from oltplab import _native

S = 1_000_000_000
ROWS = len(_native.DVDS_NAMES) + 1  # the calls and the order
(LOGIN, NEW_CUSTOMER, CATEGORY, ACTOR, TITLE, PURCHASE, R_PRODUCT, R_ACTOR, R_TITLE, REVIEW,
 RATING, MEMBER, ORDER) = range(ROWS)
WORDS = dict(title_words=("ALPHA", "BROKEN", "GAMMA"), actor_first=("ADA", "BOB"),
             actor_last=("KING", "LANE"), countries=("Canada", "Japan"), states=("CA", "NY"))

PG_FUNCTIONS = [
    "CREATE SEQUENCE orders_seq",
    "CREATE FUNCTION dvds_login(username text, password text) RETURNS bigint LANGUAGE sql"
    " AS $$ SELECT substr(username, 5)::bigint $$",
    "CREATE FUNCTION dvds_new_customer(firstname text, lastname text, address1 text,"
    " address2 text, city text, state text, zip text, country text, region int, email text,"
    " phone text, creditcardtype int, creditcard text, creditcardexpiration text,"
    " username text, password text, age int, income int, gender text) RETURNS bigint"
    " LANGUAGE sql AS $$ SELECT CASE WHEN substr(username, 8)::bigint % 3 = 0 THEN 0"
    " ELSE substr(username, 8)::bigint END $$",
    "CREATE FUNCTION dvds_browse_category(category int, batch int) RETURNS bigint"
    " LANGUAGE sql AS $$ SELECT batch::bigint $$",
    "CREATE FUNCTION dvds_browse_actor(actor text, batch int) RETURNS bigint"
    " LANGUAGE sql AS $$ SELECT batch::bigint $$",
    "CREATE FUNCTION dvds_browse_title(title text, batch int) RETURNS bigint LANGUAGE plpgsql"
    " AS $$ BEGIN IF title = 'BROKEN' THEN RAISE EXCEPTION 'broken title'; END IF;"
    " RETURN batch; END $$",
    "CREATE FUNCTION dvds_purchase(customerid int, prod_ids int[], quantities int[])"
    " RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN"
    " IF customerid < 1 OR cardinality(prod_ids) <> cardinality(quantities)"
    " OR cardinality(prod_ids) NOT BETWEEN 1 AND 10 THEN RAISE EXCEPTION 'bad cart'; END IF;"
    " IF prod_ids[1] % 4 = 0 THEN RETURN -1; END IF; RETURN nextval('orders_seq'); END $$",
    # DVD Store 3's: the searches find ``batch`` reviews, a review and a rating get 1, a
    # customer of an even id is a member already (0)
    "CREATE FUNCTION dvds_reviews_product(prod_id int, stars int, batch int) RETURNS bigint"
    " LANGUAGE sql AS $$ SELECT batch::bigint $$",
    "CREATE FUNCTION dvds_reviews_actor(actor text, stars int, batch int) RETURNS bigint"
    " LANGUAGE sql AS $$ SELECT batch::bigint $$",
    "CREATE FUNCTION dvds_reviews_title(title text, stars int, batch int) RETURNS bigint"
    " LANGUAGE sql AS $$ SELECT batch::bigint $$",
    "CREATE FUNCTION dvds_new_review(prod_id int, customerid int, stars int, summary text,"
    " body text) RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN IF stars NOT BETWEEN 1 AND 5"
    " OR customerid < 1 OR summary = '' OR body = '' THEN RAISE EXCEPTION 'bad review';"
    " END IF; RETURN 1; END $$",
    "CREATE FUNCTION dvds_new_helpfulness(review_id int, customerid int, helpfulness int)"
    " RETURNS bigint LANGUAGE sql AS $$ SELECT 1::bigint $$",
    "CREATE FUNCTION dvds_new_member(customerid int, tier int) RETURNS bigint"
    " LANGUAGE sql AS $$ SELECT CASE WHEN customerid % 2 = 0 THEN 0 ELSE customerid END $$",
]
PG_ARGS = (2, 19, 2, 2, 2, 3, 3, 3, 3, 5, 3, 2)  # each function's


def shoppers(users: int, **over) -> list:
    return [_native.DvdsTerminal(100 + i, 1000, 50_000, **{**WORDS, **over})
            for i in range(users)]


def drive(loop) -> list[int]:
    """Run the loop to its end, taking the response times whenever it asks: how many each
    row handed over."""
    handed = [0] * ROWS
    while True:
        event = loop.run()
        assert event in (_native.BOUNDARY, _native.SAMPLES, _native.FINISHED), loop.error
        samples = loop.take_samples()
        assert len(samples) == ROWS
        for row, raw in enumerate(samples):
            handed[row] += len(raw) // 8
        if event == _native.FINISHED:
            return handed


def check_counts(counts: dict, handed: list[int], headline: int) -> None:
    """What every run of the stand-ins must show, whatever the server."""
    for key in ("committed", "rolled_back", "errors", "retries", "total_us"):
        assert len(counts[key]) == ROWS, key
    c, r, e = (list(counts[k]) for k in ("committed", "rolled_back", "errors"))
    assert handed == [c[k] + r[k] for k in range(ROWS)]
    # the order: one per purchase that returned, under its window, committed or rolled back
    assert (c[ORDER], r[ORDER]) == (c[PURCHASE], r[PURCHASE])
    assert c[ORDER] > 20 and r[ORDER] > 0
    assert e[ORDER] == counts["retries"][ORDER] == 0
    assert headline >= c[ORDER]
    # an order's response time holds its login or new customer, browses and purchase
    us = counts["total_us"]
    # (the same orders and purchases: the orders' sum holds the purchases' and more)
    assert us[ORDER] > us[PURCHASE]
    # the only failures: browses for BROKEN, which abandon their orders
    assert e[TITLE] > 0 and sum(e) == e[TITLE]
    assert r[:PURCHASE] == [0] * PURCHASE
    inputs = counts["inputs"]
    assert inputs["logins"] == c[LOGIN] and inputs["unknown_logins"] == 0
    assert inputs["new_customers"] + inputs["taken_usernames"] == c[NEW_CUSTOMER]
    assert inputs["new_customers"] > 0 and inputs["taken_usernames"] > 0
    assert inputs["searches"] == c[CATEGORY] + c[ACTOR] + c[TITLE]
    assert [inputs[k] for k in ("browse_category", "browse_actor", "browse_title")] == \
        c[CATEGORY:PURCHASE]
    assert inputs["purchases"] == c[PURCHASE] + r[PURCHASE]
    assert inputs["rolled_back_purchases"] == r[PURCHASE]
    assert inputs["purchases"] <= inputs["cart_items"] <= 10 * inputs["purchases"]


def check_ds3(counts: dict, ds3: bool) -> None:
    """DVD Store 3's calls: none in a DS2 run; in a DS3 one, every kind, counted as inputs."""
    c, e = list(counts["committed"]), list(counts["errors"])
    inputs = counts["inputs"]
    if not ds3:
        assert c[R_PRODUCT:ORDER] == [0] * 6 and inputs["review_orders"] == 0
        return
    assert all(c[k] > 0 for k in range(R_PRODUCT, ORDER)), c
    assert e[R_PRODUCT:ORDER] == [0] * 6
    assert inputs["review_searches"] == sum(c[R_PRODUCT:REVIEW]) >= inputs["review_orders"] > 0
    assert [inputs[k] for k in ("reviews_product", "reviews_actor", "reviews_title")] == \
        c[R_PRODUCT:REVIEW]
    assert (inputs["new_reviews"], inputs["new_helpfulness"]) == (c[REVIEW], c[RATING])
    assert inputs["new_members"] + inputs["taken_memberships"] == c[MEMBER]
    assert inputs["new_members"] > 0 and inputs["taken_memberships"] > 0


# ------------------------------------------------------------------------------------------
# PostgreSQL

@pytest.fixture(scope="module")
def shop_pg(pg) -> str:
    import psycopg

    dsn = pg.create_db("dvds")
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in PG_FUNCTIONS:
            conn.execute(statement)
    return dsn


def pg_connection(dsn: str):
    from psycopg import pq

    conn = pq.PGconn.connect(dsn.encode())
    assert conn.status == pq.ConnStatus.OK
    for name, n in zip(_native.DVDS_NAMES, PG_ARGS):
        args = ", ".join(f"${i + 1}" for i in range(n))
        res = conn.prepare(f"dvds_{name}".encode(), f"SELECT dvds_{name}({args})".encode())
        assert res.status == pq.ExecStatus.COMMAND_OK, res.error_message
    conn.nonblocking = 1
    return conn


def pg_loop_args(conns: list, terminals: list, **over) -> dict:
    from oltplab.engines.postgres.driver import libpq_path

    now = time.monotonic_ns()
    args = dict(workload="dvds", libpq=libpq_path(), connections=conns,
                pointers=[c.pgconn_ptr for c in conns], terminals=terminals,
                names=[f"dvds_{n}" for n in _native.DVDS_NAMES], flush_sql="",
                ramp_end_ns=now + S // 5, measure_end_ns=now + 3 * S // 2, waits=False,
                flush_stats=False, idle_published_after_ns=10 * S, max_retries=0,
                max_consecutive_errors=3, retryable=[], fatal=[], bulk=2)
    return {**args, **over}


DS3 = dict(ds3=True, review_ids=1000, pct_new_reviews=30, pct_new_helpfulness=30,
           pct_new_members=30)


@pytest.mark.parametrize("waits, ds3", [(False, False), (True, False), (False, True)])
def test_postgres_counts_the_order_as_the_unit_row(shop_pg, waits, ds3):
    """bulk=2: the loop stops for its buffers every few orders, the order's row among them.
    With waits, the think time after each purchase (up to 10 ms) runs too; with ds3, DVD Store
    3's calls come between the browses and the purchase."""
    conns = [pg_connection(shop_pg) for _ in range(4)]
    try:
        loop = _native.ProcLoop(**pg_loop_args(
            conns, shoppers(4, think_time=0.005, **(DS3 if ds3 else {})), waits=waits))
        handed = drive(loop)
        check_counts(loop.counts(), handed, loop.headline)
        check_ds3(loop.counts(), ds3)
        loop.close()
    finally:
        for c in conns:
            c.finish()


def test_users_held_at_ramp_end_begin_the_window_at_go(shop_pg):
    """The server's orders fell short of the client's: the users that had crossed ramp_end
    went on at once, and their first orders committed before the manager's snapshot, which
    waits for the last user. After hold() they do nothing from their crossing until go()."""
    conns = [pg_connection(shop_pg) for _ in range(2)]
    try:
        loop = _native.ProcLoop(**pg_loop_args(conns, shoppers(2)))
        loop.hold()
        assert loop.run() == _native.BOUNDARY
        crossed = loop.completed
        answer = []
        waiting = threading.Thread(target=lambda: answer.append(loop.run()))
        waiting.start()
        time.sleep(0.3)
        assert waiting.is_alive() and loop.completed == crossed
        loop.go()
        waiting.join(5)
        assert answer == [_native.WOKEN]
        handed = drive(loop)
        assert loop.completed > crossed and loop.counts()["committed"][ORDER] > 20
        check_counts(loop.counts(), handed, loop.headline)
        loop.close()
    finally:
        for c in conns:
            c.finish()


def test_postgres_names_cover_the_calls_alone(shop_pg):
    conn = pg_connection(shop_pg)
    try:
        names = [f"dvds_{n}" for n in _native.DVDS_NAMES]
        with pytest.raises(ValueError, match=r"one name per transaction kind \(12\)"):
            _native.ProcLoop(**pg_loop_args([conn], shoppers(1), names=names + ["order"]))
        with pytest.raises(TypeError, match="DvdsTerminal"):
            _native.ProcLoop(**pg_loop_args([conn], [object()]))
        term = shoppers(1)[0]
        loop = _native.ProcLoop(**pg_loop_args([conn], [term]))
        with pytest.raises(RuntimeError, match="driven by a ProcLoop"):
            term.next_call()
        loop.close()
        assert term.next_call()[0] in ("login", "new_customer")
    finally:
        conn.finish()


# ------------------------------------------------------------------------------------------
# MariaDB

MY_PROCEDURES = [
    "CREATE PROCEDURE DVDS_LOGIN(username VARCHAR(64), password VARCHAR(64), OUT o BIGINT)"
    " SET o = CAST(SUBSTRING(username, 5) AS UNSIGNED)",
    "CREATE PROCEDURE DVDS_NEW_CUSTOMER(firstname VARCHAR(64), lastname VARCHAR(64),"
    " address1 VARCHAR(64), address2 VARCHAR(64), city VARCHAR(64), state VARCHAR(64),"
    " zip VARCHAR(9), country VARCHAR(64), region INT, email VARCHAR(64), phone VARCHAR(64),"
    " creditcardtype INT, creditcard VARCHAR(64), creditcardexpiration VARCHAR(64),"
    " username VARCHAR(64), password VARCHAR(64), age INT, income INT, gender CHAR(1),"
    " OUT o BIGINT) SET o = IF(CAST(SUBSTRING(username, 8) AS UNSIGNED) % 3 = 0, 0,"
    " CAST(SUBSTRING(username, 8) AS UNSIGNED))",
    "CREATE PROCEDURE DVDS_BROWSE_CATEGORY(category INT, batch INT, OUT o BIGINT) SET o = batch",
    "CREATE PROCEDURE DVDS_BROWSE_ACTOR(actor VARCHAR(64), batch INT, OUT o BIGINT)"
    " SET o = batch",
    "CREATE PROCEDURE DVDS_BROWSE_TITLE(title VARCHAR(64), batch INT, OUT o BIGINT) BEGIN"
    " IF title = 'BROKEN' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'broken title';"
    " END IF; SET o = batch; END",
    "CREATE PROCEDURE DVDS_PURCHASE(customerid INT, prod_ids TEXT, quantities TEXT,"
    " OUT o BIGINT) BEGIN"
    " IF customerid < 1 OR JSON_LENGTH(prod_ids) <> JSON_LENGTH(quantities)"
    " OR JSON_LENGTH(prod_ids) NOT BETWEEN 1 AND 10 THEN"
    " SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'bad cart'; END IF;"
    " SET o = IF(JSON_EXTRACT(prod_ids, '$[0]') % 4 = 0, -1, customerid); END",
    "CREATE PROCEDURE DVDS_REVIEWS_PRODUCT(prod_id INT, stars INT, batch INT, OUT o BIGINT)"
    " SET o = batch",
    "CREATE PROCEDURE DVDS_REVIEWS_ACTOR(actor VARCHAR(64), stars INT, batch INT,"
    " OUT o BIGINT) SET o = batch",
    "CREATE PROCEDURE DVDS_REVIEWS_TITLE(title VARCHAR(64), stars INT, batch INT,"
    " OUT o BIGINT) SET o = batch",
    "CREATE PROCEDURE DVDS_NEW_REVIEW(prod_id INT, customerid INT, stars INT,"
    " summary VARCHAR(64), body VARCHAR(200), OUT o BIGINT) BEGIN"
    " IF stars NOT BETWEEN 1 AND 5 OR customerid < 1 OR summary = '' OR body = '' THEN"
    " SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'bad review'; END IF; SET o = 1; END",
    "CREATE PROCEDURE DVDS_NEW_HELPFULNESS(review_id INT, customerid INT, helpfulness INT,"
    " OUT o BIGINT) SET o = 1",
    "CREATE PROCEDURE DVDS_NEW_MEMBER(customerid INT, tier INT, OUT o BIGINT)"
    " SET o = IF(customerid % 2 = 0, 0, customerid)",
]


@pytest.fixture(scope="module")
def shop_my(request) -> str:
    from oltplab.engines.mariadb import client
    from oltplab.engines.mariadb.instance import find_binary

    if find_binary("mariadbd") is None:
        pytest.skip("mariadbd is not installed (Debian: mariadb-server-core)")
    mariadb = request.getfixturevalue("mariadb")
    mariadb.ensure_database("dvds_loop")
    dsn = mariadb.dsn("dvds_loop")
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            for statement in MY_PROCEDURES:
                name = statement.split()[2].split("(")[0]
                cur.execute(f"DROP PROCEDURE IF EXISTS {name}")
                cur.execute(statement)
    finally:
        conn.close()
    return dsn


@pytest.mark.parametrize("ds3", [False, True])
def test_mariadb_counts_the_order_as_the_unit_row(shop_my, ds3):
    """The same orders as CALLs: text quoted, the cart as JSON arrays. A SIGNAL is retried
    in vain (max_retries=0), which makes it a counted error that abandons the order."""
    from oltplab.engines.common.loop import UserPlan, WorkerPlan
    from oltplab.engines.mariadb import driver

    plan = WorkerPlan(worker=0, dsn=shop_my, mode="procedures",
                      users=(UserPlan(0, 1, 1, (1,), 1),), w_max=1, constants=None,
                      engine="mariadb", workload="dvds")
    conns, loop = [driver.connect(plan) for _ in range(4)], None
    try:
        now = time.monotonic_ns()
        loop = _native.MariaDBLoop(
            workload="dvds", connections=conns, terminals=shoppers(4, **(DS3 if ds3 else {})),
            ramp_end_ns=now + S // 5,
            measure_end_ns=now + 3 * S // 2, waits=False, max_retries=0,
            max_consecutive_errors=3, retryable=[1644], lost=[2006, 2013], bulk=2)
        handed = drive(loop)
        check_counts(loop.counts(), handed, loop.headline)
        check_ds3(loop.counts(), ds3)
    finally:
        if loop is not None:
            loop.close()  # the loop lets the connections go
        for c in conns:
            c.close()

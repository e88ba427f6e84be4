"""The DVD-Store-derived build on a real managed MariaDB: a 10MB database, its record, its
procedures (login, new customer, the three browses, purchase and its rollback, the restock
rule), its checks, and the run monitor's count of orders.

The tests share one 10MB build and run in file order: the build's own figures first, then
each procedure changes the database, and the checks after them must still hold. Tests of
rebuilding and refusing use small databases of their own.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from oltplab import __version__, _native
from oltplab.config import RunSpec
from oltplab.engines import get
from oltplab.engines.mariadb import client
from oltplab.engines.mariadb.dvds import DIALECT
from oltplab.engines.mariadb.dvds.checks import run_checks
from oltplab.engines.mariadb.dvds.loader import SHORTEST_WORD, build
from oltplab.engines.mariadb.dvds.schema import PROCEDURES, has_run, schema_info, sql_text
from oltplab.engines.mariadb.bulk import procedure_statements
from oltplab.engines.mariadb.instance import find_binary
from oltplab.engines.mariadb.monitor import Monitor
from oltplab.errors import SchemaError
from oltplab.workloads.dvds import words
from oltplab.workloads.dvds.build import DvdsBuildSpec
from oltplab.workloads.dvds.params import DvdsParams
from oltplab.workloads.dvds.schema import DvdsSchema
from oltplab.workloads.dvds.sizes import parse_size

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")

SEED = 2024
SIZE = parse_size("10MB")
TABLES = ("customers", "orders", "orderlines", "cust_hist", "products", "inventory",
          "categories", "reorder")


class Db:
    """One session on a database, kept for the module's tests (connecting is the slow part)."""

    def __init__(self, dsn: str):
        self.dsn = dsn
        self.conn = client.connect(dsn)

    def q(self, *statements: str) -> list:
        """Run the statements; the rows of the last."""
        with self.conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement)
            return list(cur.fetchall())

    def val(self, *statements: str):
        return self.q(*statements)[0][0]

    def call(self, text: str):
        """``CALL NAME(args..., @o)`` as the users send it: the OUT argument's value."""
        return self.val(f"CALL {text[:-1]}, @o)", "SELECT @o")

    def counts(self) -> dict[str, int]:
        row = self.q("SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {t})" for t in TABLES))[0]
        return dict(zip(TABLES, row))

    def failing(self) -> dict[str, int]:
        return {r.name: r.violations for r in run_checks(self.dsn) if not r.ok}

    def no_restock(self, statement: str) -> None:
        """Run an INVENTORY update without the restock trigger (it would restock a low
        stock): MariaDB cannot switch a trigger off, so it is dropped and made again."""
        [trigger] = [s for s in procedure_statements(sql_text("procedures"))
                     if s.startswith("CREATE TRIGGER")]
        self.q("DROP TRIGGER inventory_restock", statement, trigger)

    def close(self) -> None:
        self.conn.close()


def new_db(mariadb, name: str) -> Db:
    mariadb.ensure_database(name)
    return Db(mariadb.dsn(name))


@pytest.fixture(scope="module")
def built(mariadb):
    """The 10MB build (two loading processes) and its summary, which the tests change in order."""
    db = new_db(mariadb, "dvds")
    summary = build(db.dsn, DvdsBuildSpec(size=SIZE, build_users=2, seed=SEED, force=True))
    yield db, summary
    db.close()


def test_row_counts_and_record(built):
    db, summary = built
    found = db.counts()
    lines = found.pop("orderlines")
    assert (SIZE.customers, SIZE.orders, SIZE.products) == (20_000, 12_000, 10_000)
    assert found == dict(customers=SIZE.customers, orders=SIZE.orders, cust_hist=lines,
                         products=SIZE.products, inventory=SIZE.products,
                         categories=len(words.CATEGORIES), reorder=0)
    assert SIZE.orders <= lines <= 9 * SIZE.orders  # 1..9 lines an order
    assert summary["rows"] == {**found, "orderlines": lines}
    assert summary["seconds"] > 0 and (summary["size"], summary["seed"], summary["build_users"],
                                       *summary["phases"]) == (
        "10MB", SEED, 2, "tables", "load", "indexes_and_analyze")
    [meta] = db.q("SELECT size, customers, products, orders_per_month, orders, max_orderid,"
                  " build_sales, seed, build_users, oltplab_version, build_seconds"
                  " FROM dvds_meta")
    assert meta[:9] == ("10MB", 20_000, 10_000, 1_000, 12_000, 12_000, summary["build_sales"],
                        SEED, 2)
    assert meta[9] == __version__ and meta[10] > 0
    assert summary["build_sales"] == db.val("SELECT SUM(sales) FROM inventory") == db.val(
        "SELECT SUM(quantity) FROM orderlines")
    # the generator's rows: username user<id>, password 'password', NULL where abroad
    assert db.q("SELECT customerid, username, password FROM customers"
                " WHERE customerid IN (1, 20000) ORDER BY 1") == [
        (1, "user1", "password"), (20_000, "user20000", "password")]
    abroad = db.val("SELECT COUNT(*) FROM customers WHERE region = 2")
    assert db.val("SELECT COUNT(*) FROM customers WHERE region = 2 AND state IS NULL"
                  " AND zip IS NULL") == abroad > 0


def test_schema_info_and_the_checks_of_the_build(built):
    db, _ = built
    info = schema_info(db.dsn)
    assert info == DvdsSchema(size="10MB", customers=20_000, products=10_000, orders=12_000,
                              functions_installed=True)
    assert get("mariadb").schema_info(db.dsn, "dvds") == DIALECT.schema_info(db.dsn) == info
    assert not has_run(db.dsn)
    results = run_checks(db.dsn)
    assert [r.name for r in results] == [f"DS{k}" for k in range(1, 7)]
    assert all(r.ok and r.violations == 0 and r.sample == [] and r.description
               for r in results), results
    # the TPC-C side says, in one line, what the database holds instead
    with pytest.raises(SchemaError, match="holds the DVD-Store-derived schema"):
        get("mariadb").schema_info(db.dsn, "tpcc")


def test_keys_indexes_and_procedures(built):
    db, _ = built
    indexes = {r[0] for r in db.q("SELECT DISTINCT index_name FROM information_schema.statistics"
                                  " WHERE table_schema = DATABASE()")}
    assert {"PRIMARY", "customers_username", "customers_login", "orders_customer",
            "cust_hist_customer", "products_actor_text", "products_title_text",
            "products_category", "products_special", "products_category_special",
            "reorder_product"} <= indexes
    fulltext = {r[0] for r in db.q("SELECT index_name FROM information_schema.statistics"
                                   " WHERE table_schema = DATABASE()"
                                   " AND index_type = 'FULLTEXT'")}
    assert fulltext == {"products_actor_text", "products_title_text"}
    fks = {r[0] for r in db.q("SELECT constraint_name FROM information_schema"
                              ".referential_constraints WHERE constraint_schema = DATABASE()")}
    assert fks == {"orders_customer_fkey", "orderlines_order_fkey"}
    engines = {r[0] for r in db.q("SELECT engine FROM information_schema.tables"
                                  " WHERE table_schema = DATABASE()")}
    assert engines == {"InnoDB"}
    # the names the users' C loop calls, with the arguments it sends and an OUT bigint last
    assert PROCEDURES == _native.DVDS_PROCEDURES == DIALECT.procedures
    params = {name: [] for name in PROCEDURES}
    for name, mode, kind in db.q("SELECT specific_name, parameter_mode, data_type"
                                 " FROM information_schema.parameters"
                                 " WHERE specific_schema = DATABASE()"
                                 " AND routine_type = 'PROCEDURE' ORDER BY ordinal_position"):
        params.setdefault(name, []).append((mode, kind))
    assert {name: len(params[name]) for name in PROCEDURES} == {
        "DVDS_LOGIN": 3, "DVDS_NEW_CUSTOMER": 20, "DVDS_BROWSE_CATEGORY": 3,
        "DVDS_BROWSE_ACTOR": 3, "DVDS_BROWSE_TITLE": 3, "DVDS_PURCHASE": 4,
        "DVDS_REVIEWS_PRODUCT": 4, "DVDS_REVIEWS_ACTOR": 4, "DVDS_REVIEWS_TITLE": 4,
        "DVDS_NEW_REVIEW": 6, "DVDS_NEW_HELPFULNESS": 4, "DVDS_NEW_MEMBER": 3}
    assert all(params[name][-1] == ("OUT", "bigint") for name in PROCEDURES)
    assert all(mode == "IN" for name in PROCEDURES for mode, _ in params[name][:-1])


def test_login(built):
    db, _ = built
    assert db.call("DVDS_LOGIN('user5','password')") == 5
    assert db.call("DVDS_LOGIN('user20000','password')") == 20_000
    assert db.call("DVDS_LOGIN('user5','wrong')") == 0
    assert db.call("DVDS_LOGIN('user20001','password')") == 0
    assert db.call("DVDS_LOGIN('USER5','password')") == 0  # bytes, as on PostgreSQL


def test_browse_category(built):
    db, _ = built
    specials = dict(db.q("SELECT category, COUNT(*) FROM products WHERE special = 1"
                         " GROUP BY category"))
    for category in range(1, 17):
        for batch in (1, 5, 9):
            found = db.call(f"DVDS_BROWSE_CATEGORY({category},{batch})")
            assert found == min(batch, specials.get(category, 0)) <= batch
    assert db.call("DVDS_BROWSE_CATEGORY(17,5)") == 0


def test_browse_actor(built):
    db, _ = built
    actor = db.val("SELECT actor FROM products WHERE prod_id = 77")
    n = db.val(f"SELECT COUNT(*) FROM products WHERE actor = '{actor}'")
    assert db.call(f"DVDS_BROWSE_ACTOR('{actor}',9)") == min(9, n) >= 1
    assert db.call(f"DVDS_BROWSE_ACTOR('{actor.lower()}',1)") == 1
    last = actor.split()[1]
    with_last = db.val(f"SELECT COUNT(*) FROM products WHERE actor LIKE '% {last}'")
    assert db.call(f"DVDS_BROWSE_ACTOR('{last}',9)") == min(9, with_last) >= 1
    # every word is required
    assert db.call("DVDS_BROWSE_ACTOR('NOSUCHACTORWORD',5)") == 0
    assert db.call(f"DVDS_BROWSE_ACTOR('{actor} NOSUCHACTORWORD',5)") == 0
    assert db.call("DVDS_BROWSE_ACTOR('',5)") == 0
    assert db.call("DVDS_BROWSE_ACTOR('-+*()~<>@',5)") == 0  # no operator gets through


def test_browse_title_finds_the_shortest_words_too(built):
    db, _ = built
    word = db.val("SELECT SUBSTRING_INDEX(title, ' ', -1) FROM products WHERE prod_id = 123")
    n = db.val(f"SELECT COUNT(*) FROM products WHERE CONCAT(' ', title, ' ') LIKE '% {word} %'")
    assert db.call(f"DVDS_BROWSE_TITLE('{word}',9)") == min(9, n) >= 1
    assert db.call("DVDS_BROWSE_TITLE('NOSUCHTITLEWORD',5)") == 0
    # the catalogue's shortest words (innodb_ft_min_token_size: 3 letters) are indexed
    short = min(words.ACTOR_FIRST, key=len)
    assert len(short) == SHORTEST_WORD == 3
    n = db.val(f"SELECT COUNT(*) FROM products WHERE actor LIKE '{short} %'")
    assert db.call(f"DVDS_BROWSE_ACTOR('{short}',9)") == min(9, n) >= 1


NEW = ("DVDS_NEW_CUSTOMER('ANNA','SMITH','12 MAIN ST','','SPRINGFIELD','IL','62701','US',1,"
       "'ANNA@example.com','5551234567',2,'4111111111111111','2027/01','{name}','password',33,"
       "40000,'F')")


def test_new_customer(built):
    db, _ = built
    assert db.call(NEW.format(name="newuser77")) == 20_001
    assert db.call(NEW.format(name="newuser77")) == 0
    assert db.call(NEW.format(name="user3")) == 0
    assert db.call(NEW.format(name="newuser78")) > 20_001
    [row] = db.q("SELECT address2, state, zip, region FROM customers"
                 " WHERE username = 'newuser77'")
    assert row == (None, "IL", "62701", 1)
    assert db.val("SELECT COUNT(*) FROM customers") == 20_002
    assert db.call("DVDS_LOGIN('newuser77','password')") == 20_001
    assert has_run(db.dsn)


def test_purchase(built):
    db, _ = built
    db.no_restock("UPDATE inventory SET quan_in_stock = 100 WHERE prod_id IN (1, 2)")
    before = dict(db.q("SELECT prod_id, sales FROM inventory WHERE prod_id IN (1, 2)"))
    order = db.call("DVDS_PURCHASE(7,'[2,1,2]','[1,3,2]')")
    assert order == 12_001
    stock = dict(db.q("SELECT prod_id, quan_in_stock FROM inventory WHERE prod_id < 3"))
    sales = dict(db.q("SELECT prod_id, sales FROM inventory WHERE prod_id < 3"))
    assert stock == {1: 97, 2: 97} and sales == {1: before[1] + 3, 2: before[2] + 3}
    lines = db.q("SELECT orderlineid, prod_id, quantity FROM orderlines WHERE orderid = 12001"
                 " ORDER BY orderlineid")
    assert lines == [(1, 2, 1), (2, 1, 3), (3, 2, 2)]
    hist = sorted(db.q("SELECT customerid, prod_id FROM cust_hist WHERE orderid = 12001"))
    assert hist == [(7, 1), (7, 2), (7, 2)]
    price = dict(db.q("SELECT prod_id, price FROM products WHERE prod_id < 3"))
    net = 3 * price[1] + 3 * price[2]
    [(customer, netamount, tax, total, today)] = db.q(
        "SELECT customerid, netamount, tax, totalamount, orderdate = CURDATE() FROM orders"
        " WHERE orderid = 12001")
    assert customer == 7 and netamount == net and today
    assert tax == (net * Decimal("0.0825")).quantize(Decimal("0.01"))
    assert total == netamount + tax


def test_purchase_rolls_back_on_short_stock(built):
    db, _ = built
    db.no_restock("UPDATE inventory SET quan_in_stock = 1 WHERE prod_id = 9")
    db.no_restock("UPDATE inventory SET quan_in_stock = 4 WHERE prod_id = 8")
    before = db.counts()
    top = db.val("SELECT MAX(orderid) FROM orders")
    inventory = "SELECT prod_id, quan_in_stock, sales FROM inventory WHERE prod_id IN (8, 9, 10)"
    stock = db.q(inventory)
    assert db.call("DVDS_PURCHASE(7,'[9]','[3]')") == -1
    assert db.call("DVDS_PURCHASE(7,'[10,9]','[1,3]')") == -1
    assert db.call("DVDS_PURCHASE(7,'[8,8]','[2,3]')") == -1  # 5 of 4 in all
    assert db.counts() == before and db.q(inventory) == stock
    assert db.val("SELECT MAX(orderid) FROM orders") == top


def test_a_bad_cart_is_an_error(built):
    db, _ = built
    top = db.val("SELECT MAX(orderid) FROM orders")
    with pytest.raises(client.Error, match="not in the inventory"):
        db.call("DVDS_PURCHASE(7,'[1,10001]','[1,1]')")
    for cart in ("'[1]','[0]'", "'[]','[]'", "'[1,2]','[1]'"):
        with pytest.raises(client.Error, match="positive quantity"):
            db.call(f"DVDS_PURCHASE(7,{cart})")
    assert db.val("SELECT MAX(orderid) FROM orders") == top


def test_restock(built):
    db, _ = built
    db.no_restock("UPDATE inventory SET quan_in_stock = 4 WHERE prod_id IN (5, 10000)")
    top = db.val("SELECT MAX(orderid) FROM orders")
    assert db.call("DVDS_PURCHASE(3,'[5,10000]','[2,3]')") == top + 1
    stock = dict(db.q("SELECT prod_id, quan_in_stock FROM inventory"
                      " WHERE prod_id IN (5, 10000)"))
    assert stock == {5: 250, 10000: 2500}
    reorders = {r[0]: r[1:] for r in db.q("SELECT prod_id, quan_low, quan_reordered FROM reorder")}
    assert reorders == {5: (2, 248), 10000: (1, 2499)}
    assert db.val("SELECT MIN(date_low = CURDATE() AND date_reordered = date_low"
                  " AND date_expected = date_low + INTERVAL 7 DAY) FROM reorder") == 1
    # a purchase that leaves 3 or more does not restock, nor does a change of the sales alone
    assert db.call("DVDS_PURCHASE(3,'[5]','[3]')") == top + 2
    assert db.val("SELECT quan_in_stock FROM inventory WHERE prod_id = 5") == 247
    db.no_restock("UPDATE inventory SET quan_in_stock = 1 WHERE prod_id = 6")
    db.q("UPDATE inventory SET sales = sales + 0 WHERE prod_id = 6")
    assert db.val("SELECT quan_in_stock FROM inventory WHERE prod_id = 6") == 1
    db.no_restock("UPDATE inventory SET quan_in_stock = 500 WHERE prod_id = 6")
    assert db.val("SELECT COUNT(*) FROM reorder") == 2
    assert db.failing() == {}


def test_the_monitor_counts_committed_orders(built):
    """A dvds run's server unit: the orders added since the run began (rolled-back purchases
    add none); the precheck finds the six procedures; TPC-C's monitor is the default."""
    db, _ = built
    assert Monitor(db.dsn).dialect is get("mariadb").dialect_for("tpcc")
    monitor = get("mariadb").monitor(db.dsn, workload="dvds")
    try:
        assert monitor.dialect is DIALECT
        db.call("DVDS_PURCHASE(4,'[11]','[1]')")  # before the run: not counted
        monitor.precheck(RunSpec(users=(2,), workload="dvds"))
        start = monitor.snapshot()
        assert start.new_orders == 0
        db.no_restock("UPDATE inventory SET quan_in_stock = 0 WHERE prod_id = 13")
        for cart in ("'[11]','[1]'", "'[12,11]','[2,1]'", "'[13]','[1]'", "'[12]','[1]'"):
            db.call(f"DVDS_PURCHASE(4,{cart})")
        end = monitor.snapshot()
        assert end.new_orders == 3 and end.xacts > start.xacts
    finally:
        monitor.close()
    db.no_restock("UPDATE inventory SET quan_in_stock = 13 WHERE prod_id = 13")
    db.q("DROP PROCEDURE DVDS_BROWSE_TITLE")
    try:
        monitor = get("mariadb").monitor(db.dsn, workload="dvds")
        with pytest.raises(SchemaError, match="DVDS_BROWSE_TITLE are missing.*oltplab dvds "
                                              "build --force"):
            monitor.precheck(RunSpec(users=(2,), workload="dvds"))
        monitor.close()
        assert not schema_info(db.dsn).functions_installed
    finally:
        db.q(*[s for s in procedure_statements(sql_text("procedures"))
               if "PROCEDURE DVDS_BROWSE_TITLE" in s])
    assert schema_info(db.dsn).functions_installed


def test_a_build_without_ds3s_procedures_serves_a_ds2_run(built):
    """A build older than DVD Store 3's parts has DS2's six procedures alone: the precheck of
    a DS2 run passes, a DS3 run's names the six it lacks."""
    db, _ = built
    ds3 = [s for s in procedure_statements(sql_text("procedures"))
           if any(f"PROCEDURE {name}(" in s for name in PROCEDURES[6:])]
    assert len(ds3) == 6
    db.q(*(f"DROP PROCEDURE {name}" for name in PROCEDURES[6:]))
    monitor = get("mariadb").monitor(db.dsn, workload="dvds")
    try:
        monitor.precheck(RunSpec(users=(2,), workload="dvds", params=DvdsParams()))
        with pytest.raises(SchemaError, match=", ".join(sorted(PROCEDURES[6:]))):
            monitor.precheck(RunSpec(users=(2,), workload="dvds", params=DvdsParams(ds3=True)))
    finally:
        monitor.close()
        db.q(*ds3)
    assert schema_info(db.dsn).functions_installed


def test_checks_after_purchases_and_after_damage(built):
    db, _ = built
    db.no_restock("UPDATE inventory SET quan_in_stock = 500")
    top = db.val("SELECT MAX(orderid) FROM orders")
    for k in range(1, 21):
        cart = ",".join(str(k * 37 % 10_000 + j) for j in range(1, 1 + k % 5 + 1))
        qty = ",".join("2" for _ in range(1, 1 + k % 5 + 1))
        assert db.call(f"DVDS_PURCHASE({k},'[{cart}]','[{qty}]')") > top
    assert db.val("SELECT MAX(orderid) FROM orders") == top + 20
    assert db.failing() == {}

    damaged = top + 5
    db.q(f"UPDATE orders SET netamount = netamount + 1 WHERE orderid = {damaged}")
    assert db.failing() == {"DS3": 1}
    db.q(f"UPDATE orders SET netamount = netamount - 1 WHERE orderid = {damaged}")
    db.q("UPDATE orders SET netamount = netamount + 1 WHERE orderid = 5")  # loaded: random
    assert db.failing() == {}
    db.q("UPDATE inventory SET sales = sales + 1 WHERE prod_id = 1")
    assert db.failing() == {"DS4": 1, "DS5": 1}
    db.q("UPDATE inventory SET sales = sales - 1 WHERE prod_id = 1")
    db.q(f"DELETE FROM cust_hist WHERE orderid = {top + 3} LIMIT 1")
    assert db.failing() == {"DS2": 1}
    db.q("INSERT INTO cust_hist VALUES (1, 999999, 1)")  # a history row without an order
    assert db.failing() == {"DS2": 2}
    db.no_restock("UPDATE inventory SET quan_in_stock = -2 WHERE prod_id = 3")
    assert db.failing() == {"DS2": 2, "DS6": 1}
    db.q("DELETE FROM orderlines WHERE orderid = 100")
    result = db.failing()
    assert result["DS1"] == 1 and result["DS4"] >= 1 and "DS5" not in result
    bad = {r.name: r for r in run_checks(db.dsn)}["DS1"]
    assert not bad.ok and bad.sample == ["orderid=100 lines=0 max_orderlineid=None"]


def test_an_existing_schema_is_rebuilt_only_when_forced_with_the_same_rows(mariadb):
    """A seeded build holds the same rows whatever the number of loading processes."""
    db = new_db(mariadb, "dvds_small")
    small = parse_size("1MB")
    build(db.dsn, DvdsBuildSpec(size=small, build_users=3, seed=1))
    sums = db.q(f"CHECKSUM TABLE {', '.join(TABLES)}")
    with pytest.raises(SchemaError, match="already holds a DVD-Store-derived schema.*--force"):
        build(db.dsn, DvdsBuildSpec(size=small, seed=1))
    summary = build(db.dsn, DvdsBuildSpec(size=small, build_users=1, seed=1, force=True))
    assert db.counts()["customers"] == 2_000 == summary["rows"]["customers"]
    assert db.q(f"CHECKSUM TABLE {', '.join(TABLES)}") == sums
    assert schema_info(db.dsn).size == "1MB"
    db.q("DELETE FROM dvds_meta")
    with pytest.raises(SchemaError, match="incomplete"):
        schema_info(db.dsn)
    with pytest.raises(SchemaError, match="no DVD-Store-derived schema"):
        run_checks(db.dsn)
    db.close()


def test_a_tpcc_database_is_refused_and_an_empty_one_has_no_schema(mariadb):
    db = new_db(mariadb, "dvds_tpcc")
    db.q("CREATE TABLE IF NOT EXISTS warehouse (w_id int)",
         "CREATE TABLE IF NOT EXISTS orders (o_id int)")
    with pytest.raises(SchemaError, match="holds the TPC-C-derived schema"):
        build(db.dsn, DvdsBuildSpec(size=SIZE, force=True))
    with pytest.raises(SchemaError, match="holds the TPC-C-derived schema"):
        schema_info(db.dsn)
    assert db.val("SELECT COUNT(*) FROM information_schema.tables"
                  " WHERE table_schema = DATABASE() AND table_name = 'orders'") == 1
    db.close()
    empty = new_db(mariadb, "dvds_empty").dsn
    with pytest.raises(SchemaError, match="no DVD-Store-derived schema"):
        schema_info(empty)
    with pytest.raises(SchemaError, match="no DVD-Store-derived schema"):
        run_checks(empty)
    with pytest.raises(SchemaError, match="no TPC-C schema"):
        get("mariadb").schema_info(empty, "tpcc")

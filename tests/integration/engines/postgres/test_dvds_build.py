"""The DVD-Store-derived build on PostgreSQL: a 10MB database, its record, its functions (login,
new customer, the three browses, purchase and its rollback, the restock rule) and its checks."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from types import SimpleNamespace

import asyncpg
import pytest

from oltplab import __version__, _native
from oltplab.engines.postgres.dvds import DIALECT
from oltplab.engines.postgres.dvds.checks import run_checks
from oltplab.engines.postgres.dvds.loader import build
from oltplab.engines.postgres.dvds.schema import has_run, schema_info
from oltplab.engines.postgres.dvds.transactions import DS3_CALLS, KIND_NAMES, prepared
from oltplab.errors import SchemaError
from oltplab.workloads.dvds.build import DvdsBuildSpec
from oltplab.workloads.dvds.params import DvdsParams
from oltplab.workloads.dvds.schema import FUNCTIONS, DvdsSchema
from oltplab.workloads.dvds.sizes import parse_size

SEED = 2024
SIZE = parse_size("10MB")


def q(dsn: str, *statements: str) -> list:
    """Run the statements in one session; the rows of the last."""
    async def go():
        conn = await asyncpg.connect(dsn)
        try:
            rows = []
            for statement in statements:
                rows = await conn.fetch(statement)
            return rows
        finally:
            await conn.close()

    return asyncio.run(go())


def val(dsn: str, *statements: str):
    return q(dsn, *statements)[0][0]


def counts(dsn: str) -> dict[str, int]:
    tables = ("customers", "orders", "orderlines", "cust_hist", "products", "inventory",
              "categories", "reorder")
    row = q(dsn, "SELECT " + ", ".join(f"(SELECT count(*) FROM {t}) AS {t}" for t in tables))[0]
    return dict(row)


def failing(dsn: str) -> dict[str, int]:
    return {r.name: r.violations for r in run_checks(dsn) if not r.ok}


@pytest.fixture(scope="module")
def built(pg) -> tuple[str, dict]:
    """A pristine 10MB build (two loading processes) and its summary; tests must not change it."""
    dsn = pg.create_db("dvds")
    summary = build(dsn, DvdsBuildSpec(size=SIZE, build_users=2, seed=SEED))
    return dsn, summary


@pytest.fixture
def scratch(pg, built) -> str:
    """A private copy of the 10MB build that a test may change."""
    template = built[0].split("?")[0].rsplit("/", 1)[1]
    return pg.create_db("dvdss", template=template)


def no_restock(dsn: str, statement: str) -> None:
    """Run an INVENTORY update with the restock trigger off (it would restock a low stock)."""
    q(dsn, "ALTER TABLE inventory DISABLE TRIGGER inventory_restock", statement,
      "ALTER TABLE inventory ENABLE TRIGGER inventory_restock")


def test_row_counts(built):
    dsn, summary = built
    found = counts(dsn)
    assert {k: v for k, v in found.items() if k not in ("orderlines", "cust_hist")} == {
        "customers": 20_000, "orders": 12_000, "products": 10_000, "inventory": 10_000,
        "categories": 16, "reorder": 0}
    assert found["orderlines"] == found["cust_hist"]
    assert 12_000 <= found["orderlines"] <= 108_000
    assert summary["rows"] == found
    assert (summary["size"], summary["seed"], summary["build_users"]) == ("10MB", SEED, 2)
    assert summary["seconds"] > 0 and set(summary["phases"]) == {
        "tables", "load", "indexes_and_analyze"}


def test_build_record(built):
    dsn, summary = built
    meta = dict(q(dsn, "SELECT * FROM dvds_meta")[0])
    assert meta["size"] == "10MB" and meta["customers"] == 20_000 and meta["products"] == 10_000
    assert meta["orders_per_month"] == 1_000 and meta["orders"] == meta["max_orderid"] == 12_000
    assert (meta["build_sales"] == summary["build_sales"]
            == val(dsn, "SELECT sum(sales) FROM inventory")
            == val(dsn, "SELECT sum(quantity) FROM orderlines"))
    assert meta["seed"] == SEED and meta["build_users"] == 2
    assert meta["oltplab_version"] == __version__ and meta["build_seconds"] > 0
    assert val(dsn, "SELECT count(*) FROM dvds_meta") == 1


def test_schema_info(built):
    dsn, _ = built
    info = schema_info(dsn)
    assert info == DvdsSchema(size="10MB", customers=20_000, products=10_000, orders=12_000,
                              functions_installed=True)
    assert DIALECT.schema_info(dsn) == info
    assert not has_run(dsn)


def test_checks_pass_after_the_build(built):
    results = run_checks(built[0])
    assert [r.name for r in results] == [f"DS{k}" for k in range(1, 7)]
    assert all(r.ok and r.violations == 0 and r.sample == [] and r.description
               for r in results), results


def test_keys_indexes_and_autovacuum(built):
    dsn, _ = built
    indexes = {r[0] for r in q(dsn, "SELECT indexname FROM pg_indexes"
                                    " WHERE schemaname = 'public'")}
    assert {"customers_pkey", "customers_username", "orders_pkey", "orders_customer",
            "orderlines_order", "cust_hist_customer", "products_pkey", "products_actor_text",
            "products_title_text", "products_category_special", "inventory_pkey",
            "categories_pkey", "reorder_product"} <= indexes
    fks = {r[0] for r in q(dsn, "SELECT conname FROM pg_constraint WHERE contype = 'f'")}
    assert fks == {"orders_customer_fkey", "orderlines_order_fkey"}
    options = dict(q(dsn, "SELECT relname, reloptions FROM pg_class"
                          " WHERE relname IN ('inventory', 'customers')"))
    assert options["inventory"] == ["fillfactor=85"] and options["customers"] is None


def test_the_same_seed_gives_the_same_rows_with_one_process(pg, built):
    dsn = pg.create_db("dvds1")
    build(dsn, DvdsBuildSpec(size=SIZE, build_users=1, seed=SEED))
    digest = ("SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM {} t")
    for table in ("customers", "orders", "orderlines", "cust_hist", "products", "inventory"):
        assert val(dsn, digest.format(table)) == val(built[0], digest.format(table)), table


def test_an_existing_schema_is_rebuilt_only_when_forced(scratch):
    with pytest.raises(SchemaError, match="already holds a DVD-Store-derived schema.*--force"):
        build(scratch, DvdsBuildSpec(size=parse_size("1MB"), seed=1))
    summary = build(scratch, DvdsBuildSpec(size=parse_size("1MB"), build_users=3, seed=1,
                                           force=True))
    assert counts(scratch)["customers"] == 2_000 == summary["rows"]["customers"]
    assert schema_info(scratch).size == "1MB"


def test_a_tpcc_database_is_refused(pg):
    dsn = pg.create_db("dvdst")
    q(dsn, "CREATE TABLE warehouse (w_id int)", "CREATE TABLE orders (o_id int)")
    with pytest.raises(SchemaError, match="holds the TPC-C-derived schema"):
        build(dsn, DvdsBuildSpec(size=SIZE, force=True))
    with pytest.raises(SchemaError, match="holds the TPC-C-derived schema"):
        schema_info(dsn)
    assert val(dsn, "SELECT to_regclass('orders') IS NOT NULL")


def test_no_schema(pg):
    dsn = pg.create_db("dvdse")
    with pytest.raises(SchemaError, match="no DVD-Store-derived schema"):
        schema_info(dsn)
    with pytest.raises(SchemaError, match="no DVD-Store-derived schema"):
        run_checks(dsn)


def test_an_unfinished_build_is_incomplete(scratch):
    q(scratch, "DELETE FROM dvds_meta")
    with pytest.raises(SchemaError, match="incomplete"):
        schema_info(scratch)


def test_prepared_statements(built):
    assert list(KIND_NAMES) == list(FUNCTIONS) == [
        "dvds_login", "dvds_new_customer", "dvds_browse_category", "dvds_browse_actor",
        "dvds_browse_title", "dvds_purchase", "dvds_reviews_product", "dvds_reviews_actor",
        "dvds_reviews_title", "dvds_new_review", "dvds_new_helpfulness", "dvds_new_member"]
    ds3_run = SimpleNamespace(params=DvdsParams(ds3=True))
    statements = prepared("procedures", ds3_run)
    assert [name for name, _ in statements] == list(FUNCTIONS)
    # a DS2 run prepares DS2's six functions alone (an older build has no others)
    assert [name for name, _ in prepared("procedures")] == list(FUNCTIONS[:6])
    assert statements[0][1] == "SELECT dvds_login($1, $2)"
    assert statements[5][1] == "SELECT dvds_purchase($1, $2, $3)"
    assert statements[1][1].endswith("$18, $19)")
    sql = prepared("sql")  # the statements of --mode sql, by the names the C loop sends
    ds3 = [name for name in _native.DVDS_SQL_STATEMENTS if name.split(".")[0] in DS3_CALLS]
    assert len(ds3) == 6 and [name for name, _ in sql] == [
        name for name in _native.DVDS_SQL_STATEMENTS if name not in ds3]  # a DS2 run's
    assert dict(sql)["login.customer"].count("$") == 2
    statements = statements + sql

    async def go():  # the server takes each call, with text parameters
        conn = await asyncpg.connect(built[0])
        try:
            for _, text in statements:
                await conn.prepare(text)
            return await conn.fetchval("SELECT to_regprocedure($1) IS NOT NULL", DIALECT.signature)
        finally:
            await conn.close()

    assert asyncio.run(go())


def test_login(built):
    dsn, _ = built
    assert val(dsn, "SELECT dvds_login('user5', 'password')") == 5
    assert val(dsn, "SELECT dvds_login('user20000', 'password')") == 20_000
    assert val(dsn, "SELECT dvds_login('user5', 'wrong')") == 0
    assert val(dsn, "SELECT dvds_login('user20001', 'password')") == 0


NEW = ("SELECT dvds_new_customer('ANNA', 'SMITH', '12 MAIN ST', '', 'SPRINGFIELD', 'IL', "
       "'62701', 'US', '1', 'ANNA@example.com', '5551234567', '2', '4111111111111111', "
       "'2027/01', '{name}', 'password', '33', '40000', 'F')")


def test_new_customer(scratch):
    assert val(scratch, NEW.format(name="newuser77")) == 20_001
    assert val(scratch, NEW.format(name="newuser77")) == 0
    assert val(scratch, NEW.format(name="user3")) == 0
    assert val(scratch, NEW.format(name="newuser78")) > 20_001
    row = q(scratch, "SELECT * FROM customers WHERE username = 'newuser77'")[0]
    assert row["address2"] is None and row["state"] == "IL" and row["region"] == 1
    assert val(scratch, "SELECT count(*) FROM customers") == 20_002
    assert val(scratch, "SELECT dvds_login('newuser77', 'password')") == 20_001
    assert has_run(scratch)


def test_browse_category(built):
    dsn, _ = built
    specials = dict(q(dsn, "SELECT category, count(*) FROM products WHERE special = 1"
                           " GROUP BY category"))
    for category in range(1, 17):
        for batch in (1, 5, 9):
            found = val(dsn, f"SELECT dvds_browse_category({category}, {batch})")
            assert found == min(batch, specials.get(category, 0)) <= batch
    assert val(dsn, "SELECT dvds_browse_category(17, 5)") == 0


def test_browse_actor(built):
    dsn, _ = built
    actor = val(dsn, "SELECT actor FROM products WHERE prod_id = 77")
    n = val(dsn, f"SELECT count(*) FROM products WHERE actor = '{actor}'")
    assert val(dsn, f"SELECT dvds_browse_actor('{actor}', 9)") == min(9, n) >= 1
    assert val(dsn, f"SELECT dvds_browse_actor('{actor.lower()}', 1)") == 1
    assert val(dsn, f"SELECT dvds_browse_actor('{actor.split()[1]}', 5)") >= 1
    assert val(dsn, "SELECT dvds_browse_actor('NOSUCHACTORWORD', 5)") == 0
    assert val(dsn, f"SELECT dvds_browse_actor('{actor} NOSUCHACTORWORD', 5)") == 0
    assert val(dsn, "SELECT dvds_browse_actor('', 5)") == 0


def test_browse_title(built):
    dsn, _ = built
    word = val(dsn, "SELECT split_part(title, ' ', 2) FROM products WHERE prod_id = 123")
    n = val(dsn, f"SELECT count(*) FROM products WHERE ' ' || title || ' ' LIKE '% {word} %'")
    assert val(dsn, f"SELECT dvds_browse_title('{word}', 9)") == min(9, n) >= 1
    assert val(dsn, "SELECT dvds_browse_title('NOSUCHTITLEWORD', 5)") == 0


def test_purchase(scratch):
    no_restock(scratch, "UPDATE inventory SET quan_in_stock = 100 WHERE prod_id IN (1, 2)")
    before = dict(q(scratch, "SELECT prod_id, sales FROM inventory WHERE prod_id IN (1, 2)"))
    order = val(scratch, "SELECT dvds_purchase(7, '{2,1,2}', '{1,3,2}')")
    assert order == 12_001
    stock = dict(q(scratch, "SELECT prod_id, quan_in_stock FROM inventory WHERE prod_id < 3"))
    sales = dict(q(scratch, "SELECT prod_id, sales FROM inventory WHERE prod_id < 3"))
    assert stock == {1: 97, 2: 97} and sales == {1: before[1] + 3, 2: before[2] + 3}
    lines = [tuple(r) for r in q(scratch, "SELECT orderlineid, prod_id, quantity FROM orderlines"
                                          " WHERE orderid = 12001 ORDER BY orderlineid")]
    assert lines == [(1, 2, 1), (2, 1, 3), (3, 2, 2)]
    hist = sorted(tuple(r) for r in q(scratch, "SELECT customerid, prod_id FROM cust_hist"
                                               " WHERE orderid = 12001"))
    assert hist == [(7, 1), (7, 2), (7, 2)]
    price = dict(q(scratch, "SELECT prod_id, price FROM products WHERE prod_id < 3"))
    net = 3 * price[1] + 3 * price[2]
    row = q(scratch, "SELECT * FROM orders WHERE orderid = 12001")[0]
    assert row["customerid"] == 7 and row["netamount"] == net
    assert row["tax"] == (net * Decimal("0.0825")).quantize(Decimal("0.01"))
    assert row["totalamount"] == row["netamount"] + row["tax"]
    assert val(scratch, "SELECT orderdate = current_date FROM orders WHERE orderid = 12001")
    assert has_run(scratch)


def test_purchase_rolls_back_on_short_stock(scratch):
    no_restock(scratch, "UPDATE inventory SET quan_in_stock = 1 WHERE prod_id = 9")
    no_restock(scratch, "UPDATE inventory SET quan_in_stock = 4 WHERE prod_id = 8")
    before = counts(scratch)
    inventory = "SELECT prod_id, quan_in_stock, sales FROM inventory WHERE prod_id IN (8, 9, 10)"
    stock = sorted(tuple(r) for r in q(scratch, inventory))
    assert val(scratch, "SELECT dvds_purchase(7, '{9}', '{3}')") == -1
    assert val(scratch, "SELECT dvds_purchase(7, '{10,9}', '{1,3}')") == -1
    assert val(scratch, "SELECT dvds_purchase(7, '{8,8}', '{2,3}')") == -1  # 5 of 4 in all
    assert counts(scratch) == before
    assert sorted(tuple(r) for r in q(scratch, inventory)) == stock
    assert val(scratch, "SELECT max(orderid) FROM orders") == 12_000
    assert not has_run(scratch)


def test_restock(scratch):
    no_restock(scratch, "UPDATE inventory SET quan_in_stock = 4 WHERE prod_id IN (5, 10000)")
    assert val(scratch, "SELECT dvds_purchase(3, '{5,10000}', '{2,3}')") == 12_001
    stock = dict(q(scratch, "SELECT prod_id, quan_in_stock FROM inventory"
                            " WHERE prod_id IN (5, 10000)"))
    assert stock == {5: 250, 10000: 2500}
    reorders = {r["prod_id"]: dict(r) for r in q(scratch, "SELECT * FROM reorder")}
    assert sorted(reorders) == [5, 10000]
    assert (reorders[5]["quan_low"], reorders[5]["quan_reordered"]) == (2, 248)
    assert (reorders[10000]["quan_low"], reorders[10000]["quan_reordered"]) == (1, 2499)
    assert val(scratch, "SELECT bool_and(date_low = current_date AND date_reordered = date_low"
                        " AND date_expected = date_low + 7) FROM reorder")
    # a purchase that leaves 3 or more does not restock
    assert val(scratch, "SELECT dvds_purchase(3, '{5}', '{3}')") == 12_002
    assert val(scratch, "SELECT quan_in_stock FROM inventory WHERE prod_id = 5") == 247
    assert val(scratch, "SELECT count(*) FROM reorder") == 2
    assert failing(scratch) == {}


def test_purchase_of_a_missing_product_is_an_error(scratch):
    with pytest.raises(asyncpg.RaiseError, match="not in the inventory"):
        q(scratch, "SELECT dvds_purchase(7, '{1,10001}', '{1,1}')")
    with pytest.raises(asyncpg.RaiseError, match="positive quantity"):
        q(scratch, "SELECT dvds_purchase(7, '{1}', '{0}')")
    assert val(scratch, "SELECT max(orderid) FROM orders") == 12_000


def test_checks_after_purchases_and_after_damage(scratch):
    no_restock(scratch, "UPDATE inventory SET quan_in_stock = 500")
    for k in range(1, 21):
        cart = "{" + ",".join(str(k * 37 % 10_000 + j) for j in range(1, 1 + k % 5 + 1)) + "}"
        qty = "{" + ",".join("2" for _ in range(1, 1 + k % 5 + 1)) + "}"
        assert val(scratch, f"SELECT dvds_purchase({k}, '{cart}', '{qty}')") > 12_000
    assert val(scratch, "SELECT count(*) FROM orders") == 12_020
    assert failing(scratch) == {}

    q(scratch, "UPDATE orders SET netamount = netamount + 1 WHERE orderid = 12005")
    assert failing(scratch) == {"DS3": 1}
    q(scratch, "UPDATE orders SET netamount = netamount - 1 WHERE orderid = 12005")
    q(scratch, "UPDATE orders SET netamount = netamount + 1 WHERE orderid = 5")  # loaded: random
    assert failing(scratch) == {}
    q(scratch, "UPDATE inventory SET sales = sales + 1 WHERE prod_id = 1")
    assert failing(scratch) == {"DS4": 1, "DS5": 1}
    q(scratch, "UPDATE inventory SET sales = sales - 1 WHERE prod_id = 1")
    q(scratch, "DELETE FROM cust_hist WHERE ctid = (SELECT min(ctid) FROM cust_hist"
               " WHERE orderid = 12003)")
    assert failing(scratch) == {"DS2": 1}
    no_restock(scratch, "UPDATE inventory SET quan_in_stock = -2 WHERE prod_id = 3")
    assert failing(scratch) == {"DS2": 1, "DS6": 1}
    q(scratch, "DELETE FROM orderlines WHERE orderid = 100")
    result = failing(scratch)
    assert result["DS1"] == 1 and result["DS4"] >= 1 and "DS5" not in result
    bad = {r.name: r for r in run_checks(scratch)}["DS1"]
    assert not bad.ok and bad.sample == ["orderid=100 lines=0 max_orderlineid=None"]

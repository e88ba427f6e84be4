"""DVD Store 3's parts of the shop on PostgreSQL: a 10MB DS3 build's exact row counts, keys and
record, the same rows as a DS2 build of the seed in the eight tables, DS3's functions and the
DS7-DS10 checks."""

from __future__ import annotations

import pytest

from oltplab.engines.postgres.dvds.checks import run_checks
from oltplab.engines.postgres.dvds.loader import build
from oltplab.engines.postgres.dvds.schema import schema_info
from oltplab.workloads.dvds.build import DvdsBuildSpec
from oltplab.workloads.dvds.sizes import parse_size

from .test_dvds_build import SEED, SIZE, q, val

DS3_COUNTS = {"membership": 2_000, "reviews": 50_000, "reviews_helpfulness": 100_000}


@pytest.fixture(scope="module")
def built3(pg) -> tuple[str, dict]:
    """A pristine 10MB DS3 build (two loading processes); tests must not change it."""
    dsn = pg.create_db("dvds3")
    return dsn, build(dsn, DvdsBuildSpec(size=SIZE, build_users=2, seed=SEED, ds3=True))


@pytest.fixture
def scratch3(pg, built3) -> str:
    template = built3[0].split("?")[0].rsplit("/", 1)[1]
    return pg.create_db("dvds3s", template=template)


def test_ds3_row_counts_and_record(built3):
    dsn, summary = built3
    found = {t: val(dsn, f"SELECT count(*) FROM {t}") for t in DS3_COUNTS}
    assert found == DS3_COUNTS
    assert {t: summary["rows"][t] for t in DS3_COUNTS} == DS3_COUNTS and summary["ds3"]
    assert val(dsn, "SELECT count(*) FROM customers") == 20_000
    meta = dict(q(dsn, "SELECT ds3, reviews FROM dvds_meta")[0])
    assert meta == {"ds3": True, "reviews": 50_000}
    info = schema_info(dsn)
    assert info.ds3 and info.reviews == 50_000 and info.functions_installed


def test_ds3_keys_and_columns(built3):
    dsn, _ = built3
    indexes = {r[0] for r in q(dsn, "SELECT indexname FROM pg_indexes"
                                    " WHERE schemaname = 'public'")}
    assert {"membership_pkey", "reviews_pkey", "reviews_product", "reviews_stars",
            "reviews_product_stars", "reviews_helpfulness_pkey"} <= indexes
    fks = {r[0] for r in q(dsn, "SELECT conname FROM pg_constraint WHERE contype = 'f'")}
    assert {"membership_customer_fkey", "reviews_product_fkey", "reviews_customer_fkey",
            "reviews_helpfulness_review_fkey"} <= fks
    columns = [r[0] for r in q(dsn, "SELECT column_name FROM information_schema.columns"
                                    " WHERE table_name = 'products' ORDER BY ordinal_position")]
    assert columns[-1] == "membership_item" and "common_prod_id" not in columns
    tiers = dict(q(dsn, "SELECT membership_item, count(*) FROM products GROUP BY 1"))
    assert set(tiers) == {0, 1, 2, 3} and 700 < sum(tiers[k] for k in (1, 2, 3)) < 1300


def test_the_eight_tables_hold_a_ds2_builds_rows(pg, built3):
    dsn = pg.create_db("dvds2same")
    build(dsn, DvdsBuildSpec(size=SIZE, build_users=1, seed=SEED))
    digest = "SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM {} t"
    for table in ("customers", "orders", "orderlines", "cust_hist", "inventory"):
        assert val(dsn, digest.format(table)) == val(built3[0], digest.format(table)), table
    cols = ("SELECT md5(string_agg(concat_ws(',', prod_id, category, title, actor, price,"
            " special), ',' ORDER BY prod_id)) FROM products")
    assert val(dsn, cols) == val(built3[0], cols)
    assert not schema_info(dsn).ds3
    assert [r.name for r in run_checks(dsn)] == [f"DS{k}" for k in range(1, 7)]


def test_the_same_seed_gives_the_same_ds3_rows_with_three_processes(pg, built3):
    dsn = pg.create_db("dvds3p")
    build(dsn, DvdsBuildSpec(size=SIZE, build_users=3, seed=SEED, ds3=True))
    digest = "SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM {} t"
    for table in ("membership", "reviews", "reviews_helpfulness", "products"):
        assert val(dsn, digest.format(table)) == val(built3[0], digest.format(table)), table


def test_ds3_checks_pass_after_the_build(built3):
    results = run_checks(built3[0])
    assert [r.name for r in results] == [f"DS{k}" for k in range(1, 11)]
    assert all(r.ok for r in results), results


def test_ds3_functions(scratch3):
    dsn = scratch3
    prod = val(dsn, "SELECT prod_id FROM reviews GROUP BY prod_id ORDER BY count(*) DESC LIMIT 1")
    assert 1 <= val(dsn, f"SELECT dvds_reviews_product({prod}, 1, 3)") <= 3
    assert val(dsn, f"SELECT dvds_reviews_product({prod}, 1, 100)") == val(
        dsn, f"SELECT count(*) FROM reviews WHERE prod_id = {prod}")
    actor, title = q(dsn, f"SELECT actor, split_part(title, ' ', 1) FROM products"
                          f" WHERE prod_id = {prod}")[0]
    assert val(dsn, f"SELECT dvds_reviews_actor('{actor}', 1, 5)") >= 1
    assert val(dsn, f"SELECT dvds_reviews_title('{title.lower()}', 1, 5)") >= 1
    assert val(dsn, "SELECT dvds_reviews_title('NOSUCHWORD', 1, 5)") == 0
    review = val(dsn, "SELECT dvds_new_review(7, 11, 4, 'GOOD FILM', 'A FILM TO SEE')")
    assert review == 50_001
    assert val(dsn, f"SELECT dvds_new_helpfulness({review}, 12, 9)") == 100_001
    member = val(dsn, "SELECT customerid FROM membership LIMIT 1")
    assert val(dsn, f"SELECT dvds_new_member({member}, 2)") == 0
    outsider = val(dsn, "SELECT min(customerid) FROM customers c WHERE NOT EXISTS"
                        " (SELECT 1 FROM membership m WHERE m.customerid = c.customerid)")
    assert val(dsn, f"SELECT dvds_new_member({outsider}, 2)") == outsider
    assert val(dsn, "SELECT count(*) FROM membership") == 2_001
    assert all(r.ok for r in run_checks(dsn))


def test_ds3_checks_find_broken_rows(scratch3):
    dsn = scratch3
    q(dsn, "ALTER TABLE reviews_helpfulness DROP CONSTRAINT reviews_helpfulness_review_fkey",
      "ALTER TABLE reviews DROP CONSTRAINT reviews_pkey CASCADE",
      "UPDATE reviews_helpfulness SET review_id = 999999 WHERE review_helpfulness_id = 1",
      "UPDATE reviews SET stars = 6 WHERE review_id = 2",
      "ALTER TABLE membership DROP CONSTRAINT membership_pkey",
      "INSERT INTO membership SELECT customerid, 1, expiredate FROM membership LIMIT 1")
    bad = {r.name: r.violations for r in run_checks(dsn) if not r.ok}
    assert bad == {"DS7": 1, "DS8": 1, "DS9": 1}


def test_a_ds2_rebuild_drops_the_ds3_tables(scratch3):
    build(scratch3, DvdsBuildSpec(size=parse_size("1MB"), seed=1, force=True))
    assert val(scratch3, "SELECT to_regclass('reviews') IS NULL AND to_regclass('membership')"
                         " IS NULL")
    assert not schema_info(scratch3).ds3

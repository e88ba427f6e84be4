"""DVD Store 3's parts of the shop on a real managed MariaDB: a 10MB DS3 build's exact row
counts, keys and record, the rows of PostgreSQL's build, DS3's procedures as the users call
them and the DS7-DS10 checks. The tests share one build and run in file order."""

from __future__ import annotations

import pytest

from oltplab.engines.mariadb.dvds.checks import run_checks
from oltplab.engines.mariadb.dvds.loader import build
from oltplab.engines.mariadb.dvds.schema import schema_info
from oltplab.engines.mariadb.instance import find_binary
from oltplab.workloads.dvds.build import DvdsBuildSpec

from .test_dvds_build import SEED, SIZE, new_db

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")

DS3_COUNTS = {"membership": 2_000, "reviews": 50_000, "reviews_helpfulness": 100_000}


@pytest.fixture(scope="module")
def built3(mariadb):
    db = new_db(mariadb, "dvds3")
    summary = build(db.dsn, DvdsBuildSpec(size=SIZE, build_users=2, seed=SEED, force=True,
                                          ds3=True))
    yield db, summary
    db.close()


def test_ds3_row_counts_and_record(built3):
    db, summary = built3
    found = {t: db.val(f"SELECT COUNT(*) FROM {t}") for t in DS3_COUNTS}
    assert found == DS3_COUNTS
    assert {t: summary["rows"][t] for t in DS3_COUNTS} == DS3_COUNTS and summary["ds3"]
    assert db.q("SELECT ds3, reviews FROM dvds_meta") == [(1, 50_000)]
    info = schema_info(db.dsn)
    assert info.ds3 and info.reviews == 50_000 and info.functions_installed


def test_ds3_keys_and_the_rows_of_postgres_build(built3):
    db, _ = built3
    keys = {r[0] for r in db.q("SELECT index_name FROM information_schema.statistics"
                               " WHERE table_schema = DATABASE() AND table_name = 'reviews'")}
    assert {"PRIMARY", "reviews_product", "reviews_stars", "reviews_product_stars"} <= keys
    fks = {r[0] for r in db.q("SELECT constraint_name FROM information_schema"
                              ".referential_constraints WHERE constraint_schema = DATABASE()")}
    assert {"membership_customer_fkey", "reviews_product_fkey",
            "reviews_helpfulness_review_fkey"} <= fks
    # the generator's rows: the first review and rating, a membership_item of every tier
    first = db.q("SELECT review_id, stars, review_summary FROM reviews ORDER BY review_id"
                 " LIMIT 1")[0]
    assert first[0] == 1 and 1 <= first[1] <= 5 and len(first[2].split()) == 2
    assert {r[0] for r in db.q("SELECT DISTINCT membership_item FROM products")} == {0, 1, 2, 3}


def test_ds3_checks_pass_after_the_build(built3):
    results = run_checks(built3[0].dsn)
    assert [r.name for r in results] == [f"DS{k}" for k in range(1, 11)]
    assert all(r.ok for r in results), results


def test_ds3_procedures(built3):
    db, _ = built3
    prod = db.val("SELECT prod_id FROM reviews GROUP BY prod_id ORDER BY COUNT(*) DESC,"
                  " prod_id LIMIT 1")
    many = db.val(f"SELECT COUNT(*) FROM reviews WHERE prod_id = {prod}")
    assert db.call(f"DVDS_REVIEWS_PRODUCT({prod},1,100)") == many
    assert db.call(f"DVDS_REVIEWS_PRODUCT({prod},1,2)") == 2
    actor, title = db.q(f"SELECT actor, title FROM products WHERE prod_id = {prod}")[0]
    assert db.call(f"DVDS_REVIEWS_ACTOR('{actor}',1,5)") >= 1
    assert db.call(f"DVDS_REVIEWS_TITLE('{title.split()[0].lower()}',1,5)") >= 1
    assert db.call("DVDS_REVIEWS_TITLE('NOSUCHWORD',1,5)") == 0
    assert db.call("DVDS_NEW_REVIEW(7,11,4,'GOOD FILM','A FILM TO SEE')") == 50_001
    assert db.call("DVDS_NEW_HELPFULNESS(50001,12,9)") == 100_001
    member = db.val("SELECT MIN(customerid) FROM membership")
    assert db.call(f"DVDS_NEW_MEMBER({member},2)") == 0
    outsider = db.val("SELECT MIN(c.customerid) FROM customers c LEFT JOIN membership m"
                      " ON m.customerid = c.customerid WHERE m.customerid IS NULL")
    assert db.call(f"DVDS_NEW_MEMBER({outsider},2)") == outsider
    assert db.val("SELECT COUNT(*) FROM membership") == 2_001
    assert not db.failing()

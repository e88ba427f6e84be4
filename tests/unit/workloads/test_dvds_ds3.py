"""DVD Store 3's parts of the shop with known answers: their row counts per size, their rows
the same whatever the build processes and beside a DS2 build's, their measured shares and
warnings, the reviews phase, the run's constants on a DS2 and a DS3 build."""

from __future__ import annotations

import random

import pytest

from oltplab import workloads
from oltplab.errors import SchemaError, UsageError
from oltplab.metrics.histogram import new_histogram
from oltplab.metrics.summary import TypeCounts
from oltplab.workloads.dvds import chunks as ch
from oltplab.workloads.dvds import population as pop
from oltplab.workloads.dvds import rigor
from oltplab.workloads.dvds.inputs import draw_constants
from oltplab.workloads.dvds.params import DvdsParams
from oltplab.workloads.dvds.schema import DvdsSchema
from oltplab.workloads.dvds.sizes import parse_size

SIZE = parse_size("1MB")  # 2,000 customers, 1,000 products


def tables(size, workers: int, ds3: bool, seed: int = 7) -> dict[str, str]:
    """Each table's rows as the build processes would load them, sorted."""
    out: dict[str, list[str]] = {}
    for job in ch.load_jobs("dsn", size, workers, seed, ds3):
        for table, text, rows in ch.chunks(job):
            if table:
                assert text.count("\n") == rows, table
                out.setdefault(table, []).extend(text.splitlines())
    return {t: sorted(v) for t, v in out.items()}


@pytest.mark.parametrize("text, members, reviews", [("10MB", 2_000, 50_000),
                                                    ("1GB", 200_000, 500_000),
                                                    ("1MB", 200, 5_000)])
def test_ds3_row_counts(text, members, reviews):
    size = parse_size(text)
    assert pop.ds3_rows(size) == {"membership": members, "reviews": reviews,
                                  "reviews_helpfulness": 2 * reviews}


def test_ds3_rows_do_not_depend_on_the_build_processes(monkeypatch):
    monkeypatch.setattr(pop, "CUSTOMER_CHUNK", 300)
    monkeypatch.setattr(pop, "REVIEW_CHUNK", 700)
    one = tables(SIZE, 1, True)
    assert one == tables(SIZE, 3, True)
    assert {t: len(one[t]) for t in ("membership", "reviews", "reviews_helpfulness")} == {
        "membership": sum(c // 10 for c in (300,) * 6 + (200,)), "reviews": 5_000,
        "reviews_helpfulness": 10_000}


def test_the_rows_of_a_ds3_build():
    ds2, ds3 = tables(SIZE, 2, False), tables(SIZE, 2, True)
    for table in ("customers", "orders", "orderlines", "cust_hist"):
        assert ds2[table] == ds3[table], table
    # products: the same but for the last column, a membership tier (0: for everyone)
    assert [r.rsplit("\t", 1)[0] for r in ds2["products"]] == \
        [r.rsplit("\t", 1)[0] for r in ds3["products"]]
    tiers = [int(r.rsplit("\t", 1)[1]) for r in ds3["products"]]
    assert set(tiers) == {0, 1, 2, 3} and 50 < sum(t > 0 for t in tiers) < 150
    members = [r.split("\t") for r in ds3["membership"]]
    assert len({m[0] for m in members}) == len(members) == 200
    assert {m[1] for m in members} == {"1", "2", "3"} and all(m[2][:4] == "2025" for m in members)
    reviews = [r.split("\t") for r in ds3["reviews"]]
    assert sorted(int(r[0]) for r in reviews) == list(range(1, 5_001))
    assert all(1 <= int(r[1]) <= 1_000 and 1 <= int(r[3]) <= 5 and 1 <= int(r[4]) <= 2_000
               and len(r[5].split()) == 2 and 5 <= len(r[6].split()) <= 15 for r in reviews)
    ratings = [r.split("\t") for r in ds3["reviews_helpfulness"]]
    assert sorted(int(r[0]) for r in ratings) == list(range(1, 10_001))
    assert all(1 <= int(r[1]) <= 5_000 and 1 <= int(r[3]) <= 10 for r in ratings)


def _inputs(**kw) -> dict:
    return {**{k: 0 for k in rigor.INPUT_KEYS}, **kw}


def test_ds3_shares_and_their_warnings():
    ok = _inputs(logins=8000, new_customers=2000, searches=30_000, purchases=10_000,
                 cart_items=50_000, review_orders=10_000, review_searches=30_000,
                 new_reviews=500, new_helpfulness=1000, new_members=90, taken_memberships=10)
    params = DvdsParams(ds3=True)
    assert rigor.measured_inputs(ok, ds3=True) == {
        "new_customers": 0.2, "searches_per_order": 3.0, "items_per_cart": 5.0,
        "reviews_per_order": 3.0, "new_reviews": 0.05, "new_helpfulness": 0.1,
        "new_members": 0.01}
    assert rigor.input_warnings(ok, params) == []
    [line] = rigor.input_warnings(dict(ok, new_reviews=1000), params)
    assert line.startswith("new-review share 10.00% over 10,000 outside 4.50%..5.50%")
    # a DS2 step measures DS2's alone and drops DS3's counts
    assert set(rigor.measured_inputs(ok)) == {"new_customers", "searches_per_order",
                                              "items_per_cart"}
    got = rigor.step_rigor({k: TypeCounts() for k in workloads.get("dvds").transactions}, ok,
                           client_tpm=None, server_tpm=None, series=[], start_ns=0, end_ns=1)
    assert set(got["input_counts"]) == set(rigor.DS2_INPUT_KEYS)


def test_the_reviews_phase_is_there_when_a_step_made_ds3_calls():
    names = workloads.get("dvds").transactions
    counts = {k: TypeCounts() for k in names}
    hists = {k: new_histogram() for k in names}
    counts["order"] = TypeCounts(committed=1, total_us=100)
    hists["order"].record_value(100)
    assert "reviews" not in rigor.step_fields(counts, hists)["phases"]
    for kind, us in (("reviews_actor", 300), ("new_member", 100)):
        hists[kind].record_value(us)
        counts[kind] = TypeCounts(committed=1, total_us=us)
    reviews = rigor.step_fields(counts, hists)["phases"]["reviews"]
    assert reviews["count"] == 2 and reviews["mean"] == 0.2


def test_the_run_follows_the_build():
    ds2 = DvdsSchema(size="10MB", customers=20_000, products=10_000, orders=12_000,
                     functions_installed=True)
    ds3 = DvdsSchema(size="10MB", customers=20_000, products=10_000, orders=12_000,
                     functions_installed=True, ds3=True, reviews=50_000)

    class Spec:
        params = DvdsParams(ds3=True)

    with pytest.raises(SchemaError, match="--ds3: the database holds a DS2 build"):
        draw_constants(random.Random(1), ds2, Spec())
    assert not draw_constants(random.Random(1), ds2).params.ds3
    c = draw_constants(random.Random(1), ds3)
    assert c.params.ds3 and c.reviews == 50_000 and c.as_dict()["loaded_reviews"] == 50_000
    assert c.as_dict()["reviews"] == 3  # review searches per order


@pytest.mark.parametrize("kw, flag", [({"pct_new_members": 101}, "--pct-new-members"),
                                      ({"pct_new_reviews": -1}, "--pct-new-reviews"),
                                      ({"pct_new_helpfulness": 100.1}, "--pct-new-helpfulness"),
                                      ({"reviews": 0}, "--reviews")])
def test_bad_ds3_parameters_are_one_line(kw, flag):
    with pytest.raises(UsageError, match=flag):
        DvdsParams(**kw)

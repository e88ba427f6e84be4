"""The brokerage build's plan: its chunks, how they are dealt to the build processes, the same
market rows whatever the number of processes, the exact row counts, the build's record."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from oltplab.errors import UsageError
from oltplab.workloads.brokerage import build, chunks as ch, population as pop, reference as ref
from oltplab.workloads.brokerage.scale import Scale
from oltplab.workloads.brokerage.schema import META_COLUMNS, TABLES

SCALE = Scale(1_000, 5)


def ids(chunks, kind: str, part: str = "") -> list[int]:
    return [i for c in chunks if c.kind == kind and c.part == part
            for i in range(c.first, c.first + c.count)]


def test_the_plan_covers_every_company_security_and_customer_once():
    chunks = pop.plan(Scale(2_000, 5))
    assert ids(chunks, "market", "companies") == list(range(1, 1_001))
    assert ids(chunks, "market", "securities") == list(range(1_370))
    assert ids(chunks, "customers") == list(range(1, 2_001))
    assert [c.count for c in chunks if c.kind == "customers"] == [100] * 20
    assert [c.part for c in chunks if c.kind == "market"] == (
        ["fixed"] + ["companies"] * 10 + ["securities"] * 23)
    for kind in ("market", "customers"):
        assert [c.index for c in chunks if c.kind == kind] == list(
            range(sum(c.kind == kind for c in chunks)))


@pytest.mark.parametrize("workers", [1, 2, 3, 7, 64])
def test_share_deals_every_chunk_once(workers):
    dealt = pop.share(SCALE, workers)
    assert len(dealt) == workers
    assert Counter(c for w in dealt for c in w) == Counter(pop.plan(SCALE))
    order = ("market", "customers")
    assert all(w == sorted(w, key=lambda c: (order.index(c.kind), c.index)) for w in dealt)
    loads = [sum(pop.chunk_cost(SCALE, c) for c in w) for w in dealt]
    if workers <= 3:
        assert max(loads) <= 1.1 * min(loads)
    # daily_market, the largest market table, is shared between two processes
    assert len({k for k, w in enumerate(dealt) for c in w if c.part == "securities"}) == min(
        workers, 12)


def market_digests(workers: int, seed: int) -> dict[str, str]:
    """The market tables' text as the build processes make it, put back in chunk order, by
    table: a digest of each."""
    pieces: dict[str, list] = {}
    for work in pop.share(SCALE, workers):
        for chunk in work:
            if chunk.kind != "market":
                continue
            for n, (table, text, _) in enumerate(pop.chunk_rows(seed, SCALE, chunk, None)):
                pieces.setdefault(table, []).append((chunk.index, n, text))
    return {table: hashlib.sha256("".join(t for *_, t in sorted(p)).encode()).hexdigest()
            for table, p in pieces.items()}


def test_a_seeded_build_makes_the_same_rows_with_1_and_3_processes():
    one = market_digests(1, seed=42)
    assert market_digests(3, seed=42) == one
    assert len(one) == 18  # the 9 fixed tables and 9 market ones (address among them)
    chunk = pop.plan(SCALE)[-11]  # the last securities chunk
    assert chunk.part == "securities"
    assert list(pop.chunk_rows(43, SCALE, chunk, None)) != list(
        pop.chunk_rows(42, SCALE, chunk, None))


def test_exact_rows_at_1000_and_2000_customers():
    fixed = {"charge": 15, "commission_rate": 240, "exchange": 4, "industry": 102, "sector": 12,
             "status_type": 5, "taxrate": 320, "trade_type": 5, "zip_code": 14_741}
    assert pop.fixed_rows() == fixed
    assert pop.exact_rows(Scale(1_000, 5)) == {
        **fixed, "customer": 1_000, "customer_taxrate": 2_000, "address": 1_504,
        "broker": 10, "watch_list": 1_000, "company": 500, "company_competitor": 1_500,
        "security": 685, "last_trade": 685, "daily_market": 893_925, "financial": 10_000,
        "news_item": 1_000, "news_xref": 1_000, "trade_request": 0}
    assert pop.exact_rows(Scale(2_000, 300)) == {
        **fixed, "customer": 2_000, "customer_taxrate": 4_000, "address": 3_004,
        "broker": 20, "watch_list": 2_000, "company": 1_000, "company_competitor": 3_000,
        "security": 1_370, "last_trade": 1_370, "daily_market": 1_787_850, "financial": 20_000,
        "news_item": 2_000, "news_xref": 2_000, "trade_request": 0}


def test_expected_rows_follow_the_digest_ratios():
    rows = pop.estimated_rows(Scale(1_000, 300))
    assert list(rows) == list(TABLES)
    trades = 17_280_000 * 100 / 101
    assert rows["trade"] == round(trades) and rows["trade_history"] == round(2.4 * trades)
    assert rows["holding_summary"] == 49_800 and rows["watch_item"] == 100_000
    assert rows["holding"] == round(0.051 * trades)
    # open lots grow as the square root of the days: at 5 days (measured: 112,179)
    assert pop.estimated_rows(SCALE)["holding"] == round(0.051 * 288_000 * 100 / 101
                                                         * 60 ** 0.5) == 112_646
    assert pop.expected_rows(Scale(1_000, 300)) == sum(rows.values())
    assert pop.expected_rows(Scale(2_000, 5)) > 2 * pop.expected_rows(SCALE) - 1_000_000


def test_market_pieces_stay_small():
    for chunk in pop.plan(SCALE):
        if chunk.kind == "market" and chunk.part != "fixed":
            for table, text, rows in pop.chunk_rows(1, SCALE, chunk, None):
                assert rows <= 20_000 and len(text) <= 1_100_000, table
            break


def test_load_jobs_cover_the_plan_and_mark_each_chunk():
    jobs = ch.load_jobs("dsn", SCALE, 3, seed=5)
    assert [j.worker for j in jobs] == [0, 1, 2] and ch.chunk_count(jobs) == len(pop.plan(SCALE))
    # one list, the costliest chunk first, and one counter for all of them
    assert all(j.work == tuple(pop.deal_order(SCALE)) and j.taken is jobs[0].taken for j in jobs)
    costs = [pop.chunk_cost(SCALE, c) for c in jobs[0].work]
    assert costs == sorted(costs, reverse=True)
    assert Counter(jobs[0].work) == Counter(pop.plan(SCALE))
    assert len(ch.load_jobs("dsn", SCALE, 500, seed=5)) == len(pop.plan(SCALE))
    market_only = ch.LoadJob("dsn", 0, 5, SCALE, tuple(pop.plan(SCALE)[:2]), 0)
    marks = [rows for table, _, rows in ch.chunks(market_only) if not table]
    assert marks == [0, 1] and "2 chunk(s)" in market_only.describe()


def _take_all(job, out) -> None:
    out.put((job.worker, [(c.kind, c.part, c.index) for c in ch.taken_chunks(job)]))


def test_the_processes_take_each_chunk_once_as_they_come_free():
    import multiprocessing
    jobs = ch.load_jobs("dsn", SCALE, 3, seed=5)
    out = multiprocessing.get_context("fork").Queue()
    procs = [multiprocessing.get_context("fork").Process(target=_take_all, args=(j, out))
             for j in jobs]
    for p in procs:
        p.start()
    took = dict(out.get(timeout=30) for _ in procs)
    for p in procs:
        p.join(10)
    every = [c for chunks in took.values() for c in chunks]
    assert Counter(every) == Counter((c.kind, c.part, c.index) for c in pop.plan(SCALE))
    assert set(took) == {0, 1, 2}
    assert "loading process 1" in jobs[1].describe()
    # taken in the list's order by whoever asked: each process's own chunks in that order
    order = {(c.kind, c.part, c.index): k for k, c in enumerate(jobs[0].work)}
    assert all([order[c] for c in v] == sorted(order[c] for c in v) for v in took.values())


def test_the_build_record_has_the_meta_columns():
    record = build.build_record(SCALE, 9, 2, 287_999, page_kib=8)
    assert set(record) | {"build_seconds", "oltplab_version"} == set(META_COLUMNS)
    assert record == dict(customers=1_000, days=5, scale_factor=500, trades=288_000,
                          max_t_id=287_999, seed=9, build_users=2, start_date="2025-01-06",
                          page_kib=8)
    summary = build.build_summary(record, {"seconds": 1.5}, {"trade": 7,
                                                             "brokerage_balance": 3})
    assert summary["rows"]["trade"] == 7 and summary["rows"]["holding"] == 0
    assert summary["rows"]["brokerage_balance"] == 3
    assert len(summary["rows"]) == 34 and summary["seconds"] == 1.5


@pytest.mark.parametrize("kwargs", [dict(build_users=0), dict(page_size=4),
                                    dict(page_size=32)])
def test_a_build_spec_refuses_bad_input(kwargs):
    with pytest.raises(UsageError):
        build.BrokerageBuildSpec(SCALE, **kwargs)
    assert build.BrokerageBuildSpec(SCALE, page_size=8).page_size == 8


def test_a_customers_chunk_references_the_market_and_fixed_rows():
    fixed = dict((t, text) for t, text, _ in pop.chunk_rows(1, SCALE, pop.plan(SCALE)[0], None))
    zips = {line.split("\t")[0] for line in fixed["zip_code"].splitlines()}
    taxes = {line.split("\t")[0] for line in fixed["taxrate"].splitlines()}
    symbols = {ref.symbol(i) for i in range(ref.securities(SCALE))}
    chunk = next(c for c in pop.plan(SCALE) if c.kind == "customers" and c.index == 3)
    found: dict[str, list[list[str]]] = {}
    for table, text, _ in pop.chunk_rows(1, SCALE, chunk, pop.new_tally(SCALE)):
        found.setdefault(table, []).extend(line.split("\t") for line in text.splitlines())
    assert {r[3] for r in found["address"]} <= zips
    assert {int(r[0]) for r in found["address"]} == {
        ref.customer_address(c, SCALE) for c in range(301, 401)}
    assert {r[0] for r in found["customer_taxrate"]} <= taxes
    assert {r[1] for r in found["watch_item"]} <= symbols
    assert {r[5] for r in found["trade"]} <= symbols
    assert {int(r[1]) for r in found["customer_account"]} <= set(range(1, 11))

"""The brokerage's fixed and market tables: their row counts, every reference between them,
daily_market's calendar and prices, the 52-week figures, the news items, the word lists."""

from __future__ import annotations

import datetime
from collections import Counter, defaultdict
from decimal import Decimal

import pytest

from oltplab.workloads.brokerage import market, population as pop, reference as ref, words
from oltplab.workloads.brokerage.scale import Scale
from oltplab.workloads.brokerage.schema import COLUMNS

SCALE = Scale(1_000, 5)


#: The securities whose daily_market rows the tests read (two chunks: 120 of 685).
DM_READ = 2 * pop.SECURITY_CHUNK


def make_tables(scale: Scale, seed: int = 11) -> tuple[dict[str, list[list[str]]], Counter]:
    """Every market chunk's rows, table by table, as fields (ni_item replaced by its length, so
    that 100 MB of news is not kept; daily_market of the first DM_READ securities), and the
    rows of each table."""
    out: dict[str, list[list[str]]] = defaultdict(list)
    counts: Counter = Counter()
    for chunk in pop.plan(scale):
        if chunk.kind != "market":
            continue
        for table, text, rows in pop.chunk_rows(seed, scale, chunk, None):
            assert text.count("\n") == rows and text.endswith("\n"), table
            counts[table] += rows
            if table == "daily_market" and chunk.first >= DM_READ:
                continue
            lines = [line.split("\t") for line in text.split("\n")[:-1]]
            if table == "news_item":
                for line in lines:
                    line[3] = len(line[3])
            out[table] += lines
    return dict(out), counts


@pytest.fixture(scope="module")
def made():
    return make_tables(SCALE)


@pytest.fixture(scope="module")
def tables(made):
    return made[0]


def column(rows, table: str, name: str) -> list[str]:
    k = COLUMNS[table].index(name)
    return [r[k] for r in rows[table]]


def test_the_fixed_tables_hold_the_digest_rows(made):
    expected = {"charge": 15, "commission_rate": 240, "exchange": 4, "industry": 102,
                "sector": 12, "status_type": 5, "taxrate": 320, "trade_type": 5,
                "zip_code": 14_741}
    tables, counts = made
    assert {t: len(tables[t]) for t in expected} == expected
    assert {t: counts[t] for t in expected} == expected
    assert market.FIXED_ROWS == expected


def test_the_market_tables_hold_the_digest_rows_per_1000_customers(made):
    expected = {"address": 504, "company": 500, "company_competitor": 1_500, "security": 685,
                "last_trade": 685, "daily_market": 893_925, "financial": 10_000,
                "news_item": 1_000, "news_xref": 1_000}
    tables, counts = made
    assert {t: counts[t] for t in expected} == market.market_rows(SCALE) == expected
    assert len(tables["daily_market"]) == DM_READ * 1_305


def test_every_row_has_its_tables_columns_and_unique_keys(tables):
    keys = {"charge": 2, "commission_rate": 4, "exchange": 1, "industry": 1, "sector": 1,
            "status_type": 1, "taxrate": 1, "trade_type": 1, "zip_code": 1, "address": 1,
            "company": 1, "company_competitor": 3, "security": 1, "last_trade": 1,
            "financial": 3, "news_item": 1, "news_xref": 2}
    for table, rows in tables.items():
        assert {len(r) for r in rows} == {len(COLUMNS[table])}, table
        if table in keys:
            assert len({tuple(r[:keys[table]]) for r in rows}) == len(rows), table
    dm = {(r[1], r[0]) for r in tables["daily_market"]}
    assert len(dm) == len(tables["daily_market"])


def test_the_fixed_values_follow_reference(tables):
    for tier, tt, ex, lo, hi, rate in tables["commission_rate"]:
        hundredths = ref.commission_hundredths(int(tier), tt, ex, int(lo))
        assert (int(lo), int(hi)) in ref.QTY_BANDS and rate == f"{Decimal(rate):.2f}"
        assert Decimal(rate) * 100 == hundredths
    assert ["1", "TMB", "NYSE", "0", "200", "0.43"] in tables["commission_rate"]
    rates = dict((r[0], r[2]) for r in tables["taxrate"])
    assert rates["N00"] == "0.10000" and rates["N19"] == "0.29000"
    assert all(Decimal(rate) * 100_000 == ref.tax_rate(tx) and len(rate) == 7
               for tx, rate in rates.items())
    assert ["TSL", "1", "15.00"] in tables["charge"]
    assert ["TLB", "Limit-Buy", "0", "0"] in tables["trade_type"]
    assert all(r[3:5] == ["930", "1600"] for r in tables["exchange"])


def test_every_reference_exists(tables):
    sectors = set(column(tables, "sector", "sc_id"))
    industries = set(column(tables, "industry", "in_id"))
    assert len(industries) == 102 and all(len(i) == 2 for i in industries)
    assert set(column(tables, "industry", "in_sc_id")) == sectors
    companies = dict(zip(column(tables, "company", "co_id"),
                         column(tables, "company", "co_in_id")))
    assert set(companies.values()) <= industries and len(set(companies.values())) == 102
    assert list(companies) == [str(k) for k in range(1, 501)]
    zips = set(column(tables, "zip_code", "zc_code"))
    addresses = dict(zip(column(tables, "address", "ad_id"),
                         column(tables, "address", "ad_zc_code")))
    assert set(addresses.values()) <= zips
    assert set(column(tables, "exchange", "ex_ad_id")) | set(
        column(tables, "company", "co_ad_id")) == set(addresses)
    for co, comp, industry in tables["company_competitor"]:
        assert co != comp and comp in companies and companies[comp] == industry
    assert Counter(column(tables, "company_competitor", "cp_co_id")) == {
        co: 3 for co in companies}
    exchanges = dict(zip(column(tables, "exchange", "ex_id"),
                         map(int, column(tables, "exchange", "ex_num_symb"))))
    assert Counter(column(tables, "security", "s_ex_id")) == exchanges
    assert sum(exchanges.values()) == 685
    assert set(column(tables, "security", "s_co_id")) == set(companies)
    symbols = column(tables, "security", "s_symb")
    assert symbols == [ref.symbol(i) for i in range(685)]
    assert column(tables, "last_trade", "lt_s_symb") == symbols
    assert Counter(column(tables, "daily_market", "dm_s_symb")) == {
        s: 1_305 for s in symbols[:DM_READ]}
    assert Counter(column(tables, "news_xref", "nx_co_id")) == {co: 2 for co in companies}
    assert sorted(column(tables, "news_xref", "nx_ni_id"), key=int) == column(
        tables, "news_item", "ni_id")
    assert Counter(column(tables, "financial", "fi_co_id")) == {co: 20 for co in companies}


def test_daily_market_is_1305_weekdays_ending_before_the_trading(tables):
    dates = sorted(set(column(tables, "daily_market", "dm_date")))
    assert len(dates) == 1_305
    days = [datetime.date.fromisoformat(d) for d in dates]
    assert all(d.weekday() < 5 for d in days)
    assert days[-1] == datetime.date(2025, 1, 3) and days[-1] < ref.START_DATE
    assert days[0] == datetime.date(2020, 1, 6)  # 261 weeks: every weekday between
    assert (days[-1] - days[0]).days == 7 * 261 - 3


def test_prices_are_20_to_30_dollars_and_high_close_low_agree(tables):
    for _, _, close, high, low, vol in tables["daily_market"]:
        assert Decimal("20.00") <= Decimal(low) <= Decimal(close) <= Decimal(high) <= 30
        assert 10_000 <= int(vol) <= 5_000_000
    closes = Counter(r[2] for r in tables["daily_market"])
    assert len(closes) == 1_001  # every price from $20.00 to $30.00 is some close
    ended = str(ref.trading_end(SCALE))
    assert ended == "2025-01-10 17:00:00"
    for _, dts, price, opened, _ in tables["last_trade"]:
        assert dts == ended and 20 <= Decimal(price) <= 30 and 20 <= Decimal(opened) <= 30
    # each security's closes and last prices lie in a band of $4.00; the bands differ
    prices = defaultdict(set)
    for _, symb, close, *_ in tables["daily_market"]:
        prices[symb].add(Decimal(close))
    for symb, _, price, opened, _ in tables["last_trade"][:DM_READ]:
        band = prices[symb] | {Decimal(price), Decimal(opened)}
        assert max(band) - min(band) <= 4
    assert len({min(p) // 1 for p in prices.values()}) >= 6


def test_the_52_week_high_and_low_are_the_last_260_rows(tables):
    rows = defaultdict(list)
    for date, symb, _, high, low, _ in tables["daily_market"]:
        rows[symb].append((date, Decimal(high), Decimal(low)))
    names = COLUMNS["security"]
    index = {ref.symbol(i): i for i in range(685)}
    for row in tables["security"][:DM_READ]:
        sec = dict(zip(names, row))
        last = sorted(rows[sec["s_symb"]])[-260:]
        high = max(h for _, h, _ in last)
        low = min(lo for _, _, lo in last)
        assert Decimal(sec["s_52wk_high"]) == high and Decimal(sec["s_52wk_low"]) == low
        assert (sec["s_52wk_high_date"], high) in {(d, h) for d, h, _ in last}
        assert (sec["s_52wk_low_date"], low) in {(d, lo) for d, _, lo in last}
        assert sec["s_start_date"] <= sec["s_exch_date"] < "2010"
        assert sec["s_issue"] == ("COMMON", "PREF_A")[ref.issue_of(index[sec["s_symb"]], SCALE)]


def test_news_items_are_about_100_kb_and_fit_their_columns(tables):
    assert {r[3] for r in tables["news_item"]} == {market.NEWS_ITEM_CHARS} == {100_000}
    for row in tables["news_item"]:
        assert 0 < len(row[1]) <= 80 and 0 < len(row[2]) <= 255 and len(row[5]) <= 30
        assert "2024-01-06" < row[4] < "2025-01-06"
    text = next(t for table, t, _ in pop.chunk_rows(3, SCALE, pop.plan(SCALE)[1], None)
                if table == "news_item")
    assert text.isascii() and "\\" not in text and text.count("\t") == 6 * market.NEWS_PIECE


def test_company_names_are_unique_and_fit(tables):
    names = column(tables, "company", "co_name")
    assert len(set(names)) == 500
    many = [market.company_name(co) for co in range(1, 30_001)]
    assert len(set(many)) == 30_000 and max(map(len, many)) <= 50
    assert max(len(r[3]) for r in tables["security"]) <= 70
    assert max(len(r[7]) for r in tables["company"]) <= 150


def test_zip_codes_are_distinct_5_digit_codes_in_towns_and_divisions(tables):
    codes = column(tables, "zip_code", "zc_code")
    assert len(set(codes)) == ref.ZIP_CODES and all(len(c) == 5 and c.isdigit() for c in codes)
    assert codes[:2] == [ref.zip_code(0), ref.zip_code(1)] == ["13001", "20920"]
    assert set(column(tables, "zip_code", "zc_div")) == set(words.DIVISIONS)


def test_the_rows_do_not_depend_on_the_generators_of_other_chunks():
    chunk = pop.plan(SCALE)[1]
    first = list(pop.chunk_rows(5, SCALE, chunk, None))
    list(pop.chunk_rows(5, SCALE, pop.plan(SCALE)[2], None))
    assert list(pop.chunk_rows(5, SCALE, chunk, None)) == first
    assert list(pop.chunk_rows(6, SCALE, chunk, None)) != first


def test_the_word_lists():
    assert len(words.INDUSTRIES) == len(set(words.INDUSTRIES)) == 102
    assert len(words.SECTORS) == 12 and len(set(words.INDUSTRY_SECTOR)) == 12
    assert all(len(name) <= 50 for name in words.INDUSTRIES)
    assert all(len(name) <= 30 for _, name, _ in words.SECTORS)
    for group in (words.FIRST_NAMES, words.LAST_NAMES, words.TOWNS, words.DIVISIONS,
                  words.NEWS_WORDS, words.COMPANY_WORDS, words.COMPANY_TRADES):
        assert len(set(group)) == len(group)
        assert all(w.isascii() and "\t" not in w and "\\" not in w for w in group)

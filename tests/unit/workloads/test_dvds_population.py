"""The DVD-Store-derived population: row counts, the data rules, the same rows whatever the
number of build processes, INVENTORY.sales equal to the loaded order lines, and the word lists."""

from __future__ import annotations

import datetime
import re
from collections import Counter
from decimal import Decimal

import pytest

from oltplab.workloads.dvds import chunks as ch
from oltplab.workloads.dvds import population as pop
from oltplab.workloads.dvds import words
from oltplab.workloads.dvds.sizes import parse_size

SIZE = parse_size("1MB")  # 2,000 customers, 1,200 orders, 1,000 products


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks small enough that a 1MB build has several of each table."""
    monkeypatch.setattr(pop, "CUSTOMER_CHUNK", 300)
    monkeypatch.setattr(pop, "PRODUCT_CHUNK", 250)
    monkeypatch.setattr(pop, "ORDER_CHUNK", 100)


def load(size, workers: int, seed: int = 7) -> tuple[dict[str, str], list[int]]:
    """What the build processes would load, table by table in id order, and the sales tally."""
    parts: dict[str, list[tuple[int, str]]] = {}
    sales = pop.new_sales(size)
    for job in ch.load_jobs("dsn", size, workers, seed):
        chunk = None
        for table, text, rows in ch.chunks(job):
            if not table:
                continue
            first = int(text.split("\t", 2)[1 if table in ("orderlines",) else 0])
            parts.setdefault(table, []).append((first, text))
            chunk = table
        assert chunk is not None
        pop.add_sales(sales, job.sales)
    tables = {t: "".join(text for _, text in sorted(p)) for t, p in parts.items()}
    tables["inventory"] = pop.inventory_rows(seed, size, sales)
    return tables, sales


def rows(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines()]


def test_every_id_is_in_one_chunk(small_chunks):
    chunks = pop.plan(SIZE)
    for table, total in (("customers", 2000), ("products", 1000), ("orders", 1200)):
        ids = [i for c in chunks if c.table == table for i in range(c.first, c.first + c.count)]
        assert ids == list(range(1, total + 1))
    assert [c.index for c in chunks if c.table == "orders"] == list(range(12))


@pytest.mark.parametrize("workers", [1, 2, 3, 7, 50])
def test_share_deals_every_chunk_once(small_chunks, workers):
    dealt = pop.share(SIZE, workers)
    assert len(dealt) == workers
    assert Counter(c for w in dealt for c in w) == Counter(pop.plan(SIZE))
    assert all(w == sorted(w, key=lambda c: (pop.TABLE_ORDER.index(c.table), c.index))
               for w in dealt)
    loads = [sum(c.cost for c in w) for w in dealt if w]
    if workers <= 3:
        assert max(loads) <= 1.5 * min(loads)


def test_the_rows_do_not_depend_on_the_number_of_processes(small_chunks):
    one, sales_one = load(SIZE, 1)
    three, sales_three = load(SIZE, 3)
    assert one == three and sales_one == sales_three
    other, _ = load(SIZE, 2, seed=8)
    assert other["customers"] != one["customers"] and other["orders"] != one["orders"]


def test_the_rows_do_not_depend_on_the_chunk_a_process_makes_first(small_chunks):
    mine = [c for c in pop.plan(SIZE) if c.table == "orders"]
    sales_a, sales_b = pop.new_sales(SIZE), pop.new_sales(SIZE)
    forward = [pop.chunk_rows(3, SIZE, c, sales_a) for c in mine]
    backward = [pop.chunk_rows(3, SIZE, c, sales_b) for c in reversed(mine)]
    assert forward == backward[::-1] and sales_a == sales_b


def test_row_counts(small_chunks):
    tables, _ = load(SIZE, 2)
    counts = {t: len(text.splitlines()) for t, text in tables.items()}
    assert counts["customers"] == 2000 and counts["products"] == 1000
    assert counts["orders"] == 1200 and counts["inventory"] == 1000
    assert counts["orderlines"] == counts["cust_hist"]
    assert 1200 <= counts["orderlines"] <= 9 * 1200
    assert abs(counts["orderlines"] / 1200 - 5) < 0.4  # 1..9 lines: 5 on average
    assert len(pop.category_rows().splitlines()) == 16


def test_sales_are_the_quantities_of_the_order_lines(small_chunks):
    tables, sales = load(SIZE, 3)
    ordered = Counter()
    for line in rows(tables["orderlines"]):
        ordered[int(line[2])] += int(line[3])
    inventory = {int(r[0]): (int(r[1]), int(r[2])) for r in rows(tables["inventory"])}
    assert sorted(inventory) == list(range(1, 1001))
    assert all(inventory[p][1] == ordered[p] == sales[p] for p in inventory)
    assert sum(sales) == sum(ordered.values()) > 0


def test_customers_rows():
    text = pop.customer_rows(pop.chunk_rng(1, "customers", 0), 1, 4000)
    table = rows(text)
    assert [int(r[0]) for r in table] == list(range(1, 4001))
    assert all(len(r) == 20 for r in table)
    us = [r for r in table if r[9] == "1"]
    abroad = [r for r in table if r[9] == "2"]
    assert len(us) + len(abroad) == 4000 and abs(len(us) - 2000) < 200
    assert all(r[8] == "US" and r[6] in words.STATES and re.fullmatch(r"\d{5}", r[7])
               for r in us)
    assert all(r[8] in words.COUNTRIES and r[6] == r[7] == "\\N" for r in abroad)
    assert {r[8] for r in abroad} == set(words.COUNTRIES)
    for r in table:
        assert re.fullmatch(r"[A-Z]{6}", r[1]) and re.fullmatch(r"[A-Z]{10}", r[2])
        assert r[15] == f"user{r[0]}" and r[16] == "password"
        assert 1 <= int(r[12]) <= words.CREDIT_CARD_TYPES and re.fullmatch(r"\d{16}", r[13])
        assert 18 <= int(r[17]) <= 90 and int(r[18]) in (20000, 40000, 60000, 80000, 100000)
        assert r[19] in ("M", "F")
    assert {r[19] for r in table} == {"M", "F"} and {int(r[17]) for r in table} >= {18, 90}


def test_products_rows():
    text = pop.product_rows(pop.chunk_rng(1, "products", 0), 1, 10_000, 10_000)
    table = rows(text)
    assert [int(r[0]) for r in table] == list(range(1, 10_001))
    titles, firsts, lasts = set(words.TITLE_WORDS), set(words.ACTOR_FIRST), set(words.ACTOR_LAST)
    for r in table:
        assert 1 <= int(r[1]) <= 16
        a, b = r[2].split(" ")
        assert a in titles and b in titles
        first, last = r[3].split(" ")
        assert first in firsts and last in lasts
        assert Decimal("9.99") <= Decimal(r[4]) <= Decimal("29.99")
        assert 1 <= int(r[6]) <= 10_000
    specials = sum(r[5] == "1" for r in table)
    assert {r[5] for r in table} == {"0", "1"} and 50 <= specials <= 160
    assert {int(r[1]) for r in table} == set(range(1, 17))


def test_orders_rows():
    size = parse_size("10MB")
    sales = pop.new_sales(size)
    orders, lines, hist, n = pop.order_rows(pop.chunk_rng(1, "orders", 0), 1, 3000, size, sales)
    orders, lines, hist = rows(orders), rows(lines), rows(hist)
    assert len(lines) == len(hist) == n
    by_order = {}
    for o in orders:
        oid, date, cid = int(o[0]), datetime.date.fromisoformat(o[1]), int(o[2])
        net, tax, total = (Decimal(x) for x in o[3:6])
        assert date.year == pop.YEAR and date.month == (oid - 1) // 1000 + 1
        assert 1 <= cid <= 20_000
        assert Decimal("0.01") <= net <= Decimal("400.00")
        assert tax == (net * Decimal("0.0825")).quantize(Decimal("0.01"), "ROUND_HALF_UP")
        assert total == net + tax
        by_order[oid] = (o[1], cid)
    numbers = {}
    for line, h in zip(lines, hist):
        oid = int(line[1])
        assert line[4] == by_order[oid][0] and 1 <= int(line[3]) <= 3
        assert 1 <= int(line[2]) <= 10_000
        assert (int(h[0]), int(h[1]), h[2]) == (by_order[oid][1], oid, line[2])
        numbers.setdefault(oid, []).append(int(line[0]))
    assert sorted(numbers) == list(range(1, 3001))
    assert all(v == list(range(1, len(v) + 1)) and 1 <= len(v) <= 9 for v in numbers.values())
    assert {len(v) for v in numbers.values()} == set(range(1, 10))


def test_inventory_rows():
    size = parse_size("20MB")  # 20,000 products: two of them hold ten times the stock
    sales = pop.new_sales(size)
    table = rows(pop.inventory_rows(5, size, sales))
    stocks = {int(r[0]): int(r[1]) for r in table}
    assert sorted(stocks) == list(range(1, 20_001))
    assert all(0 <= s <= 500 for p, s in stocks.items() if p % 10_000)
    assert stocks[10_000] % 10 == 0 and stocks[20_000] % 10 == 0
    assert stocks[10_000] <= 5000 and {r[2] for r in table} == {"0"}
    assert min(stocks.values()) == 0 and max(s for p, s in stocks.items() if p % 10_000) == 500


def test_expected_rows_is_close():
    tables, _ = load(SIZE, 1)
    loaded = sum(len(t.splitlines()) for t in tables.values()) + 16
    assert abs(loaded - pop.expected_rows(SIZE)) < 0.05 * loaded


@pytest.mark.parametrize("name, count", [("TITLE_WORDS", 1000), ("ACTOR_FIRST", 200),
                                         ("ACTOR_LAST", 200)])
def test_word_lists_are_distinct_letters(name, count):
    found = getattr(words, name)
    assert len(found) == count == len({w.lower() for w in found})
    assert all(re.fullmatch(r"[A-Z]{3,12}", w) for w in found)


def test_word_lists_do_not_share_words():
    lists = [set(words.TITLE_WORDS), set(words.ACTOR_FIRST), set(words.ACTOR_LAST)]
    assert sum(map(len, lists)) == len(set().union(*lists))


def test_fixed_lists():
    assert len(words.CATEGORIES) == len(set(words.CATEGORIES)) == 16
    assert len(words.COUNTRIES) == len(set(words.COUNTRIES)) == 10
    assert "US" not in words.COUNTRIES and "United States" not in words.COUNTRIES
    assert len(words.STATES) == len(set(words.STATES)) == 50
    assert all(re.fullmatch(r"[A-Z]{2}", s) for s in words.STATES)
    assert words.CREDIT_CARD_TYPES == 5
    assert rows(pop.category_rows())[0] == ["1", words.CATEGORIES[0]]

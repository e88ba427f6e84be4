"""The rows of a DVD-Store-derived build as COPY text, chunk by chunk.

Pure generation: no database access. Every function returns rows in PostgreSQL's COPY text
format (tab-separated, ``\\N`` for NULL, one ``\\n`` per row) in the tables' column order
(engines/postgres/dvds/sql/tables.sql).

A build is a list of chunks of fixed sizes (``plan``): customers, products and orders in runs
of consecutive ids, each drawn from a ``random.Random`` seeded with (seed, table, chunk
number), so a seeded build holds the same rows whatever the number of build processes and
whichever process makes which chunk (``share``). An orders chunk makes the ORDERS rows with
their ORDERLINES and CUST_HIST rows, and adds the quantities ordered to a per-product tally;
INVENTORY (``inventory_rows``) comes last, from the tally of all chunks: its ``sales`` is
exactly the quantity of each product in the loaded order lines.

The data (all uniform, as the workload's digest describes DVD Store's): customers with random
uppercase names, half in the US (a state and a 5-digit zip), half in one of 10 other countries,
username ``user<id>``, password ``password``, age 18..90, income 20,000 x 1..5; products in
categories 1..16, a title of two TITLE_WORDS, an actor of ACTOR_FIRST and ACTOR_LAST, price
9.99..29.99, 1 in 100 ``special``; orders in the 12 months of YEAR, ``orders_per_month`` each,
customer uniform, net amount 0.01..400.00, tax 8.25%, 1..9 lines of a uniform product and
quantity 1..3; stock 0..500 (ten times that for every 10,000th product).

A DS3 build (``ds3``) adds DVD Store 3's parts, each from a generator of its own, so that the
rows of the eight tables stay those of a DS2 build of the same seed (but PRODUCTS' last
column, which becomes ``membership_item``): MEMBERSHIP, one customer in MEMBER_EVERY of each
customers chunk (drawn without repeats), a tier 1..3 and an expiry date in the year after YEAR;
REVIEWS, REVIEWS_PER_PRODUCT per product, in chunks of their own, each of a uniform product
and customer, 1..5 stars, a date in YEAR, a summary of two TITLE_WORDS and a text of 5..15;
REVIEWS_HELPFULNESS, HELPFULNESS_PER_REVIEW per review of the chunk, each of a uniform review
of its chunk and customer, a rating 1..10; ``membership_item`` 0 (for everyone) for most
products and a tier 1..3 for one in MEMBER_ITEM_EVERY.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime
import heapq
import random as _random
from dataclasses import dataclass

from ..tpcc.random import CharSource, uniform_offsets
from . import words
from .sizes import Size

#: Rows per chunk of each table (fixed: the chunks seed the generators).
CUSTOMER_CHUNK = 20_000
PRODUCT_CHUNK = 20_000
ORDER_CHUNK = 10_000

REVIEW_CHUNK = 20_000
#: DS3's row counts: members per customer, reviews per product, ratings per review.
MEMBER_EVERY = 10
REVIEWS_PER_PRODUCT = 5
HELPFULNESS_PER_REVIEW = 2
MEMBER_ITEM_EVERY = 10
TIERS = 3
STARS = 5
HELPFULNESS = 10
#: Words of a review's text, at least and at most (TITLE_WORDS).
REVIEW_WORDS = (5, 15)

#: The year of the loaded orders (fixed, so a seeded build does not depend on the date).
YEAR = 2024
MAX_LINES = 9
TAX_RATE_BP = 825  # 8.25%, in basis points
#: Every RESTOCK_EVERY-th product keeps ten times the stock (and is restocked to ten times).
RESTOCK_EVERY = 10_000

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DIGITS = "0123456789"

#: Relative cost of a row of each table, to share the chunks out evenly (an order brings
#: about five ORDERLINES and five CUST_HIST rows).
_COST = {"customers": 1.0, "products": 1.0, "orders": 6.0, "reviews": 4.0}
TABLE_ORDER = ("customers", "products", "orders", "reviews")


@dataclass(frozen=True)
class Chunk:
    """Rows ``first`` .. ``first + count - 1`` of ``table`` (customers, products or orders)."""

    table: str
    index: int
    first: int
    count: int
    ds3: bool = False

    @property
    def cost(self) -> float:
        return self.count * _COST[self.table]


def chunk_rng(seed: int, table: str, index: int) -> _random.Random:
    """The generator of one chunk."""
    return _random.Random(f"oltplab-dvds:{seed}:{table}:{index}")


def _runs(table: str, total: int, per: int) -> list[Chunk]:
    return [Chunk(table, k, first, min(per, total - first + 1))
            for k, first in enumerate(range(1, total + 1, per))]


def plan(size: Size, ds3: bool = False) -> list[Chunk]:
    """Every chunk of a build of ``size``, table by table; a DS3 build's customers and products
    chunks make its members and membership items too, and its reviews come in chunks of their
    own."""
    chunks = (_runs("customers", size.customers, CUSTOMER_CHUNK)
              + _runs("products", size.products, PRODUCT_CHUNK)
              + _runs("orders", size.orders, ORDER_CHUNK))
    if not ds3:
        return chunks
    return ([dataclasses.replace(c, ds3=True) for c in chunks]
            + _runs("reviews", reviews(size), REVIEW_CHUNK))


def members(size: Size) -> int:
    """MEMBERSHIP's rows: one customer in MEMBER_EVERY of each customers chunk, rounded down."""
    return sum(c.count // MEMBER_EVERY for c in _runs("customers", size.customers,
                                                       CUSTOMER_CHUNK))


def reviews(size: Size) -> int:
    """REVIEWS' rows."""
    return REVIEWS_PER_PRODUCT * size.products


def ds3_rows(size: Size) -> dict[str, int]:
    """The rows of DS3's three tables in a DS3 build of ``size``."""
    return {"membership": members(size), "reviews": reviews(size),
            "reviews_helpfulness": HELPFULNESS_PER_REVIEW * reviews(size)}


def share(size: Size, workers: int, ds3: bool = False) -> list[list[Chunk]]:
    """The chunks of ``plan(size)`` dealt to ``workers`` processes (some may get none): the
    largest first, each to the least loaded; each process's chunks in table, then id order."""
    loads = [(0.0, k) for k in range(max(1, workers))]
    dealt: list[list[Chunk]] = [[] for _ in loads]
    for chunk in sorted(plan(size, ds3),
                        key=lambda c: (-c.cost, TABLE_ORDER.index(c.table), c.index)):
        load, k = heapq.heappop(loads)
        dealt[k].append(chunk)
        heapq.heappush(loads, (load + chunk.cost, k))
    for chunks in dealt:
        chunks.sort(key=lambda c: (TABLE_ORDER.index(c.table), c.index))
    return dealt


def expected_rows(size: Size, ds3: bool = False) -> int:
    """About how many rows a build loads (order lines are random: 5 per order on average)."""
    extra = sum(ds3_rows(size).values()) if ds3 else 0
    return size.customers + 2 * size.products + len(words.CATEGORIES) + 11 * size.orders + extra


def _cents(value: int) -> str:
    return f"{value // 100}.{value % 100:02d}"


# The text of the small fields of a customer, looked up by their drawn values.
_CARD_TYPES = tuple(f"\t{t}\t" for t in range(1, words.CREDIT_CARD_TYPES + 1))
_EXPIRATIONS = tuple(f"\t{2025 + y}/{m + 1:02d}\t" for y in range(6) for m in range(12))
_PROFILES = tuple(f"\tpassword\t{a + 18}\t{20000 * (i + 1)}\t{g}\n"
                  for a in range(73) for i in range(5) for g in "MF")
_ABROAD = tuple(f"\\N\t\\N\t{c}\t2\t" for c in words.COUNTRIES)


def customer_rows(rng, first: int, count: int) -> str:
    """CUSTOMERS ``first`` .. ``first + count - 1``."""
    rand = rng.random
    upper = CharSource(rng, UPPER).take(31 * count)  # first 6, last 10, street 7, city 8
    digits = CharSource(rng, DIGITS).take(35 * count)  # house 4, zip 5, phone 10, card 16
    abroad = uniform_offsets(rng, 2, count)
    genders = uniform_offsets(rng, 2, count)
    card_types = uniform_offsets(rng, words.CREDIT_CARD_TYPES, count)
    months = uniform_offsets(rng, 12, count)
    years = uniform_offsets(rng, 6, count)
    ages = uniform_offsets(rng, 73, count)
    incomes = uniform_offsets(rng, 5, count)
    states = words.STATES
    n_states, n_countries = len(states), len(_ABROAD)
    out = []
    a = d = 0
    for k in range(count):
        cid = first + k
        lname = upper[a + 6:a + 16]
        if abroad[k]:
            where = _ABROAD[int(rand() * n_countries)]
        else:
            where = f"{states[int(rand() * n_states)]}\t{digits[d + 4:d + 9]}\tUS\t1\t"
        out.append(
            f"{cid}\t{upper[a:a + 6]}\t{lname}\t{digits[d:d + 4]} {upper[a + 16:a + 23]} ST\t"
            f"\\N\t{upper[a + 23:a + 31]}\t{where}{lname}@example.com\t{digits[d + 9:d + 19]}"
            f"{_CARD_TYPES[card_types[k]]}{digits[d + 19:d + 35]}"
            f"{_EXPIRATIONS[years[k] * 12 + months[k]]}user{cid}"
            f"{_PROFILES[(ages[k] * 5 + incomes[k]) * 2 + genders[k]]}")
        a += 31
        d += 35
    return "".join(out)


def product_rows(rng, first: int, count: int, products: int, tiers=None) -> str:
    """PRODUCTS ``first`` .. ``first + count - 1`` of ``products``; the last column is
    common_prod_id, or with ``tiers`` (a DS3 build) ``tiers[k]``, the membership_item."""
    rand = rng.random
    titles, firsts, lasts = words.TITLE_WORDS, words.ACTOR_FIRST, words.ACTOR_LAST
    nt, nf, nl = len(titles), len(firsts), len(lasts)
    categories = uniform_offsets(rng, len(words.CATEGORIES), count)
    out = []
    for k in range(count):
        title = f"{titles[int(rand() * nt)]} {titles[int(rand() * nt)]}"
        actor = f"{firsts[int(rand() * nf)]} {lasts[int(rand() * nl)]}"
        price = 999 + int(rand() * 2001)  # 9.99 .. 29.99
        special = 1 if rand() < 0.01 else 0
        last = int(rand() * products) + 1
        if tiers is not None:
            last = tiers[k]
        out.append(f"{first + k}\t{categories[k] + 1}\t{title}\t{actor}\t{_cents(price)}\t"
                   f"{special}\t{last}\n")
    return "".join(out)


def _year_days() -> tuple[list[str], list[tuple[int, int]]]:
    """The dates of YEAR as text, and each month's (first index, days)."""
    days, months = [], []
    for m in range(1, 13):
        n = calendar.monthrange(YEAR, m)[1]
        months.append((len(days), n))
        days += [datetime.date(YEAR, m, d).isoformat() for d in range(1, n + 1)]
    return days, months


_DAYS, _MONTHS = _year_days()


def order_rows(rng, first: int, count: int, size: Size, sales) -> tuple[str, str, str, int]:
    """ORDERS ``first`` .. ``first + count - 1`` with their ORDERLINES and CUST_HIST rows.

    Returns (orders, orderlines, cust_hist, number of order lines) and adds the quantity of
    each line to ``sales[prod_id]`` (a list of products + 1 counts). Order o is placed in
    month (o - 1) // orders_per_month of YEAR (the last month takes any remainder).
    """
    rand = rng.random
    customers, products, per_month = size.customers, size.products, size.orders_per_month
    n_lines = [c + 1 for c in uniform_offsets(rng, MAX_LINES, count)]
    total_lines = sum(n_lines)
    quantities = [q + 1 for q in uniform_offsets(rng, 3, total_lines)]
    prods = [int(rand() * products) + 1 for _ in range(total_lines)]
    days = _DAYS
    orders, lines, hist = [], [], []
    p = 0
    for k in range(count):
        oid = first + k
        start, ndays = _MONTHS[min(11, (oid - 1) // per_month)]
        date = days[start + int(rand() * ndays)]
        cid = int(rand() * customers) + 1
        net = int(rand() * 40000) + 1  # cents, 0.01 .. 400.00
        tax = (net * TAX_RATE_BP + 5000) // 10000
        orders.append(f"{oid}\t{date}\t{cid}\t{_cents(net)}\t{_cents(tax)}\t"
                      f"{_cents(net + tax)}\n")
        for n in range(1, n_lines[k] + 1):
            prod, q = prods[p], quantities[p]
            p += 1
            sales[prod] += q
            lines.append(f"{n}\t{oid}\t{prod}\t{q}\t{date}\n")
            hist.append(f"{cid}\t{oid}\t{prod}\n")
    return "".join(orders), "".join(lines), "".join(hist), total_lines


def member_rows(rng, first: int, count: int) -> tuple[str, int]:
    """MEMBERSHIP of the customers ``first`` .. ``first + count - 1``: one in MEMBER_EVERY,
    in customerid order, with a tier and an expiry date in the year after YEAR."""
    ids = sorted(rng.sample(range(first, first + count), count // MEMBER_EVERY))
    out = []
    for cid in ids:
        day = datetime.date(YEAR + 1, 1, 1) + datetime.timedelta(days=int(rng.random() * 365))
        out.append(f"{cid}\t{int(rng.random() * TIERS) + 1}\t{day.isoformat()}\n")
    return "".join(out), len(ids)


def membership_items(rng, count: int) -> list[int]:
    """PRODUCTS.membership_item of ``count`` products: 0, or a tier for one in
    MEMBER_ITEM_EVERY."""
    rand = rng.random
    return [int(rand() * TIERS) + 1 if rand() < 1 / MEMBER_ITEM_EVERY else 0
            for _ in range(count)]


def _words(rand, n: int) -> str:
    titles = words.TITLE_WORDS
    return " ".join(titles[int(rand() * len(titles))] for _ in range(n))


def review_rows(rng, first: int, count: int, size: Size) -> tuple[str, str, int]:
    """REVIEWS ``first`` .. ``first + count - 1`` and their REVIEWS_HELPFULNESS rows (ids from
    HELPFULNESS_PER_REVIEW x (first - 1) + 1, each of a uniform review of these)."""
    rand = rng.random
    lo, hi = REVIEW_WORDS
    out = []
    for k in range(count):
        date = _DAYS[int(rand() * len(_DAYS))]
        out.append(f"{first + k}\t{int(rand() * size.products) + 1}\t{date}\t"
                   f"{int(rand() * STARS) + 1}\t{int(rand() * size.customers) + 1}\t"
                   f"{_words(rand, 2)}\t{_words(rand, lo + int(rand() * (hi - lo + 1)))}\n")
    n = HELPFULNESS_PER_REVIEW * count
    base = HELPFULNESS_PER_REVIEW * (first - 1)
    ratings = [f"{base + k + 1}\t{first + int(rand() * count)}\t"
               f"{int(rand() * size.customers) + 1}\t{int(rand() * HELPFULNESS) + 1}\n"
               for k in range(n)]
    return "".join(out), "".join(ratings), n


def chunk_rows(seed: int, size: Size, chunk: Chunk, sales) -> list[tuple[str, str, int]]:
    """The rows of one chunk as (table, COPY text, rows); an orders chunk adds to ``sales``."""
    rng = chunk_rng(seed, chunk.table, chunk.index)
    if chunk.table == "customers":
        out = [("customers", customer_rows(rng, chunk.first, chunk.count), chunk.count)]
        if chunk.ds3:
            text, n = member_rows(chunk_rng(seed, "membership", chunk.index), chunk.first,
                                  chunk.count)
            out.append(("membership", text, n))
        return out
    if chunk.table == "products":
        tiers = (membership_items(chunk_rng(seed, "membership_item", chunk.index), chunk.count)
                 if chunk.ds3 else None)
        return [("products", product_rows(rng, chunk.first, chunk.count, size.products, tiers),
                 chunk.count)]
    if chunk.table == "reviews":
        text, ratings, n = review_rows(rng, chunk.first, chunk.count, size)
        return [("reviews", text, chunk.count), ("reviews_helpfulness", ratings, n)]
    orders, lines, hist, n = order_rows(rng, chunk.first, chunk.count, size, sales)
    return [("orders", orders, chunk.count), ("orderlines", lines, n), ("cust_hist", hist, n)]


def new_sales(size: Size) -> list[int]:
    """An empty per-product tally (index = prod_id; index 0 unused)."""
    return [0] * (size.products + 1)


def add_sales(total: list[int], more) -> None:
    """Add one tally to another, in place."""
    for k, v in enumerate(more):
        if v:
            total[k] += v


def inventory_rows(seed: int, size: Size, sales) -> str:
    """INVENTORY: every product's stock (0..500, x10 for every RESTOCK_EVERY-th) and
    ``sales[prod_id]``, the quantity ordered in the loaded order lines."""
    out = []
    for chunk in _runs("products", size.products, PRODUCT_CHUNK):
        rand = chunk_rng(seed, "inventory", chunk.index).random
        for prod in range(chunk.first, chunk.first + chunk.count):
            stock = int(rand() * 501)
            if prod % RESTOCK_EVERY == 0:
                stock *= 10
            out.append(f"{prod}\t{stock}\t{sales[prod]}\n")
    return "".join(out)


def category_rows() -> str:
    """CATEGORIES: the 16 fixed rows."""
    return "".join(f"{k}\t{name}\n" for k, name in enumerate(words.CATEGORIES, 1))

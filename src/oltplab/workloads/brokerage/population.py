"""The rows of a TPC-E-derived brokerage build as COPY text, chunk by chunk.

Pure generation: no database access. Every piece is PostgreSQL's COPY text (tab-separated,
``\\N`` for NULL, one ``\\n`` per row) in the column order of schema.COLUMNS, at most about
20,000 rows (news items: NEWS_PIECE of them, about 1 MB).

A build is a list of chunks (``plan``), of two kinds:

- "market": the fixed tables and the exchanges' addresses (part "fixed", one chunk); the
  companies in runs of COMPANY_CHUNK (part "companies": company, company_competitor,
  financial, their addresses, news_item, news_xref); the securities in runs of SECURITY_CHUNK
  (part "securities": security, last_trade, daily_market). A companies chunk's ``first`` is
  its first co_id, a securities chunk's its first security index (0-based).
- "customers": CUSTOMER_CHUNK customers from c_id ``first``, with their accounts, permissions,
  tax rates, addresses, watch lists and initial trading (customers.py, trades.py), which add
  each completed trade to the chunk's per-broker ``tally``.

Each table of a chunk draws from its own ``random.Random`` seeded with (seed, table, the
chunk's part and first id) (``chunk_rng``), so a seeded build holds the same rows whatever the
number of build processes and whichever process makes which chunk (``share``). The broker
table (``broker_rows``) comes last, from the tallies of every chunk.
"""

from __future__ import annotations

import heapq
import math
import random as _random
from dataclasses import dataclass

from . import market
from . import reference as ref
from .scale import Scale
from .schema import TABLES

#: Customers per customers chunk, companies per companies chunk, securities per securities
#: chunk (fixed: the chunks seed the generators).
CUSTOMER_CHUNK = 100
COMPANY_CHUNK = 100
SECURITY_CHUNK = 60

KINDS = ("market", "customers")

#: The digest's rows of the drawn tables: per customer, and per loaded trade.
PER_CUSTOMER = {"customer_account": 5.0, "account_permission": 7.1, "watch_item": 100.0,
                "holding_summary": 49.8}
PER_TRADE = {"trade": 1.0, "trade_history": 2.4, "settlement": 1.0, "cash_transaction": 0.92,
             "holding": 0.051, "holding_history": 1.34}
#: The days of trading of the digest's ratios: open lots (holding) grow as the square root of
#: the days (a position's lots are a random walk), 0.051 per trade at 300 days, 0.39 at 5.
DIGEST_DAYS = 300
#: The relative cost of a row of COPY text, of a news item (about 100 kB: some 2,000 rows').
_NEWS_COST = 2_000


@dataclass(frozen=True)
class Chunk:
    """Rows ``first`` .. ``first + count - 1`` of a ``kind`` ("market" or "customers"); a
    market chunk's ``part`` says which ("fixed", "companies", "securities")."""

    kind: str
    index: int
    first: int
    count: int
    part: str = ""


def chunk_rng(seed: int, table: str, chunk: Chunk) -> _random.Random:
    """The generator of ``table``'s rows in ``chunk``."""
    return _random.Random(f"oltplab-brokerage:{seed}:{table}:{chunk.part}:{chunk.first}")


def _runs(kind: str, part: str, first: int, total: int, per: int, index: int) -> list[Chunk]:
    return [Chunk(kind, index + k, start, min(per, first + total - start), part)
            for k, start in enumerate(range(first, first + total, per))]


def plan(scale: Scale) -> list[Chunk]:
    """Every chunk of a build of ``scale``: the market's (indexes 0, 1 ...), then the
    customers' (indexes 0, 1 ... of their own)."""
    market_chunks = [Chunk("market", 0, 0, len(market.FIXED_ROWS), "fixed")]
    market_chunks += _runs("market", "companies", 1, ref.companies(scale), COMPANY_CHUNK, 1)
    market_chunks += _runs("market", "securities", 0, ref.securities(scale), SECURITY_CHUNK,
                           len(market_chunks))
    return market_chunks + _runs("customers", "", 1, scale.customers, CUSTOMER_CHUNK, 0)


def _loaded_trades(scale: Scale) -> float:
    """About how many trades a build loads: 100 of every 101 trade ids."""
    return scale.trades * 100 / 101


def chunk_cost(scale: Scale, chunk: Chunk) -> float:
    """About how much COPY text ``chunk`` makes, in rows (a news item counts _NEWS_COST).
    PostgreSQL took about the same time per unit of each kind (one session, 1,000 customers x
    30 days: 250,000-320,000 a second for a companies, a securities and a customers chunk)."""
    if chunk.kind == "customers":
        per = (5 + sum(PER_CUSTOMER.values())
               + _loaded_trades(scale) / scale.customers * sum(PER_TRADE.values()))
        return chunk.count * per
    if chunk.part == "fixed":
        return float(sum(market.FIXED_ROWS.values()))
    if chunk.part == "companies":
        return chunk.count * (1 + market.COMPETITORS + 4 * market.FINANCIAL_YEARS + 1
                              + market.NEWS_PER_COMPANY * (1 + _NEWS_COST))
    return chunk.count * (2 + ref.DAILY_MARKET_DAYS)


def _order(chunk: Chunk) -> tuple[int, int]:
    return KINDS.index(chunk.kind), chunk.index


def deal_order(scale: Scale) -> list[Chunk]:
    """The chunks of ``plan(scale)``, the costliest first: the order in which a build's
    processes take them (each the next when it is free), so that the last ones taken are the
    smallest and the processes end close together."""
    return sorted(plan(scale), key=lambda c: (-chunk_cost(scale, c), _order(c)))


def share(scale: Scale, workers: int) -> list[list[Chunk]]:
    """The chunks of ``plan(scale)`` dealt to ``workers`` processes beforehand (some may get
    none): the costliest first, each to the least loaded by chunk_cost; each process's chunks
    in plan order (market first). The build's processes take theirs as they come free
    (chunks.load_jobs); the build benchmark's ceiling writes its files per process by this."""
    loads = [(0.0, k) for k in range(max(1, workers))]
    dealt: list[list[Chunk]] = [[] for _ in loads]
    for chunk in deal_order(scale):
        load, k = heapq.heappop(loads)
        dealt[k].append(chunk)
        heapq.heappush(loads, (load + chunk_cost(scale, chunk), k))
    for chunks in dealt:
        chunks.sort(key=_order)
    return dealt


def fixed_rows() -> dict[str, int]:
    """The rows of the nine fixed tables (the same at every scale)."""
    return dict(market.FIXED_ROWS)


def exact_rows(scale: Scale) -> dict[str, int]:
    """The rows of every table whose count does not depend on the draws: the fixed and market
    tables, and of the customers' side customer, customer_taxrate (a national and a
    divisional rate each), watch_list (one each), address (exchanges', companies' and
    customers'), broker, and trade_request (empty: every loaded trade completes)."""
    rows = fixed_rows()
    rows.update(market.market_rows(scale))
    rows.update(customer=scale.customers, customer_taxrate=2 * scale.customers,
                watch_list=scale.customers, address=ref.addresses(scale),
                broker=ref.brokers(scale), trade_request=0)
    return rows


def estimated_rows(scale: Scale) -> dict[str, int]:
    """About how many rows each table gets: exact_rows, and the digest's ratios for the drawn
    tables (per customer, per loaded trade; holding's for the scale's days)."""
    rows = exact_rows(scale)
    trades = _loaded_trades(scale)
    rows.update({t: round(per * scale.customers) for t, per in PER_CUSTOMER.items()})
    rows.update({t: round(per * trades) for t, per in PER_TRADE.items()})
    rows["holding"] = round(PER_TRADE["holding"] * trades * math.sqrt(DIGEST_DAYS / scale.days))
    return {t: rows[t] for t in TABLES}


def expected_rows(scale: Scale) -> int:
    """About how many rows a build loads (for its progress)."""
    return sum(estimated_rows(scale).values())


def chunk_rows(seed: int, scale: Scale, chunk: Chunk, tally):
    """The rows of one chunk as (table, COPY text, rows) pieces; a customers chunk adds its
    completed trades to ``tally`` (``new_tally``)."""
    if chunk.kind == "customers":
        from . import customers  # the customers' side imports the trades' modules

        yield from customers.chunk_rows(seed, scale, chunk.first, chunk.count, tally)
        return

    def rng_of(table: str) -> _random.Random:
        return chunk_rng(seed, table, chunk)

    if chunk.part == "fixed":
        yield from market.fixed_tables(scale)
    elif chunk.part == "companies":
        yield from market.company_tables(rng_of, chunk.first, chunk.count, scale)
    else:
        yield from market.security_tables(rng_of, chunk.first, chunk.count, scale)


def new_tally(scale: Scale):
    """An empty per-broker tally (trades.new_tally)."""
    from . import trades

    return trades.new_tally(scale)


def add_tally(total, more) -> None:
    """Add one tally to another, in place (trades.add_tally)."""
    from . import trades

    trades.add_tally(total, more)


def broker_rows(scale: Scale, tally) -> str:
    """The broker table's COPY text, from the tally of every chunk (trades.broker_rows)."""
    from . import trades

    return trades.broker_rows(scale, tally)

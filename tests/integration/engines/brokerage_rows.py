"""A small brokerage made by hand for the transactions' tests on both engines (PostgreSQL's
functions, MariaDB's procedures): the fixed tables' rows the frames read, 2 customers with 3
accounts, 2 brokers, 3 companies and their 3 securities, and a few completed trades whose lots
the tests sell and cover.

Customer 1 (tier 2, tax rates N10 20% + D000 0%) owns account 1 (cash, tax status 1), which
holds 600 ABC in three lots: trade 1, 100 at $20.00 (Jan 6); trade 2, 200 at $22.00 (Jan 7);
trade 3, 300 at $24.00 (Jan 8); and account 2 (tax status 0), 100 DEF at $25.00 (trade 4).
Customer 2 (tier 1, the same rates) owns account 11 (tax status 2), with nothing held. Ann
Other may trade on account 1 (a permission). Trade 5 is account 11's pending limit buy of
GHI (a trade_request row). New trade ids start at 1,000 (seq_trade_id).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal as D

from oltplab.workloads.brokerage import reference as ref
from oltplab.workloads.brokerage.schema import COLUMNS

DAY = dt.date(2025, 1, 6)
SYMBOLS = ("ABC", "DEF", "GHI")
#: security -> (company, exchange, last price)
SECURITIES = {"ABC": (1, "NYSE", D("25.00")), "DEF": (2, "NASDAQ", D("26.00")),
              "GHI": (3, "AMEX", D("22.00"))}
OWNER = ("Carl", "Owner", "TAX-1")  # customer 1: first, last name, tax id
FRIEND = ("Ann", "Other", "TAX-F")
FIRST_NEW_TRADE = 1000


def ts(day: int, hour: int = 10) -> dt.datetime:
    """A time on day ``day`` (0 = Jan 6, 2025)."""
    return dt.datetime.combine(DAY + dt.timedelta(days=day), dt.time(hour))


def _fixed() -> dict[str, list[tuple]]:
    tiers = ref.TIERS
    return {
        "trade_type": [(tt, name, bool(s), bool(m)) for tt, name, s, m in ref.TRADE_TYPES],
        "status_type": list(ref.STATUS_TYPES),
        "charge": [(tt, tier, D(ref.charge_cents(tt, tier)) / 100)
                   for tt, *_ in ref.TRADE_TYPES for tier in tiers],
        "commission_rate": [(tier, tt, ex, lo, hi,
                             D(ref.commission_hundredths(tier, tt, ex, lo)) / 100)
                            for tier in tiers for tt, *_ in ref.TRADE_TYPES
                            for ex in ref.EXCHANGES for lo, hi in ref.QTY_BANDS],
        "exchange": [(ex, f"{ex} exchange", 1, 930, 1600, f"the {ex} floor", k + 1)
                     for k, ex in enumerate(ref.EXCHANGES)],
        "sector": [("SA", "Energy"), ("SB", "Technology")],
        "industry": [("IA", "Oil", "SA"), ("IB", "Software", "SB")],
        "taxrate": [(tx, f"Rate {tx}", D(ref.tax_rate(tx)) / 100_000)
                    for tx in ("N10", "D000", "D001")],
        "zip_code": [("10001", "Springfield", "North"), ("20002", "Riverton", "South")],
    }


def _market() -> dict[str, list[tuple]]:
    companies = [(1, "ACTV", "Acme Oil", "IA", "AAA", "Jo Acme", 5, "oil", DAY),
                 (2, "ACTV", "Delta Soft", "IB", "ABA", "Di Delta", 6, "software", DAY),
                 (3, "ACTV", "Gamma Oil", "IA", "BBB", "Gus Gamma", 7, "oil", DAY)]
    securities = [(symb, "COMMON", "ACTV", f"{symb} common", ex, co, 1_000_000, DAY, DAY,
                   D("12.50"), D("30.00"), DAY, D("19.00"), DAY, D("0.50"), D("2.00"))
                  for symb, (co, ex, _) in SECURITIES.items()]
    daily = [(DAY + dt.timedelta(days=d), symb, D(20 + d), D(21 + d), D(19 + d), 1000 + d)
             for symb in SYMBOLS for d in range(5)]
    return {
        "address": [(k, f"{k} Market St", None, "10001", "USA") for k in range(1, 8)]
        + [(8, "8 Elm Rd", "Apt 1", "20002", "USA"), (9, "9 Oak Rd", None, "20002", "USA")],
        "company": companies,
        "company_competitor": [(1, 2, "IB"), (1, 3, "IA")],
        "security": securities,
        "last_trade": [(symb, ts(4), price, D("20.00"), 5000)
                       for symb, (_, _, price) in SECURITIES.items()],
        "daily_market": daily,
        "financial": [(1, 2024, q, dt.date(2024, 3 * q - 2, 2), D("1000.00"), D("100.00"),
                       D("1.00"), D("0.90"), D("10.00"), D("50.00"), D("900.00"),
                       D("400.00"), 100_000, 110_000) for q in (1, 2, 3, 4)],
        "news_item": [(1, "Acme finds oil", "Acme summary", "x" * 5000, ts(1), "Reporter",
                       "Wire"),
                      (2, "Acme pays dividend", "Dividend summary", "y" * 3000, ts(2), None,
                       "Wire")],
        "news_xref": [(1, 1), (2, 1)],
    }


def _customers() -> dict[str, list[tuple]]:
    def customer(c_id, names, tier, ad_id):
        first, last, tax_id = names
        return (c_id, tax_id, "ACTV", last, first, "M", "M", tier, dt.date(1970, 1, 1), ad_id,
                "1", "555", "1234567", None, None, None, None, None, None, None, None, None,
                f"{first.lower()}@example.com", f"{first.lower()}2@example.com")

    return {
        "customer": [customer(1, OWNER, 2, 8), customer(2, ("Bea", "Second", "TAX-2"), 1, 9)],
        "customer_account": [(1, 1, 1, "Carl cash", 1, D("10000.00")),
                             (2, 1, 1, "Carl plain", 0, D("5000.00")),
                             (11, 2, 2, "Bea main", 2, D("20000.00"))],
        "account_permission": [(1, "0001", OWNER[2], OWNER[1], OWNER[0]),
                               (1, "0011", FRIEND[2], FRIEND[1], FRIEND[0]),
                               (11, "0001", "TAX-2", "Second", "Bea")],
        "customer_taxrate": [("N10", 1), ("D000", 1), ("N10", 2), ("D000", 2)],
        "broker": [(1, "ACTV", "Broker One", 0, D("0.00")),
                   (2, "ACTV", "Broker Two", 0, D("0.00"))],
        "watch_list": [(1, 1)],
        "watch_item": [(1, "ABC"), (1, "DEF")],
    }


#: The loaded lots: (t_id, account, symbol, day, price, qty).
LOTS = ((1, 1, "ABC", 0, D("20.00"), 100), (2, 1, "ABC", 1, D("22.00"), 200),
        (3, 1, "ABC", 2, D("24.00"), 300), (4, 2, "DEF", 0, D("25.00"), 100))


def _trades() -> dict[str, list[tuple]]:
    trade, history, settlement, cash = [], [], [], []
    for t_id, acct, symb, day, price, qty in LOTS:
        value = price * qty
        trade.append((t_id, ts(day), "CMPT", "TMB", True, symb, qty, price, acct,
                      "Carl Owner", price, D("8.00"), D("1.00"), D("0.00"), False))
        history += [(t_id, ts(day, 9), "SBMT"), (t_id, ts(day), "CMPT")]
        settlement.append((t_id, "Cash Account", DAY + dt.timedelta(days=day + 2),
                           -(value + 9)))
        cash.append((t_id, ts(day), -(value + 9), f"Market-Buy {qty} shares of {symb}"))
    trade.append((5, ts(3), "PNDG", "TLB", True, "GHI", 200, D("21.00"), 11, "Bea Second",
                  None, D("12.00"), D("1.00"), D("0.00"), False))
    history.append((5, ts(3), "PNDG"))
    return {
        "trade": trade, "trade_history": history, "settlement": settlement,
        "cash_transaction": cash,
        "holding": [(t_id, acct, symb, ts(day), price, qty)
                    for t_id, acct, symb, day, price, qty in LOTS],
        "holding_history": [(t_id, t_id, 0, qty) for t_id, _, _, _, _, qty in LOTS],
        "holding_summary": [(1, "ABC", 600), (2, "DEF", 100)],
        "trade_request": [(5, "TLB", "GHI", 200, D("21.00"), 2)],
    }


def rows() -> dict[str, list[tuple]]:
    """table -> its rows, each a tuple in schema.COLUMNS order."""
    out = {**_fixed(), **_market(), **_customers(), **_trades()}
    for table, table_rows in out.items():
        assert all(len(r) == len(COLUMNS[table]) for r in table_rows), table
    return out

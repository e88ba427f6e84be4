"""The brokerage's reference data and id layout, the same for every build (no build seed):
trade and status types, exchanges, charges, commission rates, tax rates, how many companies,
securities and brokers a scale has, each security's symbol, company and exchange, and where
each kind of address sits among the address ids. The rows of the fixed and market tables are
made from these by workloads/brokerage/market.py; the customers' side and the trades
(customers.py, trades.py) look them up here, and so do the run's inputs.

Money is handled in whole cents, commission rates in hundredths of a percent, tax rates in
hundred-thousandths (NUMERIC(6,5)), so that a build's totals are exact.
"""

from __future__ import annotations

import datetime

from .scale import LOAD_UNIT, Scale

#: (tt_id, tt_name, tt_is_sell, tt_is_mrkt)
TRADE_TYPES = (("TMB", "Market-Buy", 0, 1), ("TMS", "Market-Sell", 1, 1),
               ("TSL", "Stop-Loss", 1, 0), ("TLS", "Limit-Sell", 1, 0),
               ("TLB", "Limit-Buy", 0, 0))
IS_SELL = {tt: bool(sell) for tt, _, sell, _ in TRADE_TYPES}
IS_MARKET = {tt: bool(mrkt) for tt, _, _, mrkt in TRADE_TYPES}
#: (st_id, st_name)
STATUS_TYPES = (("CMPT", "Completed"), ("ACTV", "Active"), ("SBMT", "Submitted"),
                ("PNDG", "Pending"), ("CNCL", "Canceled"))
#: The exchanges' ids, in order (ex_id); exchange k's address is ad_id k + 1.
EXCHANGES = ("NYSE", "NASDAQ", "AMEX", "PCX")
TIERS = (1, 2, 3)

#: Per load unit.
COMPANIES_PER_LU = 500
SECURITIES_PER_LU = 685
BROKERS_PER_LU = 10
#: Customer accounts per customer, at most (ca_id = (c_id - 1) * MAX_ACCOUNTS + k, k >= 1).
MAX_ACCOUNTS = 10

#: The first day of the initial trading (a Monday; days of trading are weekdays) and of the
#: trading day (09:00); daily_market's 1,305 weekdays end the day before it.
START_DATE = datetime.date(2025, 1, 6)
DAY_OPENS = datetime.time(9, 0)
DAILY_MARKET_DAYS = 1_305

#: Charges in cents per (trade type, customer tier): tier 1 pays most.
_CHARGE_CENTS = {"TMB": (1000, 800, 500), "TMS": (1000, 800, 500), "TSL": (1500, 1200, 900),
                 "TLS": (1500, 1200, 900), "TLB": (1500, 1200, 900)}
#: The quantity bands of commission_rate: (from_qty, to_qty), inclusive.
QTY_BANDS = ((0, 200), (201, 400), (401, 800), (801, 100_000_000))


def charge_cents(tt_id: str, tier: int) -> int:
    """ch_chrg of (tt_id, tier), in cents."""
    return _CHARGE_CENTS[tt_id][tier - 1]


def commission_hundredths(tier: int, tt_id: str, ex_id: str, qty: int) -> int:
    """cr_rate of the band holding ``qty``, in hundredths of a percent (0.40% -> 40): lower
    for a higher tier, a larger quantity and a market order; 5 + tier/type/exchange/band
    terms, so that the 240 rows differ."""
    band = next(k for k, (lo, hi) in enumerate(QTY_BANDS) if lo <= qty <= hi)
    return (5 + 10 * (3 - tier) + (8 if not IS_MARKET[tt_id] else 0)
            + 2 * EXCHANGES.index(ex_id) + 6 * (3 - band))


def companies(scale: Scale) -> int:
    return COMPANIES_PER_LU * scale.customers // LOAD_UNIT


def securities(scale: Scale) -> int:
    return SECURITIES_PER_LU * scale.customers // LOAD_UNIT


def brokers(scale: Scale) -> int:
    return BROKERS_PER_LU * scale.customers // LOAD_UNIT


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def symbol(index: int) -> str:
    """s_symb of security ``index`` (0-based): distinct uppercase tickers, 3 letters for the
    first 17,576, then 4, 5 ... (a bijective, scrambled numbering: neighbours differ)."""
    width, base = 3, 0
    while index - base >= 26 ** width:
        base += 26 ** width
        width += 1
    n = ((index - base) * 7_919 + 1_234) % (26 ** width)  # 7,919 is prime to 26
    out = []
    for _ in range(width):
        n, r = divmod(n, 26)
        out.append(_LETTERS[r])
    return "".join(reversed(out))


def company_of(index: int, scale: Scale) -> int:
    """s_co_id of security ``index``: companies 1..companies in turn (a company has one or two
    issues)."""
    return index % companies(scale) + 1


def issue_of(index: int, scale: Scale) -> int:
    """The security's issue among its company's: 0 for the first (COMMON), 1 for the next."""
    return index // companies(scale)


def exchange_of(index: int) -> str:
    """s_ex_id of security ``index``."""
    return EXCHANGES[index % len(EXCHANGES)]


def exchange_address(k: int) -> int:
    """ad_id of exchange ``k`` (0-based)."""
    return k + 1


def company_address(co_id: int) -> int:
    return len(EXCHANGES) + co_id


def customer_address(c_id: int, scale: Scale) -> int:
    return len(EXCHANGES) + companies(scale) + c_id


def addresses(scale: Scale) -> int:
    """address rows: the exchanges', the companies' and the customers'."""
    return len(EXCHANGES) + companies(scale) + scale.customers


def account_id(c_id: int, k: int) -> int:
    """ca_id of customer ``c_id``'s account ``k`` (1-based)."""
    return (c_id - 1) * MAX_ACCOUNTS + k


#: taxrate's ids: 20 national rates, 300 divisional ones (a customer has one of each).
NATIONAL_TAX_IDS = tuple(f"N{k:02d}" for k in range(20))
DIVISIONAL_TAX_IDS = tuple(f"D{k:03d}" for k in range(300))


def tax_rate(tx_id: str) -> int:
    """tx_rate of ``tx_id`` in hundred-thousandths (0.12500 -> 12,500): national rates
    10% to 29%, divisional ones 0% to 9.966%."""
    k = int(tx_id[1:])
    if tx_id[0] == "N":
        return 10_000 + 1_000 * k
    return (k * 37 % 300) * 100 // 3  # 37 is prime to 300: distinct rates


#: zip_code's rows: the codes zip_code(0) .. zip_code(ZIP_CODES - 1).
ZIP_CODES = 14_741


def zip_code(k: int) -> str:
    """zc_code of zip code ``k`` (0-based, below ZIP_CODES): distinct 5-digit codes from 10000
    to 99999, scattered (7,919 is prime to 90,000)."""
    return f"{10_000 + (k * 7_919 + 3_001) % 90_000}"


#: The hours of a day of trading (8): from DAY_OPENS to DAY_CLOSES.
DAY_CLOSES = datetime.time(17, 0)


def trading_date(day: int) -> datetime.date:
    """The date of day ``day`` (0-based) of the initial trading: the day-th weekday from
    START_DATE (a Monday)."""
    weeks, weekday = divmod(day, 5)
    return START_DATE + datetime.timedelta(days=7 * weeks + weekday)


def trading_end(scale: Scale) -> datetime.datetime:
    """When the initial trading ends: the close (DAY_CLOSES) of its last day; last_trade's
    lt_dts."""
    return datetime.datetime.combine(trading_date(scale.days - 1), DAY_CLOSES)

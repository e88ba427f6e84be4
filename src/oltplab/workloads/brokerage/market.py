"""The rows of the brokerage's fixed and market tables as COPY text (pure, no database).

Fixed tables (``fixed_tables``): the same rows in every build, from reference.py and words.py
(exchange's ex_num_symb counts the scale's securities on each exchange). zip_code holds
reference.ZIP_CODES codes, each in a town and a division; every address (exchanges,
companies, and the customers' of customers.py) takes one of them (``address_rows``).

Market tables, per load unit of 1,000 customers: company 500, company_competitor 1,500,
financial 10,000, news_item and news_xref 1,000, the companies' addresses 500
(``company_tables``); security and last_trade 685, daily_market 685 x 1,305
(``security_tables``). What depends on a company or a security alone (its name, industry,
symbol, exchange) is a pure function of its id, so that any chunk can name another chunk's
company; the drawn values come from the ``random.Random`` the caller seeds per table and
chunk (population.chunk_rng).

The data:
- company: status ACTV, a unique name (``company_name``), industry ``industry_of``, a rating,
  a CEO, a one-line description, opened between 1800 and 1949; 3 competitors (other
  companies, with the competitor's industry); 20 quarters of financials, the 5 years before
  START_DATE's year; 2 news items, each NEWS_ITEM_CHARS characters of text dated in the year
  before START_DATE.
- security: issue COMMON or PREF_A (reference.issue_of), started between 1950 and 1999,
  listed on its exchange since then; s_52wk_high/low are the highest dm_high and lowest dm_low
  of its last 260 daily_market rows (52 weeks), with their dates.
- daily_market: DAILY_MARKET_DAYS weekdays ending the last weekday before START_DATE, all
  prices $20.00-$30.00 with high >= close >= low; each security's closes lie in a band of
  $4.00 (one of DM_BANDS, drawn), so that securities differ; each row is one of its band's
  4,096 (close, high, low, volume) combinations, drawn from the chunk's generator.
- last_trade: price and open price in the security's band, at reference.trading_end (the
  close of the last day of the initial trading).

Speed: daily_market and news_item text is put together by C-level joins and maps of
precomputed strings (``_dm_values``, ``news_text``: made once per process from constant
seeds, in about 0.2 s); one core makes daily_market at about 1.5 million rows (60 MB) a second
and news items at about 600 MB a second (docs/design.md).
"""

from __future__ import annotations

import datetime
import functools
import random as _random
import sys
from array import array
from itertools import chain, repeat

from . import reference as ref
from . import words
from .scale import Scale

COMPETITORS = 3
FINANCIAL_YEARS = 5
NEWS_PER_COMPANY = 2
#: Characters of a news item's text (ni_item: TPC-E's 100,000-byte column, about 100 kB).
NEWS_ITEM_CHARS = 100_000
#: daily_market's prices: each security's closes lie in one of DM_BANDS bands BAND_WIDTH
#: cents wide, from $20.00 to $30.00 (band_floor); a row is one of its band's _BAND_VALUES
#: combinations of (close, high, low, volume), picked by 16 random bits.
DM_BANDS = 16
BAND_WIDTH = 400
DM_VALUES = 1 << 16
_BAND_VALUES = 1 << 12
#: daily_market rows of the last 52 weeks (the 52-week high and low).
WEEKS_52 = 52 * 5
ISSUES = ("COMMON", "PREF_A", "PREF_B", "PREF_C", "PREF_D")
_ISSUE_NAMES = ("Common Stock", "Preferred A", "Preferred B", "Preferred C", "Preferred D")
#: Prices in cents.
PRICE_LOW, PRICE_HIGH = 2_000, 3_000
#: Seconds of the year of news before START_DATE.
_NEWS_SPAN = 365 * 86_400
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_START = datetime.datetime.combine(ref.START_DATE, datetime.time())
#: zc_code of zip code k, 0 <= k < reference.ZIP_CODES (reference.zip_code).
zip_code = ref.zip_code


def money(cents: int) -> str:
    """COPY text of an amount in cents: 1234 -> "12.34", -5 -> "-0.05"."""
    sign, cents = ("-", -cents) if cents < 0 else ("", cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def _day(ordinal: int) -> str:
    return datetime.date.fromordinal(ordinal).isoformat()


def _ordinal(year: int) -> int:
    return datetime.date(year, 1, 1).toordinal()


# ------------------------------------------------------------------------------------------
# Pure functions of an id


def industry_id(k: int) -> str:
    """in_id of industry ``k`` (0-based, words.INDUSTRIES order): "AA", "AB" ... "DX"."""
    return _LETTERS[k // 26] + _LETTERS[k % 26]


def industry_of(co_id: int) -> int:
    """The industry (0-based) of company ``co_id``: each run of 102 companies holds every
    industry once (41 is prime to 102)."""
    return (co_id - 1) * 41 % len(words.INDUSTRIES)


_FORMS = len(words.COMPANY_FORMS)
_TRADE_FORMS = len(words.COMPANY_TRADES) * _FORMS
_NAMES = len(words.COMPANY_WORDS) * _TRADE_FORMS  # 13,248 (= 2^6 x 3^2 x 23)


def company_name(co_id: int) -> str:
    """co_name of ``co_id``: distinct for every id (a word, a trade, a legal form, scattered;
    from company 13,249 on a number before the form), at most 50 characters."""
    n, k = divmod(co_id - 1, _NAMES)
    k = (k * 7_907 + 101) % _NAMES  # 7,907 is prime to 13,248
    a, rest = divmod(k, _TRADE_FORMS)
    b, c = divmod(rest, _FORMS)
    number = f" {n + 1}" if n else ""
    return (f"{words.COMPANY_WORDS[a]} {words.COMPANY_TRADES[b]}{number} "
            f"{words.COMPANY_FORMS[c]}")


def security_name(index: int, scale: Scale) -> str:
    """s_name of security ``index``: its company's name and its issue."""
    return (f"{company_name(ref.company_of(index, scale))} "
            f"{_ISSUE_NAMES[ref.issue_of(index, scale)]}")


def daily_market_dates() -> tuple[datetime.date, ...]:
    """daily_market's DAILY_MARKET_DAYS weekdays, oldest first, ending the last weekday before
    START_DATE."""
    out, day = [], ref.START_DATE
    while len(out) < ref.DAILY_MARKET_DAYS:
        day -= datetime.timedelta(days=1)
        if day.weekday() < 5:
            out.append(day)
    return tuple(reversed(out))


# ------------------------------------------------------------------------------------------
# Fixed tables

#: The fixed tables' rows (the same at every scale).
FIXED_ROWS = {
    "charge": len(ref.TRADE_TYPES) * len(ref.TIERS),
    "commission_rate": (len(ref.TIERS) * len(ref.TRADE_TYPES) * len(ref.EXCHANGES)
                        * len(ref.QTY_BANDS)),
    "exchange": len(ref.EXCHANGES),
    "industry": len(words.INDUSTRIES),
    "sector": len(words.SECTORS),
    "status_type": len(ref.STATUS_TYPES),
    "taxrate": len(ref.NATIONAL_TAX_IDS) + len(ref.DIVISIONAL_TAX_IDS),
    "trade_type": len(ref.TRADE_TYPES),
    "zip_code": ref.ZIP_CODES,
}


def _lines(rows) -> str:
    return "".join("\t".join(map(str, row)) + "\n" for row in rows)


def _rate(value: int, places: int) -> str:
    whole, part = divmod(value, 10 ** places)
    return f"{whole}.{part:0{places}d}"


def exchange_symbols(k: int, scale: Scale) -> int:
    """ex_num_symb of exchange ``k`` (0-based): the securities of ``scale`` listed on it
    (reference.exchange_of deals them in turn)."""
    n = len(ref.EXCHANGES)
    return (ref.securities(scale) - k + n - 1) // n


def zip_place(k: int) -> tuple[str, str]:
    """(zc_town, zc_div) of zip code ``k``: divisions hold runs of codes, towns several codes
    each."""
    division = words.DIVISIONS[k * len(words.DIVISIONS) // ref.ZIP_CODES]
    return words.TOWNS[k * 37 % len(words.TOWNS)], division


def _fixed_text(scale: Scale) -> dict[str, str]:
    tts = [tt for tt, *_ in ref.TRADE_TYPES]
    text = {
        "charge": _lines((tt, tier, money(ref.charge_cents(tt, tier)))
                         for tt in tts for tier in ref.TIERS),
        "commission_rate": _lines(
            (tier, tt, ex, lo, hi, _rate(ref.commission_hundredths(tier, tt, ex, lo), 2))
            for tier in ref.TIERS for tt in tts for ex in ref.EXCHANGES
            for lo, hi in ref.QTY_BANDS),
        "exchange": _lines(
            (ex, words.EXCHANGE_NAMES[k], exchange_symbols(k, scale), 930, 1600,
             words.EXCHANGE_DESC[k], ref.exchange_address(k))
            for k, ex in enumerate(ref.EXCHANGES)),
        "industry": _lines((industry_id(k), name, words.SECTORS[words.INDUSTRY_SECTOR[k]][0])
                           for k, name in enumerate(words.INDUSTRIES)),
        "sector": _lines((sc_id, name) for sc_id, name, _ in words.SECTORS),
        "status_type": _lines(ref.STATUS_TYPES),
        "taxrate": _lines(
            [(tx, f"{words.NATIONS[k]} national income tax", _rate(ref.tax_rate(tx), 5))
             for k, tx in enumerate(ref.NATIONAL_TAX_IDS)]
            + [(tx, f"{words.DIVISIONS[k % len(words.DIVISIONS)]} district "
                    f"{k // len(words.DIVISIONS) + 1} income tax", _rate(ref.tax_rate(tx), 5))
               for k, tx in enumerate(ref.DIVISIONAL_TAX_IDS)]),
        "trade_type": _lines(ref.TRADE_TYPES),
        "zip_code": _lines((zip_code(k), *zip_place(k)) for k in range(ref.ZIP_CODES)),
    }
    return text


def fixed_tables(scale: Scale) -> list[tuple[str, str, int]]:
    """The nine fixed tables as (table, COPY text, rows), and the exchanges' addresses (their
    zip codes and streets chosen by a generator of constant seed)."""
    text = _fixed_text(scale)
    out = [(table, text[table], FIXED_ROWS[table]) for table in FIXED_ROWS]
    ids = [ref.exchange_address(k) for k in range(len(ref.EXCHANGES))]
    out.append(("address", address_rows(_random.Random("oltplab-brokerage:exchanges"), ids),
                len(ids)))
    return out


# ------------------------------------------------------------------------------------------
# Companies


def address_rows(rng, ids) -> str:
    """address rows of ``ids``: a number, a street and its kind, one in four with a suite, a
    uniform zip code of zip_code's, words.COUNTRY."""
    rand = rng.random
    names, kinds = words.STREET_NAMES, words.STREET_KINDS
    out = []
    for ad_id in ids:
        r = rand()
        line2 = f"Suite {int(r * 4_000) + 100}" if r < 0.25 else "\\N"
        out.append(f"{ad_id}\t{int(rand() * 9_999) + 1} {names[int(rand() * len(names))]} "
                   f"{kinds[int(rand() * len(kinds))]}\t{line2}\t"
                   f"{zip_code(int(rand() * ref.ZIP_CODES))}\t{words.COUNTRY}\n")
    return "".join(out)


def person(rand) -> str:
    """A first and a last name (at most 24 characters)."""
    first, last = words.FIRST_NAMES, words.LAST_NAMES
    return f"{first[int(rand() * len(first))]} {last[int(rand() * len(last))]}"


def company_rows(rng, first: int, count: int) -> str:
    """company ``first`` .. ``first + count - 1``."""
    rand = rng.random
    ratings, towns = words.RATINGS, words.TOWNS
    opened, span = _ordinal(1800), _ordinal(1950) - _ordinal(1800)
    out = []
    for co_id in range(first, first + count):
        industry = industry_of(co_id)
        desc = (f"{words.INDUSTRIES[industry]} from {towns[int(rand() * len(towns))]}, "
                f"{int(rand() * 99_000) + 1_000} employees")
        out.append(f"{co_id}\tACTV\t{company_name(co_id)}\t{industry_id(industry)}\t"
                   f"{ratings[int(rand() * len(ratings))]}\t{person(rand)}\t"
                   f"{ref.company_address(co_id)}\t{desc}\t{_day(opened + int(rand() * span))}\n")
    return "".join(out)


def competitor_rows(rng, first: int, count: int, scale: Scale) -> str:
    """company_competitor: COMPETITORS other companies of each company, distinct, with the
    competitor's industry (cp_in_id)."""
    companies = ref.companies(scale)
    rand = rng.random
    out = []
    for co_id in range(first, first + count):
        chosen: list[int] = []
        while len(chosen) < COMPETITORS:
            other = int(rand() * companies) + 1
            if other != co_id and other not in chosen:
                chosen.append(other)
        out += [f"{co_id}\t{other}\t{industry_id(industry_of(other))}\n" for other in chosen]
    return "".join(out)


_QUARTERS = tuple((year, q, datetime.date(year, 3 * q - 2, 1).isoformat())
                  for year in range(ref.START_DATE.year - FINANCIAL_YEARS, ref.START_DATE.year)
                  for q in range(1, 5))


def financial_rows(rng, first: int, count: int) -> str:
    """financial: the 20 quarters of the 5 years before START_DATE's, of each company; the
    amounts agree (earnings = revenue x margin, EPS = earnings / shares, in cents rounded
    down; diluted shares >= basic shares)."""
    rand = rng.random
    out = []
    for co_id in range(first, first + count):
        base = int(1e8 + rand() * 5e11)  # quarterly revenue in cents: $1 million - $5 billion
        shares = int(1e6 + rand() * 2e9)
        for year, q, start in _QUARTERS:
            revenue = int(base * (0.8 + 0.4 * rand()))
            margin = int(rand() * 41) - 10  # hundredths: -0.10 .. 0.30
            earn = revenue * margin // 100
            diluted = shares + int(shares * 0.05 * rand())
            assets = int(revenue * (2 + 6 * rand()))
            out.append(f"{co_id}\t{year}\t{q}\t{start}\t{money(revenue)}\t{money(earn)}\t"
                       f"{money(earn // shares)}\t{money(earn // diluted)}\t{money(margin)}\t"
                       f"{money(int(revenue * 0.3 * rand()))}\t{money(assets)}\t"
                       f"{money(int(assets * (0.2 + 0.7 * rand())))}\t{shares}\t{diluted}\n")
    return "".join(out)


# ------------------------------------------------------------------------------------------
# News

#: Characters of the text the news items are cut from (one per process).
NEWS_TEXT_CHARS = 2_000_000
#: news_item rows per piece of COPY text (about 1 MB).
NEWS_PIECE = 10


@functools.lru_cache(maxsize=1)
def news_text() -> str:
    """The text news items are cut from: sentences of 6 to 18 words.NEWS_WORDS, made once per
    process from a constant seed."""
    rng = _random.Random("oltplab-brokerage:news")
    choices, randint, vocabulary = rng.choices, rng.randint, words.NEWS_WORDS
    sentences, size = [], 0
    while size < NEWS_TEXT_CHARS + NEWS_ITEM_CHARS:
        sentence = " ".join(choices(vocabulary, k=randint(6, 18))).capitalize() + "."
        sentences.append(sentence)
        size += len(sentence) + 1
    return " ".join(sentences)


def _cut(text: str, at: int, length: int) -> str:
    """At most ``length`` characters of ``text`` from the word after ``at``, whole words."""
    start = text.find(" ", at) + 1
    piece = text[start:start + length + 1]
    return piece[:piece.rfind(" ")].capitalize()


def news_rows(rng, first: int, count: int):
    """news_item of companies ``first`` .. ``first + count - 1`` (ids NEWS_PER_COMPANY x
    (co_id - 1) + 1 ...), as (COPY text, rows) pieces of NEWS_PIECE items: a headline of at
    most 80 characters, a summary of at most 255, the item (NEWS_ITEM_CHARS characters cut at
    a uniform word of news_text), a time in the year before START_DATE, an author, a
    source."""
    text = news_text()
    rand = rng.random
    span = len(text) - NEWS_ITEM_CHARS - 100
    sources = words.NEWS_SOURCES
    ids = range(NEWS_PER_COMPANY * (first - 1) + 1, NEWS_PER_COMPANY * (first + count - 1) + 1)
    for k in range(0, len(ids), NEWS_PIECE):
        out = []
        for ni_id in ids[k:k + NEWS_PIECE]:
            start = text.find(" ", int(rand() * span)) + 1
            when = _START - datetime.timedelta(seconds=int(rand() * _NEWS_SPAN) + 1)
            out.append(f"{ni_id}\t{_cut(text, int(rand() * span), 80)}\t"
                       f"{_cut(text, int(rand() * span), 255)}\t"
                       f"{text[start:start + NEWS_ITEM_CHARS]}\t{when}\t{person(rand)}\t"
                       f"{sources[int(rand() * len(sources))]}\n")
        yield "".join(out), len(out)


def company_tables(rng_of, first: int, count: int, scale: Scale):
    """Every row of companies ``first`` .. ``first + count - 1`` as (table, COPY text, rows):
    company, company_competitor, financial, their addresses, news_item (in pieces) and
    news_xref; ``rng_of(table)`` is the chunk's generator of each table."""
    yield "company", company_rows(rng_of("company"), first, count), count
    yield ("company_competitor", competitor_rows(rng_of("company_competitor"), first, count,
                                                 scale), COMPETITORS * count)
    yield ("financial", financial_rows(rng_of("financial"), first, count),
           4 * FINANCIAL_YEARS * count)
    ids = [ref.company_address(co_id) for co_id in range(first, first + count)]
    yield "address", address_rows(rng_of("address"), ids), count
    for text, rows in news_rows(rng_of("news_item"), first, count):
        yield "news_item", text, rows
    yield ("news_xref", "".join(f"{NEWS_PER_COMPANY * (co_id - 1) + k + 1}\t{co_id}\n"
                                for co_id in range(first, first + count)
                                for k in range(NEWS_PER_COMPANY)),
           NEWS_PER_COMPANY * count)


# ------------------------------------------------------------------------------------------
# Securities

#: Securities per piece of daily_market COPY text (19,575 rows).
DM_PIECE = 15


def band_floor(band: int) -> int:
    """The lowest close (cents) of price band ``band``: $20.00, $20.40 ... $26.00."""
    return PRICE_LOW + band * (PRICE_HIGH - PRICE_LOW - BAND_WIDTH) // (DM_BANDS - 1)


@functools.lru_cache(maxsize=1)
def _dm_values() -> tuple[tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]], ...]:
    """Per price band, its _BAND_VALUES (close, high, low, volume) combinations of a
    daily_market row as text ("\\tclose\\thigh\\tlow\\tvol\\n", repeated to DM_VALUES
    entries, so that a 16-bit draw picks one), and their highs and lows in cents: close
    uniform in the band, high and low up to $1.00 away within $20.00-$30.00, volume 10,000 to
    5,000,000; made once per process from a constant seed."""
    rand = _random.Random("oltplab-brokerage:daily-market").random
    prices = {cents: money(cents) for cents in range(PRICE_LOW, PRICE_HIGH + 1)}
    out = []
    for band in range(DM_BANDS):
        floor = band_floor(band)
        texts, highs, lows = [], [], []
        for _ in range(_BAND_VALUES):
            close = floor + int(rand() * (BAND_WIDTH + 1))
            high = min(PRICE_HIGH, close + int(rand() * 101))
            low = max(PRICE_LOW, close - int(rand() * 101))
            texts.append(f"\t{prices[close]}\t{prices[high]}\t{prices[low]}\t"
                         f"{10_000 + int(rand() * 4_990_001)}\n")
            highs.append(high)
            lows.append(low)
        out.append((tuple(texts * (DM_VALUES // _BAND_VALUES)), tuple(highs), tuple(lows)))
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _dm_dates() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """daily_market_dates as text, and as the first field of a row ("date\\t")."""
    dates = tuple(d.isoformat() for d in daily_market_dates())
    return dates, tuple(d + "\t" for d in dates)


def _draws(rng, n: int) -> array:
    """``n`` uniform 16-bit draws (the same on machines of either byte order)."""
    draws = array("H", rng.randbytes(2 * n))
    if sys.byteorder == "big":
        draws.byteswap()
    return draws


def _extreme(values: list[int], best, dates) -> tuple[str, str]:
    value = best(values)
    return money(value), dates[len(dates) - len(values) + values.index(value)]


def security_tables(rng_of, first: int, count: int, scale: Scale):
    """Every row of securities ``first`` .. ``first + count - 1`` (0-based indexes) as (table,
    COPY text, rows): security, last_trade, and daily_market in pieces of DM_PIECE
    securities; ``rng_of(table)`` is the chunk's generator of each table."""
    values = _dm_values()
    dates, day_tabs = _dm_dates()
    days = len(dates)
    dm_rng = rng_of("daily_market")
    bands, draws = [], []
    for _ in range(count):
        bands.append(int(dm_rng.random() * DM_BANDS))
        draws.append(_draws(dm_rng, days))
    rand = rng_of("last_trade").random
    floors = [band_floor(band) for band in bands]
    prices = [floor + int(rand() * (BAND_WIDTH + 1)) for floor in floors]
    ended = ref.trading_end(scale)
    trades = "".join(f"{ref.symbol(first + k)}\t{ended}\t{money(price)}\t"
                     f"{money(floors[k] + int(rand() * (BAND_WIDTH + 1)))}\t"
                     f"{int(rand() * 990_000) + 10_000}\n" for k, price in enumerate(prices))
    rand = rng_of("security").random
    started, listed = _ordinal(1950), _ordinal(2000) - _ordinal(1950)
    out = []
    for k in range(count):
        i = first + k
        _, highs, lows = values[bands[k]]
        window = [u % _BAND_VALUES for u in draws[k][-WEEKS_52:]]
        high = _extreme([highs[u] for u in window], max, dates)
        low = _extreme([lows[u] for u in window], min, dates)
        start = started + int(rand() * listed)
        dividend = int(rand() * 251)
        out.append(f"{ref.symbol(i)}\t{ISSUES[ref.issue_of(i, scale)]}\tACTV\t"
                   f"{security_name(i, scale)}\t{ref.exchange_of(i)}\t{ref.company_of(i, scale)}"
                   f"\t{int(4e6 + rand() * 9.5e9)}\t{_day(start)}\t"
                   f"{_day(start + int(rand() * 3_650))}\t{money(100 + int(rand() * 9_900))}\t"
                   f"{high[0]}\t{high[1]}\t{low[0]}\t{low[1]}\t{money(dividend)}\t"
                   f"{money(dividend * 10_000 // prices[k])}\n")
    yield "security", "".join(out), count
    yield "last_trade", trades, count
    flat = chain.from_iterable
    for k in range(0, count, DM_PIECE):
        piece = range(k, min(count, k + DM_PIECE))
        yield ("daily_market",
               "".join(flat(flat(zip(day_tabs, repeat(ref.symbol(first + j)),
                                     map(values[bands[j]][0].__getitem__, draws[j])))
                            for j in piece)),
               days * len(piece))


def market_rows(scale: Scale) -> dict[str, int]:
    """The rows of the market tables at ``scale`` (address: the exchanges' and companies')."""
    companies, securities = ref.companies(scale), ref.securities(scale)
    return {"address": len(ref.EXCHANGES) + companies, "company": companies,
            "company_competitor": COMPETITORS * companies, "security": securities,
            "last_trade": securities, "daily_market": securities * ref.DAILY_MARKET_DAYS,
            "financial": 4 * FINANCIAL_YEARS * companies,
            "news_item": NEWS_PER_COMPANY * companies,
            "news_xref": NEWS_PER_COMPANY * companies}

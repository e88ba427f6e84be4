"""The customers' side of a TPC-E-derived brokerage build, as COPY text, chunk by chunk: the
customers, their accounts, permissions, tax rates, addresses and watch lists, then the chunk's
initial trading (trades.py) and the accounts' balances after it.

What the run must find again is fixed without the seed or drawn from (seed, c_id) alone:

- the tier (``tier_of``): per load unit of 1,000 customers, 200/600/200 in tiers 1/2/3, by a
  fixed scramble of the customer's position in its load unit; ``customer_of`` is its inverse
  (the run's customer selection draws a tier, a slot in it, and maps it to a c_id);
- the tax id (``tax_id``, unique), so that Customer-Position finds a customer by it;
- the accounts (``account_count``: 1-4 / 2-8 / 5-10 by tier, uniform, mean 5) and each
  account's basket (``baskets``: 2-18 distinct securities, uniform, mean 10), drawn from
  (seed, c_id): the securities the account trades at load and at run time.

The rest comes from the chunk's generator, seeded from (seed, "customers", first), so that a
seeded build holds the same rows whatever the number of build processes: names of
words.FIRST_NAMES and LAST_NAMES, gender, date of birth (1935-2005), three phones, two emails,
an address (reference.customer_address) in one of the zip codes (reference.zip_code), one
national and one divisional tax rate; per account a broker of the customer's load unit, a tax
status 0/1/2 (uniform), an opening balance U($10,000, $1,000,000), and 0/1/2 extra
permissions (60/38/2 %) held by other customers of the chunk (acl "0001", "0011"; the owner's
"0000"); a watch list (wl_id = c_id) of 50-150 distinct securities.
"""

from __future__ import annotations

import datetime
import functools
import random as _random

from . import reference as ref
from . import trades
from . import words
from .scale import LOAD_UNIT, Scale

#: Customers per tier in a load unit, tiers 1/2/3, and each tier's first position.
TIER_CUSTOMERS = (200, 600, 200)
_TIER_START = (0, 200, 800)
#: The fixed scramble of a position in a load unit: q = (p x _MUL + _ADD) mod LOAD_UNIT.
_MUL, _ADD = 367, 503
_INV = pow(_MUL, -1, LOAD_UNIT)
#: Accounts per customer by tier (at least, at most).
ACCOUNTS = ((1, 4), (2, 8), (5, 10))
BASKET = (2, 18)
WATCH_ITEMS = (50, 150)
#: Shares of accounts with 0, 1 and 2 extra permissions (cumulative), and their acls.
EXTRA_PERMISSIONS = (0.60, 0.98)
ACLS = ("0000", "0001", "0011")
OPENING_CENTS = (1_000_000, 100_000_000)
BIRTH_YEARS = (1935, 2005)
ACCOUNT_KINDS = ("Individual", "Joint", "Retirement", "Education", "Trust", "Custodial",
                 "Savings", "Growth", "Income", "Family")
MAIL_DOMAINS = ("mailbox.example", "post.example", "inbox.example", "letters.example")

#: The tax id's bijection: c_id x _TAX_MUL mod _TAX_MOD (prime to it), as 3 digits, 2
#: letters, 4 digits, 2 letters.
_TAX_MOD = 10_000_000 * 26 ** 4
_TAX_MUL = 2_824_267_000_201  # about 0.618 of _TAX_MOD: neighbours differ everywhere
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def tier_of(c_id: int) -> int:
    """c_tier of customer ``c_id`` (1-based): 200/600/200 of each load unit in tiers 1/2/3."""
    q = ((c_id - 1) % LOAD_UNIT * _MUL + _ADD) % LOAD_UNIT
    return 1 if q < _TIER_START[1] else 2 if q < _TIER_START[2] else 3


def customer_of(load_unit: int, tier: int, slot: int) -> int:
    """The c_id of the ``slot``-th customer (0-based) of ``tier`` in ``load_unit`` (0-based):
    the inverse of the scramble ``tier_of`` reads."""
    if not 0 <= slot < TIER_CUSTOMERS[tier - 1]:
        raise ValueError(f"tier {tier} has {TIER_CUSTOMERS[tier - 1]} customers a load unit, "
                         f"not a slot {slot}")
    q = _TIER_START[tier - 1] + slot
    return load_unit * LOAD_UNIT + (q - _ADD) * _INV % LOAD_UNIT + 1


def tax_id(c_id: int) -> str:
    """c_tax_id of customer ``c_id``: distinct for every c_id below 4.5 x 10^12."""
    digits, letters = divmod(c_id * _TAX_MUL % _TAX_MOD, 26 ** 4)
    a, b, c, d = (letters // 26 ** k % 26 for k in range(4))
    return (f"{digits // 10_000:03d}{_UPPER[a]}{_UPPER[b]}{digits % 10_000:04d}"
            f"{_UPPER[c]}{_UPPER[d]}")


def _customer_rng(seed: int, c_id: int) -> _random.Random:
    return _random.Random(f"oltplab-brokerage:{seed}:accounts:{c_id}")


def _count(rng, c_id: int) -> int:
    lo, hi = ACCOUNTS[tier_of(c_id) - 1]
    return lo + int(rng.random() * (hi - lo + 1))


def account_count(seed: int, c_id: int) -> int:
    """How many accounts customer ``c_id`` has (account ids reference.account_id(c_id, k),
    k = 1..count)."""
    return _count(_customer_rng(seed, c_id), c_id)


def baskets(seed: int, scale: Scale, c_id: int) -> list[list[int]]:
    """The securities (indexes, reference.symbol(i)) each account of ``c_id`` trades, in
    account order: 2-18 distinct ones each."""
    rng = _customer_rng(seed, c_id)
    n = _count(rng, c_id)
    population = range(ref.securities(scale))
    lo, hi = BASKET
    return [rng.sample(population, lo + int(rng.random() * (hi - lo + 1))) for _ in range(n)]


@functools.lru_cache(maxsize=4)
def _symbols(securities: int) -> tuple[str, ...]:
    return tuple(ref.symbol(i) for i in range(securities))


def broker_of(c_id: int, draw: float) -> int:
    """A broker of the customer's load unit, ``draw`` in [0, 1)."""
    return (c_id - 1) // LOAD_UNIT * ref.BROKERS_PER_LU + 1 + int(draw * ref.BROKERS_PER_LU)


def _people(rng, count: int) -> list[tuple[str, str]]:
    first, last = words.FIRST_NAMES, words.LAST_NAMES
    return [(first[int(rng.random() * len(first))], last[int(rng.random() * len(last))])
            for _ in range(count)]


def _phone(rand) -> str:
    n = int(rand() * 10_000_000)
    ext = f"{int(rand() * 1000):03d}" if rand() < 0.25 else "\\N"
    return f"1\t{200 + int(rand() * 800)}\t{n // 10_000:03d}-{n % 10_000:04d}\t{ext}"


def customer_rows(rng, scale: Scale, first: int, people: list, tax_ids: list):
    """customer, address and customer_taxrate rows (lists of lines) of the customers first..
    (one per person of ``people``, with the two tax ids of ``tax_ids``)."""
    rand = rng.random
    lo = datetime.date(BIRTH_YEARS[0], 1, 1).toordinal()
    days = datetime.date(BIRTH_YEARS[1], 12, 31).toordinal() - lo + 1
    streets, kinds = words.STREET_NAMES, words.STREET_KINDS
    customers, addresses, taxes = [], [], []
    for k, (f_name, l_name) in enumerate(people):
        c_id = first + k
        ad_id = ref.customer_address(c_id, scale)
        dob = datetime.date.fromordinal(lo + int(rand() * days)).isoformat()
        gender = "M" if rand() < 0.5 else "F"
        middle = _UPPER[int(rand() * 26)]
        mail = MAIL_DOMAINS[int(rand() * len(MAIL_DOMAINS))]
        given, family = f_name.lower(), l_name.lower()
        customers.append(
            f"{c_id}\t{tax_id(c_id)}\tACTV\t{l_name}\t{f_name}\t{middle}\t{gender}\t"
            f"{tier_of(c_id)}\t{dob}\t{ad_id}\t{_phone(rand)}\t{_phone(rand)}\t{_phone(rand)}"
            f"\t{given[0]}{family}@{mail}\t{given}.{family}{c_id % 100}@{mail}\n")
        line2 = f"Apt. {1 + int(rand() * 400)}" if rand() < 0.3 else "\\N"
        addresses.append(
            f"{ad_id}\t{1 + int(rand() * 9999)} {streets[int(rand() * len(streets))]} "
            f"{kinds[int(rand() * len(kinds))]}\t{line2}\t"
            f"{ref.zip_code(int(rand() * ref.ZIP_CODES))}\t{words.COUNTRY}\n")
        national, divisional = tax_ids[k]
        taxes.append(f"{national}\t{c_id}\n")
        taxes.append(f"{divisional}\t{c_id}\n")
    return customers, addresses, taxes


def chunk_rows(seed: int, scale: Scale, first: int, count: int, tally):
    """Yield the rows of the customers first..first+count-1 and of their trades as (table,
    COPY text, rows) pieces of trades.PIECE_ROWS rows at most: customer, address,
    customer_taxrate, account_permission, watch_list, watch_item, the trades (trades.py),
    holding, holding_summary, then customer_account (ca_bal: the balance after the trades)
    and brokerage_balance. ``tally`` (trades.new_tally) gets the brokers' trades."""
    rng = _random.Random(f"oltplab-brokerage:{seed}:customers:{first}")
    rand = rng.random
    people = _people(rng, count)
    national, divisional = ref.NATIONAL_TAX_IDS, ref.DIVISIONAL_TAX_IDS
    tax_ids = [(national[int(rand() * len(national))],
                divisional[int(rand() * len(divisional))]) for _ in range(count)]
    customers, addresses, taxes = customer_rows(rng, scale, first, people, tax_ids)
    yield from trades.pieces("customer", customers)
    yield from trades.pieces("address", addresses)
    yield from trades.pieces("customer_taxrate", taxes)
    symbols = _symbols(ref.securities(scale))
    accounts, rows, balances, permissions = [], [], [], []
    for k, (f_name, l_name) in enumerate(people):
        c_id = first + k
        rate = ref.tax_rate(tax_ids[k][0]) + ref.tax_rate(tax_ids[k][1])
        for j, basket in enumerate(baskets(seed, scale, c_id), 1):
            ca_id = ref.account_id(c_id, j)
            broker = broker_of(c_id, rand())
            tax_st = int(rand() * 3)
            kind = ACCOUNT_KINDS[int(rand() * len(ACCOUNT_KINDS))]
            balances.append(OPENING_CENTS[0]
                            + int(rand() * (OPENING_CENTS[1] - OPENING_CENTS[0] + 1)))
            rows.append((ca_id, broker, c_id, f"{f_name} {l_name} {kind}", tax_st))
            permissions.append(f"{ca_id}\t{ACLS[0]}\t{tax_id(c_id)}\t{l_name}\t{f_name}\n")
            names = [f"{f_name} {l_name}"]
            for e, other in enumerate(_holders(rng, k, count)):
                o_first, o_last = people[other]
                permissions.append(f"{ca_id}\t{ACLS[e + 1]}\t{tax_id(first + other)}\t"
                                   f"{o_last}\t{o_first}\n")
                names.append(f"{o_first} {o_last}")
            positions = [trades.new_position(symbols[i], ref.EXCHANGES.index(ref.exchange_of(i)))
                         for i in basket]
            accounts.append((ca_id, tier_of(c_id), tax_st, rate, broker, names, positions))
    yield from trades.pieces("account_permission", permissions)
    yield from trades.pieces("watch_list", [f"{c_id}\t{c_id}\n"
                                            for c_id in range(first, first + count)])
    yield from trades.pieces("watch_item", _watch_items(rng, first, count, symbols))
    opening = list(balances)
    yield from trades.trade_rows(rng, scale, trades.trade_ids(scale, first, count), accounts,
                                 balances, tally)
    yield from trades.pieces("customer_account", [
        f"{ca_id}\t{broker}\t{c_id}\t{name}\t{tax_st}\t{trades.money(bal)}\n"
        for (ca_id, broker, c_id, name, tax_st), bal in zip(rows, balances)])
    yield from trades.pieces("brokerage_balance", [
        f"{row[0]}\t{trades.money(was)}\t{trades.money(now)}\n"
        for row, was, now in zip(rows, opening, balances)])


def _holders(rng, owner: int, count: int) -> list[int]:
    """The other customers (indexes in the chunk) given a permission on an account of
    ``owner``'s: none, one or two (EXTRA_PERMISSIONS)."""
    u = rng.random()
    n = 0 if u < EXTRA_PERMISSIONS[0] else 1 if u < EXTRA_PERMISSIONS[1] else 2
    picked = rng.sample(range(count - 1), min(n, count - 1))
    return [p if p < owner else p + 1 for p in picked]


def _watch_items(rng, first: int, count: int, symbols: tuple) -> list[str]:
    lo, hi = WATCH_ITEMS
    population = range(len(symbols))
    rand = rng.random
    return [f"{c_id}\t{symbols[i]}\n" for c_id in range(first, first + count)
            for i in rng.sample(population, lo + int(rand() * (hi - lo + 1)))]

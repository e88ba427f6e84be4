"""The initial trading of a TPC-E-derived brokerage build, as COPY text: every loaded trade
completed exactly as Trade-Result completes one, so that the totals agree.

A customers chunk owns a contiguous range of trade ids (``trade_ids``), in proportion to its
customers; ids with id % 101 == 51 are skipped (the load-time 1% rollback). Trade ids follow
time: the trade of the k-th id of a range of n completes at second k x (days x 8 h) / n of the
trading (weekdays from reference.START_DATE, 8 hours from reference.DAY_OPENS), so that the
trades of one chunk span all the days. Each trade draws (the digest's load rules):

- an account of the chunk, uniform, and a security of its basket, uniform;
- the type: market buy/sell 30/30 %, limit buy/sell 20/10 %, stop-loss 10 %;
- the quantity 100/200/400/800, the bid U($20.00, $30.00) and the trade price: a market order's
  within 25 cents of the bid, a limit buy's and a stop-loss's 0-50 cents below, a limit sell's
  0-50 cents above (at or better than the limit);
- margin on 16 % of buys (cash trades 92 %), LIFO 35 %, executed by the owner 90 % (else by a
  holder of a permission on the account, when there is one).

Then what Trade-Result does: the lots walked (lots.trade_lots), each lot touched or opened
logged in holding_history; the tax on a gain when the account's tax status is 1 or 2 (the
customer's two rates summed, half up; a gain is what the closed shares were sold for minus what
they were bought for, on a sell of long lots or on a buy covering short ones); the charge of
the customer's tier, the commission at the rate of tier, type, exchange and quantity band;
trade_history (market: SBMT, CMPT; limit and stop-loss: PNDG, SBMT, CMPT) ending at the trade's
t_dts (SBMT 1-5 s before CMPT, PNDG 1-900 s before SBMT); the settlement, due 2 days after the
trade's day (buy: -(qty x price + charge + commission), sell: qty x price - (charge +
commission), less the tax when the tax status is 1); for a cash trade, a cash_transaction of
the settlement's amount, added to the account's balance. Each completed trade counts for the
account's broker (``new_tally``), with its commission.

The open lots (holding) and the nonzero positions (holding_summary) come after the trades.
"""

from __future__ import annotations

import datetime
import functools
import math

from ... import _native
from . import reference as ref
from . import words
from .lots import commission_cents, tax_cents, trade_lots
from .scale import TRADING_SECONDS, Scale

#: Rows per piece of COPY text, about (a piece of trades carries about 2.4 history rows each).
PIECE_ROWS = 20_000
TRADES_PER_PIECE = 8_000
#: id % SKIP_MOD == SKIP_REST is never loaded.
SKIP_MOD, SKIP_REST = 101, 51

#: The drawn trade types by tenths: (tt_id, name, is_sell, is_market, price rule).
TYPE_TENTHS = (0, 0, 0, 1, 1, 1, 4, 4, 3, 2)  # indexes into reference.TRADE_TYPES
QUANTITIES = (100, 200, 400, 800)
BID_CENTS = (2_000, 3_000)
#: A market trade's price is within MARKET_SPREAD cents of the bid, a limit's 0..LIMIT_SPREAD
#: cents better than its limit.
MARKET_SPREAD = 25
LIMIT_SPREAD = 50
MARGIN_PERCENT = 16
LIFO_PERCENT = 35
OWNER_EXECUTES = 0.9
#: Seconds from SBMT to CMPT (1..5) and from PNDG to SBMT (1..900).
SUBMIT_DELAY = 5
PENDING_DELAY = 900
DUE_DAYS = 2
CASH, MARGIN = "Cash Account", "Margin"


def trade_ids(scale: Scale, first: int, count: int) -> range:
    """The trade ids of the customers first..first+count-1 (some skipped: ``is_loaded``)."""
    t, c = scale.trades, scale.customers
    return range(1 + t * (first - 1) // c, 1 + t * (first - 1 + count) // c)


def is_loaded(t_id: int) -> bool:
    return t_id % SKIP_MOD != SKIP_REST


def loaded_count(ids: range) -> int:
    """How many ids of ``ids`` are loaded (the others are the rollback's)."""
    def upto(n: int) -> int:  # skipped ids in 1..n
        return 0 if n < SKIP_REST else (n - SKIP_REST) // SKIP_MOD + 1
    return len(ids) - (upto(ids.stop - 1) - upto(ids.start - 1))


def max_trade_id(scale: Scale) -> int:
    """The highest loaded trade id (the run's sequence starts after it)."""
    last = scale.trades
    return last if is_loaded(last) else last - 1


@functools.lru_cache(maxsize=4)
def _calendar(days: int) -> tuple[tuple, tuple, tuple[str, ...]]:
    """Each day's timestamp prefix ("YYYY-MM-DD "), its settlements' cash type and due date
    (a margin trade's, a cash trade's), and the clock times "HH:MM:SS" of the day's seconds
    from _EARLY before the opening on."""
    opens = ref.DAY_OPENS.hour * 3600 + ref.DAY_OPENS.minute * 60 + ref.DAY_OPENS.second
    prefixes = tuple(f"{ref.trading_date(d).isoformat()} " for d in range(days))
    due = tuple(tuple(f"{kind}\t{(ref.trading_date(d) + datetime.timedelta(days=DUE_DAYS))}\t"
                      for kind in (MARGIN, CASH)) for d in range(days))
    clock = tuple(f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
                  for s in range(opens - _EARLY, opens + TRADING_SECONDS))
    return prefixes, due, clock


_EARLY = SUBMIT_DELAY + PENDING_DELAY
#: Money as COPY text, for the amounts below $400 (prices, charges, commissions, most taxes).
_MONEY_TEXT = tuple(f"{c // 100}.{c % 100:02d}" for c in range(40_000))
_CENTS_TEXT = tuple(f"{c:02d}" for c in range(100))


def money(cents: int) -> str:
    """Cents as COPY text ("-12.05"): exact below 10^13 cents."""
    return f"{cents / 100:.2f}"


def _rate_table() -> tuple[int, ...]:
    """commission_hundredths by (tier - 1, type index, exchange index, quantity index)."""
    return tuple(ref.commission_hundredths(tier, tt[0], ex, q)
                 for tier in ref.TIERS for tt in ref.TRADE_TYPES for ex in ref.EXCHANGES
                 for q in QUANTITIES)


_RATES = _rate_table()
_CHARGES = tuple(tuple(ref.charge_cents(tt[0], tier) for tt in ref.TRADE_TYPES)
                 for tier in ref.TIERS)


def new_position(symbol: str, exchange: int) -> list:
    """An account's position in one security of its basket: [hs_qty, lots, symbol, exchange
    index x 4] (the form trade_rows keeps)."""
    return [0, [], symbol, exchange * len(QUANTITIES)]


def python_trade_rows(rng, scale: Scale, ids: range, accounts: list, balances: list, tally):
    """Yield the chunk's trades as (table, COPY text, rows) pieces, then its holding and
    holding_summary rows (the reference of native_trade_rows, which the build runs).

    ``accounts``: the chunk's accounts, each (ca_id, tier, tax status, tax rate (the two rates
    summed, hundred-thousandths), broker id, executors' names (the owner's first), positions
    (``new_position`` per basket security)); ``balances`` (cents, one per account) get the
    cash transactions; ``tally`` (``new_tally``) the completed trades and commissions.
    """
    rand, bits = rng.random, rng.getrandbits
    prefixes, due, clock = _calendar(scale.days)
    span, lo, n_ids = scale.days * TRADING_SECONDS, ids.start, len(ids)
    counts, comms = tally
    # Per account what its rows repeat: (index, its executors' "ca_id<TAB>name<TAB>", the
    # base of its commission rates, tax status and rate, broker, charges by type, positions).
    prepared = [(a, tuple(f"{ca_id}\t{name}\t" for name in names), (tier - 1) * 80, tax_st,
                 tax_rate, broker, _CHARGES[tier - 1], positions)
                for a, (ca_id, tier, tax_st, tax_rate, broker, names, positions)
                in enumerate(accounts)]
    n_acc = len(prepared)
    heads = tuple((f"CMPT\t{tt[0]}\t0\t", f"CMPT\t{tt[0]}\t1\t") for tt in ref.TRADE_TYPES)
    ct_names = tuple(tuple(f"\t{tt[1]} {q} shares of " for q in QUANTITIES)
                     for tt in ref.TRADE_TYPES)
    qty_text = tuple(f"\t{q}\t" for q in QUANTITIES)
    # a new lot's holding_history row after "t_id<TAB>t_id<TAB>": (a buy's, a sell's) by qty
    opened = tuple((f"0\t{q}\n", f"0\t{-q}\n") for q in QUANTITIES)
    money_text, cents_text, rates, small = _MONEY_TEXT, _CENTS_TEXT, _RATES, len(_MONEY_TEXT)
    bids, steps = BID_CENTS[1] - BID_CENTS[0] + 1, LIMIT_SPREAD + 1
    bid_draws, delay_draws = bids * steps, SUBMIT_DELAY * PENDING_DELAY
    hist = []
    trade, history, settle, cash, hh = [], [], [], [], []
    n_hist = n_cash = 0
    for tid in ids:
        if tid % SKIP_MOD == SKIP_REST:
            continue
        day, sec = divmod((tid - lo) * span // n_ids, TRADING_SECONDS)
        sec += _EARLY
        prefix = prefixes[day]
        dts = prefix + clock[sec]
        head = f"{tid}\t"
        # each draw: 30 random bits scaled to 0..n-1 (uniform to within n / 2^30)
        a, execs, rate_base, tax_st, tax_rate, broker, charges, positions = \
            prepared[bits(30) * n_acc >> 30]
        pos = positions[bits(30) * len(positions) >> 30]
        draw = bits(30) * 40 >> 30
        tt, qi = TYPE_TENTHS[draw >> 2], draw & 3
        qty = QUANTITIES[qi]
        bid, step = divmod(bits(30) * bid_draws >> 30, steps)
        bid += BID_CENTS[0]
        flags = bits(30) * 10_000 >> 30  # two independent percentages: LIFO and margin
        lifo = flags % 100 < LIFO_PERCENT
        gap, wait = divmod(bits(30) * delay_draws >> 30, PENDING_DELAY)
        gap += 1
        if tt < 2:  # market
            price = bid + step - MARKET_SPREAD
            history.append(f"{head}{prefix}{clock[sec - gap]}\tSBMT\n{head}{dts}\tCMPT\n")
            n_hist += 2
        else:
            price = bid + step if tt == 3 else bid - step
            wait += gap + 1
            history.append(f"{head}{prefix}{clock[sec - wait]}\tPNDG\n"
                           f"{head}{prefix}{clock[sec - gap]}\tSBMT\n{head}{dts}\tCMPT\n")
            n_hist += 3
        is_sell = 0 < tt < 4
        is_cash = is_sell or flags // 100 >= MARGIN_PERCENT
        exec_text = execs[0] if len(execs) == 1 or rand() < OWNER_EXECUTES else \
            execs[1 + int(rand() * (len(execs) - 1))]
        held = pos[0]
        tax = 0
        if held > 0 if is_sell else held < 0:  # the trade closes lots: Trade-Result's walk
            hist.clear()
            pos[0], buy_value, sell_value = trade_lots(pos[1], held, qty, is_sell, lifo, tid,
                                                       price, dts, hist)
            for h_t_id, before, after in hist:
                hh.append(f"{h_t_id}\t{head}{before}\t{after}\n")
            if tax_st:
                tax = tax_cents(sell_value - buy_value, tax_rate)
        else:  # it opens a lot, as trade_lots does when there is nothing to close
            lot_qty = -qty if is_sell else qty
            pos[0] = held + lot_qty
            pos[1].append([tid, lot_qty, price, dts])
            hh.append(f"{head}{head}{opened[qi][is_sell]}")
        value = qty * price
        comm = commission_cents(qty, price, rates[rate_base + tt * 16 + pos[3] + qi])
        charge = charges[tt]
        if is_sell:
            amount = value - charge - comm - (tax if tax_st == 1 else 0)
            whole, part = divmod(amount, 100)  # a sale is worth more than its costs
            amount_text = f"{whole}.{cents_text[part]}"
        else:
            amount = -(value + charge + comm + (tax if tax_st == 1 else 0))
            whole, part = divmod(-amount, 100)
            amount_text = f"-{whole}.{cents_text[part]}"
        symb = pos[2]
        trade.append(f"{head}{dts}\t{heads[tt][is_cash]}{symb}{qty_text[qi]}"
                     f"{money_text[bid]}\t{exec_text}{money_text[price]}\t"
                     f"{money_text[charge]}\t{money_text[comm]}\t"
                     f"{money_text[tax] if tax < small else money(tax)}\t{1 if lifo else 0}\n")
        if is_cash:
            settle.append(f"{head}{due[day][1]}{amount_text}\n")
            cash.append(f"{head}{dts}\t{amount_text}{ct_names[tt][qi]}{symb}\n")
            n_cash += 1
            balances[a] += amount
        else:
            settle.append(f"{head}{due[day][0]}{amount_text}\n")
        counts[broker] += 1
        comms[broker] += comm
        if len(trade) >= TRADES_PER_PIECE:
            yield from _trade_pieces(trade, history, n_hist, settle, cash, n_cash, hh)
            trade, history, settle, cash, hh = [], [], [], [], []
            n_hist = n_cash = 0
    if trade:
        yield from _trade_pieces(trade, history, n_hist, settle, cash, n_cash, hh)
    yield from position_rows(accounts)


def _native_constants() -> tuple:
    """The constants the C loop has too (native/brokerage/trades.h): it refuses others."""
    return (*TYPE_TENTHS, *QUANTITIES, *BID_CENTS, MARKET_SPREAD, LIMIT_SPREAD, MARGIN_PERCENT,
            LIFO_PERCENT, SUBMIT_DELAY, PENDING_DELAY, SKIP_MOD, SKIP_REST, TRADES_PER_PIECE,
            PIECE_ROWS, TRADING_SECONDS, _EARLY, len(_MONEY_TEXT), OWNER_EXECUTES)


@functools.lru_cache(maxsize=4)
def _native_tables(days: int) -> tuple:
    prefixes, due, clock = _calendar(days)
    return (_native_constants(), prefixes, due, clock,
            tuple(tt[0] for tt in ref.TRADE_TYPES), tuple(tt[1] for tt in ref.TRADE_TYPES),
            _CHARGES, _RATES)


def native_trade_rows(rng, scale: Scale, ids: range, accounts: list, balances: list, tally):
    """python_trade_rows in C (oltplab._native.BrokerageTrades): the same pieces, the same
    draws of ``rng`` (its Mersenne Twister state handed over and back after each batch) and
    the same balances, tally and positions after each batch."""
    if ids.step != 1:
        raise ValueError(f"trade ids run in steps of 1, not {ids.step}")
    version, state, gauss = rng.getstate()
    trading = _native.BrokerageTrades(state, ids.start, ids.stop, scale.days, accounts,
                                      balances, tally, _native_tables(scale.days))
    for batch in iter(trading.batch, None):
        rng.setstate((version, trading.state(), gauss))
        yield from batch
    yield from position_rows(accounts)


#: The trade loop of the build (customers.chunk_rows): the C one.
trade_rows = native_trade_rows


def _trade_pieces(trade, history, n_hist, settle, cash, n_cash, hh):
    yield "trade", "".join(trade), len(trade)
    yield "trade_history", "".join(history), n_hist
    yield "settlement", "".join(settle), len(settle)
    if cash:
        yield "cash_transaction", "".join(cash), n_cash
    yield from pieces("holding_history", hh)


def position_rows(accounts: list):
    """holding (every open lot) and holding_summary (every nonzero position) of ``accounts``,
    as (table, COPY text, rows) pieces."""
    holding, summary = [], []
    for ca_id, *_, positions in accounts:
        for held, lots, symb, _ in positions:
            if held:
                summary.append(f"{ca_id}\t{symb}\t{held}\n")
            for h_t_id, qty, price, dts in lots:
                holding.append(f"{h_t_id}\t{ca_id}\t{symb}\t{dts}\t{_MONEY_TEXT[price]}\t"
                               f"{qty}\n")
    yield from pieces("holding", holding)
    yield from pieces("holding_summary", summary)


def pieces(table: str, lines: list):
    """``lines`` (one row each) as (table, COPY text, rows) pieces of PIECE_ROWS at most."""
    for k in range(0, len(lines), PIECE_ROWS):
        part = lines[k:k + PIECE_ROWS]
        yield table, "".join(part), len(part)


def new_tally(scale: Scale) -> list[list[int]]:
    """An empty per-broker tally: [completed trades, commission in cents], each indexed by
    b_id (index 0 unused)."""
    return [[0] * (ref.brokers(scale) + 1), [0] * (ref.brokers(scale) + 1)]


def add_tally(total: list[list[int]], more: list[list[int]]) -> None:
    """Add one tally to another, in place."""
    for into, add in zip(total, more):
        for k, v in enumerate(add):
            if v:
                into[k] += v


def _name_step(n: int) -> int:
    """A step prime to ``n`` that scrambles the n name pairs."""
    return next(m for m in range(7_919, 7_919 + n) if math.gcd(m, n) == 1)


_NAME_PAIRS = len(words.FIRST_NAMES) * len(words.LAST_NAMES)
_NAME_STEP = _name_step(_NAME_PAIRS)


def broker_name(b_id: int) -> str:
    """b_name of broker ``b_id``: a first and a last name, distinct for every broker (a
    number after them beyond the pairs of names), the same in every build."""
    k, lap = (b_id - 1) % _NAME_PAIRS, (b_id - 1) // _NAME_PAIRS
    m = k * _NAME_STEP % _NAME_PAIRS
    first, last = words.FIRST_NAMES, words.LAST_NAMES
    name = f"{first[m % len(first)]} {last[m // len(first)]}"
    return f"{name} {lap + 1}" if lap else name


def broker_rows(scale: Scale, tally: list[list[int]]) -> str:
    """The broker table's COPY text: every broker ACTV, with its completed trades and their
    commission from ``tally`` (the sum of every chunk's)."""
    counts, comms = tally
    return "".join(f"{b}\tACTV\t{broker_name(b)}\t{counts[b]}\t{money(comms[b])}\n"
                   for b in range(1, ref.brokers(scale) + 1))

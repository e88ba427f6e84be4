"""The brokerage's customer emulator in C (``_native.BrokerageTerminal``), stepped from Python
as the loop steps it: the deck, the customer tiers, the pure functions against Python's
(customers.customer_of, tax_id, reference.symbol), NURand, each transaction's shares, and that
every id drawn at 1,000 customers is one the build loaded. (test_native_sanitizers.py runs
this module again under AddressSanitizer and UndefinedBehaviorSanitizer.)"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
from array import array
from collections import Counter, defaultdict

import pytest

from oltplab import _native
from oltplab.workloads.brokerage import customers as cust
from oltplab.workloads.brokerage import frames, inputs, market, population, trades, words
from oltplab.workloads.brokerage import reference as ref
from oltplab.workloads.brokerage.scale import Scale
from oltplab.workloads.brokerage.schema import BrokerageSchema

SEED, SCALE = 7, Scale(1000, 5)
#: The deck: cards per transaction of 890 (the digest's section 2)
DECK = {"trade_status": 190, "market_watch": 180, "security_detail": 140,
        "customer_position": 130, "trade_order": 101, "trade_lookup": 80, "broker_volume": 49,
        "trade_update": 20}
CONSTANTS = inputs.RunConstants(SCALE.customers, SCALE.days, SCALE.scale_factor,
                                trades.max_trade_id(SCALE), SEED)


@pytest.fixture(scope="module")
def kwargs():
    return inputs.terminal_kwargs(CONSTANTS)


def terminal(kwargs, seed: int = 3):
    return _native.BrokerageTerminal(seed, **kwargs)


def calls(t, n: int, complete: bool = True) -> list[tuple[str, tuple]]:
    out = []
    for _ in range(n):
        out.append(t.next_call())
        if complete:
            t.complete(1)
    return out


def of_kind(t, kind: str, n: int) -> list[tuple]:
    """The arguments of the next ``n`` transactions of ``kind`` the terminal deals."""
    out = []
    while len(out) < n:
        k, args = t.next_call()
        t.complete(1)
        if k == kind:
            out.append(args)
    return out


def test_module_names_the_kinds_the_deck_and_the_input_keys():
    assert "brokerage" in _native.WORKLOADS
    assert _native.BROKERAGE_NAMES == ("broker_volume", "customer_position", "market_watch",
                                       "security_detail", "trade_lookup", "trade_order",
                                       "trade_status", "trade_update")
    assert set(_native.BROKERAGE_NAMES) <= set(frames.TRANSACTIONS)
    assert _native.BROKERAGE_CARDS == DECK
    assert _native.BROKERAGE_DECK == 890
    assert len(_native.BROKERAGE_INPUT_KEYS) == 24


def test_each_deck_of_890_deals_every_card_once(kwargs):
    t = terminal(kwargs)
    orders = []
    for _ in range(3):
        dealt = [k for k, _ in calls(t, 890, complete=False)]
        assert Counter(dealt) == DECK
        orders.append(dealt)
    assert orders[0] != orders[1] != orders[2]  # shuffled again each time
    other = [k for k, _ in calls(terminal(kwargs, seed=4), 890, complete=False)]
    assert other != orders[0]


def test_the_mix_over_many_draws_is_the_deck_within_a_tenth_of_a_point(kwargs):
    n = 100_003  # not whole decks
    mix = Counter(k for k, _ in calls(terminal(kwargs, seed=11), n, complete=False))
    for kind, cards in DECK.items():
        assert abs(100 * mix[kind] / n - 100 * cards / 890) < 0.1, kind


def test_customer_tiers_are_10_60_30_and_each_c_id_is_of_its_tier(kwargs):
    t = terminal(kwargs, seed=5)
    n = 100_000
    drawn = [t.customer() for _ in range(n)]
    tiers = Counter(tier for tier, _ in drawn)
    for tier, share in ((1, 10), (2, 60), (3, 30)):
        assert abs(100 * tiers[tier] / n - share) < 0.5, tier  # > 5 standard errors
    assert all(cust.tier_of(c_id) == tier for tier, c_id in drawn)
    assert all(1 <= c_id <= SCALE.customers for _, c_id in drawn)
    # the slot: floor(n sqrt(u)), mean 2/3 of the tier's customers
    for tier in (1, 2, 3):
        start, size = (0, 200, 800)[tier - 1], cust.TIER_CUSTOMERS[tier - 1]
        slots = [((c - 1) % 1000 * 367 + 503) % 1000 - start
                 for tr, c in drawn if tr == tier]
        assert abs(sum(slots) / len(slots) / size - 2 / 3) < 0.01


def test_the_c_scramble_tax_ids_and_symbols_are_pythons():
    for lu in (0, 1, 4, 999):
        for tier, size in zip((1, 2, 3), cust.TIER_CUSTOMERS):
            for slot in range(size):
                assert (_native.BrokerageTerminal.customer_of(lu, tier, slot)
                        == cust.customer_of(lu, tier, slot))
    for c_id in [*range(1, 3000), 123_456_789, 4_000_000_000_000]:
        assert _native.BrokerageTerminal.tax_id(c_id) == cust.tax_id(c_id), c_id
    for i in [*range(0, 20_000), 26 ** 3 + 26 ** 4 - 1, 26 ** 3 + 26 ** 4, 10 ** 9]:
        assert _native.BrokerageTerminal.symbol(i) == ref.symbol(i), i


def test_nurand_stays_in_its_range_and_skews():
    for lo, hi in ((1, 100), (1, 288_000), (0, 8_000_000)):
        v = _native.BrokerageTerminal.nurand(9, 65535, 7, lo, hi, 50_000)
        assert lo <= min(v) and max(v) <= hi
    v = _native.BrokerageTerminal.nurand(9, 4095, 16, 0, 99, 100_000)
    assert set(v) == set(range(100))  # every value reachable in a small range
    # the exact law over a small range: ((U(0, 15) | (U(0, 3) << 2)) mod 16) + 0
    law = Counter((x | (y << 2)) % 16 for x in range(16) for y in range(4))
    n = 256_000
    got = Counter(_native.BrokerageTerminal.nurand(9, 3, 2, 0, 15, n))
    for v in range(16):
        assert abs(got[v] / n - law[v] / 64) < 0.004, v  # law: 1/64 .. 9/64


def _dts(text: str) -> datetime.datetime:
    return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S")


def _trading_second(dts: datetime.datetime, days: int = SCALE.days) -> int:
    days = [ref.trading_date(d) for d in range(days)]
    day = days.index(dts.date())  # a weekday of the trading
    second = (dts.hour - 9) * 3600 + dts.minute * 60 + dts.second
    assert 0 <= second <= 28_800, dts  # 09:00 to 17:00
    return day * 28_800 + second


def test_lookup_and_update_frames_ids_and_windows(kwargs):
    t = terminal(kwargs, seed=13)
    max_t_id = CONSTANTS.max_t_id
    period = SCALE.days * 28_800
    backoff = {2: 32 * 3600, 3: 200 * 60, 4: 500 * 60}
    for args in of_kind(t, "trade_lookup", 2_000) + of_kind(t, "trade_update", 600):
        frame = int(args[0])
        if frame == 1:
            ids = [int(v) for v in args[1][1:-1].split(",")]
            assert len(ids) == 20
            assert all(1 <= i <= max_t_id and trades.is_loaded(i) for i in ids)
        else:
            start, end = _trading_second(_dts(args[4])), _trading_second(_dts(args[5]))
            assert 0 <= start <= period - backoff[frame]
            assert end - start == backoff[frame]
        assert args[6] == "20" and (len(args) == 7 or args[7] == "20")
    counts = t.inputs()
    tl = [counts[f"tl_frame{f}"] for f in (1, 2, 3, 4)]
    tu = [counts[f"tu_frame{f}"] for f in (1, 2, 3)]
    assert sum(tl) >= 2_000 and sum(tu) >= 600
    n = 40_000  # Trade-Lookup's frames over whole decks: 30/30/30/10
    t3 = terminal(kwargs, seed=19)
    calls(t3, n)
    c = t3.inputs()
    tl = [c[f"tl_frame{f}"] for f in (1, 2, 3, 4)]
    for got, share in zip(tl, (30, 30, 30, 10)):
        assert abs(100 * got / sum(tl) - share) < 3.5  # > 4 standard errors at 3,600


def test_windows_of_a_longer_build_skip_nights_and_weekends(kwargs):
    """12 days of trading (Monday 2025-01-06 to Tuesday 2025-01-21): a window lasts its
    back-off in seconds of trading, 09:00 to 17:00 on weekdays."""
    t = terminal({**kwargs, "days": 12}, seed=41)
    weekend = 0
    for args in of_kind(t, "trade_lookup", 3_000):
        if args[0] in ("2", "3", "4"):
            start, end = _dts(args[4]), _dts(args[5])
            s, e = _trading_second(start, 12), _trading_second(end, 12)
            assert e - s == {"2": 32 * 3600, "3": 200 * 60, "4": 500 * 60}[args[0]]
            weekend += start.weekday() > end.weekday()
    assert weekend > 0


def test_update_frames_are_33_33_34(kwargs):
    t = terminal(kwargs, seed=23)
    frames_ = Counter(int(args[0]) for args in of_kind(t, "trade_update", 6_000))
    for f, share in ((1, 33), (2, 33), (3, 34)):
        assert abs(100 * frames_[f] / 6_000 - share) < 2.5  # > 4 standard errors


def test_trade_order_shares(kwargs):
    t = terminal(kwargs, seed=29)
    orders = of_kind(t, "trade_order", 20_000)
    n = len(orders)
    types = Counter(a[7] for a in orders)
    share = {k: 100 * v / n for k, v in types.items()}
    assert abs(share["TMB"] + share["TMS"] - 60) < 1.5
    assert abs(share["TMB"] + share["TLB"] - 50) < 1.5
    assert abs(share["TSL"] - share["TLS"]) < 1.5  # limit sells: stop-loss half
    buys = [a for a in orders if a[7] in ("TMB", "TLB")]
    assert all(a[10] == "false" for a in orders if a[7] not in ("TMB", "TLB"))
    assert abs(100 * sum(a[10] == "true" for a in buys) / len(buys) - 16) < 1.5
    assert abs(100 * sum(a[10] == "true" for a in orders) / n - 8) < 1
    assert abs(100 * sum(a[11] == "true" for a in orders) / n - 35) < 1.5
    assert abs(100 * sum(a[12] == "true" for a in orders) / n - 100 / 101) < 0.35
    assert abs(100 * sum(a[4] == "" for a in orders) / n - 40) < 1.5  # by company and issue
    assert {a[8] for a in orders} == {"100", "200", "400", "800"}
    prices = [float(a[9]) for a in orders]
    assert min(prices) >= 20 and max(prices) <= 30 and len(set(prices)) > 900
    counts = t.inputs()
    assert counts["to_rolled_back"] == sum(a[12] == "true" for a in orders)
    assert counts["to_margin"] == sum(a[10] == "true" for a in orders)
    assert counts["to_stop_loss"] == types["TSL"]
    assert counts["to_limit"] == types["TLB"] + types["TLS"] + types["TSL"]
    assert counts["to_sell"] == types["TMS"] + types["TLS"] + types["TSL"]


def test_shares_of_the_read_only_transactions(kwargs):
    t = terminal(kwargs, seed=43)
    drawn = defaultdict(list)
    for kind, args in calls(t, 60_000):
        drawn[kind].append(args)
    c = t.inputs()

    def pct(part, whole):
        return 100 * part / len(whole)

    cp, mw, sd = drawn["customer_position"], drawn["market_watch"], drawn["security_detail"]
    assert c["cp_tax_id"] == sum(a[0] == "0" for a in cp)
    assert abs(pct(c["cp_tax_id"], cp) - 50) < 2.5 and abs(pct(c["cp_history"], cp) - 50) < 2.5
    for key, share in (("mw_watch_list", 60), ("mw_holdings", 35), ("mw_industry", 5)):
        assert abs(pct(c[key], mw) - share) < 2, key
    fridays = sum(datetime.date.fromisoformat(a[5]).weekday() == 4 for a in mw)
    assert abs(pct(fridays, mw) - 60) < 2.5
    assert abs(pct(c["sd_lob"], sd) - 1) < 0.6
    assert Counter(int(a[2]) for a in sd).keys() == set(range(5, 21))
    assert c["tier1"] + c["tier2"] + c["tier3"] == (
        len(cp) + len(drawn["trade_status"]) + len(drawn["trade_order"])
        + sum(a[0] != "0" or a[1] != "0" for a in mw)
        + sum(a[0] in ("2", "4") for a in drawn["trade_lookup"] + drawn["trade_update"]))


def test_a_rolled_back_order_completes_as_rolled_back(kwargs):
    t = terminal(kwargs, seed=31)
    seen = set()
    while len(seen) < 2:
        kind, args = t.next_call()
        done = t.complete(1)
        if kind == "trade_order":
            assert done["rolled_back"] == (args[12] == "true")
            seen.add(done["rolled_back"])
        else:
            assert done["rolled_back"] is False
    with pytest.raises(RuntimeError):
        t.complete(1)  # once per call


@pytest.fixture(scope="module")
def build():
    """The build's own rows at 1,000 customers: customer names, tax ids and permissions."""
    names, permits = {}, defaultdict(set)
    for chunk in population.plan(SCALE):
        if chunk.kind != "customers":
            continue
        rows = cust.chunk_rows(SEED, SCALE, chunk.first, chunk.count,
                               population.new_tally(SCALE))
        for table, text, _ in rows:
            if table == "watch_list":
                break
            for line in text.splitlines():
                f = line.split("\t")
                if table == "customer":
                    names[int(f[0])] = (f[4], f[3], f[1])
                elif table == "account_permission":
                    permits[int(f[0])].add((f[4], f[3], f[2]))
        rows.close()
    return names, permits


@functools.lru_cache(maxsize=None)
def _baskets(c_id: int) -> list[list[int]]:
    return cust.baskets(SEED, SCALE, c_id)


def _account(ca_id: int) -> tuple[int, int]:
    c_id, k = divmod(ca_id - 1, ref.MAX_ACCOUNTS)
    assert k + 1 <= len(_baskets(c_id + 1)), ca_id
    return c_id + 1, k


def test_every_drawn_id_exists_at_1000_customers(kwargs, build):
    names, permits = build
    symbols = {ref.symbol(i): i for i in range(ref.securities(SCALE))}
    companies = ref.companies(SCALE)
    by_tax_id = {tax: c for c, (_, _, tax) in names.items()}
    brokers = {trades.broker_name(b) for b in range(1, ref.brokers(SCALE) + 1)}
    dm_index = {d.isoformat(): i for i, d in enumerate(market.daily_market_dates())}
    last_day = market.daily_market_dates()[-1]
    by_other = 0
    t = terminal(kwargs, seed=37)
    for kind, a in calls(t, 30_000):
        if kind in ("trade_status",):
            _account(int(a[0]))
        elif kind == "customer_position":
            c_id = int(a[0]) or by_tax_id[a[1]]
            assert 0 <= int(a[3]) < len(_baskets(c_id))
        elif kind == "market_watch":
            if int(a[1]):
                assert int(a[1]) in names
            elif int(a[0]):
                _account(int(a[0]))
            else:
                assert a[3] in words.INDUSTRIES
                assert 1 <= int(a[4]) <= int(a[2]) <= companies
            assert a[5] in dm_index
            day = datetime.date.fromisoformat(a[5])
            assert (last_day - day).days // 7 in range(4, 261)
        elif kind == "security_detail":
            assert a[0] in symbols and 5 <= int(a[2]) <= 20
            assert dm_index[a[1]] + int(a[2]) <= len(dm_index)
        elif kind == "broker_volume":
            listed = a[0][2:-2].split('","')
            assert set(listed) <= brokers and len(set(listed)) == len(listed) == 10
            assert a[1] in {name for _, name, _ in words.SECTORS}
        elif kind in ("trade_lookup", "trade_update") and a[0] in ("2", "4"):
            _account(int(a[2]))
        elif kind in ("trade_lookup", "trade_update") and a[0] == "3":
            assert a[3] in symbols
        elif kind == "trade_order":
            c_id, k = _account(int(a[0]))
            basket = _baskets(c_id)[k]
            if a[4]:
                assert symbols[a[4]] in basket
            else:
                assert any(market.company_name(ref.company_of(i, SCALE)) == a[5]
                           and market.ISSUES[ref.issue_of(i, SCALE)] == a[6] for i in basket)
            executor = (a[1], a[2], a[3])
            assert executor in permits[int(a[0])]
            by_other += executor != names[c_id]
    assert by_other > 0 and by_other == t.inputs()["to_by_other"]


def _call_args(text: str) -> list[tuple[str, bool]]:
    """The arguments of "CALL name(a, 'b', ...)" and whether each was quoted ('' is a
    quote)."""
    out, at, body = [], 0, text[text.index("(") + 1:-1]
    while at < len(body):
        if body[at] == "'":
            end, piece = at + 1, []
            while True:
                if body[end] == "'" and body[end + 1:end + 2] == "'":
                    piece.append("'")
                    end += 2
                elif body[end] == "'":
                    break
                else:
                    piece.append(body[end])
                    end += 1
            out.append(("".join(piece), True))
            at = end + 1
        else:
            end = body.find(",", at)
            end = len(body) if end < 0 else end
            out.append((body[at:end], False))
            at = end
        at += 2  # ", "
    return out


def test_mariadb_calls_carry_the_arguments_libpq_sends(kwargs):
    t = terminal(kwargs, seed=47)
    for _ in range(3_000):
        kind, args = t.next_call()
        call = t.mariadb_call()
        assert call.startswith(f"CALL {kind}(") and call.endswith(")")
        got = _call_args(call)
        assert len(got) == len(args) == frames.TRANSACTIONS[kind].arity
        for (_, sql_type), pg, (my, quoted) in zip(frames.TRANSACTIONS[kind].params, args,
                                                   got):
            assert quoted == (sql_type in ("text", "date", "timestamp", "text[]", "bigint[]"))
            if sql_type.endswith("[]"):  # a JSON array in a string
                assert json.loads(my) == json.loads("[" + pg[1:-1] + "]")
            else:
                assert my == pg


def test_every_argument_fits_the_loops_text_at_1000_customers(kwargs):
    """The loop holds an argument in ARG_TEXT (192) bytes, its NUL included."""
    t = terminal(kwargs, seed=53)
    assert max(len(a.encode()) for _, args in calls(t, 20_000, complete=False)
               for a in args) < 192


def test_the_tables_are_the_builds_customer_side(build):
    """inputs.tables against customers.py and the build's own rows: accounts, baskets,
    the customers each account permits, names; draw_constants from the build's record."""
    names, permits = build
    t = inputs.tables(SEED, SCALE)
    at, baskets = array("i", t.basket_at), array("i", t.baskets)
    execs, name_ix = array("i", t.execs), array("H", t.names)
    assert len(t.accounts) == SCALE.customers and at[-1] == len(baskets)
    for c_id in range(1, SCALE.customers + 1):
        held = _baskets(c_id)
        assert t.accounts[c_id - 1] == len(held)
        first, last, tax = names[c_id]
        assert (words.FIRST_NAMES[name_ix[2 * c_id - 2]],
                words.LAST_NAMES[name_ix[2 * c_id - 1]]) == (first, last)
        for k in range(ref.MAX_ACCOUNTS):
            slot = (c_id - 1) * ref.MAX_ACCOUNTS + k
            assert list(baskets[at[slot]:at[slot + 1]]) == (held[k] if k < len(held) else [])
            others = {names[o] for o in execs[2 * slot:2 * slot + 2] if o}
            expected = {(f, l_, x) for f, l_, x in permits.get(slot + 1, ()) if x != tax}
            assert others == expected, slot + 1
    record = BrokerageSchema(customers=1000, days=5, scale_factor=500, trades=288_000,
                             max_t_id=287_999, seed=SEED, start_date="2025-01-06")
    assert inputs.draw_constants(None, record) == dataclasses.replace(CONSTANTS, max_t_id=287_999)


def test_a_users_terminal_is_seeded_by_its_plan(kwargs):
    from types import SimpleNamespace
    a = inputs.terminal(SimpleNamespace(seed=61), 0, CONSTANTS)
    assert calls(a, 200, complete=False) == calls(terminal(kwargs, seed=61), 200, False)
    assert calls(inputs.terminal(SimpleNamespace(seed=62), 0, CONSTANTS), 200, False) != \
        calls(terminal(kwargs, seed=61), 200, False)


def test_the_constructor_refuses_bad_tables(kwargs):
    with pytest.raises(RuntimeError, match="not initialised"):
        _native.BrokerageTerminal.__new__(_native.BrokerageTerminal).next_call()
    bad = [dict(accounts=kwargs["accounts"][:-1]),
           dict(accounts=b"\0" + kwargs["accounts"][1:]),
           dict(baskets=b"\xff\xff\xff\x7f" + kwargs["baskets"][4:]),
           dict(customers=1500), dict(days=0),
           dict(sectors=("Bad \"quote\"",)), dict(company_names=()),
           dict(securities=10 ** 6)]
    for over in bad:
        with pytest.raises((ValueError, TypeError)):
            _native.BrokerageTerminal(1, **{**kwargs, **over})
    t = terminal(kwargs)
    before = calls(terminal(kwargs), 50, complete=False)
    with pytest.raises(ValueError):
        t.__init__(1, **{**kwargs, "days": 0})
    assert calls(t, 50, complete=False) == before  # a failed __init__ left it as it was

"""The brokerage's market emulator in C (``_native.BrokerageMarket``) on a clock of the
test's: the price curve (extremes, period, phases) against hand-computed prices and the
Python curve, NegExp delays, the trigger times of the three limit types against a scan of
the curve, Market-Feed batches of 20 per 10 Trade-Results, growth to the hard cap, and the
pending counts. (test_native_sanitizers.py runs this module again under AddressSanitizer and
UndefinedBehaviorSanitizer.)"""

from __future__ import annotations

import math
import random

import pytest

from oltplab import _native
from oltplab.workloads.brokerage import market_emulator as me
from oltplab.workloads.brokerage import reference

S = 1_000_000_000  # ns a second
CENT, HALF, PERIOD = me.CENT_NS, me.HALF_NS, me.PERIOD_NS


def market(securities: int = 685, **kw) -> _native.BrokerageMarket:
    return _native.BrokerageMarket(7, securities, **kw)


def drain(m, now: int) -> list:
    """Every work due at ``now``, in the order next_due gives it."""
    out = []
    while True:
        work, _ = m.next_due(now)
        if work is None:
            return out
        out.append(work)


def test_the_curve_spans_20_to_30_dollars_over_15_minutes():
    m = market()
    assert [m.price(0, t) for t in (0, CENT - 1, CENT, HALF - 1, HALF, HALF + CENT,
                                    PERIOD - 1, PERIOD)] == [
        2000, 2000, 2001, 2999, 3000, 2999, 2001, 2000]
    assert PERIOD == 900 * S and HALF == 450 * S
    for s in (0, 1, 684):
        seen = [m.price(s, t) for t in range(0, PERIOD, CENT // 2)]
        assert min(seen) == 2000 and max(seen) == 3000
    rng = random.Random(3)
    for _ in range(500):
        s, t = rng.randrange(685), rng.randrange(10 ** 14)
        assert m.price(s, t) == m.price(s, t + PERIOD) == me.price_cents(s, t)


def test_each_security_runs_its_own_phase():
    m = market(2000)
    # security 1 is 367 s ahead: rising, 367 / 0.45 = 815.6 cents above $20.00
    assert m.price(1, 0) == me.price_cents(0, 367 * S) == 2815
    assert m.price(2, 0) == m.price(0, 734 * S)  # 2 x 367 s: on the way down
    assert m.price(2, 0) == 3000 - (734 - 450) * S // CENT == 2369
    assert m.price(900, 12345 * S) == m.price(0, 12345 * S)  # 900 phases, then again
    assert len({me.phase_ns(s) for s in range(900)}) == 900


def test_symbols_are_reference_symbols_both_ways():
    n = 100_000_000  # MARKET_MAX_SECURITIES: symbols of 3 to 6 letters
    m = market(n)
    rng = random.Random(9)
    edges = [0, 1, 17_575, 17_576, 17_576 + 26 ** 4 - 1, 17_576 + 26 ** 4, n - 1]
    for i in list(range(18_000)) + edges + [rng.randrange(n) for _ in range(5_000)]:
        sym = reference.symbol(i)
        assert m.symbol(i) == sym and m.security(sym) == i, i
    assert m.symbol(0) == "BVM" and len(m.symbol(n - 1)) == 6
    small = market(685)
    for bad in ("", "AB", "ABCDEFG", "AbC", "A C", reference.symbol(685)):
        with pytest.raises(ValueError, match="none of the 685 securities"):
            small.security(bad)
    with pytest.raises(ValueError, match="security 685 is not within 0..684"):
        small.symbol(685)


def test_market_orders_wait_negexp_mean_1s_capped_at_5s():
    n = 100_000
    m = market(10, max_entries=n)
    dues = [m.submit(k + 1, k % 10, "TMB", 100, 0, 0) for k in range(n)]
    assert max(dues) == me.MAX_DELAY_NS and min(dues) >= 0
    # NegExp(1 s) capped at 5 s: mean 1 - e^-5 = 0.9933 s (std error 0.0032 s here),
    # e^-5 = 0.67% at the cap (std error 0.026 points), median ln 2 s
    assert abs(sum(dues) / n - me.CAPPED_MEAN_NS) < 0.01 * S
    assert abs(dues.count(me.MAX_DELAY_NS) / n - math.exp(-5)) < 0.001
    assert abs(sorted(dues)[n // 2] - math.log(2) * S) < 0.01 * S
    assert m.pending()["results"] == n


def test_a_market_order_comes_back_at_the_price_when_it_is_due():
    m = market()
    due = m.submit(11, 5, "TMS", 200, 0, 10 * S)
    assert 10 * S <= due <= 15 * S
    assert m.next_due(10 * S) == (None, due)
    assert m.next_due(due) == (("trade_result", 11, 5, m.price(5, due), 200, due), None)
    assert m.next_due(due) == (None, None)
    due = m.submit(12, 0, "TMB", 100, 0, 0)
    late = due + 10 * S  # taken late: still the price of when it was due
    assert m.price(0, late) != m.price(0, due)
    assert m.next_due(late) == (("trade_result", 12, 0, m.price(0, due), 100, due), None)


def scan_trigger(falls: bool, limit: int, s: int, now: int) -> int | None:
    """The first time from now the curve is at or past the limit, by stepping through the
    times the price changes (each whole cent of the wave)."""
    t = now
    for _ in range(2 * (me.HIGH_CENTS - me.LOW_CENTS) + 2):
        p = me.price_cents(s, t)
        if (p <= limit) if falls else (p >= limit):
            return t
        t += CENT - me.wave_ns(s, t) % CENT
    return None


def test_a_limit_buy_triggers_when_the_curve_first_falls_to_its_limit():
    m = market()
    # security 0 at 450 s is at $30.00 and falls: $25.00 after 500 cents x 0.45 s = 225 s
    assert m.price(0, HALF) == 3000
    assert m.submit(21, 0, "TLB", 100, 2500, HALF) == 675 * S
    assert m.price(0, 675 * S) == 2500 and m.price(0, 675 * S - 1) == 2501
    assert m.pending()["waiting"] == 1
    assert m.next_due(675 * S - 1) == (None, 675 * S)
    assert m.next_due(675 * S) == (None, None)  # a trigger is no work of its own ...
    assert m.pending()["queued"] == 1  # ... it waits to pad a Market-Feed


def test_triggers_due_at_the_same_time_pad_in_the_order_they_came():
    m = market()
    for qty in (100, 200, 300, 400, 500):
        assert m.submit(qty, 0, "TLB", qty, 2500, HALF) == 675 * S
    m.next_due(675 * S)
    for _ in range(10):
        m.result_done(1, 2000, 100, 675 * S)
    padding = m.next_due(675 * S)[0][1][1::2]
    assert [e[2] for e in padding[:5]] == [100, 200, 300, 400, 500]
    assert all(e[3] for e in padding[:5]) and not any(e[3] for e in padding[5:])


def test_a_stop_loss_triggers_when_the_price_falls_to_it_a_limit_sell_when_it_rises():
    m = market()
    # security 1 at 0 s: 367 s into the wave, rising from $28.15; $26.00 on the way down at
    # 450 + 400 x 0.45 = 630 s of the wave, 263 s from now
    assert m.submit(31, 1, "TSL", 100, 2600, 0) == 263 * S
    # ... $29.00 on the way up at 900 x 0.45 = 405 s of the wave, 38 s from now
    assert m.submit(32, 1, "TLS", 100, 2900, 0) == 38 * S
    # security 0 at 500 s is at $28.89 and falling: $29.50 on the next rise, 427.5 s into
    # the next period: 400 + 427.5 s from now
    assert m.price(0, 500 * S) == 2889
    assert m.submit(33, 0, "TLS", 100, 2950, 500 * S) == 500 * S + 827_500_000_000
    rng = random.Random(5)
    for _ in range(150):
        s, now, lim = rng.randrange(685), rng.randrange(10 ** 13), rng.randrange(1990, 3011)
        for type_id in ("TLB", "TSL", "TLS"):
            want = scan_trigger(type_id != "TLS", lim, s, now)
            assert m.trigger_at(type_id, lim, s, now) == want == me.trigger_ns(
                type_id, lim, s, now), (type_id, lim, s, now)
            assert want is None or want - now < PERIOD
    with pytest.raises(ValueError, match="TMB is not a limit order's type"):
        me.trigger_ns("TMB", 2500, 0, 0)


def test_limit_orders_in_the_money_queue_at_once_and_pad_the_next_feed():
    m = market()
    assert m.price(0, 0) == 2000
    assert m.submit(41, 0, "TLB", 100, 2000, 0) == 0  # price <= limit: at once
    assert m.submit(42, 0, "TSL", 200, 2100, 0) == 0
    assert m.submit(43, 0, "TLS", 400, 2000, 0) == 0  # price >= limit: at once
    rising, falling = 100 * CENT, HALF + 100 * CENT  # at $21.00 and at $29.00
    assert m.price(0, rising) == 2100 and m.price(0, falling) == 2900
    assert m.trigger_at("TLB", 2100, 0, rising) == rising  # at the limit: at once
    assert m.trigger_at("TLS", 2900, 0, falling) == falling
    assert m.trigger_at("TLS", 2101, 0, rising) == rising + CENT  # a cent away: 0.45 s
    assert m.trigger_at("TLB", 2899, 0, falling) == falling + CENT
    assert m.submit(44, 0, "TLB", 800, 1999, 0) is None  # the wave never falls below $20
    assert m.submit(45, 0, "TLS", 800, 3001, 0) is None
    assert m.pending() == dict(limit_orders=5, waiting=0, queued=3, on_tape=0, never=2,
                               results=0, tape=0)
    m.result_done(9, 2222, 100, S)
    m.result_done(9, 2223, 100, S)
    assert m.pending()["queued"] == 1 and m.pending()["on_tape"] == 2
    assert m.counts()["padded_triggers"] == 2


def test_ten_trade_results_make_one_feed_of_twenty_entries():
    m = market()
    assert me.RESULTS_PER_FEED == 10
    for k in range(10):
        m.submit(100 + k, 10 * k, "TMB", 100 * (k + 1), 0, 0)
    results = drain(m, me.MAX_DELAY_NS)
    assert sorted(r[1] for r in results) == list(range(100, 110))
    assert [r[5] for r in results] == sorted(r[5] for r in results)  # in time order
    for _, _, s, price, qty, _ in results:
        assert m.next_due(6 * S)[0] is None  # 2 x 9 entries at most: no feed yet
        m.result_done(s, price, qty, 6 * S)
    work, nxt = m.next_due(6 * S)
    assert work[0] == "market_feed" and len(work[1]) == me.FEED_BATCH == 20
    assert nxt is None and m.next_due(6 * S) == (None, None)
    own, padding = work[1][0::2], work[1][1::2]
    assert own == tuple((s, price, qty, False) for _, _, s, price, qty, _ in results)
    for s, price, qty, trigger in padding:  # random securities at their price
        assert 0 <= s < 685 and price == m.price(s, 6 * S) and qty in (100, 200, 400, 800)
        assert not trigger
    assert m.counts()["feeds"] == 1 and m.counts()["padded_random"] == 10


def test_the_stores_grow_to_their_cap_and_refuse_past_it_losing_nothing():
    m = market(10, capacity=16, max_entries=40)
    assert m.capacity() == dict(heap=16, triggers=16, tape=16, max_entries=40)
    dues = [m.submit(k + 1, k % 10, "TMB", 100, 0, 0) for k in range(40)]
    assert m.capacity()["heap"] == 40  # 16, 32, then the cap
    with pytest.raises(OverflowError, match="the market emulator's heap holds 40 entries, "
                       "its cap"):
        m.submit(41, 0, "TMB", 100, 0, 0)
    assert m.pending()["results"] == 40 and m.counts()["market"] == 40
    results = drain(m, me.MAX_DELAY_NS)
    assert sorted(r[1] for r in results) == list(range(1, 41))
    assert [r[5] for r in results] == sorted(dues)
    for _, _, s, price, qty, _ in results[:20]:
        m.result_done(s, price, qty, 6 * S)
    assert m.pending()["tape"] == 40
    with pytest.raises(OverflowError, match="tape holds 40 entries"):
        m.result_done(0, 2000, 100, 6 * S)
    assert m.pending()["tape"] == 40 and m.counts()["results_done"] == 20


def test_limit_orders_keep_room_for_their_triggers():
    m = market(10, capacity=2, max_entries=3)
    for k in range(3):  # security 0 at 450 s: $30.00, a limit buy at $25 waits
        m.submit(k + 1, 0, "TLB", 100, 2500, HALF)
    with pytest.raises(OverflowError, match="trigger queue holds 3"):
        m.submit(4, 0, "TLB", 100, 2000, HALF)
    assert m.next_due(PERIOD) == (None, None)
    assert m.pending()["queued"] == 3 and m.pending()["limit_orders"] == 3


def test_the_tape_keeps_its_order_when_it_grows_wrapped():
    m = market(10, capacity=16, max_entries=1000)
    qty = iter(range(1, 1000))
    own = []

    def done(n):
        for _ in range(n):
            q = next(qty)
            m.result_done(q % 10, 2000 + q, q, S)
            own.append(q)

    done(13)  # 26 entries: grown to 32
    feeds = [m.next_due(S)[0]]  # 20 out: the tape's head at 20
    done(13)  # 32 entries, wrapped round the end
    assert m.capacity()["tape"] == 32
    done(1)  # 34: grown to 64 while wrapped
    assert m.capacity()["tape"] == 64
    feeds += drain(m, S)
    assert len(feeds) == 2 and m.pending()["tape"] == 14
    got = [e[2] for f in feeds for e in f[1][0::2]]
    assert got == own[:20]


def test_pending_limit_orders_through_trigger_tape_and_feed():
    m = market()
    m.submit(1, 0, "TLB", 100, 2500, HALF)  # due at 675 s
    m.submit(2, 0, "TLS", 100, 2950, 500 * S)  # due at 1327.5 s
    m.submit(3, 0, "TLB", 100, 1500, HALF)  # never
    assert m.pending()["limit_orders"] == 3 and m.pending()["waiting"] == 2
    assert m.next_due(675 * S) == (None, 1_327_500_000_000)
    assert m.pending() == dict(limit_orders=3, waiting=1, queued=1, on_tape=0, never=1,
                               results=0, tape=0)
    for k in range(10):
        m.result_done(k, 2000, 100, 700 * S)
    work, _ = m.next_due(700 * S)
    assert work[1][1] == (0, 2500, 100, True)  # the trigger at its limit pads first
    assert m.pending()["limit_orders"] == 2 and m.pending()["on_tape"] == 0


def test_bad_inputs_are_refused_and_change_nothing():
    m = market(10)
    for args, what in [((1, 10, "TMB", 100, 0, 0), "security 10 is out of range"),
                       ((1, -1, "TMB", 100, 0, 0), "security -1"),
                       ((1, 0, "TMB", 100, 0, -1), "clock -1"),
                       ((1, 0, "TMB", 100, 0, 2 ** 62 + 1), "clock 4611686018427387905"),
                       ((1, 0, "TXX", 100, 0, 0), "no trade type TXX"),
                       ((1, 0, "TMB", 0, 0, 0), "quantity 0"),
                       ((0, 0, "TMB", 100, 0, 0), "trade id 0"),
                       ((1, 0, "TLB", 100, 0, 0), "limit price 0"),
                       ((1, 0, "TLB", 100, 2 ** 40, 0), "beyond 32 bits")]:
        with pytest.raises(ValueError, match=what):
            m.submit(*args)
    with pytest.raises(ValueError, match="trade price 0"):
        m.result_done(0, 0, 100, 0)
    with pytest.raises(ValueError, match="security 10 is out of range"):
        m.result_done(10, 2000, 100, 0)
    for t in (-5, 2 ** 62 + 1):
        with pytest.raises(ValueError, match="not within 0..2"):
            m.next_due(t)
        with pytest.raises(ValueError, match="not within 0..2"):
            m.price(0, t)
    assert m.pending()["results"] == 0 and m.pending()["tape"] == 0
    assert not any(m.counts().values())
    with pytest.raises(ValueError, match="securities"):
        _native.BrokerageMarket(1, 0)
    for capacity, max_entries in ((10, 5), (0, 5), (1, 2 ** 32 + 1)):
        with pytest.raises(ValueError, match="need 1 <= capacity <= max_entries <= 2"):
            _native.BrokerageMarket(1, 5, capacity=capacity, max_entries=max_entries)
    with pytest.raises(RuntimeError, match="not initialised"):
        _native.BrokerageMarket.__new__(_native.BrokerageMarket).price(0, 0)


def test_the_same_seed_draws_the_same_delays_and_paddings():
    def run(seed):
        m = _native.BrokerageMarket(seed, 685)
        dues = [m.submit(k + 1, k, "TMB", 100, 0, 0) for k in range(10)]
        for _, _, s, price, qty, _ in drain(m, me.MAX_DELAY_NS):
            m.result_done(s, price, qty, 6 * S)
        return dues, m.next_due(6 * S)[0]

    assert run(3) == run(3) and run(3) != run(4)

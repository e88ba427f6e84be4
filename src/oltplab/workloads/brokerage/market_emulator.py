"""The brokerage's market emulator as Python sees it: its constants and its price curve as
pure functions (the C emulator, native/brokerage/market.c, ``_native.BrokerageMarket``, does
the same arithmetic; the tests hold the two to each other).

The curve: each security's price is a triangle wave between $20.00 and $30.00 with a period
of 15 minutes, in whole cents: from $20.00 it rises one cent every 0.45 s for 450 s to
$30.00, then falls back as fast. Security ``i`` (0-based) runs ``phase_ns(i)`` ahead:
``(i * PHASE_STRIDE mod 900)`` seconds, so that the first 900 securities all differ and
neighbours lie far apart. The clock is the run's: nanoseconds since its start, monotonic.

Limit orders trigger where the curve first reaches their price: a limit buy (TLB) and a
stop-loss (TSL) when the price falls to it (price <= limit), a limit sell (TLS) when it
rises to it (price >= limit); at once when it is there already; never when the wave does
not reach it (a fall below $20.00, a rise above $30.00). Every reachable limit is reached
within one period.

Market orders, and the trades a Market-Feed triggers (submitted back as market orders),
get their Trade-Result after NegExp(mean 1 s) capped at 5 s (mean 1 - e^-5 = 0.9933 s),
at the curve's price when it is due. Each completed Trade-Result puts its own ticker entry
and one padding entry (a queued trigger, else a random security at its price) on the tape:
a Market-Feed of FEED_BATCH (20) entries per 10 Trade-Results.
"""

from __future__ import annotations

import math

from .frames import FEED_BATCH

LOW_CENTS = 2_000
HIGH_CENTS = 3_000
#: The curve moves one cent every 0.45 s: 450 s up, 450 s down.
CENT_NS = 450_000_000
HALF_NS = CENT_NS * (HIGH_CENTS - LOW_CENTS)
PERIOD_NS = 2 * HALF_NS
#: Seconds between neighbouring securities' phases (prime to 900).
PHASE_STRIDE = 367
#: A market order's wait for its Trade-Result: NegExp(mean), capped.
MEAN_DELAY_NS = 1_000_000_000
MAX_DELAY_NS = 5_000_000_000
#: The mean of NegExp(MEAN_DELAY_NS) capped at MAX_DELAY_NS.
CAPPED_MEAN_NS = MEAN_DELAY_NS * (1 - math.exp(-MAX_DELAY_NS / MEAN_DELAY_NS))
#: Padding entries a completed Trade-Result adds beside its own.
PADDING = 1
RESULTS_PER_FEED = FEED_BATCH // (1 + PADDING)
#: Trade types that trigger when the price falls to their limit, and the one that triggers
#: when it rises to it.
FALLS_TO = ("TLB", "TSL")
RISES_TO = ("TLS",)
MARKET_TYPES = ("TMB", "TMS")


def phase_ns(security: int) -> int:
    """How far security ``security`` (0-based) runs ahead of the wave, in ns."""
    return security % 900 * PHASE_STRIDE % 900 * 1_000_000_000


def wave_ns(security: int, t_ns: int) -> int:
    """Where the security's wave is at ``t_ns``: 0 ($20.00) .. PERIOD_NS - 1."""
    return (t_ns % PERIOD_NS + phase_ns(security)) % PERIOD_NS


def price_cents(security: int, t_ns: int) -> int:
    """The curve's price of the security at ``t_ns`` (ns since the run's start), in
    cents."""
    x = wave_ns(security, t_ns)
    if x < HALF_NS:
        return LOW_CENTS + x // CENT_NS
    return HIGH_CENTS - (x - HALF_NS) // CENT_NS


def trigger_ns(type_id: str, limit_cents: int, security: int, now_ns: int) -> int | None:
    """When a limit order (TLB, TSL, TLS) at ``limit_cents`` submitted at ``now_ns``
    triggers: ``now_ns`` when in the money, else the first time the curve reaches the limit
    (less than PERIOD_NS later); None when it never does."""
    x, lim = wave_ns(security, now_ns), limit_cents
    if type_id in RISES_TO:
        if lim <= LOW_CENTS:
            return now_ns
        if lim > HIGH_CENTS:
            return None
        rise = (lim - LOW_CENTS) * CENT_NS  # the price is >= lim on [rise, fall)
        fall = HALF_NS + (HIGH_CENTS + 1 - lim) * CENT_NS
        if rise <= x < fall:
            return now_ns
        return now_ns + (rise - x if x < rise else PERIOD_NS - x + rise)
    if type_id not in FALLS_TO:
        raise ValueError(f"{type_id} is not a limit order's type")
    if lim >= HIGH_CENTS:
        return now_ns
    if lim < LOW_CENTS:
        return None
    leave = (lim - LOW_CENTS + 1) * CENT_NS  # the price is <= lim on [0, leave), [back, ..)
    back = HALF_NS + (HIGH_CENTS - lim) * CENT_NS
    if x < leave or x >= back:
        return now_ns
    return now_ns + back - x

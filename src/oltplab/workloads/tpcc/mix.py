"""Transaction mix, keying times and think times (TPC-C clause 5.2).

Selection uses a card deck per virtual user (clause 5.2.4.2 allows a deck of whole sets;
clause 5.2.3 gives the minimum shares). The deck holds 100 cards, 45 New-Order, 43 Payment
and 4 each of Order-Status, Delivery and Stock-Level, so that every pass through the deck
yields exactly 45/43/4/4/4. It is drawn without replacement and reshuffled when used up.
HammerDB instead draws uniformly from 23 slots (10/10/1/1/1, 43.5% New-Order).

Keying times are fixed minima and think times are negative-exponential with the spec's means,
truncated at 10x the mean (clause 5.2.5.4, 5.2.5.7). Both are off unless the run asks for them.
"""

from __future__ import annotations

import math

from ... import _native

NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL = range(5)
TYPES = (NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL)
# The deck, the keying and think times are drawn in C (oltplab._native.Terminal); the figures
# live there and are read here.
NAMES = _native.NAMES
WEIGHTS = _native.WEIGHTS  # cards per deck
DECK_SIZE = _native.DECK_SIZE
# Clause 5.2.5.7: minimum keying time (fixed) and mean think time, in seconds.
KEYING_S = _native.KEYING_S
THINK_MEAN_S = _native.THINK_MEAN_S
THINK_CAP = _native.THINK_CAP  # think times truncated at 10x their mean


def expected_think_mean(mean: float) -> float:
    """The mean of the truncated distribution: mean * (1 - e^-10)."""
    return mean * (1.0 - math.exp(-THINK_CAP))

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
import random

NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL = range(5)
TYPES = (NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL)
NAMES = ("new_order", "payment", "order_status", "delivery", "stock_level")

WEIGHTS = (45, 43, 4, 4, 4)
DECK_SIZE = sum(WEIGHTS)

# Clause 5.2.5.7: minimum keying time (fixed) and mean think time, in seconds.
KEYING_S = (18.0, 3.0, 2.0, 2.0, 2.0)
THINK_MEAN_S = (12.0, 12.0, 10.0, 5.0, 5.0)
THINK_CAP = 10.0  # think time truncated at 10x its mean


class Deck:
    """A shuffled deck of transaction types, reshuffled each time it is used up."""

    __slots__ = ("_cards", "_next", "_shuffle")

    def __init__(self, rng: random.Random, weights: tuple[int, ...] = WEIGHTS):
        cards = []
        for kind, n in enumerate(weights):
            cards.extend([kind] * n)
        if not cards:
            raise ValueError("a deck needs at least one card")
        self._cards = cards
        self._shuffle = rng.shuffle
        self._next = len(cards)  # shuffle on the first draw

    def draw(self) -> int:
        i = self._next
        if i == len(self._cards):
            self._shuffle(self._cards)
            i = 0
        self._next = i + 1
        return self._cards[i]


def think_time(rng: random.Random, mean: float) -> float:
    """-ln(r) * mean with r uniform on (0, 1], truncated at 10x the mean (clause 5.2.5.4)."""
    r = 1.0 - rng.random()  # random() is on [0, 1)
    return min(-math.log(r) * mean, THINK_CAP * mean)


def expected_think_mean(mean: float) -> float:
    """The mean of the truncated distribution: mean * (1 - e^-10)."""
    return mean * (1.0 - math.exp(-THINK_CAP))

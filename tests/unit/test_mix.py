"""The card deck and the keying/think times (clause 5.2)."""

import math
import random
from collections import Counter

import pytest

from oltplab.workloads.tpcc import mix


def test_every_pass_through_the_deck_is_exactly_45_43_4_4_4():
    deck = mix.Deck(random.Random(7))
    for _ in range(40):  # 4,000 draws, checked per 100 cards
        hand = Counter(deck.draw() for _ in range(mix.DECK_SIZE))
        assert [hand[k] for k in mix.TYPES] == [45, 43, 4, 4, 4]


def test_deck_order_is_shuffled_each_pass():
    deck = mix.Deck(random.Random(1))
    passes = [tuple(deck.draw() for _ in range(100)) for _ in range(3)]
    assert len(set(passes)) == 3
    assert passes[0] != tuple(sorted(passes[0]))


def test_mix_shares_over_a_few_thousand_draws_from_a_partial_deck():
    deck = mix.Deck(random.Random(3))
    n = 4_550  # not a whole number of decks
    hand = Counter(deck.draw() for _ in range(n))
    shares = [hand[k] / n for k in mix.TYPES]
    assert shares == pytest.approx([0.45, 0.43, 0.04, 0.04, 0.04], abs=0.002)


def test_same_seed_same_sequence():
    a, b = mix.Deck(random.Random(5)), mix.Deck(random.Random(5))
    assert [a.draw() for _ in range(300)] == [b.draw() for _ in range(300)]


def test_spec_times():
    assert mix.KEYING_S == (18.0, 3.0, 2.0, 2.0, 2.0)
    assert mix.THINK_MEAN_S == (12.0, 12.0, 10.0, 5.0, 5.0)  # Order-Status 10 s, Delivery 5 s
    assert mix.NAMES[mix.DELIVERY] == "delivery"


@pytest.mark.parametrize("mean", [5.0, 12.0])
def test_think_time_is_negative_exponential_with_the_spec_mean(mean):
    rng = random.Random(11)
    draws = [mix.think_time(rng, mean) for _ in range(40_000)]
    assert min(draws) >= 0.0
    assert max(draws) <= 10 * mean
    avg = sum(draws) / len(draws)
    assert avg == pytest.approx(mix.expected_think_mean(mean), rel=0.02)
    # median of an exponential distribution: mean * ln 2
    assert sorted(draws)[len(draws) // 2] == pytest.approx(mean * math.log(2), rel=0.03)


def test_think_time_truncates_at_ten_times_the_mean():
    class Tiny(random.Random):
        def random(self):
            return 1.0 - 2.0**-53  # the largest value random() returns: -ln(r) is about 36.7

    assert mix.think_time(Tiny(), 5.0) == 50.0

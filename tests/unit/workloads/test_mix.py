"""The card deck and the keying/think times (clause 5.2)."""

import math
from collections import Counter

import pytest

from oltplab.engines.common.loop import UserPlan
from oltplab.workloads.tpcc import mix
from oltplab.workloads.tpcc.inputs import RunConstants, terminal


class Deck:
    """The deck of a terminal seeded with ``seed``."""

    def __init__(self, seed):
        self.term = terminal(UserPlan(0, 1, 1, (1,), seed), 1, RunConstants(0, 70, 0, 0))

    def draw(self):
        return self.term.next_kind()


def test_every_pass_through_the_deck_is_exactly_45_43_4_4_4():
    deck = Deck(7)
    for _ in range(40):  # 4,000 draws, checked per 100 cards
        hand = Counter(deck.draw() for _ in range(mix.DECK_SIZE))
        assert [hand[k] for k in mix.TYPES] == [45, 43, 4, 4, 4]


def test_deck_order_is_shuffled_each_pass():
    deck = Deck(1)
    passes = [tuple(deck.draw() for _ in range(100)) for _ in range(3)]
    assert len(set(passes)) == 3
    assert passes[0] != tuple(sorted(passes[0]))


def test_mix_shares_over_a_few_thousand_draws_from_a_partial_deck():
    deck = Deck(3)
    n = 4_550  # not a whole number of decks
    hand = Counter(deck.draw() for _ in range(n))
    shares = [hand[k] / n for k in mix.TYPES]
    assert shares == pytest.approx([0.45, 0.43, 0.04, 0.04, 0.04], abs=0.002)


def test_same_seed_same_sequence():
    a, b = Deck(5), Deck(5)
    assert [a.draw() for _ in range(300)] == [b.draw() for _ in range(300)]


def test_spec_times():
    assert mix.KEYING_S == (18.0, 3.0, 2.0, 2.0, 2.0)
    assert mix.THINK_MEAN_S == (12.0, 12.0, 10.0, 5.0, 5.0)  # Order-Status 10 s, Delivery 5 s
    assert mix.NAMES[mix.DELIVERY] == "delivery"


@pytest.mark.parametrize("kind", [mix.NEW_ORDER, mix.DELIVERY])
def test_think_time_is_negative_exponential_with_the_spec_mean(kind):
    mean = mix.THINK_MEAN_S[kind]
    term = Deck(11).term
    draws = [term.think_time(kind) for _ in range(40_000)]
    assert min(draws) >= 0.0
    assert max(draws) <= 10 * mean
    avg = sum(draws) / len(draws)
    assert avg == pytest.approx(mix.expected_think_mean(mean), rel=0.02)
    # median of an exponential distribution: mean * ln 2
    assert sorted(draws)[len(draws) // 2] == pytest.approx(mean * math.log(2), rel=0.03)


def test_think_time_truncates_at_ten_times_the_mean():
    # P(-ln r > 10) = e^-10: about 45 of a million draws are cut to the cap
    term = Deck(2).term
    draws = [term.think_time(mix.DELIVERY) for _ in range(1_000_000)]
    assert max(draws) == 50.0
    assert 20 <= sum(d == 50.0 for d in draws) <= 80

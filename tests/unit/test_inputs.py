"""Input generation rules (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1) and terminal assignment."""

import random
from collections import Counter
from decimal import Decimal

import pytest

from oltplab.workloads.tpcc.inputs import (NOT_AN_ITEM, Inputs, RunConstants, assign_terminals,
                                           dealt_warehouses, draw_constants, nurand_fast)
from oltplab.workloads.tpcc.random import c_delta_ok, nurand

N = 20_000
C = RunConstants(c_load=100, c_last=200, c_id=300, c_ol_i_id=4000)


def gen(seed=1, w_max=10, stock_d_id=3):
    return Inputs(random.Random(seed), w_max, stock_d_id, C)


def test_constants_follow_the_c_delta_rule_and_ranges():
    for seed in range(200):
        c = draw_constants(random.Random(seed), c_load=seed % 256)
        assert c_delta_ok(c.c_last, c.c_load)
        assert 0 <= c.c_id <= 1023 and 0 <= c.c_ol_i_id <= 8191
    assert set(c.as_dict()) == {"c_load", "c_last", "c_id", "c_ol_i_id"}


class RandomBasedInts(random.Random):
    """randint drawn as lo + int(random() * n), the way Inputs draws."""

    def randint(self, a, b):
        return a + int(self.random() * (b - a + 1))


@pytest.mark.parametrize("A,x,y", [(255, 0, 999), (1023, 1, 3000), (8191, 1, 100_000)])
def test_fast_nurand_is_the_spec_formula(A, x, y):
    a, b = RandomBasedInts(4), RandomBasedInts(4)
    for C in (0, 17, A):
        assert [nurand(a, A, x, y, C) for _ in range(500)] == \
               [nurand_fast(b.random, A, x, y, C) for _ in range(500)]


class Fixed(random.Random):
    def __init__(self, value):
        super().__init__(0)
        self.value = value

    def random(self):
        return self.value


@pytest.mark.parametrize("r,ends", [(0.0, ("1.00", 1, 10, 5, 1)),
                                    (1.0 - 2.0**-53, ("5000.00", 10, 20, 15, 100))])
def test_uniform_draws_reach_both_ends_of_their_ranges(r, ends):
    g = Inputs(Fixed(r), 10, 3, C)
    amount, d_id, threshold, ol_cnt, rbk = ends
    assert g.payment(1)[6] == amount and g.payment(1)[1] == d_id
    assert g.stock_level(1)[2] == threshold
    assert g.new_order(1)[4] == ol_cnt and g.new_order(1)[5] == rbk


def test_new_order_inputs():
    g = gen()
    rows = [g.new_order(4) for _ in range(N)]
    assert {r[0] for r in rows} == {4} and {r[1] for r in rows} == {10}
    assert {r[2] for r in rows} == set(range(1, 11))
    assert {r[4] for r in rows} == set(range(5, 16))
    assert min(r[3] for r in rows) >= 1 and max(r[3] for r in rows) <= 3000
    assert {r[6] for r in rows} == {4000}
    rbk = sum(r[5] == 1 for r in rows) / N
    assert rbk == pytest.approx(0.01, abs=0.003)
    assert sum(r[4] for r in rows) / N == pytest.approx(10, abs=0.1)


def test_customer_ids_are_non_uniform():
    g = gen()
    ids = Counter(g.new_order(1)[3] for _ in range(N))
    # NURand(1023) makes some ids far more frequent than uniform 1/3000 would
    assert max(ids.values()) > 5 * N / 3000


def test_order_lines_remote_share_invalid_last_item_and_ranges():
    g = gen(w_max=5)
    lines, invalid_orders = [], 0
    for _ in range(4000):
        w, _, _, _, ol_cnt, rbk, _ = g.new_order(2)
        ol = g.order_lines(w, ol_cnt, rbk)
        assert len(ol) == ol_cnt
        assert all(i != NOT_AN_ITEM for i, _, _ in ol[:-1])
        if rbk == 1:
            assert ol[-1][0] == NOT_AN_ITEM
            invalid_orders += 1
        else:
            assert 1 <= ol[-1][0] <= 100_000
        lines.extend(ol)
    valid = [line for line in lines if line[0] != NOT_AN_ITEM]
    assert min(i for i, _, _ in valid) >= 1 and max(i for i, _, _ in valid) <= 100_000
    assert {q for _, _, q in lines} == set(range(1, 11))
    remote = [s for _, s, _ in lines if s != 2]
    assert len(remote) / len(lines) == pytest.approx(0.01, abs=0.003)
    assert set(remote) == {1, 3, 4, 5}  # never the home warehouse
    assert invalid_orders / 4000 == pytest.approx(0.01, abs=0.005)


def test_single_warehouse_is_always_home():
    g = gen(w_max=1)
    assert {s for _ in range(3000) for _, s, _ in g.order_lines(1, 15, 50)} == {1}
    assert {g.payment(1)[2] for _ in range(3000)} == {1}


def test_payment_shares_and_amounts():
    g = gen(w_max=8)
    rows = [g.payment(3) for _ in range(N)]
    remote = [r for r in rows if r[2] != 3]
    assert len(remote) / N == pytest.approx(0.15, abs=0.01)
    assert 3 not in {r[2] for r in remote} and {r[2] for r in remote} <= set(range(1, 9))
    assert {r[3] for r in remote} == set(range(1, 11))  # any district of the remote warehouse
    local = [r for r in rows if r[2] == 3]
    assert all(r[3] == r[1] for r in local)
    by_name = [r for r in rows if r[5] >= 0]
    assert len(by_name) / N == pytest.approx(0.60, abs=0.01)
    assert all(0 <= r[5] <= 999 for r in by_name)
    by_id = [r for r in rows if r[5] < 0]
    assert all(1 <= r[4] <= 3000 for r in by_id)
    amounts = [Decimal(r[6]) for r in rows]
    assert min(amounts) >= Decimal("1.00") and max(amounts) <= Decimal("5000.00")
    assert any(a != a.to_integral_value() for a in amounts)  # cents, not whole units
    assert sum(amounts) / N == pytest.approx(2500, rel=0.03)


def test_order_status_shares():
    g = gen()
    rows = [g.order_status(6) for _ in range(N)]
    assert {r[0] for r in rows} == {6}
    assert {r[1] for r in rows} == set(range(1, 11))
    assert sum(r[3] >= 0 for r in rows) / N == pytest.approx(0.60, abs=0.01)
    assert all(1 <= r[2] <= 3000 for r in rows if r[3] < 0)


def test_delivery_and_stock_level_inputs():
    g = gen(stock_d_id=7)
    assert {g.delivery(2)[1] for _ in range(3000)} == set(range(1, 11))
    sl = [g.stock_level(2) for _ in range(3000)]
    assert {r[1] for r in sl} == {7}  # the terminal's fixed district
    assert {r[2] for r in sl} == set(range(10, 21))


def test_home_warehouses_are_drawn_uniformly_like_hammerdb():
    terms = assign_terminals(random.Random(2), 4000, 8)
    homes = Counter(t.w_id for t in terms)
    assert set(homes) == set(range(1, 9))
    assert all(abs(n - 500) < 100 for n in homes.values())
    assert all(t.warehouses == (t.w_id,) for t in terms)
    assert [t.index for t in terms] == list(range(4000))


def test_stock_level_district_is_the_terminal_number_within_its_warehouse():
    terms = assign_terminals(random.Random(9), 60, 2)
    for w in (1, 2):
        mine = [t for t in terms if t.w_id == w]
        assert [t.stock_d_id for t in mine] == [(k % 10) + 1 for k in range(len(mine))]
    pairs = Counter((t.w_id, t.stock_d_id) for t in terms[:10])
    assert max(pairs.values()) == 1  # unique (W_ID, D_ID) while a warehouse has <= 10 users


def test_all_warehouses_deal():
    # HammerDB: user i of N gets ((i + k*N) mod W) + 1, k < ceil(W/N)
    assert dealt_warehouses(0, 3, 10) == (1, 4, 7, 10)
    assert dealt_warehouses(2, 3, 10) == (3, 6, 9, 2)
    assert dealt_warehouses(5, 8, 4) == (2,)
    terms = assign_terminals(random.Random(1), 3, 10, all_warehouses=True)
    covered = set().union(*(t.warehouses for t in terms))
    assert covered == set(range(1, 11))


def test_reproducible_from_a_seed():
    a = assign_terminals(random.Random(42), 16, 4)
    b = assign_terminals(random.Random(42), 16, 4)
    assert a == b
    g1, g2 = gen(5), gen(5)
    assert [g1.payment(1) for _ in range(50)] == [g2.payment(1) for _ in range(50)]

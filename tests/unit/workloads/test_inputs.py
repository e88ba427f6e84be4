"""Input generation rules (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1) and terminal assignment."""

import random
from collections import Counter
from decimal import Decimal

import pytest

from oltplab.engines.common.loop import UserPlan
from oltplab.workloads.tpcc.inputs import (NOT_AN_ITEM, RunConstants, assign_terminals,
                                           dealt_warehouses, draw_constants, terminal)
from oltplab.workloads.tpcc.mix import DELIVERY, NEW_ORDER, ORDER_STATUS, PAYMENT, STOCK_LEVEL
from oltplab.workloads.tpcc.random import c_delta_ok

N = 20_000
C = RunConstants(c_load=100, c_last=200, c_id=300, c_ol_i_id=4000)


def gen(seed=1, w_max=10, stock_d_id=3, warehouses=(1,)):
    return terminal(UserPlan(0, warehouses[0], stock_d_id, warehouses, seed), w_max, C)


def test_constants_follow_the_c_delta_rule_and_ranges():
    for seed in range(200):
        c = draw_constants(random.Random(seed), c_load=seed % 256)
        assert c_delta_ok(c.c_last, c.c_load)
        assert 0 <= c.c_id <= 1023 and 0 <= c.c_ol_i_id <= 8191
    assert set(c.as_dict()) == {"c_load", "c_last", "c_id", "c_ol_i_id"}


def test_amounts_span_their_range_in_cents():
    g = gen(w_max=10)
    amounts = [Decimal(g.inputs(PAYMENT, 1)[6]) for _ in range(100_000)]
    assert Decimal("1.00") <= min(amounts) < Decimal("1.50")
    assert Decimal("4999.50") < max(amounts) <= Decimal("5000.00")


def test_last_names_follow_the_nurand_formula():
    """C_LAST numbers drawn by Order-Status against the exact distribution of
    NURand(255, 0, 999) with C = 200: (((random(0, 255) | random(0, 999)) + C) % 1000)."""
    exact = Counter(((a | b) + C.c_last) % 1000 for a in range(256) for b in range(1000))
    g = gen()
    drawn = Counter(r[3] for r in (g.inputs(ORDER_STATUS, 1) for _ in range(500_000))
                    if r[3] >= 0)
    n, total = sum(drawn.values()), 256 * 1000
    distance = sum(abs(drawn[v] / n - exact[v] / total) for v in range(1000)) / 2
    assert distance < 0.03  # sampling noise is about 0.015; a uniform draw would be 0.3


def test_new_order_inputs():
    g = gen()
    rows = [g.inputs(NEW_ORDER, 4) for _ in range(N)]
    assert {r[0] for r in rows} == {4}
    assert {r[1] for r in rows} == set(range(1, 11))
    assert min(r[2] for r in rows) >= 1 and max(r[2] for r in rows) <= 3000
    assert all(len(r[3]) == len(r[4]) == len(r[5]) for r in rows)
    assert {len(r[3]) for r in rows} == set(range(5, 16))
    assert sum(len(r[3]) for r in rows) / N == pytest.approx(10, abs=0.1)
    rbk = sum(r[3][-1] == NOT_AN_ITEM for r in rows) / N
    assert rbk == pytest.approx(0.01, abs=0.003)


def test_customer_ids_are_non_uniform():
    g = gen()
    ids = Counter(g.inputs(NEW_ORDER, 1)[2] for _ in range(N))
    # NURand(1023) makes some ids far more frequent than uniform 1/3000 would
    assert max(ids.values()) > 5 * N / 3000


def test_order_lines_remote_share_invalid_last_item_and_ranges():
    g = gen(w_max=5)
    lines, invalid_orders = [], 0
    for _ in range(4000):
        _w, _d, _c, items, supplies, quantities = g.inputs(NEW_ORDER, 2)
        ol = list(zip(items, supplies, quantities))
        assert all(i != NOT_AN_ITEM for i, _, _ in ol[:-1])
        if ol[-1][0] == NOT_AN_ITEM:
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


def test_order_lines_are_drawn_by_the_constant_c_of_the_run():
    """OL_I_ID = NURand(8191, 1, 100000) with the run's C [2.1.6]: two runs with other C
    constants draw other items from the same generator state."""
    other = RunConstants(c_load=100, c_last=200, c_id=300, c_ol_i_id=4001)
    a = gen(7).inputs(NEW_ORDER, 1)
    b = terminal(UserPlan(0, 1, 3, (1,), 7), 10, other).inputs(NEW_ORDER, 1)
    assert a[:3] == b[:3] and a[4:] == b[4:]
    # ((x + C) mod 100000) + 1 with C one larger: the next item id, 100000 wrapping to 1
    assert [i % 100_000 + 1 for i in a[3] if i != NOT_AN_ITEM] == \
        [i for i in b[3] if i != NOT_AN_ITEM]


def test_the_procedures_loop_sends_the_same_draw_as_text():
    g1, g2 = gen(9, w_max=3), gen(9, w_max=3)
    for kind in (NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL) * 200:
        drawn, text = g1.inputs(kind, 2), g2.inputs_text(kind, 2)
        expected = tuple("{" + ",".join(map(str, v)) + "}" if isinstance(v, tuple) else str(v)
                         for v in drawn)
        assert text == expected


def test_single_warehouse_is_always_home():
    g = gen(w_max=1)
    assert {s for _ in range(3000) for s in g.inputs(NEW_ORDER, 1)[4]} == {1}
    assert {g.inputs(PAYMENT, 1)[2] for _ in range(3000)} == {1}


def test_payment_shares_and_amounts():
    g = gen(w_max=8)
    rows = [g.inputs(PAYMENT, 3) for _ in range(N)]
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
    rows = [g.inputs(ORDER_STATUS, 6) for _ in range(N)]
    assert {r[0] for r in rows} == {6}
    assert {r[1] for r in rows} == set(range(1, 11))
    assert sum(r[3] >= 0 for r in rows) / N == pytest.approx(0.60, abs=0.01)
    assert all(1 <= r[2] <= 3000 for r in rows if r[3] < 0)


def test_delivery_and_stock_level_inputs():
    g = gen(stock_d_id=7)
    assert {g.inputs(DELIVERY, 2)[1] for _ in range(3000)} == set(range(1, 11))
    sl = [g.inputs(STOCK_LEVEL, 2) for _ in range(3000)]
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
    assert [g1.inputs(PAYMENT, 1) for _ in range(50)] == [g2.inputs(PAYMENT, 1) for _ in range(50)]


def test_all_warehouses_terminal_picks_uniformly_among_its_dealt_warehouses():
    g = gen(w_max=10, warehouses=(2, 5, 9))
    picks = Counter(g.warehouse() for _ in range(30_000))
    assert set(picks) == {2, 5, 9}
    assert all(abs(n - 10_000) < 500 for n in picks.values())
    home = gen(w_max=10, warehouses=(7,))
    assert {home.warehouse() for _ in range(100)} == {7}


def test_terminal_rejects_bad_arguments():
    with pytest.raises(ValueError):
        gen(w_max=4, warehouses=(5,))
    with pytest.raises(ValueError):
        gen().inputs(5, 1)

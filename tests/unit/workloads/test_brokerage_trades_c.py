"""The build's trade loop in C (oltplab._native.BrokerageTrades, trades.native_trade_rows)
against its reference, trades.python_trade_rows: byte-identical pieces, the same balances,
tally, positions and generator state after, on chunks of several seeds, days and sizes (which
hold LIFO and FIFO walks, short positions, taxes, margin trades, accounts with one executor
and with several), and on made-up positions that reach the rarer paths (a tax of $400 or more,
lots held before the first trade)."""

from __future__ import annotations

import copy
import random

import pytest

from oltplab import _native
from oltplab.workloads.brokerage import customers as cu
from oltplab.workloads.brokerage import reference as ref
from oltplab.workloads.brokerage import trades as tr
from oltplab.workloads.brokerage.scale import Scale
from oltplab.workloads.brokerage.schema import COLUMNS


def test_the_build_runs_the_c_loop_on_the_constants_of_trades_py():
    assert tr.trade_rows is tr.native_trade_rows
    assert _native.BrokerageTrades.constants() == tr._native_constants()


def chunk(loop, seed: int, scale: Scale, first: int, count: int):
    """A customers chunk's pieces and tally, made with ``loop`` as the trade loop."""
    tally = tr.new_tally(scale)
    saved = tr.trade_rows
    tr.trade_rows = loop
    try:
        return list(cu.chunk_rows(seed, scale, first, count, tally)), tally
    finally:
        tr.trade_rows = saved


def rows(pieces, table: str) -> list[dict[str, str]]:
    return [dict(zip(COLUMNS[table], line.split("\t")))
            for t, text, _ in pieces if t == table for line in text.splitlines()]


# (seed, scale, first customer, customers): the last is a chunk of one customer, whose
# accounts have their owner as the only executor
CHUNKS = [(11, Scale(1_000, 5), 1, 100), (3, Scale(2_000, 3), 1_101, 100),
          (7, Scale(1_000, 1), 901, 37), (5, Scale(1_000, 2), 40, 1)]


@pytest.mark.parametrize("seed,scale,first,count", CHUNKS)
def test_a_chunk_is_the_same_byte_for_byte(seed, scale, first, count):
    python, python_tally = chunk(tr.python_trade_rows, seed, scale, first, count)
    native, native_tally = chunk(tr.native_trade_rows, seed, scale, first, count)
    assert [(t, n) for t, _, n in native] == [(t, n) for t, _, n in python]
    for (table, text, _), (_, expected, _) in zip(native, python):
        assert text == expected, table  # holding, holding_summary, the balances too
    assert native_tally == python_tally
    # what the chunk went through
    trades = rows(python, "trade")
    owners = {r["ap_ca_id"]: f'{r["ap_f_name"]} {r["ap_l_name"]}'
              for r in rows(python, "account_permission") if r["ap_acl"] == "0000"}
    by_others = sum(1 for r in trades if r["t_exec_name"] != owners[r["t_ca_id"]])
    assert {r["t_lifo"] for r in trades} == {"0", "1"}
    assert {r["t_is_cash"] for r in trades} == {"0", "1"}  # margin and cash
    assert any(r["t_tax"] != "0.00" for r in trades)
    assert any(int(r["hh_after_qty"]) < 0 for r in rows(python, "holding_history"))
    if count == 1:
        assert len(owners) == len(rows(python, "account_permission")) and not by_others
    else:
        assert by_others > 0


def made_up(seed: int):
    """Accounts of several executors with lots held already (long and short), a tax rate that
    makes taxes of $400 and more, and their balances and tally."""
    rng = random.Random(seed)
    symbols = [ref.symbol(i) for i in range(12)]
    accounts = []
    for k in range(6):
        positions = []
        for i in range(2 + k):
            pos = tr.new_position(symbols[(k + i) % 12], (k + i) % 4)
            for lot in range(k % 3):
                qty = (100 + 100 * lot) * (-1 if i % 2 else 1)
                pos[1].append([k * 10 + lot + 1, qty, 2_000 + 37 * lot, "2025-12-31 16:00:00"])
                pos[0] += qty
            positions.append(pos)
        names = [f"Owner {k}"] + [f"Holder {k}.{e}" for e in range(k % 3)]
        accounts.append((43_000_000_000 + k, 1 + k % 3, k % 3, 90_000 + 3_000 * k, 1 + k % 2,
                         names, positions))
    balances = [1_000_000 * (k + 1) for k in range(6)]
    return rng, accounts, balances, [[0, 0, 0], [0, 0, 0]]


@pytest.mark.parametrize("seed", [1, 2])
def test_made_up_accounts_end_the_same_with_the_same_generator_state(seed):
    scale = Scale(1_000, 2)
    ids = range(2_001, 2_001 + 3_000)
    python = made_up(seed)
    native = copy.deepcopy(python)
    expected = list(tr.python_trade_rows(*python[:1], scale, ids, *python[1:]))
    got = list(tr.native_trade_rows(*native[:1], scale, ids, *native[1:]))
    assert got == expected
    assert native[1:] == python[1:]  # positions, balances, tally
    assert native[0].getstate() == python[0].getstate()
    assert native[0].random() == python[0].random()
    taxes = [float(r["t_tax"]) for r in rows(expected, "trade")]
    assert max(taxes) >= 400  # money(tax), beyond the table of texts
    held_before = {lot[0] for account in made_up(seed)[1] for pos in account[6]
                   for lot in pos[1]}
    assert held_before and held_before & {int(r["hh_h_t_id"])
                                          for r in rows(expected, "holding_history")}


def test_batches_hand_the_generator_back_between_pieces():
    """Between two pieces, the generator is where Python's loop leaves it."""
    scale = Scale(1_000, 1)
    ids = range(1, 20_000)
    python, native = made_up(3), made_up(3)
    states = []
    for (rng, accounts, balances, tally), loop in ((python, tr.python_trade_rows),
                                                   (native, tr.native_trade_rows)):
        states.append([(table, rng.getstate(), list(balances))
                       for table, _, _ in loop(rng, scale, ids, accounts, balances, tally)])
    assert states[0] == states[1]
    assert sum(1 for table, _, _ in states[0] if table == "trade") == 3


def test_bad_input_is_refused_in_one_line():
    rng, accounts, balances, tally = made_up(4)
    scale = Scale(1_000, 1)
    with pytest.raises(ValueError, match="steps of 1"):
        list(tr.native_trade_rows(rng, scale, range(1, 10, 2), accounts, balances, tally))
    with pytest.raises(ValueError, match="broker"):
        list(tr.native_trade_rows(rng, scale, range(1, 10), accounts, balances, [[0], [0]]))
    with pytest.raises(ValueError, match="accounts and 1 balances"):
        list(tr.native_trade_rows(rng, scale, range(1, 10), accounts, balances[:1], tally))
    tables = list(tr._native_tables(1))
    tables[0] = tables[0][:-1] + (0.5,)
    with pytest.raises(ValueError, match="constants"):
        _native.BrokerageTrades(rng.getstate()[1], 1, 10, 1, accounts, balances, tally,
                                tuple(tables))

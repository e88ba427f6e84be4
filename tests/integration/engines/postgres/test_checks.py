"""Consistency conditions CC1-CC12 [TPC-C 3.3.2]: they hold after the load and after the
transactions, and each names the condition a broken row violates."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from oltplab.engines.postgres.tpcc.checks import run_checks
from oltplab.errors import SchemaError


def execute(dsn: str, *statements: str) -> None:
    async def go():
        conn = await asyncpg.connect(dsn)
        try:
            for statement in statements:
                await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(go())


def failing(dsn: str, after_run: bool = False) -> dict[str, int]:
    return {r.name: r.violations for r in run_checks(dsn, after_run=after_run) if not r.ok}


def test_all_conditions_hold_after_load(loaded_w1):
    results = run_checks(loaded_w1)
    assert [r.name for r in results] == [f"CC{k}" for k in range(1, 13)]
    assert [r.clause for r in results] == [f"3.3.2.{k}" for k in range(1, 13)]
    assert all(r.ok and r.violations == 0 and r.sample == [] for r in results), results
    assert all(r.description for r in results)


def test_after_run_leaves_out_cc11(loaded_w1):
    names = [r.name for r in run_checks(loaded_w1, after_run=True)]
    assert "CC11" not in names and len(names) == 11


# (breakage, undo, {condition: violations}); None for a count that depends on the data.
BREAKAGES = [
    ("UPDATE warehouse SET w_ytd = w_ytd + 1", "UPDATE warehouse SET w_ytd = w_ytd - 1",
     {"CC1": 1, "CC8": 1}),
    ("UPDATE district SET d_next_o_id = 3005 WHERE d_id = 3",
     "UPDATE district SET d_next_o_id = 3001 WHERE d_id = 3", {"CC2": 1}),
    ("DELETE FROM new_order WHERE no_d_id = 5 AND no_o_id = 2500",
     "INSERT INTO new_order VALUES (2500, 5, 1)", {"CC3": 1, "CC5": 1, "CC11": 1}),
    ("UPDATE orders SET o_carrier_id = NULL WHERE o_d_id = 7 AND o_id = 100",
     "UPDATE orders SET o_carrier_id = 1 WHERE o_d_id = 7 AND o_id = 100",
     {"CC5": 1, "CC7": None}),
    ("UPDATE district SET d_ytd = d_ytd - 5 WHERE d_id = 2",
     "UPDATE district SET d_ytd = d_ytd + 5 WHERE d_id = 2", {"CC1": 1, "CC9": 1}),
    ("UPDATE customer SET c_balance = 0 WHERE c_d_id = 9 AND c_id IN (1, 2)",
     "UPDATE customer SET c_balance = -10 WHERE c_d_id = 9 AND c_id IN (1, 2)",
     {"CC10": 2, "CC12": 2}),
    ("UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_d_id = 6 AND o_id = 10",
     "UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_d_id = 6 AND o_id = 10",
     {"CC4": 1, "CC6": 1}),
]


def test_a_broken_row_names_its_condition(scratch_w1):
    for breakage, undo, expected in BREAKAGES:
        execute(scratch_w1, breakage)
        results = {r.name: r for r in run_checks(scratch_w1)}
        failed = {name: r.violations for name, r in results.items() if not r.ok}
        assert set(failed) == set(expected), breakage
        for name, count in expected.items():
            assert count is None or failed[name] == count, (breakage, name)
            assert failed[name] > 0 and results[name].sample, (breakage, name)
        if breakage.startswith("UPDATE warehouse"):
            assert results["CC1"].sample == ["w_id=1 w_ytd=300001.00 sum_d_ytd=300000.00"]
        execute(scratch_w1, undo)
    assert failing(scratch_w1) == {}


def new_order(k: int) -> str:
    """The k-th of a set of New-Orders: 5..15 lines, every ninth rolled back by the unused item."""
    ol_cnt = 5 + k % 11
    items = [1 + (7919 * k + 104_729 * n) % 100_000 for n in range(ol_cnt)]
    if k % 9 == 0:
        items[-1] = 100_001
    quantities = [1 + (k + n) % 10 for n in range(ol_cnt)]
    return (f"SELECT neword(1, {1 + k % 10}, {1 + 7 * k}, '{{{','.join(map(str, items))}}}',"
            f" '{{{','.join(['1'] * ol_cnt)}}}', '{{{','.join(map(str, quantities))}}}')")


def test_conditions_hold_after_transactions(scratch_w1):
    execute(scratch_w1, *[new_order(k) for k in range(60)],
            *[f"SELECT payment(1, {1 + k % 10}, 1, {1 + (k * 3) % 10}, {1 + 13 * k},"
              f" {k * 37 % 1000 if k % 2 else -1}, {1 + k}.25)" for k in range(60)],
            "SELECT delivery(1, 4)", "SELECT delivery(1, 5)",
            "SELECT ostat(1, 3, 5, -1)", "SELECT slev(1, 3, 15)")
    assert failing(scratch_w1, after_run=True) == {}
    assert failing(scratch_w1) == {"CC11": 10}


def test_no_schema(pg):
    with pytest.raises(SchemaError, match="run 'oltplab tpcc build' first"):
        run_checks(pg.create_db("nc"))

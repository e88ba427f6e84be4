"""Every input is drawn by the client's Terminal: with one --seed, procedures-mode runs enter the
same order lines (clause 2.4.1.5), and the procedures loop's input counts match what it drew
and what the database holds. On a W=2 database, so that remote lines and payments occur."""

from __future__ import annotations

import asyncio
import random
import time

import asyncpg
import pytest

from oltplab.config import BuildSpec, RunSpec
from oltplab.engines.postgres import driver as pquser
from oltplab.engines.postgres.tpcc.loader import build
from oltplab.engines.postgres.tpcc.schema import schema_info
from oltplab.loadgen.manager import run_workload
from oltplab.engines.common.loop import UserPlan
from oltplab.engines.common.recorder import Recorder
from oltplab.workloads.tpcc.inputs import NOT_AN_ITEM, draw_constants, terminal
from oltplab.workloads.tpcc.mix import DELIVERY, NEW_ORDER, ORDER_STATUS, PAYMENT


@pytest.fixture(scope="module")
def loaded_w2(pg) -> str:
    dsn = pg.create_db("w2")
    build(dsn, BuildSpec(warehouses=2, build_users=2, seed=2024))
    return dsn


def copy_of(pg, dsn: str) -> str:
    return pg.create_db("s2", template=dsn.split("?")[0].rsplit("/", 1)[1])


def fetch(dsn: str, sql: str):
    async def go():
        conn = await asyncpg.connect(dsn)
        try:
            return await conn.fetch(sql)
        finally:
            await conn.close()

    return asyncio.run(go())


def entered_lines(dsn: str) -> list[tuple]:
    """The order lines of the orders a run entered, in the order it entered them."""
    return [tuple(r) for r in fetch(dsn, """
        SELECT ol_w_id, ol_d_id, ol_i_id, ol_supply_w_id, ol_quantity
          FROM order_line JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id
         WHERE ol_o_id > 3000 ORDER BY o_entry_d, ol_number""")]


def test_one_user_procedures_runs_with_the_same_seed_enter_the_same_order_lines(pg, loaded_w2):
    runs = []
    for seed in (31, 31, 32):
        dsn = copy_of(pg, loaded_w2)
        out = run_workload(dsn, RunSpec(users=(1,), rampup=0.0, duration=1.5, seed=seed))
        assert out.status == "completed", out.error
        runs.append(entered_lines(dsn))
    same_a, same_b, other = runs
    n = min(len(same_a), len(same_b))
    assert n > 300
    assert same_a[:n] == same_b[:n]  # the shorter run entered a prefix of the longer one's
    assert any(line[3] != line[0] for line in same_a[:n])  # remote supply warehouses among them
    m = min(n, len(other))
    assert sum(a != b for a, b in zip(same_a[:m], other[:m])) > 0.9 * m


def replay(plan, w_max, constants, count: int) -> list[tuple[int, tuple]]:
    """The first ``count`` transactions a terminal draws, as the procedures loop draws them."""
    t = terminal(plan, w_max, constants)
    out = []
    for _ in range(count):
        kind = t.next_kind()
        out.append((kind, t.inputs(kind, t.warehouse())))
    return out


def expected_inputs(drawn: list[tuple[int, tuple]], skipped: int) -> dict[str, int]:
    new_orders = [args for kind, args in drawn if kind == NEW_ORDER]
    payments = [args for kind, args in drawn if kind == PAYMENT]
    statuses = [args for kind, args in drawn if kind == ORDER_STATUS]
    return {
        "new_orders": len(new_orders),
        "order_lines": sum(len(a[3]) for a in new_orders),
        "remote_order_lines": sum(s != a[0] for a in new_orders for s in a[4]),
        "payments": len(payments),
        "remote_payments": sum(a[2] != a[0] for a in payments),
        "payments_by_last_name": sum(a[5] >= 0 for a in payments),
        "order_statuses": len(statuses),
        "order_status_by_last_name": sum(a[3] >= 0 for a in statuses),
        "deliveries": sum(kind == DELIVERY for kind, _ in drawn),
        "skipped_deliveries": skipped,
    }


def test_procedures_loop_input_counts_match_the_drawn_inputs_and_the_database(pg, loaded_w2):
    dsn = copy_of(pg, loaded_w2)
    constants = draw_constants(random.Random(5), schema_info(dsn).c_last_load)
    plan = UserPlan(0, 2, 1, (2,), 77)

    async def go():
        users = pquser.ProcUsers("tpcc", [pquser.open_connection(dsn, "oltplab-test", True)],
                                 [plan], 2, constants, waits=False)
        now = time.monotonic_ns()
        rec = Recorder(now, now + 2_000_000_000, users=1)  # the window covers the whole run
        try:
            await users.run(rec)
            # the loop's counts are in the recorder now: a worker's progress, which adds the
            # users' counts to the recorder's, must not count them twice
            assert (users.completed, users.headline) == (0, 0) and rec.completed > 0
            return rec, users.loop.counts()["inputs"], users.loop.completed
        finally:
            await users.aclose()

    rec, inputs, completed = asyncio.run(go())
    counted = sum(c.committed + c.rolled_back for c in rec.counts())
    assert sum(c.errors for c in rec.counts()) == 0
    # every transaction counts but the last, unless it ended before the window did
    assert counted in (completed, completed - 1) and counted > 300
    drawn = replay(plan, 2, constants, completed)
    assert inputs == expected_inputs(drawn[:counted], 0)  # nothing to skip on a fresh database
    assert inputs["remote_order_lines"] > 0 and inputs["remote_payments"] > 0

    # the database holds exactly the lines of the drawn New-Orders that were not rolled back
    entered = [line for kind, a in drawn if kind == NEW_ORDER and a[3][-1] != NOT_AN_ITEM
               for line in zip(a[3], a[4], a[5])]
    assert [line[2:] for line in entered_lines(dsn)] == entered
    payments = sum(kind == PAYMENT for kind, _ in drawn)
    assert fetch(dsn, "SELECT count(*) FROM history")[0][0] == 2 * 30_000 + payments

"""The brokerage on the C loop with its market emulator, on both transports (native/loop/
pqloop.c and myloop.c, native/brokerage/): a worker's users and its two actors, through the
engines' driver.Users as loadgen/worker.py makes them, on a build of 1,000 customers x 1 day.
The users' committed Trade-Orders reach the emulator through their answers' rows and come back
as Trade-Results the actors run; the server's broker counts grow by those Trade-Results.
test_native_sanitizers.py runs this module again under AddressSanitizer and
UndefinedBehaviorSanitizer, on builds the parent test makes (OLTPLAB_TEST_BK_DSN,
OLTPLAB_TEST_BK_MARIADB_DSN)."""

from __future__ import annotations

import asyncio
import itertools
import os
import time

import pytest

from oltplab import _native
from oltplab.engines.common.loop import UserPlan, WorkerPlan
from oltplab.engines.common.recorder import Recorder
from oltplab.engines.mariadb.instance import find_binary
from oltplab.workloads import get
from oltplab.workloads.brokerage.build import BrokerageBuildSpec
from oltplab.workloads.brokerage.inputs import draw_constants
from oltplab.workloads.brokerage.scale import parse_scale

S = 1_000_000_000
SCALE = parse_scale(1000, 1)
SEED = 31
BROKERAGE = get("brokerage")
_built = itertools.count()


def build_postgres(pg) -> str:
    """A brokerage of 1,000 customers x 1 day on the suite's PostgreSQL."""
    from oltplab.engines.postgres.brokerage.loader import build
    dsn = pg.create_db("bkloop")
    build(dsn, BrokerageBuildSpec(scale=SCALE, build_users=2, seed=SEED))
    return dsn


def build_mariadb(mariadb) -> str:
    """The same on the suite's MariaDB."""
    from oltplab.engines.mariadb.brokerage.loader import build
    name = f"bkloop_{os.getpid()}_{next(_built)}"  # one server per test process
    mariadb.ensure_database(name)
    dsn = mariadb.dsn(name)
    build(dsn, BrokerageBuildSpec(scale=SCALE, build_users=2, seed=SEED))
    return dsn


@pytest.fixture(scope="module")
def pg_brokerage(request) -> str:
    if os.environ.get("OLTPLAB_TEST_BK_DSN"):
        return os.environ["OLTPLAB_TEST_BK_DSN"]
    return build_postgres(request.getfixturevalue("pg"))


@pytest.fixture(scope="module")
def mariadb_brokerage(request) -> str:
    if os.environ.get("OLTPLAB_TEST_BK_MARIADB_DSN"):
        return os.environ["OLTPLAB_TEST_BK_MARIADB_DSN"]
    if find_binary("mariadbd") is None:
        pytest.skip("mariadbd is not installed (Debian: mariadb-server-core)")
    return build_mariadb(request.getfixturevalue("mariadb"))


def trades_completed(engine: str, dsn: str) -> int:
    """The server's count of Trade-Results: each adds one to its broker's b_num_trades."""
    if engine == "postgres":
        import psycopg
        with psycopg.connect(dsn) as conn:
            return conn.execute("SELECT sum(b_num_trades) FROM broker").fetchone()[0]
    from oltplab.engines.mariadb import client
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT sum(b_num_trades) FROM broker")
            return int(cur.fetchone()[0])
    finally:
        conn.close()


def schema_of(engine: str, dsn: str):
    if engine == "postgres":
        from oltplab.engines.postgres.brokerage.schema import schema_info
    else:
        from oltplab.engines.mariadb.brokerage.schema import schema_info
    return schema_info(dsn)


def run_worker(engine: str, dsn: str, users: int, measure_s: float):
    """One worker of ``users`` users and its actors (Workload.actors_for), as
    loadgen/worker.py connects them, measured from the start for ``measure_s``."""
    from oltplab import engines
    driver = engines.get(engine).driver
    constants = draw_constants(None, schema_of(engine, dsn))
    ups = tuple(UserPlan(i, 0, 0, (), 7000 + i) for i in range(users))
    plan = WorkerPlan(worker=0, dsn=dsn, mode="procedures", users=ups, w_max=0,
                      constants=constants, engine=engine, workload="brokerage",
                      actors=BROKERAGE.actors_for(users), flush_stats=False)

    async def go():
        conns = [driver.connect(plan) for _ in range(users + plan.actors)]
        procs = driver.Users(conns, list(ups), plan)
        now = time.monotonic_ns()
        rec = Recorder(now, now + int(measure_s * S), users=len(conns), workload=BROKERAGE)
        try:
            await procs.run(rec)
        finally:
            await procs.aclose()
        return rec, procs

    return asyncio.run(go())


@pytest.mark.parametrize("engine", ["postgres", "mariadb"])
def test_orders_come_back_as_trade_results_the_actors_run(engine, request):
    dsn = request.getfixturevalue("pg_brokerage" if engine == "postgres"
                                  else "mariadb_brokerage")
    before = trades_completed(engine, dsn)
    rec, procs = run_worker(engine, dsn, users=2, measure_s=4.0)
    after = trades_completed(engine, dsn)
    counts = {name: c for name, c in zip(_native.BROKERAGE_KINDS, rec.counts())}
    done = {name: c.committed + c.rolled_back for name, c in counts.items()}
    assert all(done[name] > 0 for name in _native.BROKERAGE_NAMES), done
    assert sum(c.errors for c in counts.values()) == 0, counts
    # market orders committed by the users, read from their rows, completed by the actors
    results = counts["trade_result"].committed
    assert results > 0 and done["data_maintenance"] == 1, done
    assert results <= counts["trade_order"].committed
    # the window covers the whole run: the server completed the counted ones, and at most
    # one more an actor (2) had in flight at the window's end
    assert results <= after - before <= results + BROKERAGE.actors_for(2), (before, after)
    assert rec.inputs.get("market_refused", 0) == 0, rec.inputs

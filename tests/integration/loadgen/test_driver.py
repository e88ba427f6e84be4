"""The virtual-user driver end to end: a procedures-mode run, Ctrl-C, a lost database."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time

import asyncpg
import psutil
import pytest
from interrupts import INTERRUPTIBLE

from oltplab.config import RunSpec
from oltplab.engines.postgres.tpcc.checks import run_checks
from oltplab.errors import SchemaError
from oltplab.metrics.histogram import decode
from oltplab.loadgen.manager import RunOutcome, Tick, run_workload

TYPES = ("new_order", "payment", "order_status", "delivery", "stock_level")


def worker_processes(parent_pid: int) -> list[psutil.Process]:
    """Worker processes started by the manager with this pid (wherever they were reparented)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info["cmdline"] or []
        if "oltplab.loadgen.worker" in cmd and cmd[-1:] == [str(parent_pid)]:
            found.append(p)
    return found


def sql(dsn: str, statement: str):
    async def go():
        conn = await asyncpg.connect(dsn)
        try:
            return await conn.fetch(statement)
        finally:
            await conn.close()

    return asyncio.run(go())


def test_procedures_run_measures_both_sides_and_keeps_consistency(scratch_w1):
    ticks: list[Tick] = []
    steps: list[dict] = []
    spec = RunSpec(users=(2,), rampup=1.0, duration=4.0, seed=11, workers=2)
    out = run_workload(scratch_w1, spec, on_tick=ticks.append, on_step=steps.append)

    assert isinstance(out, RunOutcome)
    assert out.status == "completed", out.error
    assert out.workers == 2 and len(out.steps) == 1 and steps == out.steps
    assert set(out.constants) == {"c_load", "c_last", "c_id", "c_ol_i_id"}
    step = out.steps[0]
    json.dumps(step)  # JSON-ready
    assert step["users"] == 2 and step["partial"] is False
    assert step["measured_s"] == pytest.approx(4.0)
    assert step["tpm"] > 0 and step["nopm"] > 0
    tx = step["transactions"]
    assert set(tx) == set(TYPES) == set(step["histograms"])
    for name in TYPES:
        t = tx[name]
        assert t["count"] == t["committed"] + t["rolled_back"]
        assert decode(step["histograms"][name]).get_total_count() == t["count"]
        assert t["errors"] == 0
        if t["count"]:
            assert 0 < t["p50"] <= t["p95"] <= t["p99"] <= t["max"]
    assert all(tx[n]["rolled_back"] == 0 for n in TYPES[1:])
    completed = sum(t["count"] for t in tx.values())
    assert step["client_tpm"] == round(completed * 60 / step["measured_s"])
    assert step["client_nopm"] == round(tx["new_order"]["committed"] * 60 / step["measured_s"])
    # The server's counts agree with the client's: the users publish their backends'
    # statistics at the boundaries (pg_stat_force_next_flush), so the only difference left is
    # the transactions in flight at the boundaries, at most one or two per user. Without the
    # flush the server's TPM of a 4 s window was off by up to 15%.
    slack = 2 * spec.users[0] * 60 / step["measured_s"]
    assert abs(step["tpm"] - step["client_tpm"]) <= 0.02 * step["client_tpm"] + slack
    assert abs(step["nopm"] - step["client_nopm"]) <= 0.02 * step["client_nopm"] + slack
    assert step["server"]["d_next_o_id_delta"] > 0
    assert step["server"]["own_xacts_excluded"] <= 2 * spec.users[0]

    phases = [t.phase for t in ticks]
    assert "measure" in phases and phases.index("measure") > phases.index("rampup")
    assert not worker_processes(os.getpid())
    failed = [r for r in run_checks(scratch_w1, after_run=True) if not r.ok]
    assert not failed, failed


MANAGER = """
import json, sys
from oltplab.config import RunSpec
from oltplab.loadgen.manager import run_workload

def tick(t):
    print("TICK", t.phase, flush=True)

out = run_workload(sys.argv[1], RunSpec(users=(2,), rampup=0.5, duration=120, seed=5),
                   on_tick=tick)
print("OUTCOME", json.dumps({"status": out.status, "steps": out.steps}), flush=True)
"""


def test_ctrl_c_returns_the_partial_step_and_leaves_no_worker(scratch_w1):
    proc = subprocess.Popen([sys.executable, "-c", MANAGER, scratch_w1], stdout=subprocess.PIPE,
                            text=True, start_new_session=True, **INTERRUPTIBLE)
    try:
        seen = 0
        for line in proc.stdout:
            if line.startswith("TICK measure"):
                seen += 1
                if seen == 2:
                    break
        assert seen == 2, "the run never reached its measurement"
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: the whole process group
        rest, _ = proc.communicate(timeout=20)
        assert time.monotonic() - t0 < 10
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    outcome = json.loads(next(ln for ln in rest.splitlines() if ln.startswith("OUTCOME"))[8:])
    assert outcome["status"] == "interrupted"
    (step,) = outcome["steps"]
    assert step["partial"] is True
    assert 0.5 < step["measured_s"] < 10
    assert sum(t["count"] for t in step["transactions"].values()) > 0
    assert step["tpm"] > 0
    assert proc.returncode == 0
    time.sleep(0.2)
    assert not worker_processes(proc.pid)


def test_lost_database_connections_fail_the_run_within_seconds(scratch_w1):
    dbname = scratch_w1.split("?")[0].rsplit("/", 1)[1]
    admin = scratch_w1.replace(f"/{dbname}", "/postgres")
    stop = threading.Event()

    def terminate_users():
        while not stop.wait(0.2):
            rows = sql(admin, f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{dbname}'"
                              " AND application_name = 'oltplab'")
            if rows[0][0] == 2:
                break
        time.sleep(1.5)  # into the measurement
        sql(admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                   f" WHERE datname = '{dbname}' AND application_name = 'oltplab'")

    killer = threading.Thread(target=terminate_users)
    killer.start()
    t0 = time.monotonic()
    try:
        out = run_workload(scratch_w1, RunSpec(users=(2,), rampup=0.5, duration=120, seed=2))
    finally:
        stop.set()
        killer.join()
    assert out.status == "failed"
    assert "terminat" in out.error or "connection" in out.error.lower()
    assert time.monotonic() - t0 < 20
    assert out.steps == []
    assert not worker_processes(os.getpid())


def test_missing_functions_are_reported_before_starting(scratch_w1):
    sql(scratch_w1, "DROP FUNCTION slev(int, int, int)")
    with pytest.raises(SchemaError, match="slev"):
        run_workload(scratch_w1, RunSpec(users=(1,), rampup=0, duration=1))
    assert not worker_processes(os.getpid())


def test_functions_of_an_older_build_are_reported_before_starting(scratch_w1):
    """A database built when neword drew the order lines itself (7 scalar arguments)."""
    sql(scratch_w1, "DROP FUNCTION neword(int, int, int, int[], int[], int[])")
    sql(scratch_w1, "CREATE FUNCTION neword(int, int, int, int, int, int, int) RETURNS int"
                    " LANGUAGE sql AS 'SELECT 1'")
    with pytest.raises(SchemaError, match="older oltplab"):
        run_workload(scratch_w1, RunSpec(users=(1,), rampup=0, duration=1))
    assert not worker_processes(os.getpid())


def test_autopilot_steps_end_on_time_while_users_key_and_think(scratch_w1):
    """Keying times are 2-18 s: users asleep at measure_end must not hold the step up."""
    steps: list[dict] = []
    spec = RunSpec(users=(1, 3), rampup=0.0, duration=1.5, keying_thinking=True,
                   all_warehouses=True, seed=8)
    t0 = time.monotonic()
    out = run_workload(scratch_w1, spec, on_step=steps.append)
    elapsed = time.monotonic() - t0
    assert out.status == "completed", out.error
    assert [s["users"] for s in out.steps] == [1, 3] and steps == out.steps
    assert [s["driver"]["workers"] for s in out.steps] == [1, min(3, out.workers)]
    assert all(not s["partial"] and s["measured_s"] == 1.5 for s in out.steps)
    # nobody finishes keying within 1.5 s, so nothing completes
    assert all(t["count"] == 0 for s in out.steps for t in s["transactions"].values())
    assert elapsed < 15
    assert not worker_processes(os.getpid())


# the five transaction functions, each a call of scripted(): the tests' script decides
SCRIPTED_PROCEDURES = """
CREATE FUNCTION neword(int, int, int, int[], int[], int[]) RETURNS int
    LANGUAGE sql AS 'SELECT scripted()';
CREATE FUNCTION payment(int, int, int, int, int, int, numeric) RETURNS int
    LANGUAGE sql AS 'SELECT scripted()';
CREATE FUNCTION ostat(int, int, int, int) RETURNS int LANGUAGE sql AS 'SELECT scripted()';
CREATE FUNCTION delivery(int, int) RETURNS int LANGUAGE sql AS 'SELECT scripted()';
CREATE FUNCTION slev(int, int, int) RETURNS int LANGUAGE sql AS 'SELECT scripted()';
"""

SCRIPTED = """
CREATE SEQUENCE step;
CREATE TABLE script (step int PRIMARY KEY, state text, result int);
INSERT INTO script VALUES (1, '40001', NULL), (2, '40P01', NULL), (3, NULL, -1),
                          (4, '23505', NULL), (5, NULL, 1), (6, 'kill', NULL);
CREATE FUNCTION scripted() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    n bigint := nextval('step');
    s script;
BEGIN
    SELECT * INTO s FROM script WHERE step = n;
    IF s.state = 'kill' THEN
        PERFORM pg_terminate_backend(pg_backend_pid());
    ELSIF s.state IS NOT NULL THEN
        RAISE EXCEPTION 'scripted %', s.state USING ERRCODE = s.state;
    END IF;
    RETURN s.result;
END $$;
""" + SCRIPTED_PROCEDURES


def test_procedures_loop_retries_counts_errors_and_stops_on_a_lost_connection(pg):
    """The C loop of procedures mode against functions that fail on cue: 40001 and 40P01
    are retried (2 retries on one transaction), 23505 is an error and the user carries on,
    and the server ending the backend fails the users with the server's message, on one line."""
    from oltplab.engines.postgres import driver as pquser
    from oltplab.engines.common.loop import UserPlan
    from oltplab.engines.common.recorder import Recorder, UserFailed
    from oltplab.workloads.tpcc.inputs import RunConstants

    dsn = pg.create_db("scripted")

    async def install():
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(SCRIPTED)  # several statements: the simple query protocol
        finally:
            await conn.close()

    asyncio.run(install())

    async def go():
        conn = pquser.open_connection(dsn, "oltplab-test", flush_stats=False)
        users = pquser.ProcUsers("tpcc", [conn], [UserPlan(0, 1, 1, (1,), 7)], 1,
                                 RunConstants(0, 70, 1, 1), waits=False, flush_stats=False)
        now = time.monotonic_ns()
        boundaries = []
        rec = Recorder(now, now + 60 * 10**9, users=1,
                       on_boundary=lambda b, n: boundaries.append((b, n)))
        try:
            with pytest.raises(UserFailed, match="terminating connection due to administrator "
                                                 "command") as failed:
                await users.run(rec)
            assert "\n" not in str(failed.value)
        finally:
            await users.aclose()
        return rec.counts(), boundaries

    counts, boundaries = asyncio.run(go())
    assert sum(c.committed + c.rolled_back for c in counts) == 2
    assert sum(c.errors for c in counts) == 1
    assert sum(c.retries for c in counts) == 2
    assert boundaries == [(0, 1)]  # the ramp-up was crossed at once; the end never was


def test_procedures_loop_hands_over_response_times_in_bulk(scratch_w1):
    """Response times leave the C loop whenever a type's buffer fills (here every 16), and
    every transaction counted in the window is in its type's histogram exactly once."""
    import random

    from oltplab.engines.postgres import driver as pquser
    from oltplab.engines.common.loop import UserPlan
    from oltplab.engines.common.recorder import Recorder
    from oltplab.workloads.tpcc.inputs import draw_constants
    from oltplab.engines.postgres.tpcc.schema import schema_info

    constants = draw_constants(random.Random(3), schema_info(scratch_w1).c_last_load)

    async def go():
        conns = [pquser.open_connection(scratch_w1, "oltplab-test", True) for _ in range(2)]
        users = pquser.ProcUsers("tpcc", conns,
                                 [UserPlan(i, 1, i + 1, (1,), 40 + i) for i in range(2)],
                                 1, constants, waits=False, bulk=16)
        now = time.monotonic_ns()
        boundaries = []
        rec = Recorder(now + 500_000_000, now + 2_500_000_000, users=2,
                       on_boundary=lambda b, n: boundaries.append((b, n)))
        try:
            await users.run(rec)
        finally:
            await users.aclose()
        return rec, boundaries

    rec, boundaries = asyncio.run(go())
    assert boundaries == [(0, 2), (1, 2)]
    histograms = [decode(text) for text in rec.encoded()]
    counts = rec.counts()
    assert sum(c.committed for c in counts) > 200
    for c, h in zip(counts, histograms):
        assert h.get_total_count() == c.committed + c.rolled_back
        assert c.errors == 0
    assert rec.completed > sum(c.committed + c.rolled_back for c in counts)  # ramp-up too

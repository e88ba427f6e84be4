"""The C loop in resilient mode (runs with --inject): a lost connection loses one user, whose
transaction in flight counts as an error; Python opens another connection and hands it over
(ProcLoop.replace), and the user goes on. Also the replace/take_lost/wake paths' refusals."""

from __future__ import annotations

import asyncio
import functools
import time

import asyncpg
import pytest

from oltplab import _native
from oltplab.engines.postgres import driver as pquser
from oltplab.engines.common.loop import UserPlan
from oltplab.engines.common.recorder import Recorder, UserFailed
from oltplab.workloads.tpcc.inputs import RunConstants

from ..loadgen.test_driver import SCRIPTED_PROCEDURES

# every type calls scripted(): step 3 fails with 23505 (an error, the user goes on), step 5
# ends its own backend (57P01, then the connection closes); every other step commits
SCRIPTED = """
CREATE SEQUENCE step;
CREATE FUNCTION scripted() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    n bigint := nextval('step');
BEGIN
    IF n = 3 THEN
        RAISE EXCEPTION 'scripted' USING ERRCODE = '23505';
    ELSIF n = 5 THEN
        PERFORM pg_terminate_backend(pg_backend_pid());
    END IF;
    RETURN 1;
END $$;
""" + SCRIPTED_PROCEDURES


@pytest.fixture
def scripted(pg) -> str:
    dsn = pg.create_db("lost")

    async def install():
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(SCRIPTED)
        finally:
            await conn.close()

    asyncio.run(install())
    return dsn


def _users(dsn: str, n: int, reopen) -> pquser.ProcUsers:
    conns = [pquser.open_connection(dsn, "oltplab-test", flush_stats=False) for _ in range(n)]
    return pquser.ProcUsers("tpcc", conns, [UserPlan(i, 1, 1, (1,), 7 + i) for i in range(n)],
                            1, RunConstants(0, 70, 1, 1), waits=False, flush_stats=False,
                            bulk=16, reopen=reopen)


def test_lost_connection_loses_one_user_who_reconnects_and_goes_on(scripted):
    reopen = functools.partial(pquser.reopen_connection, scripted, "oltplab-test", False)

    async def go():
        users = _users(scripted, 2, reopen)
        now = time.monotonic_ns()
        boundaries = []
        rec = Recorder(now, now + 1_500_000_000, users=2,
                       on_boundary=lambda b, n: boundaries.append((b, n)))
        try:
            await users.run(rec)
            return rec, boundaries, users.lost, users.loop.counts()["lost"]
        finally:
            await users.aclose()

    rec, boundaries, replaced, lost = asyncio.run(go())
    counts = rec.counts()
    assert lost == 1 and replaced == 1
    assert sum(c.errors for c in counts) == 2  # the 23505 and the transaction lost in flight
    assert sum(c.committed for c in counts) > 20, "the users went on after the loss"
    assert boundaries == [(0, 2), (1, 2)]


def test_lost_connection_without_reopen_fails_the_run_as_before(scripted):
    async def go():
        users = _users(scripted, 1, None)
        now = time.monotonic_ns()
        rec = Recorder(now, now + 5_000_000_000, users=1)
        try:
            with pytest.raises(UserFailed, match="administrator command"):
                await users.run(rec)
        finally:
            await users.aclose()

    asyncio.run(go())


def test_connect_failure_is_the_server_message_not_an_attribute_error(pg):
    """psycopg's get_error_message() gives str: connecting to a missing database raised
    AttributeError ('str' has no 'decode') instead of the server's message."""
    with pytest.raises(UserFailed, match="no_such_database_here"):
        pquser.open_connection(pg.dsn("no_such_database_here"), "oltplab-test", False)


def test_reconnect_gives_up_after_its_bound(pg):
    bad = pg.dsn("no_such_database_here")
    t0 = time.monotonic()
    with pytest.raises(UserFailed, match="gave up after 0.3 s"):
        pquser.reopen_connection(bad, "oltplab-test", False, timeout=0.3)
    assert time.monotonic() - t0 < 3


def test_replace_refuses_a_user_that_is_not_lost_or_out_of_range(scripted):
    users = _users(scripted, 1, None)
    try:
        now = time.monotonic_ns()
        lp = _native.ProcLoop(
            workload="tpcc", libpq=pquser.libpq_path(), connections=users.conns,
            pointers=[c.pgconn_ptr for c in users.conns], terminals=users.terminals,
            names=pquser.kind_names("tpcc"), flush_sql="SELECT 1",
            ramp_end_ns=now + 60 * 10**9,
            measure_end_ns=now + 120 * 10**9,
            waits=False, flush_stats=False, idle_published_after_ns=0, max_retries=1,
            max_consecutive_errors=1, retryable=(), fatal=(), bulk=4, resilient=True)
        conn = users.conns[0]
        with pytest.raises(ValueError, match="user 0 is not lost"):
            lp.replace(0, conn, conn.pgconn_ptr)
        with pytest.raises(IndexError, match="no user 1"):
            lp.replace(1, conn, conn.pgconn_ptr)
        with pytest.raises(IndexError):
            lp.replace(-1, conn, conn.pgconn_ptr)
        assert lp.take_lost() == ()
        lp.wake()
        assert lp.run() == _native.WOKEN  # a wake-up without a stop is not STOPPED
        lp.stop()
        assert lp.run() == _native.STOPPED
        assert _native.ProcLoop.__new__(_native.ProcLoop).take_lost.__doc__ is not None
        with pytest.raises(RuntimeError, match="not initialised"):
            _native.ProcLoop.__new__(_native.ProcLoop).replace(0, conn, conn.pgconn_ptr)
    finally:
        asyncio.run(users.aclose())


def test_reconnect_stops_trying_when_the_users_stop(pg):
    import threading
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    t0 = time.monotonic()
    with pytest.raises(UserFailed, match="the users stopped"):
        pquser.reopen_connection(pg.dsn("no_such_database_here"), "oltplab-test", False,
                                 cancel=cancel)
    assert time.monotonic() - t0 < 2

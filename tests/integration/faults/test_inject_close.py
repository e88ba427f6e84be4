"""The end of a run with --inject on a real server: close() waits a bounded time for a restart
under way, and a second Ctrl-C during close() does not leave the server throttled."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from oltplab.config import DbSpec, parse_inject
from oltplab.engines.base import Target
from oltplab.engines.postgres.instance import PostgresInstance
from oltplab.errors import UsageError
from oltplab.faults import inject
from oltplab.faults.inject import Injector
from oltplab.faults.throttle import io_root

from conftest import ctrl_c_when, free_port

MiB = 1024**2


@pytest.fixture
def server(server_tmp) -> Iterator[PostgresInstance]:
    inst = PostgresInstance(DbSpec(datadir=server_tmp / "data", port=free_port(),
                                   db_memory=32 * MiB))
    inst.start()
    try:
        yield inst
    finally:
        inst.stop("immediate")


def _injector(inst: PostgresInstance, event: str) -> tuple[Injector, dict]:
    target = Target(dsn=inst.dsn("postgres"), admin_dsn=inst.dsn("postgres"), instance=inst,
                    started_here=True)
    injector = Injector((parse_inject(event),), target, 20)
    injector.mark("ramp_end", time.monotonic_ns())
    return injector, injector.records[0]


def _wait_for(rec: dict, key: str) -> None:
    deadline = time.monotonic() + 30
    while key not in rec and "error" not in rec:
        assert time.monotonic() < deadline, rec
        time.sleep(0.01)
    assert "error" not in rec, rec


def test_close_waits_a_bounded_time_for_a_restart_under_way(server, monkeypatch):
    """A backend that cannot exit (stopped here, stuck in IO in life) holds up the restart
    after kill-server for ORPHANS_WAIT_S; close() gives up after CLOSE_WAIT_S."""
    monkeypatch.setattr(inject, "CLOSE_WAIT_S", 1.0, raising=False)

    async def connect():
        conn = await asyncpg.connect(server.dsn("postgres"), timeout=10)
        return conn, await conn.fetchval("SELECT pg_backend_pid()")

    loop = asyncio.new_event_loop()
    conn, backend = loop.run_until_complete(connect())
    os.kill(backend, signal.SIGSTOP)
    injector, rec = _injector(server, "at=0s,kill-server")
    try:
        _wait_for(rec, "pid")
        t0 = time.monotonic()
        injector.close()
        assert time.monotonic() - t0 < 10
        assert "still under way" in rec["error"]
    finally:
        os.kill(backend, signal.SIGKILL)  # the restart goes on, and the server stops after
        for t in injector.threads:
            t.join(120)
        conn.terminate()
        loop.close()


def test_second_ctrl_c_does_not_leave_the_server_throttled(server):
    """Ctrl-C again while close() waits: when the KeyboardInterrupt leaves close(), the limit
    and the throttle's group are gone already (the process may end the next moment). The
    server has the backends of a run's users, which take a while to move back."""
    try:
        io_root()
    except UsageError as e:
        pytest.skip(str(e))

    async def connect():
        return await asyncio.gather(
            *(asyncpg.connect(server.dsn("postgres"), timeout=30) for _ in range(60)))

    loop = asyncio.new_event_loop()
    conns = loop.run_until_complete(connect())
    try:
        _second_ctrl_c(server)
    finally:
        for conn in conns:
            conn.terminate()
        loop.close()


def _second_ctrl_c(server: PostgresInstance) -> None:
    injector, rec = _injector(server, "at=0s,for=60s,throttle=write-iops:50")
    _wait_for(rec, "cgroup")
    try:
        with ctrl_c_when(injector.stop.is_set), pytest.raises(KeyboardInterrupt):
            injector.close()
            time.sleep(5)  # the signal comes while close() runs, or here at the latest
        left = Path(rec["cgroup"]).exists()
    finally:
        for t in injector.threads:
            t.join(30)
    assert not left, "the server was left in the throttle's group"
    assert rec.get("limit_after") is not None

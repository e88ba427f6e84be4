"""What --inject needs of a managed MariaDB (a server of threads): the run's users' sessions
found by their mark among every session of the server, one of them ended with KILL
CONNECTION, and a throttle's block-IO group holding every thread of mariadbd. The suite's real
MariaDB (tests/conftest.py), its real control groups."""

from __future__ import annotations

import random
import time

import psutil
import pytest

from oltplab.config import parse_inject
from oltplab.engines.base import Target
from oltplab.engines.common.loop import UserPlan, WorkerPlan
from oltplab.engines.mariadb import client, driver
from oltplab.engines.mariadb.instance import find_binary
from oltplab.errors import UsageError
from oltplab.faults.throttle import Throttle, io_root
from oltplab.host.cgroups import group_dir
from oltplab.workloads.tpcc.inputs import draw_constants

pytestmark = pytest.mark.skipif(find_binary("mariadbd") is None,
                                reason="mariadbd is not installed (Debian: mariadb-server-core)")


@pytest.fixture(scope="module")
def sessions_db(mariadb) -> str:
    mariadb.ensure_database("sessions")
    return mariadb.dsn("sessions")


def _plan(dsn: str, app: str = "oltplab") -> WorkerPlan:
    return WorkerPlan(worker=0, dsn=dsn, mode="procedures",
                      users=(UserPlan(0, 1, 1, (1,), 7),), w_max=1,
                      constants=draw_constants(random.Random(5), 0), engine="mariadb",
                      application_name=app)


def test_the_users_sessions_are_found_by_their_mark_and_one_is_ended(sessions_db):
    users = [driver.connect(_plan(sessions_db)) for _ in range(2)]
    other_run = driver.connect(_plan(sessions_db, "oltplab-other"))
    sampler = client.connect(sessions_db)  # the sampler's and the monitor's kind of session
    watch = driver.watch(sessions_db)
    try:
        ids = sorted(u.thread_id for u in users)
        found = driver.user_sessions(watch, "oltplab")
        assert sorted(i for i, _ in found) == ids, (found, ids)
        assert {c for _, c in found} <= {"Sleep", "Query"}
        assert [i for i, _ in driver.user_sessions(watch, "oltplab-other")] == \
            [other_run.thread_id]

        assert driver.end_session(watch, ids[0]) is True
        with pytest.raises(RuntimeError, match="error (2013|2006|1927)"):
            next(u for u in users if u.thread_id == ids[0]).scalar("SELECT 1")
        # the server's thread ends (and lets its mark go) a moment after the kill
        deadline = time.monotonic() + 10
        while [i for i, _ in driver.user_sessions(watch, "oltplab")] != ids[1:] \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [i for i, _ in driver.user_sessions(watch, "oltplab")] == ids[1:]
        assert driver.end_session(watch, ids[0]) is False  # ended already
        assert next(u for u in users if u.thread_id == ids[1]).scalar("SELECT 1") == "1"
        with sampler.cursor() as cur:  # the others' sessions go on
            cur.execute("SELECT 1")
    finally:
        for conn in (*users, other_run):
            conn.close()
        sampler.close()
        driver.close(watch)


def test_accepts_answers_whether_the_server_takes_a_session(sessions_db, tmp_path):
    assert driver.accepts(sessions_db)
    gone = client.socket_dsn(str(tmp_path / "no.sock"), "sessions")
    assert driver.accepts(gone) is False


def test_throttle_holds_every_thread_of_mariadbd_and_puts_it_back(mariadb):
    """mariadbd is one process of many threads: the throttle's group holds all of them while
    it lasts (cgroup.procs moves a process with its threads), then none."""
    try:
        parent, version = io_root()
    except UsageError as e:
        pytest.skip(str(e))
    pid = mariadb.status()["pid"]
    home = group_dir(pid, parent)
    threads = psutil.Process(pid).num_threads()
    assert threads > 5
    throttle = Throttle(Target(dsn=mariadb.dsn(""), admin_dsn=mariadb.dsn(""), instance=mariadb,
                               started_here=True),
                        parse_inject("at=1s,for=1s,throttle=write-iops:50"))
    rec: dict = {}
    try:
        throttle.fire(rec, None)
        assert rec["processes"] == 1 and group_dir(pid, parent) == throttle.path
        assert rec["threads"] >= threads - 2, rec  # a thread or two may end meanwhile
        tasks = throttle.path / ("tasks" if version == 1 else "cgroup.threads")
        inside = set(tasks.read_text().split())
        assert {str(t.id) for t in psutil.Process(pid).threads()} <= inside
    finally:
        throttle.end(rec)
    assert not throttle.path.exists() and group_dir(pid, parent) == home
    assert rec["limit_after"] in ("", f"{rec['device']} rbps=max wbps=max riops=max wiops=max")

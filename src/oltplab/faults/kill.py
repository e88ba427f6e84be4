"""Faults that kill: ``kill-server`` (SIGKILL of the managed server, then our restart) and
``kill-backend`` (one of the run's sessions ends). ``recovery_s`` runs from the signal to the
first connection the server accepts again, asked through the engine's driver (engines.get).

``kill-backend`` follows the server's make (engines/base.py ``Engine.driver``):

- a server of processes (PostgreSQL: the driver gives ``backend_pid``): SIGKILL of one of the
  run's backends; the postmaster resets every other backend and recovers from its WAL, so
  every user loses its session and the server's statistics are reset (``crash_recovery``);
- a server of threads (MariaDB: the driver gives ``end_session``): ``KILL CONNECTION`` of one
  of the run's users' sessions, one running a statement when there is one within BUSY_WAIT_S.
  That user's transaction in flight is lost and it reconnects; the others and the server's
  counters go on (no crash). ``session``: its id; ``session_command``: what it was doing
  ('Query', or 'Sleep' between two transactions); ``reconnected_s``: until the users hold as
  many sessions as before again (missing when the run ended first).
"""

from __future__ import annotations

import os
import signal
import threading
import time

from ..errors import DatabaseError
from ..host.cgroups import process_tree

ORPHANS_WAIT_S = 60.0  # the old server's processes must be gone before it starts again
ACCEPT_WAIT_S = 120.0  # the longest wait for the first accepted connection
CRASH_NOTICE_S = 30.0  # kill-backend: the longest wait for the postmaster to reset the others
POLL_S = 0.02
BUSY_WAIT_S = 2.0  # kill-backend on threads: how long to look for a session in a statement
RECONNECT_POLL_S = 0.05


def _accepts(dsn: str) -> bool:
    return _driver(dsn).accepts(dsn, "oltplab-inject")


def _driver(dsn: str):
    """The driver module of the engine behind ``dsn``."""
    from .. import engines
    return engines.get(engines.engine_of_dsn(dsn)).driver


def _wait_accepts(dsn: str, since: float, stop: threading.Event) -> float:
    """Seconds from ``since`` (monotonic) to the first accepted connection."""
    deadline = time.monotonic() + ACCEPT_WAIT_S
    while not _accepts(dsn):
        if time.monotonic() > deadline or stop.is_set():
            raise DatabaseError(f"the server accepted no connection within {ACCEPT_WAIT_S:g} s")
        time.sleep(POLL_S)
    return time.monotonic() - since


class KillServer:
    """SIGKILL of the server (PostgreSQL's postmaster, mariadbd), then our restart (crash
    recovery); recovery to the first accepted connection."""

    lasts = False

    @classmethod
    def make(cls, target, event, need_connections: int):
        return cls(target, need_connections)

    @staticmethod
    def check(db, event, planned=None) -> None:
        """Nothing beyond a managed server (inject.preflight)."""

    def __init__(self, target, need_connections: int):
        self.instance, self.dsn, self.need = target.instance, target.dsn, need_connections

    def fire(self, rec: dict, stop: threading.Event) -> None:
        import psutil

        from ..host import memory as hostmem
        pid = self.instance.status()["pid"]
        if pid is None:
            raise DatabaseError("the managed server is not running")
        group = hostmem.group_of(pid)
        procs = process_tree(pid)
        t0 = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        rec.update(pid=pid, crash_recovery=True)
        _, alive = psutil.wait_procs(procs, timeout=ORPHANS_WAIT_S)
        for p in alive:  # still attached to the old shared memory: they must go
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(alive, timeout=10)
        rec["orphans_s"] = round(time.monotonic() - t0, 3)
        rec["orphans_killed"] = len(alive)
        if group is not None and group.path.is_dir():  # start() makes it again
            group.remove()
        self.instance.start(self.need)
        rec["restarted_s"] = round(time.monotonic() - t0, 3)
        rec["recovery_s"] = round(_wait_accepts(self.dsn, t0, stop), 3)


class KillBackend:
    """One of the run's sessions ends: a backend killed (the postmaster resets the others and
    recovers), or on a server of threads one session ended (the others go on)."""

    lasts = False

    @classmethod
    def make(cls, target, event, need_connections: int):
        return cls(target)

    @staticmethod
    def check(db, event, planned=None) -> None:
        """Nothing beyond a managed server (inject.preflight)."""

    def __init__(self, target, application_name: str = "oltplab"):
        self.dsn, self.app = target.dsn, application_name

    def fire(self, rec: dict, stop: threading.Event) -> None:
        driver = _driver(self.dsn)
        if hasattr(driver, "end_session"):
            self._end_session(driver, rec, stop)
        else:
            self._kill_backend(driver, rec, stop)

    def _kill_backend(self, driver, rec: dict, stop: threading.Event) -> None:
        pid, watch = driver.backend_pid(self.dsn, self.app, "oltplab-inject")
        try:
            if pid is None:
                raise DatabaseError("no backend of the run to kill")
            t0 = time.monotonic()
            os.kill(pid, signal.SIGKILL)
            rec.update(pid=pid, crash_recovery=True)
            deadline = t0 + CRASH_NOTICE_S  # our own session ends when the reset reaches it
            while driver.alive(watch):
                if time.monotonic() > deadline:
                    raise DatabaseError("the server did not reset its backends after the kill")
                time.sleep(POLL_S)
        finally:
            driver.close(watch)
        rec["reset_s"] = round(time.monotonic() - t0, 3)
        rec["recovery_s"] = round(_wait_accepts(self.dsn, t0, stop), 3)

    def _end_session(self, driver, rec: dict, stop: threading.Event) -> None:
        watch = driver.watch(self.dsn)
        try:
            session, command, before, t0 = self._end_one(driver, watch, stop)
            rec.update(session=session, session_command=command, sessions=before,
                       crash_recovery=False)
            rec["recovery_s"] = round(_wait_accepts(self.dsn, t0, stop), 3)
            deadline = t0 + ACCEPT_WAIT_S
            while not stop.is_set() and time.monotonic() < deadline:
                now = [s for s, _ in driver.user_sessions(watch, self.app)]
                if session not in now and len(now) >= before:
                    rec["reconnected_s"] = round(time.monotonic() - t0, 3)
                    return
                stop.wait(RECONNECT_POLL_S)
        finally:
            driver.close(watch)

    def _end_one(self, driver, watch, stop: threading.Event) -> tuple[int, str, int, float]:
        """End one of the users' sessions, preferring one in a statement (its transaction in
        flight); (its id, its command, the users' sessions then, monotonic time of the KILL)."""
        deadline = time.monotonic() + BUSY_WAIT_S
        while True:
            sessions = driver.user_sessions(watch, self.app)
            if not sessions:
                raise DatabaseError("no session of the run's users to end")
            session, command = sessions[0]
            if command == "Query" or time.monotonic() > deadline or stop.is_set():
                t0 = time.monotonic()
                if driver.end_session(watch, session):
                    return session, command, len(sessions), t0
            time.sleep(POLL_S)

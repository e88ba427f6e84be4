"""Faults that kill: ``kill-server`` (SIGKILL of the managed server's postmaster, then our
restart) and ``kill-backend`` (SIGKILL of one of the run's backends; the server resets the
others and recovers by itself). ``recovery_s`` runs from the signal to the first connection the
server accepts again, asked through the engine's driver (engines.get)."""

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
    """SIGKILL of the postmaster, then our restart; recovery to first accepted connection."""

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
        rec["pid"] = pid
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
    """SIGKILL of one of the run's backends; the postmaster resets the others and recovers."""

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
        pid, watch = driver.backend_pid(self.dsn, self.app, "oltplab-inject")
        try:
            if pid is None:
                raise DatabaseError("no backend of the run to kill")
            t0 = time.monotonic()
            os.kill(pid, signal.SIGKILL)
            rec["pid"] = pid
            deadline = t0 + CRASH_NOTICE_S  # our own session ends when the reset reaches it
            while driver.alive(watch):
                if time.monotonic() > deadline:
                    raise DatabaseError("the server did not reset its backends after the kill")
                time.sleep(POLL_S)
        finally:
            driver.close(watch)
        rec["reset_s"] = round(time.monotonic() - t0, 3)
        rec["recovery_s"] = round(_wait_accepts(self.dsn, t0, stop), 3)

"""Faults during a run (``tpcc run --inject EVENT``, experiment E8 without device-mapper): the
schedule of a run's events, each a fault of the registry (faults/__init__.py), on PostgreSQL
and MariaDB alike.

Each event fires ``at_s`` seconds after the start of the step's measured window (ramp_end):

- ``kill-server``: SIGKILL of the managed server (PostgreSQL's postmaster, mariadbd). Nothing
  restarts it, so we do: first its processes must exit (PostgreSQL's orphaned backends notice
  the postmaster's death; the old shared memory is released only then), then the server is
  started again and recovers (PostgreSQL from its WAL, InnoDB from its redo log).
- ``kill-backend``: one of the run's sessions ends. PostgreSQL: SIGKILL of one of the run's
  backends; PostgreSQL resets every backend and recovers by itself (``restart_after_crash``).
  MariaDB runs a thread per session, not a process: ``KILL CONNECTION`` of one of the run's
  users' sessions; that user loses its transaction in flight and reconnects, the others go on.
- ``throttle``: the server's process tree (all its threads) goes into a block-IO control
  group with a limit on the device that holds the data directory (cgroup v1
  ``blkio.throttle.*_device``, v2 ``io.max``) for ``[at, at + for)``; then the limit is removed
  and each process goes back to the group it came from (on cgroup v2, the --host-memory
  group; those forked meanwhile go where the postmaster was).
  cgroup v1 does not throttle the kernel's buffered writeback, only the IO the server's tasks
  issue themselves (reads, direct IO, WAL writes and fsyncs).

For the kills, ``recovery_s`` runs from the signal to the first connection the server accepts
again. The users reconnect by themselves (engines/common/loop.py, both engines' drivers); the
transactions lost in flight count as errors. A kill that made the server recover from a crash
records ``crash_recovery`` (its statistics were reset: ``crash_note``). Each injector is an
object with the same hooks: ``check`` before the run, ``fire`` at its time, ``end`` after
``for_s`` (throttles) and ``close``.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone

from ..config import DbSpec, InjectEvent, RunSpec
from ..errors import UsageError
from ..metrics.dips import Fault, dips
from . import FAULTS
from .kill import ORPHANS_WAIT_S

CLOSE_WAIT_S = ORPHANS_WAIT_S + 180.0  # a restart under way: its orphans, then pg_ctl start


# --------------------------------------------------------------------------- before the run

def preflight(db: DbSpec, run: RunSpec, planned: dict | None = None) -> None:
    """Refuse (UsageError, one line) what cannot be injected here, before anything starts;
    ``planned``: the datastore a plan will make for the data directory (faults/datastore.py)."""
    if len(run.users) != 1:
        raise UsageError("--inject works on a run of one step: give one user count (--users N)")
    for e in run.inject:
        if e.at_s >= run.duration:
            raise UsageError(f"--inject {e.text!r}: at= lies beyond the measured window "
                             f"(--duration {run.duration:g} s)")
        if db.dsn is not None:
            raise UsageError(f"--inject {e.text!r}: {e.kind} needs a managed server; it does not "
                             "go with --dsn")
        FAULTS[e.kind].check(db, e, planned)
    windows = sorted((e.at_s, e.at_s + e.for_s) for e in run.inject if e.kind == "throttle")
    for (_, end), (start, _) in zip(windows, windows[1:]):
        if start < end:
            raise UsageError("--inject: throttles must not overlap (the server's processes are "
                             "in one group at a time)")


# --------------------------------------------------------------------------- the schedule

def _wall(mono_ns: int) -> str:
    ts = time.time() - (time.monotonic_ns() - mono_ns) / 1e9
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds")


class Injector:
    """The run's events on their own threads, timed from the first step's ramp_end.

    ``mark`` goes in front of the runner's ``on_mark`` listener; ``close`` waits for what is
    under way (a restart), ends the throttles still on, and must run before the server stops.
    """

    def __init__(self, events: tuple[InjectEvent, ...], target, need_connections: int,
                 on_mark=None):
        self.on_mark = on_mark
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.records: list[dict] = []
        self.faults = []
        for e in events:
            self.faults.append((e, FAULTS[e.kind].make(target, e, need_connections)))

    def mark(self, name: str, t_ns: int | None = None, **attrs) -> None:
        if name == "ramp_end" and not self.threads and t_ns is not None:
            for e, fault in self.faults:
                rec = {"kind": e.kind, "event": e.text, "requested_at_s": e.at_s,
                       "for_s": e.for_s, "limit": e.limit, "value": e.value}
                self.records.append(rec)
                t = threading.Thread(target=self._run, args=(e, fault, rec, t_ns), daemon=True,
                                     name=f"inject-{e.kind}")
                self.threads.append(t)
                t.start()
        if self.on_mark is not None:
            self.on_mark(name, t_ns, **attrs)

    def _run(self, e: InjectEvent, fault, rec: dict, ramp_end_ns: int) -> None:
        fire_ns = ramp_end_ns + int(e.at_s * 1e9)
        if self.stop.wait(max(0.0, (fire_ns - time.monotonic_ns()) / 1e9)):
            rec["error"] = "not fired: the run ended first"
            return
        now = time.monotonic_ns()
        rec["at_s"] = round((now - ramp_end_ns) / 1e9, 3)
        rec["fired_at"] = _wall(now)
        try:
            fault.fire(rec, self.stop)
            if e.for_s:
                self.stop.wait(max(0.0, (fire_ns + e.for_s * 1e9 - time.monotonic_ns()) / 1e9))
        except Exception as exc:  # noqa: BLE001 - recorded on the event; the run decides
            rec["error"] = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        finally:
            if fault.lasts:
                _end(fault, rec)
                rec["ended_at_s"] = round((time.monotonic_ns() - ramp_end_ns) / 1e9, 3)

    def close(self) -> None:
        """End every event: throttles end now, a restart under way gets CLOSE_WAIT_S to finish.
        The throttles end here too, whatever their threads did, and a Ctrl-C that comes
        meanwhile cannot stop that (it is raised once they have ended)."""
        self.stop.set()
        try:
            deadline = time.monotonic() + CLOSE_WAIT_S
            for t in self.threads:
                t.join(max(0.0, deadline - time.monotonic()))
        finally:
            with _ctrl_c_deferred():
                for (_, fault), rec in zip(self.faults, self.records):
                    if fault.lasts:
                        _end(fault, rec)
                for t, rec in zip(self.threads, self.records):
                    if t.is_alive():
                        rec.setdefault("error", f"still under way {CLOSE_WAIT_S:g} s after "
                                       "the run ended")

    def events(self, per_s: list[int] | None) -> list[dict]:
        """The records for run.json's ``events``, with the throughput figures around each,
        each against a before that holds no earlier fault nor its recovery."""
        out = [dict(rec) for rec in self.records]
        fired = [rec for rec in out if rec.get("at_s") is not None]
        if not per_s or not fired:
            return out
        # a device fault lasts as long as the file system's work (its seconds); a kill's
        # server does not answer for its recovery_s
        faults = [Fault(rec["at_s"], rec.get("for_s") or rec.get("seconds") or 0.0,
                        rec.get("recovery_s") or 0.0, rec.get("event") or rec["kind"])
                  for rec in fired]
        for rec, found in zip(fired, dips(per_s, faults)):
            rec.update(found.as_dict())
        return out


def _end(fault, rec: dict) -> None:
    try:
        fault.end(rec)
    except OSError as exc:
        rec.setdefault("error", f"removing the limit: {exc}")


@contextmanager
def _ctrl_c_deferred():
    """Inside, Ctrl-C (SIGINT) interrupts nothing; one that came is raised as
    KeyboardInterrupt at the end. Only the main thread receives it, so only there it acts."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came = []
    old = signal.signal(signal.SIGINT, lambda *_: came.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old if old is not None else signal.default_int_handler)
    if came:
        raise KeyboardInterrupt


def crash_note(events: list[dict]) -> str | None:
    """A step warning when a kill made the server recover from a crash during the window,
    which reset its statistics (both engines' status counters start again at a restart);
    a MariaDB session ended by kill-backend resets nothing."""
    kills = [e["kind"] for e in events if e.get("crash_recovery") and e.get("at_s")
             is not None]
    if not kills:
        return None
    return (f"{', '.join(kills)} during the window: crash recovery reset the server's "
            "statistics, so the server-side TPM is left out; the client-side TPM counts")

"""The Python side of a worker's C loop, whatever the database: ``LoopUsers``.

``_native.ProcLoop`` (libpq) and ``_native.MariaDBLoop`` (libmariadb) run every user of a
worker on one thread without the GIL, by the rules engines/common/recorder.py describes. Python
steps in only at their events: once all users have crossed the ramp-up boundary, when response
times are due to enter the histograms, at the end, on a failure, or to stop early.

With ``reopen`` (runs with ``--inject``) a lost connection loses one user, not the run: the
loop counts its transaction in flight as an error and goes on with the others, and Python
opens another connection (``reopen``, on a small thread pool: ``reconnect_until`` retries
until the server accepts, at most RECONNECT_TIMEOUT_S), wakes the loop and hands the
connection over (``replace``). An engine's driver subclasses LoopUsers with how its loop is
made, how a new connection is handed over and how a connection is closed.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from array import array
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

from ... import _native, workloads
from .recorder import Recorder, UserFailed

RECONNECT_TIMEOUT_S = 120.0  # a lost user gives up (and fails the run) after this long
RECONNECT_THREADS = 4
LOOP_SAMPLES = 1 << 13  # response times the loop holds per type (64 KiB) before Python takes them


@dataclass(frozen=True)
class UserPlan:
    """One virtual user: where it works and the seed of its own random generator."""

    index: int
    w_id: int
    stock_d_id: int
    warehouses: tuple[int, ...]
    seed: int


@dataclass(frozen=True)
class WorkerPlan:
    worker: int
    dsn: str
    mode: str  # 'procedures' | 'sql'
    users: tuple[UserPlan, ...]
    w_max: int
    constants: object  # the workload's run constants (Workload.draw_constants)
    keying_thinking: bool = False
    connect_timeout: float = 30.0
    application_name: str = "oltplab"
    flush_stats: bool = True  # pg_stat_force_next_flush() at each boundary (PostgreSQL 15+)
    resilient: bool = False  # a lost connection loses one user, who reconnects (--inject)
    engine: str = "postgres"  # whose driver runs the users (engines.get(engine).driver)
    workload: str = "tpcc"  # whose transactions they run (workloads.get(workload))
    actors: int = 0  # connections beside the users' for the workload's actors


def reconnect_until(open_one: Callable[[], object], timeout: float = RECONNECT_TIMEOUT_S,
                    cancel: threading.Event | None = None):
    """``open_one()``, retried with a growing pause (50 ms to 1 s) while it raises UserFailed,
    until ``timeout`` seconds have passed or ``cancel`` is set (blocking: run it in a
    thread)."""
    cancel = cancel or threading.Event()
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        try:
            return open_one()
        except UserFailed as e:
            if time.monotonic() + delay > deadline:
                raise UserFailed(f"reconnecting a lost user: {e} (gave up after {timeout:g} s)"
                                 ) from None
        if cancel.wait(delay):
            raise UserFailed("reconnecting a lost user: the users stopped")
        delay = min(1.0, delay * 2)


class LoopUsers:
    """The users of one worker on a C loop: their terminals, connections and loop. The C loop
    runs the transactions of ``workload`` (a name of workloads/), each user's drawn by the
    terminal the workload makes. ``reopen(cancel=event)`` opens a user's new connection after
    it lost its own (blocking); without it a lost connection fails the run."""

    def __init__(self, workload: str, conns: list, plans: list, w_max: int, constants,
                 reopen: Callable[..., object] | None = None, bulk: int = LOOP_SAMPLES):
        self.workload = workloads.get(workload).name
        self.conns = list(conns)
        self.reopen = reopen
        self.lost = 0  # connections lost and replaced
        self._stopping = threading.Event()  # ends the reconnects still trying
        self.bulk = bulk
        wl = workloads.get(workload)
        self.terminals = [wl.terminal(up, w_max, constants) for up in plans]
        actors = len(self.conns) - len(plans)  # the last connections are the actors'
        self._market_counts = None
        if actors and wl.market is not None:
            self.terminals += wl.market(self.terminals, list(plans), constants, actors)
            self._market_counts = wl.market_counts
        elif actors:
            raise ValueError(f"the {wl.label} workload has no actors")
        self.loop: _native.ProcLoop | None = None
        self._closed = False
        self._absorbed = False  # the loop's counts are in the recorder (``_absorb``)
        self._go = False  # go() came: no user waits at ramp_end

    # ----- what an engine's driver provides

    def _make_loop(self, rec: Recorder) -> _native.ProcLoop:
        raise NotImplementedError

    def _hand_over(self, index: int, conn) -> None:
        """``self.loop.replace`` for the engine's connection object."""
        raise NotImplementedError

    def _close_conn(self, conn) -> None:
        raise NotImplementedError

    # ----- the rest is the same for every engine

    @property
    def completed(self) -> int:
        """Transactions completed that the recorder does not hold yet (0 once absorbed: the
        worker's progress adds these to the recorder's and must not count them twice)."""
        return self.loop.completed if self.loop is not None and not self._absorbed else 0

    @property
    def headline(self) -> int:
        """Units of the workload's headline figure (TPC-C: New-Orders) completed that the
        recorder does not hold yet, as ``completed``."""
        return self.loop.headline if self.loop is not None and not self._absorbed else 0

    @property
    def live(self) -> tuple[int, int, int, int] | None:
        """The window's units so far (``ProcLoop.live``), while the loop runs."""
        return self.loop.live if self.loop is not None else None

    def go(self) -> None:
        """The users waiting at ramp_end (``run(hold=True)``) go on; later ones pass."""
        self._go = True
        if self.loop is not None:
            self.loop.go()

    async def run(self, rec: Recorder, hold: bool = False) -> None:
        """Run every user until measure_end, reporting into ``rec``; raises UserFailed. With
        ``hold`` a user that crosses ramp_end waits there until ``go()``."""
        self.loop = lp = self._make_loop(rec)
        if hold and not self._go:
            lp.hold()
        loop = asyncio.get_running_loop()
        opening: dict = {}  # new connections on their way: future -> user index
        pool = ThreadPoolExecutor(RECONNECT_THREADS) if self.reopen is not None else None
        try:
            while True:
                job = loop.run_in_executor(None, lp.run)
                try:
                    event = await self._next_event(job, opening)
                except asyncio.CancelledError:
                    lp.stop()  # the loop returns within one turn; the connections stay ours
                    await asyncio.wait([job])
                    raise
                for fut in [f for f in opening if f.done()]:
                    self._replace(opening.pop(fut), fut.result())
                if event == _native.LOST:
                    for index in lp.take_lost():
                        opening[loop.run_in_executor(
                            pool, functools.partial(self.reopen, cancel=self._stopping))] = index
                elif event == _native.WOKEN:
                    continue
                elif event == _native.SAMPLES:
                    self._drain(rec)
                elif event == _native.FAILED:
                    raise UserFailed(lp.error or "the virtual users failed")
                elif event == _native.STOPPED:
                    return
                elif rec.on_boundary is not None:  # BOUNDARY (ramp-up), then FINISHED
                    rec.on_boundary(0 if event == _native.BOUNDARY else 1, len(self.conns))
                if event == _native.FINISHED:
                    return
        finally:
            self._stopping.set()
            for fut in opening:  # a connection that arrives too late is closed
                fut.add_done_callback(functools.partial(_close_late, self._close_conn))
            if pool is not None:
                pool.shutdown(wait=False)
            self._absorb(rec)

    async def _next_event(self, job, opening: dict) -> int:
        """The loop's next event; a new connection ready first wakes the loop to take it."""
        done, _ = await asyncio.wait({job, *opening}, return_when=asyncio.FIRST_COMPLETED)
        if job not in done:
            self.loop.wake()
            await asyncio.wait([job])
        return job.result()

    def _replace(self, index: int, conn) -> None:
        """Hand user ``index`` its new connection; the lost one is closed."""
        try:
            self._hand_over(index, conn)
        except (OSError, ValueError, TypeError) as e:
            self._close_conn(conn)
            raise UserFailed(f"reconnecting a lost user: {e}") from None
        old, self.conns[index] = self.conns[index], conn
        self._close_conn(old)
        self.lost += 1

    def _drain(self, rec: Recorder) -> None:
        for kind, raw in enumerate(self.loop.take_samples()):
            if raw:
                rec.add_samples(kind, array("q", raw))

    def _absorb(self, rec: Recorder) -> None:
        """Add what the loop counted to the recorder (also after a failure or a stop)."""
        if self.loop is None:
            return
        self._drain(rec)
        counts = self.loop.counts()
        if self._market_counts is not None:  # the loop let the terminals go: safe to read
            counts["inputs"] = {**counts.get("inputs", {}),
                                **self._market_counts(self.terminals)}
        rec.add_counts(counts)
        self._absorbed = True  # in the same turn of the event loop: no progress in between

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if self.loop is not None:  # the loop lets the connections go (MariaDB's refuse
                self.loop.close()  # to close before)
                self.loop = None
            for conn in self.conns:
                self._close_conn(conn)


def _close_late(close: Callable[[object], None], fut) -> None:
    if not fut.cancelled() and fut.exception() is None:
        close(fut.result())

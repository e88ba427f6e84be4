"""A worker process: runs its share of the virtual users and reports back.

The users are the engine's (``engines.get(plan.engine).driver``: connect, reconnect, close,
Users); PostgreSQL's run on the C loop.

The worker never prints and never writes files. It talks to the manager only through its
pipe: Connected once every user has connected and prepared its statements, Progress about
once a second, and Final (or Failed) at the end. It ignores SIGINT (Ctrl-C reaches the whole
process group; the manager decides), and it exits when told to stop, when its pipe closes, or
when the manager process dies (the kernel's parent-death signal).
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import sys
import time
import warnings
from multiprocessing.connection import Connection

from .. import engines, workloads
from ..engines.common.loop import WorkerPlan
from ..engines.common.recorder import Recorder, UserFailed
from .messages import Connected, Failed, Final, Flushed, Go, Progress, Start

PROGRESS_INTERVAL_S = 1.0
GRACE_S = 5.0  # how long transactions in flight at the end of the window may take to finish
CONNECT_CONCURRENCY = 16
CLOSE_TIMEOUT_S = 3.0


def main(argv: list[str] | None = None) -> None:
    """Process entry point: ``python -m oltplab.loadgen.worker FD PARENT_PID``.

    FD is this end of a socket pair; the first message on it is the WorkerPlan.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    argv = sys.argv if argv is None else argv
    fd, parent_pid = int(argv[1]), int(argv[2])
    _die_with_parent(parent_pid)
    warnings.simplefilter("ignore")  # workers never print
    pipe = Connection(fd)
    plan = None
    try:
        plan = pipe.recv()
        _event_loop_runner()(_work(pipe, plan))
    except BaseException as e:  # noqa: BLE001 - report anything, then exit
        who = plan.worker if plan is not None else -1
        _send(pipe, Failed(who, f"worker {who}: {type(e).__name__}: {e}"))
    finally:
        pipe.close()


def _event_loop_runner():
    try:
        import uvloop  # optional: a faster event loop when installed
    except ImportError:
        return asyncio.run
    return uvloop.run


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to kill this process when the manager dies; exit if it already has."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:
        os._exit(1)


def _send(pipe, msg) -> bool:
    try:
        pipe.send(msg)
        return True
    except (OSError, EOFError, ValueError):
        return False


async def _connect_user(driver, plan: WorkerPlan, up, sem: asyncio.Semaphore,
                        users: list) -> None:
    async with sem:
        # drivers connect and prepare synchronously: in a thread, several at a time
        conn = await asyncio.get_running_loop().run_in_executor(None, driver.connect, plan)
        users.append((up, conn))


async def _connect_all(plan: WorkerPlan, users: list) -> None:
    """Connect every user of the plan; together they become one driver ``Users``."""
    driver = engines.get(plan.engine).driver
    sem = asyncio.Semaphore(CONNECT_CONCURRENCY)
    opened: list = []
    actors: list = []
    jobs = [asyncio.create_task(_connect_user(driver, plan, up, sem, opened))
            for up in plan.users]
    jobs += [asyncio.create_task(_connect_user(driver, plan, None, sem, actors))
             for _ in range(plan.actors)]
    try:
        await asyncio.gather(*jobs)
    except BaseException:
        for j in jobs:
            j.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        for _, conn in opened + actors:
            driver.close(conn)
        raise
    opened.sort(key=lambda item: item[0].index)
    reopen = functools.partial(driver.reconnect, plan) if plan.resilient else None
    users.append(driver.Users([c for _, c in opened] + [c for _, c in actors],
                              [up for up, _ in opened], plan, reopen))


async def _close(users: list) -> None:
    for u in users:
        await u.aclose()


async def _progress(pipe, worker: int, sources: list, grid_ns: int) -> None:
    """``sources``: what counts transactions (the Recorder, and the C loop).
    Sent on the grid ``grid_ns + k * PROGRESS_INTERVAL_S``, so that the manager's counts per
    10 s of the window interpolate between points taken at (or next to) their boundaries."""
    step = int(PROGRESS_INTERVAL_S * 1e9)
    while True:
        now = time.monotonic_ns()
        await asyncio.sleep((step - (now - grid_ns) % step) / 1e9)
        _send(pipe, Progress(worker, time.monotonic_ns(), sum(s.completed for s in sources),
                             sum(s.headline for s in sources), _live(sources)))


def _live(sources: list) -> tuple | None:
    """The window's units so far over the sources that count them (``LoopUsers.live``)."""
    lives = [v for v in (getattr(s, "live", None) for s in sources) if v is not None]
    if not lives:
        return None
    units, us, rolled, worst = zip(*lives)
    return sum(units), sum(us), sum(rolled), max(worst)


async def _work(pipe, plan: WorkerPlan) -> None:
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda loop, context: None)  # workers never print
    inbox: asyncio.Queue = asyncio.Queue()
    fd = pipe.fileno()

    def readable() -> None:
        try:
            while pipe.poll():
                inbox.put_nowait(pipe.recv())
        except (EOFError, OSError):
            loop.remove_reader(fd)
            inbox.put_nowait(None)  # the manager is gone

    loop.add_reader(fd, readable)
    users: list = []  # one driver Users once connected
    try:
        try:
            await asyncio.wait_for(_connect_all(plan, users),
                                   timeout=plan.connect_timeout + 0.05 * len(plan.users))
        except Exception as e:  # noqa: BLE001 - reported to the manager
            text = ("timed out" if isinstance(e, asyncio.TimeoutError)
                    else f"{type(e).__name__}: {e}")
            _send(pipe, Failed(plan.worker, f"connecting virtual users: {text}"))
            return
        if not _send(pipe, Connected(plan.worker, len(plan.users))):
            return
        msg = await inbox.get()
        if not isinstance(msg, Start):
            return
        await _drive(pipe, plan, users, msg, inbox)
    finally:
        loop.remove_reader(fd)
        await _close(users)


async def _drive(pipe, plan: WorkerPlan, users: list, start: Start, inbox: asyncio.Queue) -> None:
    def crossed(boundary: int, count: int) -> None:
        _send(pipe, Flushed(plan.worker, boundary, count))

    cpu0 = time.process_time()
    # nothing has completed yet: the first point, at ramp_end at the latest
    _send(pipe, Progress(plan.worker, min(time.monotonic_ns(), start.ramp_end_ns), 0, 0))
    rec = Recorder(start.ramp_end_ns, start.measure_end_ns, len(plan.users), crossed,
                   workloads.get(plan.workload))
    tasks = {asyncio.ensure_future(u.run(rec, hold=start.hold)) for u in users}
    sources = [rec, *users]
    progress = asyncio.ensure_future(_progress(pipe, plan.worker, sources, start.ramp_end_ns))
    told = asyncio.ensure_future(inbox.get())
    pending = set(tasks)
    partial = manager_gone = False
    failure = None
    deadline = start.measure_end_ns + int(GRACE_S * 1e9)
    try:
        while pending:
            timeout = max(0.0, (deadline - time.monotonic_ns()) / 1e9)
            done, _ = await asyncio.wait(pending | {told}, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            if not done:
                break  # the grace is over: what is still in flight does not count anyway
            for t in done:
                if t is told:
                    if isinstance(t.result(), Go):
                        for u in users:
                            u.go()
                        told = asyncio.ensure_future(inbox.get())
                        continue
                    partial = True
                    manager_gone = t.result() is None
                    continue
                pending.discard(t)
                exc = t.exception()
                if exc is not None and failure is None:
                    failure = (str(exc) if isinstance(exc, UserFailed)
                               else f"{type(exc).__name__}: {exc}")
            if partial or failure:
                break
    finally:
        for t in pending:
            t.cancel()
        progress.cancel()
        told.cancel()
        await asyncio.wait(pending | {progress, told}, timeout=CLOSE_TIMEOUT_S)
    if manager_gone:
        return
    if failure is not None:
        _send(pipe, Failed(plan.worker, failure))
        return
    # the users have stopped and the C loop's counts are in the recorder: the last point
    _send(pipe, Progress(plan.worker, time.monotonic_ns(), rec.completed, rec.headline))
    _send(pipe, Final(plan.worker, rec.counts(), rec.encoded(), rec.completed, rec.headline,
                      partial, (tuple(rec.cross_ns[0]), tuple(rec.cross_ns[1])),
                      time.process_time() - cpu0, dict(rec.inputs), rec.lost))


if __name__ == "__main__":
    main()

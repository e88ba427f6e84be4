"""The step's worker processes on one machine: started, talked to, stopped.

Each worker is ``python -m oltplab.loadgen.worker`` on one end of a socket pair (never
re-importing the caller's __main__), its first message the WorkerPlan; its stderr goes to a
temporary file read only to explain a crash. The same code serves a step on this machine
(``LocalFleet``, step.py) and each host of a ``--loadgen`` step (relay.py), so both start and
stop their workers the same way.

Nothing here raises for a worker that dies: ``Workers.wait`` reports it as an ``Exited``
event, and the step decides.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_ready

STOP_TIMEOUT_S = 3.0


class FleetFailed(Exception):
    """The step's workers cannot go on: one could not be started, or (over several hosts) a
    host died, hung or lost its connection. The text names what failed."""


class SpawnFailed(FleetFailed):
    """A worker process could not be started."""


@dataclass(frozen=True)
class Exited:
    """Worker ``worker`` exited (its pipe closed); ``text`` says how, from its stderr."""

    worker: int
    text: str


class Workers:
    """Worker processes of one machine, by their plan's worker index."""

    def __init__(self, plans):
        self.plans = list(plans)
        self.procs: dict[int, subprocess.Popen] = {}
        self.pipes: dict[int, Connection] = {}
        self.errs: dict[int, object] = {}
        self.alive: set[int] = set()

    def start(self) -> None:
        """Start one process per plan and send it its plan."""
        for plan in self.plans:
            mine, theirs = socket.socketpair()
            err = tempfile.TemporaryFile()
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "oltplab.loadgen.worker", str(theirs.fileno()),
                     str(os.getpid())],
                    pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=err, close_fds=True)
            except OSError as e:
                mine.close()
                err.close()
                raise SpawnFailed(f"cannot start a worker process: {e}") from None
            finally:
                theirs.close()
            k = plan.worker
            self.procs[k], self.errs[k] = proc, err
            self.pipes[k] = Connection(mine.detach())
            self.alive.add(k)
            self.pipes[k].send(plan)

    def send(self, msg) -> None:
        """``msg`` to every worker still running."""
        for k in sorted(self.alive):
            try:
                self.pipes[k].send(msg)
            except (OSError, ValueError):
                pass

    def wait(self, timeout: float) -> list:
        """What the workers sent within ``timeout`` seconds, in order per worker, with an
        ``Exited`` after the last message of a worker whose pipe closed."""
        live = [self.pipes[k] for k in sorted(self.alive)]
        if not live:
            time.sleep(max(0.0, min(timeout, 0.1)))
            return []
        ready = wait_ready(live, max(0.0, timeout))
        out: list = []
        for k in sorted(self.alive):
            if self.pipes[k] not in ready:
                continue
            pipe = self.pipes[k]
            try:
                while pipe.poll():
                    out.append(pipe.recv())
            except (EOFError, OSError):
                self.alive.discard(k)
                out.append(Exited(k, self.crash_text(k)))
        return out

    def crash_text(self, k: int) -> str:
        proc = self.procs[k]
        try:
            code = proc.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        text = ""
        try:
            self.errs[k].seek(0)
            lines = self.errs[k].read().decode("utf-8", "replace").strip().splitlines()
            text = f": {lines[-1]}" if lines else ""
        except (OSError, ValueError):
            pass
        return f"worker {k} exited unexpectedly (exit code {code}){text}"

    def running(self) -> list[int]:
        """The pids of the worker processes that have not exited."""
        return [p.pid for p in self.procs.values() if p.poll() is None]

    def cleanup(self, stop_msg=None, timeout: float = STOP_TIMEOUT_S) -> None:
        """Make sure no worker process is left: ask (``stop_msg``), wait briefly, then kill."""
        try:
            if stop_msg is not None:
                self.send(stop_msg)
            deadline = time.monotonic() + timeout
            for p in self.procs.values():
                try:
                    p.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
        except KeyboardInterrupt:
            pass
        finally:
            self.kill()
            for f in [*self.pipes.values(), *self.errs.values()]:
                f.close()

    def kill(self) -> None:
        """SIGKILL to every worker still running, then collect them."""
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
        for p in self.procs.values():
            try:
                p.wait(2.0)
            except subprocess.TimeoutExpired:
                pass

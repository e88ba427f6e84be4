"""One host's part of a ``--loadgen`` step: a Dask task that relays, never the load itself.

The coordinator (remote.py) places ``serve`` on the host with ``cluster.submit_on`` (that
host's worker and no other, never retried). The task starts the host's worker processes as a
step on one machine does (spawn.Workers: the C loop runs in them, never in the task's
thread), forwards the coordinator's messages to them and theirs back, and says it is alive
every second. Two Dask queues carry the traffic, one each way, every item a pickled list of
events:

    coordinator -> host: ("ping", seq), ("plans", pickled WorkerPlans), ("send", message),
                         ("hb",) every second, ("bye",)
    host -> coordinator: ("hello", pid, t_ns), ("pong", seq, t_ns), ("hb", t_ns) every second,
                         ("msg", message or spawn.Exited), ("failed", text), ("done",)

Times are the host's monotonic clock; the coordinator translates them (remote.py). A ping
is answered as soon as it arrives, by the thread that reads the coordinator's queue, so the
round trip measures the queues and not this loop.

The task stops its worker processes (Stop, then SIGKILL after 3 s) and returns when the
coordinator says bye, when it has not heard from the coordinator for ``silence_s`` seconds,
when the task is cancelled, or when every worker has exited. Worker processes also die with
the Dask worker (the kernel's parent-death signal), so a killed worker leaves none behind.
"""

from __future__ import annotations

import os
import pickle
import queue
import threading
import time

from ..cluster.client import task_cancelled
from .messages import Stop
from .spawn import FleetFailed, Workers

HEARTBEAT_S = 1.0
SILENCE_S = 10.0  # the coordinator not heard for this long: stop
POLL_S = 0.05  # the longest a message waits here before it is forwarded


def pack(events: list) -> bytes:
    return pickle.dumps(events, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(item: bytes) -> list:
    return pickle.loads(item)


def serve(host: str, up_name: str, down_name: str, silence_s: float = SILENCE_S) -> dict:
    """The relay of ``host`` (run as a Dask task there): what ended it and its workers."""
    from distributed import Queue, get_worker
    worker = get_worker()
    key = worker.get_current_task()
    up, down = Queue(up_name), Queue(down_name)
    inbox: queue.Queue = queue.Queue()
    heard = [time.monotonic()]
    done = threading.Event()
    reader = threading.Thread(target=_read, args=(down, up, inbox, heard, done),
                              name=f"oltplab-relay-{host}", daemon=True)
    reader.start()
    workers: Workers | None = None
    reason = "?"
    try:
        up.put(pack([("hello", os.getpid(), time.monotonic_ns())]))
        next_hb = time.monotonic()
        while True:
            out: list = []
            now = time.monotonic()
            if now - heard[0] > silence_s:
                reason = f"the coordinator was silent for {silence_s:g} s"
                break
            if task_cancelled(worker, key):
                reason = "cancelled"
                break
            if now >= next_hb:
                out.append(("hb", time.monotonic_ns()))
                next_hb = now + HEARTBEAT_S
            reason = _orders(inbox, workers, out)
            if isinstance(reason, Workers):
                workers, reason = reason, None
            if reason is not None:
                _flush(up, out)
                break
            if workers is not None:
                out += [("msg", ev) for ev in workers.wait(POLL_S)]
                if not workers.alive:
                    out.append(("done",))
                    reason = "done"
            else:
                time.sleep(POLL_S)
            _flush(up, out)
            if reason == "done":
                break
    finally:
        done.set()
        if workers is not None:
            workers.cleanup(Stop("the coordinator is gone") if reason != "done" else None)
    return {"host": host, "ended": reason,
            "workers": sorted(p.worker for p in (workers.plans if workers else ()))}


def _orders(inbox: queue.Queue, workers: Workers | None, out: list):
    """Carry out what the coordinator sent: a new Workers (the plans arrived and they
    started), a reason to stop, or None."""
    while True:
        try:
            order = inbox.get_nowait()
        except queue.Empty:
            return None
        kind = order[0]
        if kind == "bye":
            return "bye"
        if kind == "plans" and workers is None:
            workers = Workers(pickle.loads(order[1]))
            try:
                workers.start()
            except FleetFailed as e:
                out.append(("failed", str(e)))
                workers.cleanup()
                return "failed"
            return workers
        if kind == "send" and workers is not None:
            workers.send(order[1])


def _read(down, up, inbox: queue.Queue, heard: list, done: threading.Event) -> None:
    """The coordinator's queue, read as items come; pings answered at once."""
    from ..cluster.client import read_queue

    def take(item) -> None:
        heard[0] = time.monotonic()
        for order in unpack(item):
            if order[0] == "ping":
                _flush(up, [("pong", order[1], time.monotonic_ns())])
            else:
                inbox.put(order)
    read_queue(down, done, take)


def _flush(up, out: list) -> None:
    if not out:
        return
    try:
        up.put(pack(out))
    except Exception:  # noqa: BLE001 - the coordinator's silence or bye ends the task
        pass

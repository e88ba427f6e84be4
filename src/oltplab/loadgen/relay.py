"""One host's part of a ``--loadgen`` step: a Dask task that relays, never the load itself.

The coordinator (remote.py) places ``serve`` on the host with ``cluster.submit_on`` (that
host's worker and no other, never retried). The task starts the host's worker processes as a
step on one machine does (spawn.Workers: the C loop runs in them, never in the task's
thread), forwards the coordinator's messages to them and theirs back, and says it is alive
every second. It speaks cluster/protocol.py's relay protocol (its limits, its silence and
cancellation, TaskLink); two Dask queues carry the traffic, one each way, every item a pickled
list of events:

    coordinator -> host: ("ping", seq), ("plans", pickled WorkerPlans), ("send", message),
                         ("hb",) every second, ("bye",)
    host -> coordinator: ("hello", pid, t_ns), ("pong", seq, clocks.Reading), ("hb", t_ns),
                         ("msg", message or spawn.Exited), ("failed", text), ("done",)

Times are the host's monotonic clock; the coordinator translates them (remote.py) with the
offset its pings measure (cluster.clocks.measure, each pong the host's two clocks). A ping
is answered as soon as it arrives, by the thread that reads the coordinator's queue, so the
round trip measures the queues and not this loop.

The task stops its worker processes (Stop, then SIGKILL after 3 s) and returns when the
coordinator says bye, when it has not heard from the coordinator for ``SILENCE_S`` seconds,
when the task is cancelled, or when every worker has exited. Worker processes also die with
the Dask worker (the kernel's parent-death signal), so a killed worker leaves none behind.
"""

from __future__ import annotations

import os
import pickle
import time

from ..cluster.clocks import now
from ..cluster.protocol import SILENCE_S, TaskLink, put_quietly
from .messages import Stop
from .spawn import FleetFailed, Workers

POLL_S = 0.05  # the longest a message waits here before it is forwarded


def pack(events: list) -> bytes:
    return pickle.dumps(events, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(item: bytes) -> list:
    return pickle.loads(item)


def serve(host: str, up_name: str, down_name: str, silence_s: float = SILENCE_S) -> dict:
    """The relay of ``host`` (run as a Dask task there): what ended it and its workers."""
    from distributed import Queue
    up, down = Queue(up_name), Queue(down_name)

    def take(item) -> list:
        """The coordinator's orders of one item; pings answered at once (in the reader)."""
        orders = []
        for order in unpack(item):
            if order[0] == "ping":
                _flush(up, [("pong", order[1], now())])
            else:
                orders.append(order)
        return orders

    workers: Workers | None = None
    reason = "?"
    link = TaskLink(down, silence_s, take, name=f"oltplab-relay-{host}")
    try:
        with link:
            up.put(pack([("hello", os.getpid(), time.monotonic_ns())]))
            while True:
                out: list = []
                reason = link.why_stop()
                if reason:
                    break
                if link.beat_due():
                    out.append(("hb", time.monotonic_ns()))
                reason = _orders(link, workers, out)
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
        if workers is not None:
            workers.cleanup(Stop("the coordinator is gone") if reason != "done" else None)
    return {"host": host, "ended": reason,
            "workers": sorted(p.worker for p in (workers.plans if workers else ()))}


def _orders(link: TaskLink, workers: Workers | None, out: list):
    """Carry out what the coordinator sent: a new Workers (the plans arrived and they
    started), a reason to stop, or None."""
    while True:
        order = link.order()
        if order is None:
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


def _flush(up, out: list) -> None:
    """The events ``out`` up in one item (the coordinator's silence or bye ends the task if
    it cannot be sent)."""
    if out:
        put_quietly(up, pack(out))

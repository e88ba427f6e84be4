"""The relay protocol over Dask: how this machine (the coordinator) and a task it placed on a
host talk, the same for every user of it: the load generator's relays (loadgen/relay.py on the
host, loadgen/remote.py here), an experiment's parts (parts.py, and partmain.py for the part's
own process) and the hosts' samplers (sampling.py).

- Two Dask queues per host, one each way (client.queue_pairs): the coordinator's orders go
  down, the task's words come up. What an item holds is the user's: the load generator sends
  pickled lists of events, parts and samplers send lines of text.
- Each side says it is alive every ``HEARTBEAT_S`` (an order ``hb`` down; up, the user's own
  heartbeat or, for a sampler, its samples) and takes ``SILENCE_S`` without a word from the
  other side as its end: the coordinator fails the host (``Relays.lost``), the task stops
  what it started (``TaskLink.why_stop``). A part's process watches its task the same way
  over its stdin (partmain.Link).
- The task also stops when it is cancelled (the coordinator let it go, or cancelled it when
  it went silent) and the coordinator fails a host whose task erred (KilledWorker: its worker
  died) or ended without its last word within ``END_GRACE_S``.

The limits every user shares are here; each user's own bounds for a told-to-stop task are
here too, named after it, so the protocol's numbers are read in one place.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable, Iterable

from .client import put_quietly, queue_pairs, read_queue, release, task_cancelled

HEARTBEAT_S = 1.0  # each side says it is alive this often
SILENCE_S = 10.0  # nothing heard from the other side for this long: it is gone
START_TIMEOUT_S = 60.0  # for a task's first word (its worker imports oltplab the first time)
PROBE_TIMEOUT_S = 5.0  # for the answer to one clock probe
END_GRACE_S = 5.0  # a finished task's last words may still be on their way
# how long the coordinator waits for a task told to stop, per user of the protocol
RELAY_BYE_TIMEOUT_S = 8.0  # the load generator's workers: Stop, then 3 s, then SIGKILL
SAMPLER_STOP_TIMEOUT_S = 30.0  # every host's sampler, together (hung hosts wait together)
PART_STOP_TIMEOUT_S = 90.0  # a part stops as on Ctrl-C (its servers stop, its record closes)


class Silence:
    """When the other side was last heard, and whether it has been silent too long."""

    def __init__(self, silence_s: float = SILENCE_S, clock: Callable[[], float] = time.monotonic):
        self.silence_s = silence_s
        self._clock = clock
        self.at = clock()

    def heard(self) -> None:
        self.at = self._clock()

    def quiet_for(self) -> float:
        """Seconds since the other side was last heard."""
        return self._clock() - self.at

    def ended(self, who: str) -> str | None:
        """Why the other side is taken as gone (``who`` names it), or None."""
        if self.quiet_for() > self.silence_s:
            return f"{who} was silent for {self.silence_s:g} s"
        return None


# --------------------------------------------------------------------------- on the host

class TaskLink:
    """A placed task's end of the protocol (run inside the Dask task): the coordinator's
    orders read from ``down`` in a thread as they come, each item turned into orders by
    ``take`` (in that thread, so it may answer at once: the load generator's pings), the
    coordinator's silence and the task's cancellation noticed, heartbeats timed."""

    def __init__(self, down, silence_s: float = SILENCE_S,
                 take: Callable[[Any], Iterable] | None = None, name: str = "oltplab-task"):
        from distributed import get_worker
        self._worker = get_worker()
        self._key = self._worker.get_current_task()
        self._down = down
        self._take = take if take is not None else (lambda item: (item,))
        self._inbox: queue.Queue = queue.Queue()
        self._stopping = threading.Event()
        self._next_beat = 0.0
        self.silence = Silence(silence_s)
        self._thread = threading.Thread(target=self._read, name=name, daemon=True)

    def __enter__(self) -> TaskLink:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stopping.set()

    def why_stop(self) -> str | None:
        """The coordinator silent too long, or the task cancelled: why; else None."""
        why = self.silence.ended("the coordinator")
        if why:
            return why
        return "cancelled" if task_cancelled(self._worker, self._key) else None

    def beat_due(self) -> bool:
        """True once every ``HEARTBEAT_S`` (and at the first call)."""
        now = time.monotonic()
        if now < self._next_beat:
            return False
        self._next_beat = now + HEARTBEAT_S
        return True

    def order(self, timeout: float = 0.0):
        """The coordinator's next order, waiting up to ``timeout`` seconds; None if none."""
        try:
            return self._inbox.get(timeout=timeout) if timeout > 0 else self._inbox.get_nowait()
        except queue.Empty:
            return None

    def _read(self) -> None:
        def item(got) -> None:
            self.silence.heard()
            for order in self._take(got):
                self._inbox.put(order)
        read_queue(self._down, self._stopping, item)


def serve_orders(down, silence_s: float, on_order: Callable[[Any], str | None],
                 ended: Callable[[], str | None], poll_s: float = 1.0,
                 beat: Callable[[], None] | None = None) -> str:
    """A placed task's relay loop: the coordinator's orders from the Dask queue ``down``,
    each to ``on_order`` (a reason to stop, or None), until ``ended()`` gives a reason (the
    task's process exited), the coordinator has been silent for ``silence_s`` seconds or the
    task is cancelled; ``beat`` is called every ``HEARTBEAT_S``. Why it stopped."""
    with TaskLink(down, silence_s) as link:
        while True:
            why = ended() or link.why_stop()
            if why:
                return why
            if beat is not None and link.beat_due():
                beat()
            order = link.order(poll_s)
            if order is not None:
                why = on_order(order)
                if why:
                    return why


# --------------------------------------------------------------------------- here

class Relays:
    """The coordinator's end of the protocol: one placed task per host, its two queues, a
    thread per host that hands each item that comes up to ``on_item(host, item)``, and a
    heartbeat ``beat_item`` to every host ``live(host)`` says is still running.

    ``what`` names the task in failures ("relay", "part"); ``early`` is what a task that ended
    without its last word did ("ended before its workers reported"). A host is silent from
    its task's first word on, or from the start with ``silent_from_start``."""

    def __init__(self, client, kind: str, hosts, on_item: Callable[[str, Any], None],
                 beat_item: Any, live: Callable[[str], bool], silence_s: float = SILENCE_S,
                 what: str = "task", early: str = "ended without a last word",
                 silent_from_start: bool = False):
        self.client = client
        self.kind = kind
        self.hosts = list(hosts)
        self.silence_s = silence_s
        self.what = what
        self.early = early
        self.futures: dict = {}
        self.up: dict = {}
        self.down: dict = {}
        self.silence: dict[str, Silence] = {}
        self.finished_at: dict[str, float] = {}
        self.stopping = threading.Event()
        self._on_item = on_item
        self._beat_item = beat_item
        self._live = live
        self._from_start = silent_from_start
        self._threads: list[threading.Thread] = []

    def start(self, submit: Callable[[str, str, str], Any]) -> None:
        """Open the queues and place each host's task: ``submit(host, up_name, down_name)``
        returns its Future."""
        self.up, self.down = queue_pairs(self.client, self.kind, self.hosts)
        for h in self.hosts:
            if self._from_start:
                self.silence[h] = Silence(self.silence_s)
            self.futures[h] = submit(h, self.up[h].name, self.down[h].name)
            self._thread(self._read, h)
        self._thread(self._beat)

    def put(self, host: str, item) -> None:
        """``item`` down to ``host``'s task; a host that cannot be reached stops hearing us."""
        if host in self.down:
            put_quietly(self.down[host], item)

    def heard_from(self, host: str) -> bool:
        return host in self.silence

    def quiet_for(self, host: str) -> float:
        """Seconds since ``host`` was last heard (0 before its first word)."""
        s = self.silence.get(host)
        return s.quiet_for() if s is not None else 0.0

    def lost(self, host: str) -> str | None:
        """Why ``host``'s task is taken as lost, in one line, or None while it is well: its
        task erred (its worker died), ended ``END_GRACE_S`` ago without its last word, or
        was silent for ``silence_s`` seconds."""
        fut = self.futures[host]
        if fut.status == "error":
            return died(host, self.what, fut.exception(timeout=1))
        if fut.status in ("finished", "cancelled"):
            at = self.finished_at.setdefault(host, time.monotonic())
            if time.monotonic() - at > END_GRACE_S:
                return f"host {host}: its {self.what} {self.early}"
            return None
        if self.quiet_for(host) > self.silence_s:
            return (f"host {host}: no heartbeat for {self.silence_s:g} s (its worker hangs or "
                    "is cut off)")
        return None

    def close(self) -> None:
        """Cancel the tasks still running (a host that hangs stops its task when it runs
        again and hears nothing), stop the threads, close the queues."""
        self.stopping.set()
        release(self.client, self.futures.values(), ())
        for t in self._threads:
            t.join(2.0)
        release(self.client, (), [*self.up.values(), *self.down.values()])

    def _thread(self, target, *args) -> None:
        t = threading.Thread(target=target, args=args, daemon=True,
                             name=f"oltplab-{self.kind}-{target.__name__.strip('_')}")
        t.start()
        self._threads.append(t)

    def _read(self, host: str) -> None:
        def item(got) -> None:
            self.silence.setdefault(host, Silence(self.silence_s)).heard()
            self._on_item(host, got)
        read_queue(self.up[host], self.stopping, item)

    def _beat(self) -> None:
        while not self.stopping.wait(HEARTBEAT_S):
            for h in self.hosts:
                if self._live(h):
                    self.put(h, self._beat_item)


def died(host: str, what: str, exc: BaseException | None) -> str:
    """One line for a host whose task was lost with ``exc``."""
    text = str(exc).splitlines()[0][:200] if exc is not None and str(exc) else ""
    return (f"host {host}: its Dask worker died or its {what} was lost "
            f"({type(exc).__name__}{': ' + text if text else ''})")

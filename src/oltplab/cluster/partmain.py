"""The process of one part on its host (cluster/parts.py starts it):

    python -m oltplab.cluster.partmain PART OUT

PART is a pickled ``(fn, kwargs, argv)``; ``fn(link, Path(OUT), **kwargs)`` runs in this
process's main thread, with ``sys.argv`` the coordinator's command line (``argv``), which the
records it writes name. It talks through ``link`` (a Link): ``emit`` writes an event, a JSON
line on stdout; ``on`` and ``wait_for`` take orders, lines on stdin. Its return value
(JSON-ready) ends up in the last event,
``{"event": "end", "status": ..., "result" | "error": ...}``.

The part is interrupted as on Ctrl-C (SIGINT to this process, once) when told ``cancel``,
when stdin ends (the task that started it is gone), or when no line has come for
``SILENCE_S`` (the task sends ``hb`` every ``HEARTBEAT_S``: the relay protocol, protocol.py):
its own cleanup runs.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from .protocol import HEARTBEAT_S, SILENCE_S, Silence


class Link:
    """A part's events out and orders in."""

    def __init__(self, rfile=None, wfile=None, silence_s: float = SILENCE_S):
        self._in = rfile if rfile is not None else sys.stdin
        self._out = wfile if wfile is not None else sys.stdout
        self.silence_s = silence_s
        self._lock = threading.Lock()
        self._handlers: dict[str, Callable[[str], None]] = {}
        self._seen: dict[str, str] = {}
        self._cond = threading.Condition()
        self._silence = Silence(silence_s)
        self.interrupted: str | None = None  # why, once interrupted

    def start(self) -> Link:
        threading.Thread(target=self._read, daemon=True, name="oltplab-part-in").start()
        threading.Thread(target=self._watch, daemon=True, name="oltplab-part-watch").start()
        return self

    def emit(self, event: str, **fields) -> None:
        """An event: one JSON line on stdout."""
        line = json.dumps({"event": event, **fields}, default=str)
        with self._lock:
            try:
                self._out.write(line + "\n")
                self._out.flush()
            except (OSError, ValueError):
                pass

    def on(self, order: str, handler: Callable[[str], None]) -> None:
        """Call ``handler(argument)`` (in the reader's thread) for each order ``order``."""
        self._handlers[order] = handler

    def wait_for(self, order: str, poll_s: float = 0.2) -> str:
        """Block until ``order`` has come (at any time since the start); its argument. A
        Ctrl-C (or an interruption) meanwhile raises KeyboardInterrupt as usual."""
        with self._cond:
            while order not in self._seen:
                self._cond.wait(poll_s)
            return self._seen[order]

    def interrupt(self, why: str) -> None:
        """Stop the part as on Ctrl-C, once."""
        if self.interrupted is None:
            self.interrupted = why
            os.kill(os.getpid(), signal.SIGINT)

    def _read(self) -> None:
        for raw in self._in:
            self._silence.heard()
            name, _, arg = raw.strip().partition(" ")
            if not name or name == "hb":
                continue
            if name == "cancel":
                self.interrupt("cancelled by the coordinator")
                continue
            with self._cond:
                self._seen[name] = arg
                self._cond.notify_all()
            handler = self._handlers.get(name)
            if handler is not None:
                handler(arg)
        self.interrupt("the coordinator's task is gone (its input ended)")

    def _watch(self) -> None:
        while self.interrupted is None:
            time.sleep(HEARTBEAT_S)
            why = self._silence.ended("the coordinator's task")
            if why:
                self.interrupt(why)


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started ignoring it
    part, out = argv
    with open(part, "rb") as f:
        fn, kwargs, sys.argv = pickle.load(f)
    link = Link().start()
    from ..errors import OltplabError
    try:
        result = fn(link, Path(out), **kwargs)
    except KeyboardInterrupt:
        link.emit("end", status="interrupted", error=link.interrupted or "interrupted")
        return 130
    except OltplabError as e:
        link.emit("end", status="failed", error=str(e))
        return 1
    except BaseException as e:  # noqa: BLE001 - said in one line to the coordinator
        link.emit("end", status="failed", error=f"{type(e).__name__}: {e}")
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    link.emit("end", status="ended", result=result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

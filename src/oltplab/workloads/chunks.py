"""The thread that makes a loading process's chunks ahead of its loader, for every workload
(workloads/<name>/chunks.py ``produce``) and every engine: generator and server work at the
same time, ``READ_AHEAD`` chunks apart at most.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator

#: Chunks generated ahead of the one being sent, per loading process.
READ_AHEAD = 3


def feed(items: Iterable, out: queue.Queue, stop: threading.Event) -> None:
    """Generator thread: the items (a workload's encoded chunks) into ``out``, then None (or the
    exception raised); stops early when ``stop`` is set."""
    try:
        for item in items:
            while not stop.is_set():
                try:
                    out.put(item, timeout=0.2)
                    break
                except queue.Full:
                    pass
            if stop.is_set():
                return
        out.put(None)
    except BaseException as exc:  # handed to the consumer, which raises it
        out.put(exc)


def marked(work: Iterable, rows_of) -> Iterator:
    """The (table, COPY text, rows) items of each chunk of ``work`` (``rows_of(chunk)``), each
    chunk's followed by ("", "", its index): the mark a loader counts."""
    for chunk in work:
        yield from rows_of(chunk)
        yield "", "", chunk.index


def feed_text(items: Iterable, out: queue.Queue, stop: threading.Event) -> None:
    """``feed`` of (table, COPY text, rows) items, the text encoded as ASCII."""
    feed(((table, text.encode("ascii"), rows) for table, text, rows in items), out, stop)

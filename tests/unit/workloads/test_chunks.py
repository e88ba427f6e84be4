"""workloads/chunks.py ``feed``: the generator thread every workload's ``produce`` runs."""

from __future__ import annotations

import queue
import threading

from oltplab.workloads.chunks import feed


def _drain(out: queue.Queue) -> list:
    items = []
    while not out.empty():
        items.append(out.get_nowait())
    return items


def test_the_items_then_none():
    out: queue.Queue = queue.Queue()
    feed(iter([("t", b"1\n", 1), ("", "", 7)]), out, threading.Event())
    assert _drain(out) == [("t", b"1\n", 1), ("", "", 7), None]


def test_an_exception_of_the_generator_is_handed_over():
    def items():
        yield "t", b"1\n", 1
        raise ValueError("bad row")

    out: queue.Queue = queue.Queue()
    feed(items(), out, threading.Event())
    first, exc = _drain(out)
    assert first == ("t", b"1\n", 1) and isinstance(exc, ValueError)


def test_a_stop_ends_it_without_none_while_the_queue_is_full():
    out: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    thread = threading.Thread(target=feed, args=(iter([1, 2, 3]), out, stop))
    thread.start()
    stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert _drain(out) == [1]

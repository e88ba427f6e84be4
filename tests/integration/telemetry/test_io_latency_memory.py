"""The per-IO latencies' reader thread holds no more memory after thousands of dumps than
after the first ones.

bpftrace writes a dump four times a second, a few hundred lines at a time, so the reader finds
part of a dump in the pipe at each read. Read as text, each read left two blocks of up to
8 kB (the bytes, then the decoded text) in the reader's malloc arena beside the counts, and
the arena grew by about 0.1 MiB a minute of a 64-user run for as long as the run lasted. The
test runs the source's own start() and reader on a real pipe; the process writing it is a
small program that prints dumps in bpftrace's format (``T <ns>`` and ``@c[dev, op, shift,
base]: n`` lines) in bursts, hundreds a second, as bpftrace would over hours, in place of
bpftrace itself, whose dumps follow the host's IOs and cannot be sped up.
"""

from __future__ import annotations

import sys
import time

import pytest

from oltplab.telemetry import arenas, iolatency
from oltplab.telemetry.iolatency import IoLatency, why_unavailable

DUMPS = 3000  # twelve minutes of bpftrace's dumps
WRITER = r"""
import random, sys, time
print("Attaching 3 probes...", flush=True)
rnd, dev, n = random.Random(7), 254 << 20, 0
while True:
    n += 1
    lines = [f"T {n * 250_000_000}"] + [
        f"@c[{dev}, {rnd.randint(0, 2)}, {rnd.randint(0, 6)}, {rnd.randint(512, 1023)}]: "
        f"{rnd.randint(1, 40)}" for _ in range(rnd.randint(5, 300))]
    sys.stdout.write("\n".join(lines) + "\n\n")
    sys.stdout.flush()
    time.sleep(0.003)
"""


class _Bursts:
    """subprocess, with Popen running WRITER instead of the program it is given."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def Popen(self, args, **kw):
        return self._real.Popen([sys.executable, "-c", WRITER], **kw)


def test_the_readers_arena_does_not_grow_with_the_dumps_read(monkeypatch):
    reason = why_unavailable()
    if reason:
        pytest.skip(f"per-IO latency: {reason}")
    monkeypatch.setattr(iolatency, "subprocess", _Bursts(iolatency.subprocess))
    lat = IoLatency("on")
    heap: list[int] = []
    feed = lat.feed
    lat.feed = lambda lines: heap.append(arenas.probe("io-latency reader")) or feed(lines)
    lat.mark("ramp_end", 0, {"step": 0})
    lat.start()
    try:
        assert lat.reason is None and lat.thread is not None
        readings = []
        deadline = time.monotonic() + 240
        while lat._dumps < DUMPS and time.monotonic() < deadline:
            time.sleep(0.5)
            if heap and lat._dumps >= 100 and (not readings or lat._dumps >= DUMPS):
                readings.append((lat._dumps, arenas.heap_kib(heap[0])))
    finally:
        out = lat.stop()
    (first_dumps, first), (last_dumps, last) = readings[0], readings[-1]
    assert last_dumps >= DUMPS, readings
    assert out["ios"] > 1_000_000 and len(out["steps"]["0"]) == 1  # every dump was counted
    # as text the arena grew by 96 and 120 KiB over about 2,900 dumps (two runs); as bytes
    # by nothing
    assert last - first < 32, (readings, f"{last - first} KiB more after "
                                         f"{last_dumps - first_dumps} dumps")

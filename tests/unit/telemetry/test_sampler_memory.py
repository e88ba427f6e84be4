"""A long run's telemetry does not stay in the driver's memory: the sampler keeps its samples
in a file as it takes them and gives every one back in the timeline; the per-IO latencies of a
device hold what its IOs took, not a histogram each."""

from __future__ import annotations

import math
import tracemalloc

from hdrh.histogram import HdrHistogram

from oltplab.telemetry.iolatency import MAX_US, IoLatency, bucket_value, device_name
from oltplab.telemetry.sampler import Sampler
from oltplab.telemetry.sources import Source
from oltplab.telemetry.spool import RowSpool

WIDE = 1000  # columns of the test's source: 8 kB a sample as 8-byte values
S = 1_000_000_000


class Counting(Source):
    """A source of WIDE columns whose k-th reading is (k, 1, 2 ... WIDE - 2, k + WIDE - 1),
    NaN in the last column of every 7th reading."""

    name = "counting"

    def __init__(self):
        super().__init__()
        self.columns = [f"counting.c{j}" for j in range(WIDE)]
        self.units = {c: "1" for c in self.columns}
        self.reads = 0
        self._row = [float(j) for j in range(WIDE)]

    def read(self, t_ns):
        k = self.reads
        self.reads += 1
        values = self._row.copy()
        values[0] = float(k)
        values[-1] = math.nan if k % 7 == 0 else float(k + WIDE - 1)
        return values


def test_the_samples_held_in_memory_do_not_grow_with_the_number_taken():
    src = Counting()
    # the grid's first sample is an hour away: every sample here is the test's own
    s = Sampler(3600, power="none", devices=[], interfaces=[], extra_sources=[src])
    s.start()
    first = src.reads  # the baseline reading taken at start
    t0 = s._last
    tracemalloc.start()
    try:
        n = 0
        for n in range(1, 201):
            s._sample(t0 + n * S)
        held = tracemalloc.get_traced_memory()[0]
        for n in range(201, 1201):
            s._sample(t0 + n * S)
        grown = tracemalloc.get_traced_memory()[0] - held
    finally:
        tracemalloc.stop()
    tl = s.stop()
    # 1,000 more samples of 1,000 columns (8 MB as 8-byte values) hold no more memory than
    # the file's write buffer (64 kB) and what reading the sources leaves about
    assert grown < 512 * 1024, grown
    # ... and the timeline has every one of them back, in order, NaN as null
    assert len(tl) == 1200 and tl.overhead["samples"] == 1200
    assert tl.columns["t_ns"] == [t0 + n * S for n in range(1, 1201)]
    assert tl.columns["dt_s"][0] == 1.0 and set(tl.columns["dt_s"]) == {1.0}
    assert len(tl.columns["t_unix_ns"]) == 1200
    for k in (0, 1, 6, 7, 700, 1199):
        reading = first + k
        assert tl.columns["counting.c0"][k] == reading
        assert tl.columns["counting.c123"][k] == 123
        assert tl.columns[f"counting.c{WIDE - 1}"][k] == (
            None if reading % 7 == 0 else reading + WIDE - 1)
    assert tl.columns["mem.used_bytes"][-1] is not None  # the host's sources beside it


def test_the_latest_sample_is_served_while_the_samples_are_in_the_file():
    src = Counting()
    s = Sampler(3600, power="none", devices=[], interfaces=[], extra_sources=[src])
    s.start()
    assert s.latest() is None
    t0 = s._last
    for n in range(1, 100):  # many times the file's write buffer
        s._sample(t0 + n * S)
    t, values = s.latest()
    assert t == t0 + 99 * S and values["counting.c0"] == src.reads - 1
    assert values["counting.c5"] == 5
    assert len(values) == len(s.stop().columns) - 3  # all but the clocks


def test_a_spool_gives_back_rows_of_integers_and_floats_exactly():
    spool = RowSpool("qdq", chunk_bytes=100)  # a few rows in memory, the others in the file
    rows = [(2**62 - k, k / 3, -k) for k in range(1000)]
    for row in rows:
        spool.append(row)
    assert len(spool) == 1000 and spool.held_bytes < 100
    a, b, c = spool.columns()
    assert list(a) == [r[0] for r in rows] and list(b) == [r[1] for r in rows]
    assert list(c) == [r[2] for r in rows]
    spool.close()
    assert len(spool) == 0 and [list(x) for x in spool.columns()] == [[], [], []]


def test_io_latency_of_many_devices_with_few_ios_holds_their_counts_not_a_histogram_each():
    lat = IoLatency("on")  # never started: fed bpftrace's dump lines as its reader is
    lat.mark("ramp_end", 0, {"step": 0})
    lines = [f"T {S}\n"]
    # 200 loop devices (another's tests') with one read of 87 us each, and a busy one whose
    # writes took 10,240 distinct latencies (buckets of 10 bits from 512 us to 9 minutes)
    lines += [f"@c[{(7 << 20) | m}, 0, 0, 87]: 1\n" for m in range(200)]
    busy_dev = (259 << 20) | 4000
    buckets = [(s, b) for s in range(20) for b in range(512, 1024)]
    lines += [f"@c[{busy_dev}, 1, {s}, {b}]: {b}\n" for s, b in buckets]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        lat.feed(lines)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # an HDR histogram (1 us .. an hour, 3 digits) is 190 kB: 201 of them were 38 MB; and the
    # busy device's 10,240 latencies as counts would take more than its histogram
    assert grown < 512 * 1024, grown
    out = lat.stop()["steps"]["0"]
    assert len(out) == 201
    assert out[device_name((7 << 20) | 5)] == {
        "read": {"ios": 1, "p50_us": 87, "p99_us": 87, "p999_us": 87, "max_us": 87}}
    # the same figures as an HDR histogram given every IO
    h = HdrHistogram(1, MAX_US, 3)
    for s, b in buckets:
        h.record_value(bucket_value(s, b), b)
    assert out[device_name(busy_dev)] == {"write": {
        "ios": 20 * sum(range(512, 1024)), "p50_us": h.get_value_at_percentile(50),
        "p99_us": h.get_value_at_percentile(99), "p999_us": h.get_value_at_percentile(99.9),
        "max_us": h.get_max_value()}}


def test_a_sampler_stopped_before_its_thread_started_stops_cleanly():
    """Ctrl-C can land between the sampler thread's creation and its start: stopping then
    returns the (empty) timeline instead of joining a thread that never ran."""
    import threading
    s = Sampler(3600, power="none", devices=[], interfaces=[])
    s._thread = threading.Thread(target=lambda: None)  # made, never started
    timeline = s.stop()
    assert timeline is s.stop()

"""A worker's response times wait in small buffers before they enter its histograms, so that
its memory is flat from the first minutes of a long run: a buffer that fills page by page
for as long as a rare transaction type takes to fill it grows the worker's memory that long."""

from __future__ import annotations

import tracemalloc
from array import array

from oltplab.engines.common.loop import LOOP_SAMPLES
from oltplab.engines.common.recorder import Recorder
from oltplab.metrics.histogram import decode


def test_response_times_handed_over_by_the_loop_never_hold_more_than_a_small_buffer():
    rec = Recorder(ramp_end_ns=0, measure_end_ns=10**15)
    # as the C loop hands them over: LOOP_SAMPLES at a time, every one a distinct value (the
    # worst case for the histogram's bulk entry)
    chunks = [array("q", range(1 + k * LOOP_SAMPLES, 1 + (k + 1) * LOOP_SAMPLES))
              for k in range(4)]
    handed = 0
    tracemalloc.start()
    try:
        for _ in range(3):
            for kind in range(5):
                rec.add_samples(kind, chunks[kind % 4])
                handed += LOOP_SAMPLES
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the loop's buffers are LOOP_SAMPLES of 8 bytes a type; what the worker's Python side
    # holds at its peak (the buffer, and the counts of its distinct values on their way into
    # the histogram) stays near that, not 65,536 a type (512 KiB, and 5 MiB of counts)
    assert peak < 1536 * 1024, peak
    assert LOOP_SAMPLES * 8 <= 64 * 1024
    assert sum(decode(h).get_total_count() for h in rec.encoded()) == handed

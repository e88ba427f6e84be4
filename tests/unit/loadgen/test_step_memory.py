"""The manager's bookkeeping of a step holds what a long run needs compactly: each worker's
point a second (for the counts per 10 s and per second) in 16 bytes, and nothing else that
grows with the run's length."""

from __future__ import annotations

import tracemalloc

from oltplab.config import RunSpec
from oltplab.loadgen.messages import Progress
from oltplab.loadgen.step import Step
from oltplab.metrics.throughput import Points, per_interval

S = 1_000_000_000
WORKERS = 8


class Monitor:
    flush_stats = True


def _step() -> Step:
    spec = RunSpec(users=(64,), workers=WORKERS, seed=5)
    return Step(0, "postgresql://u@/db?host=/tmp", spec, 64, 8, None, 99, Monitor(), None)


def _feed(step: Step, seconds: range) -> None:
    """Each worker's progress once a second: worker w completes 100 (w + 1) a second, its
    points w microseconds after the whole second."""
    for k in seconds:
        for w in range(WORKERS):
            step._handle(Progress(w, k * S + w * 1000, 100 * (w + 1) * k, 45 * k))


def test_a_step_holds_16_bytes_a_second_per_worker_and_counts_its_intervals_as_before():
    step = _step()
    _feed(step, range(0, 500))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        _feed(step, range(500, 5500))  # 83 minutes of 8 workers
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    points = WORKERS * 5000
    # two 8-byte integers a point (and the arrays' spare room), where a list of tuples of
    # two integers took about 120 bytes
    assert grown / points < 20, grown / points
    series = [step.points[w] for w in sorted(step.points)]
    assert [len(p) for p in series] == [5500] * WORKERS
    assert series[3][10] == (10 * S + 3000, 4000)
    per_10s = per_interval(series, 2 * S, 5002 * S)
    assert per_10s == [10 * 100 * sum(range(1, WORKERS + 1))] * 500
    # the same counts as from the points as lists of tuples, per second too
    lists = [list(p) for p in series]
    assert per_interval(lists, 2 * S, 5002 * S) == per_10s
    assert per_interval(series, 7 * S, 607 * S, S) == per_interval(lists, 7 * S, 607 * S, S)


def test_points_read_as_the_tuples_they_hold():
    p = Points([(1, 10), (3, 30)])
    p.append(5, 70)
    assert len(p) == 3 and p[0] == (1, 10) and p[-1] == (5, 70) and p[1:] == [(3, 30), (5, 70)]
    assert list(p) == [(1, 10), (3, 30), (5, 70)] and p == [(1, 10), (3, 30), (5, 70)]
    # at a point, between points (interpolated), outside them
    assert per_interval([p], 1, 5, 2) == [20, 40]
    assert per_interval([p], 2, 4, 2) == [30]
    assert per_interval([p], 0, 4, 2) == []

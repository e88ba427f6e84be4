"""Completions per interval from the workers' cumulative counts, and how much they vary:
pure functions, whatever the workload."""

from __future__ import annotations

import statistics
from array import array
from bisect import bisect_left

INTERVAL_S = 10.0


class Points:
    """One source's (t_ns, cumulative count) points in time order, kept compactly: two
    arrays of 64-bit integers (16 bytes a point, where a list of tuples takes about 120).
    A sequence of (t_ns, count) tuples to its readers."""

    __slots__ = ("times", "values")

    def __init__(self, points=()):
        self.times = array("q")
        self.values = array("q")
        for t, v in points:
            self.append(t, v)

    def append(self, t_ns: int, value: int) -> None:
        self.times.append(t_ns)
        self.values.append(value)

    def __len__(self) -> int:
        return len(self.times)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [(t, v) for t, v in zip(self.times[i], self.values[i])]
        return self.times[i], self.values[i]

    def __iter__(self):
        return zip(self.times, self.values)

    def __eq__(self, other) -> bool:
        return list(self) == list(other)


def per_interval(series: list, start_ns: int, end_ns: int,
                 width_ns: int = int(INTERVAL_S * 1e9)) -> list[int]:
    """Completions in each whole interval of ``width_ns`` from ``start_ns`` to ``end_ns``.

    ``series`` holds, per source, (t_ns, cumulative completions) points in time order (a list
    of tuples or ``Points``); a source's count at an interval boundary is interpolated
    linearly between its points. The list stops at the first boundary that some source's
    points do not reach."""
    sources = [p if isinstance(p, Points) else Points(p) for p in series]
    out: list[int] = []
    prev = None
    k = 0
    while start_ns + k * width_ns <= end_ns:
        total = 0.0
        for points in sources:
            v = _at(points, start_ns + k * width_ns)
            if v is None:
                return out
            total += v
        if prev is not None:
            out.append(round(total - prev))
        prev = total
        k += 1
    return out


def _at(points: Points, t: int) -> float | None:
    """The count at ``t``: at the first point at or after ``t`` when it lies on it, else
    interpolated between that point and the one before."""
    times, values = points.times, points.values
    if not times or t < times[0] or t > times[-1]:
        return None
    i = bisect_left(times, t)
    t1, v1 = times[i], values[i]
    if t1 == t or i == 0:
        return float(v1)
    t0, v0 = times[i - 1], values[i - 1]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def variation(values: list[int]) -> float | None:
    """Coefficient of variation (sample standard deviation / mean); null below two values."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return None if mean <= 0 else statistics.stdev(values) / mean

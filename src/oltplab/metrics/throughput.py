"""Completions per interval from the workers' cumulative counts, and how much they vary:
pure functions, whatever the workload."""

from __future__ import annotations

import statistics

INTERVAL_S = 10.0


def per_interval(series: list[list[tuple[int, int]]], start_ns: int, end_ns: int,
                 width_ns: int = int(INTERVAL_S * 1e9)) -> list[int]:
    """Completions in each whole interval of ``width_ns`` from ``start_ns`` to ``end_ns``.

    ``series`` holds, per source, (t_ns, cumulative completions) points in time order; a
    source's count at an interval boundary is interpolated linearly between its points. The
    list stops at the first boundary that some source's points do not reach."""
    out: list[int] = []
    prev = None
    k = 0
    while start_ns + k * width_ns <= end_ns:
        total = 0.0
        for points in series:
            v = _at(points, start_ns + k * width_ns)
            if v is None:
                return out
            total += v
        if prev is not None:
            out.append(round(total - prev))
        prev = total
        k += 1
    return out


def _at(points: list[tuple[int, int]], t: int) -> float | None:
    if not points or t < points[0][0] or t > points[-1][0]:
        return None
    for (t0, v0), (t1, v1) in zip(points, points[1:]):
        if t0 <= t <= t1:
            return float(v0) if t1 == t0 else v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    return float(points[-1][1])


def variation(values: list[int]) -> float | None:
    """Coefficient of variation (sample standard deviation / mean); null below two values."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return None if mean <= 0 else statistics.stdev(values) / mean

"""HDR histograms of response times in microseconds: record, encode, merge, summarize.

Worker processes record into one histogram per transaction type and ship them to the
manager as base64 text (the HdrHistogram "HIST..." compressed encoding); the manager
decodes and adds them. Percentiles therefore pool every transaction of every worker,
never averaging per-worker percentiles.
"""

from __future__ import annotations

from dataclasses import dataclass

from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 3_600_000_000  # one hour
SIGNIFICANT_DIGITS = 3


def new_histogram() -> HdrHistogram:
    """An empty histogram for 1 us .. 1 h at 3 significant digits (0.1% resolution)."""
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


def record(hist: HdrHistogram, value_us: int) -> None:
    """Record one value, clamped into the trackable range."""
    if value_us < LOWEST_US:
        value_us = LOWEST_US
    elif value_us > HIGHEST_US:
        value_us = HIGHEST_US
    hist.record_value(value_us)


def encode(hist: HdrHistogram) -> str:
    """Compressed base64 text, safe to put in JSON and to send over a pipe."""
    return hist.encode().decode("ascii")


def decode(text: str) -> HdrHistogram:
    return HdrHistogram.decode(text.encode("ascii") if isinstance(text, str) else text)


def merge(parts) -> HdrHistogram:
    """Add histograms (objects or their encodings) into a new one."""
    total = new_histogram()
    for part in parts:
        total.add(decode(part) if isinstance(part, (str, bytes)) else part)
    return total


@dataclass(frozen=True)
class LatencySummary:
    """Response-time statistics in milliseconds (None when nothing was recorded)."""

    count: int
    mean: float | None
    p50: float | None
    p95: float | None
    p99: float | None
    max: float | None

    def as_dict(self) -> dict:
        return {"mean": self.mean, "p50": self.p50, "p95": self.p95, "p99": self.p99,
                "max": self.max}


def _ms(us: float) -> float:
    return round(us / 1000.0, 3)


def summarize(hist: HdrHistogram, total_us: int | None = None) -> LatencySummary:
    """Mean, p50, p95, p99 and max in ms.

    ``total_us`` (the exact sum of the recorded values) gives an exact mean; without it
    the histogram's own mean is used (within its 0.1% resolution). Percentiles are the
    histogram's values at those percentiles; max is the highest equivalent value.
    """
    n = hist.get_total_count()
    if n == 0:
        return LatencySummary(0, None, None, None, None, None)
    mean_us = total_us / n if total_us is not None else hist.get_mean_value()
    return LatencySummary(
        count=n,
        mean=_ms(mean_us),
        p50=_ms(hist.get_value_at_percentile(50.0)),
        p95=_ms(hist.get_value_at_percentile(95.0)),
        p99=_ms(hist.get_value_at_percentile(99.0)),
        max=_ms(hist.get_max_value()),
    )

"""The sampler's sources: one module per kind of figure (cpu, disks, memory, network, database,
power), all with the same small contract.

A source is built in the caller's thread (cheap: no I/O beyond discovery) and then used only by
the sampler's thread:

- ``columns`` and ``units`` are fixed once ``open()`` has returned;
- ``open()`` prepares (opens files, connects) and may raise: the sampler records the error and
  leaves the source's columns empty (null);
- ``read(t_ns)`` returns one value per column, in order, for the interval that ends at ``t_ns``
  (``time.monotonic_ns()``); counter sources keep their previous reading and return rates over
  the time since it. The first call after ``open()`` is the baseline: it returns NaN. A failed
  ``read`` raises; the sampler records it and writes NaN for that sample. A source that keeps
  going after a failure (a database that reconnects, a power meter polled by its own thread)
  appends the failure's text to ``errors`` instead, and the sampler collects it;
- ``describe()`` is JSON-ready metadata for the timeline; ``close()`` never raises.

The parsing and the arithmetic live in pure functions beside each source, so that they are
tested with recorded file contents and known answers.
"""

from __future__ import annotations

import math
import os
import time

from ...errors import DatabaseError

NAN = math.nan
U32 = 1 << 32


class ProcFile:
    """A /proc or /sys file opened once and re-read from offset 0 on every sample."""

    __slots__ = ("path", "fd")

    def __init__(self, path: str):
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)

    def read(self) -> bytes:
        # A seq_file hands out about a page per call whatever the buffer: read until empty.
        data = os.pread(self.fd, 65536, 0)
        while True:
            more = os.pread(self.fd, 65536, len(data))
            if not more:
                return data
            data += more

    def close(self) -> None:
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1


def counter_delta(prev: int, cur: int) -> float:
    """``cur - prev`` for a kernel counter; a 32-bit counter that wrapped is unwrapped.

    Several kernel counters are printed as 32-bit values (the millisecond fields of
    /proc/diskstats wrap after 49.7 days of busy time). A counter that went backwards from a
    value below 2**32 is taken to have wrapped once; one that went backwards from above it was
    reset (the device or interface was replaced), and the delta is unknown (NaN).
    """
    if cur >= prev:
        return float(cur - prev)
    if prev < U32:
        return float(cur + U32 - prev)
    return NAN


class Source:
    """The base of every source; see the module docstring for the contract."""

    name = "source"

    def __init__(self) -> None:
        self.columns: list[str] = []
        self.units: dict[str, str] = {}
        self.errors: list[str] = []

    def open(self) -> None:
        pass

    def read(self, t_ns: int) -> list[float]:
        raise NotImplementedError

    def describe(self) -> dict:
        return {}

    def close(self) -> None:
        pass


def counter_rates(prev: tuple, cur: tuple, dt_s: float) -> list[float]:
    """Per-second deltas of server counters; null where a counter is null or was reset."""
    out = []
    for p, c in zip(prev, cur):
        if p is None or c is None or c < p or dt_s <= 0:
            out.append(NAN)
        else:
            out.append((c - p) / dt_s)
    return out


class SessionSource(Source):
    """A database server's counters over one session that the sampler's thread keeps open.

    A lost session is opened again every ``retry_s`` seconds, the samples in between are
    null, and the first reading of each session is its baseline (null). Subclasses open the
    session (``_connect``: sets ``_conn``, or calls ``_later()`` and raises DatabaseError),
    read the counters in column order (``_fetch``) and close a session (``_close_conn``).
    """

    def __init__(self, retry_s: float) -> None:
        super().__init__()
        self.retry_s = retry_s
        self._conn = None
        self._prev: tuple | None = None
        self._prev_t = 0
        self._retry_at = 0

    def _connect(self) -> None:
        raise NotImplementedError

    def _fetch(self) -> tuple:
        raise NotImplementedError

    def _close_conn(self, conn) -> None:
        raise NotImplementedError

    def _error_text(self, exc: BaseException) -> str:
        return str(exc)

    def _later(self) -> None:
        """No new session before ``retry_s`` seconds from now."""
        self._retry_at = time.monotonic_ns() + int(self.retry_s * 1e9)

    def _drop(self) -> None:
        conn, self._conn, self._prev = self._conn, None, None
        self._later()
        if conn is not None:
            try:
                self._close_conn(conn)
            except Exception:
                pass

    def read(self, t_ns: int) -> list[float]:
        if self._conn is None:
            if t_ns < self._retry_at:
                return [NAN] * len(self.columns)
            self._connect()
            self._prev = None
        try:
            cur = tuple(self._fetch())
        except Exception as e:
            self._drop()
            raise DatabaseError(f"sampler query failed: {self._error_text(e)}") from None
        prev, prev_t = self._prev, self._prev_t
        self._prev, self._prev_t = cur, t_ns
        if prev is None:
            return [NAN] * len(self.columns)
        return counter_rates(prev, cur, (t_ns - prev_t) / 1e9)

"""The telemetry sampler: host and database figures on the run's timeline.

One thread reads every source (sources/) once per interval, on ``time.monotonic_ns()``, the
clock the driver uses for ramp_end and measure_end, and appends each sample to a temporary
file (spool.py) that the timeline reads back at the end: the memory held does not grow with
the run's length.
Step boundaries are marked with ``mark()``; a mark in the future (ramp_end and measure_end are
known when a step starts) gets a sample of its own at that instant, so that a step's window
starts and ends on sample boundaries and its figures cover exactly the measured interval.

    sampler = Sampler(interval=1.0, paths={"datadir": datadir, "waldir": waldir}, db_dsn=dsn)
    sampler.start()
    sampler.mark("step_start", users=8, step=0)
    sampler.mark("ramp_end", t_ns=ramp_end, step=0)
    sampler.mark("measure_end", t_ns=measure_end, step=0)
    ...
    timeline = sampler.stop()          # a Timeline; timeline.to_dict() is JSON-ready

Scheduling: samples fall on a grid of the interval that is aligned with the wall clock: with
a 1 s interval every sample is due on a whole second of UTC (with 0.5 s on the whole and the
half second, and so on), so that samplers on several hosts tick together and their samples
line up. The grid is placed on the monotonic clock once, at the start; each sample records
both clocks (``t_ns``, monotonic, and ``t_unix_ns``, the wall clock when it was taken), so a
wall clock stepped during the run shows and a sample can be put on another host's time. A
sample is taken at every mark as well, and a grid tick less than half an interval away from
a mark's sample is skipped, so intervals last between 0.5 and 1.5 times the nominal one (a
mark made for "now" may follow the previous sample closely). Each sample covers
(previous sample, its own t_ns].

The sampling thread never raises: a failing source gives null values and an entry in
``errors`` (repeats of the same error are counted, not stored again). ``stop()`` is safe to
call from ``finally`` after Ctrl-C, and more than once.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import threading
import time
from array import array
from dataclasses import dataclass, field

from ..errors import OltplabError, UsageError
from .iolatency import IoLatency
from .sources import NAN, Source
from .sources.cpu import CpuSource
from .sources.disks import DiskSource
from .sources.memory import MemorySource
from .sources.network import NetworkSource
from .sources.power import PowerSource
from .spool import RowSpool

TIMELINE_FORMAT = "oltplab-timeline"
TIMELINE_VERSION = 1
MIN_INTERVAL_S = 0.05
MAX_INTERVAL_S = 3600.0
MAX_ERRORS = 200  # distinct error entries kept; repeats are counted
FINAL_MIN_S = 0.1  # stop() takes a last sample after min(this, interval / 4) or more
START_TIMEOUT_S = 60.0  # opening sources: connecting, probing power meters
_JSON_TYPES = (str, int, float, bool, type(None), list, dict)


def wall_grid(interval_ns: int, mono_ns: int, unix_ns: int) -> int:
    """The monotonic instant of the last whole multiple of the interval on the wall clock at
    or before ``mono_ns``, given that the wall clock read ``unix_ns`` at ``mono_ns``."""
    return mono_ns - unix_ns % interval_ns


def clock_pair(wall_clock=time.time_ns) -> tuple[int, int]:
    """The monotonic and the wall clock at one instant: the wall clock read between two
    readings of the monotonic one, placed at their midpoint."""
    a = time.monotonic_ns()
    w = wall_clock()
    b = time.monotonic_ns()
    return (a + b) // 2, w


def next_due(t0_ns: int, interval_ns: int, last_ns: int, boundaries: list[int]) -> int:
    """When the next sample is due: the grid tick at least half an interval after the last
    sample, or the earliest pending mark if it comes before that tick plus half an interval."""
    half = interval_ns // 2
    k = -(-(last_ns + half - t0_ns) // interval_ns)
    tick = t0_ns + k * interval_ns
    if boundaries and boundaries[0] < tick + half:
        return boundaries[0]
    return tick


def _compact(x: float):
    """A JSON value for a sample: null for NaN, six significant digits otherwise."""
    if x != x or math.isinf(x):
        return None
    return float(f"{x:.6g}")


@dataclass(frozen=True)
class Timeline:
    """What a sampler recorded: columns of samples, marks, and what was measured.

    ``columns["t_ns"][i]`` ends sample i, which began at ``columns["t_ns"][i-1]`` (``t0_ns``
    for the first); ``columns["dt_s"][i]`` is its length; ``columns["t_unix_ns"][i]`` is the
    wall clock (UTC, ns since the epoch) read as it was taken. Every other column holds one value
    per sample, null where nothing was measured. ``units`` names each column's unit.
    """

    interval_s: float
    t0_ns: int | None = None
    t0_unix: float | None = None  # wall clock at t0, for display only
    end_ns: int | None = None
    columns: dict[str, list] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    devices: dict[str, dict] = field(default_factory=dict)
    roles: dict[str, dict] = field(default_factory=dict)
    interfaces: list[str] = field(default_factory=list)
    marks: list[dict] = field(default_factory=list)
    power: dict = field(default_factory=dict)
    database: dict | None = None
    errors: list[dict] = field(default_factory=list)
    overhead: dict = field(default_factory=dict)
    io_latency: dict = field(default_factory=dict)  # per-IO latencies per step (iolatency.py)
    # other hosts' timelines, placed on this one's clocks (stream.py): name -> {clock, timeline}
    hosts: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.columns.get("t_ns", ()))

    def column(self, name: str) -> list | None:
        return self.columns.get(name)

    def to_dict(self) -> dict:
        return {"format": TIMELINE_FORMAT, "version": TIMELINE_VERSION,
                "interval_s": self.interval_s, "t0_ns": self.t0_ns, "t0_unix": self.t0_unix,
                "end_ns": self.end_ns, "columns": self.columns, "units": self.units,
                "devices": self.devices, "roles": self.roles, "interfaces": self.interfaces,
                "marks": self.marks, "power": self.power, "database": self.database,
                "errors": self.errors, "overhead": self.overhead, "io_latency": self.io_latency,
                "hosts": self.hosts}

    @classmethod
    def from_dict(cls, data: dict) -> "Timeline":
        if data.get("format") != TIMELINE_FORMAT:
            raise OltplabError("not a telemetry timeline (format is "
                               f"{data.get('format')!r})")
        if data.get("version") != TIMELINE_VERSION:
            raise OltplabError(f"telemetry timeline version {data.get('version')!r} is not "
                               f"supported (this oltplab reads version {TIMELINE_VERSION})")
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})


def _database_source(dsn: str | None, engine: str | None, maintenance, **kw) -> Source | None:
    """The engine's telemetry source for ``dsn`` (None without a DSN)."""
    if not dsn:
        return None
    from .. import engines
    if maintenance is not ...:
        kw["maintenance_db"] = maintenance
    return engines.get(engine or engines.engine_of_dsn(dsn)).telemetry_source(dsn, **kw)


class Sampler:
    """Samples CPU, disks, memory, network, the database and power in a thread of its own.

    ``paths`` maps roles to paths ({"datadir": p, "waldir": q}); the devices behind them and
    every member disk of their storage are found and always sampled; ``spares`` ({role: [device
    names]}) adds devices that may join a role's storage during the run. ``devices`` is "auto" or a list of device names; ``interfaces``
    likewise. ``db_dsn`` adds the database's counters, the telemetry source of ``db_engine``
    (default: the engine the DSN's scheme names), read from ``db_maintenance`` (the server's
    maintenance database; None: the DSN's own; default: the engine's choice) when the server
    lets the sampler connect there; ``database`` is that source. ``power`` is a spec string (see
    sources/power.py), a plugin, or a list of them. Bad names raise UsageError here, before
    anything starts.
    """

    def __init__(self, interval: float = 1.0, *, paths: dict | None = None, devices="auto",
                 interfaces="auto", db_dsn: str | None = None, power="auto",
                 proc_root: str = "/proc", sys_root: str = "/sys",
                 extra_sources: list[Source] | None = None,
                 db_maintenance: str | None = ..., db_engine: str | None = None,
                 io_latency: str = "off", wall_clock=time.time_ns,
                 spares: dict | None = None):
        try:
            interval = float(interval)
        except (TypeError, ValueError):
            raise UsageError(f"--sample-interval: {interval!r} is not a number of "
                             "seconds") from None
        if not MIN_INTERVAL_S <= interval <= MAX_INTERVAL_S:
            raise UsageError(f"--sample-interval: {interval:g} s is outside "
                             f"{MIN_INTERVAL_S:g} s .. {MAX_INTERVAL_S:g} s")
        self.interval = interval
        self._wall = wall_clock  # ns since the epoch (a host whose clock is off, in tests)
        self._interval_ns = int(round(interval * 1e9))
        self._disks = DiskSource(devices, paths, proc_root, sys_root, spares)
        self._power = PowerSource(power, interval)
        self._db = _database_source(db_dsn, db_engine, db_maintenance,
                                    query_timeout=min(2.0, max(0.5, interval)))
        self._sources: list[Source] = [CpuSource(proc_root), self._disks,
                                       MemorySource(proc_root),
                                       NetworkSource(interfaces, proc_root)]
        if self._db is not None:
            self._sources.append(self._db)
        self._sources.append(self._power)
        self._sources.extend(extra_sources or [])
        self._cond = threading.Condition()
        self._lock = threading.Lock()  # the columns, the errors
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopping = False
        self._boundaries: list[int] = []
        self._marks: list[dict] = []
        self._errors: list[dict] = []
        # each source and the columns kept of it (none for a source left out)
        self._layout: list[tuple[Source, list[str]]] = []
        # the samples (t_ns, t_unix_ns, dt_s, then every kept column) in a file as they are
        # taken, read back by _build: the memory held does not grow with the run's length
        self._rows: RowSpool | None = None
        self._latest: tuple[int, list[float]] | None = None  # the last sample, for latest()
        self._grid0 = 0  # the monotonic origin of the sampling grid (on the wall clock's)
        self._t0: int | None = None
        self._t0_unix: float | None = None
        self._last = 0
        self._cpu_ns = 0
        self._opened: dict[int, bool] = {}
        self._timeline: Timeline | None = None
        self._iolat = IoLatency(io_latency, devices=self._disks.devices)

    # -- public ---------------------------------------------------------------------------------
    def start(self) -> "Sampler":
        """Open the sources, take the baseline reading, and start sampling."""
        if self._thread is not None:
            raise OltplabError("the sampler was started already")
        self._iolat.start()
        if self._iolat.mode == "on" and self._iolat.reason:
            raise UsageError(f"--io-latency on: {self._iolat.reason}")
        self._thread = threading.Thread(target=self._run, name="oltplab-sampler", daemon=True)
        self._thread.start()
        self._ready.wait(START_TIMEOUT_S)
        return self

    def mark(self, name: str, t_ns: int | None = None, **attrs) -> dict:
        """Record a named instant (now, or ``t_ns`` on the monotonic clock) with JSON-ready
        ``attrs``. A sample is taken at that instant unless it is already behind the last one."""
        t = time.monotonic_ns() if t_ns is None else int(t_ns)
        entry = {"name": str(name), "t_ns": t,
                 **{str(k): v if isinstance(v, _JSON_TYPES) else str(v) for k, v in attrs.items()}}
        self._iolat.mark(entry["name"], t, entry)
        with self._cond:
            self._marks.append(entry)
            if self._t0 is not None and not self._stopping and t > self._last:
                heapq.heappush(self._boundaries, t)
                self._cond.notify()
        return dict(entry)

    def stop(self) -> Timeline:
        """Take a last sample (unless the previous one is very recent), close the sources,
        and return the timeline."""
        if self._timeline is not None:
            return self._timeline
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None and self._thread.ident is not None:  # started (Ctrl-C can
            self._thread.join(timeout=10.0)  # land between the thread's creation and its start)
        io_latency = self._iolat.stop()
        self._timeline = dataclasses.replace(self._build(), io_latency=io_latency)
        if self._rows is not None and not (self._thread and self._thread.is_alive()):
            self._rows.close()  # the timeline holds the samples now
        return self._timeline

    def latest(self) -> tuple[int, dict[str, float]] | None:
        """The last sample taken: when it ended (monotonic ns) and each column's value (NaN
        where nothing was measured); None before the first. For readers in other threads
        (the live metrics endpoint): it copies one value per column under the lock."""
        with self._lock:
            if self._latest is None:
                return None
            t, values = self._latest
            return t, dict(zip((n for _, names in self._layout for n in names), values))

    @property
    def database(self) -> Source | None:
        return self._db

    @property
    def started(self) -> bool:
        return self._thread is not None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stopping

    def __enter__(self) -> "Sampler":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the thread -----------------------------------------------------------------------------
    def _error(self, source: str, text: str, t_ns: int | None = None) -> None:
        t = time.monotonic_ns() if t_ns is None else t_ns
        with self._lock:
            for e in reversed(self._errors):
                if e["source"] == source:
                    if e["error"] == text:
                        e["repeats"] = e.get("repeats", 0) + 1
                        e["last_t_ns"] = t
                        return
                    break
            if len(self._errors) < MAX_ERRORS:
                self._errors.append({"t_ns": t, "source": source, "error": text})

    def _drain(self, src: Source, t_ns: int) -> None:
        while src.errors:
            self._error(src.name, src.errors.pop(0), t_ns)

    def _run(self) -> None:
        try:
            self._open()
            t = time.monotonic_ns()
            for src, _ in self._layout:
                self._read(src, t)
            self._t0 = self._last = t
            mono, unix = clock_pair(self._wall)
            self._t0_unix = (unix - (mono - t)) / 1e9
            self._grid0 = wall_grid(self._interval_ns, mono, unix)
            cpu0 = time.thread_time_ns()
            self._ready.set()
            try:
                self._loop()
            finally:
                self._cpu_ns = time.thread_time_ns() - cpu0
        except BaseException as e:  # the thread never raises
            self._error("sampler", f"{type(e).__name__}: {e}")
        finally:
            self._ready.set()
            for src in self._sources:
                try:
                    src.close()
                except Exception:
                    pass

    def _open(self) -> None:
        seen: set[str] = set()
        for src in self._sources:
            try:
                src.open()
                self._opened[id(src)] = True
            except Exception as e:
                self._opened[id(src)] = False
                self._error(src.name, f"cannot open: {type(e).__name__}: {e}")
            self._drain(src, time.monotonic_ns())
            taken = [c for c in src.columns if c in seen]
            if taken:
                self._opened[id(src)] = False
                self._error(src.name, f"left out: column {taken[0]} is taken by another source")
                self._layout.append((src, []))
                continue
            seen.update(src.columns)
            self._layout.append((src, list(src.columns)))
        self._rows = RowSpool("qqd" + "d" * sum(len(names) for _, names in self._layout))

    def _read(self, src: Source, t_ns: int) -> list[float]:
        n = len(src.columns)
        if not self._opened.get(id(src)):
            return [NAN] * n
        try:
            values = src.read(t_ns)
            if len(values) != n:
                raise ValueError(f"{len(values)} values for {n} columns")
        except Exception as e:
            self._error(src.name, f"{type(e).__name__}: {e}", t_ns)
            values = [NAN] * n
        self._drain(src, t_ns)
        return values

    def _loop(self) -> None:
        while True:
            with self._cond:
                while True:
                    now = time.monotonic_ns()
                    if self._stopping:
                        break
                    due = next_due(self._grid0, self._interval_ns, self._last,
                                   self._boundaries)
                    if due <= now:
                        break
                    self._cond.wait((due - now) / 1e9)
                stopping = self._stopping
            t = time.monotonic_ns()
            if stopping:
                if t - self._last >= min(FINAL_MIN_S * 1e9, self._interval_ns / 4):
                    self._sample(t)
                return
            self._sample(t)
            with self._cond:
                while self._boundaries and self._boundaries[0] <= t:
                    heapq.heappop(self._boundaries)

    def _sample(self, t: int) -> None:
        unix = self._wall() - (time.monotonic_ns() - t)
        rows = [self._read(src, t) for src, _ in self._layout]
        values = [v for (_, names), row in zip(self._layout, rows) for v in row[:len(names)]]
        with self._lock:
            self._rows.append((t, unix, (t - self._last) / 1e9, *values))
            self._latest = (t, values)
        self._last = t
        self._spool_error()

    def _spool_error(self) -> None:
        if self._rows is not None and self._rows.error:
            text, self._rows.error = self._rows.error, None
            self._error("sampler", text)

    # -- the result -----------------------------------------------------------------------------
    def _build(self) -> Timeline:
        with self._lock:
            kept = [(src, name) for src, names in self._layout for name in names]
            cells = (self._rows.columns() if self._rows is not None
                     else [array("q"), array("q")] + [array("d") for _ in range(len(kept) + 1)])
        self._spool_error()
        with self._lock:
            columns: dict[str, list] = {"t_ns": list(cells[0]), "t_unix_ns": list(cells[1]),
                                        "dt_s": [_compact(v) for v in cells[2]]}
            units = {"t_ns": "ns (monotonic)", "t_unix_ns": "ns (wall clock, UTC)", "dt_s": "s"}
            for (src, name), col in zip(kept, cells[3:]):
                columns[name] = [_compact(v) for v in col]
                units[name] = src.units.get(name, "")
            errors = [dict(e) for e in self._errors]
        del cells
        n = len(columns["t_ns"])
        elapsed = (self._last - self._t0) if self._t0 is not None else 0
        db = None
        if self._db is not None:
            db = {"available": any(v is not None for v in columns.get("db.commits_s", [])),
                  **self._db.describe()}
        interfaces = list(getattr(self._sources[3], "interfaces", []))
        return Timeline(
            interval_s=self.interval, t0_ns=self._t0, t0_unix=self._t0_unix,
            end_ns=self._last if self._t0 is not None else None,
            columns=columns, units=units, devices=self._disks.describe(),
            roles={k: dict(v) for k, v in self._disks.roles.items()},
            interfaces=interfaces, marks=[dict(m) for m in self._marks],
            power=self._power.describe(), database=db, errors=errors,
            overhead={"samples": n, "elapsed_s": round(elapsed / 1e9, 3),
                      "cpu_s": round(self._cpu_ns / 1e9, 6),
                      "pct_of_core": round(100.0 * self._cpu_ns / elapsed, 4) if elapsed else None,
                      "measured": "CPU time of the sampling thread"})

"""Per-step figures derived from a telemetry timeline: pure functions, no I/O.

Steps come from the timeline's marks: ``step_start`` (attributes ``step``, ``users``) opens a
step, ``ramp_end`` ends its ramp-up, ``measure_end`` ends its measurement. The measured window
is [ramp_end, measure_end] (ramp-up excluded); without ramp_end it starts at step_start;
without measure_end (an interrupted step) it ends at the next step or the timeline's end.

A sample belongs to a window when the middle of its interval lies inside. The sampler puts a
sample at each mark, so windows normally cover whole samples exactly. Then:

- rates and levels (IOPS, MB/s, CPU %, watts) are time-weighted means over the window, which
  for a counter equals its change over the window divided by the window's length;
- an average latency is weighted by I/O count: Δms / Δios over the window, as iostat would
  print for one interval spanning the window;
- "p99" and "max" latencies are taken over the per-interval values (per-second ones at the
  default 1 s interval), counting only intervals at least half the nominal length that had
  I/O. They are percentiles of interval averages, not of individual I/Os: a device-level
  percentile of single I/Os needs per-I/O data (fio's own percentiles);
- volumes (GiB read and written, checkpoints, energy) are sums of rate x interval.

The byte figures of devices and of the database are in MiB (2**20 bytes) and GiB (2**30
bytes), as iostat -m counts; their keys keep the names older records have (``read_mb_s``,
``read_gb``, ``wal_mb_s`` ...), and their labels say MiB and GiB. ``FIGURES`` holds every
figure's label; ``label(name, interval_s)`` fills in the interval.

The datastore (``datastore``): the figures above over every member disk of the storage that
holds the data directory (and the WAL directory, when it is elsewhere): the devices the
sampler found behind those paths (sources/disks.py ``member_disks``: every device of a btrfs,
the disks under md and device-mapper), and the datastore's spares, which a replacement during
the run makes members. Per interval the members' IOPS, MiB/s, flushes and
queue sizes are summed and their awaits weighted by their I/Os, so its averages are what all
of them served together; its %util is the members' mean. A member with no value in an
interval (it left the file system and its device went away) counts as having served nothing.

The front end beside the back end (``io``): the I/Os the database asked of the file system
(``db.front_reads_s``, ``db.front_writes_s``: see each engine's telemetry module for what
they count) beside the I/Os all the datastore's members served; ``amplification`` is back-end
writes / front-end writes, the write amplification of the storage policy (about 2 for a
mirror, more with the file system's own metadata and journal; writes merged by the page cache
and the block layer pull it down). It is null where either side is unknown or the database
wrote nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .sampler import Timeline
from .sources.disks import METRICS
from .sources.disks import column as disk_column
from .sources.network import column as net_column

FIGURES: dict[str, str] = {
    "tpm_per_user": "TPM per virtual user",
    "nopm_per_user": "NOPM per virtual user",
    "cpu_idle_pct": "CPU idle, average (%)",
    "cpu_iowait_pct": "CPU iowait, average (%; unreliable on busy CPUs, read with idle)",
    "cpu_user_pct": "CPU user, average (%)",
    "cpu_system_pct": "CPU system, average (%)",
    "cpu_steal_pct": "CPU steal, average (%)",
    "read_iops": "reads per second, average",
    "write_iops": "writes per second, average",
    "iops": "I/Os per second (reads + writes), average",
    "read_mb_s": "read MiB/s, average (MiB = 2^20 bytes)",
    "write_mb_s": "write MiB/s, average (MiB = 2^20 bytes)",
    "mb_s": "MiB/s read + written, average (MiB = 2^20 bytes)",
    "r_await_ms": "read latency r_await, average over all reads (ms)",
    "w_await_ms": "write latency w_await, average over all writes (ms)",
    "await_ms": "latency, average over all reads and writes (ms)",
    "r_await_p99_ms": "read latency, 99th percentile of the {per} r_await values (ms)",
    "w_await_p99_ms": "write latency, 99th percentile of the {per} w_await values (ms)",
    "await_p99_ms": "latency, 99th percentile of the {per} average latencies (ms)",
    "r_await_max_ms": "read latency, highest {per} r_await (ms)",
    "w_await_max_ms": "write latency, highest {per} w_await (ms)",
    "await_max_ms": "latency, highest {per} average (ms)",
    "read_gb": "GiB read (GiB = 2^30 bytes)",
    "written_gb": "GiB written (GiB = 2^30 bytes)",
    "util_pct": "%util, average (time with I/O in flight; not saturation on parallel devices)",
    "aqu_sz": "average queue size aqu-sz (requests)",
    "flushes_s": "flush requests per second, average",
    "rx_bytes_s": "bytes received per second, average",
    "tx_bytes_s": "bytes sent per second, average",
    "used_bytes": "memory used, average (bytes)",
    "used_max_bytes": "memory used, highest (bytes)",
    "cached_bytes": "page cache and buffers, average (bytes)",
    "dirty_bytes": "dirty and writeback memory, average (bytes)",
    "commits_s": "server commits per second, average",
    "rollbacks_s": "server rollbacks per second, average",
    "xacts_per_min": "server transactions (commits + rollbacks) per minute",
    "blks_read_s": "blocks read per second (not in shared_buffers), average",
    "blks_hit_s": "blocks found in shared_buffers per second, average",
    "hit_ratio": "shared_buffers hit ratio (hits / (hits + reads))",
    "wal_mb_s": "WAL MiB/s, average (MiB = 2^20 bytes)",
    "checkpoints": "checkpoints completed in the window",
    "sampler_xacts": "transactions of the sampler's own queries in the window (in commits)",
    "innodb_data_writes_s": "InnoDB data write requests per second, average",
    "innodb_data_written_mb_s": "InnoDB data written MiB/s, average (MiB = 2^20 bytes)",
    "front_read_iops": "reads the database issued per second, average (front end)",
    "front_write_iops": "writes the database issued per second, average (front end)",
    "front_read_mib_s": "MiB/s the database read, average (front end; MiB = 2^20 bytes)",
    "front_write_mib_s": "MiB/s the database wrote, average (front end; MiB = 2^20 bytes)",
    "back_read_iops": "reads per second all the datastore's devices served (back end)",
    "back_write_iops": "writes per second all the datastore's devices served (back end)",
    "amplification": "write amplification: back-end writes / front-end writes",
    "reads_per_write": "reads per write on the datastore's devices",
    "read_kib": "average read in KiB (2^10 bytes) on the datastore's devices",
    "write_kib": "average write in KiB (2^10 bytes) on the datastore's devices",
    "row_lock_waits": "InnoDB row lock waits in the window",
    "watts": "power, average (W)",
    "energy_j": "energy (J)",
    "coverage": "share of the window with a power reading",
    "orders_per_watt": "orders per watt (NOPM / average watts)",
}


def label(name: str, interval_s: float = 1.0) -> str:
    """The label of a figure, with the sampling interval filled in."""
    per = "per-second" if interval_s == 1 else f"per-{interval_s:g} s"
    return FIGURES[name].replace("{per}", per)


@dataclass(frozen=True)
class StepWindow:
    """One step of the run on the timeline; [ramp_end_ns, end_ns] is its measured window."""

    step: int
    users: int | None
    start_ns: int
    ramp_end_ns: int
    end_ns: int
    complete: bool  # measure_end was marked and reached before the sampler stopped
    attrs: dict = field(default_factory=dict)


def as_timeline(timeline) -> Timeline:
    return timeline if isinstance(timeline, Timeline) else Timeline.from_dict(timeline)


def step_windows(timeline) -> list[StepWindow]:
    """The steps marked on ``timeline`` (a Timeline or its dict), in order."""
    tl = as_timeline(timeline)
    if tl.t0_ns is None:
        return []
    last = tl.end_ns if tl.end_ns is not None else tl.t0_ns
    steps: list[dict] = []
    for m in sorted(tl.marks, key=lambda m: m["t_ns"]):
        name = m.get("name")
        if name == "step_start":
            attrs = {k: v for k, v in m.items() if k not in ("name", "t_ns")}
            steps.append({"start": m["t_ns"], "ramp": None, "end": None, "attrs": attrs})
            continue
        if name not in ("ramp_end", "measure_end") or not steps:
            continue
        target = steps[-1]
        if "step" in m:
            target = next((s for s in reversed(steps) if s["attrs"].get("step") == m["step"]),
                          target)
        target["ramp" if name == "ramp_end" else "end"] = m["t_ns"]
    out = []
    for i, s in enumerate(steps):
        following = steps[i + 1]["start"] if i + 1 < len(steps) else last
        ramp = s["ramp"] if s["ramp"] is not None else s["start"]
        end = s["end"]
        complete = end is not None and end <= min(following, last)
        end = min(end if end is not None else following, following, last)
        users = s["attrs"].get("users")
        out.append(StepWindow(step=int(s["attrs"].get("step", i)),
                              users=int(users) if users is not None else None,
                              start_ns=s["start"], ramp_end_ns=min(ramp, end), end_ns=end,
                              complete=complete, attrs=s["attrs"]))
    return out


def sample_indices(timeline, start_ns: int, end_ns: int) -> list[int]:
    """Samples whose interval's middle lies in [start_ns, end_ns)."""
    tl = as_timeline(timeline)
    t = tl.columns.get("t_ns") or []
    out, begin = [], tl.t0_ns
    for i, end in enumerate(t):
        mid = (begin + end) / 2
        if start_ns <= mid < end_ns:
            out.append(i)
        begin = end
    return out


def percentile(values, q: float) -> float | None:
    """The nearest-rank ``q``-th percentile (the smallest value with at least q% at or below)."""
    data = sorted(v for v in values if v is not None)
    if not data:
        return None
    rank = max(1, math.ceil(q / 100.0 * len(data)))
    return data[rank - 1]


# -- helpers over one window ------------------------------------------------------------------
class _Window:
    def __init__(self, tl: Timeline, idx: list[int]):
        self.tl, self.idx = tl, idx
        dt = tl.columns.get("dt_s") or []
        self.dt = [dt[i] or 0.0 for i in idx]
        self.full = [d >= tl.interval_s / 2 for d in self.dt]  # long enough for p99 and max

    def values(self, name: str) -> list:
        col = self.tl.columns.get(name)
        return [col[i] for i in self.idx] if col is not None else [None] * len(self.idx)

    def mean(self, name: str) -> float | None:
        return self.mean_of(self.values(name))

    def mean_of(self, values: list) -> float | None:
        num = den = 0.0
        for v, d in zip(values, self.dt):
            if v is not None:
                num += v * d
                den += d
        return num / den if den > 0 else None

    def total(self, name: str) -> float | None:
        return self.total_of(self.values(name))

    def total_of(self, values: list) -> float | None:
        vals = [(v, d) for v, d in zip(values, self.dt) if v is not None]
        return sum(v * d for v, d in vals) if vals else None

    def weighted(self, values: list, weights: list) -> float | None:
        num = den = 0.0
        for v, w, d in zip(values, weights, self.dt):
            if v is not None and w:
                num += v * w * d
                den += w * d
        return num / den if den > 0 else None

    def full_only(self, values: list) -> list:
        return [v for v, ok in zip(values, self.full) if ok and v is not None]


def _add(a, b):
    return None if a is None or b is None else a + b


def _io_weighted(pairs) -> float | None:
    """A latency over several sets of I/Os: sum(await * rate) / sum(rate), over the pairs
    (await, rate) that have I/O; None when none has."""
    num = den = 0.0
    for a, s in pairs:
        if a is not None and s:
            num += a * s
            den += s
    return num / den if den > 0 else None


def _combined(ra, rs, wa, ws):
    """One interval's latency over reads and writes: (r_await*r_s + w_await*w_s)/(r_s + w_s)."""
    return _io_weighted(((ra, rs), (wa, ws)))


def series_figures(w: _Window, values) -> dict:
    """The device figures of one device over the window; ``values(metric)`` gives the
    window's per-interval values of a sources/disks.py metric (r_s, r_await ...)."""
    rs, ws = values("r_s"), values("w_s")
    ra, wa = values("r_await"), values("w_await")
    both = [_combined(*v) for v in zip(ra, rs, wa, ws)]
    ios = [_add(r, x) for r, x in zip(rs, ws)]
    read_mb, write_mb = w.total_of(values("rMB_s")), w.total_of(values("wMB_s"))
    f = {
        "read_iops": w.mean_of(rs), "write_iops": w.mean_of(ws),
        "read_mb_s": w.mean_of(values("rMB_s")), "write_mb_s": w.mean_of(values("wMB_s")),
        "r_await_ms": w.weighted(ra, rs), "w_await_ms": w.weighted(wa, ws),
        "await_ms": w.weighted(both, ios),
        "r_await_p99_ms": percentile(w.full_only(ra), 99),
        "w_await_p99_ms": percentile(w.full_only(wa), 99),
        "await_p99_ms": percentile(w.full_only(both), 99),
        "r_await_max_ms": max(w.full_only(ra), default=None),
        "w_await_max_ms": max(w.full_only(wa), default=None),
        "await_max_ms": max(w.full_only(both), default=None),
        "read_gb": read_mb / 1024 if read_mb is not None else None,
        "written_gb": write_mb / 1024 if write_mb is not None else None,
        "util_pct": w.mean_of(values("util")), "aqu_sz": w.mean_of(values("aqu_sz")),
        "flushes_s": w.mean_of(values("f_s")),
    }
    f["iops"] = _add(f["read_iops"], f["write_iops"])
    f["mb_s"] = _add(f["read_mb_s"], f["write_mb_s"])
    return f


def device_figures(w: _Window, device: str) -> dict:
    return series_figures(w, lambda m: w.values(disk_column(device, m)))


SUMMED = ("r_s", "w_s", "rMB_s", "wMB_s", "aqu_sz", "f_s")
DATA_ROLES = ("datadir", "waldir", "target")  # the paths whose storage is under test


def members_series(columns: dict[str, list[list]]) -> dict[str, list]:
    """Several devices' per-interval values as one device's: ``columns[metric]`` holds one
    list of values per device; rates and queue sizes are summed, awaits weighted by the I/Os
    they average, %util averaged. A device without a value in an interval counts as having
    served nothing then; an interval where none has a value is null."""
    out: dict[str, list] = {m: [] for m in columns}
    intervals = len(columns["r_s"][0]) if columns.get("r_s") else 0
    for i in range(intervals):
        at = {m: [per_device[i] for per_device in lists] for m, lists in columns.items()}
        for m in SUMMED:
            vals = [v for v in at[m] if v is not None]
            out[m].append(sum(vals) if vals else None)
        out["r_await"].append(_io_weighted(zip(at["r_await"], at["r_s"])))
        out["w_await"].append(_io_weighted(zip(at["w_await"], at["w_s"])))
        util = [v for v in at["util"] if v is not None]
        out["util"].append(sum(util) / len(util) if util else None)
    return out


def data_sharing(tl: Timeline) -> dict | None:
    """What else the disks under the data paths serve (sources/disks.py ``path_device``'s
    ``shared``, over the data roles): ``root`` and the ``others`` mount points; None for a
    timeline that does not say."""
    roles = tl.roles or {}
    said = [r["shared"] for r in (roles.get(role) or {} for role in DATA_ROLES)
            if r.get("device") and isinstance(r.get("shared"), dict)]
    if not said:
        return None
    return {"root": any(x.get("root") for x in said),
            "others": list(dict.fromkeys(m for x in said for m in x.get("others") or ()))}


def sharing_note(steps) -> str | None:
    """The sentence a run's output and report carry when the devices it counts as its
    datastore also serve the root file system or other file systems (the first of ``steps``'
    figures that says so: each a step's telemetry figures), whose I/O they count too."""
    for figures in steps:
        store = (figures or {}).get("datastore") or {}
        shared = store.get("shared") or {}
        what = [*(["the root file system (/)"] if shared.get("root") else []),
                *(f"the file system at {m}" for m in shared.get("others") or ())]
        if what:
            return (f"The datastore's devices ({', '.join(store.get('devices') or ())}) also "
                    f"serve {', '.join(what)}: their I/O figures count every process's I/O "
                    "there, not the database's alone.")
    return None


def data_members(tl: Timeline) -> tuple[list[str], dict[str, str]]:
    """(the member disks behind the data paths that the timeline sampled, {role: path})."""
    names: list[str] = []
    paths = {}
    for role in DATA_ROLES:
        r = (tl.roles or {}).get(role) or {}
        if not r.get("device"):
            continue
        paths[role] = r.get("path")
        # older timelines name one device; a datastore's spares may join during the run
        for name in [*(r.get("members") or [r["device"]]), *r.get("spares", ())]:
            if name in tl.devices and name not in names:
                names.append(name)
    return names, paths


def datastore_figures(w: _Window) -> dict | None:
    """The device figures over every member disk of the storage under the data (see the
    module's docstring), with the members named and what else they serve (``shared``:
    data_sharing); None when no data path has a device."""
    names, paths = data_members(w.tl)
    if not names:
        return None
    series = members_series({m: [w.values(disk_column(d, m)) for d in names]
                             for m in METRICS})
    return {"devices": names, "paths": paths, "shared": data_sharing(w.tl),
            **series_figures(w, lambda m: series[m])}


def front_figures(w: _Window) -> dict:
    """The I/Os the database issued (its telemetry's ``db.front_*`` columns), when the
    timeline has them."""
    if "db.front_reads_s" not in w.tl.columns:
        return {}
    read, written = w.mean("db.front_read_bytes_s"), w.mean("db.front_written_bytes_s")
    return {"front_read_iops": w.mean("db.front_reads_s"),
            "front_write_iops": w.mean("db.front_writes_s"),
            "front_read_mib_s": read / 2**20 if read is not None else None,
            "front_write_mib_s": written / 2**20 if written is not None else None}


IO_KEYS = ("front_read_iops", "front_write_iops", "back_read_iops", "back_write_iops",
           "amplification")
#: The storage view a paper prints, from all the datastore's devices together: reads and
#: writes per second, reads per write, the average read and write in KiB (2^10 bytes) and
#: the average and p99 latency of their I/Os.
STORAGE_KEYS = ("read_iops", "write_iops", "reads_per_write", "read_kib", "write_kib",
                "await_ms", "await_p99_ms")


def bytes_amplification(figures: dict, issued: dict | None = None) -> float | None:
    """Bytes all the datastore's members wrote / bytes the database wrote (a step's telemetry
    figures; ``issued``: fio's own, {"write_mib_s"}, for a step no database drove); None where
    a side is unknown or the front end wrote nothing."""
    front = (figures.get("db") or {}).get("front_write_mib_s")
    if front is None and issued:
        front = issued.get("write_mib_s")
    back = (figures.get("datastore") or {}).get("write_mb_s")
    return back / front if back is not None and front else None


def io_figures(figures: dict, issued: dict | None = None) -> dict:
    """A step's front end beside its back end, from its telemetry figures: the I/Os the
    database issued, those all the datastore's members served, and the write amplification
    (back-end writes / front-end writes; None where a side is unknown or nothing was
    written by the database). ``issued`` is the front end of a step no database drove:
    fio's own count of the I/Os it issued ({"read_iops", "write_iops"})."""
    db = figures.get("db") or {}
    if issued and db.get("front_write_iops") is None:
        db = {"front_read_iops": issued.get("read_iops"),
              "front_write_iops": issued.get("write_iops")}
    store = figures.get("datastore") or {}
    front_w, back_w = db.get("front_write_iops"), store.get("write_iops")
    return dict(zip(IO_KEYS, (
        db.get("front_read_iops"), front_w, store.get("read_iops"), back_w,
        back_w / front_w if back_w is not None and front_w else None))) | storage_view(store)


def storage_view(store: dict) -> dict:
    """``STORAGE_KEYS`` of a step's datastore figures (every member device's I/Os summed;
    read_mb_s in MiB/s): None where a figure is unknown or has no I/O to average over."""
    reads, writes = store.get("read_iops"), store.get("write_iops")

    def kib(mib_s, iops):
        return mib_s * 1024 / iops if mib_s is not None and iops else None

    return dict(zip(STORAGE_KEYS, (
        reads, writes, reads / writes if reads is not None and writes else None,
        kib(store.get("read_mb_s"), reads), kib(store.get("write_mb_s"), writes),
        store.get("await_ms"), store.get("await_p99_ms"))))


def innodb_figures(w: _Window) -> dict:
    """MariaDB's InnoDB figures, present only in a timeline that has their columns; its
    sampler's status query commits nothing, so none of the commits are the sampler's."""
    if "db.innodb_data_writes_s" not in w.tl.columns:
        return {}
    written = w.mean("db.innodb_data_written_s")
    waits = w.total("db.innodb_row_lock_waits_s")
    return {"innodb_data_writes_s": w.mean("db.innodb_data_writes_s"),
            "innodb_data_written_mb_s": written / 2**20 if written is not None else None,
            "row_lock_waits": round(waits) if waits is not None else None,
            "sampler_xacts": 0}


def window_figures(timeline, start_ns: int, end_ns: int) -> dict:
    """Host, device, database and power figures over [start_ns, end_ns)."""
    tl = as_timeline(timeline)
    w = _Window(tl, sample_indices(tl, start_ns, end_ns))
    commits, rollbacks = w.mean("db.commits_s"), w.mean("db.rollbacks_s")
    hits, reads = w.total("db.blks_hit_s"), w.total("db.blks_read_s")
    wal = w.mean("db.wal_bytes_s")
    checkpoints = w.total("db.checkpoints_s")
    watts = w.mean("power.watts")
    covered = sum(d for v, d in zip(w.values("power.watts"), w.dt) if v is not None)
    seconds = sum(w.dt)
    used = [v for v in w.values("mem.used_bytes") if v is not None]
    return {
        "start_ns": start_ns, "end_ns": end_ns, "seconds": seconds, "samples": len(w.idx),
        "cpu": {f"cpu_{k}_pct": w.mean(f"cpu.{k}")
                for k in ("idle", "iowait", "user", "system", "steal")},
        "devices": {dev: device_figures(w, dev) for dev in tl.devices},
        "datastore": datastore_figures(w),
        "memory": {"used_bytes": w.mean("mem.used_bytes"),
                   "used_max_bytes": max(used, default=None),
                   "cached_bytes": w.mean("mem.cached_bytes"),
                   "dirty_bytes": w.mean("mem.dirty_bytes")},
        "network": {i: {"rx_bytes_s": w.mean(net_column(i, "rx_bytes_s")),
                        "tx_bytes_s": w.mean(net_column(i, "tx_bytes_s"))}
                    for i in tl.interfaces},
        "db": None if tl.database is None else {
            "commits_s": commits, "rollbacks_s": rollbacks,
            "xacts_per_min": (commits + rollbacks) * 60 if commits is not None
            and rollbacks is not None else None,
            "blks_read_s": w.mean("db.blks_read_s"), "blks_hit_s": w.mean("db.blks_hit_s"),
            "hit_ratio": hits / (hits + reads) if hits is not None and reads is not None
            and hits + reads > 0 else None,
            "wal_mb_s": wal / 2**20 if wal is not None else None,
            "checkpoints": round(checkpoints) if checkpoints is not None else None,
            "sampler_xacts": sum(v is not None for v in w.values("db.commits_s")),
            **innodb_figures(w), **front_figures(w)},
        "power": {"available": bool(tl.power.get("available")) and watts is not None,
                  "source": tl.power.get("source"), "reason": tl.power.get("reason"),
                  "watts": watts,
                  "energy_j": watts * covered if watts is not None else None,
                  "coverage": covered / seconds if seconds > 0 else None},
    }


def step_figures(timeline, window: StepWindow, *, tpm: float | None = None,
                 nopm: float | None = None, users: int | None = None) -> dict:
    """Figures of one step's measured window, with the step's TPM and NOPM when given."""
    users = users if users is not None else window.users
    f = window_figures(timeline, window.ramp_end_ns, window.end_ns)
    io = getattr(as_timeline(timeline), "io_latency", None) or {}
    # every IO's latency per device (telemetry/iolatency.py), or why there is none
    f["io_latency"] = ((io.get("steps") or {}).get(str(window.step), {})
                       if io.get("available") else {"unavailable": io.get("reason")}
                       if io else None)
    per_user = users is not None and users > 0
    f.update({
        "step": window.step, "users": users, "complete": window.complete,
        "tpm": tpm, "nopm": nopm,
        "tpm_per_user": tpm / users if tpm is not None and per_user else None,
        "nopm_per_user": nopm / users if nopm is not None and per_user else None,
    })
    watts = f["power"]["watts"]
    f["power"]["orders_per_watt"] = (nopm / watts if nopm is not None and watts else None)
    return f


def derive_steps(timeline, steps: list[dict] | None = None) -> list[dict]:
    """``step_figures`` for every marked step; ``steps`` are the run's step records (with
    ``users``, ``tpm``, ``nopm``), matched by the marks' ``step`` index, else by order."""
    tl = as_timeline(timeline)
    out = []
    for i, window in enumerate(step_windows(tl)):
        record = {}
        if steps:
            k = window.step if 0 <= window.step < len(steps) else i
            record = steps[k] if k < len(steps) else {}
        out.append(step_figures(tl, window, tpm=record.get("tpm"), nopm=record.get("nopm"),
                                users=record.get("users")))
    return out

"""Charts and tables of fio runs: IOPS against latency and throughput per block size, pooled
latency percentiles per profile, and fio's own per-second IOPS over time."""

from __future__ import annotations

from .charts import bar_chart, count, entries, fmt, line_chart
from .model import PALETTE, STYLES, Band, Chart, Series, Table, no_data
from .runs import Group, RunData
from .stats import mean

BLOCK_SIZE = "block size"


def bs_label(bs) -> str:
    if not isinstance(bs, int):
        return str(bs)
    for unit, size in (("MiB", 2**20), ("KiB", 2**10)):
        if bs >= size and bs % size == 0:
            return f"{bs // size} {unit}"
    return f"{bs} B"


def mix(s: dict) -> str:
    """The access pattern of a profile: rw, with the read share of mixed patterns."""
    rw = s.get("rw") or "?"
    if rw in ("randrw", "rw", "readwrite") and s.get("rwmixread") is not None:
        return f"{rw} {s['rwmixread']}/{100 - s['rwmixread']}"
    return rw


def mean_latency(s: dict) -> float | None:
    """Average completion latency over reads and writes, weighted by their IOPS (ms)."""
    num = den = 0.0
    for d in ("read", "write"):
        x = s.get(d) or {}
        lat = (x.get("lat_ms") or {}).get("mean")
        if lat is not None and x.get("iops"):
            num += lat * x["iops"]
            den += x["iops"]
    return num / den if den > 0 else None


def _lat(s: dict, d: str, key: str):
    x = s.get(d) or {}
    if not x.get("ios") and not x.get("iops"):
        return None
    return (x.get("lat_ms") or {}).get(key)


def _mixes(groups: list[Group]) -> list[str]:
    return list(dict.fromkeys(mix(s) for g in groups for r in g.runs for s in r.steps))


def _by_bs(g: Group, m: str, value) -> dict:
    out: dict = {}
    for r in g.runs:
        for s in r.steps:
            if mix(s) == m and s.get("bs") is not None:
                v = value(s)
                if v is not None:
                    out.setdefault(s["bs"], []).append(v)
    return out


def iops_latency_chart(groups: list[Group], section: str = "") -> Chart:
    key, title = "fio_iops_latency", "IOPS against average latency per block size"
    mixes = _mixes(groups)
    series = []
    for gi, g in enumerate(groups):
        for mi, m in enumerate(mixes):
            iops = _by_bs(g, m, lambda s: s.get("total_iops"))
            lat = _by_bs(g, m, mean_latency)
            sizes = sorted(b for b in iops if b in lat)
            if not sizes:
                continue
            if len(groups) == 1:
                name, color, style = m, PALETTE[mi % len(PALETTE)], 0
            else:
                name = g.label if len(mixes) == 1 else f"{g.label}: {m}"
                color, style = g.color, mi % len(STYLES)
            series.append(Series(name=name, x=tuple(mean(iops[b]) for b in sizes),
                                 y=tuple(mean(lat[b]) for b in sizes), color=color, style=style,
                                 text=tuple(bs_label(b) for b in sizes)))
    if not series:
        return no_data(key, title, "no profile has IOPS and latency", section)
    return Chart(key=key, title=title, kind="scatter", x_label="IOPS (reads + writes per second)",
                 y_label="average completion latency (ms)", series=tuple(series),
                 section=section,
                 caption="Each point is one profile, labelled with its block size; latency is "
                         "fio's mean completion latency over reads and writes, weighted by "
                         "their IOPS.")


def throughput_chart(groups: list[Group], section: str = "") -> Chart:
    metrics = [(m, lambda g, m=m: _by_bs(g, m, lambda s: s.get("total_mbps")))
               for m in _mixes(groups)]
    return bar_chart("fio_throughput", "Throughput per block size", BLOCK_SIZE,
                     "MB/s read + written (MB = 10^6 bytes)",
                     entries(groups, metrics), why="no profile has a throughput",
                     cat_label=bs_label, section=section,
                     caption="fio's bandwidth over the measured time (ramp excluded), reads "
                             "and writes together; one bar per access pattern.")


def latency_chart(groups: list[Group], section: str = "") -> Chart:
    order: dict[str, int] = {}
    for g in groups:
        for r in g.runs:
            for s in r.steps:
                order.setdefault(s.get("profile") or "?", len(order))

    def values(d: str, key: str):
        def by_profile(g: Group) -> dict:
            out: dict = {}
            for r in g.runs:
                for s in r.steps:
                    v = _lat(s, d, key)
                    if v is not None:
                        out.setdefault(s.get("profile") or "?", []).append(v)
            return out
        return by_profile

    picks = [("read p99", "read", "p99"), ("write p99", "write", "p99")]
    if len(groups) == 1:
        picks = [("read p50", "read", "p50")] + picks[:1] + [("read p99.9", "read", "p99_9"),
                                                             ("write p50", "write", "p50"),
                                                             picks[1],
                                                             ("write p99.9", "write", "p99_9")]
    return bar_chart("fio_latency", "Completion latency percentiles per profile", "profile",
                     "completion latency (ms)",
                     entries(groups, [(n, values(d, k)) for n, d, k in picks]),
                     why="no profile has latency percentiles", order=lambda p: order[p],
                     section=section,
                     caption="Percentiles of single I/O completion latencies pooled over all "
                             "jobs (fio json+ latency bins).")


def iops_time_chart(run: RunData, suffix: str = "", section: str = "") -> Chart:
    """fio's per-second IOPS log of every profile, one after another, profiles shaded."""
    x, reads, writes, bands = [], [], [], []
    offset = 0.0
    for s in run.steps:
        ser = s.get("series") or {}
        t = ser.get("t_s") or []
        if not t:
            continue
        if x:  # a gap between profiles
            x.append(offset)
            reads.append(None)
            writes.append(None)
        x += [offset + v for v in t]
        reads += list(ser.get("read_iops") or [None] * len(t))
        writes += list(ser.get("write_iops") or [None] * len(t))
        bands.append(Band(offset, offset + max(t), s.get("profile") or "?"))
        offset += max(t) + 1
    return line_chart("fio_iops_time" + suffix, "fio IOPS over time", "seconds of measurement",
                      "I/O operations per second", x,
                      [("reads", reads, 0), ("writes", writes, 1)],
                      why="no profile has a per-second IOPS log", bands=bands,
                      colors=[run.color, run.color], section=section,
                      caption="fio's IOPS log averaged per second, per profile (shaded), "
                              "profiles placed one after another.")


def charts(groups: list[Group], section: str = "") -> list[Chart]:
    return [iops_latency_chart(groups, section), throughput_chart(groups, section),
            latency_chart(groups, section)]


def profiles_table(run: RunData) -> Table:
    rows = []
    for s in run.steps:
        ss = s.get("steady_state")
        rows.append((s.get("profile"), bs_label(s.get("bs")), mix(s), s.get("jobs"),
                     s.get("iodepth"), s.get("runtime_s"), (s.get("read") or {}).get("iops"),
                     (s.get("write") or {}).get("iops"), s.get("total_iops"),
                     s.get("total_mbps"), mean_latency(s),
                     None if not ss else bool(ss.get("attained")), s.get("errors"),
                     bool(s.get("partial"))))
    return Table("profiles", "Profiles",
                 ("profile", "block size", "pattern", "jobs", "iodepth", "runtime (s)",
                  "read IOPS", "write IOPS", "IOPS", "MB/s", "avg latency (ms)",
                  "steady state", "errors", "partial"), tuple(rows),
                 caption="MB/s in 10^6 bytes per second; average latency over reads and "
                         "writes weighted by IOPS.")


def latency_table(run: RunData) -> Table:
    rows = []
    for s in run.steps:
        for d in ("read", "write"):
            if _lat(s, d, "mean") is None:
                continue
            lat = (s.get(d) or {}).get("lat_ms") or {}
            rows.append((s.get("profile"), d, (s.get(d) or {}).get("iops"),
                         (s.get(d) or {}).get("mbps"), lat.get("mean"), lat.get("p50"),
                         lat.get("p95"), lat.get("p99"), lat.get("p99_9"), lat.get("max")))
    return Table("latency", "Completion latency (ms)",
                 ("profile", "direction", "IOPS", "MB/s", "mean", "p50", "p95", "p99", "p99.9",
                  "max"), tuple(rows),
                 caption="Pooled over all jobs from fio's latency bins.")


def devices_table(run: RunData) -> Table | None:
    """What fio issued beside what the devices under the target served (every member of a
    datastore), and the ratio: the write amplification of the storage under the file system
    (a two-way mirror's is near 2); None when no step measured its devices."""
    rows = [(s.get("profile"), io.get("front_read_iops"), io.get("back_read_iops"),
             io.get("front_write_iops"), io.get("back_write_iops"), io.get("amplification"))
            for s in run.steps if (io := s.get("io") or {}).get("back_write_iops") is not None]
    if not rows:
        return None
    return Table("devices", "fio's I/Os and the devices' I/Os",
                 ("profile", "read IOPS (fio)", "read IOPS (devices)", "write IOPS (fio)",
                  "write IOPS (devices)", "write amplification"), tuple(rows),
                 caption="Devices: every device under the target (each member of a "
                         "datastore), from /proc/diskstats over the step; amplification: "
                         "device writes / fio's writes. Reads the page cache answers never "
                         "reach a device.")


def tables(run: RunData) -> list[Table]:
    return [t for t in (profiles_table(run), latency_table(run), devices_table(run)) if t]


def headline(run: dict) -> str:
    """The profile with the most IOPS and the one with the most MB/s:
    "49,243 IOPS 4k-70r30w-random; 1,180 MB/s 64k-70r30w-random"."""
    measured = [s for s in run.get("steps") or [] if isinstance(s, dict)
                and s.get("total_iops") is not None]
    if not measured:
        return "-"
    iops = max(measured, key=lambda s: s["total_iops"])
    mbps = max(measured, key=lambda s: s.get("total_mbps") or 0)
    line = f"{count(iops['total_iops'])} IOPS {iops.get('profile')}"
    if mbps is not iops:
        line += f"; {fmt(mbps.get('total_mbps'))} MB/s {mbps.get('profile')}"
    else:
        line += f" ({fmt(iops.get('total_mbps'))} MB/s)"
    return line


def profile_values(g: Group, fn) -> dict:
    """{profile: [fn(step) in each run of the group]}."""
    out: dict = {}
    for r in g.runs:
        for s in r.steps:
            v = fn(s)
            if v is not None:
                out.setdefault(s.get("profile") or "?", []).append(v)
    return out

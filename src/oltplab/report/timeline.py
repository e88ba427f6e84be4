"""Charts over time from a run's telemetry timeline: disk IOPS, MB/s and latency, CPU and
power, with each step's measured window shaded. Every point is one sampling interval as the
sampler recorded it (averaged down only when a line has more than ``model.MAX_POINTS``)."""

from __future__ import annotations

from ..telemetry.sources.disks import column as disk_column
from .charts import histogram, line_chart, time_axis, timeline_bands
from .events import fault_bands, window_axis, window_start_ns
from .model import PALETTE, Chart, no_data
from .runs import RunData


def device_name(run: RunData, dev: str) -> str:
    roles = ((run.timeline.devices if run.timeline else {}).get(dev) or {}).get("roles") or []
    return f"{dev} ({', '.join(roles)})" if roles else dev


def busy_devices(run: RunData) -> list[str]:
    """Devices of the timeline that did any I/O: those that hold the run's data (and WAL) when
    the record knows them, else all."""
    tl = run.timeline
    out = []
    held = run.data_devices
    for dev in (tl.devices if tl else {}):
        if held and dev not in held:
            continue
        cols = [tl.columns.get(disk_column(dev, m)) or [] for m in ("r_s", "w_s")]
        if any(v for col in cols for v in col if v):
            out.append(dev)
    return out


def _per(interval_s: float) -> str:
    return "1 s" if interval_s == 1 else f"{interval_s:g} s"


def timeline_charts(run: RunData, suffix: str = "", section: str = "") -> list[Chart]:
    """The over-time charts of one run (notes instead where the data is missing)."""
    titles = {"iops_time": "Disk IOPS over time", "mbps_time": "Disk throughput over time",
              "latency_time": "Disk latency over time", "cpu_time": "CPU over time",
              "power_time": "Power over time", "power_hist": "Power readings (histogram)"}
    tl = run.timeline
    if tl is None or tl.t0_ns is None or not tl.columns.get("t_ns"):
        return [no_data(k + suffix, t, "the run folder has no timeline.json", section)
                for k, t in titles.items()]
    t = tl.columns["t_ns"]
    origin = window_start_ns(run)  # a run with faults: the workload's axis, faults marked
    marked = origin is not None
    x_range = None
    if not marked:
        origin = tl.t0_ns
        divisor, x_label = time_axis((t[-1] - tl.t0_ns) / 1e9)
    else:
        divisor, x_label, x_range = window_axis(run)
    x = [(v - origin) / 1e9 / divisor for v in t]
    bands = timeline_bands(run, divisor, origin)
    shaded = "Shaded: each step's measured window (ramp-up excluded)." if bands else ""
    kind_bands = _kind_bands(run)
    if not bands and kind_bands is not None:
        bands = kind_bands(run, divisor)
        shaded = "Shaded: each cycle's backup and restore." if bands else ""
    if marked:
        bands += fault_bands(run, divisor, span_s=(t[-1] - origin) / 1e9)
        shaded = (shaded + " In red: each injected fault, for as long as it lasted (as in "
                  "the throughput chart, on the same axis).").strip()
    per = _per(tl.interval_s)
    devs = busy_devices(run)
    col = tl.columns.get
    out = []

    def disk(key: str, metrics: tuple[str, str], names: tuple[str, str], y_label: str,
             caption: str) -> None:
        lines, colors = [], []
        for i, dev in enumerate(devs):
            for style, (m, n) in enumerate(zip(metrics, names)):
                lines.append((f"{device_name(run, dev)} {n}", col(disk_column(dev, m)) or [],
                              style))
                colors.append(PALETTE[i % len(PALETTE)])
        why = "no device did any I/O" if tl.devices else "no block device was sampled"
        out.append(line_chart(key + suffix, titles[key], x_label, y_label, x, lines, why=why,
                              bands=bands, colors=colors, section=section, x_range=x_range,
                              caption=" ".join(p for p in (caption, shaded) if p)))

    disk("iops_time", ("r_s", "w_s"), ("reads", "writes"), "I/O operations per second",
         f"Reads and writes per second of each device, per {per} interval "
         "(/proc/diskstats, as iostat counts them).")
    disk("mbps_time", ("rMB_s", "wMB_s"), ("read", "written"), "MiB/s (MiB = 2^20 bytes)",
         f"MiB read and written per second, per {per} interval.")
    disk("latency_time", ("r_await", "w_await"), ("r_await", "w_await"),
         f"average latency per {per} interval (ms)",
         f"r_await and w_await: the average time of the reads (writes) completed in each "
         f"{per} interval, queueing included; no point where a device did no I/O.")
    cpu = [(name, col(f"cpu.{k}") or [], 0) for k, name in
           (("idle", "idle"), ("iowait", "iowait"), ("user", "user"), ("system", "system"))]
    out.append(line_chart("cpu_time" + suffix, titles["cpu_time"], x_label,
                          "share of all CPUs (%)", x, cpu, why="CPU was not sampled",
                          bands=bands, section=section, x_range=x_range,
                          caption=" ".join(p for p in (
                              f"Host CPU time per {per} interval (/proc/stat). iowait is idle "
                              "time with I/O outstanding; read it beside idle.", shaded) if p)))
    watts = col("power.watts") or []
    reason = (tl.power or {}).get("reason") or "no power meter"
    out.append(line_chart("power_time" + suffix, titles["power_time"], x_label, "power (W)", x,
                          [("power", watts, 0)], why=f"no power readings: {reason}",
                          bands=bands, section=section, colors=[run.color], x_range=x_range,
                          caption=" ".join(p for p in (
                              f"Power per {per} interval from {(tl.power or {}).get('source')}.",
                              shaded) if p)))
    out.append(histogram("power_hist" + suffix, titles["power_hist"], "power (W)", watts,
                         run.label, run.color, why=f"no power readings: {reason}",
                         section=section,
                         caption=f"How often each power level was read: one count per {per} "
                                 "sample over the whole run."))
    out += database_charts(run, x, x_label, bands, shaded, suffix, section, x_range)
    return out


def _mb(values: list) -> list:
    return [v / 2**20 if v is not None else None for v in values]


def database_charts(run: RunData, x: list, x_label: str, bands, shaded: str, suffix: str = "",
                    section: str = "", x_range: tuple | None = None) -> list[Chart]:
    """The server's own counters over time, when the sampler read them: transactions, and
    what the server wrote (PostgreSQL's WAL; MariaDB's InnoDB redo and data files), on the
    axis of the run's other time charts (``x``, ``x_range``)."""
    tl = run.timeline
    col = tl.columns.get
    if not tl.database or not any(v is not None for v in col("db.commits_s") or []):
        return []
    per = _per(tl.interval_s)
    innodb = run.engine == "mariadb"
    name = run.engine_name or "server"
    counted = ("Com_commit and Com_rollback (SHOW GLOBAL STATUS)" if innodb else
               "xact_commit and xact_rollback of every pg_stat_database row")
    xacts = line_chart(
        "db_xacts_time" + suffix, f"{name} transactions over time", x_label,
        "transactions per second", x,
        [("commits", col("db.commits_s") or [], 0), ("rollbacks", col("db.rollbacks_s") or [], 1)],
        why="the server's counters were not read", bands=bands, section=section,
        x_range=x_range,
        caption=" ".join(p for p in (f"Commits and rollbacks per {per} interval: {counted}.",
                                     shaded) if p))
    if innodb:
        lines = [("InnoDB redo", _mb(col("db.wal_bytes_s") or []), 0),
                 ("InnoDB data files", _mb(col("db.innodb_data_written_s") or []), 1)]
        title = "InnoDB redo and data written over time"
        caption = (f"MiB written per second, per {per} interval: the redo log "
                   "(Innodb_os_log_written) and InnoDB's files (Innodb_data_written).")
    else:
        lines = [("WAL", _mb(col("db.wal_bytes_s") or []), 0)]
        title = "WAL written over time"
        caption = f"WAL MiB generated per second, per {per} interval (pg_stat_wal.wal_bytes)."
    written = line_chart("db_written_time" + suffix, title, x_label, "MiB/s (MiB = 2^20 bytes)",
                         x, lines, why="the server reported no bytes written", bands=bands,
                         section=section, x_range=x_range,
                         caption=" ".join(p for p in (caption, shaded) if p))
    return [xacts, written]


def _kind_bands(run: RunData):
    """The shading of the run's kind for a timeline without measured steps, if it has one."""
    from .. import kinds
    kind = kinds.find(run.kind)
    return kind.bands if kind is not None else None

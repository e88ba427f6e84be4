"""The charts of a plan's cells, one line (or bar) per cell, per kind: TPC-C runs give TPM and
NOPM, CPU idle and iowait, and average and 99th-percentile disk latency per user count
(experiments E1 to E3 of the storage whitepapers), the shop's runs OPM, the brokerage's trps
and the datastore's IOPS with a table of its IO per cell (E7's policy figure); backup runs give
MB/s per cycle (E4); neighbours runs give the NOPM of each workload instance and of the average
one, a bar per cell, and a table of each cell's averages against the first cell (E5: baseline
and noisy side by side). Values of repeated runs are averaged; a step cut short (``partial``)
is left out.
"""

from __future__ import annotations

from typing import Callable

from . import neighbours
from .backup import PHASES, per_cycle
from .charts import bar_chart, entries, line_chart
from .model import Chart, Table
from .runs import Group, RunData
from .stats import mean
from .tpcc import USERS, busy_step_devices, cpu, device, fig

Value = Callable[[RunData, int, dict], float | None]


def _by_users(group: Group, value: Value) -> dict:
    """{users: mean over the group's runs of the steps with that user count}."""
    out: dict = {}
    for r in group.runs:
        for i, s in enumerate(r.steps):
            if s.get("users") is None or s.get("partial"):
                continue
            v = value(r, i, s)
            if v is not None:
                out.setdefault(s["users"], []).append(v)
    return {u: mean(v) for u, v in out.items()}


def _lines(key: str, title: str, y_label: str, groups: list[Group],
           metrics: list[tuple[str, Value]], why: str, caption: str) -> Chart:
    """One line per cell and metric over the user counts (a dash per metric)."""
    values = [(g, m, _by_users(g, v)) for g in groups for m, v in metrics]
    xs = sorted({u for _, _, d in values for u in d})
    lines, colors = [], []
    for g, (i, m) in ((g, (i, m)) for g in groups for i, (m, _) in enumerate(metrics)):
        d = next(d for gg, mm, d in values if gg is g and mm == m)
        name = g.label if len(metrics) == 1 else f"{g.label}: {m}"
        lines.append((name, [d.get(u) for u in xs], i))
        colors.append(g.color)
    kept = [(ln, c) for ln, c in zip(lines, colors) if any(v is not None for v in ln[1])]
    return line_chart(key, title, USERS, y_label, xs, [ln for ln, _ in kept], why=why,
                      colors=[c for _, c in kept], caption=caption, whole_ticks=True)


def tpcc_charts(groups: list[Group]) -> list[Chart]:
    out = [_lines("plan_tpm_nopm", "TPM and NOPM per user count, one line per cell",
                  "transactions per minute", groups,
                  [("TPM", lambda r, i, s: s.get("tpm")), ("NOPM", lambda r, i, s: s.get("nopm"))],
                  why="no step has server TPM or NOPM",
                  caption="Server-side TPM (solid) and NOPM (dashed) of every cell, averaged "
                          "over its repeats, measured interval only.")]
    no_tel = "no step has telemetry"
    out.append(_lines(
        "plan_cpu", "CPU idle and iowait per user count, one line per cell", "% of all CPUs",
        groups, [("idle", lambda r, i, s: cpu(fig(r, i), "cpu_idle_pct")),
                 ("iowait", lambda r, i, s: cpu(fig(r, i), "cpu_iowait_pct"))],
        why=no_tel, caption="CPU idle (solid) and iowait (dashed) over each step's measured "
                            "window; iowait is unreliable on busy CPUs, read it with idle."))
    devs = busy_step_devices(groups)
    metrics: list[tuple[str, Value]] = []
    for dev in devs:
        metrics += [(f"{dev} average", lambda r, i, s, d=dev: device(fig(r, i), d, "await_ms")),
                    (f"{dev} p99", lambda r, i, s, d=dev: device(fig(r, i), d, "await_p99_ms"))]
    out.append(_lines(
        "plan_disk_latency", "Disk latency per user count: average and p99, one line per cell",
        "latency (ms)", groups, metrics, why=no_tel if not devs else "no device latency",
        caption="Average latency over all reads and writes (solid) and the 99th percentile of "
                "the per-interval averages (dashed), each device over each step's measured "
                "window."))
    return out


def backup_charts(groups: list[Group]) -> list[Chart]:
    items = entries(groups, [(p, lambda g, p=p: per_cycle(g, p, "mb_per_s")) for p in PHASES])
    return [bar_chart("plan_backup_rate", "Backup and restore MB/s per cycle", "cycle", "MB/s",
                      items, why="no cycle finished",
                      caption="Bytes written by the backup (restored on disk) over its seconds, "
                              "MB = 10^6 bytes, per cell.")]


def neighbours_charts(groups: list[Group]) -> list[Chart]:
    key, name = neighbours.units(groups)
    what = {"nopm": "New orders per minute", "trps": "Trade results per second"}.get(
        key, "Orders per minute")
    return [bar_chart(f"plan_neighbours_{key}", f"{name} per workload instance, a bar per cell",
                      "instance", name,
                      entries(groups, [(name, lambda g: neighbours.per_instance(g, key))]),
                      why="no workload instance measured", order=neighbours.order,
                      caption=f"{what} of each workload instance and of the "
                              "average one (the mean over the instances that measured), "
                              "averaged over the cell's repeats.")]


def neighbours_table(groups: list[Group]) -> Table:
    """Each cell's average workload instance, and its headline against the first cell's."""
    key, name = neighbours.units(groups)
    rows, first = [], None
    for g in groups:
        avg = [(r.record.get("average") or {}) for r in g.runs]
        spec = (g.runs[0].record.get("config") or {}).get("neighbours") or {}
        units, tpm = mean([a.get(key) for a in avg]), mean([a.get("tpm") for a in avg])
        first = units if first is None else first
        rows.append((g.label, spec.get("instances"), spec.get("backup"), len(g.runs), tpm, units,
                     None if units is None or not first else round(100.0 * units / first, 1)))
    return Table("plan_neighbours", "Average workload instance per cell",
                 ("cell", "instances", "backing up", "runs", "TPM per instance",
                  f"{name} per instance", f"{name} % of {groups[0].label}"), tuple(rows),
                 caption=f"TPM and {name} of the average workload instance of each run, "
                         "averaged over the cell's repeats; the last column sets each cell "
                         "against the first (the baseline, when it backs nothing up).")


def dvds_charts(groups: list[Group]) -> list[Chart]:
    """The shop's cells: OPM per user count, then the host's CPU and disk latency as for
    TPC-C's cells."""
    return [_lines("plan_opm", "OPM per user count, one line per cell", "orders per minute",
                   groups, [("OPM", lambda r, i, s: s.get("opm"))], why="no step has OPM",
                   caption="Orders the server committed per minute of every cell, averaged "
                           "over its repeats, measured interval only."),
            *tpcc_charts(groups)[1:]]


# the brokerage's storage view per step (its ``io``): column, key, digits
IO_COLUMNS = (("read IOPS", "read_iops", 0), ("write IOPS", "write_iops", 0),
              ("reads per write", "reads_per_write", 2), ("KiB per read", "read_kib", 1),
              ("KiB per write", "write_kib", 1), ("await ms", "await_ms", 2))


def _io(key: str) -> Value:
    return lambda r, i, s: (s.get("io") or {}).get(key)


def _where(group: Group) -> str:
    """The datastore a group's runs measured (its name), else the group's label."""
    stores = {((r.record.get("datastores") or {}).get("datadir") or {}).get("name")
              for r in group.runs}
    return stores.pop() if len(stores) == 1 and None not in stores else group.label


def brokerage_charts(groups: list[Group]) -> list[Chart]:
    """The brokerage's cells: trps and the datastore's read and write IOPS per user count,
    then the host's CPU and disk latency as for TPC-C's cells."""
    return [_lines("plan_trps", "trps per user count, one line per cell",
                   "trade results per second", groups, [("trps", lambda r, i, s: s.get("trps"))],
                   why="no step has trps",
                   caption="Trade results the server committed per second (TPC-E-derived) of "
                           "every cell, averaged over its repeats, measured interval only."),
            _lines("plan_brokerage_iops", "The datastore's read and write IOPS per user count, "
                   "one line per cell", "IOs per second", groups,
                   [("reads", _io("read_iops")), ("writes", _io("write_iops"))],
                   why="no step has the datastore's IO",
                   caption="Reads (solid) and writes (dashed) per second that the datastore's "
                           "devices served over each step's measured window, every device "
                           "counted, averaged over the cell's repeats."),
            *tpcc_charts(groups)[1:]]


def brokerage_table(groups: list[Group]) -> Table:
    """The paper's policy figure as a table: per cell (its datastore) and user count, trps,
    the datastore's read and write IOPS, reads per write, the IO sizes and the latency."""
    rows = []
    for g in groups:
        figures = [_by_users(g, lambda r, i, s: s.get("trps"))] + [
            _by_users(g, _io(key)) for _, key, _ in IO_COLUMNS]
        for users in sorted(set().union(*figures)):
            values = [f.get(users) for f in figures]
            digits = (2, *(d for _, _, d in IO_COLUMNS))
            rows.append((_where(g), users, len(g.runs),
                         *(None if v is None else round(v, d or None)
                           for v, d in zip(values, digits))))
    return Table("plan_brokerage_io", "trps and the datastore's IO per cell and user count",
                 ("datastore or cell", "users", "runs", "trps",
                  *(name for name, _, _ in IO_COLUMNS)), tuple(rows),
                 caption="trps: trade results the server committed per second; the IO columns "
                         "are the datastore's devices over the same measured window, every "
                         "device that holds the data counted: reads and writes per second, "
                         "reads per write, average KiB (2^10 bytes) per read and per write, "
                         "average latency per IO. Means over the cell's repeats.")

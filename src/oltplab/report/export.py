"""Every table of a run as CSV files, for spreadsheets: the tables of its report (the injected
faults first, one row per event, when it has any), and the telemetry samples (one row per
sampling interval) when the run has a timeline.

Values are written as recorded (full precision, no thousands separators); a missing value is
an empty cell.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime, timezone
from pathlib import Path

from .events import events_table
from .output import write_file
from .model import Table
from .runs import RunData, prepare
from .tables import run_tables

TIMELINE_CSV = "timeline"


def table_csv(table: Table) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(table.columns)
    for row in table.rows:
        w.writerow(["" if v is None else " ".join(map(str, v)) if isinstance(v, tuple) else v
                    for v in row])
    return out.getvalue()


def timeline_table(run: RunData) -> Table | None:
    """The samples: seconds since the start, the wall clock (UTC) when each was taken, the
    interval's length, then every column."""
    tl = run.timeline
    if tl is None or tl.t0_ns is None or not tl.columns.get("t_ns"):
        return None
    clocks = ("t_ns", "t_unix_ns", "dt_s")
    names = [c for c in tl.columns if c not in clocks]
    cols = ["t_s", "utc", "dt_s"] + [f"{c} ({tl.units[c]})" if tl.units.get(c) else c
                                     for c in names]
    t = tl.columns["t_ns"]
    dt = tl.columns.get("dt_s") or [None] * len(t)
    # timelines recorded before the wall clock was kept per sample: none
    wall = tl.columns.get("t_unix_ns") or [None] * len(t)
    rows = tuple(((v - tl.t0_ns) / 1e9, _utc(wall[i]), dt[i],
                  *(tl.columns[c][i] for c in names)) for i, v in enumerate(t))
    return Table(TIMELINE_CSV, "Telemetry samples", tuple(cols), rows)


def _utc(unix_ns: int | None) -> str | None:
    """ISO 8601 UTC time, to the millisecond, of a wall-clock instant in ns."""
    if unix_ns is None:
        return None
    return datetime.fromtimestamp(unix_ns / 1e9, timezone.utc).isoformat(timespec="milliseconds")


def export_csv(run: dict, out_dir) -> list[Path]:
    """Write each table of ``run`` (a record from results.store.load_run) as
    ``<out_dir>/<table>.csv``; returns the paths written, in report order."""
    data = prepare(run)
    tables = [t for t in (events_table(data),) if t is not None] + run_tables(data)
    samples = timeline_table(data)
    if samples is not None:
        tables.append(samples)
    out = Path(out_dir)
    paths = []
    for table in tables:
        path = out / f"{table.key}.csv"
        write_file(path, table_csv(table))
        paths.append(path)
    return paths

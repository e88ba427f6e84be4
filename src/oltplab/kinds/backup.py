"""Runs of backup and restore cycles: seconds and MB/s per cycle, each restore checked."""

from __future__ import annotations

from ..plans.keys import STEP_KINDS
from ..report import backup as report
from ..report import plancharts
from ..runs.kind import RunKind

KIND = RunKind(
    name="backup",
    help="backup and restore cycles of the cell's database",
    headline=report.headline,
    tables=report.tables,
    charts=report.charts,
    plan_charts=lambda groups: (plancharts.backup_charts(groups), []),
    bands=report.phase_bands,
    database=True,
    step=STEP_KINDS["backup"],
    show="oltplab.cli.backup:show_run",
    done="oltplab.cli.backup:show_run",
    live="oltplab.cli.backup:plan_lines",
)

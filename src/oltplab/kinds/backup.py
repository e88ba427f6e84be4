"""Runs of backup and restore cycles: seconds and MB/s per cycle, each restore checked."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..options import BACKUP, rows
from ..plans.keys import StepKind
from ..report import backup as report
from ..report import plancharts
from ..runs.kind import RunKind


def _make(cell, opts: dict, label: str, results_dir: Path):
    from ..scenarios.backup import BackupSpec
    if cell.db.dsn and "to" not in opts:
        raise UsageError("a backup of a server given by dsn needs 'to' (where backups go)")
    return BackupSpec(name=label, results_dir=results_dir, **opts,
                      sample_interval=cell.run.sample_interval, power=cell.run.power,
                      io_latency=cell.run.io_latency)


def _run(item, progress, labels: dict, metrics=None) -> dict:
    from ..scenarios.backup import run_backup
    on_progress, on_cycle = progress or (None, None)
    return run_backup(item.cell.db, item.spec, progress=on_progress, on_cycle=on_cycle,
                      labels=labels, metrics=metrics)


STEP = StepKind("backup", rows(BACKUP, plans=True), "cell", True, _make, _run,
                "backup and restore cycles of the cell's database", lambda spec: 100)


KIND = RunKind(
    name="backup",
    help="backup and restore cycles of the cell's database",
    headline=report.headline,
    tables=report.tables,
    charts=report.charts,
    plan_charts=lambda groups: (plancharts.backup_charts(groups), []),
    bands=report.phase_bands,
    database=True,
    step=STEP,
    describe="oltplab.cli.backup:describe_step",
    show="oltplab.cli.backup:show_run",
    done="oltplab.cli.backup:print_done",
    live="oltplab.cli.backup:plan_lines",
)

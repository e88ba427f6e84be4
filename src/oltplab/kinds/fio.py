"""Runs of fio profiles on a datastore: IOPS, MB/s and pooled latency per profile."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError
from ..options import Option, a_path, rows
from ..plans.keys import StepKind
from ..report import fio as report
from ..runs.kind import Metric, RunKind


def fio_path(cell, opts: dict) -> Path:
    """Where a fio step measures: its ``path``, else the folder that holds the cell's data
    directory (the datastore the data lives on, not the server's own folder)."""
    if "path" in opts:
        return Path(opts["path"])
    if cell.db.dsn:
        raise UsageError("a fio step against a server given by dsn needs 'path'")
    return Path(os.path.abspath(cell.db.datadir)).parent


def _make(cell, opts: dict, label: str, results_dir: Path):
    from ..fio.spec import spec_from_options
    from ..fio.target import target_kind
    if "path" in opts:  # refused when missing, as fio run refuses it: nothing makes it
        target_kind(Path(os.path.abspath(opts["path"])))
    raw = {k: (v if isinstance(v, bool) else str(v)) for k, v in opts.items()
           if k not in ("path", "profile")}
    profiles = opts.get("profile")
    raw["profiles"] = tuple(profiles) if isinstance(profiles, list) else (
        (profiles,) if profiles else None)
    raw.update(target=str(fio_path(cell, opts)), name=label, results_dir=str(results_dir))
    return spec_from_options(raw)


def _run(item, progress, labels: dict, metrics=None) -> dict:
    from ..runs.lifecycle import run_fio_recorded
    if "path" not in dict(item.step.options) and not Path(item.spec.target).exists():
        Path(item.spec.target).mkdir(parents=True)  # the folder the cell's datadir goes in
    return run_fio_recorded(item.spec, item.cell.run.sample_interval, item.cell.run.power,
                            progress, labels, item.cell.run.io_latency, metrics)


def _profiles(value, what):
    if isinstance(value, list) and not (value and all(isinstance(v, str) for v in value)):
        raise UsageError(f"{what}: give a profile name or a list of them")
    return value


def _keys() -> dict[str, Option]:
    from ..fio.spec import OPTIONS
    keys = [Option("profile", "fio", "named profiles, groups or job files, run in order",
                   toml=(str, list), convert=_profiles),
            Option("path", "fio", "directory or block device under test "
                   "[default: the folder holding the cell's data directory]", toml=(str,),
                   convert=a_path)]
    return {**{k.name: k for k in keys}, **rows(OPTIONS, plans=True)}


STEP = StepKind("fio", _keys(), "target", False, _make, _run,
                "storage profiles on the cell's datastore, once per datastore",
                target_path=fio_path)


KIND = RunKind(
    name="fio",
    help="storage profiles with fio",
    headline=report.headline,
    tables=report.tables,
    charts=report.charts,
    run_charts=lambda run, suffix: [report.iops_time_chart(run, suffix)],
    metrics=(Metric("IOPS", lambda g: report.profile_values(g, lambda s: s.get("total_iops"))),
             Metric("MB/s", lambda g: report.profile_values(g, lambda s: s.get("total_mbps"))),
             Metric("average latency (ms)",
                    lambda g: report.profile_values(g, report.mean_latency))),
    step=STEP,
    describe="oltplab.cli.fio:describe_step",
    show="oltplab.cli.fio:show_run",
    done="oltplab.cli.fio:print_done",
    live="oltplab.cli.fio:plan_lines",
)

"""Runs of the TPC-C-derived workload: a sequence of user counts, TPM and NOPM per step."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .. import workloads
from ..plans.keys import KEYS, StepKind, checked_run, planned_store
from ..report import plancharts
from ..report import tpcc as report
from ..runs.kind import Metric, RunKind


def _make(cell, opts: dict, label: str, results_dir: Path):
    opts = dict(opts)
    opts.update(opts.pop("users", {}))  # the user sequence and users_auto, as a cell has them
    return checked_run(cell.db, dataclasses.replace(cell.run, name=label, **opts),
                       planned_store(cell.datastore))


def _run(item, progress, labels: dict, metrics=None) -> dict:
    from ..runs.lifecycle import run_workload_recorded
    return run_workload_recorded(item.cell.db, item.spec, progress, labels, metrics=metrics)


def _connections(spec) -> int:
    """The users' connections, the market emulator's actors' (the brokerage), and 21 more."""
    from ..runs.lifecycle import connections_needed
    return connections_needed(spec)


STEP = StepKind("tpcc", {k.name: k for k in KEYS.values() if k.part == "run"}, "cell", True,
                _make, _run, "the user sequence; its options override the cell's",
                lambda spec: _connections(spec), config_key="run", cell_label=True,
                searches=lambda spec: bool(spec.users_auto))


KIND = RunKind(
    name="tpcc",
    help="the TPC-C-derived workload over a sequence of user counts",
    headline=report.headline,
    tables=report.tables,
    charts=report.charts,
    metrics=(Metric("NOPM", lambda g: report.step_values(g, "nopm"), report.users_at),
             Metric("TPM", lambda g: report.step_values(g, "tpm"), report.users_at)),
    notes=report.best_users_notes,
    compare_notes=report.engine_notes,
    best_points="best-and-top",
    plan_charts=lambda groups: (plancharts.tpcc_charts(groups), []),
    timeline=True,
    database=True,
    caveat=workloads.get("tpcc").caveat,
    step=STEP,
    describe="oltplab.cli.tpcc:describe_step",
    show="oltplab.cli.tpcc:show_run",
    done="oltplab.cli.tpcc:print_run",
    live="oltplab.cli.tpcc:plan_lines",
)

"""Runs of several managed servers on one datastore, some backing up while the others run the
workload: NOPM (the shop's OPM) and TPM per workload instance and of the average one."""

from __future__ import annotations

from pathlib import Path

from ..options import NEIGHBOURS, TELEMETRY, rows
from ..plans.keys import KEYS, StepKind, typed
from ..report import neighbours as report
from ..report.backup import phase_bands
from ..report import plancharts
from ..runs.kind import Metric, RunKind


def _keys() -> dict:
    """The rows of ``neighbours run`` a plan takes, from its cell or the step's own table;
    listed as ``[defaults]`` lists them, the one user count last."""
    own = rows(NEIGHBOURS, TELEMETRY, plans=True)
    order = [n for n in KEYS if n in own and n != "users"] + ["users"]
    return {n: own[n] for n in order}


def _make(cell, opts: dict, label: str, results_dir: Path):
    """The cell's options a neighbours run takes (as the plan gives them: [defaults], [matrix],
    the target), then the step's own."""
    from ..scenarios.neighbours import NeighboursSpec
    keys = STEP.keys
    given = {k: typed("cell", k, v, keys) for k, v in cell.values if k in keys and k not in opts}
    return NeighboursSpec(**{**given, **opts}, name=label, results_dir=results_dir)


def _metrics(records: list[dict]) -> tuple[Metric, ...]:
    """The headline per workload instance in the runs' workload's unit (NOPM, the shop's
    OPM; each group's own where runs of both are compared), then TPM."""
    names = sorted({report.unit(r)[1] for r in records}) or ["NOPM"]
    return (Metric(" or ".join(names), lambda g: report.per_instance(g, report.units([g])[0]),
                   report.at),
            Metric("TPM", lambda g: report.per_instance(g, "tpm"), report.at))


def _run(item, progress, labels: dict, metrics=None) -> dict:
    from ..scenarios.neighbours import run_neighbours
    return run_neighbours(item.spec, progress, labels=labels, metrics=metrics)


STEP = StepKind("neighbours", _keys(), "cell", False, _make, _run,
                "several managed servers on one datastore, some backing up while the others "
                "run the workload (neighbours run)", own_servers=True)


KIND = RunKind(
    name="neighbours",
    help="several managed servers on one datastore, some backing up while the others run "
         "the workload",
    headline=report.headline,
    tables=report.tables,
    charts=report.charts,
    metrics=_metrics([]),
    metrics_of=_metrics,
    plan_charts=lambda groups: (plancharts.neighbours_charts(groups),
                                [plancharts.neighbours_table(groups)]),
    bands=phase_bands,
    database=True,
    step=STEP,
    describe="oltplab.cli.neighbours:describe_step",
    show="oltplab.cli.neighbours:show_run",
    done="oltplab.cli.neighbours:print_done",
    live="oltplab.cli.neighbours:plan_lines",
)

"""Runs of several managed servers on one datastore, some backing up while the others run the
workload: NOPM and TPM per workload instance and of the average one."""

from __future__ import annotations

from ..plans.keys import STEP_KINDS
from ..report import neighbours as report
from ..report.backup import phase_bands
from ..report import plancharts
from ..runs.kind import Metric, RunKind

KIND = RunKind(
    name="neighbours",
    help="several managed servers on one datastore, some backing up while the others run "
         "the workload",
    headline=report.headline,
    tables=report.tables,
    charts=report.charts,
    metrics=(Metric("NOPM", lambda g: report.per_instance(g, "nopm"), report.at),
             Metric("TPM", lambda g: report.per_instance(g, "tpm"), report.at)),
    plan_charts=lambda groups: (plancharts.neighbours_charts(groups),
                                [plancharts.neighbours_table(groups)]),
    bands=phase_bands,
    database=True,
    step=STEP_KINDS["neighbours"],
    show="oltplab.cli.neighbours:show_run",
    done="oltplab.cli.neighbours:print_neighbours",
    live="oltplab.cli.neighbours:plan_lines",
)

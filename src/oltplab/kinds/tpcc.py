"""Runs of the TPC-C-derived workload: a sequence of user counts, TPM and NOPM per step."""

from __future__ import annotations

from .. import workloads
from ..plans.keys import STEP_KINDS
from ..report import plancharts
from ..report import tpcc as report
from ..runs.kind import Metric, RunKind


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
    step=STEP_KINDS["tpcc"],
    show="oltplab.cli.tpcc:show_run",
    done="oltplab.cli.tpcc:print_run",
    live="oltplab.cli.tpcc:plan_lines",
)

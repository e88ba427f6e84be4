"""Runs of the TPC-E-derived brokerage: a sequence of user counts, trade results per second
(trps) per step; a plan's cells run it through the default step (``workload = "brokerage"``),
and its report draws trps and the datastore's IO per cell."""

from __future__ import annotations

from .. import workloads
from ..report import brokerage as report
from ..report import plancharts
from ..report import tpcc as common
from ..runs.kind import Metric, RunKind

KIND = RunKind(
    name="brokerage",
    help="the TPC-E-derived brokerage over a sequence of user counts",
    headline=report.headline,
    tables=report.tables,
    charts=report.charts,
    metrics=(Metric("trps", lambda g: common.step_values(g, "trps"), common.users_at),),
    notes=common.best_users_notes,
    compare_notes=common.engine_notes,
    best_points="best-and-top",
    plan_charts=lambda groups: (plancharts.brokerage_charts(groups),
                                [plancharts.brokerage_table(groups)]),
    timeline=True,
    database=True,
    caveat=workloads.get("brokerage").caveat,
    show="oltplab.cli.brokerage:show_run",
    done="oltplab.cli.brokerage:print_run",
    live="oltplab.cli.brokerage:plan_lines",
)

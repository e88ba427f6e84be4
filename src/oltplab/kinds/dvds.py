"""Runs of the DVD-Store-derived shop: a sequence of user counts, OPM per step."""

from __future__ import annotations

from .. import workloads
from ..report import dvds as report
from ..report import plancharts
from ..report import tpcc as common
from ..runs.kind import Metric, RunKind

KIND = RunKind(
    name="dvds",
    help="the DVD-Store-derived shop over a sequence of user counts",
    headline=report.headline,
    tables=report.tables,
    charts=report.charts,
    metrics=(Metric("OPM", lambda g: common.step_values(g, "opm"), common.users_at),),
    notes=common.best_users_notes,
    compare_notes=common.engine_notes,
    best_points="best-and-top",
    plan_charts=lambda groups: (plancharts.dvds_charts(groups), []),
    timeline=True,
    database=True,
    caveat=workloads.get("dvds").caveat,
    show="oltplab.cli.dvds:show_run",
    done="oltplab.cli.dvds:print_run",
    live="oltplab.cli.dvds:plan_lines",
)

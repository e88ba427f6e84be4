"""Runs of fio profiles on a datastore: IOPS, MB/s and pooled latency per profile."""

from __future__ import annotations

from ..plans.keys import STEP_KINDS
from ..report import fio as report
from ..runs.kind import Metric, RunKind

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
    step=STEP_KINDS["fio"],
    show="oltplab.cli.fio:show_run",
    done="oltplab.cli.fio:show_run",
    live="oltplab.cli.fio:plan_lines",
)

"""A real run with a fault, reported and exported as a user does: the fault table and
events.csv, and every time chart of the run on the throughput chart's axis with the fault
marked where the injector recorded it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from oltplab.report.build import build_report
from oltplab.results.store import load_run

from ..conftest import free_port, oltplab, saved_runs

TIME_CHARTS = ("events_tpm", "iops_time", "latency_time", "cpu_time", "db_xacts_time")


def test_a_killed_backend_is_marked_on_every_time_chart_and_exported(server_tmp, built_w1):
    flags = ["--datadir", str(built_w1("postgres", server_tmp / "pg")), "--port",
             str(free_port()), "--db-memory", "64MiB"]
    oltplab("tpcc", "run", *flags, "--users", "2", "--rampup", "2s", "--duration", "10s",
            "--power", "none", "--inject", "at=3s,kill-backend", cwd=server_tmp, check_rc=0)
    (run,) = saved_runs(server_tmp / "results")
    (event,) = run["events"]
    assert "error" not in event, event

    folder = Path(load_run(server_tmp / "results", run["id"])["_path"])
    oltplab("report", str(folder), "--out", str(server_tmp / "rep"), cwd=server_tmp,
            check_rc=0)
    assert all((server_tmp / "rep" / f"{key}.png").is_file() for key in TIME_CHARTS)
    oltplab("results", "export", str(folder), "--csv", "--out", str(server_tmp / "csv"),
            cwd=server_tmp, check_rc=0)
    with open(server_tmp / "csv" / "events.csv", newline="") as f:
        (row,) = csv.DictReader(f)
    assert row["kind"] == "kill-backend"
    assert float(row["lasted (s)"]) == float(row["recovery (s)"]) == event["recovery_s"]

    charts = {c.key: c for c in build_report([load_run(server_tmp / "results", run["id"])])
              .charts}
    axis = charts["events_tpm"]
    lo, hi = axis.x_range
    assert lo < 0 < 10 <= hi  # the sampler started in the ramp-up, before the window
    for key in TIME_CHARTS:
        chart = charts[key]
        assert (chart.x_label, chart.x_range) == (axis.x_label, axis.x_range), key
        (band,) = [b for b in chart.bands if b.fault]
        assert band.x0 == event["at_s"], key
        assert band.x1 == pytest.approx(event["at_s"] + max(event["recovery_s"], 0.5)), key
    # the sampler's points lie on the same axis: one about each second of the window
    cpu = charts["cpu_time"].series[0].x
    assert min(cpu) < 0.5 and 9 <= max(cpu) and sum(0 <= x < 10 for x in cpu) >= 9

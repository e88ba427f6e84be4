"""A run with injected faults in the report: every time chart on the workload's axis (seconds
from the start of the measured window) with the faults marked, the events in the CSV export,
and comparisons that name each group's faults. Runs are fixture records (test_report_fixtures).
"""

from __future__ import annotations

import csv

import pytest

from oltplab.report.build import build_report
from oltplab.report.events import events_chart
from oltplab.report.export import export_csv
from oltplab.report.figure import figure
from oltplab.report.model import FAULT_COLOR
from oltplab.report.runs import prepare
from oltplab.report.timeline import timeline_charts

from .test_report_fixtures import NOPM, groups_of, timeline_dict, tpcc_record, write_run

WINDOW_S = 20
REMOVAL = {"kind": "remove-device", "event": "at=3s,remove-device=1", "requested_at_s": 3.0,
           "at_s": 3.0, "seconds": 13.8, "bytes_moved": 1_204_000_000, "bytes_read": 0,
           "allocated_bytes": 832 * 2**20, "mb_per_s": 87.2, "before_tpm": 20000.0,
           "dip_avg_pct": 61.5, "dip_max_pct": 95.5, "back_within_10pct_s": 15.0}
KILL = {"kind": "kill-backend", "event": "at=18s,kill-backend", "requested_at_s": 18.0,
        "at_s": 18.001, "recovery_s": 1.5, "before_tpm": 20000.0, "dip_avg_pct": 80.0,
        "dip_max_pct": 99.0, "back_within_10pct_s": 2.0}
LINE_CHARTS = ("iops_time", "mbps_time", "latency_time", "cpu_time", "power_time")


def faulty(name: str = "f", events=(REMOVAL, KILL), users=(2,), **kw) -> dict:
    """A one-step run (2 users) measured for WINDOW_S seconds, with ``events``."""
    rec = tpcc_record(name, users=users, **kw)
    rec["steps"][0]["throughput"] = {"interval_s": 10.0, "completed": [3000, 3000],
                                     "per_s": [300] * WINDOW_S, "cv": None}
    rec["events"] = [dict(e) for e in events]
    return rec


def test_every_time_chart_shares_the_window_axis_and_marks_the_faults(tmp_path):
    """The telemetry charts counted from the sampler's start and showed no fault; the
    throughput chart counted from the measured window's start."""
    rec = write_run(tmp_path / "run", faulty(), timeline_dict(users=(2,), measure_s=WINDOW_S))
    run = prepare(rec)
    charts = {c.key: c for c in timeline_charts(run)}
    throughput = events_chart(run)
    # samples every second from 1 s after the sampler's start; the window starts at 2 s
    # (ramp-up) and the timeline ends 1 s after it: from -1 s to 21 s, padded by 1%
    assert throughput.x_range == pytest.approx((-1.22, 21.22))
    for key in LINE_CHARTS:
        chart = charts[key]
        assert chart.x_label == throughput.x_label == \
            "time since the start of the measured window (s)", key
        assert chart.x_range == throughput.x_range, key
        assert chart.series[0].x[:3] == (-1.0, 0.0, 1.0), key
        step, *marked = chart.bands
        assert (step.x0, step.x1, step.fault) == (0.0, WINDOW_S, False)
        assert [(b.x0, b.x1, b.label) for b in marked] == [
            (3.0, pytest.approx(16.8), "remove-device 13.8 s"),
            (18.001, pytest.approx(19.501), "kill-backend, recovery 1.5 s")], key
        assert all(b.fault for b in marked) and "In red: each injected fault" in chart.caption
    assert [(b.x0, b.fault) for b in throughput.bands] == [(3.0, True), (18.001, True)]


def test_a_run_without_faults_keeps_the_timeline_from_the_sampler_start(tmp_path):
    rec = write_run(tmp_path / "run", faulty(events=()),
                    timeline_dict(users=(2,), measure_s=WINDOW_S))
    chart = {c.key: c for c in timeline_charts(prepare(rec))}["iops_time"]
    assert chart.x_label == "time since the start (s)" and chart.x_range is None
    assert chart.series[0].x[0] == 1.0 and not any(b.fault for b in chart.bands)


def test_faults_are_shaded_in_red_with_their_label_inside_the_axes(tmp_path):
    rec = write_run(tmp_path / "run", faulty(), timeline_dict(users=(2,), measure_s=WINDOW_S))
    layout = figure(events_chart(prepare(rec)))["layout"]
    assert [s["fillcolor"] for s in layout["shapes"]] == [FAULT_COLOR, FAULT_COLOR]
    removal, kill = layout["annotations"]
    assert (removal["x"], removal["xanchor"], removal["yanchor"]) == (3.0, "left", "top")
    # right of the axis' middle: the label ends where the fault ends, within the chart
    assert (kill["x"], kill["xanchor"]) == (pytest.approx(19.501), "right")
    assert removal["y"] == kill["y"] == 1  # apart: one row
    assert layout["xaxis"]["range"] == pytest.approx([-1.22, 21.22])
    # a kill 6 s after the removal: its label would cover the removal's, so it goes below
    near = write_run(tmp_path / "near", faulty(events=(REMOVAL, {**KILL, "at_s": 9.0})),
                     timeline_dict(users=(2,), measure_s=WINDOW_S))
    removal, kill = figure(events_chart(prepare(near)))["layout"]["annotations"]
    assert (removal["y"], kill["y"]) == (1, pytest.approx(0.94))


def test_export_writes_a_row_per_event(tmp_path):
    rec = write_run(tmp_path / "run", faulty())
    paths = export_csv(rec, tmp_path / "csv")
    assert paths[0].name == "events.csv"
    with open(paths[0], newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["event"] for r in rows] == ["at=3s,remove-device=1", "at=18s,kill-backend"]
    assert rows[0]["lasted (s)"] == "13.8" and rows[0]["moved (MB)"] == "1204.0"
    assert rows[0]["MB/s"] == "87.2" and rows[0]["dip max %"] == "95.5"
    assert rows[1]["recovery (s)"] == "1.5" and rows[1]["moved (MB)"] == ""
    assert not (tmp_path / "csv2").exists()
    plain = write_run(tmp_path / "plain", tpcc_record("plain"))
    assert "events.csv" not in [p.name for p in export_csv(plain, tmp_path / "csv2")]


def test_a_comparison_names_each_groups_faults_and_best_says_so():
    clean = tpcc_record("A", run_id="a")
    removal = faulty("B", events=(REMOVAL,), run_id="b", users=(8,), factor=2.0)
    report = build_report([clean, removal])
    _, groups = groups_of(clean, removal)
    assert [g.label for g in groups] == ["A", "B (with remove-device at 3 s)"]
    assert report.title == "oltplab comparison: A vs B"  # the faults are named below
    headline = report.sections[0]
    assert headline.notes[0] == (
        f"Best: B (with remove-device at 3 s), NOPM {2 * NOPM[8]:,} at 8 users, 2.00x the "
        f"best of A ({NOPM[8]:,}); measured with faults injected; the best without a fault: "
        f"A, NOPM {NOPM[8]:,} at 8 users.")
    comparison = next(s for s in report.sections if s.title.startswith("Comparison"))
    assert {r[5] for r in comparison.tables[0].rows} == {"B (with remove-device at 3 s)"}


def test_runs_of_one_label_with_and_without_faults_are_told_apart_by_them():
    clean = tpcc_record("A", run_id="a")
    kill = faulty("A", events=(KILL,), run_id="b",
                  config_extra={"inject": [{"kind": "kill-backend", "at_s": 18.0}]})
    failed = faulty("A", events=({"kind": "kill-backend", "error": "not fired: the run "
                                  "ended first"},), run_id="c",
                    config_extra={"inject": [{"kind": "kill-backend", "at_s": 99.0}]})
    _, groups = groups_of(clean, kill, failed)
    assert [g.label for g in groups] == ["A (tpcc config 1)", "A (with kill-backend at 18 s)",
                                         "A (tpcc config 3)"]  # a fault that never fired
    assert groups[1].faults == ["kill-backend at 18 s"] and groups[2].faults == []

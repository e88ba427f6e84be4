"""The report's charts from fixture runs: every chart drawn or replaced by a note that says
why, and the drawn values equal to figures known in advance (see test_report_fixtures)."""

from __future__ import annotations

import pytest

from oltplab.report import fio, tpcc
from oltplab.report.build import build_report
from oltplab.report.charts import bar_chart, line_chart
from oltplab.report.model import MAX_POINTS, downsample
from oltplab.report.runs import prepare
from oltplab.report.timeline import timeline_charts
from oltplab.telemetry.derive import derive_steps

from .test_report_fixtures import (MEASURE_S, NOPM, SPIKE_MS, USERS, fio_record, groups_of,
                                   timeline_dict, tpcc_record, write_run)

TPCC_CHARTS = {"tpm_nopm", "tpm_per_user", "new_order_latency", "cpu_idle", "disk_latency",
               "disk_iops", "orders_per_watt", "device_gb", "device_max_latency"}
TIME_CHARTS = {"iops_time", "mbps_time", "latency_time", "cpu_time", "power_time",
               "power_hist"}


def by_key(charts):
    return {c.key: c for c in charts}


def series(chart, name):
    return next(s for s in chart.series if s.name == name)


@pytest.fixture
def run(tmp_path):
    return write_run(tmp_path / "run", tpcc_record("pg18"), timeline_dict())


def test_single_tpcc_run_draws_every_chart(run):
    report = build_report([run])
    charts = by_key(report.charts)
    assert set(charts) == TPCC_CHARTS | TIME_CHARTS
    assert [c.key for c in charts.values() if c.empty] == []
    for c in charts.values():
        assert c.title and c.x_label and c.y_label, c.key


def test_known_per_user_figures(run):
    _, groups = groups_of(run)
    charts = by_key(tpcc.charts(groups))
    assert charts["tpm_nopm"].series[0].x == ("1", "2", "4", "8")
    assert series(charts["tpm_nopm"], "NOPM").y == tuple(NOPM[u] for u in USERS)
    assert series(charts["tpm_per_user"], "TPM per user").y == pytest.approx(
        [round(NOPM[u] * 2.3) / u for u in USERS])
    assert series(charts["cpu_idle"], "CPU idle").y == pytest.approx([100 - 10 * u
                                                                     for u in USERS])
    # sda: 100u reads/s at 0.5u ms and 50u writes/s at u ms -> 2u/3 ms over all I/Os; the last
    # step has one 50 ms w_await interval: (6*4*800 + (5*8 + 50)*400) / (6*1200) ms
    avg = series(charts["disk_latency"], "sda average").y
    assert avg[:3] == pytest.approx([2 * u / 3 for u in USERS[:3]])
    assert avg[3] == pytest.approx((6 * 4 * 800 + (5 * 8 + SPIKE_MS) * 400) / 7200)
    p99 = series(charts["disk_latency"], "sda p99 of per-second await").y
    assert p99[3] == pytest.approx((4 * 800 + SPIKE_MS * 400) / 1200)  # nearest rank of 6
    assert series(charts["disk_iops"], "sda reads/s").y == pytest.approx([100 * u
                                                                         for u in USERS])
    assert series(charts["orders_per_watt"], "orders per watt").y == pytest.approx(
        [NOPM[u] / (200 + 10 * u) for u in USERS])
    gb = charts["device_gb"]
    assert series(gb, "read").x == ("sda", "sdb")
    assert series(gb, "read").y[0] == pytest.approx(0.8 * sum(USERS) * MEASURE_S / 1024)
    assert series(gb, "written").y[1] == pytest.approx(3.2 * sum(USERS) * MEASURE_S / 1024)
    highest = charts["device_max_latency"]
    assert series(highest, "highest per-second w_await").y[0] == SPIKE_MS
    assert series(highest, "highest per-second r_await").y[0] == pytest.approx(4.0)


def test_percentile_labels_say_what_they_are(run):
    _, groups = groups_of(run)
    charts = by_key(tpcc.charts(groups))
    assert "99th percentile of the per-second average latencies" in \
        charts["disk_latency"].caption
    assert "not of single I/Os" in charts["disk_latency"].caption
    assert "p99 of New-Order response times" in [s.name for s in
                                                 charts["new_order_latency"].series]


def test_time_charts_shade_the_measured_windows(run):
    data = prepare(run)
    charts = by_key(timeline_charts(data))
    bands = charts["iops_time"].bands
    assert [b.label for b in bands] == ["1 user", "2 users", "4 users", "8 users"]
    assert (bands[0].x0, bands[0].x1) == (2.0, 8.0)  # ramp-up of 2 s excluded
    names = [s.name for s in charts["iops_time"].series]
    assert names == ["sda (datadir) reads", "sda (datadir) writes", "sdb (waldir) reads",
                     "sdb (waldir) writes"]
    hist = charts["power_hist"]
    assert sum(hist.series[0].y) == len(timeline_dict()["columns"]["t_ns"])


def test_no_telemetry_means_notes_not_numbers(tmp_path):
    rec = write_run(tmp_path / "bare", tpcc_record("bare"))
    charts = by_key(build_report([rec]).charts)
    drawn = {k for k, c in charts.items() if not c.empty}
    assert drawn == {"tpm_nopm", "tpm_per_user", "new_order_latency"}
    for k in (TPCC_CHARTS | TIME_CHARTS) - drawn:
        assert charts[k].note.startswith(charts[k].title + ": no data (")
        assert "timeline.json" in charts[k].note


def test_no_power_meter_is_said(tmp_path):
    rec = write_run(tmp_path / "np", tpcc_record("np"), timeline_dict(power=False))
    charts = by_key(build_report([rec]).charts)
    for k in ("orders_per_watt", "power_time", "power_hist"):
        assert charts[k].empty
        assert "no power readings: no /sys/class/powercap" in charts[k].note
    assert not charts["cpu_idle"].empty


def test_telemetry_recorded_in_the_steps_is_used(tmp_path):
    rec = tpcc_record("steps")
    for step, fig in zip(rec["steps"], derive_steps(timeline_dict(), rec["steps"])):
        step["telemetry"] = fig
    rec = write_run(tmp_path / "s", rec)  # no timeline.json
    data = prepare(rec)
    assert data.telemetry_from == "run.json"
    charts = by_key(build_report([rec]).charts)
    assert not charts["cpu_idle"].empty and not charts["device_gb"].empty
    assert charts["iops_time"].empty  # needs the timeline itself


def test_fio_charts_known_values():
    _, groups = groups_of(fio_record())
    charts = by_key(fio.charts(groups))
    scatter = charts["fio_iops_latency"]
    s = scatter.series[0]
    assert s.text == ("4 KiB", "8 KiB", "16 KiB", "64 KiB", "256 KiB")
    assert s.x[0] == pytest.approx(40000)
    # reads at 32/IOPS s, writes 1.5x as long; 70/30 weights -> 1.15x
    assert s.y[0] == pytest.approx(1.15 * 32 / 40000 * 1000)
    tput = charts["fio_throughput"].series[0]
    assert tput.x == s.text
    assert tput.y[-1] == pytest.approx(40000 / 8 * 262144 / 1e6)
    lat = charts["fio_latency"]
    assert lat.series[0].x[0] == "4k-randrw-70"  # in the order of the run
    assert "read p99.9" in [x.name for x in lat.series]


def test_fio_run_over_time():
    data = prepare(fio_record())
    chart = fio.iops_time_chart(data)
    assert len(chart.bands) == 5 and chart.bands[1].label == "8k-randrw-70"
    assert None in chart.series[0].y  # a gap between profiles


def test_long_series_are_averaged_and_say_so():
    x = list(range(4000))
    chart = line_chart("k", "T", "s", "y (unit)", x, [("a", [float(v) for v in x], 0)],
                       why="none")
    assert len(chart.series[0].x) <= MAX_POINTS
    assert "averaged in groups of 3" in chart.caption
    xs, (ys,), k = downsample([0, 1, 2, 3], [[1.0, None, 3.0, 5.0]], max_points=2)
    assert (xs, ys, k) == ([0.5, 2.5], [1.0, 4.0], 2)


def test_bar_chart_of_repeats_shows_their_range():
    chart = bar_chart("k", "T", "users", "NOPM", [("A", "#000", 0, {1: [10, 20, 30]})],
                      why="none")
    s = chart.series[0]
    assert (s.y, s.lo, s.hi) == ((20,), (10,), (30,))
    assert "lowest and highest" in chart.caption
    empty = bar_chart("k", "Title", "users", "NOPM", [("A", "#000", 0, {})], why="no steps")
    assert empty.empty and empty.note == "Title: no data (no steps)."


def test_lines_of_one_point_each_are_drawn_as_bars_one_per_line():
    chart = line_chart("k", "T", "users", "OPM", [1, 4, 8],
                       [("a", [None, 10.0, None], 0), ("b", [None, None, 30.0], 1)], why="none")
    assert chart.kind == "bar"
    assert [(s.name, s.x, s.y, s.style) for s in chart.series] == [
        ("a", ("4", "8"), (10.0, None), 0), ("b", ("4", "8"), (None, 30.0), 1)]
    longer = line_chart("k", "T", "users", "OPM", [1, 4],
                        [("a", [5.0, 10.0], 0), ("b", [None, 30.0], 1)], why="none")
    assert longer.kind == "line"  # one line has two points: lines, with markers


def test_no_mib_is_printed_as_mb(tmp_path):
    """The disks' figures are in 2^20 and 2^30 bytes: every label of the report names them
    MiB and GiB (MB and GB are 10^6 and 10^9 bytes)."""
    import re
    rec = write_run(tmp_path / "run", tpcc_record("pg18"), timeline_dict())
    report = build_report([rec])
    texts = [t for c in report.charts for t in (c.y_label, c.caption)]
    texts += [t for s in report.sections for table in s.tables
              for t in (*table.columns, table.caption)]
    wrong = re.compile(r"\b[MG]B\b[^.;]*2\^[23]0|2\^[23]0[^.;]*\b[MG]B\b")
    assert [t for t in texts if wrong.search(t)] == []
    assert {"read MiB/s", "GiB written"} <= {c for s in report.sections for table in s.tables
                                             for c in table.columns}

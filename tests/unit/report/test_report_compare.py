"""Comparisons: repeats grouped by label and configuration, ratios and noise verdicts with
known answers, and the comparison report's sections."""

from __future__ import annotations

import pytest

from oltplab.report.build import build_report, default_out_dir
from oltplab import kinds
from oltplab.report.compare import compare, headlines, spread_table, unstable
from oltplab.report.runs import group_key

from .test_report_fixtures import NOPM, fio_record, groups_of, tpcc_record

TPCC, FIO = kinds.get("tpcc").metrics, kinds.get("fio").metrics


def repeats(name, factors, **kw):
    return [tpcc_record(name, run_id=f"2026{name}{i}", factor=f, **kw)
            for i, f in enumerate(factors)]


def test_repeats_are_grouped_by_label_and_workload():
    a1, a2 = repeats("pg17", (1, 1))
    other_seed = tpcc_record("pg17", run_id="x", config_extra={"seed": 7})
    other_mode = tpcc_record("pg17", run_id="y", config_extra={"mode": "sql"})
    assert group_key(a1) == group_key(a2) == group_key(other_seed)
    assert group_key(a1) != group_key(other_mode)
    runs, groups = groups_of(a1, a2, other_mode)
    assert [len(g.runs) for g in groups] == [2, 1]
    assert [r.label for r in runs] == ["pg17 (tpcc config 1) #1", "pg17 (tpcc config 1) #2",
                                       "pg17 (tpcc config 2)"]
    assert groups[0].runs[0].color == groups[0].runs[1].color != groups[1].color


def test_ratio_without_repeats_makes_no_noise_claim():
    _, groups = groups_of(tpcc_record("A", run_id="a"), tpcc_record("B", run_id="b", factor=2.3))
    comps = compare(groups, TPCC)
    nopm = {c.key: c for c in comps if c.metric == "NOPM"}
    assert set(nopm) == {1, 2, 4, 8}
    assert nopm[8].ratio == pytest.approx(round(NOPM[8] * 2.3) / NOPM[8])
    assert nopm[8].verdict == "noise unknown"
    assert nopm[8].sentence().startswith("NOPM at 8 users: B 2.30x A (noise unknown")
    assert headlines(comps, "best-and-top") == [nopm[8].sentence()]  # best and highest: 8 users


def test_repeats_on_both_sides_use_welch():
    _, groups = groups_of(*repeats("A", (1.0, 1.03, 0.97)), *repeats("B", (2.0, 2.06, 1.94)))
    nopm = {c.key: c for c in compare(groups, TPCC) if c.metric == "NOPM"}
    c = nopm[4]
    assert c.base_values == (3400, 3502, 3298)
    assert c.ratio == pytest.approx(2.0)
    assert c.verdict == "larger than noise" and "Welch's t" in c.test


def test_overlapping_repeats_are_within_noise():
    _, groups = groups_of(*repeats("A", (1.0, 1.05, 0.95)), *repeats("C", (1.02, 0.97)))
    nopm = {c.key: c for c in compare(groups, TPCC) if c.metric == "NOPM"}
    assert nopm[8].verdict == "within noise"
    assert nopm[8].ratio == pytest.approx((5100 + 4850) / 2 / 5000)


def test_one_side_repeated_is_set_against_its_range():
    _, groups = groups_of(*repeats("A", (1.0, 1.1, 0.9)), tpcc_record("D", run_id="d",
                                                                      factor=1.5))
    nopm = {c.key: c for c in compare(groups, TPCC) if c.metric == "NOPM"}
    assert nopm[1].verdict == "larger than noise"  # 500 > range 200
    assert "range of 3 repeats" in nopm[1].test


def test_spread_of_repeats():
    _, groups = groups_of(*repeats("A", (1.0, 1.1, 0.9)))
    t = spread_table(groups, TPCC)
    row = next(r for r in t.rows if r[0] == "NOPM" and r[1] == "1 user")
    assert row[3:9] == (3, 1000, pytest.approx(100.0), pytest.approx(10.0), 900, 1100)
    assert row[9] == pytest.approx(4.302653 * 100 / 3 ** 0.5, rel=1e-5)  # t(0.975, 2) = 4.3027


def test_unstable_repeats_are_named_above_five_percent_cv():
    _, groups = groups_of(*repeats("A", (1.0, 1.1, 0.9)))
    lines = unstable(groups, TPCC)
    assert any(line.startswith("unstable: NOPM at 1 user of A varies by 10.0%") for line in lines)
    _, steady = groups_of(*repeats("B", (1.0, 1.01, 0.99)))
    assert unstable(steady, TPCC) == []


def test_fio_comparison_per_profile():
    _, groups = groups_of(fio_record("ssd", run_id="s"), fio_record("nvme", run_id="n",
                                                                    factor=3))
    comps = compare(groups, FIO)
    iops = [c for c in comps if c.metric == "IOPS"]
    assert [c.at for c in iops][:2] == ["4k-randrw-70", "8k-randrw-70"]
    assert all(c.ratio == pytest.approx(3.0) for c in iops)
    lat = [c for c in comps if c.metric == "average latency (ms)"]
    assert all(c.ratio == pytest.approx(1 / 3) for c in lat)


def test_comparison_report_sections():
    runs = [*repeats("A", (1.0, 1.02)), *repeats("B", (2.0, 2.02)), fio_record()]
    report = build_report(runs)
    titles = [s.title for s in report.sections]
    assert titles[:7] == ["Headline: tpcc", "Headline: fio", "Comparison: tpcc",
                          "Results: tpcc", "Comparison: fio", "Results: fio", "Runs"]
    assert titles[7:12] == ["Run A #1", "Run A #2", "Run B #1", "Run B #2", "Run fio"]
    assert titles[12:] in ([], ["Charts without data"])
    keys = [c.key for c in report.charts]
    assert len(keys) == len(set(keys))  # unique file names
    assert all(not c.empty for s in report.sections[:-1] for c in s.charts)
    headline = report.sections[0]
    rows = {(r[0], r[1]): r for r in headline.tables[0].rows}
    assert rows[("B", "8 users")][5] == pytest.approx(1.99, abs=0.01)  # ratio to A
    assert rows[("B", "8 users")][6] == "larger than noise"
    assert headline.notes[0].startswith("Best: B, NOPM ")
    comparison = report.sections[2]
    # (10000 + 10100) / 2 over (5000 + 5100) / 2
    assert comparison.notes[0][0].startswith("NOPM at 8 users: B 1.99x A (larger than noise; "
                                             "Welch's t = ")
    assert comparison.notes[0][0].endswith("p < 0.001 (n = 2, 2))")
    assert "Welch's t-test" in comparison.notes[-1]


def test_default_output_folders():
    one = tpcc_record("A", run_id="20260101T000000-A")
    assert str(default_out_dir([one])) == "reports/20260101T000000-A"
    two = default_out_dir([one, tpcc_record("B", run_id="20260101T000001-B")])
    assert two.name.startswith("compare-A-vs-B-") and len(two.name) == len("compare-A-vs-B-") + 8

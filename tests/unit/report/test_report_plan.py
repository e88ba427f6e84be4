"""The plan report's own charts: one line per cell over the user counts, repeats averaged,
steps cut short left out; backup MB/s per cycle."""

from __future__ import annotations

from oltplab.plans.model import load_plan
from oltplab.report.plan import plan_section

from .test_report_fixtures import NOPM, tpcc_record

PLAN = """
[plan]
name = "p"
repeat = 2
[matrix]
db_memory = ["1GiB", "2GiB"]
[[step]]
kind = "tpcc"
[[step]]
kind = "backup"
"""


def _labelled(record: dict, cell: str, repeat: int, step: int = 1) -> dict:
    return {**record, "id": f"{record['id']}-{cell}-{repeat}-{step}",
            "plan": {"name": "p", "cell": cell, "repeat": repeat, "step": step}}


def _backup(cell: str, rates: list[float]) -> dict:
    cycles = [{"cycle": i + 1, "backup": {"seconds": 1.0, "mb_per_s": r},
               "restore": {"seconds": 2.0, "mb_per_s": r / 2}} for i, r in enumerate(rates)]
    return _labelled({"kind": "backup", "id": "b", "name": f"p.{cell}.backup",
                      "status": "completed", "cycles": cycles, "steps": []}, cell, 1, 2)


def test_plan_charts_draw_a_line_per_cell_and_a_bar_per_cycle(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(PLAN)
    plan = load_plan(f, tmp_path)
    a1 = _labelled(tpcc_record("a", factor=1.0), "db_memory=1GiB", 1)
    a2 = _labelled(tpcc_record("a", factor=1.2), "db_memory=1GiB", 2)
    b1 = _labelled(tpcc_record("b", factor=2.0), "db_memory=2GiB", 1)
    b1["steps"][-1]["partial"] = True  # the last step (8 users) was cut short
    section = plan_section(plan, [a1, a2, b1, _backup("db_memory=1GiB", [100.0, 80.0])])
    charts = {c.key: c for c in section.charts}
    assert "it varies db_memory; steps 1. tpcc, 2. backup; 2 repeats" in section.notes[0]

    tpm = charts["plan_tpm_nopm"]
    assert [s.name for s in tpm.series] == ["db_memory=1GiB: TPM", "db_memory=1GiB: NOPM",
                                            "db_memory=2GiB: TPM", "db_memory=2GiB: NOPM"]
    assert tpm.x_ticks == (1.0, 2.0, 4.0, 8.0)  # the user counts run, not 1.2, 1.4 ...
    nopm_a, nopm_b = tpm.series[1], tpm.series[3]
    assert nopm_a.x == (1.0, 2.0, 4.0, 8.0) and nopm_a.style == 1
    assert nopm_a.y[1] == round(NOPM[2] * 1.0) / 2 + round(NOPM[2] * 1.2) / 2
    assert nopm_b.y == (2 * NOPM[1], 2 * NOPM[2], 2 * NOPM[4], None)
    assert tpm.series[0].color == nopm_a.color != nopm_b.color
    # the fixtures carry no telemetry: those charts say why instead of drawing
    assert charts["plan_cpu"].empty and "no step has telemetry" in charts["plan_cpu"].note

    rate = charts["plan_backup_rate"]
    assert [(s.name, s.x, s.y) for s in rate.series] == [("backup", ("1", "2"), (100.0, 80.0)),
                                                         ("restore", ("1", "2"), (50.0, 40.0))]


def test_two_tpcc_steps_of_a_cell_are_two_lines_not_one_average(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(PLAN.replace('kind = "backup"', 'kind = "tpcc"'))
    plan = load_plan(f, tmp_path)
    first = _labelled(tpcc_record("a", factor=1.0), "db_memory=1GiB", 1, step=1)
    second = _labelled(tpcc_record("a", factor=3.0), "db_memory=1GiB", 1, step=2)
    (tpm, *_) = plan_section(plan, [first, second]).charts
    assert [s.name for s in tpm.series] == [
        "db_memory=1GiB step 1: TPM", "db_memory=1GiB step 1: NOPM",
        "db_memory=1GiB step 2: TPM", "db_memory=1GiB step 2: NOPM"]
    assert tpm.series[3].y[0] == 3 * NOPM[1]


NEIGHBOURS = """
[plan]
name = "p"
[defaults]
instances = 3
[matrix]
backup = [0, 1]
[[step]]
kind = "neighbours"
"""


def _neighbours(cell: str, backup: int, nopm: list[int]) -> dict:
    instances = [{"name": f"pg{i + 1}", "role": "tpcc", "nopm": n, "tpm": 2 * n}
                 for i, n in enumerate(nopm)]
    instances += [{"name": f"pg{len(nopm) + 1}", "role": "backup", "cycles": []}] * backup
    return _labelled({"kind": "neighbours", "id": "n", "name": f"p.{cell}", "status": "completed",
                      "steps": [], "instances": instances,
                      "config": {"neighbours": {"instances": 3, "backup": backup}},
                      "average": {"nopm": sum(nopm) // len(nopm),
                                  "tpm": 2 * sum(nopm) // len(nopm),
                                  "instances": len(nopm)}}, cell, 1)


def test_neighbours_cells_set_the_average_instance_side_by_side(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(NEIGHBOURS)
    plan = load_plan(f, tmp_path)
    section = plan_section(plan, [_neighbours("backup=0", 0, [100, 110, 120]),
                                  _neighbours("backup=1", 1, [90, 80])])
    (chart,) = section.charts
    assert [(s.name, s.x) for s in chart.series] == [
        ("backup=0", ("pg1", "pg2", "pg3", "average")),
        ("backup=1", ("pg1", "pg2", "pg3", "average"))]
    assert chart.series[0].y == (100, 110, 120, 110) and chart.series[1].y == (90, 80, None, 85)
    (table,) = section.tables
    assert table.rows == (("backup=0", 3, 0, 1, 220, 110, 100.0),
                          ("backup=1", 3, 1, 1, 170, 85, 77.3))


def test_a_plan_of_one_user_count_draws_a_bar_per_cell_named_with_its_faults(tmp_path):
    """A line of one point draws nothing a reader can see (a line needs two points); each
    cell's runs with a fault injected are named with it."""
    f = tmp_path / "p.toml"
    f.write_text(PLAN.replace('kind = "backup"', 'kind = "tpcc"'))
    plan = load_plan(f, tmp_path)
    a = _labelled(tpcc_record("a", users=(4,)), "db_memory=1GiB", 1)
    b = _labelled(tpcc_record("b", users=(4,), factor=2.0), "db_memory=2GiB", 1)
    b["events"] = [{"kind": "remove-device", "requested_at_s": 3.0, "at_s": 3.01}]
    (tpm, *_) = plan_section(plan, [a, b]).charts
    assert tpm.kind == "bar" and "drawn as bars" in tpm.caption
    assert [(s.name, s.x, s.y, s.style) for s in tpm.series] == [
        ("db_memory=1GiB: TPM", ("4",), (round(NOPM[4] * 2.3),), 0),
        ("db_memory=1GiB: NOPM", ("4",), (NOPM[4],), 1),
        ("db_memory=2GiB (with remove-device at 3 s): TPM", ("4",),
         (round(2 * NOPM[4] * 2.3),), 0),
        ("db_memory=2GiB (with remove-device at 3 s): NOPM", ("4",), (2 * NOPM[4],), 1)]
    assert tpm.series[1].text == (f"{NOPM[4]:,}",)
    from oltplab.report.png import render_png
    assert render_png(tpm)[:4] == b"\x89PNG"

"""A report names the shop's headline OPM, never NOPM: its neighbours runs are compared and
summed up over repeats by OPM (their instances carry ``opm``), its runs on two engines are to
be compared by OPM; a tpcc run's headline stays NOPM."""

from __future__ import annotations

from oltplab import kinds
from oltplab.report.build import build_report
from oltplab.report.compare import repeat_lines

from .test_report_engines import mariadb_record
from .test_report_fixtures import tpcc_record


def _run(name: str, workload: str, key: str, figures: list[int], repeat: int = 1) -> dict:
    role = "dvds" if workload == "dvds" else "tpcc"
    instances = [{"name": f"pg{i + 1}", "role": role, key: n, "tpm": 3 * n, "status": "completed"}
                 for i, n in enumerate(figures)]
    return {"kind": "neighbours", "id": f"{name}-{repeat}", "name": name, "status": "completed",
            "workload": workload, "steps": [], "instances": instances,
            "config": {"neighbours": {"instances": len(figures), "backup": 0,
                                      "workload": workload}},
            "group": {"id": name, "index": repeat, "of": 2},
            "average": {key: sum(figures) // len(figures), "tpm": 3 * sum(figures) // len(figures),
                        "instances": len(figures)}}


def _headline(report):
    [section] = [s for s in report.sections if s.title.startswith("Headline")]
    return section


def test_the_shops_neighbours_runs_are_compared_by_opm():
    quiet = [_run("quiet", "dvds", "opm", [900, 1000], r) for r in (1, 2)]
    noisy = [_run("noisy", "dvds", "opm", [450, 500], r) for r in (1, 2)]
    section = _headline(build_report(quiet + noisy, baseline="quiet"))
    [table] = section.tables
    assert table.title.startswith("OPM per group") and "NOPM" not in table.title
    average = "the average workload instance"
    assert {(row[0], row[1], row[3]) for row in table.rows} >= {
        ("quiet", average, 950), ("noisy", average, 475)}
    assert section.notes[0].startswith("Best: quiet, OPM 1,000 at pg2")
    lines = repeat_lines(quiet, kinds.find("neighbours").metrics_for(quiet))
    assert f"OPM at {average}: mean 950 ± 0 (95% CI, n = 2)" in "\n".join(lines), lines


def test_a_tpcc_neighbours_run_is_still_compared_by_nopm():
    runs = [_run("a", "tpcc", "nopm", [100, 120]), _run("b", "tpcc", "nopm", [50, 60])]
    [table] = _headline(build_report(runs, baseline="a")).tables
    assert table.title.startswith("NOPM per group")


def _shop(record: dict) -> dict:
    """``record`` (a fixture's tpcc run) as the shop's: its kind, its workload, OPM per step."""
    record.update(kind="dvds", workload="dvds")
    for step in record["steps"]:
        step["opm"] = step.pop("nopm")
        step["client_opm"] = step.pop("client_nopm")
    return record


def _notes(report) -> str:
    return " ".join(str(n) for s in report.sections for n in s.notes)


def test_the_shops_runs_on_two_engines_are_to_be_compared_by_opm():
    notes = _notes(build_report([_shop(tpcc_record("shop", run_id="pg1")),
                                 _shop(mariadb_record("shop", run_id="my1", factor=0.8))]))
    assert "different database engines: compare them by OPM." in notes
    assert "NOPM" not in notes
    tpcc = _notes(build_report([tpcc_record("tpcc", run_id="pg1"),
                                mariadb_record("tpcc", run_id="my1", factor=0.8)]))
    assert "compare them by NOPM." in tpcc

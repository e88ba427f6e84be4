"""A plan's status read back from run folders, and attempts superseded by the run that
completes their repeat (kept as measured, no longer counted)."""

from __future__ import annotations

import json

import pytest

from oltplab.plans.run import SUPERSEDED, _labels, plan_status, supersede
from oltplab.plans.model import load_plan
from oltplab.results.store import RunRecord, list_runs

PLAN = """
[plan]
name = "p"
repeat = 2
[[step]]
kind = "tpcc"
[[step]]
kind = "backup"
"""


def _attempt(results, kind: str, step: int, repeat: int, status: str) -> dict:
    rec = RunRecord.create(results, kind, f"p.{kind}",
                           plan={"name": "p", "cell": "all", "repeat": repeat, "step": step})
    rec.finish(status, None if status == "completed" else status)
    return {**rec.data, "_path": str(rec.path)}


def test_status_counts_each_step_and_supersede_moves_unfinished_attempts(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(PLAN)
    results = tmp_path / "results"
    plan = load_plan(f, results)
    _attempt(results, "tpcc", 1, 1, "completed")
    _attempt(results, "tpcc", 1, 2, "completed")
    cut = _attempt(results, "backup", 2, 1, "interrupted")
    broken = _attempt(results, "backup", 2, 1, "failed")
    tpcc, backup = plan_status(plan, results)
    assert (tpcc.state, tpcc.done) == ("done", (1, 2))
    assert (backup.state, backup.done, backup.failed, backup.todo) == ("failed", (), (1,), (1, 2))

    heir = _attempt(results, "backup", 2, 1, "completed")
    assert supersede(plan, backup.item, 1, heir, results) == [cut["id"], broken["id"]]
    assert sorted(r["id"] for r in list_runs(results)) == sorted(
        [r["id"] for r in tpcc.runs] + [heir["id"]])
    saved = json.loads((results / heir["id"] / "run.json").read_text())
    assert saved["superseded"] == [cut["id"], broken["id"]]
    moved = results / heir["id"] / SUPERSEDED / cut["id"] / "run.json"
    assert json.loads(moved.read_text())["status"] == "interrupted"
    (_, backup) = plan_status(plan, results)
    assert (backup.state, backup.done, backup.failed) == ("pending", (1,), ())


def test_resume_does_not_count_a_run_of_another_step_kind_inserted_before_it(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(PLAN)
    results = tmp_path / "results"
    plan = load_plan(f, results)
    tpcc, backup = plan.items
    for repeat in (1, 2):  # as a plan run records them now
        rec = RunRecord.create(results, "tpcc", tpcc.label, **_labels(plan, tpcc, repeat))
        rec.finish("completed")
    assert [s.state for s in plan_status(plan, results)] == ["done", "pending"]

    f.write_text(PLAN.replace('kind = "tpcc"', 'kind = "backup"\n[[step]]\nkind = "tpcc"'))
    inserted = load_plan(f, results)
    backup, tpcc2, _ = plan_status(inserted, results)
    assert (backup.state, backup.done) == ("pending", ())  # the tpcc runs are not its runs
    assert backup.stale == 2


def test_ctrl_c_while_the_sampler_starts_reaches_the_plan(tmp_path):
    """Ctrl-C that lands while a run's sampler starts is raised from the run's ``with``
    (and the plan stops), the run recorded as interrupted."""
    from oltplab.runs.lifecycle import recording
    from oltplab.telemetry.sampler import Sampler

    class CutAtStart(Sampler):
        def start(self):
            raise KeyboardInterrupt

    rec = RunRecord.create(tmp_path, "tpcc", "r")
    with pytest.raises(KeyboardInterrupt):
        with recording(rec, CutAtStart(1.0, paths={}, power="none")):
            raise AssertionError("the body does not run")
    assert json.loads((rec.path / "run.json").read_text())["status"] == "interrupted"

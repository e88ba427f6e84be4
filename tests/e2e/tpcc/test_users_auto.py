"""``tpcc run --users auto:MAX`` against the real PostgreSQL: the search's record agrees with
the steps it ran; bad input is one line; the E9 example plan runs at tiny sizes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from oltplab.loadgen.sequence import FELL, FLAT, GAIN_PCT, MAX, step_tpm

from ..conftest import oltplab, saved_runs

E9 = Path(__file__).parents[3] / "examples" / "plans" / "e9-best-users.toml"


def assert_search_consistent(run: dict, auto_max: int) -> None:
    """users_auto follows from the recorded steps: doubling counts, every gain but the last
    at least GAIN_PCT, the stop reason, the peak and the knee."""
    steps, auto = run["steps"], run["users_auto"]
    users, tpms = [s["users"] for s in steps], [step_tpm(s) for s in steps]
    assert users == [2 ** i for i in range(len(steps))] and users[-1] <= auto_max
    assert auto["max"] == auto_max and auto["threshold_pct"] == GAIN_PCT
    assert auto["metric"] == "workload_tpm" and all(s["workload_tpm"] is not None for s in steps)
    gains = [(b - a) * 100 / a for a, b in zip(tpms, tpms[1:])]
    assert all(g >= GAIN_PCT for g in gains[:-1]), (tpms, gains)
    if gains and gains[-1] < GAIN_PCT:
        assert auto["stopped_because"] == (FELL if gains[-1] < 0 else FLAT)
        assert auto["knee"]["users"] == users[-1] and auto["knee"]["tpm"] == tpms[-1]
        assert auto["knee"]["gain_pct"] == pytest.approx(gains[-1], abs=0.01)
    else:
        assert auto["stopped_because"] == MAX and users[-1] * 2 > auto_max
        assert auto["knee"] is None
    best = max(range(len(steps)), key=lambda i: (tpms[i], -i))
    assert auto["peak"] == {"users": users[best], "tpm": tpms[best], "nopm": steps[best]["nopm"]}
    assert [s["users"] for s in auto["steps"]] == users


def test_auto_run_records_peak_and_knee_from_its_steps(scratch_w1, tmp_path):
    results = tmp_path / "results"
    p = oltplab("tpcc", "run", "--dsn", scratch_w1, "--users", "auto:4", "--rampup", "0s",
                "--duration", "2s", "--workers", "1", "--sample-interval", "0",
                "--name", "best", "--results-dir", str(results), check_rc=0)
    [run] = saved_runs(results)
    assert run["status"] == "completed" and run["config"]["run"]["users_auto"] == 4
    assert_search_consistent(run, 4)
    peak = run["users_auto"]["peak"]
    line = f"best user count: peak at {peak['users']} user"
    assert line in p.stdout and f"(TPM {peak['tpm']:,.0f}, NOPM" in p.stdout
    shown = oltplab("results", "show", "latest", "--results-dir", str(results), check_rc=0)
    assert line in shown.stdout

    from oltplab.report.build import build_report
    report = build_report([{**run, "_path": str(next(results.iterdir()))}])
    results_section = next(s for s in report.sections if s.title == "Results")
    assert any(n.startswith("best user count: peak at") for n in results_section.notes)
    chart = next(c for c in report.charts if c.key == "tpm_nopm")
    assert [s.name for s in chart.series] == ["TPM", "TPM (workload)", "NOPM"]
    assert any("peak" in x for x in chart.series[0].x), chart.series[0].x
    exported = oltplab("results", "export", "latest", "--csv", "--results-dir", str(results),
                       check_rc=0)
    best = Path(next(x for x in exported.stdout.split() if x.endswith("best_users.csv")))
    rows = best.read_text().splitlines()
    assert rows[0] == "users,TPM (workload),gain over the step before (%),step is"
    assert [int(r.split(",")[0]) for r in rows[1:]] == [s["users"] for s in run["steps"]]
    assert sum("peak" in r for r in rows[1:]) == 1


@pytest.mark.parametrize("users, needle", [
    ("auto:0", "MAX in auto:MAX"), ("auto:x", "MAX in auto:MAX"), ("auto,4", "auto stands alone"),
])
def test_bad_auto_is_one_line_exit_2(tmp_path, users, needle):
    p = oltplab("tpcc", "run", "--dsn", "postgresql://nowhere/x", "--users", users,
                "--results-dir", str(tmp_path / "results"))
    assert p.returncode == 2 and needle in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and not (tmp_path / "results").exists()


def test_auto_with_repeat_is_refused_in_one_line(tmp_path):
    p = oltplab("tpcc", "run", "--dsn", "postgresql://nowhere/x", "--users", "auto",
                "--repeat", "2", "--results-dir", str(tmp_path / "results"))
    assert p.returncode == 2 and "--repeat" in p.stderr and "Traceback" not in p.stderr


def test_e9_example_plan_runs_at_tiny_sizes(scratch_w1, tmp_path):
    text = E9.read_text()
    for old, new in (('users = "auto:16"', 'users = "auto:2"'), ('rampup = "2s"', 'rampup = "0s"'),
                     ('duration = "10s"', 'duration = "1s"'),
                     ('datadir = "oltplab-data/postgres"', f'dsn = "{scratch_w1}"'),
                     ("port = 5432", ""),
                     ('db_memory = "256MiB"', 'db_memory = "256MiB"\nsample_interval = 0')):
        assert old in text
        text = text.replace(old, new)
    plan = tmp_path / "e9.toml"
    plan.write_text(text)
    results = tmp_path / "results"
    p = oltplab("plan", "run", str(plan), "--results-dir", str(results), cwd=tmp_path,
                check_rc=0)
    runs = saved_runs(results)
    assert sorted(r["plan"]["cell"] for r in runs) == ["mode=procedures", "mode=sql"]
    for run in runs:
        assert run["status"] == "completed"
        assert_search_consistent(run, 2)
    assert p.stdout.count("best user count: peak at") == 2
    html = (tmp_path / "reports" / "plan-e9-best-users" / "report.html").read_text()
    assert html.count("best user count: peak at") >= 2


@pytest.mark.skipif(os.geteuid() != 0, reason="--cold drops the page cache: root only")
def test_cold_auto_run_drops_no_cache_after_its_last_step(scratch_w1, tmp_path):
    """A search decides after each step whether another follows; --cold drops the cache
    before the first step and between steps, never after the last one."""
    results = tmp_path / "results"
    oltplab("tpcc", "run", "--dsn", scratch_w1, "--cold", "--users", "auto:4", "--rampup", "0s",
            "--duration", "1s", "--workers", "1", "--sample-interval", "0",
            "--results-dir", str(results), check_rc=0)
    [run] = saved_runs(results)
    assert run["host_memory"]["cold_drops"] == len(run["steps"])


def test_step_end_says_whether_another_step_follows(scratch_w1):
    from oltplab.config import RunSpec, parse_user_option
    from oltplab.loadgen.manager import run_workload
    marks = []
    spec = RunSpec(**parse_user_option("auto:2"), rampup=0, duration=1, workers=1)
    outcome = run_workload(scratch_w1, spec, on_mark=lambda name, t, **a: marks.append((name, a)))
    assert outcome.status == "completed" and outcome.stopped_because is not None
    ends = [a for name, a in marks if name == "step_end"]
    assert [(a["step"], a["users"]) for a in ends] == [(i, s["users"])
                                                       for i, s in enumerate(outcome.steps)]
    assert [a["last"] for a in ends] == [False] * (len(ends) - 1) + [True]

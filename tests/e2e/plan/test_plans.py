"""``oltplab plan`` end to end: the example plan at tiny sizes on a managed server, its
interruption and ``--resume``, and a malformed plan refused before anything runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from interrupts import INTERRUPTIBLE, ctrl_c

from ..conftest import free_port, oltplab, saved_runs
from ..report.test_report_browser import browse, drawn_figures

EXAMPLE = Path(__file__).parents[3] / "examples" / "plans" / "modes.toml"


def _completed(results: Path) -> list[dict]:
    return [r for r in saved_runs(results) if r["status"] == "completed"]


def test_example_plan_interrupted_then_resumed_leaves_four_runs(tmp_path):
    plan = tmp_path / "modes.toml"
    plan.write_text(EXAMPLE.read_text()
                    .replace('datadir = "oltplab-data/postgres"', f'datadir = "{tmp_path / "pg"}"')
                    .replace("port = 5432", f"port = {free_port()}"))
    results = tmp_path / "results"
    shown = oltplab("plan", "show", str(plan), cwd=tmp_path, check_rc=0)
    assert "plan modes: 2 cells x 2 repeats = 4 runs" in shown.stdout
    assert not results.exists() and not (tmp_path / "pg").exists()  # show runs nothing

    proc = subprocess.Popen([sys.executable, "-m", "oltplab", "plan", "run", str(plan)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            **INTERRUPTIBLE)
    deadline = time.monotonic() + 180
    while (time.monotonic() < deadline
           and not (_completed(results) and len(saved_runs(results)) > 1)):
        time.sleep(0.2)  # the first run done, the second under way
    assert _completed(results), proc.stderr.read() if proc.poll() is not None else "no run"
    out, err = ctrl_c(proc)
    assert "--resume" in err
    cut = [r for r in saved_runs(results) if r["status"] == "interrupted"]
    assert len(cut) == 1 and len(saved_runs(results)) == 2

    status = oltplab("plan", "status", str(plan), cwd=tmp_path, check_rc=0)
    assert "(1/2 runs done" in status.stdout and "pending" in status.stdout

    again = oltplab("plan", "run", str(plan), cwd=tmp_path)
    assert again.returncode == 2 and "--resume" in again.stderr

    done = oltplab("plan", "run", str(plan), "--resume", cwd=tmp_path, check_rc=0,
                   timeout=240)
    runs = saved_runs(results)
    assert len(runs) == 4 and all(r["status"] == "completed" for r in runs)
    assert sorted((r["plan"]["cell"], r["plan"]["repeat"]) for r in runs) == [
        ("mode=procedures", 1), ("mode=procedures", 2), ("mode=sql", 1), ("mode=sql", 2)]
    assert {r["plan"]["name"] for r in runs} == {"modes"}
    assert {r["name"] for r in runs} == {"modes.mode-procedures", "modes.mode-sql"}
    assert all(r["group"]["of"] == 2 for r in runs)
    listed = json.loads(oltplab("results", "list", "--json", cwd=tmp_path, check_rc=0).stdout)
    assert sorted(r["id"] for r in listed) == sorted(r["id"] for r in runs)
    # the interrupted attempt is kept as measured, inside the run that completed its repeat
    heir = next(r for r in runs if r.get("superseded"))
    assert heir["superseded"] == [cut[0]["id"]]
    assert (heir["plan"]["cell"], heir["plan"]["repeat"]) == (cut[0]["plan"]["cell"],
                                                              cut[0]["plan"]["repeat"])
    kept = results / heir["id"] / "superseded" / cut[0]["id"] / "run.json"
    assert json.loads(kept.read_text())["status"] == "interrupted"
    assert "plan modes: 2 done, 0 failed, 0 pending" in done.stdout
    report = tmp_path / "reports" / "plan-modes" / "report.html"
    assert report.is_file() and f"report {report.relative_to(tmp_path)}" in done.stdout
    html = report.read_text()
    assert "modes.mode-procedures" in html and "modes.mode-sql" in html
    _plan_report_answers_first(report, runs)


def _plan_report_answers_first(report: Path, runs: list[dict]) -> None:
    """The plan's report as a reader opens it in a browser: its title names the plan and what
    it varies, the headline table and the best cell come first, then the charts, every one
    drawn; no chart without data stands among them, and each run has its own page."""
    dump = browse(report, "--dump-dom")
    assert dump.returncode == 0, dump.stderr[-2000:]
    dom = dump.stdout
    assert re.search(r"<h1>Plan modes: mode, 2 repeats</h1>", dom)
    sections = re.findall(r'<section id="([^"]+)"', dom)
    assert sections[0] == "headline" and sections.index("plan-modes") < sections.index(
        "comparison"), sections
    headline = dom[dom.index('<section id="headline"'):dom.index('<section id="plan-modes"')]
    assert "modes.mode-procedures" in headline and "modes.mode-sql" in headline
    assert re.search(r"Best: modes\.mode-(procedures|sql), NOPM [\d,]+ at 1 user", headline)
    figures = drawn_figures(dom)
    assert figures and all('class="main-svg"' in f for f in figures.values())
    empty_at = dom.find('<section id="charts-without-data"')
    body = dom if empty_at < 0 else dom[:empty_at]
    assert 'class="nodata"' not in body
    links = sorted(set(re.findall(r'href="(runs/[^"]+\.html)"', dom)))
    assert links == sorted(f"runs/{r['id']}.html" for r in runs)
    for link in links:
        page = report.parent / link
        assert page.is_file() and "Run details" in page.read_text()


def test_malformed_plan_is_refused_in_one_line(tmp_path):
    plan = tmp_path / "bad.toml"
    plan.write_text('[plan]\nname = "x"\n[matrix]\nusers = []\n')
    p = oltplab("plan", "run", str(plan), cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == f"oltplab: error: {plan}: matrix.users: the list is empty; " \
                               "give at least one value"
    assert not (tmp_path / "results").exists()


def _dsn_plan(tmp_path: Path, dsn: str, extra: str = "", duration: str = "1s") -> Path:
    """A plan of one cell against an existing W=1 database, at the smallest sizes."""
    plan = tmp_path / "p.toml"
    plan.write_text(f'[plan]\nname = "p"\n[defaults]\ndsn = "{dsn}"\nwarehouses = 1\n'
                    f'users = [1]\nrampup = "0s"\nduration = "{duration}"\nworkers = 1\n'
                    f'sample_interval = 0\n{extra}')
    return plan


def test_step_users_does_not_crash_plan(scratch_w1, tmp_path):
    plan = _dsn_plan(tmp_path, scratch_w1, '[[step]]\nkind = "tpcc"\nusers = [2]\n')
    p = oltplab("plan", "run", str(plan), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    [run] = saved_runs(tmp_path / "results")
    assert run["status"] == "completed" and [s["users"] for s in run["steps"]] == [2]


def test_unexpected_error_fails_its_cell_and_the_plan_goes_on(scratch_w1, tmp_path):
    blocker = tmp_path / "a-file"  # backups cannot go into a folder under a file
    blocker.write_text("")
    plan = _dsn_plan(tmp_path, scratch_w1, '[matrix]\nmode = ["procedures", "sql"]\n'
                     f'[[step]]\nkind = "backup"\ncycles = 1\nto = "{blocker / "backups"}"\n'
                     '[[step]]\nkind = "tpcc"\n')
    p = oltplab("plan", "run", str(plan), cwd=tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines()[-1] == (
        "oltplab: error: plan p: 2 cells not done: mode=procedures, mode=sql")
    runs = saved_runs(tmp_path / "results")
    failed = [r for r in runs if r["kind"] == "backup"]
    assert [r["status"] for r in failed] == ["failed", "failed"]
    assert all(r["error"].startswith("NotADirectoryError: ") for r in failed), failed
    done = sorted(r["plan"]["cell"] for r in runs if r["kind"] == "tpcc"
                  and r["status"] == "completed")
    assert done == ["mode=procedures", "mode=sql"]


def test_fio_step_on_a_missing_path_is_refused_before_anything_runs(tmp_path):
    missing = tmp_path / "mnt" / "nvme"
    plan = tmp_path / "f.toml"
    plan.write_text(f'[plan]\nname = "f"\n[[step]]\nkind = "fio"\npath = "{missing}"\n'
                    'size = "4MiB"\nramp = "0s"\nduration = "1s"\n')
    p = oltplab("plan", "run", str(plan), cwd=tmp_path)
    by_fio = oltplab("fio", "run", "--target", str(missing), cwd=tmp_path)
    assert by_fio.returncode == p.returncode == 2
    assert p.stderr == (f"oltplab: error: {plan}: step.1 (fio) in cell all: "
                        f"--target: {missing} does not exist\n")
    assert by_fio.stderr == f"oltplab: error: --target: {missing} does not exist\n"
    assert not (tmp_path / "mnt").exists() and not (tmp_path / "results").exists()


def test_resume_with_another_duration_runs_again_and_sets_the_old_run_aside(scratch_w1,
                                                                            tmp_path):
    plan = _dsn_plan(tmp_path, scratch_w1)
    results = tmp_path / "results"
    oltplab("plan", "run", str(plan), cwd=tmp_path, check_rc=0)
    [first] = saved_runs(results)
    changed = ("--resume", "--set", "duration=2s")
    status = oltplab("plan", "status", str(plan), "--set", "duration=2s", cwd=tmp_path,
                     check_rc=0)
    assert "pending  all  (0/1 runs done, 1 of another configuration)" in status.stdout
    oltplab("plan", "run", str(plan), *changed, cwd=tmp_path, check_rc=0)
    [run] = saved_runs(results)
    assert run["config"]["run"]["duration"] == 2.0 and run["superseded"] == [first["id"]]
    assert (results / run["id"] / "superseded" / first["id"] / "run.json").is_file()
    same = oltplab("plan", "run", str(plan), *changed, cwd=tmp_path, check_rc=0)
    assert "1 done, 0 failed, 0 pending" in same.stdout and len(saved_runs(results)) == 1


def test_second_plan_run_on_a_results_folder_in_use_is_refused(scratch_w1, tmp_path):
    plan = _dsn_plan(tmp_path, scratch_w1, duration="6s")
    results = tmp_path / "results"
    proc = subprocess.Popen([sys.executable, "-m", "oltplab", "plan", "run", str(plan)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not saved_runs(results) and proc.poll() is None:
        time.sleep(0.1)
    assert saved_runs(results), proc.communicate()[1]
    second = oltplab("plan", "run", str(plan), "--resume", cwd=tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert second.returncode != 0 and second.stderr.count("\n") == 1, second.stderr
    assert f"error: results is in use by another plan run (process {proc.pid})" in second.stderr
    assert [r["status"] for r in saved_runs(results)] == ["completed"]

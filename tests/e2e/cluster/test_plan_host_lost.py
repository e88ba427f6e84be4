"""A plan over hosts never loses what a host measured: a host frozen for longer than the
silence limit after its first run has finished is marked failed, its part's output stays on
the host (the plan says where), and ``plan run --resume`` brings it back and runs only what is
left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from clusters import wait_until

from oltplab.cluster import load_state
from oltplab.cluster.parts import KEEP_ROOT

from ..conftest import oltplab, server_pids
from .test_experiments_on_hosts import PLAN as SPREAD

# the two-host plan of test_experiments_on_hosts, with its one cell on h2, twice
PLAN = (SPREAD.replace('name = "spread"', 'name = "frozen"\nrepeat = 2')
        .replace('names = ["h1", "h2"]', 'names = ["h2"]').split("[matrix]")[0]
        + 'datadir = "plan-data/pg"\n')


def _kept(prefix: str) -> list[Path]:
    return sorted(KEEP_ROOT.glob(f"{prefix}-*")) if KEEP_ROOT.is_dir() else []


def _first_run_done(kept: list[Path]) -> bool:
    for folder in kept:
        for record in (folder / "out").glob("*/run.json"):
            try:
                if json.loads(record.read_text()).get("status") == "completed":
                    return True
            except ValueError:
                pass
    return False


def test_a_frozen_hosts_finished_run_is_kept_there_and_fetched_by_resume(site):
    from oltplab.plans.hosts import kept_prefix
    from oltplab.plans.model import load_plan
    (site / "frozen.toml").write_text(PLAN)
    prefix = kept_prefix(load_plan(site / "frozen.toml", site / "results"), site / "results")
    h2 = load_state(site / "cluster").worker("h2").process.pid
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("OLTPLAB_DSN", None)
    proc = subprocess.Popen([sys.executable, "-m", "oltplab", "plan", "run", "frozen.toml"],
                            cwd=site, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        # the first run has finished on h2 (its record is in the part's output there)
        assert wait_until(lambda: _first_run_done(_kept(prefix)), 300, 0.05)
        os.kill(h2, signal.SIGSTOP)  # longer than the silence limit (10 s)
        try:
            out, err = proc.communicate(timeout=240)
        finally:
            os.kill(h2, signal.SIGCONT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, (out, err)
    [folder] = _kept(prefix)
    assert "host h2: no heartbeat for 10 s" in err and \
        f"what it measured stays there in {folder} until plan run --resume fetches it" in err, err
    # the part stops by itself, its server too, and what it measured stays on the host
    assert wait_until(lambda: not server_pids(site / "plan-data"), 120)
    here = [p for p in (site / "results").glob("*-frozen*") if (p / "run.json").is_file()]
    assert here == []  # nothing came back to the coordinator
    assert _first_run_done([folder])
    kept_runs = {p.parent.name for p in folder.glob("out/*/run.json")}
    again = oltplab("plan", "run", "frozen.toml", "--resume", cwd=site, timeout=400)
    assert again.returncode == 0, again.stderr
    assert f"fetched from h2 ({folder})" in again.stderr, again.stderr
    assert "(2/2 runs done)" in again.stdout and \
        "plan frozen: 1 done, 0 failed, 0 pending" in again.stdout, again.stdout
    runs = [json.loads(p.read_text()) for p in (site / "results").glob("*-frozen*/run.json")]
    completed = [r for r in runs if r["status"] == "completed"]
    assert sorted(r["plan"]["repeat"] for r in completed) == [1, 2], runs
    # what the host measured before and during the freeze is here, as it was measured there
    assert kept_runs <= {p.name for p in (site / "results").iterdir()}, kept_runs
    assert _kept(prefix) == [] and wait_until(lambda: not server_pids(site / "plan-data"), 60)

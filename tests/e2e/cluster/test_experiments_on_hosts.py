"""Experiments over two "hosts" (Dask workers on 127.0.0.1 and 127.0.0.2), each host's part in
a process of its own there. In order on one cluster: ``neighbours run --hosts`` in one
record; a plan whose cells run on both hosts at once; then a neighbours host stopped
(SIGSTOP: hung) and one killed (SIGKILL), each leaving no server and no part process."""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import psutil
import pytest
from clusters import wait_until
from conftest import free_port

from oltplab.cluster import load_state
from oltplab.scenarios.neighbours import NeighboursProgress, NeighboursSpec
from oltplab.scenarios.neighbours_hosts import deal, run_neighbours_on_hosts
from oltplab.telemetry.sampler import Timeline

from ..conftest import oltplab, server_pids


def _parts(site: Path) -> list[int]:
    """The parts' processes that run now on this test's cluster (their workers run in
    ``site``; another test's cluster may have its own at the same time)."""
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        if p.info["status"] == psutil.STATUS_ZOMBIE \
                or "oltplab.cluster.partmain" not in " ".join(p.info["cmdline"] or []):
            continue
        try:
            if p.cwd().startswith(str(site)):
                found.append(p.pid)
        except psutil.Error:  # ended meanwhile
            pass
    return found


def test_deal_spreads_workloads_and_backups_over_the_hosts():
    assert deal(4, ("h1", "h2")) == {"h1": (1, 3), "h2": (2, 4)}
    assert deal(12, ("a", "b", "c", "d"))["d"] == (4, 8, 12)  # a backup instance on each
    with pytest.raises(Exception, match="--hosts: 3 hosts for 2 instances"):
        deal(2, ("a", "b", "c"))


def test_a_run_over_two_hosts_is_one_record_with_each_hosts_share(site):
    port = free_port(8)
    p = oltplab("neighbours", "run", "--hosts", "h1,h2", "--cluster-dir", str(site / "cluster"),
                "--instances", "3", "--backup", "1", "--root", str(site / "nb"), "--port",
                str(port), "--users", "1", "--rampup", "2s", "--duration", "6s",
                "--backup-interval", "2s", "--db-memory", "96MiB", "--power", "none",
                "--seed", "5", "--name", "spread", cwd=site, timeout=400)
    assert p.returncode == 0, p.stderr
    assert "average per workload instance (2)" in p.stdout, p.stdout
    (folder,) = (site / "results").glob("*-spread")
    run = json.loads((folder / "run.json").read_text())
    assert run["status"] == "completed" and run["config"]["hosts"]["hosts"] == ["h1", "h2"]
    assert run["host"]["name"] == "h1"  # this machine, by its hosts.toml name (h1's worker)
    assert [(e["name"], e["host"], e["role"]) for e in run["instances"]] == \
        [("pg1", "h1", "tpcc"), ("pg2", "h2", "tpcc"), ("pg3", "h1", "backup")]
    for e in run["instances"][:2]:
        assert e["status"] == "completed" and e["nopm"] > 0 and e["tpm"] >= e["nopm"], e
        assert (folder / e["run"] / "run.json").is_file(), e["run"]
        assert e["datadir"] == str(site / "nb" / e["host"] / e["name"])
    backup = run["instances"][2]
    assert backup["status"] == "completed" and len(backup["cycles"]) >= 1, backup
    assert [(h["host"], h["instances"], h["status"]) for h in run["hosts"]] == \
        [("h1", ["pg1", "pg3"], "completed"), ("h2", ["pg2"], "completed")]
    for h in run["hosts"]:  # each host's own record, fetched, names its share
        own = json.loads((folder / h["run"] / "run.json").read_text())
        assert own["share"] == {"host": h["host"], "instances":
                                [int(n[2:]) for n in h["instances"]]}
        assert own["command"][1:4] == ["neighbours", "run", "--hosts"], own["command"]
        assert own["host"]["name"] == h["host"]
        assert h["schema"]["warehouses"] == 1
    assert run["average"]["instances"] == 2
    # one timeline: this machine's, each host's placed on its clocks, the backups' instants
    tl = Timeline.from_dict(json.loads((folder / "timeline.json").read_text()))
    assert sorted(tl.hosts) == ["h1", "h2"]
    for h in ("h1", "h2"):  # each host's clock against this machine's, with the record
        clock = run["telemetry"]["hosts"][h]["clock"]
        assert abs(clock["wall_offset_ns"]) <= clock["bound_ns"] + 10**7, clock
    starts = [m for m in tl.marks if m["name"] == "backup-start"]
    assert len(starts) == len(backup["cycles"]) and {m["host"] for m in starts} == {"h1"}
    assert all(tl.t0_ns <= m["t_ns"] <= tl.end_ns for m in starts)
    assert not server_pids(site / "nb") and not _parts(site)


PLAN = """
[plan]
name = "spread"

[hosts]
names = ["h1", "h2"]
cluster_dir = "cluster"

[defaults]
warehouses = 1
build_users = 1
db_memory = "64MiB"
users = [1]
rampup = "1s"
duration = "4s"
sample_interval = "1s"
power = "none"

[matrix]
target = ["a", "b"]

[targets.a]
datadir = "plan-data/a/pg"

[targets.b]
datadir = "plan-data/b/pg"
"""


def test_a_plans_cells_run_on_both_hosts_at_once(site):
    (site / "spread.toml").write_text(PLAN)
    p = oltplab("plan", "run", "spread.toml", cwd=site, timeout=400)
    assert p.returncode == 0, p.stderr
    assert "plan spread: 2 done, 0 failed, 0 pending" in p.stdout + p.stderr
    runs = [json.loads(f.read_text()) for f in (site / "results").glob("*-spread.*/run.json")]
    assert sorted((r["plan"]["cell"], r["plan"]["host"], r["status"]) for r in runs) == \
        [("target=a", "h1", "completed"), ("target=b", "h2", "completed")]
    assert all(r["steps"][0]["nopm"] > 0 for r in runs)
    assert all(r["host"]["name"] == r["plan"]["host"] for r in runs), runs
    assert all(r["command"][1:] == ["plan", "run", "spread.toml"] for r in runs), runs
    # at once: each measured while the other did
    (a0, a1), (b0, b1) = [(r["started_at"], r["ended_at"]) for r in runs]
    assert a0 <= b1 and b0 <= a1, runs
    again = oltplab("plan", "run", "spread.toml", "--resume", cwd=site)
    assert again.returncode == 0 and "2 done, 0 failed, 0 pending" in again.stdout + again.stderr
    assert len(list((site / "results").glob("*-spread.*"))) == 2
    assert not server_pids(site / "plan-data") and not _parts(site)


def test_a_plan_refuses_hosts_it_cannot_use_in_one_line(site):
    (site / "bad.toml").write_text(PLAN.replace('names = ["h1", "h2"]', 'names = "h1"'))
    p = oltplab("plan", "run", "bad.toml", cwd=site)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0, p.stderr
    assert "hosts.names" in p.stderr
    (site / "bad.toml").write_text(PLAN.replace('"h2"]', '"h9"]'))
    p = oltplab("plan", "run", "bad.toml", "--results-dir", "bad", cwd=site)
    assert p.returncode == 2 and "h9" in p.stderr and "Traceback" not in p.stderr, p.stderr


class _Measuring(NeighboursProgress):
    def __init__(self):
        self.all = threading.Event()
        self.entered: dict[str, float] = {}

    def tick(self, elapsed_s, tpm, nopm, measuring, workloads, cycles) -> None:
        if workloads and measuring == workloads:
            self.all.set()

    def instance(self, entry: dict) -> None:
        self.entered.setdefault(entry["name"], time.monotonic())


def _run_and(site: Path, name: str, sig: signal.Signals) -> tuple[dict, float]:
    """A 2-instance run over h1 and h2 whose h2 worker gets ``sig`` once both measure: the
    record, and how long after the signal h2's instance was entered as failed (the run itself
    ends within a minute of it)."""
    progress, box = _Measuring(), {}
    h2 = load_state(site / "cluster").worker("h2").process.pid

    def hit():
        if progress.all.wait(240):
            time.sleep(1)
            box["parts"] = _parts(site)  # both hosts' parts, found as the checks find them
            box["t"] = time.monotonic()
            os.kill(h2, sig)

    helper = threading.Thread(target=hit, daemon=True)
    helper.start()
    spec = NeighboursSpec(instances=2, root=site / "nb", port=free_port(8), users=1,
                          rampup=1, duration=120, db_memory=96 * 1024**2, power="none",
                          sample_interval=1, seed=5, name=name, results_dir=site / "results")
    run = run_neighbours_on_hosts(spec, ("h1", "h2"), site / "cluster", progress)
    helper.join(5)
    assert len(box["parts"]) == 2, box
    assert time.monotonic() - box["t"] < 60
    return run, progress.entered["pg2"] - box["t"]


def test_a_stopped_host_fails_as_hung_and_every_server_stops(site):
    h2 = load_state(site / "cluster").worker("h2").process.pid
    try:
        run, after = _run_and(site, "hung", signal.SIGSTOP)
        # h2's part hears nothing from its task and stops its server on its own
        assert wait_until(lambda: not server_pids(site / "nb") and not _parts(site), 60), \
            (server_pids(site / "nb"), _parts(site))
    finally:
        os.kill(h2, signal.SIGCONT)
    assert run["status"] == "failed"
    assert "host h2: no heartbeat for 10 s" in run["error"], run["error"]
    assert 9 < after < 30, after
    pg1, pg2 = run["instances"]
    assert pg2["status"] == "failed" and "no heartbeat" in pg2["error"], pg2
    assert pg1["status"] == "stopped" and "stopped after host h2 failed" in pg1["error"], pg1
    assert pg1["tpm"] > 0 and pg1["partial"], pg1  # what h1 measured until then is kept
    assert [h["status"] for h in run["hosts"]] == ["failed", "failed"]
    _kept_on_h2(run)


def _kept_on_h2(run: dict) -> None:
    """The failed host's part keeps its output there, where the record says (its instance's
    run record among it), until somebody takes it."""
    where = run["hosts"][1].get("kept") or ""
    assert where.startswith("h2:/var/tmp/oltplab-parts/neighbours-"), run["hosts"]
    kept = Path(where.split(":", 1)[1])
    assert wait_until(lambda: any(kept.glob("out/*/run.json")), 60), list(kept.rglob("*"))
    shutil.rmtree(kept)


def test_a_killed_host_fails_within_30_s_and_leaves_nothing_running(site):
    run, after = _run_and(site, "killed", signal.SIGKILL)
    assert run["status"] == "failed"
    assert "host h2: its Dask worker died" in run["error"], run["error"]
    assert after < 30, after
    pg1, pg2 = run["instances"]
    assert pg2["status"] == "failed" and pg1["status"] == "stopped", run["instances"]
    _kept_on_h2(run)
    assert wait_until(lambda: not server_pids(site / "nb") and not _parts(site), 60), \
        (server_pids(site / "nb"), _parts(site))

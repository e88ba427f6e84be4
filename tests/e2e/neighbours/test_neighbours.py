"""``oltplab neighbours run`` end to end: three managed W=1 instances in a temporary folder, two
running the workload and one backing up; a failing instance; Ctrl-C; the report."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest
from conftest import free_port
from interrupts import INTERRUPTIBLE, ctrl_c
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from oltplab.scenarios.neighbours import NeighboursProgress, NeighboursSpec, run_neighbours

from ..conftest import oltplab, scraped, server_pids

NAMES = ("pg1", "pg2", "pg3")


@pytest.fixture(scope="module")
def site():
    """A folder outside pytest's 0700 base directory (see tests/conftest.py) and the flags of
    a tiny run there; the first run builds the template, the others copy it."""
    root = Path(tempfile.mkdtemp(prefix="oltplab-test-"))
    flags = ["--root", str(root / "nb"), "--port", str(free_port(8)), "--warehouses", "1",
             "--users", "1", "--rampup", "1s", "--db-memory", "96MiB", "--power", "none",
             "--seed", "5"]
    yield root, flags
    for name in ("template", *NAMES):
        oltplab("db", "stop", "--datadir", str(root / "nb" / name), cwd=root)
    shutil.rmtree(root, ignore_errors=True)


def _run(root: Path, name: str) -> dict:
    (folder,) = sorted((root / "results").glob(f"*-{name}"))
    data = json.loads((folder / "run.json").read_text())
    data["_path"] = str(folder)
    return data


def _by_name(run: dict) -> dict:
    return {e["name"]: e for e in run["instances"]}


def test_two_workloads_and_one_backup_in_one_record(site):
    root, flags = site
    port = free_port()
    p, pages = scraped("neighbours", "run", "--instances", "3", "--backup", "1", *flags,
                       "--duration", "6s", "--backup-interval", "2s", "--name", "noisy",
                       "--metrics-port", str(port), cwd=root, port=port)
    assert p.returncode == 0, p.stderr
    assert "average per workload instance (2)" in p.stdout, p.stdout
    run = _run(root, "noisy")
    # the live endpoint: the workloads' summed throughput, no step, the host's devices
    served = [s for _, text in pages for f in text_string_to_metric_families(text)
              for s in f.samples]
    assert {(s.labels["kind"], s.labels["run"], s.labels["step"]) for s in served
            if s.name == "oltplab_throughput_per_minute" and s.value > 0} == \
        {("tpm", run["id"], ""), ("nopm", run["id"], "")}
    assert 2 in {s.value for s in served if s.name == "oltplab_users"}
    assert any(s.name == "oltplab_device_iops" for s in served)
    assert run["kind"] == "neighbours" and run["status"] == "completed"
    assert [(e["name"], e["role"]) for e in run["instances"]] == \
        [("pg1", "tpcc"), ("pg2", "tpcc"), ("pg3", "backup")]
    for e in run["instances"][:2]:
        assert e["status"] == "completed" and e["nopm"] > 0 and e["tpm"] >= e["nopm"], e
        assert e["transactions"]["new_order"]["p95"] > 0
        assert (Path(run["_path"]) / e["run"] / "run.json").is_file()
    backup = run["instances"][2]
    assert backup["status"] == "completed" and len(backup["cycles"]) >= 1, backup
    assert all(c["backup"]["bytes"] > 1_000_000 and c["backup"]["seconds"] > 0
               for c in backup["cycles"])
    avg = run["average"]
    assert avg["instances"] == 2 and avg["nopm"] == round(sum(
        e["nopm"] for e in run["instances"][:2]) / 2)
    assert run["schema"]["warehouses"] == 1 and run["schema"]["copy_seconds"] > 0
    marks = [m["name"] for m in
             json.loads((Path(run["_path"]) / "timeline.json").read_text())["marks"]]
    assert marks.count("backup-start") == len(backup["cycles"])
    assert not server_pids(root / "nb")
    assert not (root / "nb" / "pg3-backup").exists(), "the backups are removed"


def test_failing_instance_is_recorded_and_the_others_stop(site):
    root, flags = site
    sock = root / "nb" / "pg2.sock"  # in the way of pg2's socket directory: pg2 cannot start
    shutil.rmtree(sock, ignore_errors=True)
    sock.write_text("not a directory\n")
    try:
        p = oltplab("neighbours", "run", "--instances", "3", *flags, "--duration", "5s",
                    "--name", "broken", cwd=root)
    finally:
        sock.unlink()
    assert p.returncode == 1, p.stderr
    assert "pg2" in p.stderr and "Traceback" not in p.stderr
    run = _run(root, "broken")
    assert run["status"] == "failed" and "pg2 did not start" in run["error"]
    entries = _by_name(run)
    assert entries["pg2"]["status"] == "failed"
    assert "socket directory" in entries["pg2"]["error"]
    assert entries["pg1"]["status"] == "not run" and entries["pg3"]["status"] == "not run"
    assert not server_pids(root / "nb")


def test_a_running_server_in_an_instance_directory_is_refused(site):
    root, flags = site
    pg1 = root / "nb" / "pg1"
    oltplab("db", "start", "--datadir", str(pg1), "--port", str(free_port(8)),
            "--db-memory", "32MiB", cwd=root, check_rc=0)
    try:
        p = oltplab("neighbours", "run", "--instances", "2", *flags, "--duration", "5s",
                    "--name", "busy", cwd=root)
        assert p.returncode == 2, p.stderr
        assert f"{pg1} has a running server" in p.stderr and "db stop" in p.stderr
        assert len(server_pids(pg1)) == 1, "a server that oltplab did not start is left as is"
    finally:
        oltplab("db", "stop", "--datadir", str(pg1), cwd=root, check_rc=0)


def test_instance_crash_during_the_run_stops_the_others(site):
    root, flags = site
    proc = subprocess.Popen(
        [sys.executable, "-m", "oltplab", "neighbours", "run", "--instances", "3", *flags,
         "--duration", "60s", "--name", "crash"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    pid = _wait_running(root, "crash", "pg2")
    time.sleep(2)
    os.kill(pid, signal.SIGKILL)  # pg2's postmaster: nothing restarts it
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 1, err
    run = _run(root, "crash")
    assert run["status"] == "failed" and run["error"].startswith("pg2:"), run["error"]
    entries = _by_name(run)
    assert entries["pg2"]["status"] == "failed"
    for name in ("pg1", "pg3"):
        assert entries[name]["status"] == "stopped", entries[name]
        assert entries[name]["error"] == "stopped after pg2 failed"
    assert not server_pids(root / "nb")


def test_ctrl_c_stops_every_server_and_keeps_the_record(site):
    root, flags = site
    proc = subprocess.Popen(
        [sys.executable, "-m", "oltplab", "neighbours", "run", "--instances", "3", "--backup",
         "1", *flags, "--duration", "60s", "--backup-interval", "2s", "--name", "cut"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, **INTERRUPTIBLE)
    _wait_running(root, "cut", "pg3")
    time.sleep(8)  # every instance connected and past its 1 s ramp-up, even on a busy host
    ctrl_c(proc, timeout=90)
    run = _run(root, "cut")
    assert run["status"] == "interrupted"
    for e in run["instances"]:
        assert e["status"] in ("interrupted", "completed"), e
    assert all(e["nopm"] is not None for e in run["instances"][:2]), "partial steps are kept"
    assert not server_pids(root / "nb")


def _wait_running(root: Path, name: str, instance: str) -> int:
    """The postmaster's pid of ``instance`` once the run has started every server."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.3)
        try:
            run = _run(root, name)
        except (ValueError, OSError):
            continue
        if all(e["status"] != "pending" for e in run["instances"]):
            pidfile = root / "nb" / instance / "postmaster.pid"
            return int(pidfile.read_text().split()[0])
    raise AssertionError(f"the run {name} did not start its servers")


def test_report_of_a_run_and_of_baseline_against_noisy(site):
    root, flags = site
    oltplab("neighbours", "run", "--instances", "3", *flags, "--duration", "4s",
            "--name", "baseline", cwd=root, check_rc=0)
    base, noisy = _run(root, "baseline"), _run(root, "noisy")
    assert [e["role"] for e in base["instances"]] == ["tpcc"] * 3
    oltplab("report", base["id"], noisy["id"], "--out", str(root / "rep2"), cwd=root,
            check_rc=0)
    html = (root / "rep2" / "report.html").read_text()
    assert "NOPM per instance" in html and "Backup time per cycle" in html
    assert "NOPM at pg1" in html, "the comparison pairs the instances by name"
    assert f'href="runs/{noisy["id"]}.html"' in html  # each run's details on its own page
    page = (root / "rep2" / "runs" / f"{noisy['id']}.html").read_text()
    assert "Instances" in page and "Disk IOPS over time" in page
    assert "pg3 backup 1" in page, "the backups shade the charts over time"
    assert (root / "rep2" / "neighbours_nopm.png").is_file()
    p = oltplab("results", "show", noisy["id"], cwd=root, check_rc=0)
    assert "pg3" in p.stdout and "backup" in p.stdout


@pytest.mark.parametrize("args, word", [
    (["--instances", "0"], "--instances"),
    (["--instances", "3", "--backup", "3"], "--backup"),
    (["--instances", "2", "--backup", "-1"], "--backup"),
    (["--instances", "4", "--db-memory", "32MiB"], "--db-memory"),
    (["--instances", "2", "--duration", "0s"], "--duration"),
    (["--instances", "2", "--backup-interval", "soon"], "--backup-interval"),
])
def test_neighbours_bad_input(tmp_path, args, word):
    p = oltplab("neighbours", "run", "--root", str(tmp_path / "nb"), *args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert word in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (tmp_path / "nb").exists() and not (tmp_path / "results").exists()


class _StopWhen(NeighboursProgress):
    """Ctrl-C in the main thread (as the CLI turns SIGINT into), at the first tick or once
    every workload has measured for ``after_s`` seconds."""

    def __init__(self, measuring_for: float | None):
        self.measuring_for, self.since = measuring_for, None

    def tick(self, elapsed_s, tpm, nopm, measuring, workloads, cycles) -> None:
        if self.measuring_for is None:
            raise KeyboardInterrupt
        if measuring == workloads and self.since is None:
            self.since = time.monotonic()
        if self.since is not None and time.monotonic() - self.since >= self.measuring_for:
            raise KeyboardInterrupt


@pytest.mark.parametrize("measuring_for", [None, 3.0], ids=["at-start", "measuring"])
def test_stopped_run_leaves_nothing_behind_and_keeps_partial_results(site, measuring_for):
    """The instances' threads stop through their own loop, at any moment: no thread, server
    or worker process is left, every instance's record is closed, and what was measured is
    kept."""
    root, _ = site
    name = f"stop-{'start' if measuring_for is None else 'measuring'}"
    spec = NeighboursSpec(instances=2, warehouses=1, users=1, rampup=1.0, duration=120.0,
                          root=root / "nb", port=free_port(8), db_memory=96 * 1024**2,
                          power="none", seed=5, name=name, results_dir=root / "results",
                          sample_interval=0)
    threads, children = set(threading.enumerate()), _children()
    run = run_neighbours(spec, _StopWhen(measuring_for))
    assert run["status"] == "interrupted", run["error"]
    assert not [t.name for t in set(threading.enumerate()) - threads if t.is_alive()]
    assert not _children() - children, "no worker or tool is left"
    assert not server_pids(root / "nb")
    for e in run["instances"]:
        assert e["status"] == "interrupted", e
        own = json.loads((Path(run["_path"]) / e["run"] / "run.json").read_text())
        assert own["status"] == "interrupted" and own.get("ended_at"), own
        if measuring_for is not None:
            assert e["nopm"] is not None and e["partial"] is True, e
            assert own["steps"][-1]["partial"] is True


def _children() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}

"""The CLI end to end on a managed PostgreSQL in a temporary data directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from interrupts import INTERRUPTIBLE, ctrl_c

from oltplab.host.facts import path_storage

from ..conftest import free_port, oltplab


def _postgres_procs(datadir: Path) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["name", "cmdline"]):
        try:
            if p.info["name"] == "postgres" and str(datadir) in " ".join(p.info["cmdline"] or []):
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A working folder and the flags that place a managed server in it."""
    root = tmp_path_factory.mktemp("site")
    datadir = root / "pg"
    flags = ["--datadir", str(datadir), "--port", str(free_port()), "--db-memory", "256MiB"]
    yield root, datadir, flags
    oltplab("db", "stop", *flags, cwd=root)


def test_workflow(site):
    root, datadir, flags = site

    p = oltplab("tpcc", "run", *flags, "--users", "1", "--duration", "2s", cwd=root)
    assert p.returncode == 1 and "oltplab tpcc build" in p.stderr, p.stderr
    assert not _postgres_procs(datadir), "the server started for a failed command must be stopped"

    oltplab("tpcc", "build", *flags, "--warehouses", "1", "--build-users", "2", "--seed", "7",
            cwd=root, check_rc=0)
    assert not _postgres_procs(datadir)

    p = oltplab("tpcc", "build", *flags, "--warehouses", "1", cwd=root)
    assert p.returncode == 1 and "--force" in p.stderr and "Traceback" not in p.stderr

    p = oltplab("tpcc", "run", *flags, "--warehouses", "2", "--duration", "2s", cwd=root)
    assert p.returncode == 1 and "warehouse" in p.stderr and "Traceback" not in p.stderr

    p = oltplab("tpcc", "run", *flags, "--users", "1,2", "--rampup", "1s", "--duration", "3s",
                "--name", "e2e", "--check", cwd=root, check_rc=0)
    assert "consistency: all hold (CC1-CC12)" in p.stdout
    assert not _postgres_procs(datadir)
    # a data directory on the root file system: the run says that its devices' figures count
    # every process's I/O there
    on_root = path_storage(datadir)["mount_point"] == "/"
    assert ("also serve the root file system (/)" in p.stdout) is on_root, p.stdout

    p = oltplab("results", "show", "latest", "--json", cwd=root, check_rc=0)
    run = json.loads(p.stdout)
    assert run["schema_version"] == 3 and run["status"] == "completed"
    assert run["workload"] == "tpcc" and run["config"]["run"]["workload"] == "tpcc"
    assert run["engine"] == "postgres" and run["config"]["db"]["engine"] == "postgres"
    assert [s["users"] for s in run["steps"]] == [1, 2]
    for step in run["steps"]:
        assert step["tpm"] > 0 and step["nopm"] > 0
        assert set(step["transactions"]) == {"new_order", "payment", "order_status", "delivery",
                                             "stock_level"}
        for t in step["transactions"].values():
            assert {"count", "mean", "p50", "p95", "p99", "max"} <= set(t)
        assert step["transactions"]["new_order"]["count"] > 0
    assert run["check"]["ok"] is True
    assert run["host"]["cpu"] and run["database"]["version"].startswith("PostgreSQL")
    assert run["constants"]["c_last_load"] is not None
    folder = Path(run["_path"]) if "_path" in run else next((root / "results").iterdir())
    assert (folder / "steps.csv").read_text().startswith("users,")
    assert (folder / "server.log").exists()

    p = oltplab("results", "list", cwd=root, check_rc=0)
    assert "e2e" in p.stdout
    oltplab("tpcc", "check", *flags, cwd=root, check_rc=0)


def test_interrupt_saves_partial_run_and_stops_server(site):
    root, datadir, flags = site
    before = set(psutil.Process().children(recursive=True))  # the session's servers stay
    proc = subprocess.Popen(
        [sys.executable, "-m", "oltplab", "tpcc", "run", *flags, "--users", "2,2",
         "--rampup", "1s", "--duration", "60s", "--name", "cut"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, **INTERRUPTIBLE)
    deadline = time.monotonic() + 60
    # wait until the first step is being measured
    while time.monotonic() < deadline:
        time.sleep(1)
        runs = sorted((root / "results").glob("*-cut"))
        if runs and (runs[-1] / "run.json").exists() and time.monotonic() > deadline - 52:
            break
    out, err = ctrl_c(proc)
    run = json.loads((sorted((root / "results").glob("*-cut"))[-1] / "run.json").read_text())
    assert run["status"] == "interrupted"
    assert run["steps"] and run["steps"][0]["partial"] is True
    time.sleep(1)
    assert not _postgres_procs(datadir)
    leftovers = [c for c in psutil.Process().children(recursive=True) if c not in before]
    assert not leftovers


def test_a_running_server_with_other_settings_restarts_with_those_asked(tmp_path, built_w1):
    """A server already running kept its settings: a run that asked for another --db-memory
    was measured with the old shared_buffers, silently. oltplab restarts a server it started
    and records why; it refuses, in one line, one it did not start."""
    root, datadir = tmp_path, built_w1("postgres", tmp_path / "pg")
    flags = ["--datadir", str(datadir), "--port", str(free_port()), "--db-memory", "256MiB"]
    oltplab("db", "start", *flags, cwd=root, check_rc=0)
    try:
        other = [*flags[:-1], "160MiB"]
        run_flags = ["--users", "1", "--rampup", "1s", "--duration", "1s"]
        oltplab("tpcc", "run", *other, *run_flags, "--name", "other", cwd=root, check_rc=0)
        run = json.loads(oltplab("results", "show", "latest", "--json", cwd=root,
                                 check_rc=0).stdout)
        assert run["database"]["settings"]["shared_buffers"] == "160MB"
        assert run["database"]["restarted"]["shared_buffers"] == ["256MB", "160MB"]
        assert any("restarted" in w for w in run["steps"][0]["warnings"])
        assert _postgres_procs(datadir), "a server found running is left running"
        p = oltplab("quickstart", *flags, "-w", "1", *run_flags, "--power", "none", cwd=root,
                    check_rc=0)  # back to 256MiB: quickstart restarts it and says so
        run = json.loads(oltplab("results", "show", "latest", "--json", cwd=root,
                                 check_rc=0).stdout)
        assert run["name"] == "quickstart"
        assert run["database"]["restarted"]["shared_buffers"] == ["160MB", "256MB"]
        assert "restarted it" in p.stdout, p.stdout  # with the run's other warnings
        (datadir / "oltplab.conf").unlink()  # as if started without oltplab
        p = oltplab("tpcc", "run", *flags, *run_flags, cwd=root)
        assert p.returncode == 1 and "not started by oltplab" in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    finally:
        oltplab("db", "stop", *flags, cwd=root)

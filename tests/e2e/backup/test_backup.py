"""``oltplab backup run`` end to end on a managed W=1 PostgreSQL in a temporary directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from interrupts import INTERRUPTIBLE, ctrl_c

from ..conftest import free_port, oltplab, server_pids

FIELDS = {"backup": ("seconds", "bytes", "mb_per_s"),
          "restore": ("seconds", "mb_per_s", "check_ok")}


@pytest.fixture(scope="module")
def site(built_w1):
    """A W=1 schema on a managed server (stopped) outside pytest's 0700 base directory."""
    root = Path(tempfile.mkdtemp(prefix="oltplab-test-"))
    datadir = built_w1("postgres", root / "pg")
    flags = ["--datadir", str(datadir), "--port", str(free_port()), "--db-memory", "128MiB"]
    yield root, datadir, flags
    oltplab("db", "stop", *flags, cwd=root)
    shutil.rmtree(root, ignore_errors=True)


def _runs(root: Path, name: str) -> list[dict]:
    return [json.loads((p / "run.json").read_text())
            for p in sorted((root / "results").glob(f"*-{name}")) if (p / "run.json").exists()]


def _scratch(root: Path) -> list[str]:
    return [p.name for p in root.iterdir() if "restore" in p.name]


def test_backup_run_two_cycles(site):
    root, datadir, flags = site
    p = oltplab("backup", "run", *flags, "--cycles", "2", "--power", "none", "--name", "two",
                cwd=root, check_rc=0)
    assert "cycle 2:" in p.stderr and "check ok" in p.stderr
    (run,) = _runs(root, "two")
    assert run["kind"] == "backup" and run["status"] == "completed"
    assert [c["cycle"] for c in run["cycles"]] == [1, 2]
    for c in run["cycles"]:
        for part, keys in FIELDS.items():
            assert all(c[part][k] is not None for k in keys), c
        assert c["backup"]["bytes"] > 10_000_000 and c["restore"]["check_ok"] is True
        assert c["restore"]["copy_seconds"] > 0 and c["restore"]["replay_seconds"] > 0
    folder = next((root / "results").glob("*-two"))
    marks = [m["name"] for m in json.loads((folder / "timeline.json").read_text())["marks"]]
    assert marks.count("backup-start") == 2 and marks.count("restore-end") == 2
    assert len(list(Path(f"{datadir}-backup").iterdir())) == 1, "only the newest backup is kept"
    assert not server_pids(datadir) and not _scratch(root)

    p = oltplab("results", "show", run["id"], cwd=root, check_rc=0)
    assert "backup MB/s" in p.stdout and p.stdout.count(" ok") == 2, p.stdout
    oltplab("report", run["id"], "--out", str(root / "rep"), cwd=root, check_rc=0)
    assert (root / "rep" / "backup_cycles.png").is_file()
    html = (root / "rep" / "report.html").read_text()
    assert "Time to complete per cycle" in html and "Backup and restore cycles" in html
    assert "backup 1" in html, "the backup and restore phases shade the charts over time"


def test_backup_on_a_server_running_with_other_settings_restarts_it_and_says_so(site):
    root, datadir, flags = site
    oltplab("db", "start", *flags, cwd=root, check_rc=0)
    try:
        other = [*flags[:-1], "96MiB"]
        p = oltplab("backup", "run", *other, "--cycles", "1", "--no-restore", "--power", "none",
                    "--name", "restarted", cwd=root, check_rc=0)
        run = _runs(root, "restarted")[-1]
        assert run["database"]["restarted"]["shared_buffers"] == ["128MB", "96MB"]
        assert "warning:" in p.stderr and "restarted it" in p.stderr, p.stderr
    finally:
        oltplab("db", "stop", *flags, cwd=root)


def test_backup_run_compressed_without_restore_then_with(site):
    root, datadir, flags = site
    oltplab("backup", "run", *flags, "--cycles", "1", "--compress", "gzip", "--no-restore",
            "--sample-interval", "0", "--name", "gzonly", "--to", str(root / "z"), cwd=root,
            check_rc=0)
    (run,) = _runs(root, "gzonly")
    assert "restore" not in run["cycles"][0]
    assert (root / "z" / f"{run['id']}-cycle1" / "base.tar.gz").is_file()
    oltplab("backup", "run", *flags, "--cycles", "1", "--compress", "gzip",
            "--sample-interval", "0", "--name", "gz", "--to", str(root / "z"), cwd=root,
            check_rc=0)
    (run,) = _runs(root, "gz")
    assert run["cycles"][0]["restore"]["check_ok"] is True
    assert not server_pids(datadir) and not _scratch(root)


def test_zstd_runs_or_is_refused_by_what_the_build_supports(site):
    from oltplab.engines.postgres.instance import default_bin_dir
    from oltplab.engines.postgres.backup import compression_unsupported
    root, datadir, flags = site
    why = compression_unsupported(str(default_bin_dir() / "pg_basebackup"), "zstd")
    p = oltplab("backup", "run", *flags, "--cycles", "1", "--compress", "zstd",
                "--sample-interval", "0", "--name", "zstd", "--to", str(root / "zs"), cwd=root)
    if why:
        assert p.returncode == 2 and "--compress zstd" in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and not _runs(root, "zstd")
    else:
        assert p.returncode == 0, p.stderr
        assert _runs(root, "zstd")[0]["cycles"][0]["restore"]["check_ok"] is True
    assert not server_pids(datadir) and not _scratch(root)


def test_interrupt_keeps_finished_cycles_and_removes_scratch(site):
    root, datadir, flags = site
    proc = subprocess.Popen(
        [sys.executable, "-m", "oltplab", "backup", "run", *flags, "--cycles", "3",
         "--interval", "60s", "--sample-interval", "0", "--name", "cut"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, **INTERRUPTIBLE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.5)
        runs = _runs(root, "cut")
        if runs and runs[-1]["cycles"]:
            break
    ctrl_c(proc)
    (run,) = _runs(root, "cut")
    assert run["status"] == "interrupted" and len(run["cycles"]) == 1
    assert run["cycles"][0]["restore"]["check_ok"] is True
    time.sleep(1)
    assert not server_pids(datadir) and not _scratch(root)


@pytest.mark.parametrize("args, word", [
    (["--cycles", "0"], "--cycles"),
    (["--method", "tape"], "--method"),
    (["--max-rate", "1k"], "--max-rate"),
    (["--max-rate", "fast"], "--max-rate"),
    (["--method", "dump", "--compress", "zstd"], "--compress"),
    (["--interval", "-5s"], "--interval"),
])
def test_backup_bad_input(tmp_path, args, word):
    p = oltplab("backup", "run", "--datadir", str(tmp_path / "pg"), *args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert word in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (tmp_path / "pg").exists() and not (tmp_path / "results").exists()

"""Noisy neighbours running the brokerage beside a backup record trps per instance and on
average; the brokerage's options without it, and it without --customers, are one line."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from conftest import free_port

from ..conftest import oltplab, saved_runs


def test_neighbours_run_the_brokerage_beside_a_backup():
    root = Path(tempfile.mkdtemp(prefix="oltplab-test-"))  # outside pytest's 0700 base
    flags = ["--root", str(root / "nb"), "--port", str(free_port(4)), "--users", "1",
             "--rampup", "1s", "--db-memory", "96MiB", "--power", "none", "--seed", "5"]
    try:
        p = oltplab("neighbours", "run", "--workload", "brokerage", "--customers", "1000",
                    "--days", "1", "--instances", "2", "--backup", "1", *flags, "--duration",
                    "4s", "--backup-interval", "2s", "--results-dir", str(root / "results"),
                    cwd=root, check_rc=0, timeout=400)
        assert "average per workload instance (1)" in p.stdout and "trps" in p.stdout, p.stdout
        [run] = saved_runs(root / "results")
        assert run["workload"] == "brokerage"
        assert run["schema"]["customers"] == 1000 and run["schema"]["days"] == 1
        pg1, pg2 = run["instances"]
        assert pg1["role"] == "brokerage" and pg1["trps"] > 0 and pg2["role"] == "backup"
        assert pg2["cycles"], pg2
        assert run["average"]["trps"] == pg1["trps"] and run["average"]["instances"] == 1
        p = oltplab("neighbours", "run", "-n", "2", "--customers", "1000", *flags,
                    "--duration", "1s", cwd=root)
        assert p.returncode == 2 and "--workload brokerage" in p.stderr, p.stderr
        p = oltplab("neighbours", "run", "-n", "2", "--workload", "brokerage", *flags,
                    "--duration", "1s", cwd=root)
        assert p.returncode == 2 and "needs --customers" in p.stderr, p.stderr
    finally:
        for name in ("template", "pg1", "pg2"):
            oltplab("db", "stop", "--datadir", str(root / "nb" / name), cwd=root)
        shutil.rmtree(root, ignore_errors=True)

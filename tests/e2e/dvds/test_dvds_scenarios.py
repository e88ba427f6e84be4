"""The shop in the experiments: noisy neighbours running it beside a backup, and a plan whose
cells run it on two datastores (the e7 shape) report OPM."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import free_port

from ..conftest import oltplab, saved_runs


def test_neighbours_run_the_shop_beside_a_backup():
    root = Path(tempfile.mkdtemp(prefix="oltplab-test-"))  # outside pytest's 0700 base
    flags = ["--root", str(root / "nb"), "--port", str(free_port(4)), "--users", "1",
             "--rampup", "1s", "--db-memory", "96MiB", "--power", "none", "--seed", "5"]
    try:
        p = oltplab("neighbours", "run", "--workload", "dvds", "--size", "10MB", "--instances",
                    "2", "--backup", "1", *flags, "--duration", "6s", "--backup-interval", "2s",
                    "--results-dir", str(root / "results"), cwd=root, check_rc=0)
        assert "average per workload instance (1)" in p.stdout and "OPM" in p.stdout, p.stdout
        [run] = saved_runs(root / "results")
        assert run["workload"] == "dvds" and run["schema"]["size"] == "10MB"
        pg1, pg2 = run["instances"]
        assert pg1["role"] == "dvds" and pg1["opm"] > 0 and pg2["role"] == "backup"
        assert pg2["cycles"], pg2
        assert run["average"]["opm"] == pg1["opm"]
        report = root / "report"
        oltplab("report", str(next((root / "results").iterdir())), "--out", str(report),
                cwd=root, check_rc=0)
        assert (report / "neighbours_opm.png").is_file()
        p = oltplab("neighbours", "run", "-n", "2", "--size", "10MB", *flags, "--duration",
                    "1s", cwd=root)
        assert p.returncode == 2 and "--workload dvds" in p.stderr, p.stderr
    finally:
        for name in ("template", "pg1", "pg2"):
            oltplab("db", "stop", "--datadir", str(root / "nb" / name), cwd=root)
        shutil.rmtree(root, ignore_errors=True)


EXAMPLE = Path(__file__).parents[3] / "examples" / "plans" / "e7-dvds-policies.toml"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mkfs.btrfs") is None,
                    reason="datastores need root and btrfs-progs")
def test_the_e7_shop_plan_runs_on_two_datastores_and_reports_opm(tmp_path):
    p = oltplab("plan", "run", str(EXAMPLE), "--set", f"port={free_port()}", "--set",
                'matrix.datastore=["r1", "r5-zstd"]', "--set", "users=[1]", "--set",
                "duration=4s", "--set", "rampup=1s", cwd=tmp_path, timeout=600)
    assert p.returncode == 0, (p.stdout, p.stderr)
    runs = saved_runs(tmp_path / "results")
    assert [r["datastores"]["datadir"]["name"] for r in runs] == ["r1", "r5-zstd"]
    assert all(r["kind"] == "dvds" and r["steps"][0]["opm"] > 0 for r in runs)
    report = tmp_path / "reports" / "plan-e7-dvds-policies"
    html = (report / "report.html").read_text()
    assert "OPM (best step)" in html and "Storage policies" in html
    assert (report / "plan_opm.png").is_file()
    stores = tmp_path / "oltplab-data" / "datastores"
    assert not stores.exists() or not any(stores.iterdir()), "each is destroyed after its cell"


def test_plan_show_names_the_shop_and_its_size(tmp_path):
    shown = oltplab("plan", "show", str(EXAMPLE), cwd=tmp_path, check_rc=0).stdout
    assert "the 10MB shop in oltplab-data/datastores/r1/mnt/postgres" in shown, shown
    assert "step 1 dvds: users 1,2" in shown and "step 1 tpcc" not in shown, shown

"""The example plans E1-E5 run end to end at tiny sizes (``--set``: W=1, 1-2 s steps), each
leaving its runs with their ``plan`` labels and the report's charts for what it varies."""

from __future__ import annotations

from pathlib import Path

import pytest

from oltplab.host import memory as hostmem
from oltplab.errors import UsageError
from oltplab.plans.run import plan_runs
from oltplab.plans.model import load_plan
from oltplab.report.plan import plan_section

from ..conftest import free_port, oltplab, saved_runs

EXAMPLES = Path(__file__).parents[3] / "examples" / "plans"
MiB = 1024**2
SHORT = ("--set", "duration=1s", "--set", "rampup=0s", "--set", "users=[1,2]")


def _run(tmp_path: Path, name: str, *sets: str) -> tuple[list[dict], Path]:
    """Run the example in ``tmp_path`` (its relative data folders land there)."""
    port = () if any(s.startswith("port=") for s in sets) else ("--set", f"port={free_port()}")
    p = oltplab("plan", "run", str(EXAMPLES / f"{name}.toml"), *port, *sets, cwd=tmp_path,
                check_rc=0, timeout=240)
    runs = saved_runs(tmp_path / "results")
    assert all(r["status"] == "completed" and r["plan"]["name"] == name for r in runs)
    report = tmp_path / "reports" / f"plan-{name}"
    assert f"report {report.relative_to(tmp_path)}/report.html" in p.stdout
    return runs, report


def _need_memory_groups() -> None:
    try:
        hostmem.create_group(96 * MiB, f"probe-{free_port()}").remove()
    except UsageError as e:
        pytest.skip(str(e))


def test_e1_dram_sweep_draws_a_line_per_host_memory(tmp_path):
    _need_memory_groups()
    runs, report = _run(tmp_path, "e1-dram", *SHORT)
    assert [r["plan"]["cell"] for r in runs] == ["host_memory=none", "host_memory=96MiB"]
    assert "host_memory" not in runs[0] and runs[1]["host_memory"]["limit_bytes"] == 96 * MiB
    assert [[s["users"] for s in r["steps"]] for r in runs] == [[1, 2], [1, 2]]
    assert (report / "plan_tpm_nopm.png").is_file()
    html = (report / "report.html").read_text()
    assert "Plan e1-dram" in html and "it varies host_memory" in html


def test_e2_datastores_profile_each_once_then_drive_both(tmp_path):
    runs, report = _run(tmp_path, "e2-datastores", *SHORT, "--set", "step.1.duration=1s",
                        "--set", "step.1.ramp=0s", "--set", "step.1.size=16MiB")
    got = sorted((r["kind"], r["plan"]["cell"], r["plan"]["step"]) for r in runs)
    assert got == [("fio", "target=nvme", 1), ("fio", "target=sata", 1),
                   ("tpcc", "target=nvme", 2), ("tpcc", "target=sata", 2)]
    fio = {r["plan"]["cell"]: r for r in runs if r["kind"] == "fio"}
    assert fio["target=nvme"]["config"]["fio"]["target"] == str(tmp_path / "oltplab-data/nvme")
    assert fio["target=sata"]["jobs"] == ["4k-70r30w-random"]
    for chart in ("plan_tpm_nopm", "plan_cpu", "fio_iops_latency"):
        assert (report / f"{chart}.png").is_file(), chart


def test_e3_io_bound_run_draws_disk_latency_per_step(tmp_path):
    _need_memory_groups()
    runs, report = _run(tmp_path, "e3-latency", *SHORT)
    (run,) = runs
    assert run["host_memory"]["limit_bytes"] == 96 * MiB and len(run["steps"]) == 2
    devices = [d for s in run["steps"] for d in s["telemetry"]["devices"].values()]
    assert any(d.get("await_ms") is not None for d in devices)
    assert (report / "plan_disk_latency.png").is_file()


def test_e4_backup_step_after_the_build(tmp_path):
    runs, report = _run(tmp_path, "e4-backup", "--set", "step.1.cycles=1")
    (run,) = runs
    assert run["kind"] == "backup" and run["plan"]["step"] == 1 and len(run["cycles"]) == 1
    assert run["cycles"][0]["restore"]["check_ok"]
    for chart in ("backup_cycles", "plan_backup_rate"):
        assert (report / f"{chart}.png").is_file(), chart


def test_e5_baseline_and_noisy_cells_side_by_side(server_tmp):
    """Three W=1 instances: a baseline cell, then one instance backing up; the instances' own
    runs stay inside their neighbours run, out of the plan's runs and out of results list."""
    sets = ("--set", f"port={free_port()}", "--set", "instances=3", "--set", "users=1",
            "--set", "rampup=1s", "--set",
            "duration=4s", "--set", "backup_interval=1s", "--set", "backup_cycles=1", "--set",
            "db_memory=96MiB", "--set", "power=none")
    runs, report = _run(server_tmp, "e5-neighbours", *sets)
    assert [(r["kind"], r["plan"]["cell"], r["plan"]["repeat"]) for r in runs] == \
        [("neighbours", "backup=0", 1), ("neighbours", "backup=1", 1)]
    assert [r["group"]["id"] for r in runs] == ["e5-neighbours:backup=0", "e5-neighbours:backup=1"]
    base, noisy = runs
    assert [e["role"] for e in base["instances"]] == ["tpcc"] * 3
    assert [e["role"] for e in noisy["instances"]] == ["tpcc", "tpcc", "backup"]
    assert noisy["instances"][2]["cycles"] and base["average"]["instances"] == 3
    assert all(r["average"]["nopm"] > 0 for r in runs)
    listed = oltplab("results", "list", cwd=server_tmp, check_rc=0).stdout
    assert listed.count("e5-neighbours.backup-") == 2 and "-pg1" not in listed, listed
    status = oltplab("plan", "status", str(EXAMPLES / "e5-neighbours.toml"), *sets,
                     cwd=server_tmp, check_rc=0).stdout
    assert "plan e5-neighbours: 2 done, 0 failed, 0 pending" in status, status
    other = oltplab("plan", "status", str(EXAMPLES / "e5-neighbours.toml"), "--set",
                    "instances=3", cwd=server_tmp, check_rc=0).stdout  # another configuration
    assert "0 done, 0 failed, 2 pending" in other and "of another configuration" in other
    assert (report / "plan_neighbours_nopm.png").is_file()
    html = (report / "report.html").read_text()
    assert "Average workload instance per cell" in html and "NOPM % of backup=0" in html
    plan = load_plan(EXAMPLES / "e5-neighbours.toml", server_tmp / "results", ("instances=3",))
    (table,) = plan_section(plan, plan_runs(plan, server_tmp / "results")).tables
    (c0, i0, k0, n0, tpm0, nopm0, pct0), (c1, i1, k1, n1, tpm1, nopm1, pct1) = table.rows
    assert (c0, i0, k0, n0, nopm0, pct0) == ("backup=0", 3, 0, 1, base["average"]["nopm"], 100.0)
    assert (c1, i1, k1, n1, nopm1) == ("backup=1", 3, 1, 1, noisy["average"]["nopm"])
    assert pct1 == round(100.0 * nopm1 / nopm0, 1)


def test_engines_postgres_and_mariadb_cells_side_by_side(server_tmp):
    """One plan, a cell per engine: the same seeded rows on PostgreSQL and MariaDB, one report
    that names each run's engine and tells the reader to compare them by NOPM."""
    from oltplab.engines.mariadb.instance import find_binary
    if find_binary("mariadbd") is None:
        pytest.skip("mariadbd is not installed (Debian: mariadb-server-core)")
    shown = oltplab("plan", "show", str(EXAMPLES / "engines.toml"), cwd=server_tmp,
                    check_rc=0).stdout
    assert "PostgreSQL, 1 warehouses" in shown and "MariaDB, 1 warehouses" in shown
    runs, report = _run(server_tmp, "engines", *SHORT)
    assert [(r["plan"]["cell"], r["engine"]) for r in runs] == [
        ("target=postgres", "postgres"), ("target=mariadb", "mariadb")]
    assert all(s["nopm"] > 0 for r in runs for s in r["steps"])
    html = (report / "report.html").read_text()
    assert "engines.target-mariadb (MariaDB)" in html and "compare them by NOPM" in html
    assert (report / "plan_tpm_nopm.png").is_file()


def _need_datastores() -> None:
    import os
    import shutil
    if os.geteuid() != 0 or shutil.which("mkfs.btrfs") is None:
        pytest.skip("datastores need root and btrfs-progs")


def test_e7_policies_three_datastores_made_compared_and_destroyed(tmp_path):
    _need_datastores()
    runs, report = _run(tmp_path, "e7-policies", *SHORT, "--set",
                        'matrix.datastore=["r1", "r5-zstd", "xfs"]')
    assert [r["plan"]["cell"] for r in runs] == ["datastore=r1", "datastore=r5-zstd",
                                                 "datastore=xfs"]
    stores = [r["datastores"]["datadir"] for r in runs]
    assert [(s["fs"], s["raid"], s["compress"]) for s in stores] == [
        ("btrfs", "raid1", "none"), ("btrfs", "raid5", "zstd:3"), ("xfs", None, None)]
    r1, r5z, xfs = (s["space_after"] for s in stores)
    assert r1["data_ratio"] > 1.8 and r5z["compression_ratio"] > 1.2, (r1, r5z)
    assert not (tmp_path / "oltplab-data" / "datastores").exists() or not any(
        (tmp_path / "oltplab-data" / "datastores").iterdir()), "each is destroyed after its cell"
    html = (report / "report.html").read_text()
    assert "Storage policies: performance and space, against e7-policies.datastore-r1" in html
    for column in ("NOPM (best step)", "disk IOPS there", "disk await ms there",
                   "CPU busy % there", "space used MiB", "% saved"):
        assert column in html, column
    assert (report / "datastore_space.png").is_file()
    import re
    table = html[html.index('id="table-datastores-datastores"'):]
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", row)
            for row in re.findall(r"<tr><td.*?</tr>", table[:table.index("</table>")])]
    assert [r[1] for r in rows] == ["r1", "r5-zstd", "xfs"] and rows[0][-1] == "baseline"
    assert 20 < float(rows[1][-1]) < 100, rows  # raid5 and zstd take less room than raid1
    assert all(float(r[4].replace(",", "")) > 0 for r in rows), rows  # NOPM on each


def test_e8_rebuild_removes_a_device_under_load(tmp_path):
    _need_datastores()
    runs, report = _run(tmp_path, "e8-rebuild", "--set", "duration=10s", "--set", "rampup=1s",
                        "--set", 'inject=["at=3s,remove-device=1"]')
    (run,) = runs
    (event,) = run["events"]
    assert event["kind"] == "remove-device" and "error" not in event, event.get("error")
    assert event["bytes_moved"] > 0 and event["mb_per_s"] > 0 and "dip_avg_pct" in event
    assert run["check"]["ok"]
    assert len(run["datastores"]["datadir"]["devices"]) == 4  # as it was when the run began

import json
import os

import pytest

from oltplab.errors import UsageError
from oltplab.results.store import (SCHEMA_VERSION, RunRecord, atomic_write, list_runs, load_run,
                                   steps_csv)


def _step(users, nopm):
    tx = {t: {"count": 10, "committed": 10, "rolled_back": 0, "errors": 0, "retries": 1,
              "mean": 1.0, "p50": 0.9, "p95": 2.0, "p99": 3.0, "max": 4.0}
          for t in ("new_order", "payment", "order_status", "delivery", "stock_level")}
    return {"users": users, "tpm": 2.3 * nopm, "nopm": nopm, "client_tpm": 2.3 * nopm,
            "client_nopm": nopm, "measured_s": 60.0, "partial": False, "transactions": tx}


def test_record_lifecycle(tmp_path):
    rec = RunRecord.create(tmp_path, "tpcc", "lab", config={"x": 1}, workload="tpcc")
    data = json.loads((rec.path / "run.json").read_text())
    assert data["status"] == "running" and data["schema_version"] == SCHEMA_VERSION
    rec.add_step(_step(1, 1000))
    rec.add_step(_step(2, 1900))
    rec.finish("completed")
    run = load_run(tmp_path, "latest")
    assert run["status"] == "completed" and [s["users"] for s in run["steps"]] == [1, 2]
    assert load_run(tmp_path, "lab")["id"] == rec.path.name
    assert load_run(tmp_path, rec.path.name[:8])["id"] == rec.path.name
    rows = (rec.path / "steps.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("users,tpm,workload_tpm,nopm")
    assert rows[0].endswith(",skipped_deliveries,order_lines_per_order,warnings")
    assert rows[2].split(",")[:4] == ["2", "4370.0", "", "1900"]


def test_run_dirs_are_unique(tmp_path):
    a = RunRecord.create(tmp_path, "tpcc", "same")
    b = RunRecord.create(tmp_path, "tpcc", "same")
    assert a.path != b.path
    assert [r["id"] for r in list_runs(tmp_path)] == sorted([a.path.name, b.path.name])


def test_atomic_write_leaves_no_temp_files(tmp_path):
    atomic_write(tmp_path / "f.json", "one")
    atomic_write(tmp_path / "f.json", "two")
    assert (tmp_path / "f.json").read_text() == "two"
    assert os.listdir(tmp_path) == ["f.json"]


def test_unknown_run(tmp_path):
    with pytest.raises(UsageError):
        load_run(tmp_path, "latest")
    RunRecord.create(tmp_path, "tpcc", "x")
    with pytest.raises(UsageError):
        load_run(tmp_path, "nothing-like-it")


def test_future_schema_versions_are_skipped(tmp_path):
    rec = RunRecord.create(tmp_path, "tpcc", "x")
    data = json.loads((rec.path / "run.json").read_text())
    data["schema_version"] = SCHEMA_VERSION + 1
    (rec.path / "run.json").write_text(json.dumps(data))
    assert list_runs(tmp_path) == []


def test_steps_csv_header_only():
    from oltplab import workloads
    header = steps_csv([], workloads.get("tpcc"))
    assert header.count("\n") == 1 and "new_order_count" in header


def test_fio_job_list_of_version_1_no_longer_collides_with_the_plan_label(tmp_path):
    rec = RunRecord.create(tmp_path, "fio", "f")
    data = json.loads((rec.path / "run.json").read_text())
    data.update(schema_version=1, plan=["4k-randread", "4k-randwrite"])
    (rec.path / "run.json").write_text(json.dumps(data))
    (run,) = list_runs(tmp_path)
    assert run["schema_version"] == SCHEMA_VERSION == 3
    assert run["jobs"] == ["4k-randread", "4k-randwrite"] and "plan" not in run


def test_version_2_records_of_database_kinds_name_their_engine(tmp_path):
    for kind, name in (("tpcc", "t"), ("backup", "b"), ("fio", "f")):
        rec = RunRecord.create(tmp_path, kind, name)
        data = json.loads((rec.path / "run.json").read_text())
        data.pop("engine", None)
        data.update(schema_version=2)
        (rec.path / "run.json").write_text(json.dumps(data))
    runs = {r["kind"]: r for r in list_runs(tmp_path)}
    assert runs["tpcc"]["engine"] == runs["backup"]["engine"] == "postgres"
    assert runs["tpcc"]["workload"] == "tpcc" and "workload" not in runs["backup"]
    assert "engine" not in runs["fio"]
    assert {r["schema_version"] for r in runs.values()} == {SCHEMA_VERSION}

"""export_csv: every table of a run as a CSV file, values as recorded."""

from __future__ import annotations

import csv

import pytest

from oltplab.report.export import export_csv

from .test_report_fixtures import (NOPM, USERS, WARNING, fio_record, timeline_dict,
                                   tpcc_record, write_run)


def read(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_tpcc_tables_and_samples(tmp_path):
    record = write_run(tmp_path / "run", tpcc_record("pg18"), timeline_dict())
    paths = export_csv(record, tmp_path / "csv")
    assert [p.name for p in paths] == [
        "run.csv", "steps.csv", "inputs.csv", "warnings.csv", "transactions.csv",
        "host_per_step.csv",
        "devices_per_step.csv", "configuration.csv", "host.csv", "database.csv",
        "database_settings.csv", "telemetry.csv", "timeline.csv"]
    steps = read(tmp_path / "csv" / "steps.csv")
    assert steps[0][:4] == ["users", "TPM (instance)", "TPM (workload)", "NOPM"]
    assert [int(r[3]) for r in steps[1:]] == [NOPM[u] for u in USERS]
    assert steps[1][-1] == "False"
    inputs = read(tmp_path / "csv" / "inputs.csv")
    assert inputs[0][:3] == ["users", "remote order lines", "remote payments"]
    assert [float(v) for v in inputs[1][1:7]] == [0.0101, 0.149, 0.6, 0.61, 0.0099, 0.0]
    assert inputs[1][8] == "" and inputs[-1][-1] == "1"  # no CV; one warning at 8 users
    assert read(tmp_path / "csv" / "warnings.csv") == [["users", "warning"],
                                                       [str(USERS[-1]), WARNING]]
    tx = read(tmp_path / "csv" / "transactions.csv")
    assert len(tx) == 1 + 5 * len(USERS)
    host = read(tmp_path / "csv" / "host_per_step.csv")
    assert float(host[1][1]) == pytest.approx(90.0)  # CPU idle at 1 user
    samples = read(tmp_path / "csv" / "timeline.csv")
    assert samples[0][:4] == ["t_s", "utc", "dt_s", "cpu.user (%)"]
    assert len(samples) == 1 + len(timeline_dict()["columns"]["t_ns"])
    assert float(samples[1][0]) == 1.0 and samples[1][1] == "2023-11-14T22:13:21.000+00:00"
    assert "t_unix_ns" not in " ".join(samples[0])
    config = dict(read(tmp_path / "csv" / "configuration.csv")[1:])
    assert config["config.db.dsn"] == "postgresql://bench:***@db:5432/tpcc"
    assert config["config.run.users"] == "1, 2, 4, 8"


def test_fio_tables(tmp_path):
    paths = export_csv(fio_record(), tmp_path)
    assert [p.name for p in paths] == ["run.csv", "profiles.csv", "latency.csv",
                                       "configuration.csv", "host.csv"]
    profiles = read(tmp_path / "profiles.csv")
    assert profiles[1][:3] == ["4k-randrw-70", "4 KiB", "randrw 70/30"]
    assert float(profiles[1][8]) == pytest.approx(40000)
    latency = read(tmp_path / "latency.csv")
    assert [r[1] for r in latency[1:3]] == ["read", "write"]


def test_headlines_for_run_listings():
    from oltplab.report.headline import headline
    assert headline(tpcc_record()) == "NOPM 5,000 at 8 users (TPM 11,500)"
    one = tpcc_record(users=(1,))
    one["steps"][0]["partial"] = True
    assert headline(one) == "NOPM 1,000 at 1 user (TPM 2,300) (partial step)"
    assert headline(fio_record()) == "40,000 IOPS 4k-randrw-70; 1,311 MB/s 256k-randrw-70"
    assert headline({"kind": "fio", "steps": []}) == "-"
    assert headline({"kind": "tpcc", "steps": [{"users": 1, "nopm": None}]}) == "-"

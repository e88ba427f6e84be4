"""The policy table: the disk IOPS of every member of a datastore, the database's IOPS beside
them with the write amplification, and no "% saved" between groups on the same datastore."""

from __future__ import annotations

import pytest

from oltplab.report.datastores import datastore_section
from oltplab.report.runs import Group, RunData

MiB = 1024**2


def _store(name: str, raid: str, devices: int, allocated_mib: float) -> dict:
    return {"name": name, "fs": "btrfs", "raid": raid, "metadata": raid, "checksum": "crc32c",
            "compress": "none", "mount": f"/ds/{name}/mnt",
            "devices": [{"name": f"loop{i}", "path": f"/dev/loop{i}"} for i in range(devices)],
            "space_after": {"allocated_bytes": allocated_mib * MiB, "data_ratio": 2.0,
                            "compression_ratio": 1.0}}


def _figures(writes: dict, front_writes: float | None, with_datastore: bool = True) -> dict:
    """A step's telemetry: each device's writes/s (no reads), the database's writes/s."""
    devices = {d: {"read_iops": 0.0, "write_iops": w, "await_ms": 1.0} for d, w in
               writes.items()}
    members = [d for d in writes if d.startswith("loop")]
    total = sum(writes[d] for d in members)
    out = {"devices": devices, "cpu": {"cpu_idle_pct": 60.0},
           "db": {"front_read_iops": 10.0, "front_write_iops": front_writes,
                  "front_write_mib_s": None if front_writes is None else front_writes / 64}}
    if with_datastore:
        out["datastore"] = {"devices": members, "read_iops": 0.0, "write_iops": total,
                            "write_mb_s": total / 256, "await_ms": 2.0}
    return out


def _run(name: str, store: dict, figures: dict, nopm: float = 1000.0) -> RunData:
    record = {"kind": "tpcc", "workload": "tpcc", "name": name, "id": name,
              "datastores": {"datadir": store}, "steps": [{"users": 2, "nopm": nopm}]}
    return RunData(record=record, label=name, figures=[figures])


def _rows(groups, baseline=None) -> tuple[tuple, dict]:
    [table] = datastore_section(groups, baseline).tables
    return table.columns, {row[0]: dict(zip(table.columns, row)) for row in table.rows}


def test_disk_iops_count_every_member_with_front_end_and_amplification():
    # a 4-device raid1 whose record names its four devices; the mount table named loop0, the
    # sampler measured all four: 100 + 100 writes on loop0 and loop1, 300 + 300 on 2 and 3
    r1 = _store("r1", "raid1", 4, 500)
    run = _run("r1", r1, _figures({"loop0": 100.0, "loop1": 100.0, "loop2": 300.0,
                                   "loop3": 300.0, "vda": 5000.0}, front_writes=200.0))
    columns, rows = _rows([Group("r1", [run], "#000")])
    row = rows["r1"]
    assert "disk IOPS there (back end, every device)" in columns
    assert row["disk IOPS there (back end, every device)"] == 800.0  # vda is no member
    assert row["front-end IOPS there"] == 210.0
    assert row["write amplification there (IOs)"] == pytest.approx(4.0)
    assert row["write amplification there (bytes)"] == pytest.approx((800 / 256) / (200 / 64))
    assert row["disk await ms there"] == 2.0 and row["CPU busy % there"] == 40.0


def test_a_record_without_datastore_figures_sums_its_devices():
    r1 = _store("r1", "raid1", 2, 500)
    run = _run("r1", r1, _figures({"loop0": 100.0, "loop1": 300.0, "vda": 50.0},
                                  front_writes=None, with_datastore=False))
    row = _rows([Group("r1", [run], "#000")])[1]["r1"]
    assert row["disk IOPS there (back end, every device)"] == 400.0
    assert row["front-end IOPS there"] is None
    assert row["write amplification there (IOs)"] is None


def test_no_percent_saved_between_groups_on_the_same_datastore():
    r1, r5 = _store("r1", "raid1", 4, 600), _store("r5", "raid5", 4, 300)
    figures = _figures({"loop0": 10.0}, 5.0)
    groups = [Group("r1.users-2", [_run("a", r1, figures)], "#000"),
              Group("r1.users-8", [_run("b", {**r1, "space_after": {
                  "allocated_bytes": 700 * MiB}}, figures)], "#111"),
              Group("r5", [_run("c", r5, figures)], "#222")]
    rows = _rows(groups)[1]
    assert rows["r1.users-2"]["% saved"] == "baseline"
    assert rows["r1.users-8"]["% saved"] == "same datastore"  # not "-16.7"
    assert rows["r5"]["% saved"] == 50.0

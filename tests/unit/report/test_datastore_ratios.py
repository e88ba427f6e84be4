"""The policy table's space ratios, each with two decimals: an uncompressed datastore's
compression ratio reads 1.00 beside a compressed one's 1.84."""

from __future__ import annotations

from oltplab.report.datastores import datastore_section
from oltplab.report.runs import Group, RunData


def _run(name: str, data_ratio: float, compression_ratio: float | None) -> RunData:
    store = {"name": name, "fs": "btrfs", "raid": "raid1", "metadata": "raid1",
             "checksum": "crc32c", "compress": "none", "mount": f"/ds/{name}/mnt",
             "devices": [{"name": "loop0", "path": "/dev/loop0"}],
             "space_after": {"allocated_bytes": 300 * 2**20, "data_ratio": data_ratio,
                             "compression_ratio": compression_ratio}}
    record = {"kind": "tpcc", "workload": "tpcc", "name": name, "id": name,
              "datastores": {"datadir": store}, "steps": [{"users": 1, "nopm": 100.0}]}
    return RunData(record=record, label=name, figures=[{"devices": {}}])


def test_ratios_print_with_the_same_decimals():
    groups = [Group("plain", [_run("plain", 2.0, 1.0)], "#000"),
              Group("zstd", [_run("zstd", 1.087, 1.8412)], "#111"),
              Group("xfs", [_run("xfs", 1.0, None)], "#222")]
    [table] = datastore_section(groups).tables
    rows = {row[0]: dict(zip(table.columns, row)) for row in table.rows}
    assert [(rows[g]["data ratio"], rows[g]["compression ratio"]) for g in rows] == [
        ("2.00", "1.00"), ("1.09", "1.84"), ("1.00", None)]

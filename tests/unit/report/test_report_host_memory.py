"""The report's host-memory table: limit and peak per step beside the device reads."""

from __future__ import annotations

from oltplab.report.runs import RunData
from oltplab.report.tpcc import host_memory_table, tables

MiB = 2**20


def _run(host_memory: bool) -> RunData:
    steps = [{"users": u, **({"host_memory": {"limit_bytes": 256 * MiB, "peak_bytes": peak,
                                              "peak_scope": "step"}} if host_memory else {})}
             for u, peak in ((1, 200 * MiB), (2, 255 * MiB))]
    figures = [{"devices": {"vda": {"read_mb_s": 12.5}, "vdb": {"read_mb_s": 0.5}},
                "db": {"blks_read_s": 900.0}}, None]
    return RunData(record={"kind": "tpcc", "steps": steps}, figures=figures)


def test_host_memory_table_shows_limit_peak_and_device_reads_per_step():
    t = host_memory_table(_run(True))
    assert t.columns[:5] == ("users", "limit (MiB)", "peak (MiB)", "peak of", "device read MiB/s")
    assert t.rows == ((1, 256.0, 200.0, "step", 13.0, 900.0),
                      (2, 256.0, 255.0, "step", None, None))
    assert "host_memory_per_step" in [x.key for x in tables(_run(True))]


def test_no_host_memory_table_without_a_limit():
    assert host_memory_table(_run(False)) is None
    assert "host_memory_per_step" not in [x.key for x in tables(_run(False))]

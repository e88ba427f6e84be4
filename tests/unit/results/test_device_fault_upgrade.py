"""Device-fault events of records made before their bytes were measured: the allocated
figure keeps its own name, the rates are in MB/s (10^6 bytes)."""

from __future__ import annotations

from oltplab.results.store import upgrade

MiB = 2**20


def _record(*events: dict) -> dict:
    return {"schema_version": 3, "kind": "tpcc", "engine": "postgres", "workload": "tpcc",
            "events": list(events)}


def test_a_removal_s_allocated_chunks_are_no_longer_bytes_moved():
    old = {"kind": "remove-device", "event": "at=3s,remove-device=1", "at_s": 3.0,
           "seconds": 13.8, "bytes_moved": 832 * MiB, "mb_per_s": 60.3}
    [e] = upgrade(_record(dict(old)))["events"]
    assert e["allocated_bytes"] == 832 * MiB
    assert e["bytes_moved"] is None and e["mb_per_s"] is None
    assert "not measured" in e["bytes_moved_counts"]
    assert upgrade(_record(dict(e)))["events"] == [e]  # once only


def test_a_scrub_keeps_its_bytes_with_its_rate_in_mb_per_s():
    old = {"kind": "scrub", "event": "at=14s,scrub", "seconds": 2.0, "bytes_moved": 100 * MiB,
           "mb_per_s": 50.0, "errors": 0}
    [e] = upgrade(_record(old))["events"]
    assert e["bytes_moved"] == 100 * MiB and e["mb_per_s"] == 52.4  # 104.9 MB in 2 s


def test_events_of_this_version_and_other_faults_are_left_as_they_are():
    new = {"kind": "convert", "bytes_moved": 10**9, "allocated_bytes": 5 * 10**8,
           "bytes_moved_counts": "bytes written by the remaining devices", "mb_per_s": 100.0}
    kill = {"kind": "kill-server", "recovery_s": 4.2}
    assert upgrade(_record(dict(new), dict(kill)))["events"] == [new, kill]

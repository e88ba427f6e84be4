"""tpcc run --inject on a btrfs datastore: a device removed under load (the data rebuilt on
the others), an online profile change and a scrub, each timed with the bytes the devices wrote
and read meanwhile (their own counters) and the throughput dip; the database passes its checks
after."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import datastore as ds
from ..conftest import free_port, loops_over, oltplab, saved_runs


def _run(root: Path, flags: list[str], *inject: str, duration: str = "12s") -> dict:
    oltplab("tpcc", "run", *flags, "--users", "2", "--rampup", "1s", "--duration", duration,
            "--power", "none", *(x for e in inject for x in ("--inject", e)), "--check",
            cwd=root.parent, check_rc=0)
    return saved_runs(root.parent / "results")[-1]


def _written(devices: list[str]) -> dict[str, int]:
    """Bytes each device has written since it appeared, from /proc/diskstats (read here, apart
    from oltplab's own reading)."""
    names = {os.path.basename(os.path.realpath(d)): d for d in devices}
    out = {}
    for line in Path("/proc/diskstats").read_text().splitlines():
        fields = line.split()
        if fields[2] in names:
            out[names[fields[2]]] = int(fields[9]) * 512  # sectors written
    return out


def _counted(event: dict, devices: list[str]) -> None:
    """The event's bytes are its devices' counters: ``bytes_moved`` the sum of what
    ``devices`` wrote, ``bytes_read`` of what was read, the rate in MB/s (10^6 bytes)."""
    written = event["devices_written_bytes"]
    assert sorted(written) == sorted(devices), event
    assert event["bytes_moved"] == sum(written.values()) and all(written.values()), event
    assert event["bytes_read"] == sum(event["devices_read_bytes"].values()), event
    assert event["mb_per_s"] == round(event["bytes_moved"] / 1e6 / event["seconds"], 1)
    assert event["bytes_moved_counts"] == ("bytes written by the remaining devices during the "
                                           "work (the workload's writes in that time included)")
    assert event["background_write_bytes_s"] >= 0 and event["background_s"] > 0, event


def _raid1(root: Path, built_w1, *create: str) -> tuple[dict, list[str]]:
    """A btrfs raid1 datastore "r1" (``create``: its devices) holding a copy of the W=1 data
    directory: its ``show --json`` and the flags of a server there."""
    ds(root, "create", "r1", "--raid", "raid1", "--metadata", "raid1", *create)
    doc = json.loads(ds(root, "show", "r1", "--json").stdout)
    return doc, ["--datadir", str(built_w1("postgres", Path(doc["mount"]) / "pg")), "--port",
                 str(free_port()), "--db-memory", "64MiB"]


def test_remove_a_device_under_load(datastore_root, built_w1):
    root = datastore_root
    doc, flags = _raid1(root, built_w1, "--loop", "4x2GiB")
    first = doc["devices"][0]["path"]
    remaining = [d["path"] for d in doc["devices"][1:]]
    try:
        whole_run = _written(remaining)
        run = _run(root, flags, "at=3s,remove-device=1")
        whole_run = {d: n - whole_run[d] for d, n in _written(remaining).items()}
        assert run["status"] == "completed", run.get("error")
        [event] = run["events"]
        assert event["kind"] == "remove-device" and "error" not in event, event.get("error")
        assert event["device"] == first and event["devices_before"] == 4
        _counted(event, remaining)
        assert all(event["devices_written_bytes"][d] <= whole_run[d] for d in remaining)
        assert event["bytes_moved"] > 8 * 1024**2  # a quarter of two copies of W=1, at least
        # the rebuild writes again what the device held: less than all the file system holds
        # (both copies) and the workload's writes meanwhile; the chunks allocated on the
        # device (what bytes_moved used to be) are another figure
        holds = run["datastores"]["datadir"]["space_before"]["allocated_bytes"]
        workload = event["background_write_bytes_s"] * event["seconds"]
        assert event["bytes_moved"] < holds + 2 * workload, (event, holds)
        assert event["allocated_bytes"] >= 256 * 1024**2, event  # a data chunk of 256 MiB+
        assert event["bytes_read"] > 0 and event["seconds"] > 0 and event["mb_per_s"] > 0
        assert (event["before_tpm"] > 0 and "dip_avg_pct" in event
                and "back_within_10pct_s" in event)
        assert run["check"]["ok"]
        after = json.loads(ds(root, "show", "r1", "--json").stdout)
        assert [d["path"] for d in after["devices"]] == [d["path"] for d in doc["devices"][1:]]
        assert run["datastores"]["datadir"]["space_after"]["data_ratio"] > 1.5
    finally:
        oltplab("db", "stop", *flags, cwd=root.parent)
    ds(root, "destroy", "r1")


def test_convert_to_raid5_then_scrub_under_load(datastore_root, built_w1):
    root = datastore_root
    doc, flags = _raid1(root, built_w1, "--loop", "4x2GiB")
    try:
        run = _run(root, flags, "at=1s,convert=raid5", "at=14s,scrub", duration="20s")
    finally:
        oltplab("db", "stop", *flags, cwd=root.parent)
    assert run["status"] == "completed", run.get("error")
    convert, scrub = run["events"]
    steps = [(s.get("partial"), s.get("throughput", {}).get("per_s")) for s in run["steps"]]
    assert "error" not in convert and "error" not in scrub, (convert, scrub, steps)
    assert (convert["from"], convert["to"]) == ("raid1", "raid5")
    _counted(convert, [d["path"] for d in doc["devices"]])
    assert convert["allocated_bytes"] > 0 and convert["seconds"] > 0  # the data chunks' total
    assert scrub["bytes_moved"] > 50 * 1024**2 and scrub["errors"] == 0
    assert scrub["bytes_moved_counts"].startswith("bytes the scrub read and verified")
    assert scrub["bytes_read"] == sum(scrub["devices_read_bytes"].values())
    assert scrub["bytes_read"] >= scrub["bytes_moved"], scrub  # every copy, and parity
    assert scrub["mb_per_s"] == round(scrub["bytes_moved"] / 1e6 / scrub["seconds"], 1)
    assert run["check"]["ok"]
    assert json.loads(ds(root, "show", "r1", "--json").stdout)["raid"] == "raid5"
    ds(root, "destroy", "r1")
    assert loops_over(root) == []


def _refused(datadir: Path, cwd: Path, cases) -> None:
    """Each --inject of ``cases`` is refused before the run, in one line naming the reason."""
    for inject, message in cases:
        p = oltplab("tpcc", "run", "--datadir", str(datadir), "--port", str(free_port()),
                    "--users", "1", "--duration", "5s", "--inject", inject, cwd=cwd, check_rc=2)
        assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_device_faults_are_refused_off_a_datastore_or_beyond_the_profile(datastore_root,
                                                                         built_w1, server_tmp):
    _refused(built_w1("postgres", server_tmp / "pg"), server_tmp,
             (("at=2s,remove-device=1", "is on no datastore"),
              ("at=2s,convert=raid9", "'raid9' is not one of"),
              ("at=2s,scrub", "is on no datastore")))
    ds(datastore_root, "create", "r1", "--raid", "raid1", "--loop", "2x320MiB")
    mount = Path(json.loads(ds(datastore_root, "show", "r1", "--json").stdout)["mount"])
    _refused(built_w1("postgres", mount / "pg"), server_tmp,
             (("at=2s,remove-device=1", "raid1 raid needs 2 devices; 1 would"),
              ("at=2s,remove-device=3", "has devices 1 to 2"),
              ("at=2s,convert=raid6", "raid6 needs 3 devices")))


def test_replace_a_device_with_the_spare_under_load(datastore_root, built_w1):
    root = datastore_root
    doc, flags = _raid1(root, built_w1, "--loop", "3x2GiB", "--spares", "1")
    spare = json.loads((root / "r1" / "datastore.json").read_text())["spares"][0]
    try:
        run = _run(root, flags, "at=3s,replace-device=2")
    finally:
        oltplab("db", "stop", *flags, cwd=root.parent)
    assert run["status"] == "completed", run.get("error")
    [event] = run["events"]
    assert "error" not in event, event.get("error")
    old = doc["devices"][1]["path"]
    assert (event["device"], event["spare"]) == (old, spare)
    _counted(event, [doc["devices"][0]["path"], spare, doc["devices"][2]["path"]])
    assert event["devices_written_bytes"][spare] > 8 * 1024**2  # the copy it received
    assert old in event["devices_read_bytes"] and event["allocated_bytes"] > 0
    assert event["bytes_moved"] > 0 and event["seconds"] > 0 and event["mb_per_s"] > 0
    assert run["check"]["ok"]
    after = json.loads(ds(root, "show", "r1", "--json").stdout)
    assert [d["path"] for d in after["devices"]] == [doc["devices"][0]["path"], spare,
                                                     doc["devices"][2]["path"]]
    p = oltplab("tpcc", "run", *flags, "--users", "1", "--duration", "5s", "--inject",
                "at=2s,replace-device=1", cwd=root.parent, check_rc=2)
    assert "has no spare" in p.stderr
    ds(root, "destroy", "r1")
    assert loops_over(root) == []


def test_a_device_that_fails_its_writes_under_load(datastore_root, built_w1):
    root = datastore_root
    doc, flags = _raid1(root, built_w1, "--loop", "2x1GiB")
    try:
        run = _run(root, flags, "at=2s,fail-device=2")
    finally:
        oltplab("db", "stop", *flags, cwd=root.parent)
    [event] = run["events"]
    failed = doc["devices"][1]["path"]
    assert "error" not in event and event["device"] == failed, event
    # this kernel's btrfs: a raid1 mirror whose writes fail is written around, counted
    assert event["read_only"] is False and event["outcome"].startswith("degraded"), event
    assert event["device_errors"][failed]["write_io_errs"] > 0, event
    assert run["status"] == "completed" and run["check"]["ok"], run.get("error")
    images = root / "r1" / "images"
    assert "i" not in subprocess.run(["lsattr", str(images / "disk1.img")], capture_output=True,
                                     text=True).stdout.split()[0]  # writable again
    ds(root, "destroy", "r1")


def _slow_scrub(mount: str, bytes_s: int) -> None:
    """The kernel's scrub speed limit on each device of the file system at ``mount``."""
    fsid = subprocess.run(["findmnt", "-no", "UUID", mount], capture_output=True, text=True,
                          check=True).stdout.strip()
    limits = list(Path(f"/sys/fs/btrfs/{fsid}/devinfo").glob("*/scrub_speed_max"))
    if not limits:
        pytest.skip("this kernel has no scrub speed limit (scrub_speed_max, Linux 5.14)")
    for limit in limits:
        limit.write_text(str(bytes_s))


def test_a_scrub_cut_short_by_the_run_s_end_records_what_the_devices_did(datastore_root,
                                                                        built_w1):
    """A scrub held to 5 MB/s a device still runs when the run ends: it is cancelled, with
    the devices' counters up to then; its bytes_moved (what its summary would have said it
    verified) is unknown, never the devices' writes."""
    root = datastore_root
    doc, flags = _raid1(root, built_w1, "--loop", "2x1GiB")
    _slow_scrub(doc["mount"], 5 * 10**6)  # W=1's 290 MB would take a minute
    try:
        oltplab("tpcc", "run", *flags, "--users", "2", "--rampup", "1s", "--duration", "4s",
                "--power", "none", "--inject", "at=2s,scrub", cwd=root.parent)
        run = saved_runs(root.parent / "results")[-1]
    finally:
        oltplab("db", "stop", *flags, cwd=root.parent)
    [event] = run["events"]
    assert event["error"].startswith("cancelled after"), event
    assert event["bytes_moved"] is None and event["mb_per_s"] is None, event
    assert event["bytes_moved_counts"].startswith("bytes the scrub read and verified")
    assert event["bytes_read"] == sum(event["devices_read_bytes"].values()) > 0, event
    assert sorted(event["devices_written_bytes"]) == sorted(d["path"] for d in doc["devices"])
    ds(root, "destroy", "r1")

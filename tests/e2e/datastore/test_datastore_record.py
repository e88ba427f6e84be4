"""A datastore's record says what its file system has: devices given by a symlink are
resolved once at create (the names btrfs and /proc/diskstats use), a removal named by such a
link counts the bytes the remaining devices wrote, every fault's work leaves the record equal
to ``btrfs filesystem show`` however it ended, and a btrfs command that goes on after the run
asked it to stop is waited for with a bound and recorded as still running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from oltplab.config import parse_inject
from oltplab.datastores import service
from oltplab.errors import DatabaseError
from oltplab.faults import datastore as faults

from ..conftest import datastore as ds
from ..tpcc.test_device_faults import _slow_scrub
from .conftest import MiB

MB = 10**6


def _record(root: Path, name: str) -> dict:
    return json.loads((root / name / "datastore.json").read_text())


def _fill(mount: str, megabytes: int) -> None:
    """Data the file system must move or read: random, so that nothing compresses it away."""
    subprocess.run(["dd", "if=/dev/urandom", f"of={mount}/fill", "bs=1M",
                    f"count={megabytes}", "status=none"], check=True)
    subprocess.run(["sync", "-f", f"{mount}/fill"], check=True)


def _target(doc: dict) -> SimpleNamespace:
    """What a fault acts on: a server whose data directory is on the datastore."""
    return SimpleNamespace(instance=SimpleNamespace(datadir=Path(doc["mount"]) / "pg"))


def test_symlinked_devices_are_resolved_once_and_a_removal_by_a_link_counts_its_bytes(
        datastore_root, loops):
    root = datastore_root
    # 1.5 GiB each: the two left hold the removed one's data chunks and still have room for
    # the new metadata chunk btrfs relocates last (on 1 GiB devices, with 400 MB of data, it
    # sometimes had none: ENOSPC, and the file system went read-only)
    disks = [loops(f"disk{i}", 1536 * MiB) for i in range(3)]
    links = root.parent / "by-id"
    links.mkdir()
    named = []
    for i, disk in enumerate(disks):
        (links / f"ata-DISK_{i}").symlink_to(disk)
        named.append(str(links / f"ata-DISK_{i}"))
    ds(root, "create", "s", "--devices", ",".join(named), "--raid", "raid1",
       "--metadata", "raid1")
    doc = _record(root, "s")
    assert doc["devices"] == disks, doc
    assert doc["named"] == dict(zip(disks, named)), doc
    assert service.members(doc["mount"]) == disks
    _fill(doc["mount"], 400)  # most chunks full: a removal has data to move

    rec: dict = {}
    work = faults.RemoveDevice(_target(doc), parse_inject(f"at=0s,remove-device={named[2]}"))
    work.fire(rec, threading.Event())
    assert rec["device"] == disks[2] and rec["ended"] == "done", rec
    assert sorted(rec["devices_written_bytes"]) == sorted(disks[:2]), rec
    # raid1 keeps two copies of the 400 MB, over three disks: the copies on the removed one
    # (about two thirds of the data) are written again on the two left
    assert rec["bytes_moved"] >= 100 * MB, rec
    assert rec["devices_after"] == 2, rec
    doc = _record(root, "s")
    assert doc["devices"] == disks[:2] and doc["removed"] == [disks[2]], doc
    assert service.members(doc["mount"]) == doc["devices"]
    ds(root, "destroy", "s")
    for disk in disks[:2]:  # its own: wiped
        assert subprocess.run(["blkid", "-p", disk], capture_output=True).returncode == 2
    # the removed one was released at removal (btrfs erased its super block) and not touched


def test_a_record_made_stale_outside_oltplab_is_brought_back_to_the_file_system(
        datastore_root):
    """A device removed by hand (btrfs device remove) and a profile converted by hand: show
    and destroy see the file system, and destroy does not wipe the device that left."""
    root = datastore_root
    ds(root, "create", "h", "--raid", "raid1", "--metadata", "raid1", "--loop", "3x640MiB")
    doc = _record(root, "h")
    gone = doc["devices"][1]
    subprocess.run(["btrfs", "device", "remove", gone, doc["mount"]], check=True,
                   capture_output=True)
    subprocess.run(["btrfs", "balance", "start", "-dconvert=single", doc["mount"]],
                   check=True, capture_output=True)
    shown = json.loads(ds(root, "show", "h", "--json").stdout)
    assert [d["path"] for d in shown["devices"]] == [doc["devices"][0], doc["devices"][2]]
    assert shown["raid"] == "single", shown
    doc = _record(root, "h")
    assert doc["removed"] == [gone] and service.members(doc["mount"]) == doc["devices"], doc
    assert doc["raid"] == "single" and doc["metadata"] == "raid1", doc


def _btrfs_child(command: str) -> int | None:
    """The pid of a ``btrfs <command>`` process, or None."""
    p = subprocess.run(["pgrep", "-f", f"^btrfs {command}"], capture_output=True, text=True)
    return int(p.stdout.split()[0]) if p.stdout.split() else None


def test_work_that_goes_on_after_its_cancel_is_waited_for_with_a_bound(datastore_root,
                                                                      monkeypatch):
    """The scrub's process is stopped (SIGSTOP) so that it cannot end when the run ends and
    the scrub is cancelled: the fault gives up after CANCEL_WAIT_S, says the work is still
    running, and keeps the devices' counters up to then; the record matches the file
    system."""
    root = datastore_root
    ds(root, "create", "c", "--raid", "raid1", "--metadata", "raid1", "--loop", "2x640MiB")
    doc = _record(root, "c")
    _fill(doc["mount"], 40)
    _slow_scrub(doc["mount"], 5 * 10**6)  # 80 MB at 5 MB/s a device: it outlasts the test
    monkeypatch.setattr(faults, "CANCEL_WAIT_S", 3.0)
    work = faults.Scrub(_target(doc), parse_inject("at=0s,scrub"))
    rec: dict = {}
    stop = threading.Event()
    errors: list[Exception] = []

    def fire():
        try:
            work.fire(rec, stop)
        except DatabaseError as e:
            errors.append(e)

    thread = threading.Thread(target=fire, daemon=True)
    pid = None
    try:
        thread.start()
        deadline = time.monotonic() + 10
        while (pid := _btrfs_child("scrub start")) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pid is not None, "the scrub did not start"
        os.kill(pid, signal.SIGSTOP)
        t0 = time.monotonic()
        stop.set()
        thread.join(30)
        assert not thread.is_alive(), "the fault waited without a bound"
        assert time.monotonic() - t0 < 3.0 + 5, "the bound was not kept"
        assert [str(e) for e in errors] == [
            "still running 3 s after the run ended (btrfs scrub cancel did not stop it): "
            "left running, the datastore recorded as it was then"], errors
        assert rec["ended"] == faults.STILL_RUNNING and rec["seconds"] > 0, rec
        assert rec["bytes_read"] == sum(rec["devices_read_bytes"].values()), rec
        assert rec["devices_after"] == 2, rec
    finally:
        if pid is not None:
            os.kill(pid, signal.SIGCONT)
            for _ in range(200):
                if _btrfs_child("scrub start") is None:
                    break
                time.sleep(0.05)
    ds(root, "destroy", "c")


def test_a_cancelled_conversion_leaves_the_record_equal_to_the_file_system(datastore_root):
    """A conversion stopped when the run ends: cancelled, and the record says what the file
    system has then (chunks of both profiles, named both)."""
    root = datastore_root
    ds(root, "create", "x", "--raid", "raid1", "--metadata", "raid1", "--loop", "2x1GiB")
    doc = _record(root, "x")
    _fill(doc["mount"], 200)
    work = faults.Convert(_target(doc), parse_inject("at=0s,convert=single"))
    rec: dict = {}
    stop = threading.Event()
    threading.Timer(0.6, stop.set).start()
    try:
        work.fire(rec, stop)
    except DatabaseError as e:
        assert str(e).startswith("cancelled after"), e
        assert rec["ended"] == "cancelled", rec
    else:
        assert rec["ended"] == "done", rec  # it beat the cancel: recorded as done
    after = _record(root, "x")
    assert service.members(after["mount"]) == after["devices"], after
    assert service.data_profiles(after["mount"])["raid"] == after["raid"], after
    ds(root, "destroy", "x")

"""Every device of a btrfs datastore is sampled, on real loop devices: a run on a 4-device
raid1 records each member's writes, the datastore's totals over all four and the database's
own IOs beside them; a device removed from the file system and deleted while the sampler
runs gives null figures from then on and stops nothing."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import free_port
from oltplab.report.runs import prepare
from oltplab.report.timeline import busy_devices
from oltplab.results.store import load_run
from oltplab.telemetry.derive import window_figures
from oltplab.telemetry.sampler import Sampler

from ..conftest import datastore as ds
from ..conftest import oltplab

IO_KEYS = {"front_read_iops", "front_write_iops", "back_read_iops", "back_write_iops",
           "amplification", "read_iops", "write_iops", "reads_per_write", "read_kib",
           "write_kib", "await_ms", "await_p99_ms"}
LOOP_CTL_REMOVE = 0x4C81


@pytest.mark.parametrize("engine", ["postgres", "mariadb"])
def test_a_raid1_run_samples_all_four_devices_its_spare_and_its_front_end(
        engine, datastore_root, built_w1):
    root = datastore_root
    ds(root, "create", "r1", "--raid", "raid1", "--metadata", "raid1", "--loop", "4x1GiB",
       "--spares", "1")
    doc = json.loads(ds(root, "show", "r1", "--json").stdout)
    members = [Path(d["path"]).name for d in doc["devices"]]
    [spare] = [Path(d).name for d in json.loads((root / "r1" / "datastore.json").read_text())[
        "spares"]]
    datadir = str(built_w1(engine, Path(doc["mount"]) / engine))
    flags = ["--engine", engine, "--datadir", datadir, "--port", str(free_port()),
             "--db-memory", "64MiB"]
    try:
        ran = oltplab("tpcc", "run", *flags, "--users", "2", "--rampup", "1s", "--duration",
                      "5s", "--power", "none", cwd=root.parent, check_rc=0)
        shown = oltplab("results", "show", "latest", "--json", cwd=root.parent, check_rc=0)
    finally:
        oltplab("db", "stop", *flags, cwd=root.parent)
    record = json.loads(shown.stdout)
    [step] = record["steps"]
    devices = step["telemetry"]["devices"]
    # the mount table names the first device; all four hold the data and are measured
    for name in members:
        assert devices[name]["write_iops"] > 0, (name, devices)
    store = step["telemetry"]["datastore"]
    assert store["devices"] == [*members, spare] and store["paths"] == {"datadir": datadir}
    # the datastore's devices hold its file system alone: no note that they serve more
    assert store["shared"] == {"root": False, "others": []} and "also serve" not in ran.stdout
    assert devices[spare]["write_iops"] == 0  # sampled in case a replacement makes it one
    assert store["write_iops"] == pytest.approx(sum(devices[n]["write_iops"] for n in members))
    assert store["written_gb"] == pytest.approx(sum(devices[n]["written_gb"] for n in members))
    io = step["io"]
    assert set(io) == IO_KEYS, io
    assert io["back_write_iops"] == store["write_iops"] and io["front_write_iops"] > 0
    # every write of the database is written at least twice by a mirror
    assert io["amplification"] == pytest.approx(io["back_write_iops"] / io["front_write_iops"])
    assert io["amplification"] > 1.5, io
    # the run's timeline charts draw every member
    saved = load_run(root.parent / "results", record["id"])
    assert set(members) <= set(busy_devices(prepare(saved)))
    # a record made before steps had ``io`` shows it from its telemetry
    path = Path(saved["_path"]) / "run.json"
    older = json.loads(path.read_text())
    del older["steps"][0]["io"]
    path.write_text(json.dumps(older))
    again = oltplab("results", "show", record["id"], "--json", cwd=root.parent, check_rc=0)
    assert json.loads(again.stdout)["steps"][0]["io"] == io
    ds(root, "destroy", "r1")


def _loop(image: Path) -> str:
    return subprocess.run(["losetup", "--find", "--show", str(image)], check=True,
                          capture_output=True, text=True).stdout.strip()


def _write(folder: Path, name: str, mib: int) -> None:
    with open(folder / name, "wb") as f:
        f.write(os.urandom(mib * 1024**2))
        f.flush()
        os.fsync(f.fileno())


def test_a_device_that_leaves_during_sampling_gives_nulls_after(server_tmp):
    if os.geteuid() != 0:
        pytest.skip("loop devices need root")
    images = [server_tmp / f"d{i}.img" for i in range(3)]
    for image in images:
        with open(image, "wb") as f:
            f.truncate(512 * 1024**2)
    loops = [_loop(image) for image in images]
    mount = server_tmp / "mnt"
    mount.mkdir()
    try:
        subprocess.run(["mkfs.btrfs", "-q", "-f", "-d", "raid1", "-m", "raid1", *loops],
                       check=True, capture_output=True)
        subprocess.run(["mount", loops[0], str(mount)], check=True)
        sampler = Sampler(0.25, paths={"datadir": mount}, power="none", interfaces=[])
        sampler.start()
        try:
            _write(mount, "before", 32)
            time.sleep(0.6)
            subprocess.run(["btrfs", "device", "remove", loops[2], str(mount)], check=True,
                           capture_output=True)
            subprocess.run(["losetup", "--detach", loops[2]], check=True)
            with open("/dev/loop-control") as ctl:  # the device itself goes away
                fcntl.ioctl(ctl, LOOP_CTL_REMOVE, int(loops[2].removeprefix("/dev/loop")))
            gone = Path(loops[2]).name
            assert gone not in Path("/proc/diskstats").read_text().split()
            _write(mount, "after", 16)
            time.sleep(0.6)
        finally:
            timeline = sampler.stop()
    finally:
        subprocess.run(["umount", str(mount)])
        for loop in loops[:2]:
            subprocess.run(["losetup", "--detach", loop])
    names = [Path(p).name for p in loops]
    assert timeline.roles["datadir"]["members"] == names and timeline.errors == []
    writes = timeline.columns[f"disk.{gone}.w_s"]
    assert any(v for v in writes if v), "it wrote while it was a member"
    assert writes[-3:] == [None, None, None], writes
    figures = window_figures(timeline, timeline.t0_ns, timeline.end_ns + 1)
    store = figures["datastore"]
    assert store["devices"] == names and store["written_gb"] * 1024 > 2 * (32 + 16) * 0.9
    assert store["shared"] == {"root": False, "others": []}  # the loop devices hold it alone
    assert figures["devices"][gone]["write_iops"] > 0

"""Every member disk of the storage under the data is found (a fake /sys tree), the members'
figures add up to the datastore's, and the database's I/Os stand beside theirs: known answers."""

from __future__ import annotations

import math
import os

import pytest

from oltplab.telemetry.derive import (FIGURES, IO_KEYS, STORAGE_KEYS, bytes_amplification,
                                      io_figures, members_series, step_figures, step_windows,
                                      window_figures)
from oltplab.telemetry.sampler import Timeline
from oltplab.telemetry.sources.disks import (METRICS, btrfs_devices, iostat_figures,
                                             member_disks, parse_diskstats)

S = 1_000_000_000


def _disk(root, where: str, name: str, parts=(), slaves=()) -> None:
    """/sys/devices/<where>/<name> with its partitions and slaves, and /sys/block/<name>."""
    node = root / "devices" / where / name
    (node / "slaves").mkdir(parents=True)
    for part in parts:
        (node / part).mkdir()
        (node / part / "partition").write_text("1\n")
    (root / "block").mkdir(exist_ok=True)
    os.symlink(node, root / "block" / name)
    for below in slaves:  # a slave is a disk or a partition, linked to its folder
        os.symlink(_node(root, below), node / "slaves" / below)


def _node(root, name: str):
    for path in (root / "devices").rglob(name):
        return path
    raise AssertionError(name)


def _btrfs(root, fsid: str, *names: str) -> None:
    folder = root / "fs" / "btrfs" / fsid / "devices"
    folder.mkdir(parents=True)
    for name in names:
        os.symlink(_node(root, name), folder / name)


@pytest.fixture
def sys_tree(tmp_path):
    """loop0..loop11 (a 4-device raid1 btrfs on loop8..loop11, another on loop2 and loop3);
    sda and sdb with a partition each under md0, dm-0 (an encrypted volume) over md0; vda with
    two partitions; a btrfs over vda2 and dm-1, itself over sdc; a btrfs over dm-0 and dm-2,
    two volumes over md0."""
    for i in range(12):
        _disk(tmp_path, "virtual/block", f"loop{i}")
    for name in ("sda", "sdb", "sdc"):
        _disk(tmp_path, "pci0000:00/ata1/block", name, parts=(f"{name}1",))
    _disk(tmp_path, "pci0000:00/virtio1/block", "vda", parts=("vda1", "vda2"))
    _disk(tmp_path, "virtual/block", "md0", slaves=("sda1", "sdb1"))
    _disk(tmp_path, "virtual/block", "dm-0", slaves=("md0",))
    _disk(tmp_path, "virtual/block", "dm-1", slaves=("sdc",))
    _disk(tmp_path, "virtual/block", "dm-2", slaves=("md0",))
    _btrfs(tmp_path, "0a42-raid1", "loop8", "loop9", "loop10", "loop11")
    _btrfs(tmp_path, "6447-other", "loop2", "loop3")
    _btrfs(tmp_path, "77aa-mixed", "vda2", "dm-1")
    _btrfs(tmp_path, "88bb-lvm", "dm-0", "dm-2")
    return str(tmp_path)


def test_every_device_of_a_btrfs_is_a_member(sys_tree):
    # the mount table names one device (the first, or whichever mounted it): all four count
    for named in ("loop8", "loop10"):
        assert member_disks(named, None, "btrfs", sys_tree) == ["loop8", "loop9", "loop10",
                                                                "loop11"]
    assert member_disks("loop2", None, "btrfs", sys_tree) == ["loop2", "loop3"]
    assert [os.path.basename(p) for p in btrfs_devices("loop9", sys_tree)] == [
        "loop8", "loop9", "loop10", "loop11"]
    assert btrfs_devices("loop5", sys_tree) == []


def test_md_and_device_mapper_are_walked_down_to_their_disks(sys_tree):
    assert member_disks("md0", None, "xfs", sys_tree) == ["sda", "sdb"]  # partitions: disks
    assert member_disks("dm-0", None, "ext4", sys_tree) == ["sda", "sdb"]  # dm over md
    # a btrfs on a partition and on an encrypted disk: the disks under both
    assert member_disks("vda", "vda2", "btrfs", sys_tree) == ["sdc", "vda"]  # dm-1, vda2
    # two volumes over one md: its disks once, never a volume taken for a disk
    assert member_disks("dm-2", None, "btrfs", sys_tree) == ["sda", "sdb"]


def test_a_plain_disk_is_its_own_member_and_an_unknown_one_has_none(sys_tree):
    assert member_disks("sdc", "sdc1", "ext4", sys_tree) == ["sdc"]
    assert member_disks("loop5", None, "btrfs", sys_tree) == ["loop5"]  # not mounted: itself
    assert member_disks("nvme9n1", None, "xfs", sys_tree) == []


def test_a_device_replaced_between_two_readings_gives_no_figures():
    before = parse_diskstats(b" 7 0 loop9 5000 0 40000 300 9000 0 72000 900 0 700 1200\n")
    after = parse_diskstats(b" 7 0 loop9 3 0 24 1 5 0 40 2 0 3 3\n")  # counters from zero
    values = iostat_figures(before["loop9"], after["loop9"], 1.0)
    assert len(values) == len(METRICS) and all(math.isnan(v) for v in values)


# -- the datastore's figures --------------------------------------------------------------------
N = 6  # samples ending at 1 s .. 6 s; the step measures [1 s, 6 s): samples 1..5


def _timeline(roles: dict | None = None, front: bool = True) -> Timeline:
    """Three members (loop8 leaves after 3 s: its samples are null then) and vda."""
    cols = {"t_ns": [(i + 1) * S for i in range(N)], "dt_s": [1.0] * N}
    series = {
        "loop8": {"r_s": [None, 10, 10, None, None, None], "w_s": [None, 100, 100, None, None,
                                                                     None],
                  "r_await": [None, 2, 2, None, None, None],
                  "w_await": [None, 1, 1, None, None, None], "util": [None, 40, 40] + [None] * 3},
        "loop9": {"r_s": [None, 0, 0, 0, 0, 0], "w_s": [None, 100, 100, 200, 200, 200],
                  "r_await": [None] * N, "w_await": [None, 3, 3, 2, 2, 2],
                  "util": [None, 60, 60, 80, 80, 80]},
        "loop10": {"r_s": [None, 30, 30, 40, 40, 40], "w_s": [None, 100, 100, 200, 200, 200],
                   "r_await": [None, 4, 4, 1, 1, 1], "w_await": [None, 3, 3, 2, 2, 2],
                   "util": [None, 20, 20, 80, 80, 80]},
        "vda": {"r_s": [None, 5, 5, 5, 5, 5], "w_s": [None, 999, 999, 999, 999, 999],
                "r_await": [None, 1, 1, 1, 1, 1], "w_await": [None, 9, 9, 9, 9, 9],
                "util": [None, 50, 50, 50, 50, 50]},
    }
    for dev, figures in series.items():
        # writes of 4 KiB (wMB_s in MiB/s); no read bytes, queue or flushes to speak of
        figures["wMB_s"] = [None if w is None else w / 256 for w in figures["w_s"]]
        for m in ("rMB_s", "aqu_sz", "f_s"):
            figures[m] = [None if r is None else 0.0 for r in figures["r_s"]]
        for m in METRICS:
            cols[f"disk.{dev}.{m}"] = figures[m]
    if front:  # the database: 60 writes/s of 16 KiB, 20 reads/s of 8 KiB
        cols["db.front_reads_s"] = [None] + [20] * 5
        cols["db.front_writes_s"] = [None] + [60] * 5
        cols["db.front_read_bytes_s"] = [None] + [20 * 8192] * 5
        cols["db.front_written_bytes_s"] = [None] + [60 * 16384] * 5
    cols["db.commits_s"] = [None] + [50] * 5
    members = ["loop8", "loop9", "loop10"]
    return Timeline(
        interval_s=1.0, t0_ns=0, end_ns=N * S, columns=cols,
        devices={d: {"roles": ["datadir"] if d != "vda" else []} for d in series},
        roles=roles if roles is not None else {"datadir": {
            "path": "/ds/r1/mnt/pg", "device": "loop8", "members": members}},
        marks=[{"name": "step_start", "t_ns": 0, "users": 2, "step": 0},
               {"name": "ramp_end", "t_ns": 1 * S, "step": 0},
               {"name": "measure_end", "t_ns": 6 * S, "step": 0}],
        database={"available": True})


def test_members_add_up_and_a_member_that_left_counts_as_serving_nothing():
    f = step_figures(_timeline(), step_windows(_timeline())[0])
    d = f["datastore"]
    assert d["devices"] == ["loop8", "loop9", "loop10"] and d["paths"] == {
        "datadir": "/ds/r1/mnt/pg"}
    # writes: 300 + 300 in the first two seconds, 400 in each of the last three
    assert d["write_iops"] == pytest.approx((600 + 1200) / 5)
    assert d["read_iops"] == pytest.approx((40 + 40 + 120) / 5)
    assert d["iops"] == pytest.approx(d["read_iops"] + d["write_iops"])
    assert d["write_mb_s"] == pytest.approx(360 / 256)  # 1800 writes of 4 KiB in 5 s
    assert d["written_gb"] == pytest.approx(1800 / 256 / 1024)
    # every write's latency: 2 s x (100 x 1 + 200 x 3) ms, then 3 s x 400 x 2 ms; / 1800
    assert d["w_await_ms"] == pytest.approx((1400 + 2400) / 1800)
    # reads: 2 s x (10 x 2 + 30 x 4), then 3 s x 40 x 1; / 200 reads
    assert d["r_await_ms"] == pytest.approx((280 + 120) / 200)
    # %util is the members' mean: 40 in the first two seconds, 80 in the last three
    assert d["util_pct"] == pytest.approx((2 * 40 + 3 * 80) / 5)
    assert d["w_await_max_ms"] == pytest.approx(700 / 300)  # 2.33 ms in the first seconds
    # vda (not a member) is left out, and each device keeps its own figures
    assert f["devices"]["vda"]["write_iops"] == 999
    assert f["devices"]["loop8"]["write_iops"] == 100  # its mean over the seconds it had


def test_the_front_end_beside_the_back_end():
    f = step_figures(_timeline(), step_windows(_timeline())[0])
    db = f["db"]
    assert db["front_read_iops"] == 20 and db["front_write_iops"] == 60
    assert db["front_read_mib_s"] == pytest.approx(20 * 8192 / 2**20)
    assert db["front_write_mib_s"] == pytest.approx(60 / 64)
    io = io_figures(f)
    assert tuple(io) == IO_KEYS + STORAGE_KEYS
    assert IO_KEYS == ("front_read_iops", "front_write_iops", "back_read_iops",
                       "back_write_iops", "amplification")
    # the paper's storage view: every member's I/Os together
    store = f["datastore"]
    assert io["read_iops"] == 40 and io["write_iops"] == pytest.approx(360)
    assert io["reads_per_write"] == pytest.approx(40 / 360)
    assert io["read_kib"] == pytest.approx(store["read_mb_s"] * 1024 / 40)
    assert io["write_kib"] == pytest.approx(store["write_mb_s"] * 1024 / 360)
    assert io["await_ms"] == store["await_ms"]
    assert io["back_write_iops"] == pytest.approx(360) and io["back_read_iops"] == 40
    assert io["amplification"] == pytest.approx(360 / 60)
    assert bytes_amplification(f) == pytest.approx((360 / 256) / (60 / 64))
    for name in ("front_read_iops", "front_write_iops", "front_read_mib_s", "amplification"):
        assert "MB" not in FIGURES[name] and name in FIGURES


def test_amplification_is_none_where_a_side_is_unknown():
    no_db = step_figures(_timeline(front=False), step_windows(_timeline())[0])
    assert io_figures(no_db)["front_write_iops"] is None
    assert io_figures(no_db)["amplification"] is None and io_figures(no_db)[
        "back_write_iops"] == pytest.approx(360)
    assert io_figures({})["amplification"] is None and bytes_amplification({}) is None
    idle = {"db": {"front_write_iops": 0.0}, "datastore": {"write_iops": 12.0}}
    assert io_figures(idle)["amplification"] is None


def test_an_older_timeline_names_one_device_and_a_path_without_one_gives_none():
    old = _timeline(roles={"datadir": {"path": "/ds/r1/mnt/pg", "device": "loop9"}})
    d = window_figures(old, 1 * S, 6 * S)["datastore"]
    assert d["devices"] == ["loop9"] and d["write_iops"] == pytest.approx(160)
    nowhere = _timeline(roles={"datadir": {"path": "/proc", "device": None, "members": []}})
    assert window_figures(nowhere, 1 * S, 6 * S)["datastore"] is None
    # a WAL directory on other devices adds them; the backup's destination does not count
    both = _timeline(roles={"datadir": {"path": "/d", "device": "loop9", "members": ["loop9"]},
                            "waldir": {"path": "/w", "device": "loop10",
                                       "members": ["loop10"]},
                            "backup": {"path": "/b", "device": "vda", "members": ["vda"]}})
    d = window_figures(both, 1 * S, 6 * S)["datastore"]
    assert d["devices"] == ["loop9", "loop10"] and d["paths"] == {"datadir": "/d",
                                                                   "waldir": "/w"}


def test_members_series_sums_rates_and_weights_awaits():
    cols = {m: [[None, 1.0], [None, 3.0]] for m in METRICS}
    cols["r_s"] = [[None, 10.0], [None, 30.0]]
    cols["r_await"] = [[None, 1.0], [None, 5.0]]
    cols["w_s"] = [[None, 0.0], [None, None]]
    cols["w_await"] = [[None, None], [None, None]]
    out = members_series(cols)
    assert out["r_s"] == [None, 40.0] and out["w_s"] == [None, 0.0]
    assert out["r_await"] == [None, pytest.approx((10 + 150) / 40)]
    assert out["w_await"] == [None, None] and out["util"] == [None, 2.0]
    assert out["aqu_sz"] == [None, 4.0] and out["f_s"] == [None, 4.0]


def test_byte_labels_say_mib_and_gib():
    for name, text in FIGURES.items():
        assert "MB = 2^20" not in text and "GB = 2^30" not in text, name
    assert "MiB/s" in FIGURES["read_mb_s"] and "GiB" in FIGURES["written_gb"]
    assert "MiB/s" in FIGURES["wal_mb_s"] and "MiB/s" in FIGURES["innodb_data_written_mb_s"]


def test_what_else_the_data_disks_serve_is_carried_into_the_figures_and_said_once():
    from oltplab.cli.ui import storage_lines
    # an older timeline does not say
    assert window_figures(_timeline(), 1 * S, 6 * S)["datastore"]["shared"] is None
    both = _timeline(roles={
        "datadir": {"path": "/d", "device": "loop9", "members": ["loop9"],
                    "shared": {"root": True, "others": []}},
        "waldir": {"path": "/w", "device": "loop10", "members": ["loop10"],
                   "shared": {"root": False, "others": ["/srv", "/home"]}},
        "backup": {"path": "/b", "device": "vda", "members": ["vda"],
                   "shared": {"root": False, "others": ["/var"]}}})  # not the data's
    d = window_figures(both, 1 * S, 6 * S)["datastore"]
    assert d["shared"] == {"root": True, "others": ["/srv", "/home"]}
    run = {"steps": [{"telemetry": {"datastore": {"devices": ["loop9", "loop10"], "shared": {
        "root": True, "others": ["/srv"]}}}}] * 2}
    assert storage_lines(run) == [
        "note: the datastore's devices (loop9, loop10) also serve the root file system (/), "
        "the file system at /srv: their I/O figures count every process's I/O there, not the "
        "database's alone"]
    alone = {"steps": [{"telemetry": {"datastore": {"devices": ["loop9"], "shared": {
        "root": False, "others": []}}}}]}
    assert storage_lines(alone) == [] and storage_lines({"steps": [{}]}) == []
    # the report says it under the devices' table
    from oltplab.report.runs import RunData
    from oltplab.report.tpcc import devices_table
    shown = RunData(record=run, figures=[s["telemetry"] for s in run["steps"]])
    assert devices_table(shown).caption.endswith(
        "also serve the root file system (/), the file system at /srv: their I/O figures count "
        "every process's I/O there, not the database's alone.")
    quiet = RunData(record=alone, figures=[s["telemetry"] for s in alone["steps"]])
    assert devices_table(quiet).caption.endswith("2^20 and 2^30 bytes.")

"""host_metadata on this machine, odd paths, and the walk from a partition to its disk."""

import json
import os
from pathlib import Path

import pytest

from oltplab.host import facts as host
from oltplab.host.facts import host_metadata, path_storage


def test_host_fields_on_tmp():
    meta = host_metadata({"datadir": Path("/tmp")})
    json.dumps(meta)  # recorded in run.json as it is
    assert meta["cpu"]["logical_cores"] == os.cpu_count()
    assert meta["memory"]["total_bytes"] > 0
    assert meta["kernel_release"] == os.uname().release
    assert meta["hostname"] and meta["python"].split()[1].count(".") == 2
    assert meta["cpu"]["model"] is None or isinstance(meta["cpu"]["model"], str)
    tmp = meta["paths"]["datadir"]
    assert tmp["exists"] is True and tmp["resolved"] == str(Path("/tmp").resolve())
    assert tmp["mount_point"] and tmp["fs_type"] and tmp["source"]
    assert "/tmp".startswith(tmp["mount_point"].rstrip("/")) or tmp["mount_point"] == "/"
    dev = tmp["device"]
    if dev is not None:  # a block device behind /tmp (not a tmpfs)
        assert (Path("/sys/block") / dev["name"]).exists()
        assert dev["size_bytes"] is None or dev["size_bytes"] > 0
        assert dev["rotational"] in (True, False, None)


def test_os_pretty_name_matches_os_release():
    release = Path("/etc/os-release")
    if not release.exists():
        pytest.skip("no /etc/os-release")
    line = next(ln for ln in release.read_text().splitlines() if ln.startswith("PRETTY_NAME="))
    assert host_metadata()["os"] == line.split("=", 1)[1].strip('"')


@pytest.mark.parametrize("odd", ["/nonexistent/deeper/still", "/proc/self/status", "/dev/null",
                                 "relative/path", "", "a\x00b", 123])
def test_odd_paths_never_raise(odd):
    info = host_metadata({"p": odd, "none": None})["paths"]
    assert info["none"] is None
    assert set(info["p"]) >= {"mount_point", "fs_type", "source", "device"}


def test_missing_path_reports_its_nearest_existing_parent(tmp_path):
    info = path_storage(tmp_path / "not" / "yet")
    assert info["exists"] is False and info["resolved"] == str(tmp_path.resolve())
    assert info["fs_type"] is not None


def test_tmpfs_has_no_block_device():
    if not Path("/dev/shm").is_dir():
        pytest.skip("no /dev/shm")
    info = path_storage("/dev/shm")
    if info["fs_type"] == "tmpfs":
        assert info["device"] is None


def _fake_sysfs(root: Path) -> Path:
    """A sysfs-shaped tree: disk sdz with partition sdz2, as /sys lays them out."""
    disk = root / "devices" / "pci0" / "block" / "sdz"
    part = disk / "sdz2"
    (disk / "queue").mkdir(parents=True)
    (disk / "device").mkdir()
    part.mkdir()
    (part / "partition").write_text("2\n")
    (disk / "size").write_text("2000\n")
    (disk / "queue" / "rotational").write_text("0\n")
    (disk / "queue" / "scheduler").write_text("none [mq-deadline] kyber\n")
    (disk / "queue" / "logical_block_size").write_text("512\n")
    (disk / "device" / "model").write_text("Fast NVMe 9000   \n")
    devblock = root / "dev" / "block"
    devblock.mkdir(parents=True)
    (devblock / "259:2").symlink_to(part)
    (devblock / "259:0").symlink_to(disk)
    return devblock


def test_partition_walks_up_to_its_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(host, "SYS_DEV_BLOCK", _fake_sysfs(tmp_path))
    dev = host.block_device(259, 2)
    assert dev["name"] == "sdz" and dev["partition"] == "sdz2"
    assert dev["model"] == "Fast NVMe 9000" and dev["rotational"] is False
    assert dev["size_bytes"] == 2000 * 512 and dev["scheduler"] == "mq-deadline"
    assert dev["logical_block_size"] == 512 and dev["physical_block_size"] is None
    whole = host.block_device(259, 0)
    assert whole["name"] == "sdz" and whole["partition"] is None
    assert host.block_device(1, 99) is None


def test_mountinfo_escapes_are_decoded():
    assert host._unescape_mount(r"/mnt/my\040disk") == "/mnt/my disk"
    mounts = [{"mount_point": "/", "x": 1}, {"mount_point": "/mnt/my disk", "x": 2},
              {"mount_point": "/mnt/my", "x": 3}]
    assert host._mount_of(Path("/mnt/my disk/pg"), mounts)["x"] == 2
    assert host._mount_of(Path("/mnt/myother"), mounts)["x"] == 1

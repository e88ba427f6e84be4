"""What else the disks under a data path serve (host.facts.storage_sharing, as telemetry's
path_device records it for each data path): the root file system, which every process writes
to, and other file systems on the same disks, whose I/O the disks' counters count too."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from oltplab.host import facts
from oltplab.telemetry.sources.disks import path_device


def test_a_path_on_the_root_file_system_says_so(tmp_path):
    found = path_device(tmp_path)
    if found["device"] is None:
        pytest.skip(f"no block device under {tmp_path}: {found['reason']}")
    on_root = facts.path_storage(tmp_path)["mount_point"] == "/"
    assert found["shared"]["root"] is on_root


@pytest.fixture
def ext4_on_a_loop(tmp_path):
    """An ext4 file system of its own on a loop device, mounted at tmp_path/a."""
    if os.geteuid() != 0 or shutil.which("mkfs.ext4") is None:
        pytest.skip("needs root and e2fsprogs")
    image, mount = tmp_path / "disk.img", tmp_path / "a"
    with open(image, "wb") as f:
        f.truncate(64 * 1024**2)
    p = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"no loop device: {p.stderr.strip()}")
    loop = Path(p.stdout.strip())
    mount.mkdir()
    try:
        subprocess.run(["mkfs.ext4", "-q", "-F", str(loop)], check=True, capture_output=True)
        subprocess.run(["mount", str(loop), str(mount)], check=True, capture_output=True)
        try:
            yield loop, mount
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True)
    finally:
        subprocess.run(["losetup", "-d", str(loop)], capture_output=True)


def test_a_file_system_of_its_own_shares_its_disk_with_nothing(ext4_on_a_loop):
    loop, mount = ext4_on_a_loop
    (mount / "pg").mkdir()
    found = path_device(mount / "pg")
    assert found["device"] == loop.name and found["members"] == [loop.name]
    assert found["shared"] == {"root": False, "others": []}


def test_another_file_system_on_the_same_disk_is_named(ext4_on_a_loop, tmp_path):
    loop, mount = ext4_on_a_loop
    # This kernel reads no partition table and has no device-mapper, so a second file system
    # on the same disk (a partition beside the data's, a volume over it) is entered in the
    # mount table as one with a device number of its own whose source is that disk.
    table = [*facts._mounts(), {"mount_point": str(tmp_path / "b"), "dev": "0:4095",
                                "fs_type": "ext4", "source": str(loop), "options": "rw",
                                "fs_options": None}]
    assert facts.storage_sharing(mount, [loop.name], table) == {
        "root": False, "others": [str(tmp_path / "b")]}
    # the data's own file system, mounted a second time (a bind mount), is not another one
    again = [*facts._mounts(), {**next(m for m in facts._mounts()
                                       if m["mount_point"] == str(mount)),
                                "mount_point": str(tmp_path / "c")}]
    assert facts.storage_sharing(mount, [loop.name], again)["others"] == []
    # nor does a disk that holds none of the data count
    assert facts.storage_sharing(mount, ["no-such-disk"], table)["others"] == []

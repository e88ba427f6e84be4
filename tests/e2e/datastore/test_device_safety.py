"""A user's device is touched only when oltplab can prove it is free: a device with two
signatures at once (blkid's "ambivalent result") is refused without --force, and a create that
fails in mkfs leaves every device's old signatures as they were."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from oltplab.datastores.devices import loops_under

from ..conftest import datastore as ds
from .conftest import MiB


def _head(device: str) -> str:
    """A digest of the device's first 1 MiB (where the signatures of the test lie)."""
    with open(device, "rb") as f:
        return hashlib.sha256(f.read(MiB)).hexdigest()


def _blkid(device: str) -> tuple[int, str]:
    p = subprocess.run(["blkid", "-p", "-o", "export", device], capture_output=True, text=True)
    return p.returncode, p.stdout


def test_a_device_with_two_signatures_is_refused_and_left_as_it_was(datastore_root, loops):
    root = datastore_root
    two, ext4 = loops("two"), loops("ext4")
    # btrfs's super block at 64 KiB beside an ext4 super block at 1 KiB: blkid exits with 8
    subprocess.run(["mkfs.btrfs", "-q", "-f", two], check=True, capture_output=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", ext4], check=True, capture_output=True)
    with open(ext4, "rb") as src, open(two, "r+b") as dst:
        src.seek(1024)
        dst.seek(1024)
        dst.write(src.read(1024))
    assert _blkid(two)[0] == 8
    before = _head(two)
    p = ds(root, "create", "b", "--devices", two, rc=2)
    assert p.stderr.strip().endswith(
        f"--devices: {two} carries two or more signatures (blkid: ambivalent result); "
        "--force overwrites it"), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert _head(two) == before and _blkid(two)[0] == 8
    assert not (root / "b").exists()


def test_a_create_whose_mkfs_fails_leaves_the_old_signatures(datastore_root, loops):
    root = datastore_root
    big, small = loops("big"), loops("small", 40 * MiB)  # below btrfs's minimum of 125 MiB
    subprocess.run(["mkfs.xfs", "-q", "-f", big], check=True, capture_output=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", small], check=True, capture_output=True)
    before = {d: (_head(d), _blkid(d)) for d in (big, small)}
    p = ds(root, "create", "b", "--devices", f"{big},{small}", "--raid", "raid1", "--force",
           rc=1)
    assert "is too small" in p.stderr or "minimum size" in p.stderr, p.stderr
    assert {d: (_head(d), _blkid(d)) for d in (big, small)} == before
    assert "TYPE=xfs" in before[big][1][1] and "TYPE=ext4" in before[small][1][1]
    assert not (root / "b").exists()


def test_a_root_with_spaces_and_an_immutable_backing_file_are_destroyed_whole(datastore_root):
    root = datastore_root.parent / "data stores here"
    ds(root, "create", "r1", "--raid", "raid1", "--loop", "2x320MiB")
    images = root / "r1" / "images"
    loops = loops_under(images)
    assert len(loops) == 2
    # what a fail-device fault leaves when its process dies before it ends
    subprocess.run(["chattr", "+i", str(images / "disk1.img")], check=True)
    ds(root, "destroy", "r1")
    assert not (root / "r1").exists()
    assert loops_under(images) == []
    attached = subprocess.run(["losetup", "--list", "--noheadings", "--output", "BACK-FILE"],
                              capture_output=True, text=True).stdout
    assert str(images) not in attached


def _attach_at(name: str, image: Path) -> None:
    subprocess.run(["losetup", name, str(image)], check=True, capture_output=True)


def test_destroy_after_the_device_names_moved_wipes_only_its_own(datastore_root, loops):
    root = datastore_root
    images = {n: datastore_root.parent / f"{n}.img" for n in ("a", "b")}
    first, second = loops("a"), loops("b")
    ds(root, "create", "r1", "--raid", "raid1", "--devices", f"{first},{second}")
    doc = json.loads((root / "r1" / "datastore.json").read_text())
    assert doc["fs_uuid"] and set(doc["identity"]) == {first, second}
    # a reboot: the file system unmounted, the names given again in another order, with a
    # stranger (an ext4 of somebody else's) where the first device was
    subprocess.run(["umount", doc["mount"]], check=True)
    for name in (first, second):
        subprocess.run(["losetup", "--detach", name], check=True)
    stranger = datastore_root.parent / "stranger.img"
    with open(stranger, "wb") as f:
        f.truncate(320 * MiB)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(stranger)], check=True, capture_output=True)
    _attach_at(first, stranger)
    _attach_at(second, images["a"])  # the datastore's first device, now under the second name
    _attach_at(loops_free := subprocess.run(["losetup", "--find"], capture_output=True,
                                            text=True).stdout.strip(), images["b"])
    try:
        before = _head(first)
        p = ds(root, "destroy", "r1")
        assert f"{first} left alone: it carries no file system of this datastore (UUID " \
            in p.stderr, p.stderr
        assert _head(first) == before and "TYPE=ext4" in _blkid(first)[1]
        assert _blkid(second)[0] == 2  # its own device, under a new name, is wiped
        assert "TYPE=btrfs" in _blkid(loops_free)[1]  # not named by the record: untouched
        assert not (root / "r1").exists()
    finally:
        subprocess.run(["losetup", "--detach", loops_free])

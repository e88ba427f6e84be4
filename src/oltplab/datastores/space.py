"""The space a datastore's files take, as the papers count it.

- ``logical_bytes``: the data the files hold (holes left out, before compression and sharing).
- ``apparent_bytes``: the files' sizes.
- ``allocated_bytes``: what the file system uses on its devices now, less what it used empty
  (so mirrors, parity and metadata count, the empty file system's own blocks do not): btrfs'
  raw "Used" over all devices, for ext4 and xfs the blocks in use.
- ``data_ratio``: allocated / logical (2.0 for two copies, 1.33 for a 4-device RAID-5).
- ``compression_ratio``: uncompressed / on-disk bytes of the files' extents (2.0 halves them),
  read from btrfs' extent items as compsize does; null where the file system cannot tell.
- ``dedupe_saved_bytes``: bytes the files reference beyond the extents that hold them (shared
  extents counted once); null where the file system cannot tell.

Where btrfs-progs does not count every chunk, ``allocated_bytes`` and ``data_ratio`` are None
and the figures say why: ``available`` is false, ``reason`` is btrfs-progs' own words and
``unavailable`` names the figures left out (the others, read from the files' extents, stand).
That is a RAID-5/6 file system under btrfs-progs before 5.7 ("RAID56 detected, not
implemented": its "Used" leaves the RAID-5/6 chunks out, so a RAID-5 datastore would show a
data ratio near zero), or one whose chunk tree it could not read ("cannot read detailed chunk
info"): either prints a ratio of 0.00 for the profiles it skipped. Otherwise ``available`` is
true and ``reason`` null.

The file system is synced before it is measured: until then data still in the page cache has
no extents, and the extents of files removed stay allocated until btrfs' next commit (up to 30
s later), so the figures would depend on where in that cycle they were taken.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import re
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import OltplabError

# BTRFS_IOC_TREE_SEARCH: _IOWR(0x94, 17, struct btrfs_ioctl_search_args), 4096 bytes
_TREE_SEARCH = 0xD0009411
_KEY = struct.Struct("=7Q4I4Q")  # btrfs_ioctl_search_key: 104 bytes
_HEADER = struct.Struct("=3Q2I")  # btrfs_ioctl_search_header: transid objectid offset type len
_EXTENT = struct.Struct("=QQBBHB")  # file extent item head: generation ram_bytes compression ...
_EXTENT_DISK = struct.Struct("=4Q")  # disk_bytenr disk_num_bytes offset num_bytes
_EXTENT_DATA_KEY = 108
_ARGS_BYTES = 4096
_U64 = 2**64 - 1


@dataclass
class ExtentTotals:
    disk_bytes: int = 0  # on the device (compressed), each extent once
    uncompressed_bytes: int = 0  # the same extents uncompressed, each once
    referenced_bytes: int = 0  # what the files refer to, shared extents as often as shared


def btrfs_file_extents(fd: int, inode: int, totals: ExtentTotals, seen: set[int]) -> None:
    """Add one file's extents (BTRFS_IOC_TREE_SEARCH on its EXTENT_DATA items) to ``totals``;
    ``seen`` holds the disk addresses already counted, so a shared extent counts once."""
    offset = 0
    while True:
        args = ctypes.create_string_buffer(_ARGS_BYTES)
        _KEY.pack_into(args, 0, 0, inode, inode, offset, _U64, 0, _U64,
                       _EXTENT_DATA_KEY, _EXTENT_DATA_KEY, 4096, 0, 0, 0, 0, 0)
        fcntl.ioctl(fd, _TREE_SEARCH, args)
        found = _KEY.unpack_from(args, 0)[9]
        if found == 0:
            return
        pos = _KEY.size
        for _ in range(found):
            _, objectid, key_offset, kind, length = _HEADER.unpack_from(args, pos)
            item = pos + _HEADER.size
            pos = item + length
            if objectid != inode or kind != _EXTENT_DATA_KEY:
                continue
            offset = key_offset + 1
            _, ram_bytes, _, _, _, extent_type = _EXTENT.unpack_from(args, item)
            if extent_type == 0:  # inline: the data sits in the item itself
                totals.disk_bytes += length - _EXTENT.size
                totals.uncompressed_bytes += ram_bytes
                totals.referenced_bytes += ram_bytes
                continue
            bytenr, disk_num, _, num_bytes = _EXTENT_DISK.unpack_from(args, item + _EXTENT.size)
            if bytenr == 0:  # a hole
                continue
            totals.referenced_bytes += num_bytes
            if bytenr not in seen:
                seen.add(bytenr)
                totals.disk_bytes += disk_num
                totals.uncompressed_bytes += ram_bytes
        if offset == 0:
            return


def _files(mount: Path):
    """Regular files under ``mount`` on its own file system, with their stat."""
    top = os.stat(mount).st_dev
    for folder, dirs, names in os.walk(mount):
        for name in names:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if st.st_dev == top and (st.st_mode & 0o170000) == 0o100000:
                yield path, st
        dirs[:] = [d for d in dirs if not os.path.ismount(os.path.join(folder, d))]


@dataclass(frozen=True)
class RawUsed:
    """``btrfs filesystem usage``'s raw Used, and why it does not count every chunk (None
    when it does)."""

    printed: int
    not_counted: str | None = None


RAID56 = re.compile(r"^(Data|Metadata|System)(,\w+)?,RAID[56]\b", re.I | re.M)
ZERO_RATIO = re.compile(r"^\s*(Data|Metadata) ratio:\s*0\.00\s*$", re.M)


def parse_usage(out: str, err: str, where: str = "btrfs filesystem usage") -> RawUsed:
    """The raw Used of ``btrfs filesystem usage -b``'s output, with the reason it leaves
    chunks out, if it does: btrfs-progs' warning (before 5.7, "RAID56 detected, not
    implemented"; without the chunk tree, "cannot read detailed chunk info") where RAID-5/6
    chunks exist or a ratio came out 0.00."""
    printed = None
    for line in out.splitlines():
        words = line.split()
        if words[:1] == ["Used:"] and len(words) > 1 and words[1].isdigit():
            printed = int(words[1])
            break
    if printed is None:
        raise OltplabError(f"{where}: {(err or out).strip()}")
    said = [line.strip().removeprefix("WARNING: ").strip() for line in err.splitlines()
            if "RAID56" in line or "chunk info" in line]
    zero = [m.group(1) for m in ZERO_RATIO.finditer(out)]
    if not said and not zero:
        return RawUsed(printed)
    if not RAID56.search(out) and not zero and not any("RAID56" in w for w in said):
        return RawUsed(printed)  # a warning that leaves no chunk out
    why = "; ".join(dict.fromkeys(said)) or f"{' and '.join(zero)} ratio 0.00"
    return RawUsed(printed, "btrfs filesystem usage cannot count the RAID-5/6 chunks here "
                            f"({why}): its Used leaves them out")


def btrfs_usage(mount: Path) -> RawUsed:
    """btrfs' raw bytes used on all devices (data, metadata and system, every copy)."""
    p = subprocess.run(["btrfs", "filesystem", "usage", "-b", str(mount)],
                       capture_output=True, text=True, timeout=60)
    return parse_usage(p.stdout, p.stderr, f"btrfs filesystem usage {mount}")


def used_bytes(fs: str, mount: Path) -> int:
    """What the file system uses on its devices now, as it says (the empty file system's
    figure: a RAID-5/6 data chunk it does not count holds nothing yet)."""
    if fs == "btrfs":
        return btrfs_usage(mount).printed
    st = os.statvfs(mount)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def sync_fs(mount: Path) -> None:
    """Write out the dirty data of the file system holding ``mount`` and commit it (syncfs(2):
    that file system alone, not every one as sync(2))."""
    syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    fd = os.open(mount, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OltplabError(f"syncfs {mount}: {os.strerror(err)}")
    finally:
        os.close(fd)


def measure(fs: str, mount: Path, empty_used: int) -> dict:
    """The space figures of the module's docstring for the files under ``mount``, synced
    first."""
    sync_fs(mount)
    apparent = blocks = 0
    totals, seen = ExtentTotals(), set()
    for path, st in _files(mount):
        apparent += st.st_size
        blocks += st.st_blocks * 512
        if fs == "btrfs":
            try:  # a server may remove a file meanwhile (a temporary one, old WAL)
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            except FileNotFoundError:
                continue
            try:
                btrfs_file_extents(fd, st.st_ino, totals, seen)
            finally:
                os.close(fd)
    logical = totals.referenced_bytes if fs == "btrfs" else blocks
    btrfs = fs == "btrfs"
    raw = btrfs_usage(mount) if btrfs else RawUsed(used_bytes(fs, mount))
    allocated = None if raw.not_counted else max(0, raw.printed - empty_used)
    return {
        "available": raw.not_counted is None,
        "reason": raw.not_counted,
        "unavailable": ["allocated_bytes", "data_ratio"] if raw.not_counted else [],
        "logical_bytes": logical,
        "apparent_bytes": apparent,
        "allocated_bytes": allocated,
        "data_ratio": round(allocated / logical, 3) if logical and allocated is not None else None,
        "compression_ratio": (round(totals.uncompressed_bytes / totals.disk_bytes, 3)
                              if btrfs and totals.disk_bytes else None),
        "dedupe_saved_bytes": (max(0, totals.referenced_bytes - totals.uncompressed_bytes)
                               if btrfs else None),
        "extent_disk_bytes": totals.disk_bytes if btrfs else None,
        "empty_used_bytes": empty_used,
    }

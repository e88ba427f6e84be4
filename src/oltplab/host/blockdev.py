"""Block devices as the tools that overwrite them must see them: whether one is mounted, used as
swap or held by another driver (LVM, md, dm, btrfs through a loop device ...), and its size."""

from __future__ import annotations

import errno
import os
from pathlib import Path

SYS_DEV_BLOCK = Path("/sys/dev/block")


def mounted_devices() -> dict[str, str]:
    """MAJ:MIN -> mount point for every mounted filesystem, and swap devices."""
    out: dict[str, str] = {}
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            f = line.split()
            if len(f) > 4:
                out.setdefault(f[2], f[4])
    except OSError:
        pass
    try:
        for line in Path("/proc/swaps").read_text().splitlines()[1:]:
            dev = line.split()[0] if line.split() else ""
            if dev.startswith("/dev/"):
                rdev = os.stat(dev).st_rdev
                out.setdefault(f"{os.major(rdev)}:{os.minor(rdev)}", "swap")
    except OSError:
        pass
    return out


def in_use(device: Path) -> str | None:
    """Why a block device must not be overwritten (mounted, swap, held by LVM/md), or None."""
    rdev = os.stat(device).st_rdev
    majmin = f"{os.major(rdev)}:{os.minor(rdev)}"
    mounted = mounted_devices()
    node = SYS_DEV_BLOCK / majmin
    try:
        node = node.resolve(strict=True)
    except OSError:
        return f"mounted at {mounted[majmin]}" if majmin in mounted else None
    parts = [node] + [p for p in node.iterdir() if (p / "partition").exists()]
    for p in parts:
        dev = (p / "dev").read_text().strip() if (p / "dev").exists() else None
        if dev in mounted:
            where = mounted[dev]
            return "used as swap" if where == "swap" else f"mounted at {where} ({p.name})"
        try:
            holders = [h.name for h in (p / "holders").iterdir()]
        except OSError:
            holders = []
        if holders:
            return f"held by {', '.join(holders)} ({p.name})"
    return _held_exclusively(device)


def _held_exclusively(device: Path) -> str | None:
    """The kernel's own answer: a device that a mounted file system (btrfs' other members
    too, which mountinfo does not list), md or swap holds cannot be opened with O_EXCL."""
    try:
        fd = os.open(device, os.O_RDONLY | os.O_EXCL)
    except OSError as e:
        if e.errno == errno.EBUSY:
            return "in use (held open by the kernel: a mounted file system, RAID or swap)"
        return None
    os.close(fd)
    return None


def device_size(device: Path) -> int:
    fd = os.open(device, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)

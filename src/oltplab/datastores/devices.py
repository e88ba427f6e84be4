"""The block devices under a datastore: the checks before one is overwritten, loop devices over
backing files, and the facts a run records (model, size, rotational, queue).

Loop devices are attached with direct IO where the backing file's file system allows it, so
the host's page cache does not hold the data twice; what the kernel set is recorded.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

from ..config import format_size
from ..errors import OltplabError, UsageError
from ..host.blockdev import in_use
from ..host.facts import block_device

SYS_BLOCK = Path("/sys/block")


def run_tool(cmd: list[str], what: str, timeout: float = 600) -> str:
    """Run a tool; its own last line of error is the message when it fails."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise OltplabError(f"{what}: {cmd[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise OltplabError(f"{what}: {cmd[0]} did not finish in {timeout:.0f} s") from None
    if p.returncode != 0:
        why = (p.stderr.strip() or p.stdout.strip() or f"exit code {p.returncode}").splitlines()
        raise OltplabError(f"{what}: {why[-1]}")
    return p.stdout


def _blkid(device: Path) -> tuple[int | None, dict[str, str], str]:
    """blkid's low-level probe of ``device``: (its exit code, or None when it did not answer
    in 60 s; the fields it printed: TYPE, PTTYPE, UUID, UUID_SUB ...; its last error line)."""
    try:
        p = subprocess.run(["blkid", "-p", "-o", "export", str(device)], capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None, {}, "no answer in 60 s"
    fields = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
    why = (p.stderr.strip().splitlines() or [f"exit code {p.returncode}"])[-1]
    return p.returncode, fields, why


def signature(device: Path) -> str | None:
    """What blkid finds on ``device`` (a file system, RAID member or partition table), or None
    only when blkid read the device and found nothing (its exit code 2). Two signatures at
    once (exit code 8, "ambivalent": an old RAID label beside a file system) and a device blkid
    cannot read count as carrying one: nothing proves them empty."""
    code, fields, why = _blkid(device)
    if code == 2:  # nothing found
        return None
    if code == 8:
        return "two or more signatures (blkid: ambivalent result)"
    if "PTTYPE" in fields:
        return f"a partition table ({fields['PTTYPE']})"
    if "TYPE" in fields:
        return f"a signature ({fields['TYPE']})"
    if code == 0:
        return "a signature blkid could not name"
    return f"a content blkid could not read ({why})"


def probe(device: Path) -> dict[str, str]:
    """blkid's fields for ``device`` (UUID: the file system's, UUID_SUB: the device's within a
    multi-device btrfs ...); empty when it finds nothing, finds two, or cannot read."""
    code, fields, _ = _blkid(device)
    return fields if code == 0 else {}


def by_id(device: Path, folder: Path = Path("/dev/disk/by-id")) -> list[str]:
    """The stable names of ``device`` under /dev/disk/by-id (none for a loop device)."""
    real = os.path.realpath(device)
    try:
        return sorted(str(p) for p in folder.iterdir() if os.path.realpath(p) == real)
    except OSError:
        return []


def identity(device: Path) -> dict:
    """What proves later that ``device`` is still the one a datastore was made on: its file
    system's UUID and its own UUID_SUB as blkid reads them, and its /dev/disk/by-id names."""
    found = probe(device)
    return {"uuid": found.get("UUID"), "uuid_sub": found.get("UUID_SUB"),
            "by_id": by_id(device)}


def not_ours(device: Path, fs_uuid: str | None) -> str | None:
    """Why ``device`` cannot be proved to carry the datastore's file system (UUID ``fs_uuid``),
    or None when it does."""
    if not fs_uuid:
        return "no identity was recorded when it was made"
    found = probe(device).get("UUID")
    if found == fs_uuid:
        return None
    return (f"it carries no file system of this datastore (UUID {found}, not {fs_uuid})"
            if found else "it carries no file system of this datastore")


def check_device(device: Path, force: bool, owned: dict[str, str]) -> None:
    """Refuse (UsageError, one line) a device that is not a free block device: missing, not a
    block device, mounted or held, part of a datastore (``owned``: real path -> datastore),
    or carrying a signature unless ``force``."""
    try:
        mode = os.stat(device).st_mode
    except OSError as e:
        raise UsageError(f"--devices: {device}: {e.strerror}") from None
    if not stat.S_ISBLK(mode):
        raise UsageError(f"--devices: {device} is not a block device")
    real = os.path.realpath(device)
    if real in owned:
        raise UsageError(f"--devices: {device} is part of datastore {owned[real]!r}")
    why = in_use(device)
    if why:
        raise UsageError(f"--devices: {device} is {why}")
    if not force and (what := signature(device)):
        raise UsageError(f"--devices: {device} carries {what}; --force overwrites it")


def check_free_space(folder: Path, count: int, size: int) -> None:
    """Refuse loop files that would not fit where they go (``folder``, or the nearest folder
    above it that exists: nothing is made before the checks pass)."""
    where = next(p for p in (folder.absolute(), *folder.absolute().parents) if p.exists())
    free = shutil.disk_usage(where).free
    if count * size > free:
        raise UsageError(f"--loop: {count} x {format_size(size)} is more than the "
                         f"{free / 1024**3:.1f} GiB free in {where}")


def make_backing_file(path: Path, size: int) -> None:
    """A backing file with all its blocks allocated, so the first writes of a run do not
    allocate them."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as e:
        raise OltplabError(f"--loop: cannot allocate {format_size(size)} for {path}: "
                           f"{e.strerror}") from None
    finally:
        os.close(fd)


def attach_loop(image: Path) -> Path:
    """A new loop device over ``image`` (direct IO asked for; see ``facts``)."""
    out = run_tool(["losetup", "--find", "--show", "--direct-io=on", str(image)], "losetup")
    return Path(out.strip())


def detach_loop(device: Path) -> None:
    subprocess.run(["losetup", "--detach", str(device)], capture_output=True, timeout=60)


def loops_under(folder: Path) -> list[Path]:
    """The loop devices whose backing file is in ``folder`` (deleted files too)."""
    p = subprocess.run(["losetup", "--list", "--json", "--output", "NAME,BACK-FILE"],
                       capture_output=True, text=True, timeout=60)
    try:  # JSON, not columns: a backing file's path may hold spaces
        listed = json.loads(p.stdout)["loopdevices"] if p.stdout.strip() else []
    except (ValueError, KeyError, TypeError):
        raise OltplabError(f"losetup --list --json: unreadable answer ({p.stdout[:80]!r})")
    prefix = str(folder.absolute()).rstrip("/") + "/"
    return [Path(d["name"]) for d in listed
            if (d.get("back-file") or "").startswith(prefix)]


def detach_all(folder: Path, within_s: float = 5.0) -> None:
    """Detach every loop device over a file in ``folder``; a device still held a moment (a
    udev probe right after it was attached) is tried again until ``within_s`` passes."""
    deadline = time.monotonic() + within_s
    while True:
        left = loops_under(folder)
        for loop in left:
            detach_loop(loop)
        if not left or time.monotonic() > deadline:
            return
        time.sleep(0.1)


def clear_immutable(folder: Path) -> None:
    """``chattr -i`` on every file in ``folder`` (our backing files: a file left immutable by
    a fault could be neither written nor removed)."""
    files = [str(p) for p in folder.glob("*.img")] if folder.is_dir() else []
    if files:
        subprocess.run(["chattr", "-i", *files], capture_output=True, timeout=60)


def loop_backing(device: Path) -> str | None:
    try:
        return (SYS_BLOCK / device.name / "loop" / "backing_file").read_text().strip()
    except OSError:
        return None


def wipe(device: Path) -> None:
    """Erase the signatures a file system wrote (wipefs), so the device reads as empty."""
    subprocess.run(["wipefs", "--all", "--quiet", str(device)], capture_output=True, timeout=60)


def facts(device: Path) -> dict:
    """The device as a run records it: path, the disk's facts, and for a loop device its
    backing file and whether direct IO is on."""
    out: dict = {"path": str(device)}
    try:
        rdev = os.stat(device).st_rdev
        disk = block_device(os.major(rdev), os.minor(rdev)) or {}
    except OSError:
        disk = {}
    out.update(disk)
    queue = SYS_BLOCK / device.name / "queue"
    try:
        out["nr_requests"] = int((queue / "nr_requests").read_text())
    except (OSError, ValueError):
        out["nr_requests"] = None
    backing = loop_backing(device)
    if backing is not None:
        try:
            dio = (SYS_BLOCK / device.name / "loop" / "dio").read_text().strip() == "1"
        except OSError:
            dio = None
        out["loop"] = {"backing_file": backing, "direct_io": dio}
    return out

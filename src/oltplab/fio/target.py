"""The storage under test: a directory (test files in a private folder, removed afterwards) or a
block device (overwritten, so never one that is mounted or in use).

Every check raises one clear ``UsageError``; ``prepared(...)`` is a context manager that leaves
nothing behind in a directory target, whatever happens inside it.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..config import format_size
from ..errors import UsageError
from ..host.blockdev import device_size, in_use

WORKDIR_PREFIX = "oltplab-fio-"


@dataclass(frozen=True)
class Target:
    """Where fio does its IO: ``workdir`` for a directory, ``device`` for a block device."""

    path: Path
    kind: str  # "directory" or "block"
    workdir: Path | None = None
    device: Path | None = None
    capacity_bytes: int | None = None  # free space (directory) or device size (block)
    device_info: dict | None = None  # a block device's disk (model, rotational, scheduler ...)

    def as_dict(self) -> dict:
        return {"path": str(self.path), "kind": self.kind,
                "workdir": str(self.workdir) if self.workdir else None,
                "capacity_bytes": self.capacity_bytes, "device": self.device_info}


def _human(n: int) -> str:
    for unit, div in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return f"{n}B"


def target_kind(path: Path) -> str:
    """"directory" or "block"; a UsageError when ``path`` is missing or neither."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"--target: {path} does not exist") from None
    except OSError as e:
        raise UsageError(f"--target: cannot read {path}: {e.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        return "directory"
    if stat.S_ISBLK(st.st_mode):
        return "block"
    raise UsageError(f"--target: {path} is neither a directory nor a block device")


def _probe_direct(path: Path, flags: int, fs_hint: str) -> None:
    """Open ``path`` with O_DIRECT; a filesystem that refuses it (EINVAL) is a usage error."""
    try:
        fd = os.open(path, flags | os.O_DIRECT, 0o600)
    except OSError as e:
        if e.errno == errno.EINVAL:
            raise UsageError(f"--target: {fs_hint} refuses direct IO (O_DIRECT); choose a "
                             "directory on a disk-backed filesystem or a block device") from None
        raise UsageError(f"--target: cannot open {path}: {e.strerror}") from None
    os.close(fd)


def _fs_type(path: Path) -> str | None:
    from ..host.facts import path_storage
    return path_storage(path).get("fs_type")


def check_block(device: Path, size: int) -> Target:
    why = in_use(device)
    if why:
        raise UsageError(f"--target: block device {device} is {why}; oltplab would overwrite it")
    try:
        capacity = device_size(device)
    except OSError as e:
        raise UsageError(f"--target: cannot open {device}: {e.strerror}") from None
    if size > capacity:
        raise UsageError(f"--size {format_size(size)} is larger than block device {device} "
                         f"({_human(capacity)})")
    _probe_direct(device, os.O_RDONLY, f"block device {device}")
    if not os.access(device, os.W_OK):
        raise UsageError(f"--target: block device {device} is not writable")
    from ..host.facts import block_device
    rdev = os.stat(device).st_rdev
    return Target(path=device, kind="block", device=device, capacity_bytes=capacity,
                  device_info=block_device(os.major(rdev), os.minor(rdev)))


@contextmanager
def prepared(path: Path, size: int) -> Iterator[Target]:
    """Check the target and, for a directory, make the private folder fio works in.

    The folder and everything in it are removed on the way out, on success, error or interrupt.
    """
    path = Path(os.path.abspath(path))
    if target_kind(path) == "block":
        yield check_block(path, size)
        return
    try:
        workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX, dir=path))
    except OSError as e:
        raise UsageError(f"--target: cannot write in {path}: {e.strerror}") from None
    try:
        fs = _fs_type(path) or "the filesystem"
        _probe_direct(workdir / ".direct-probe", os.O_CREAT | os.O_WRONLY, f"{fs} at {path}")
        os.unlink(workdir / ".direct-probe")
        free = shutil.disk_usage(workdir).free
        if size > free:
            raise UsageError(f"--size {format_size(size)} is larger than the free space in "
                             f"{path} ({_human(free)})")
        yield Target(path=path, kind="directory", workdir=workdir, capacity_bytes=free)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

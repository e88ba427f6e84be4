"""Writing report files: atomically (results.store.atomic_write), then readable as the umask
allows, like any file a command creates (the temporary file behind an atomic write is
private to its owner)."""

from __future__ import annotations

import os
from pathlib import Path

from ..results.store import atomic_write


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_file(path: Path, data: str | bytes) -> Path:
    path = Path(path)
    atomic_write(path, data)
    os.chmod(path, 0o666 & ~_umask())
    return path

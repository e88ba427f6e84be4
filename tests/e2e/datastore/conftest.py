"""Loop devices a test makes as a user's devices (over files beside the datastore root)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

MiB = 1024**2


def _loop(image: Path, size: int) -> str:
    with open(image, "wb") as f:
        f.truncate(size)
    return subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True,
                          text=True, check=True).stdout.strip()


@pytest.fixture
def loops(datastore_root):
    made = []

    def make(name: str, size: int = 320 * MiB) -> str:
        made.append(_loop(datastore_root.parent / f"{name}.img", size))
        return made[-1]

    yield make
    for loop in made:
        subprocess.run(["losetup", "--detach", loop])

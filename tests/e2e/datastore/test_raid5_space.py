"""A RAID-5 datastore's space where btrfs-progs cannot count RAID-5/6 chunks: its Used leaves
them out (btrfs-progs before 5.7 says "RAID56 detected, not implemented"; any version without
the chunk tree says it cannot read it, and prints a data ratio of 0.00), so the allocated bytes
and the data ratio are recorded unavailable with the reason, never near zero. Here the real
btrfs runs without the chunk tree: as an unprivileged user, for ``filesystem usage`` only."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ..conftest import datastore as ds
from ..conftest import oltplab

MiB = 1024**2


def _without_chunk_tree(folder: Path) -> dict:
    """An environment whose ``btrfs`` runs ``filesystem usage`` as user nobody (the rest as
    root, as the real one)."""
    btrfs, setpriv = shutil.which("btrfs"), shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed")
    folder.mkdir()
    wrapper = folder / "btrfs"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = filesystem ] && [ "$2" = usage ]; then\n'
        f"  exec {setpriv} --reuid=65534 --regid=65534 --clear-groups {btrfs} \"$@\"\n"
        "fi\n"
        f'exec {btrfs} "$@"\n')
    wrapper.chmod(0o755)
    return {"PATH": f"{folder}:{os.environ['PATH']}"}


def test_raid5_space_is_unavailable_where_btrfs_progs_cannot_count_it(datastore_root):
    root = datastore_root
    ds(root, "create", "r5", "--raid", "raid5", "--metadata", "raid1", "--loop", "3x320MiB")
    mount = Path(json.loads(ds(root, "show", "r5", "--json").stdout)["mount"])
    for folder in (root.parent, root, root / "r5", mount):  # the unprivileged btrfs opens it
        os.chmod(folder, 0o755)
    with open(mount / "table", "wb") as f:
        for _ in range(48):
            f.write(os.urandom(MiB))
    env = _without_chunk_tree(root.parent / "bin")
    p = oltplab("datastore", "show", "r5", "--json", "--root", str(root), env=env, check_rc=0)
    space = json.loads(p.stdout)["space"]
    # today's figures were btrfs' Used of metadata and system alone: a ratio near 0.01
    assert space["data_ratio"] is None and space["allocated_bytes"] is None, space
    assert space["available"] is False and space["unavailable"] == ["allocated_bytes",
                                                                     "data_ratio"]
    assert "cannot count the RAID-5/6 chunks" in space["reason"]
    assert "cannot read detailed chunk info" in space["reason"], space["reason"]
    assert space["logical_bytes"] == 48 * MiB  # the files' extents: counted all the same
    p = oltplab("datastore", "show", "r5", "--root", str(root), env=env, check_rc=0)
    assert "n/a allocated, data ratio n/a" in p.stdout
    assert "allocated and data ratio unavailable: btrfs filesystem usage" in p.stdout

    counted = json.loads(ds(root, "show", "r5", "--json").stdout)["space"]  # as root
    assert counted["available"] is True and counted["reason"] is None, counted
    assert counted["unavailable"] == []
    assert 1.4 <= counted["data_ratio"] <= 1.6, counted  # 3 devices: 3/2, and the metadata
    ds(root, "destroy", "r5")

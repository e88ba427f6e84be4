"""Ctrl-C or a failure in the middle of ``create`` leaves nothing behind: no mount, no loop
device, no backing file, no signature."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading

import pytest

from oltplab.datastores import service
from oltplab.datastores.devices import loops_under
from oltplab.datastores.spec import make_spec
from oltplab.errors import OltplabError


@pytest.fixture
def root(tmp_path):
    if os.geteuid() != 0 or shutil.which("mkfs.btrfs") is None:
        pytest.skip("needs root and btrfs-progs")
    yield tmp_path / "ds"
    # a failed test may leave its datastore mounted: unmount it, then detach its loops
    with open("/proc/mounts") as f:
        mounts = [line.split()[1] for line in f if line.split()[1].startswith(str(tmp_path))]
    for mount in sorted(mounts, reverse=True):
        subprocess.run(["umount", mount])
    for loop in loops_under(tmp_path):
        subprocess.run(["losetup", "--detach", loop])


def test_ctrl_c_while_the_devices_are_made_leaves_nothing(root):
    """Ctrl-C lands as the third backing file is made, two loop devices attached: sent from
    the step callback, so that a loaded machine cannot let create finish first."""
    spec = make_spec("r1", raid="raid1", loop="3x320MiB", root=root)
    steps, attached = [], []

    def step(text: str) -> None:
        steps.append(text)
        if text == "allocating disk2.img":
            attached.append(len(loops_under(root)))
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        service.create(spec, on_step=step)
    assert attached == [2] and steps[0] == "allocating disk0.img"
    assert loops_under(root) == [] and not (root / "r1").exists()


def test_a_failing_mount_undoes_the_file_system_and_the_loops(root):
    spec = make_spec("bad", loop="2x320MiB", mount_options="no_such_option_here", root=root)
    with pytest.raises(OltplabError, match="mount"):
        service.create(spec)
    assert loops_under(root) == [] and not (root / "bad").exists()
    assert service.names(root) == []

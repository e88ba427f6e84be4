"""The control groups of --inject throttle: a throttled server's processes go back to the groups
they came from (on cgroup v2 that is the --host-memory group), and a block-IO group is never
taken for a memory group. Real processes in the real hierarchies of this host."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from oltplab.host import memory as hostmem
from oltplab.config import DbSpec, parse_inject
from oltplab.engines.base import Target
from oltplab.engines.postgres.instance import PostgresInstance
from oltplab.errors import UsageError
from oltplab.faults.throttle import Throttle, io_root
from oltplab.host.cgroups import group_dir, move_back, move_in, words

from conftest import free_port

MiB = 1024**2


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen(["sleep", "120"])


def _empty_and_remove(group: Path) -> None:
    for pid in words(group / "cgroup.procs"):
        try:
            (group.parent / "cgroup.procs").write_text(pid)
        except OSError:
            pass
    group.rmdir()


def _writable_cgroup2() -> Iterator[Path]:
    """Our own group in a writable cgroup v2 hierarchy: the host's, else one mounted here."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if fields[fields.index("-") + 1] == "cgroup2":
            own = group_dir(os.getpid(), Path(fields[4]) / "x")
            if own is not None and os.access(own, os.W_OK):
                yield own
                return
    point = Path(tempfile.mkdtemp(prefix="oltplab-test-cgroup2-"))
    try:
        if subprocess.run(["mount", "-t", "cgroup2", "none", str(point)],
                          capture_output=True).returncode != 0:
            pytest.skip("no writable cgroup v2 hierarchy here, and none can be mounted")
        try:
            yield group_dir(os.getpid(), point / "x")
        finally:
            subprocess.run(["umount", str(point)], check=False)
    finally:
        point.rmdir()


@pytest.fixture
def cgroup2() -> Iterator[Path]:
    yield from _writable_cgroup2()


def test_throttle_puts_the_server_back_in_the_group_it_came_from(server_tmp):
    """The server was in a group of its own (on cgroup v2: the --host-memory group); after the
    throttle it is there again, not in the parent of the throttle's group."""
    try:
        parent, _ = io_root()
    except UsageError as e:
        pytest.skip(str(e))
    inst = PostgresInstance(DbSpec(datadir=server_tmp / "data", port=free_port(),
                                   db_memory=32 * MiB))
    home = parent / f"oltplab-test-home-{inst.spec.port}"
    home.mkdir()
    try:
        inst.start()
        pid = inst.status()["pid"]
        tree = [pid, *(p.pid for p in psutil.Process(pid).children(recursive=True))]
        for p in tree:
            (home / "cgroup.procs").write_text(str(p))
        throttle = Throttle(Target(dsn=inst.dsn("postgres"), admin_dsn=inst.dsn("postgres"),
                                   instance=inst, started_here=True),
                            parse_inject("at=1s,for=1s,throttle=write-iops:50"))
        rec: dict = {}
        throttle.fire(rec, None)
        assert rec["processes"] == len(tree)
        assert all(group_dir(p, parent) == throttle.path for p in tree)
        throttle.end(rec)
        assert not throttle.path.exists()
        assert [group_dir(p, parent) for p in tree] == [home] * len(tree)
    finally:
        inst.stop("immediate")
        _empty_and_remove(home)


def test_processes_go_back_to_their_own_groups_on_cgroup_v2(cgroup2):
    """On cgroup v2 a process is in one group only: the one it left for the throttle's group
    (here a stand-in for the --host-memory group) is where it goes back; a process that came
    into the throttle's group later goes to the default given."""
    home = cgroup2 / f"oltplab-test-home-{os.getpid()}"
    other = cgroup2 / f"oltplab-io-test-{os.getpid()}"
    moved, born_inside = _sleeper(), _sleeper()
    try:
        home.mkdir()
        other.mkdir()
        (home / "cgroup.procs").write_text(str(moved.pid))
        assert group_dir(moved.pid, other) == home
        homes = move_in(other, [moved.pid])
        assert homes == {moved.pid: home} and group_dir(moved.pid, other) == other
        (other / "cgroup.procs").write_text(str(born_inside.pid))
        move_back(other, homes, home)
        assert group_dir(moved.pid, other) == home and group_dir(born_inside.pid, home) == home
        assert words(other / "cgroup.procs") == []
    finally:
        for p in (moved, born_inside):
            p.kill()
            p.wait()
        for g in (other, home):
            if g.is_dir():
                _empty_and_remove(g)


def test_group_of_does_not_take_a_block_io_group_for_a_memory_group():
    """A server in a throttle's group (named oltplab-io-...) is in no memory group of ours:
    group_of must not report that group's limit and peak as the server's."""
    try:
        probe = hostmem.create_group(64 * MiB, f"probe-{free_port()}")
    except UsageError as e:
        pytest.skip(str(e))
    probe.remove()
    io_group = probe.path.parent / f"oltplab-io-test-{os.getpid()}"
    memory = hostmem.create_group(64 * MiB, f"test-{os.getpid()}")
    sleeper = _sleeper()
    try:
        io_group.mkdir()
        (memory.path / "cgroup.procs").write_text(str(sleeper.pid))
        assert hostmem.group_of(sleeper.pid) == memory
        (io_group / "cgroup.procs").write_text(str(sleeper.pid))
        assert hostmem.group_of(sleeper.pid) is None
    finally:
        sleeper.kill()
        sleeper.wait()
        _empty_and_remove(io_group)
        memory.remove()

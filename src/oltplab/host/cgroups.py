"""Control groups as the kernel shows them: the hierarchies mounted here, the group a process
is in, and moving processes into a group and back (cgroup v1 and v2 alike). The memory groups
of --host-memory are in memory.py; the block-IO groups of a throttle in faults/throttle.py."""

from __future__ import annotations

import os
from pathlib import Path


def mounts() -> list[tuple[str, str, str, str]]:
    """(root, mount point, file system type, super options) of each mount we see."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        sep = fields.index("-")
        out.append((fields[3], fields[4], fields[sep + 1], fields[-1]))
    return out


def own_groups(pid: str) -> dict[str, str]:
    """{controllers ('' for cgroup v2): group path} from ``/proc/PID/cgroup``."""
    return dict(line.split(":", 2)[1:] for line in Path(f"/proc/{pid}/cgroup").read_text()
                .splitlines())


def dir_in(point: str, root: str, group: str) -> Path:
    """The directory of ``group`` (a path from /proc/PID/cgroup) in the hierarchy mounted at
    ``point`` whose mount root is ``root``."""
    rel = os.path.relpath(group, root) if group.startswith(root) else group
    return Path(point) / ("" if rel in (".", "/") else rel.lstrip("/"))


def group_dir(pid: int, group: Path) -> Path | None:
    """The directory of the group process ``pid`` is in, in the hierarchy that holds the
    directory ``group``; None when the process is gone or that hierarchy is not found."""
    try:
        own = own_groups(str(pid))
        mounted = mounts()
    except (OSError, ValueError):
        return None
    for root, point, fstype, opts in mounted:
        if Path(point) not in (group, *group.parents):
            continue
        if fstype == "cgroup2" and "" in own:
            return dir_in(point, root, own[""])
        key = next((k for k in own if fstype == "cgroup"
                    and set(k.split(",")) & set(opts.split(","))), None)
        if key is not None:
            return dir_in(point, root, own[key])
    return None


def move_in(group: Path, pids: list[int]) -> dict[int, Path]:
    """Move the processes ``pids`` into ``group`` (a control group directory) in this order;
    {pid: the group it was in} for each moved (one that exited meanwhile is left out)."""
    homes = {}
    for pid in pids:
        home = group_dir(pid, group)
        try:
            (group / "cgroup.procs").write_text(str(pid))
        except OSError:
            continue  # it exited meanwhile
        if home is not None and home != group:
            homes[pid] = home
    return homes


def move_back(group: Path, homes: dict[int, Path], default: Path) -> None:
    """Move every process in ``group`` back to the group it came from (``homes``); one that
    came in later (forked inside) goes to ``default``. A process whose group is gone goes to
    the parent of ``group``."""
    for pid in words(group / "cgroup.procs"):
        for dest in (homes.get(int(pid), default), group.parent):
            try:
                (dest / "cgroup.procs").write_text(pid)
                break
            except OSError:
                continue  # that group is gone, or the process exited meanwhile


def words(path: Path) -> list[str]:
    """The whitespace-separated words of a control file, none when it cannot be read."""
    try:
        return path.read_text().split()
    except OSError:
        return []


def process_tree(pid: int) -> list:
    """The process ``pid`` and all its descendants (psutil processes; none when it is gone)."""
    import psutil
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []

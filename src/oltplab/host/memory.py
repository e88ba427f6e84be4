"""Host memory as the papers vary it: a memory control group around the managed server, and a
cold page cache.

Shrinking ``shared_buffers`` leaves the data in the kernel's page cache, so the database still
reads from memory. A memory control group charges page-cache pages to the group whose processes
read them, so a limit on the server's whole process tree limits its "DRAM", page cache included,
and a small limit makes the workload read from the device.

The group is created under the group our own process is in: cgroup v1 (``memory.limit_in_bytes``,
``memory.max_usage_in_bytes``, ``memory.memsw.limit_in_bytes`` when swap is accounted) or
cgroup v2 (``memory.max``, ``memory.peak``). Its name starts with ``oltplab-``, which is how a
later command (``db stop``) recognises the group of a running server from its
``/proc/PID/cgroup`` and removes it once the server is gone. Names that start with
``oltplab-io-`` are the block-IO groups of ``--inject`` throttles, not memory groups.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import DatabaseError, UsageError
from .cgroups import words

PREFIX = "oltplab-"
IO_PREFIX = "oltplab-io-"  # a throttle's block-IO group (faults/inject.py)
DROP_CACHES = Path("/proc/sys/vm/drop_caches")
_V1_FILES = {"limit": "memory.limit_in_bytes", "peak": "memory.max_usage_in_bytes",
             "usage": "memory.usage_in_bytes"}
_V2_FILES = {"limit": "memory.max", "peak": "memory.peak", "usage": "memory.current"}
_NO_LIMIT_V1 = 2**62  # v1 reports "no limit" as a page-rounded 2^63-1


@dataclass(frozen=True)
class MemoryGroup:
    """One memory control group (a directory of a cgroup v1 memory or v2 hierarchy)."""

    path: Path
    version: int  # 1 or 2

    def _file(self, what: str) -> Path:
        return self.path / (_V1_FILES if self.version == 1 else _V2_FILES)[what]

    def _read_int(self, what: str) -> int | None:
        try:
            text = self._file(what).read_text().strip()
        except OSError:
            return None
        if not text.isdigit():
            return None  # v2 'max'
        value = int(text)
        return None if what == "limit" and value >= _NO_LIMIT_V1 else value

    def limit(self) -> int | None:
        """The limit in bytes; None when the group has none."""
        return self._read_int("limit")

    def peak(self) -> int | None:
        """The highest usage (page cache included) since creation or the last ``reset_peak``."""
        return self._read_int("peak")

    def usage(self) -> int | None:
        return self._read_int("usage")

    def reset_peak(self) -> bool:
        """Start a new peak (cgroup v1 only); False where the peak cannot be reset."""
        if self.version != 1:
            return False
        try:
            self._file("peak").write_text("0")
            return True
        except OSError:
            return False

    def procs(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def open_procs(self) -> int:
        """A descriptor of ``cgroup.procs`` opened by us: a child writes its own pid into it
        before exec (``join_from``), after it changed to the server's OS user."""
        return os.open(self.path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)

    def record(self) -> dict:
        """What a run records: ``{limit_bytes, peak_bytes, cgroup, version}``."""
        return {"limit_bytes": self.limit(), "peak_bytes": self.peak(), "cgroup": str(self.path),
                "version": self.version}

    def remove(self, timeout: float = 10.0) -> None:
        """Move any process left in the group to its parent, then remove the directory."""
        deadline = time.monotonic() + timeout
        while True:
            for pid in self.procs():
                try:
                    (self.path.parent / "cgroup.procs").write_text(str(pid))
                except OSError:
                    pass  # it exited meanwhile
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError as e:
                if time.monotonic() > deadline:
                    raise DatabaseError(f"cannot remove memory control group {self.path}: "
                                        f"{e.strerror}") from e
                time.sleep(0.05)


def join_from(fd: int):
    """A ``preexec_fn`` that moves the child into the group whose cgroup.procs ``fd`` names.
    Every process the child forks (the postmaster and its backends) inherits the group."""
    def join() -> None:
        os.write(fd, str(os.getpid()).encode())
    return join


def _own_group(proc_cgroup: Path, mountinfo: Path) -> tuple[Path, int]:
    """(directory of our own memory group, cgroup version); UsageError when there is none."""
    try:
        lines = proc_cgroup.read_text().splitlines()
        mounts = mountinfo.read_text().splitlines()
    except OSError as e:
        raise UsageError(f"--host-memory: cannot read {e.filename}: {e.strerror}") from e
    v1 = v2 = None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            v1 = path
        elif controllers == "":
            v2 = path
    for line in mounts:
        fields = line.split()
        sep = fields.index("-")
        root, point, fstype, opts = fields[3], fields[4], fields[sep + 1], fields[-1]
        own = v1 if fstype == "cgroup" and "memory" in opts.split(",") else (
            v2 if fstype == "cgroup2" else None)
        if own is None:
            continue
        rel = os.path.relpath(own, root) if own.startswith(root) else own.lstrip("/")
        group = Path(point) / ("" if rel == "." else rel)
        if fstype == "cgroup":
            return group, 1
        if "memory" in words(group / "cgroup.controllers"):
            return group, 2
    raise UsageError("--host-memory: this host has no memory control group for this process "
                     "(no cgroup v1 memory hierarchy, no cgroup v2 memory controller)")


def create_group(limit: int, name: str, parent: Path | None = None) -> MemoryGroup:
    """A new group ``oltplab-<name>`` with ``limit`` bytes (page cache included) under
    ``parent`` (default: the memory group our own process is in). UsageError (one line) where
    no memory controller is there or it cannot be written."""
    if parent is None:
        parent, version = _own_group(Path("/proc/self/cgroup"), Path("/proc/self/mountinfo"))
    elif (parent / _V1_FILES["limit"]).exists():
        version = 1
    elif "memory" in words(parent / "cgroup.controllers"):
        version = 2
    else:
        raise UsageError(f"--host-memory: {parent} is not a memory control group (neither "
                         "cgroup v1 memory nor cgroup v2 with the memory controller)")
    group = MemoryGroup(parent / f"{PREFIX}{name}", version)
    try:
        if version == 2 and "memory" not in words(parent / "cgroup.subtree_control"):
            (parent / "cgroup.subtree_control").write_text("+memory")
        group.path.mkdir()
        group._file("limit").write_text(str(limit))
    except OSError as e:
        if group.path.is_dir():
            group.remove(timeout=1)
        raise UsageError(f"--host-memory: the memory control group {group.path} cannot be "
                         f"made ({e.strerror or e}); run as root on a host with a writable "
                         "memory controller, or give --host-memory none") from e
    if version == 1 and (group.path / "memory.memsw.limit_in_bytes").exists():
        try:  # swap accounted: without this the group would spill to swap instead of the device
            (group.path / "memory.memsw.limit_in_bytes").write_text(str(limit))
        except OSError:
            pass
    elif version == 2 and (group.path / "memory.swap.max").exists():
        try:
            (group.path / "memory.swap.max").write_text("0")
        except OSError:
            pass
    return group


def group_of(pid: int) -> MemoryGroup | None:
    """The oltplab memory group process ``pid`` runs in, or None (not ours, or no process)."""
    try:
        own, version = _own_group(Path(f"/proc/{pid}/cgroup"), Path("/proc/self/mountinfo"))
    except UsageError:
        return None
    if not own.name.startswith(PREFIX) or own.name.startswith(IO_PREFIX) or not own.is_dir():
        return None
    return MemoryGroup(own, version)


def evict_files(*roots: Path) -> int:
    """Evict the cached pages of every file under ``roots`` (``posix_fadvise DONTNEED`` after a
    ``sync``); the number of files. A page stays charged to the group that first read it, and a
    group is served pages cached by others without being charged: so the data directory of a
    server about to start in a group leaves the page cache first, and the group's own reads
    bring it back, within its limit. Needs no root, and leaves other files' pages alone."""
    os.sync()
    count = 0
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for name in files:
                try:
                    fd = os.open(os.path.join(dirpath, name), os.O_RDONLY | os.O_NOFOLLOW)
                except OSError:
                    continue  # a socket, or gone meanwhile
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    count += 1
                except OSError:
                    pass
                finally:
                    os.close(fd)
    return count


def check_running(group: MemoryGroup | None, want: int | None, datadir: Path) -> None:
    """DatabaseError when a running server's group does not have the limit ``want`` asks."""
    if want is None:
        return
    have = group.limit() if group is not None else None
    if have is None or abs(have - want) >= 4096:  # v1 rounds the limit to pages
        now = f"with a host memory limit of {have} bytes" if have else "without a memory limit"
        raise DatabaseError(f"the server in {datadir} is already running {now}; stop it "
                            "(oltplab db stop) so that it restarts with --host-memory")


def check_drop_caches() -> None:
    """UsageError unless this process may drop the page cache (root only)."""
    if os.geteuid() != 0 or not os.access(DROP_CACHES, os.W_OK):
        raise UsageError(f"--cold drops the page cache ({DROP_CACHES}), which needs root; "
                         "run as root or leave out --cold")


def drop_page_cache() -> None:
    """``sync; echo 3 > /proc/sys/vm/drop_caches``: the next reads come from the device."""
    check_drop_caches()
    os.sync()
    try:
        DROP_CACHES.write_text("3")
    except OSError as e:
        raise UsageError(f"--cold: cannot drop the page cache ({e.strerror or e}); "
                         "run as root or leave out --cold") from e


class RunMemory:
    """The memory figures of one run: the group's limit and peak per step and for the run, and
    the page-cache drops of ``--cold`` (before the first step and between steps).

    ``mark`` chains in front of a step-boundary listener (the runner's ``on_mark``): at
    ``step_start`` the group's peak starts anew (cgroup v1), at ``step_end`` the cache is
    dropped unless the mark says ``last`` (a --users auto search decides after each step
    whether another follows). ``step`` adds ``host_memory`` to a step's record.
    """

    def __init__(self, group: MemoryGroup | None, cold: bool, on_mark=None):
        self.group, self.cold, self.on_mark = group, cold, on_mark
        self.drops = 0
        self._peaks: list[int] = []
        self._step_peak_only = group is not None and group.version == 1

    def begin(self) -> None:
        if self.cold:
            drop_page_cache()
            self.drops += 1

    def mark(self, name: str, t_ns: int | None = None, **attrs) -> None:
        if name == "step_start" and self.group is not None:
            self._step_peak_only = self.group.reset_peak() and self._step_peak_only
        elif name == "step_end" and self.cold and not attrs.get("last", True):
            drop_page_cache()
            self.drops += 1
        if self.on_mark is not None:
            self.on_mark(name, t_ns, **attrs)

    def step(self, step: dict) -> None:
        if self.group is None:
            return
        rec = self.group.record()
        rec["peak_scope"] = "step" if self._step_peak_only else "group"
        if rec["peak_bytes"] is not None:
            self._peaks.append(rec["peak_bytes"])
        step["host_memory"] = rec

    def record(self) -> dict | None:
        """``{limit_bytes, peak_bytes, cgroup, version, cold_drops}`` for run.json, or None
        when the server runs in no group of ours and no cache was dropped."""
        if self.group is None:
            return {"limit_bytes": None, "cold_drops": self.drops} if self.cold else None
        rec = self.group.record()
        rec["peak_bytes"] = max([*self._peaks, rec["peak_bytes"] or 0]) or None
        rec["cold_drops"] = self.drops
        return rec

"""The ``throttle`` fault: the server's process tree goes into a block-IO control group with a
limit on the device that holds the data directory (cgroup v1 ``blkio.throttle.*_device``, v2
``io.max``) for ``[at, at + for)``; then the limit is removed and each process goes back to the
group it came from (on cgroup v2, the --host-memory group; those forked meanwhile go where the
postmaster was). cgroup v1 does not throttle the kernel's buffered writeback, only the IO the
server's tasks issue themselves (reads, direct IO, WAL writes and fsyncs).

A process is moved by writing its pid to ``cgroup.procs``, which moves all its threads (v1 and
v2): PostgreSQL's processes and MariaDB's one process of many threads alike; threads it starts
later start in the group. ``threads`` records the tasks the group then held (v1 ``tasks``, v2
``cgroup.threads``), and a thread of the server's left outside fails the fault."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from ..config import InjectEvent
from ..errors import DatabaseError, UsageError
from ..host.cgroups import dir_in, mounts, move_back, move_in, own_groups, process_tree, words
from ..host.memory import IO_PREFIX

_V1_FILES = {"read": "blkio.throttle.read_bps_device", "write": "blkio.throttle.write_bps_device",
             "read-iops": "blkio.throttle.read_iops_device",
             "write-iops": "blkio.throttle.write_iops_device"}
_V2_KEYS = {"read": "rbps", "write": "wbps", "read-iops": "riops", "write-iops": "wiops"}


def io_root() -> tuple[Path, int]:
    """(the block-IO control group our process is in, cgroup version); UsageError when there
    is none we may write (root and a blkio v1 hierarchy or the v2 io controller)."""
    why = ("throttle needs root and a writable block-IO controller (cgroup v1 blkio or cgroup "
           "v2 io)")
    if os.geteuid() != 0:
        raise UsageError(f"--inject: {why}; run as root")
    try:
        own = own_groups("self")
        mounted = mounts()
    except (OSError, ValueError) as e:
        raise UsageError(f"--inject: {why}: {e}") from None
    for root, point, fstype, opts in mounted:
        if fstype == "cgroup" and "blkio" in opts.split(","):
            key = next((k for k in own if "blkio" in k.split(",")), None)
            version = 1
        elif fstype == "cgroup2":
            key, version = "", 2
        else:
            continue
        if key is None or key not in own:
            continue
        path = dir_in(point, root, own[key])
        if version == 1 and os.access(path, os.W_OK):
            return path, 1
        if version == 2 and "io" in words(path / "cgroup.controllers") \
                and os.access(path, os.W_OK):
            return path, 2
    raise UsageError(f"--inject: {why}; this host has none")


def device_of(path: Path) -> str:
    """'MAJ:MIN' of the whole disk that holds ``path`` (or its nearest existing parent)."""
    p = Path(os.path.abspath(path))
    while not p.exists() and p != p.parent:
        p = p.parent
    dev = os.stat(p).st_dev
    sys_dev = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    if not sys_dev.exists():
        raise UsageError(f"--inject: {p} lies on no block device (device "
                         f"{os.major(dev)}:{os.minor(dev)}); throttle needs one")
    if (sys_dev / "partition").exists():  # the limit applies to the whole disk
        return (sys_dev.resolve().parent / "dev").read_text().strip()
    return f"{os.major(dev)}:{os.minor(dev)}"


def _threads(pids: list[int]) -> list[tuple[int, str]]:
    """(pid, thread id) of each thread of the processes ``pids`` (none of one that has
    exited)."""
    out = []
    for pid in pids:
        try:
            out.extend((pid, t) for t in os.listdir(f"/proc/{pid}/task"))
        except OSError:
            pass
    return out


class Throttle:
    """A block-IO limit on the data directory's device around the server's process tree."""

    lasts = True

    @classmethod
    def make(cls, target, event: InjectEvent, need_connections: int):
        return cls(target, event)

    @staticmethod
    def check(db, event: InjectEvent, planned=None) -> None:
        """A block-IO controller we may write, and a block device under the data directory."""
        io_root()
        device_of(db.datadir)

    def __init__(self, target, event: InjectEvent):
        self.instance, self.event = target.instance, event
        self.path: Path | None = None
        self.version = 1
        self.homes: dict[int, Path] = {}  # where each process was before it came in
        self.home: Path | None = None  # where the server's postmaster was
        self._lock = threading.Lock()  # end() runs on the event's thread and in close()
        self._ended = False
        self.device = device_of(self.instance.datadir)

    def _file(self) -> Path:
        return self.path / (_V1_FILES[self.event.limit] if self.version == 1 else "io.max")

    def _line(self, value: int | None) -> str:
        if self.version == 1:
            return f"{self.device} {value or 0}"
        return f"{self.device} {_V2_KEYS[self.event.limit]}={value or 'max'}"

    def fire(self, rec: dict, stop: threading.Event) -> None:
        with self._lock:
            if self._ended:
                raise DatabaseError("not fired: the run ended first")
            self._fire(rec)

    def _fire(self, rec: dict) -> None:
        parent, self.version = io_root()
        pid = self.instance.status()["pid"]
        if pid is None:
            raise DatabaseError("the managed server is not running")
        self.path = parent / f"{IO_PREFIX}{self.instance.spec.port}-{os.getpid()}-{id(self):x}"
        if self.version == 2 and "io" not in words(parent / "cgroup.subtree_control"):
            (parent / "cgroup.subtree_control").write_text("+io")
        self.path.mkdir(exist_ok=True)
        self._file().write_text(self._line(self.event.value))
        # the postmaster first: what it forks from now on is inside
        pids = [p.pid for p in process_tree(pid)]
        self.homes = move_in(self.path, pids)
        self.home = self.homes.get(pid)
        rec.update(cgroup=str(self.path), device=self.device, file=self._file().name,
                   limit_set=self._file().read_text().strip(), processes=len(self._procs()),
                   threads=len(self._tasks()))
        outside = self._outside(pids)
        if outside:
            raise DatabaseError(f"threads {', '.join(outside[:5])} of the server stayed out of "
                                f"the throttle's group {self.path}")

    def _tasks(self) -> set[str]:
        """The thread ids in the group."""
        return set(words(self.path / ("tasks" if self.version == 1 else "cgroup.threads")))

    def _outside(self, pids: list[int]) -> list[str]:
        """Threads of ``pids`` not in the group, once one that was exiting is gone."""
        outside: list[str] = []
        for _ in range(3):
            inside = self._tasks()
            outside = [t for pid, t in _threads(pids) if t not in inside
                       and os.path.exists(f"/proc/{pid}/task/{t}")]
            if not outside:
                break
            time.sleep(0.05)
        return outside

    def _procs(self) -> list[str]:
        return words(self.path / "cgroup.procs") if self.path else []

    def end(self, rec: dict) -> None:
        """Remove the limit (read back: empty, or 'max'), move the processes back to the
        groups they came from (a --host-memory group on cgroup v2), then remove the group.
        Safe to call again, and from another thread; no fire() follows."""
        with self._lock:
            self._ended = True
            self._end(rec)

    def _end(self, rec: dict) -> None:
        if self.path is None or not self.path.is_dir():
            return
        try:
            self._file().write_text(self._line(None))
            rec["limit_after"] = self._file().read_text().strip()
        finally:
            deadline = time.monotonic() + 10
            while True:
                move_back(self.path, self.homes, self.home or self.path.parent)
                try:
                    os.rmdir(self.path)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)

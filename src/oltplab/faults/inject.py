"""Faults during a run (``tpcc run --inject EVENT``, experiment E8 without device-mapper).

Each event fires ``at_s`` seconds after the start of the step's measured window (ramp_end):

- ``kill-server``: SIGKILL of the managed server's postmaster. Nothing restarts it, so we do:
  first the orphaned backends must exit (they notice the postmaster's death; the old shared
  memory is released only then), then the server is started again and recovers from its WAL.
- ``kill-backend``: SIGKILL of one of the run's backends. PostgreSQL resets every backend and
  recovers by itself (``restart_after_crash``).
- ``throttle``: the server's process tree goes into a block-IO control group with a limit on
  the device that holds the data directory (cgroup v1 ``blkio.throttle.*_device``, v2
  ``io.max``) for ``[at, at + for)``; then the limit is removed and each process goes back
  to the group it came from (on cgroup v2, the --host-memory group; those forked meanwhile
  go where the postmaster was).
  cgroup v1 does not throttle the kernel's buffered writeback, only the IO the server's tasks
  issue themselves (reads, direct IO, WAL writes and fsyncs).

For the kills, ``recovery_s`` runs from the signal to the first connection the server accepts
again. The users reconnect by themselves (engines/postgres/driver.py); the transactions lost
in flight count as errors. Each injector is an object with the same hooks: ``check`` before the
run, ``fire`` at its time, ``end`` after ``for_s`` (throttles) and ``close``.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from ..config import DbSpec, InjectEvent, RunSpec
from ..errors import DatabaseError, UsageError
from ..host.memory import IO_PREFIX
from ..metrics.dips import dip

ORPHANS_WAIT_S = 60.0  # the old server's processes must be gone before it starts again
ACCEPT_WAIT_S = 120.0  # the longest wait for the first accepted connection
CRASH_NOTICE_S = 30.0  # kill-backend: the longest wait for the postmaster to reset the others
POLL_S = 0.02
CLOSE_WAIT_S = ORPHANS_WAIT_S + 180.0  # a restart under way: its orphans, then pg_ctl start
_V1_FILES = {"read": "blkio.throttle.read_bps_device", "write": "blkio.throttle.write_bps_device",
             "read-iops": "blkio.throttle.read_iops_device",
             "write-iops": "blkio.throttle.write_iops_device"}
_V2_KEYS = {"read": "rbps", "write": "wbps", "read-iops": "riops", "write-iops": "wiops"}


# --------------------------------------------------------------------------- before the run

def preflight(db: DbSpec, run: RunSpec) -> None:
    """Refuse (UsageError, one line) what cannot be injected here, before anything starts."""
    if db.engine != "postgres":
        raise UsageError("--inject is not available for MariaDB yet")
    if len(run.users) != 1:
        raise UsageError("--inject works on a run of one step: give one user count (--users N)")
    for e in run.inject:
        if e.at_s >= run.duration:
            raise UsageError(f"--inject {e.text!r}: at= lies beyond the measured window "
                             f"(--duration {run.duration:g} s)")
        if db.dsn is not None:
            raise UsageError(f"--inject {e.text!r}: {e.kind} needs a managed server; it does not "
                             "go with --dsn")
        if e.kind == "throttle":
            io_root()
            device_of(db.datadir)
    windows = sorted((e.at_s, e.at_s + e.for_s) for e in run.inject if e.kind == "throttle")
    for (_, end), (start, _) in zip(windows, windows[1:]):
        if start < end:
            raise UsageError("--inject: throttles must not overlap (the server's processes are "
                             "in one group at a time)")


def io_root() -> tuple[Path, int]:
    """(the block-IO control group our process is in, cgroup version); UsageError when there
    is none we may write (root and a blkio v1 hierarchy or the v2 io controller)."""
    why = ("throttle needs root and a writable block-IO controller (cgroup v1 blkio or cgroup "
           "v2 io)")
    if os.geteuid() != 0:
        raise UsageError(f"--inject: {why}; run as root")
    try:
        own = _own_groups("self")
        mounts = _mounts()
    except (OSError, ValueError) as e:
        raise UsageError(f"--inject: {why}: {e}") from None
    for root, point, fstype, opts in mounts:
        if fstype == "cgroup" and "blkio" in opts.split(","):
            key = next((k for k in own if "blkio" in k.split(",")), None)
            version = 1
        elif fstype == "cgroup2":
            key, version = "", 2
        else:
            continue
        if key is None or key not in own:
            continue
        path = _dir_in(point, root, own[key])
        if version == 1 and os.access(path, os.W_OK):
            return path, 1
        if version == 2 and "io" in _words(path / "cgroup.controllers") \
                and os.access(path, os.W_OK):
            return path, 2
    raise UsageError(f"--inject: {why}; this host has none")


def _mounts() -> list[tuple[str, str, str, str]]:
    """(root, mount point, file system type, super options) of each mount we see."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        sep = fields.index("-")
        out.append((fields[3], fields[4], fields[sep + 1], fields[-1]))
    return out


def _own_groups(pid: str) -> dict[str, str]:
    """{controllers ('' for cgroup v2): group path} from ``/proc/PID/cgroup``."""
    return dict(line.split(":", 2)[1:] for line in Path(f"/proc/{pid}/cgroup").read_text()
                .splitlines())


def _dir_in(point: str, root: str, group: str) -> Path:
    """The directory of ``group`` (a path from /proc/PID/cgroup) in the hierarchy mounted at
    ``point`` whose mount root is ``root``."""
    rel = os.path.relpath(group, root) if group.startswith(root) else group
    return Path(point) / ("" if rel in (".", "/") else rel.lstrip("/"))


def group_dir(pid: int, group: Path) -> Path | None:
    """The directory of the group process ``pid`` is in, in the hierarchy that holds the
    directory ``group``; None when the process is gone or that hierarchy is not found."""
    try:
        own = _own_groups(str(pid))
        mounts = _mounts()
    except (OSError, ValueError):
        return None
    for root, point, fstype, opts in mounts:
        if Path(point) not in (group, *group.parents):
            continue
        if fstype == "cgroup2" and "" in own:
            return _dir_in(point, root, own[""])
        key = next((k for k in own if fstype == "cgroup"
                    and set(k.split(",")) & set(opts.split(","))), None)
        if key is not None:
            return _dir_in(point, root, own[key])
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
    for pid in _words(group / "cgroup.procs"):
        for dest in (homes.get(int(pid), default), group.parent):
            try:
                (dest / "cgroup.procs").write_text(pid)
                break
            except OSError:
                continue  # that group is gone, or the process exited meanwhile


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


def _words(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


# --------------------------------------------------------------------------- the server

def _tree(pid: int) -> list:
    import psutil
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _accepts(dsn: str) -> bool:
    return _driver(dsn).accepts(dsn, "oltplab-inject")


def _driver(dsn: str):
    """The driver module of the engine behind ``dsn``."""
    from .. import engines
    return engines.get(engines.engine_of_dsn(dsn)).driver


def _wait_accepts(dsn: str, since: float, stop: threading.Event) -> float:
    """Seconds from ``since`` (monotonic) to the first accepted connection."""
    deadline = time.monotonic() + ACCEPT_WAIT_S
    while not _accepts(dsn):
        if time.monotonic() > deadline or stop.is_set():
            raise DatabaseError(f"the server accepted no connection within {ACCEPT_WAIT_S:g} s")
        time.sleep(POLL_S)
    return time.monotonic() - since


class KillServer:
    """SIGKILL of the postmaster, then our restart; recovery to first accepted connection."""

    def __init__(self, target, need_connections: int):
        self.instance, self.dsn, self.need = target.instance, target.dsn, need_connections

    def fire(self, rec: dict, stop: threading.Event) -> None:
        import psutil

        from ..host import memory as hostmem
        pid = self.instance.status()["pid"]
        if pid is None:
            raise DatabaseError("the managed server is not running")
        group = hostmem.group_of(pid)
        procs = _tree(pid)
        t0 = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        rec["pid"] = pid
        _, alive = psutil.wait_procs(procs, timeout=ORPHANS_WAIT_S)
        for p in alive:  # still attached to the old shared memory: they must go
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(alive, timeout=10)
        rec["orphans_s"] = round(time.monotonic() - t0, 3)
        rec["orphans_killed"] = len(alive)
        if group is not None and group.path.is_dir():  # start() makes it again
            group.remove()
        self.instance.start(self.need)
        rec["restarted_s"] = round(time.monotonic() - t0, 3)
        rec["recovery_s"] = round(_wait_accepts(self.dsn, t0, stop), 3)


class KillBackend:
    """SIGKILL of one of the run's backends; the postmaster resets the others and recovers."""

    def __init__(self, target, application_name: str = "oltplab"):
        self.dsn, self.app = target.dsn, application_name

    def fire(self, rec: dict, stop: threading.Event) -> None:
        driver = _driver(self.dsn)
        pid, watch = driver.backend_pid(self.dsn, self.app, "oltplab-inject")
        try:
            if pid is None:
                raise DatabaseError("no backend of the run to kill")
            t0 = time.monotonic()
            os.kill(pid, signal.SIGKILL)
            rec["pid"] = pid
            deadline = t0 + CRASH_NOTICE_S  # our own session ends when the reset reaches it
            while driver.alive(watch):
                if time.monotonic() > deadline:
                    raise DatabaseError("the server did not reset its backends after the kill")
                time.sleep(POLL_S)
        finally:
            driver.close(watch)
        rec["reset_s"] = round(time.monotonic() - t0, 3)
        rec["recovery_s"] = round(_wait_accepts(self.dsn, t0, stop), 3)


class Throttle:
    """A block-IO limit on the data directory's device around the server's process tree."""

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
        if self.version == 2 and "io" not in _words(parent / "cgroup.subtree_control"):
            (parent / "cgroup.subtree_control").write_text("+io")
        self.path.mkdir(exist_ok=True)
        self._file().write_text(self._line(self.event.value))
        # the postmaster first: what it forks from now on is inside
        self.homes = move_in(self.path, [p.pid for p in _tree(pid)])
        self.home = self.homes.get(pid)
        rec.update(cgroup=str(self.path), device=self.device, file=self._file().name,
                   limit_set=self._file().read_text().strip(), processes=len(self._procs()))

    def _procs(self) -> list[str]:
        return _words(self.path / "cgroup.procs") if self.path else []

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


# --------------------------------------------------------------------------- the schedule

def _wall(mono_ns: int) -> str:
    ts = time.time() - (time.monotonic_ns() - mono_ns) / 1e9
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds")


class Injector:
    """The run's events on their own threads, timed from the first step's ramp_end.

    ``mark`` goes in front of the runner's ``on_mark`` listener; ``close`` waits for what is
    under way (a restart), ends the throttles still on, and must run before the server stops.
    """

    def __init__(self, events: tuple[InjectEvent, ...], target, need_connections: int,
                 on_mark=None):
        self.on_mark = on_mark
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.records: list[dict] = []
        self.faults = []
        for e in events:
            if e.kind == "kill-server":
                fault = KillServer(target, need_connections)
            elif e.kind == "kill-backend":
                fault = KillBackend(target)
            else:
                fault = Throttle(target, e)
            self.faults.append((e, fault))

    def mark(self, name: str, t_ns: int | None = None, **attrs) -> None:
        if name == "ramp_end" and not self.threads and t_ns is not None:
            for e, fault in self.faults:
                rec = {"kind": e.kind, "event": e.text, "requested_at_s": e.at_s,
                       "for_s": e.for_s, "limit": e.limit, "value": e.value}
                self.records.append(rec)
                t = threading.Thread(target=self._run, args=(e, fault, rec, t_ns), daemon=True,
                                     name=f"inject-{e.kind}")
                self.threads.append(t)
                t.start()
        if self.on_mark is not None:
            self.on_mark(name, t_ns, **attrs)

    def _run(self, e: InjectEvent, fault, rec: dict, ramp_end_ns: int) -> None:
        fire_ns = ramp_end_ns + int(e.at_s * 1e9)
        if self.stop.wait(max(0.0, (fire_ns - time.monotonic_ns()) / 1e9)):
            rec["error"] = "not fired: the run ended first"
            return
        now = time.monotonic_ns()
        rec["at_s"] = round((now - ramp_end_ns) / 1e9, 3)
        rec["fired_at"] = _wall(now)
        try:
            fault.fire(rec, self.stop)
            if e.for_s:
                self.stop.wait(max(0.0, (fire_ns + e.for_s * 1e9 - time.monotonic_ns()) / 1e9))
        except Exception as exc:  # noqa: BLE001 - recorded on the event; the run decides
            rec["error"] = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        finally:
            if isinstance(fault, Throttle):
                _end_throttle(fault, rec)
                rec["ended_at_s"] = round((time.monotonic_ns() - ramp_end_ns) / 1e9, 3)

    def close(self) -> None:
        """End every event: throttles end now, a restart under way gets CLOSE_WAIT_S to finish.
        The throttles end here too, whatever their threads did, and a Ctrl-C that comes
        meanwhile cannot stop that (it is raised once they have ended)."""
        self.stop.set()
        try:
            deadline = time.monotonic() + CLOSE_WAIT_S
            for t in self.threads:
                t.join(max(0.0, deadline - time.monotonic()))
        finally:
            with _ctrl_c_deferred():
                for (_, fault), rec in zip(self.faults, self.records):
                    if isinstance(fault, Throttle):
                        _end_throttle(fault, rec)
                for t, rec in zip(self.threads, self.records):
                    if t.is_alive():
                        rec.setdefault("error", f"still under way {CLOSE_WAIT_S:g} s after "
                                       "the run ended")

    def events(self, per_s: list[int] | None) -> list[dict]:
        """The records for run.json's ``events``, with the throughput figures around each."""
        out = []
        for rec in self.records:
            rec = dict(rec)
            if per_s and rec.get("at_s") is not None:
                rec.update(dip(per_s, rec["at_s"], rec.get("for_s") or 0.0).as_dict())
            out.append(rec)
        return out


def _end_throttle(fault: Throttle, rec: dict) -> None:
    try:
        fault.end(rec)
    except OSError as exc:
        rec.setdefault("error", f"removing the limit: {exc}")


@contextmanager
def _ctrl_c_deferred():
    """Inside, Ctrl-C (SIGINT) interrupts nothing; one that came is raised as
    KeyboardInterrupt at the end. Only the main thread receives it, so only there it acts."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came = []
    old = signal.signal(signal.SIGINT, lambda *_: came.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old if old is not None else signal.default_int_handler)
    if came:
        raise KeyboardInterrupt


def crash_note(events: list[dict]) -> str | None:
    """A step warning when a kill reset the server's statistics during the window."""
    kills = [e["kind"] for e in events if e["kind"].startswith("kill-") and e.get("at_s")
             is not None]
    if not kills:
        return None
    return (f"{', '.join(kills)} during the window: crash recovery reset the server's "
            "statistics, so the server-side TPM is left out; the client-side TPM counts")

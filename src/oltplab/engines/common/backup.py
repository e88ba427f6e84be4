"""What every engine's backup and restore steps share (engines/<engine>/backup.py): the spec
of a backup run, the job of one cycle, the timed parts of a restore, and the running of the
tools themselves, watched and stopped (scenarios/backup.py has the cycles)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from threading import Event
from typing import Any, Callable, Iterator

from ...config import DbSpec, io_latency_default
from ...errors import DatabaseError, UsageError

METHODS = ("basebackup", "dump")
COMPRESSIONS = ("none", "gzip", "zstd")
MIN_RATE = 32 * 1024            # pg_basebackup -r: 32 kB/s ...
MAX_RATE = 1024 * 1024 * 1024   # ... to 1024 MB/s
RESTORE_MEMORY = 128 * 1024**2  # the restored copy's cache: it only runs the checks
POLL_S = 0.5
PIPE_GRACE_S = 2.0  # how long the tools before a failed last one of a pipeline may take
TOOL_TIMEOUT_S = 24 * 3600

Progress = Callable[[int, str, int, float], None]  # cycle, phase, bytes done, seconds


@dataclass(frozen=True)
class BackupSpec:
    """What ``oltplab backup run`` does; validated here so that a plan can build one too."""

    cycles: int = 3
    method: str = "basebackup"      # the engine's physical backup, or a logical dump
    to: Path | None = None          # where backups go [default: beside the data directory]
    interval: float = 0.0           # seconds between cycle starts; 0 = one after the other
    compress: str = "none"
    max_rate: int | None = None     # bytes per second (pg_basebackup -r)
    restore: bool = True
    jobs: int = 2                   # pg_dump / pg_restore -j, mariadb-backup --parallel
    name: str = "backup"
    results_dir: Path = Path("results")
    sample_interval: float = 1.0
    power: str = "auto"
    io_latency: str = field(default_factory=io_latency_default)

    def __post_init__(self):
        if self.cycles < 1:
            raise UsageError(f"--cycles must be at least 1 (got {self.cycles})")
        if self.method not in METHODS:
            raise UsageError(f"--method: {self.method!r} is not one of {', '.join(METHODS)}")
        if self.compress not in COMPRESSIONS:
            raise UsageError(f"--compress: {self.compress!r} is not one of "
                             f"{', '.join(COMPRESSIONS)}")
        if self.interval < 0:
            raise UsageError("--interval must not be negative")
        if self.jobs < 1:
            raise UsageError(f"--jobs must be at least 1 (got {self.jobs})")
        if self.method == "dump" and (self.compress != "none" or self.max_rate is not None):
            raise UsageError("--compress and --max-rate are options of the physical backup; "
                             "they do not go with --method dump")
        if self.max_rate is not None and not MIN_RATE <= self.max_rate <= MAX_RATE:
            raise UsageError(f"--max-rate must lie between 32kB and 1024MiB per second "
                             f"(got {self.max_rate} bytes)")
        if self.to is not None and self.to.exists() and not self.to.is_dir():
            raise UsageError(f"--to {self.to} is a file; give a directory")


# --------------------------------------------------------------------------- small helpers

def dir_bytes(path: Path) -> int:
    """Bytes of the regular files under ``path`` (0 when it does not exist); files that vanish
    while we count are skipped."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                st = os.lstat(os.path.join(root, f))
            except OSError:
                continue
            if not os.path.islink(os.path.join(root, f)):
                total += st.st_size
    return total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """Give ``path`` and everything under it to ``uid`` (when we are root)."""
    if os.geteuid() != 0 or uid == 0:
        return
    os.lchown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), uid, gid)


def tool_env() -> dict:
    """The environment of a client tool: no PG* or MYSQL* variables of ours leak into it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "MYSQL"))}
    env.update(LC_ALL="C", LANG="C")
    return env


def _last_line(log) -> str | None:
    log.seek(0)
    lines = [ln for ln in log.read().decode(errors="replace").splitlines() if ln.strip()]
    return lines[-1].strip() if lines else None


def _knock_on(p: subprocess.Popen, log) -> bool:
    """Whether a tool of a pipeline failed only because another one did: it died of a broken
    pipe or says so, or it was stopped here after the last tool had failed."""
    if p.returncode in (-signal.SIGPIPE, -signal.SIGTERM, -signal.SIGKILL):
        return True
    return "broken pipe" in (_last_line(log) or "").lower()


def _stop_all(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run_watched(args: list, watch: Path, report: Callable[[int, float], None], what: str,
                env: dict | None = None, cancel: Event | None = None, *,
                stdin: Path | None = None, stdout: Path | None = None) -> float:
    """Run a tool, or a pipeline (``args`` a list of argument lists, each one's output the
    next one's input), reporting the bytes under ``watch`` every half second; the seconds
    it took. ``stdin`` feeds the first from a file, ``stdout`` takes the last one's output.
    The tools are stopped when we are interrupted (Ctrl-C, or ``cancel`` set, which then
    raises KeyboardInterrupt here, also before a tool starts); a failure raises with the
    failed tool's last line."""
    pipeline = args if args and isinstance(args[0], (list, tuple)) else [args]
    if cancel is not None and cancel.is_set():  # stopped between two tools
        raise KeyboardInterrupt
    with ExitStack() as stack:
        logs = [stack.enter_context(tempfile.TemporaryFile("w+b")) for _ in pipeline]
        feed = stack.enter_context(open(stdin, "rb")) if stdin else subprocess.DEVNULL
        sink = stack.enter_context(open(stdout, "wb")) if stdout else None
        procs: list[subprocess.Popen] = []
        t0 = time.monotonic()
        try:
            for i, (cmd, log) in enumerate(zip(pipeline, logs)):
                last = i == len(pipeline) - 1
                out = (sink or log) if last else subprocess.PIPE
                err = subprocess.STDOUT if last and sink is None else log
                try:
                    procs.append(subprocess.Popen(cmd, stdin=feed, stdout=out, stderr=err,
                                                  env=env))
                except OSError as e:
                    raise UsageError(f"cannot run {cmd[0]}: {e.strerror or e}") from e
                finally:
                    if i:  # our copy of the pipe's read end: a writer sees its reader die
                        feed.close()
                if not last:
                    feed = procs[-1].stdout
            while True:
                try:
                    procs[-1].wait(POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    if cancel is not None and cancel.is_set():
                        raise KeyboardInterrupt from None
                    report(dir_bytes(watch), time.monotonic() - t0)
                    if time.monotonic() - t0 > TOOL_TIMEOUT_S:
                        raise DatabaseError(f"{what} did not finish within {TOOL_TIMEOUT_S} s")
            seconds = time.monotonic() - t0
            # the tools before the last end when it has read everything or, when it failed,
            # at their next write; one still running after that is stopped
            deadline = time.monotonic() + (PIPE_GRACE_S if procs[-1].returncode else 60)
            for p in procs[:-1]:
                try:
                    p.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    break
            _stop_all(procs)
        except BaseException:
            _stop_all(procs)
            raise
        failed = [f for f in zip(procs, pipeline, logs) if f[0].returncode != 0]
        if failed:
            p, cmd, log = next((f for f in failed if not _knock_on(f[0], f[2])), failed[0])
            text = _last_line(log) or f"exit {p.returncode}"
            name = os.path.basename(cmd[0])
            if len(pipeline) > 1 and not text.startswith(name):
                text = f"{name}: {text}"
            raise DatabaseError(f"{what} failed: {text}")
        report(dir_bytes(watch), seconds)
        return seconds


# --------------------------------------------------------------------------- one cycle


@dataclass(frozen=True)
class Job:
    """What an engine's ``backup`` and ``restored`` get: the run's specs, the target, the
    cycle under way, where to report progress and the flag that stops a tool."""

    spec: BackupSpec
    db: DbSpec
    target: Any
    cycle: int
    progress: Progress
    cancel: Event | None = None

    def run(self, args: list, watch: Path, phase: str, what: str, **kw) -> float:
        """``run_watched`` for this cycle, reporting as ``phase``."""
        report = lambda n, t: self.progress(self.cycle, phase, n, t)  # noqa: E731
        return run_watched(args, watch, report, f"{what} (cycle {self.cycle})", tool_env(),
                           self.cancel, **kw)


class Parts:
    """The timed parts of one restore (copy, replay, load), each announced to the progress
    callback as it begins; ``bytes`` is the size of the scratch copy when the last ended (a
    server the engine starts afterwards may add files of its own, e.g. a new redo log)."""

    def __init__(self, job: Job, scratch: Path):
        self.job, self.scratch = job, scratch
        self.seconds: dict[str, float] = {}
        self.bytes = 0

    def total(self) -> float:
        return sum(self.seconds.values())

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        self.job.progress(self.job.cycle, name, dir_bytes(self.scratch), self.total())
        t0 = time.monotonic()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.monotonic() - t0
            self.bytes = dir_bytes(self.scratch)

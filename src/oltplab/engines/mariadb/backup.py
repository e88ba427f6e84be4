"""MariaDB's side of the backup and restore cycles (scenarios/backup.py has the cycles).

- ``basebackup`` is ``mariadb-backup --backup --target-dir=DEST --parallel=JOBS`` (and
  ``--throttle`` for --max-rate), connected as root over the managed server's private
  socket. The restore prepares the backup in place (``--prepare``: InnoDB applies the redo
  log the backup copied, timed as replay), copies it into the scratch data directory
  (``--copy-back``, timed as copy) and starts it as a managed MariaDB of its own.
- With --compress (zstd or gzip) the backup is ``--stream=mbstream`` piped through the
  compressor into ``backup.mbstream.zst`` (``.gz``): mariadb-backup's own compression is
  deprecated. The restore unpacks the stream into the scratch directory (``zstd -d | mbstream
  -x``, timed as copy) and prepares it there (replay); the unpacked backup is the data
  directory, so nothing is copied twice.
- ``dump`` is ``mariadb-dump --single-transaction --routines`` into ``dump.sql``; the restore
  starts an empty server and feeds the file to the ``mariadb`` client (timed as load).

--max-rate becomes ``--throttle=N`` with N = the rate in whole MiB/s (at least 1), recorded as
``throttle``: mariadb-backup limits its read and write pairs to N a second, which bounds the
rate from above only. Measured at W=1 (317 MB, 2 cores): N = 10 gave 4.6 MiB/s and N = 40
16 MiB/s; each small file costs a pair, so the rate stays well below the one asked. The restored
copy runs with a 128 MiB buffer pool on its own private socket, without TCP.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...config import DbSpec
from ...errors import DatabaseError, UsageError
from ..base import Target
from ..common.backup import RESTORE_MEMORY, BackupSpec, Job, Parts, chown_tree
from . import access, client
from .instance import MariaDBInstance, find_binary
from .session import database  # noqa: F401  (the backup interface's target)

#: --compress: the compressor, how it decompresses, the stream's file name
COMPRESSORS = {"zstd": (["zstd", "-q", "-c"], ["zstd", "-q", "-d", "-c"], "backup.mbstream.zst"),
               "gzip": (["gzip", "-c"], ["gzip", "-d", "-c"], "backup.mbstream.gz")}
DUMP_FILE = "dump.sql"
THROTTLE_UNIT = 1024**2  # bytes per --throttle step


def _tool(name: str) -> str:
    path = find_binary(name)
    if path is None:
        package = {"mariadb-backup": "mariadb-backup", "mbstream": "mariadb-backup",
                   "mariadb-dump": "mariadb-client"}.get(name, "mariadb-client-core")
        raise UsageError(f"{name} is not installed (Debian package {package}; make install "
                         "installs it)")
    return path


def check(spec: BackupSpec, db: DbSpec) -> None:
    """Refuse, before anything starts, what the tools cannot do."""
    if spec.method == "basebackup":
        _tool("mariadb-backup")
    else:
        _tool("mariadb-dump")
        _tool("mariadb")
    if spec.max_rate is not None and spec.max_rate < THROTTLE_UNIT:
        raise UsageError("--max-rate: on MariaDB it is mariadb-backup --throttle, in steps of "
                         "1MiB per second; give at least 1MiB")
    if spec.compress != "none":
        program = COMPRESSORS[spec.compress][0][0]
        if shutil.which(program) is None:
            raise UsageError(f"--compress {spec.compress} pipes mariadb-backup's stream "
                             f"through {program}, which is not installed (Debian package "
                             f"{program})")
        if spec.restore:
            _tool("mbstream")


def server(target: Target) -> dict:
    conn = client.connect(target.dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION()")
            version = cur.fetchone()[0]
    except client.Error as e:
        raise DatabaseError(f"cannot read the server's version: {client.error_text(e)}") from e
    finally:
        conn.close()
    return {"engine": "mariadb", "version": version, "managed": target.instance is not None}


@contextmanager
def connection_options(dsn: str) -> Iterator[list[str]]:
    """A client tool's options for ``dsn``, the option-file option first, as the tools want.
    A password of ``dsn`` goes into a new option file of mode 0600, read instead of (or after
    including) the DSN's own, and removed on the way out: a command line is public."""
    args = client.connect_args(dsn)
    out = [f"--user={args['user']}"]
    if "unix_socket" in args:
        out.append(f"--socket={args['unix_socket']}")
    else:
        out += [f"--host={args['host']}", f"--port={args['port']}", "--protocol=tcp"]
    if "password" not in args:
        yield [f"--defaults-file={args['read_default_file']}" if "read_default_file" in args
               else "--no-defaults", *out]
        return
    fd, path = tempfile.mkstemp(prefix="oltplab-client-", suffix=".cnf")
    try:
        with os.fdopen(fd, "w") as f:
            if "read_default_file" in args:
                f.write(f"!include {args['read_default_file']}\n")
            f.write(f"[client]\npassword={_option_value(args['password'])}\n")
        yield [f"--defaults-file={path}", *out]
    finally:
        os.unlink(path)


def _option_value(text: str) -> str:
    """``text`` as a quoted value of an option file (which reads the backslash escapes)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def backup(job: Job, dest: Path) -> dict:
    with connection_options(job.target.dsn) as conn:
        return _backup(job, dest, conn)


def _backup(job: Job, dest: Path, conn: list[str]) -> dict:
    s = job.spec
    if s.method == "dump":
        dest.mkdir(mode=0o700)
        job.run([_tool("mariadb-dump"), *conn, "--single-transaction", "--routines",
                 "--triggers", f"--result-file={dest / DUMP_FILE}",
                 client.connect_args(job.target.dsn)["database"] or job.db.dbname],
                dest, "backup", "mariadb-dump")
        return {}
    args = [_tool("mariadb-backup"), *conn, "--backup", f"--target-dir={dest}",
            f"--parallel={s.jobs}"]
    fields: dict = {"parallel": s.jobs}
    if s.max_rate is not None:
        fields["throttle"] = max(1, s.max_rate // THROTTLE_UNIT)
        args.append(f"--throttle={fields['throttle']}")
    if s.compress == "none":
        job.run(args, dest, "backup", "mariadb-backup")
        return fields
    compressor, _, name = COMPRESSORS[s.compress]
    dest.mkdir(mode=0o700)
    job.run([[*args, "--stream=mbstream"], compressor], dest, "backup",
            f"mariadb-backup | {compressor[0]}", stdout=dest / name)
    return {**fields, "file": name}


@contextmanager
def restored(job: Job, source: Path, scratch: Path, parts: Parts) -> Iterator[str]:
    """Restore ``source`` into ``scratch`` and start it; its DSN. Stopped on the way out."""
    from ..common.osuser import current_user, ensure_system_user
    user = ensure_system_user() if os.geteuid() == 0 else current_user()
    inst = MariaDBInstance(DbSpec(datadir=scratch, db_memory=RESTORE_MEMORY,
                                  dbname=job.db.dbname, engine="mariadb"))
    backup_tool = _tool("mariadb-backup") if job.spec.method == "basebackup" else None
    try:
        if job.spec.method == "dump":
            scratch.mkdir(mode=0o700)
            chown_tree(scratch, user.uid, user.gid)
            inst.start()
            with parts.part("load"):
                inst.ensure_database(job.db.dbname)
                with connection_options(inst.dsn()) as conn:
                    job.run([_tool("mariadb"), *conn, "--batch", job.db.dbname],
                            scratch, "restore", "mariadb", stdin=source / DUMP_FILE)
        elif job.spec.compress == "none":
            with parts.part("replay"):
                job.run([backup_tool, "--no-defaults", "--prepare", f"--target-dir={source}"],
                        source, "replay", "mariadb-backup --prepare")
            with parts.part("copy"):
                job.run([backup_tool, "--no-defaults", "--copy-back",
                         f"--target-dir={source}", f"--datadir={scratch}"],
                        scratch, "copy", "mariadb-backup --copy-back")
                chown_tree(scratch, user.uid, user.gid)
            inst.start()
        else:
            _, decompress, name = COMPRESSORS[job.spec.compress]
            with parts.part("copy"):
                scratch.mkdir(mode=0o700)
                job.run([[*decompress, str(source / name)],
                         [_tool("mbstream"), "-x", "-C", str(scratch)]],
                        scratch, "copy", f"{decompress[0]} -d | mbstream -x")
            with parts.part("replay"):
                job.run([backup_tool, "--no-defaults", "--prepare", f"--target-dir={scratch}"],
                        scratch, "replay", "mariadb-backup --prepare")
                chown_tree(scratch, user.uid, user.gid)
            inst.start()
        yield inst.dsn()
    finally:
        inst.stop()


def check_restored(dsn: str) -> dict:
    """The consistency checks on the restored copy: ``{check_ok, check_failed}``; CC11 only
    while no Delivery has run, as ``tpcc check`` decides."""
    from .tpcc import DIALECT
    conn = client.connect(dsn)
    try:
        with conn.cursor() as cur:
            try:
                cur.execute("SELECT EXISTS (SELECT 1 FROM district WHERE d_next_o_id <> 3001)")
                delivered = bool(cur.fetchone()[0])
            except client.Error:
                delivered = False  # run_checks names the missing schema
    finally:
        conn.close()
    results = DIALECT.run_checks(dsn, after_run=delivered)
    return {"check_ok": all(c.ok for c in results),
            "check_failed": [c.name for c in results if not c.ok]}


def leftovers(scratch: Path) -> list[Path]:
    """The restored copy with its socket directory and client option file."""
    return [scratch, access.socket_dir(scratch), access.option_file(scratch)]

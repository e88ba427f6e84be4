"""A real managed PostgreSQL in a temporary directory: init, start, stop, settings, bad input.

Run as root, the server runs as the unprivileged system user, so that path is exercised too.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import socket
import stat
import subprocess
from pathlib import Path

import asyncpg
import psutil
import pytest

from oltplab.config import DbSpec
from oltplab.engines.postgres.instance import PostgresInstance
from oltplab.engines.common.osuser import SYSTEM_USER
from oltplab.engines.postgres.session import database
from oltplab.errors import DatabaseError, UsageError

from conftest import free_port

MiB = 1024**2


def _sql(dsn: str, query: str):
    async def go():
        conn = await asyncpg.connect(dsn, timeout=10)
        try:
            return await conn.fetchval(query)
        finally:
            await conn.close()

    return asyncio.run(go())


def st_uid(spec: DbSpec) -> int:
    """The OS user the cluster in spec.datadir belongs to."""
    return spec.datadir.stat().st_uid


def _spec(server_tmp: Path, **kw) -> DbSpec:
    kw.setdefault("datadir", server_tmp / "data")
    kw.setdefault("port", free_port())
    kw.setdefault("db_memory", 128 * MiB)
    return DbSpec(**kw)


@pytest.fixture
def instances():
    """Instances a test starts; stopped even when the test fails."""
    made: list[PostgresInstance] = []

    def make(spec: DbSpec) -> PostgresInstance:
        made.append(PostgresInstance(spec))
        return made[-1]

    yield make
    for inst in made:
        inst.stop("immediate")


def test_start_stop_with_waldir_as_unprivileged_user(server_tmp, instances):
    spec = _spec(server_tmp, waldir=server_tmp / "wal")
    inst = instances(spec)
    assert not inst.initialized() and not inst.is_running()
    inst.stop()  # a no-op when not running
    inst.start(need_connections=150)
    assert inst.initialized() and inst.is_running()

    pg_wal = spec.datadir / "pg_wal"
    assert pg_wal.is_symlink() and pg_wal.resolve() == (server_tmp / "wal").resolve()
    assert (server_tmp / "wal" / "archive_status").is_dir()

    st = inst.status()
    assert st["running"] and st["port"] == spec.port and st["version"].startswith("18")
    assert st["waldir"] == str((server_tmp / "wal").resolve())
    if os.geteuid() == 0:
        uid = pwd.getpwnam(SYSTEM_USER).pw_uid
        assert psutil.Process(st["pid"]).uids().real == uid
        assert (spec.datadir).stat().st_uid == uid and (server_tmp / "wal").stat().st_uid == uid

    # the private unix-socket DSN serves asyncpg and psql; there is no TCP without --listen
    sock = Path(f"{spec.datadir}.sock")
    assert inst.dsn("postgres") == f"postgresql://postgres@/postgres?host={sock}&port={spec.port}"
    assert st["socket_dir"] == str(sock) and st["listen"] == "" and st["tcp_dsn"] is None
    assert inst.remote_dsn() is None  # nothing another host could reach
    assert stat.S_IMODE(sock.stat().st_mode) == 0o700 and sock.stat().st_uid == st_uid(spec)
    assert _sql(inst.dsn("postgres"), "SELECT 1") == 1
    psql = subprocess.run([str(inst.bin_dir / "psql"), inst.dsn("postgres"), "-Atc",
                           "SHOW max_connections"], capture_output=True, text=True, timeout=30)
    assert psql.stdout.strip() == "170", psql.stderr
    with pytest.raises(OSError):
        _sql(f"postgresql://postgres@127.0.0.1:{spec.port}/postgres", "SELECT 2")

    assert inst.ensure_database("tpcc") is True
    assert inst.ensure_database("tpcc") is False
    assert _sql(inst.dsn(), "SELECT current_database()") == "tpcc"

    rec = inst.settings_for_record()
    assert rec["server_version"].startswith("PostgreSQL 18")
    assert rec["server_version_num"] >= 180000
    s = rec["settings"]
    assert s["shared_buffers"] == "128MB" and s["max_connections"] == "170"
    assert s["synchronous_commit"] == "on" and s["fsync"] == "on"
    assert s["random_page_cost"] == "1.1" and s["checkpoint_completion_target"] == "0.9"
    assert "transaction_isolation" not in s

    inst.stop()
    assert not inst.is_running() and not inst.status()["running"]
    inst.stop()
    with pytest.raises(DatabaseError, match="not running"):
        inst.settings_for_record()


def test_restart_with_other_db_memory_and_overrides(server_tmp, instances):
    spec = _spec(server_tmp)
    first = instances(spec)
    first.start()
    assert _sql(first.dsn("postgres"), "SHOW shared_buffers") == "128MB"
    first.start()  # already running on this datadir and port: fine
    with pytest.raises(DatabaseError, match="fewer than the 500 needed"):
        first.start(need_connections=500)
    first.stop()

    second = instances(spec.with_(db_memory=256 * MiB, settings=(("work_mem", "8MB"),
                                                                 ("max_connections", "42"))))
    second.start(need_connections=300)  # -c max_connections wins over the hint
    dsn = second.dsn("postgres")
    assert _sql(dsn, "SHOW shared_buffers") == "256MB"
    assert _sql(dsn, "SHOW effective_cache_size") == "768MB"
    assert _sql(dsn, "SHOW work_mem") == "8MB"
    assert _sql(dsn, "SHOW max_connections") == "42"
    assert "shared_buffers = '256MB'" in (spec.datadir / "oltplab.conf").read_text()
    second.stop()


def test_bad_datadirs(server_tmp):
    afile = server_tmp / "afile"
    afile.write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        PostgresInstance(_spec(server_tmp, datadir=afile)).start()
    with pytest.raises(UsageError, match="cannot create"):
        PostgresInstance(_spec(server_tmp, datadir=afile / "sub")).start()

    junk = server_tmp / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="not empty and holds no PostgreSQL"):
        PostgresInstance(_spec(server_tmp, datadir=junk)).start()
    with pytest.raises(UsageError, match="--waldir .* not empty"):
        PostgresInstance(_spec(server_tmp, waldir=junk)).start()

    locked = server_tmp / "locked"
    locked.mkdir()
    if shutil.which("chattr") and subprocess.run(["chattr", "+i", str(locked)],
                                                 capture_output=True).returncode == 0:
        try:
            with pytest.raises(UsageError, match="not writable"):
                PostgresInstance(_spec(server_tmp, datadir=locked)).start()
        finally:
            subprocess.run(["chattr", "-i", str(locked)], check=True)
    elif os.geteuid() != 0:
        locked.chmod(0o500)
        with pytest.raises(UsageError, match="not writable"):
            PostgresInstance(_spec(server_tmp, datadir=locked)).start()


def test_port_in_use_by_another_program_matters_only_with_listen(server_tmp, instances):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        inst = PostgresInstance(_spec(server_tmp, port=port, listen="127.0.0.1"))
        with pytest.raises(UsageError, match=f"--port {port} is already in use on 127.0.0.1"):
            inst.start()
        assert not inst.initialized()  # nothing was done before the check
        socket_only = instances(_spec(server_tmp, port=port))  # the port only names the socket
        socket_only.start()
        assert _sql(socket_only.dsn("postgres"), "SELECT 1") == 1
        socket_only.stop()


def test_pg_bin_without_binaries(server_tmp):
    empty = server_tmp / "bin"
    empty.mkdir()
    (empty / "psql").write_text("")
    with pytest.raises(UsageError, match="lacks initdb, pg_ctl, postgres"):
        PostgresInstance(_spec(server_tmp, pg_bin=empty)).start()
    with pytest.raises(UsageError, match="is not a directory"):
        PostgresInstance(_spec(server_tmp, pg_bin=server_tmp / "nope")).init()


def test_server_that_fails_to_start_names_the_cause(server_tmp, instances):
    spec = _spec(server_tmp, settings=(("no_such_setting", "1"),))
    bad = instances(spec)
    with pytest.raises(DatabaseError, match='failed to start: unrecognized configuration '
                                            'parameter "no_such_setting"') as err:
        bad.start()
    assert "\n" not in str(err.value)
    assert not bad.is_running()
    good = instances(spec.with_(settings=()))
    good.start()  # the next start rewrites the settings file
    assert good.is_running()
    good.stop()


def test_database_stops_what_it_started_even_on_errors(server_tmp):
    spec = _spec(server_tmp, dbname="bench")
    inst = PostgresInstance(spec)
    with pytest.raises(RuntimeError, match="boom"):
        with database(spec, need_connections=10) as target:
            assert target.started_here and target.instance is not None
            assert _sql(target.dsn, "SELECT current_database()") == "bench"
            assert _sql(target.admin_dsn, "SELECT current_database()") == "postgres"
            raise RuntimeError("boom")
    assert not inst.is_running()

    with pytest.raises(KeyboardInterrupt):
        with database(spec):
            assert inst.is_running()
            raise KeyboardInterrupt
    assert not inst.is_running()

    inst.start()  # running before: database() leaves it running
    try:
        with database(spec) as target:
            assert not target.started_here
        assert inst.is_running()
        with database(DbSpec(dsn=inst.dsn("bench"))) as external:
            assert external.instance is None and external.dsn == inst.dsn("bench")
    finally:
        inst.stop()


def test_unreachable_dsn_is_one_clear_line():
    port = free_port()
    with pytest.raises(DatabaseError, match=f"cannot connect to --dsn .*:{port}/x: ") as err:
        with database(DbSpec(dsn=f"postgresql://postgres:secret@127.0.0.1:{port}/x")):
            pass
    assert "secret" not in str(err.value) and "\n" not in str(err.value)

"""Who can reach a managed server: only its OS user (and root) through the private socket, and
TCP clients with the generated password when --listen asks for TCP."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import stat
import subprocess
from pathlib import Path

import asyncpg
import pytest

from oltplab.config import DbSpec
from oltplab.engines.postgres import access
from oltplab.engines.postgres.instance import PostgresInstance
from oltplab.errors import UsageError

from conftest import free_port

MiB = 1024**2
AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
as_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                             reason="running a client as another OS user needs root and setpriv")


def _connect(dsn: str, password: str | None = None):
    async def go():
        conn = await asyncpg.connect(dsn, password=password, timeout=10)
        try:
            return await conn.fetchval("SELECT current_user")
        finally:
            await conn.close()

    return asyncio.run(go())


@pytest.fixture
def server(server_tmp):
    """Start a managed server for a spec; stopped even when the test fails."""
    made: list[PostgresInstance] = []

    def start(**kw) -> PostgresInstance:
        kw.setdefault("datadir", server_tmp / "data")
        spec = DbSpec(port=free_port(), db_memory=64 * MiB, **kw)
        made.append(PostgresInstance(spec))
        made[-1].start()
        return made[-1]

    yield start
    for inst in made:
        inst.stop("immediate")


def _psql_as_nobody(inst: PostgresInstance) -> subprocess.CompletedProcess:
    return subprocess.run([*AS_NOBODY, str(inst.bin_dir / "psql"), inst.dsn("postgres"),
                           "-Atc", "SELECT current_user"],
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)


@as_root
def test_another_os_user_cannot_connect_through_the_socket(server):
    inst = server()
    sock = Path(inst.status()["socket_dir"])
    assert stat.S_IMODE(sock.stat().st_mode) == 0o700
    assert sock.stat().st_uid == inst.datadir.stat().st_uid != 0
    refused = _psql_as_nobody(inst)
    assert refused.returncode != 0 and "Permission denied" in refused.stderr, refused.stderr
    # the directory is the gate: opened, the same client gets in (so nothing else refused it)
    sock.chmod(0o755)
    try:
        opened = _psql_as_nobody(inst)
    finally:
        sock.chmod(0o700)
    assert opened.returncode == 0 and opened.stdout.strip() == "postgres", opened.stderr


def test_tcp_needs_the_generated_password(server):
    inst = server(listen="127.0.0.1")
    port = inst.spec.port
    plain = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    with pytest.raises(asyncpg.InvalidPasswordError):
        _connect(plain)
    with pytest.raises(asyncpg.InvalidPasswordError):
        _connect(plain, password="guess")

    pgpass = inst.password_file
    assert pgpass == Path(f"{inst.datadir}.pgpass")
    assert stat.S_IMODE(pgpass.stat().st_mode) == 0o600
    password = pgpass.read_text().strip().rsplit(":", 1)[1]
    assert len(password) >= 32
    assert _connect(plain, password=password) == "postgres"
    tcp = inst.tcp_dsn("postgres")
    assert tcp == f"{plain}?passfile={pgpass}"
    assert _connect(tcp) == "postgres"
    psql = subprocess.run([str(inst.bin_dir / "psql"), tcp, "-Atc", "SELECT 1"],
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert psql.stdout.strip() == "1", psql.stderr
    assert _connect(inst.dsn("postgres")) == "postgres"  # the private socket still works
    # --loadgen's hosts lack the password file: the DSN they get carries the password
    remote = inst.remote_dsn("postgres")
    assert "passfile" not in remote and password in remote
    assert remote.startswith("postgresql://postgres:") and remote.endswith(
        f"@127.0.0.1:{port}/postgres")
    pgpass.rename(f"{pgpass}.away")
    try:
        assert _connect(remote) == "postgres"
    finally:
        Path(f"{pgpass}.away").rename(pgpass)

    st = inst.status()
    assert st["listen"] == "127.0.0.1" and st["tcp_dsn"] == inst.tcp_dsn()
    written = [str(st), *(p.read_text() for p in inst.datadir.glob("*.conf")),
               inst.log_path.read_text()]
    assert not any(password in text for text in written)

    inst.stop()
    again = PostgresInstance(inst.spec)  # the next start keeps the password
    again.start()
    try:
        assert _connect(plain, password=password) == "postgres"
    finally:
        again.stop()


def test_scram_verifier_is_the_one_postgresql_computes(pg):
    role = f"scram_{os.getpid()}"
    pg.sql(f"CREATE ROLE {role} PASSWORD 'pencil'")  # password_encryption: scram-sha-256
    try:
        [row] = pg.sql(f"SELECT rolpassword FROM pg_authid WHERE rolname = '{role}'")
    finally:
        pg.sql(f"DROP ROLE {role}")
    theirs = row[0]
    iterations, salt = theirs.split("$")[1].split(":")
    assert access.scram_verifier("pencil", base64.b64decode(salt), int(iterations)) == theirs
    assert access.scram_verifier("pencil") != access.scram_verifier("pencil")  # a fresh salt


def test_long_datadir_puts_the_socket_under_tmp(server_tmp, server):
    datadir = server_tmp / ("d" * 90) / "data"
    expected = access.socket_dir(datadir)
    assert expected.parent == Path("/tmp") and expected.name.startswith("oltplab-")
    try:
        if os.geteuid() == 0:  # a directory that another user made there is refused
            os.mkdir(expected, 0o777)
            os.chown(expected, 65534, 65534)
            with pytest.raises(UsageError, match=f"socket directory {expected} is owned by"):
                server(datadir=datadir)
            os.rmdir(expected)
        inst = server(datadir=datadir)
        assert inst.status()["socket_dir"] == str(expected)
        # another process finds the server through its pid file
        later = PostgresInstance(inst.spec)
        assert later.dsn("postgres") == inst.dsn("postgres")
        assert _connect(later.dsn("postgres")) == "postgres"
        later.stop()
        assert not inst.is_running()
        assert PostgresInstance(inst.spec).dsn("postgres") == inst.dsn("postgres")  # stopped too
    finally:
        shutil.rmtree(expected, ignore_errors=True)

"""`oltplab db` as a user runs it with --listen: TCP needs the password, which is never shown."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import pytest

from ..conftest import free_port


def _connect(dsn: str) -> str:
    async def go():
        conn = await asyncpg.connect(dsn, timeout=10)
        try:
            return await conn.fetchval("SELECT current_user")
        finally:
            await conn.close()

    return asyncio.run(go())


def test_db_start_with_listen_prints_no_password_and_tcp_needs_it(cli, server_tmp):
    datadir, port = server_tmp / "pg", str(free_port())
    where = ["--datadir", str(datadir), "--port", port]
    started = cli("db", "start", *where, "--db-memory", "64MiB", "--listen", "127.0.0.1",
                  check_rc=0)
    try:
        password = (server_tmp / "pg.pgpass").read_text().strip().rsplit(":", 1)[1]
        status = cli("db", "status", *where, "--json", check_rc=0)
        for p in (started, status):
            assert password not in p.stdout + p.stderr
        st = json.loads(status.stdout)
        assert st["listen"] == "127.0.0.1" and st["socket_dir"] == f"{datadir}.sock"
        assert f"TCP (password in {datadir}.pgpass): {st['tcp_dsn']}" in started.stdout
        with pytest.raises(asyncpg.InvalidPasswordError):
            _connect(f"postgresql://postgres@127.0.0.1:{port}/postgres")
        assert _connect(st["tcp_dsn"]) == "postgres"
        assert _connect(st["dsn"]) == "postgres"
    finally:
        cli("db", "stop", *where)
    assert "PostgreSQL was not running" in cli("db", "stop", *where, check_rc=0).stdout

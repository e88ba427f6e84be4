"""What a run records about the server it measured: version and effective settings."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg

from ...errors import DatabaseError

_SETTINGS_SQL = """
SELECT name, setting, unit, source FROM pg_settings
 WHERE source NOT IN ('default', 'override', 'client', 'session')
    OR name IN ('shared_buffers', 'max_connections', 'synchronous_commit', 'fsync',
                'full_page_writes', 'wal_level', 'max_wal_size', 'checkpoint_timeout',
                'data_checksums', 'block_size', 'wal_segment_size', 'server_encoding')
 ORDER BY name
"""


async def _server_info(dsn: str) -> dict[str, Any]:
    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        version = await conn.fetchval("SELECT version()")
        num = await conn.fetchval("SHOW server_version_num")
        rows = await conn.fetch(_SETTINGS_SQL)
        datadir = None
        try:
            datadir = await conn.fetchval("SHOW data_directory")
        except asyncpg.PostgresError:
            pass  # only superusers and pg_read_all_settings members may read it
    finally:
        await conn.close()
    settings = {r["name"]: (f"{r['setting']} ({r['unit']})" if r["unit"] else r["setting"])
                for r in rows}
    return {"engine": "postgresql", "version": version, "version_num": int(num),
            "data_directory": datadir, "settings": settings}


def server_info(dsn: str) -> dict[str, Any]:
    try:
        return asyncio.run(_server_info(dsn))
    except (OSError, asyncpg.PostgresError, asyncio.TimeoutError) as e:
        raise DatabaseError(f"cannot read server settings: {e}") from None

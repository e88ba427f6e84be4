"""Server settings: derived from --db-memory, overridden with -c, and read back for the record.

Pure but for ``read_settings``, which asks an open connection.
"""

from __future__ import annotations

from ...errors import UsageError
from ..base import MIN_DB_MEMORY

_KiB, _MiB, _GiB = 1024, 1024**2, 1024**3

# Settings recorded with every run even when they are at their defaults: they decide
# durability and the cost of each commit, so two runs must never be compared without them.
ALWAYS_RECORDED = (
    "block_size", "data_checksums", "fsync", "full_page_writes", "io_method",
    "max_connections", "server_version", "shared_buffers", "synchronous_commit",
    "wal_level", "wal_segment_size", "wal_sync_method",
)


def pg_size(nbytes: int) -> str:
    """Bytes as a PostgreSQL memory value: the largest unit that divides exactly, else kB."""
    for unit, div in (("TB", 1024**4), ("GB", _GiB), ("MB", _MiB)):
        if nbytes >= div and nbytes % div == 0:
            return f"{nbytes // div}{unit}"
    return f"{max(1, nbytes // _KiB)}kB"


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def derive_settings(db_memory: int, need_connections: int = 100,
                    overrides: tuple[tuple[str, str], ...] | dict = ()) -> dict[str, str]:
    """Server settings for OLTP from the memory given to the database; pure.

    ``db_memory`` becomes shared_buffers, the database's own cache: the "DRAM" knob that makes a
    test in-memory or IO-bound (the kernel's page cache still caches data files; add
    ``-c debug_io_direct=data`` to bypass it). Derived from it:

    - effective_cache_size = 3 x shared_buffers (planner hint: shared_buffers plus page cache);
    - maintenance_work_mem = shared_buffers / 16, within 64MB..2GB (index builds after a load);
    - wal_buffers = shared_buffers / 32, within 1MB..64MB (room for many concurrent commits);
    - max_wal_size = 4 x shared_buffers, within 4GB..64GB, so that checkpoints are paced by
      checkpoint_timeout rather than forced by WAL volume (no checkpoint storms).

    checkpoint_timeout = 15min keeps checkpoints within the 30 minutes TPC-C allows between
    them [S 5.5.2.2]. Durability is honest: fsync, full_page_writes and synchronous_commit on.
    max_connections leaves 20 connections above ``need_connections`` for monitors and
    administration. ``overrides`` (-c name=value) are applied last, in order; names are matched
    case-insensitively as PostgreSQL does.
    """
    if db_memory < MIN_DB_MEMORY:
        raise UsageError(f"--db-memory: {db_memory} bytes is too small; give at least 16MiB")
    if need_connections < 1:
        raise UsageError(f"need_connections must be at least 1, not {need_connections}")
    page = 8 * _KiB
    shared = db_memory // page * page
    settings = {
        "shared_buffers": pg_size(shared),
        "effective_cache_size": pg_size(3 * shared),
        "maintenance_work_mem": pg_size(_clamp(shared // 16 // _MiB * _MiB, 64 * _MiB, 2 * _GiB)),
        "wal_buffers": pg_size(_clamp(shared // 32 // page * page, _MiB, 64 * _MiB)),
        "work_mem": "4MB",
        "max_connections": str(max(100, need_connections + 20)),
        "max_wal_size": pg_size(_clamp(4 * shared // _GiB * _GiB, 4 * _GiB, 64 * _GiB)),
        "min_wal_size": "1GB",
        "checkpoint_timeout": "15min",
        "checkpoint_completion_target": "0.9",
        "random_page_cost": "1.1",
        "synchronous_commit": "on",
        "fsync": "on",
        "full_page_writes": "on",
        "jit": "off",
        "track_io_timing": "on",
        "log_checkpoints": "on",
    }
    items = overrides.items() if isinstance(overrides, dict) else overrides
    for name, value in items:
        settings.pop(name.lower(), None)
        settings[name.lower()] = str(value)
    return settings


def conf_line(name: str, value: str) -> str:
    return f"{name} = '{value.replace(chr(39), chr(39) * 2)}'"


def parse_conf(text: str) -> dict[str, str]:
    """The settings of a file of ``conf_line`` lines (comments and other lines skipped)."""
    found = {}
    for line in text.splitlines():
        name, sep, value = line.partition(" = '")
        if sep and not name.startswith("#") and value.endswith("'"):
            found[name.strip()] = value[:-1].replace("''", "'")
    return found


async def read_settings(conn) -> dict:
    """Effective non-default settings and the server version, from an open asyncpg connection."""
    rows = await conn.fetch(
        "SELECT name, current_setting(name) AS value FROM pg_settings "
        "WHERE (source NOT IN ('default', 'client', 'session', 'interactive') "
        "       AND NOT (source = 'override' AND name LIKE 'transaction\\_%')) "
        "   OR name = ANY($1::text[]) ORDER BY name",
        list(ALWAYS_RECORDED))
    version = await conn.fetchval("SELECT version()")
    num = await conn.fetchval("SELECT current_setting('server_version_num')::int")
    return {"server_version": version, "server_version_num": num,
            "settings": {r["name"]: r["value"] for r in rows}}


def effective_settings(dsn: str, timeout: float = 10.0) -> dict:
    """Settings to record with a run: ``{"server_version", "server_version_num", "settings"}``
    of the server at ``dsn``."""
    import asyncio

    import asyncpg

    from ...errors import DatabaseError
    from ..common.aio import run_sync

    async def go():
        conn = await asyncpg.connect(dsn, timeout=timeout)
        try:
            return await read_settings(conn)
        finally:
            await conn.close()

    try:
        return run_sync(go)
    except (OSError, asyncio.TimeoutError, asyncpg.PostgresError) as e:
        raise DatabaseError(f"cannot read server settings: {e}") from e
